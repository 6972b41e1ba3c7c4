/* npz.c: strict .npz (stored zip) reader and writer on libzip; the npy format of the members is
 * in npy.c. */
#include "config.h"
#include "npz.h"
#include "npy.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#define NPZ_MAX_MEMBERS 4096
/* DOS epoch plus a day: a fixed member time keeps files byte-reproducible. */
#define NPZ_MTIME ((time_t)315619200)

/* ---- writer ------------------------------------------------------------ */

struct ac_npz_writer {
  zip_t *za;
  char *path, *tmp;
  int count;
};

static int zip_fail(ac_err *e, const char *path, zip_t *za, const char *what)
{
  return ac_err_set(e, "%s: %s: %s", path, what, zip_strerror(za));
}

ac_npz_writer *ac_npz_create(const char *path, ac_err *e)
{
  size_t n = strlen(path) + 32;
  char *tmp = ac_xmalloc(n);
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
  unlink(tmp);
  int zerr = 0;
  zip_t *za = zip_open(tmp, ZIP_CREATE | ZIP_EXCL, &zerr);
  if (!za) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, zerr);
    ac_err_set(e, "%s: cannot create: %s", path, zip_error_strerror(&ze));
    zip_error_fini(&ze);
    free(tmp);
    return NULL;
  }
  ac_npz_writer *w = ac_xcalloc(1, sizeof *w);
  w->za = za;
  w->path = ac_xstrdup(path);
  w->tmp = tmp;
  return w;
}

static int valid_member_name(const char *name)
{
  size_t n = strlen(name);
  if (n == 0 || n + 4 >= sizeof(((ac_npz_member *)0)->name)) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == '-'))
      return 0;
  }
  return 1;
}

/* Adds one buffer (ownership passes to libzip) as a stored member. */
static int add_member(ac_npz_writer *w, const char *zname, void *buf, size_t n, ac_err *e)
{
  zip_source_t *src = zip_source_buffer(w->za, buf, n, 1);
  if (!src) {
    free(buf);
    return zip_fail(e, w->path, w->za, "zip source");
  }
  zip_int64_t idx = zip_file_add(w->za, zname, src, ZIP_FL_ENC_UTF_8);
  if (idx < 0) {
    zip_source_free(src);
    return zip_fail(e, w->path, w->za, zname);
  }
  if (zip_set_file_compression(w->za, (zip_uint64_t)idx, ZIP_CM_STORE, 0) != 0 ||
      zip_file_set_mtime(w->za, (zip_uint64_t)idx, NPZ_MTIME, 0) != 0)
    return zip_fail(e, w->path, w->za, zname);
  w->count++;
  return 0;
}

int ac_npz_add_array(ac_npz_writer *w, const char *name, const char *descr, int ndim,
                     const int64_t *shape, const void *data, size_t nbytes, ac_err *e)
{
  if (!valid_member_name(name)) return ac_err_set(e, "%s: bad member name '%s'", w->path, name);
  void *buf;
  size_t size;
  if (ac_npy_encode(w->path, name, descr, ndim, shape, data, nbytes, &buf, &size, e) != 0) return -1;
  char zname[80];
  snprintf(zname, sizeof zname, "%s.npy", name);
  return add_member(w, zname, buf, size, e);
}

int ac_npz_add_bytes(ac_npz_writer *w, const char *name, const void *data, size_t nbytes, ac_err *e)
{
  if (!valid_member_name(name)) return ac_err_set(e, "%s: bad member name '%s'", w->path, name);
  size_t n = strlen(name);
  if (n >= 4 && !strcmp(name + n - 4, ".npy"))
    return ac_err_set(e, "%s: raw member '%s' must not end in .npy", w->path, name);
  void *buf = ac_xmalloc(nbytes);
  if (nbytes) memcpy(buf, data, nbytes);
  return add_member(w, name, buf, nbytes, e);
}

static void writer_free(ac_npz_writer *w)
{
  free(w->path);
  free(w->tmp);
  free(w);
}

void ac_npz_abort(ac_npz_writer *w)
{
  if (!w) return;
  zip_discard(w->za);
  unlink(w->tmp);
  writer_free(w);
}

