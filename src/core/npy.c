/* npy.c: the .npy format of NPZ members: the header dict (written as numpy's format 1.0,
 * read strictly), item sizes, and Fortran-order data put in C order. */
#include "config.h"
#include "npy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ac_npy_itemsize(const char *d)
{
  if (!d || (d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '=')) return -1;
  if (!strchr("fiucbV", d[1]) || d[1] == 0) return -1;
  if (d[2] < '1' || d[2] > '9') return -1;
  int v = 0;
  for (const char *p = d + 2; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
    if (v > 64) return -1;
  }
  return v;
}

int ac_npy_encode(const char *path, const char *name, const char *descr, int ndim, const int64_t *shape,
                  const void *data, size_t nbytes, void **out, size_t *size, ac_err *e)
{
  int isz = ac_npy_itemsize(descr);
  if (isz < 0 || strlen(descr) >= sizeof(((ac_npz_member *)0)->descr))
    return ac_err_set(e, "%s: member %s: bad descr '%s'", path, name, descr ? descr : "");
  if (ndim < 0 || ndim > 8) return ac_err_set(e, "%s: member %s: bad ndim %d", path, name, ndim);
  int64_t count = 1;
  char sh[256];
  size_t sl = 0;
  sh[sl++] = '(';
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0 || ac_mul_overflow_i64(count, shape[i], &count) != 0)
      return ac_err_set(e, "%s: member %s: bad shape", path, name);
    sl += (size_t)snprintf(sh + sl, sizeof sh - sl, "%s%lld", i ? ", " : "", (long long)shape[i]);
  }
  if (ndim == 1) sh[sl++] = ',';
  sh[sl++] = ')';
  sh[sl] = 0;
  int64_t want;
  if (ac_mul_overflow_i64(count, isz, &want) != 0 || (uint64_t)want != nbytes)
    return ac_err_set(e, "%s: member %s: %zu data bytes for shape %s of %s", path, name, nbytes, sh, descr);

  char dict[512];
  int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, sh);
  /* numpy pads magic + length + dict + '\n' to a multiple of 64 with spaces. */
  size_t total = 10 + (size_t)dl + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t hlen = padded - 10;
  char *buf = ac_xmalloc(padded + nbytes);
  memcpy(buf, AC_NPY_MAGIC, 6);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (char)(hlen & 0xff);
  buf[9] = (char)(hlen >> 8);
  memcpy(buf + 10, dict, (size_t)dl);
  memset(buf + 10 + dl, ' ', padded - total);
  buf[padded - 1] = '\n';
  if (nbytes) memcpy(buf + padded, data, nbytes);
  *out = buf;
  *size = padded + nbytes;
  return 0;
}

typedef struct {
  const char *s, *end;
} cursor;

static void skip_ws(cursor *c)
{
  while (c->s < c->end && (*c->s == ' ' || *c->s == '\t')) c->s++;
}

static int eat(cursor *c, char ch)
{
  skip_ws(c);
  if (c->s < c->end && *c->s == ch) {
    c->s++;
    return 1;
  }
  return 0;
}

static int quoted(cursor *c, char *out, size_t cap)
{
  skip_ws(c);
  if (c->s >= c->end || (*c->s != '\'' && *c->s != '"')) return -1;
  char q = *c->s++;
  size_t n = 0;
  while (c->s < c->end && *c->s != q) {
    if (n + 1 >= cap) return -1;
    out[n++] = *c->s++;
  }
  if (c->s >= c->end) return -1;
  c->s++;
  out[n] = 0;
  return 0;
}