int ac_npz_close(ac_npz_writer *w, ac_err *e)
{
  if (w->count == 0) {
    ac_err_set(e, "%s: an NPZ file needs at least one member", w->path);
    ac_npz_abort(w);
    return -1;
  }
  if (zip_close(w->za) != 0) {
    zip_fail(e, w->path, w->za, "write");
    ac_npz_abort(w);
    return -1;
  }
  int rc = 0;
  int fd = open(w->tmp, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL)) {
    rc = ac_err_set(e, "%s: %s", w->tmp, strerror(errno));
  } else if (rename(w->tmp, w->path) != 0) {
    rc = ac_err_set(e, "%s: rename: %s", w->path, strerror(errno));
  }
  if (fd >= 0) close(fd);
  if (rc) unlink(w->tmp);
  writer_free(w);
  return rc;
}

/* ---- reader ------------------------------------------------------------ */

typedef struct {
  char name[64];       /* without ".npy" */
  int is_npy;
  zip_uint64_t index;
  uint64_t size;       /* uncompressed, from the directory */
  uint64_t hdr;        /* npy header bytes, once parsed (0 = not yet) */
  void *buf;           /* full contents after ac_npz_read (the data in C order) */
  int c_order;         /* buf's data was put in C order (a Fortran-order member) */
  int fortran;         /* the npy header says fortran_order True (known once hdr is set) */
} npz_entry;

struct ac_npz {
  zip_t *za;
  char *path;
  uint64_t cap;
  int n;
  npz_entry *ent;
};

const char *ac_npz_path(const ac_npz *z) { return z->path; }
int ac_npz_count(const ac_npz *z) { return z->n; }
const char *ac_npz_name(const ac_npz *z, int i) { return (i >= 0 && i < z->n) ? z->ent[i].name : NULL; }

static npz_entry *find(const ac_npz *z, const char *name)
{
  for (int i = 0; i < z->n; i++)
    if (!strcmp(z->ent[i].name, name)) return &z->ent[i];
  return NULL;
}

int ac_npz_has(const ac_npz *z, const char *name) { return find(z, name) != NULL; }

int64_t ac_npz_member_size(const ac_npz *z, const char *name)
{
  const npz_entry *en = find(z, name);
  return en ? (int64_t)en->size : -1;
}

void ac_npz_close_reader(ac_npz *z)
{
  if (!z) return;
  for (int i = 0; i < z->n; i++) free(z->ent[i].buf);
  free(z->ent);
  if (z->za) zip_discard(z->za);
  free(z->path);
  free(z);
}

static int check_magic(const unsigned char *b, size_t n, const char *path, ac_err *e)
{
  if (n < 4) return ac_err_set(e, "%s: not a zip file (%zu bytes)", path, n);
  if (!(b[0] == 'P' && b[1] == 'K' && ((b[2] == 3 && b[3] == 4) || (b[2] == 5 && b[3] == 6))))
    return ac_err_set(e, "%s: not a zip file (bad magic %02x %02x %02x %02x)", path, b[0], b[1], b[2], b[3]);
  return 0;
}

static ac_npz *open_source(zip_source_t *src, const char *path, uint64_t cap, ac_err *e)
{
  zip_error_t ze;
  zip_error_init(&ze);
  zip_t *za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
  if (!za) {
    ac_err_set(e, "%s: bad zip file: %s", path, zip_error_strerror(&ze));
    zip_error_fini(&ze);
    zip_source_free(src);
    return NULL;
  }
  zip_error_fini(&ze);
  ac_npz *z = ac_xcalloc(1, sizeof *z);
  z->za = za;
  z->path = ac_xstrdup(path);
  z->cap = cap;
  zip_int64_t n = zip_get_num_entries(za, 0);
  if (n < 0 || n > NPZ_MAX_MEMBERS) {
    ac_err_set(e, "%s: bad zip file: %lld members", path, (long long)n);
    goto fail;
  }
  z->ent = ac_xcalloc((size_t)(n ? n : 1), sizeof *z->ent);
  for (zip_int64_t i = 0; i < n; i++) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) != 0) {
      ac_err_set(e, "%s: bad zip directory entry %lld: %s", path, (long long)i, zip_strerror(za));
      goto fail;
    }
    const zip_uint64_t need = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if ((st.valid & need) != need) {
      ac_err_set(e, "%s: incomplete zip directory entry %lld", path, (long long)i);
      goto fail;
    }
    size_t nl = strlen(st.name);
    if (nl == 0 || nl >= sizeof z->ent[0].name + 4) {
      ac_err_set(e, "%s: zip member name of %zu bytes", path, nl);
      goto fail;
    }
    npz_entry *en = &z->ent[z->n];
    en->is_npy = nl > 4 && !strcmp(st.name + nl - 4, ".npy");
    size_t keep = en->is_npy ? nl - 4 : nl;
    if (keep >= sizeof en->name) {
      ac_err_set(e, "%s: zip member name '%.80s' too long", path, st.name);
      goto fail;
    }
    memcpy(en->name, st.name, keep);
    en->name[keep] = 0;
    if (memchr(en->name, '/', keep) || strlen(en->name) != keep) {
      ac_err_set(e, "%s: zip member name '%.80s' not allowed", path, st.name);
      goto fail;
    }
    if (find(z, en->name)) {
      ac_err_set(e, "%s: duplicate member '%s'", path, en->name);
      goto fail;
    }
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
      ac_err_set(e, "%s: member '%s' is encrypted", path, en->name);
      goto fail;
    }
    if (st.comp_method != ZIP_CM_STORE) {   /* a compressed member could expand beyond any size checked */
      ac_err_set(e, "%s: member '%s' is compressed (zip method %d); case files are uncompressed zip (numpy.savez, not savez_compressed)",
                 path, en->name, (int)st.comp_method);
      goto fail;
    }
    if (st.comp_size != st.size) {
      ac_err_set(e, "%s: member '%s': stored size %llu differs from size %llu", path, en->name,
                 (unsigned long long)st.comp_size, (unsigned long long)st.size);
      goto fail;
    }
    if (st.size > cap) {
      ac_err_set(e, "%s: member '%s' of %llu bytes exceeds the memory cap of %llu bytes", path, en->name,
                 (unsigned long long)st.size, (unsigned long long)cap);
      goto fail;
    }
    en->index = (zip_uint64_t)i;
    en->size = st.size;
    z->n++;
  }
  return z;
fail:
  ac_npz_close_reader(z);
  return NULL;
}

ac_npz *ac_npz_open(const char *path, uint64_t cap_bytes, ac_err *e)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);   /* a FIFO must not block: it is refused below */
  if (fd < 0) {
    ac_err_set(e, "%s: %s", path, strerror(errno));
    return NULL;
  }
  return ac_npz_open_fd(fd, path, cap_bytes, e);
}

ac_npz *ac_npz_open_fd(int fd, const char *path, uint64_t cap_bytes, ac_err *e)
{
  struct stat st;
  unsigned char mg[4];
  ssize_t got = 0;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    ac_err_set(e, "%s: not a regular file", path);
    return NULL;
  }
  got = pread(fd, mg, sizeof mg, 0);
  if (check_magic(mg, got < 0 ? 0 : (size_t)got, path, e) != 0) {
    close(fd);
    return NULL;
  }
  /* the file checked is the file read: the zip source reads from this descriptor */
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  FILE *fp = fdopen(fd, "rb");
  if (!fp) {
    ac_err_set(e, "%s: %s", path, strerror(errno));
    close(fd);
    return NULL;
  }
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = zip_source_filep_create(fp, 0, -1, &ze);
  if (!src) {
    ac_err_set(e, "%s: %s", path, zip_error_strerror(&ze));
    zip_error_fini(&ze);
    fclose(fp);
    return NULL;
  }
  zip_error_fini(&ze);
  return open_source(src, path, cap_bytes, e);
}

ac_npz *ac_npz_open_buffer(const void *data, size_t n, const char *name, uint64_t cap_bytes, ac_err *e)
{
  if (check_magic(data, n, name, e) != 0) return NULL;
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = zip_source_buffer_create(data, n, 0, &ze);
  if (!src) {
    ac_err_set(e, "%s: %s", name, zip_error_strerror(&ze));
    zip_error_fini(&ze);
    return NULL;
  }
  zip_error_fini(&ze);
  return open_source(src, name, cap_bytes, e);
}