int ac_npy_parse_dict(const char *h, size_t n, ac_npz_member *m, const char *path, const char *name, ac_err *e)
{
  cursor c = {h, h + n};
  int have_descr = 0, have_fo = 0, have_shape = 0;
  if (!eat(&c, '{')) return ac_err_set(e, "%s: member '%s': npy header is not a dict", path, name);
  for (;;) {
    if (eat(&c, '}')) break;
    char key[32];
    if (quoted(&c, key, sizeof key) != 0 || !eat(&c, ':'))
      return ac_err_set(e, "%s: member '%s': malformed npy header", path, name);
    if (!strcmp(key, "descr")) {
      if (have_descr++) return ac_err_set(e, "%s: member '%s': npy header repeats descr", path, name);
      if (quoted(&c, m->descr, sizeof m->descr) != 0 || ac_npy_itemsize(m->descr) < 0)
        return ac_err_set(e, "%s: member '%s': unsupported npy descr", path, name);
    } else if (!strcmp(key, "fortran_order")) {
      if (have_fo++) return ac_err_set(e, "%s: member '%s': npy header repeats fortran_order", path, name);
      skip_ws(&c);
      if ((size_t)(c.end - c.s) >= 5 && !memcmp(c.s, "False", 5)) {
        c.s += 5;
      } else if ((size_t)(c.end - c.s) >= 4 && !memcmp(c.s, "True", 4)) {
        c.s += 4;
        m->fortran_order = 1;
      } else {
        return ac_err_set(e, "%s: member '%s': malformed fortran_order", path, name);
      }
    } else if (!strcmp(key, "shape")) {
      if (have_shape++) return ac_err_set(e, "%s: member '%s': npy header repeats shape", path, name);
      if (!eat(&c, '(')) return ac_err_set(e, "%s: member '%s': malformed shape", path, name);
      m->ndim = 0;
      for (;;) {
        if (eat(&c, ')')) break;
        skip_ws(&c);
        if (c.s >= c.end || *c.s < '0' || *c.s > '9')
          return ac_err_set(e, "%s: member '%s': malformed shape", path, name);
        int64_t v = 0;
        while (c.s < c.end && *c.s >= '0' && *c.s <= '9') {
          if (ac_mul_overflow_i64(v, 10, &v) || ac_add_overflow_i64(v, *c.s - '0', &v))
            return ac_err_set(e, "%s: member '%s': shape dimension overflows", path, name);
          c.s++;
        }
        if (c.s < c.end && *c.s == 'L') c.s++;
        if (m->ndim >= 8) return ac_err_set(e, "%s: member '%s': more than 8 dimensions", path, name);
        m->shape[m->ndim++] = v;
        if (eat(&c, ')')) break;
        if (!eat(&c, ',')) return ac_err_set(e, "%s: member '%s': malformed shape", path, name);
      }
    } else {
      return ac_err_set(e, "%s: member '%s': unknown npy header key '%s'", path, name, key);
    }
    if (eat(&c, '}')) break;
    if (!eat(&c, ',')) return ac_err_set(e, "%s: member '%s': malformed npy header", path, name);
  }
  while (c.s < c.end && (*c.s == ' ' || *c.s == '\n' || *c.s == '\0')) c.s++;
  if (c.s != c.end) return ac_err_set(e, "%s: member '%s': trailing bytes in npy header", path, name);
  if (!have_descr || !have_fo || !have_shape)
    return ac_err_set(e, "%s: member '%s': npy header lacks %s", path, name,
                      !have_descr ? "descr" : !have_fo ? "fortran_order" : "shape");
  return 0;
}

/* The n elements of isz bytes at data, stored in Fortran order (first index fastest), put in C
 * order (last index fastest) in place. */
void ac_npy_fortran_to_c(void *data, int ndim, const int64_t *shape, int isz, size_t nbytes)
{
  if (ndim < 2 || nbytes == 0) return;
  char *src = ac_xmalloc(nbytes), *dst = data;
  memcpy(src, data, nbytes);
  int64_t idx[8] = {0}, fstride[8];
  fstride[0] = 1;
  for (int k = 1; k < ndim; k++) fstride[k] = fstride[k - 1] * shape[k - 1];
  size_t n = nbytes / (size_t)isz;
  for (size_t c = 0; c < n; c++) {   /* c walks the C order; idx is its multi-index */
    int64_t f = 0;
    for (int k = 0; k < ndim; k++) f += idx[k] * fstride[k];
    memcpy(dst + c * (size_t)isz, src + (size_t)f * (size_t)isz, (size_t)isz);
    for (int k = ndim - 1; k >= 0 && ++idx[k] == shape[k]; k--) idx[k] = 0;
  }
  free(src);
}