/* Reads exactly n bytes; -1 with message on short read or libzip error. */
static int read_exact(ac_npz *z, npz_entry *en, zip_file_t *f, void *dst, uint64_t n, ac_err *e)
{
  char *p = dst;
  uint64_t left = n;
  while (left) {
    zip_uint64_t chunk = left > (1u << 30) ? (1u << 30) : left;
    zip_int64_t r = zip_fread(f, p, chunk);
    if (r < 0) return ac_err_set(e, "%s: member '%s': read error: %s", z->path, en->name, zip_file_strerror(f));
    if (r == 0)
      return ac_err_set(e, "%s: member '%s' truncated (%llu of %llu bytes)", z->path, en->name,
                        (unsigned long long)(n - left), (unsigned long long)n);
    p += r;
    left -= (uint64_t)r;
  }
  return 0;
}

/* Confirms the member ends here and its CRC holds, then closes it. */
static int finish(ac_npz *z, npz_entry *en, zip_file_t *f, ac_err *e)
{
  char extra;
  zip_int64_t r = zip_fread(f, &extra, 1);
  if (r < 0) {
    ac_err_set(e, "%s: member '%s': %s", z->path, en->name, zip_file_strerror(f));
    zip_fclose(f);
    return -1;
  }
  if (r > 0) {
    zip_fclose(f);
    return ac_err_set(e, "%s: member '%s' longer than its directory entry", z->path, en->name);
  }
  int zerr = zip_fclose(f);
  if (zerr != 0) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, zerr);
    ac_err_set(e, "%s: member '%s': %s", z->path, en->name, zip_error_strerror(&ze));
    zip_error_fini(&ze);
    return -1;
  }
  return 0;
}

static zip_file_t *open_member(ac_npz *z, npz_entry *en, ac_err *e)
{
  zip_file_t *f = zip_fopen_index(z->za, en->index, 0);
  if (!f) ac_err_set(e, "%s: member '%s': %s", z->path, en->name, zip_strerror(z->za));
  return f;
}

/* Parses the npy preamble at the start of a member: fills m (not data) and the header length. */
static int parse_npy(ac_npz *z, npz_entry *en, const unsigned char *pre, size_t npre, zip_file_t *f,
                     ac_npz_member *m, ac_err *e)
{
  /* pre holds the first npre bytes of the member; f (if non-NULL) continues after them. */
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s", en->name);
  if (npre < 10 || memcmp(pre, AC_NPY_MAGIC, 6) != 0)
    return ac_err_set(e, "%s: member '%s': not an npy array (bad magic)", z->path, en->name);
  int major = pre[6];
  uint64_t hlen, pre_len;
  if (major == 1) {
    hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
    pre_len = 10;
  } else if (major == 2 || major == 3) {
    if (npre < 12) return ac_err_set(e, "%s: member '%s': truncated npy header", z->path, en->name);
    hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    pre_len = 12;
  } else {
    return ac_err_set(e, "%s: member '%s': unsupported npy version %d.%d", z->path, en->name, major, pre[7]);
  }
  if (hlen > AC_NPY_MAX_HEADER)
    return ac_err_set(e, "%s: member '%s': npy header too long (%llu bytes, limit %d)", z->path, en->name,
                      (unsigned long long)hlen, AC_NPY_MAX_HEADER);
  if (pre_len + hlen > en->size)
    return ac_err_set(e, "%s: member '%s': truncated npy header", z->path, en->name);
  char h[AC_NPY_MAX_HEADER + 1];
  size_t have = npre - pre_len < hlen ? npre - pre_len : hlen;
  memcpy(h, pre + pre_len, have);
  if (have < hlen) {
    if (!f) return ac_err_set(e, "%s: member '%s': truncated npy header", z->path, en->name);
    if (read_exact(z, en, f, h + have, hlen - have, e) != 0) return -1;
  }
  h[hlen] = 0;
  if (ac_npy_parse_dict(h, hlen, m, z->path, en->name, e) != 0) return -1;
  en->fortran = m->fortran_order;
  int isz = ac_npy_itemsize(m->descr);
  int64_t count = 1, bytes;
  for (int i = 0; i < m->ndim; i++)
    if (ac_mul_overflow_i64(count, m->shape[i], &count) != 0)
      return ac_err_set(e, "%s: member '%s': shape product overflows", z->path, en->name);
  if (ac_mul_overflow_i64(count, isz, &bytes) != 0)
    return ac_err_set(e, "%s: member '%s': size overflows", z->path, en->name);
  if ((uint64_t)bytes != en->size - pre_len - hlen)
    return ac_err_set(e, "%s: member '%s': shape and descr %s need %lld data bytes, the member holds %llu",
                      z->path, en->name, m->descr, (long long)bytes,
                      (unsigned long long)(en->size - pre_len - hlen));
  m->nbytes = (size_t)bytes;
  en->hdr = pre_len + hlen;
  return 0;
}

int ac_npz_read(ac_npz *z, const char *name, ac_npz_member *m, ac_err *e)
{
  npz_entry *en = find(z, name);
  if (!en) return ac_err_set(e, "%s: member '%s' missing", z->path, name);
  if (en->size > z->cap)
    return ac_err_set(e, "%s: member '%s' exceeds the memory cap", z->path, name);
  if (!en->buf) {
    zip_file_t *f = open_member(z, en, e);
    if (!f) return -1;
    void *buf = ac_xmalloc(en->size);
    if (read_exact(z, en, f, buf, en->size, e) != 0) {
      zip_fclose(f);
      free(buf);
      return -1;
    }
    if (finish(z, en, f, e) != 0) {
      free(buf);
      return -1;
    }
    en->buf = buf;
  }
  if (!en->is_npy) {
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", en->name);
    m->data = en->buf;
    m->nbytes = en->size;
    return 0;
  }
  size_t npre = en->size < AC_NPY_MAX_HEADER + 12 ? (size_t)en->size : AC_NPY_MAX_HEADER + 12;
  if (parse_npy(z, en, en->buf, npre, NULL, m, e) != 0) return -1;
  m->data = (const char *)en->buf + en->hdr;
  if (m->fortran_order && !en->c_order) {
    ac_npy_fortran_to_c((char *)en->buf + en->hdr, m->ndim, m->shape, ac_npy_itemsize(m->descr), m->nbytes);
    en->c_order = 1;
  }
  return 0;
}

int ac_npz_read_header(ac_npz *z, const char *name, ac_npz_member *m, ac_err *e)
{
  npz_entry *en = find(z, name);
  if (!en) return ac_err_set(e, "%s: member '%s' missing", z->path, name);
  if (!en->is_npy) return ac_err_set(e, "%s: member '%s' is not an npy array", z->path, name);
  zip_file_t *f = open_member(z, en, e);
  if (!f) return -1;
  unsigned char pre[12];
  size_t npre = en->size < 12 ? (size_t)en->size : 12;
  int rc = read_exact(z, en, f, pre, npre, e);
  if (rc == 0) rc = parse_npy(z, en, pre, npre, f, m, e);
  zip_fclose(f);
  return rc;
}

int ac_npz_read_into(ac_npz *z, const char *name, void *dst, size_t nbytes, ac_err *e)
{
  npz_entry *en = find(z, name);
  if (!en) return ac_err_set(e, "%s: member '%s' missing", z->path, name);
  ac_npz_member m;
  if (!en->hdr && ac_npz_read_header(z, name, &m, e) != 0) return -1;
  if (en->size - en->hdr != nbytes)
    return ac_err_set(e, "%s: member '%s' holds %llu data bytes, expected %zu", z->path, name,
                      (unsigned long long)(en->size - en->hdr), nbytes);
  zip_file_t *f = open_member(z, en, e);
  if (!f) return -1;
  char skip[AC_NPY_MAX_HEADER + 12];
  if (read_exact(z, en, f, skip, en->hdr, e) != 0 || read_exact(z, en, f, dst, nbytes, e) != 0) {
    zip_fclose(f);
    return -1;
  }
  if (finish(z, en, f, e) != 0) return -1;
  if (!en->fortran) return 0;
  if (ac_npz_read_header(z, name, &m, e) != 0) return -1;   /* its shape, for the transpose */
  ac_npy_fortran_to_c(dst, m.ndim, m.shape, ac_npy_itemsize(m.descr), nbytes);
  return 0;
}

const char *ac_npz_shape_str(const ac_npz_member *m, char *buf, size_t n)
{
  if (!n) return buf;
  if (!m->descr[0]) {
    snprintf(buf, n, "(not an array)");
    return buf;
  }
  size_t l = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < m->ndim && i < 8 && l < n; i++)
    l += (size_t)snprintf(buf + l, n - l, "%s%lld", i ? "," : "", (long long)m->shape[i]);
  if (l < n) snprintf(buf + l, n - l, "]");
  return buf;
}
