/* journal_draws.c: the "d" lines of the campaign journal (format in journal.h): how each case was
 * drawn, so that a case number left unevaluated (a full disk, a kill) is drawn again exactly. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "journal.h"

int ac_draw_format(const ac_draw_rec *d, char *buf, size_t n)
{
  int w;
  char t[24] = "";
  if (d->attempt > 0) snprintf(t, sizeof t, " t=%d", d->attempt);
  if (d->how == 'm')
    w = snprintf(buf, n, "d %lld %016" PRIx64 " %s m %lld %a%s\n", (long long)d->k, d->hash, d->family,
                 (long long)d->parent, d->sigma, t);
  else if (d->how == 's')
    w = snprintf(buf, n, "d %lld %016" PRIx64 " %s s %016" PRIx64 " %a%s\n", (long long)d->k, d->hash, d->family,
                 d->seed, d->sigma, t);
  else
    w = snprintf(buf, n, "d %lld %016" PRIx64 " %s f%s\n", (long long)d->k, d->hash, d->family, t);
  return w < 0 || (size_t)w >= n ? -1 : w;
}

/* " t=T" (T >= 1) into *attempt; 0 or -1. */
static int parse_attempt(const char *s, int *attempt)
{
  int t, used = 0;
  if (sscanf(s, "t=%d%n", &t, &used) != 1 || s[used] || t < 1) return -1;
  *attempt = t;
  return 0;
}

int ac_draw_parse(const char *line, ac_draw_rec *d)
{
  long long k, p;
  char fam[64], how[2], arg[40], sig[64], tr[24];
  int n = sscanf(line, "d %lld %16" SCNx64 " %63s %1s %39s %63s %23s", &k, &d->hash, fam, how, arg, sig, tr);
  if (n < 4 || k < 0) return -1;
  memset(d->family, 0, sizeof d->family);
  memcpy(d->family, fam, strlen(fam));
  d->k = k;
  d->how = how[0];
  d->parent = -1;
  d->seed = 0;
  d->sigma = 0;
  d->attempt = 0;
  if (d->how == 'f') return n == 4 ? 0 : n == 5 ? parse_attempt(arg, &d->attempt) : -1;
  if ((n != 6 && n != 7) || (d->how != 'm' && d->how != 's')) return -1;
  if (n == 7 && parse_attempt(tr, &d->attempt)) return -1;
  char *end;
  d->sigma = strtod(sig, &end);
  if (*end || !(d->sigma > 0)) return -1;
  if (d->how == 's') return sscanf(arg, "%16" SCNx64, &d->seed) == 1 ? 0 : -1;
  if (sscanf(arg, "%lld", &p) != 1 || p < 0 || p == k) return -1;
  d->parent = p;
  return 0;
}

const ac_draw_rec *ac_draw_find(const ac_draw_rec *v, int64_t n, int64_t k)
{
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (v[mid].k < k)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && v[lo].k == k ? &v[lo] : NULL;
}

/* The numbers whose records are wanted, sorted, each with the index of its record (-1: none yet). */
typedef struct {
  int64_t *k, *rec;
  int64_t n, cap, found;
  ac_draw_rec *out;
  int64_t nout, capout;
} want_set;

static int64_t want_pos(const want_set *w, int64_t k)
{
  int64_t lo = 0, hi = w->n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (w->k[mid] < k)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void want_add(want_set *w, int64_t k)
{
  int64_t i = want_pos(w, k);
  if (i < w->n && w->k[i] == k) return;
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 64;
    w->k = ac_xrealloc(w->k, sizeof *w->k * (size_t)w->cap);
    w->rec = ac_xrealloc(w->rec, sizeof *w->rec * (size_t)w->cap);
  }
  memmove(w->k + i + 1, w->k + i, sizeof *w->k * (size_t)(w->n - i));
  memmove(w->rec + i + 1, w->rec + i, sizeof *w->rec * (size_t)(w->n - i));
  w->k[i] = k;
  w->rec[i] = -1;
  w->n++;
}

/* One journal line met from the end: a wanted number's last record is kept, its parent wanted. */
static void take_line(want_set *w, const char *line, size_t len)
{
  char buf[1024];
  if (len < 2 || line[0] != 'd' || line[1] != ' ' || len >= sizeof buf) return;
  memcpy(buf, line, len);
  buf[len] = 0;
  ac_draw_rec d;
  if (ac_draw_parse(buf, &d)) return;
  int64_t i = want_pos(w, d.k);
  if (i >= w->n || w->k[i] != d.k || w->rec[i] >= 0) return;
  if (w->nout == w->capout)
    w->out = ac_xrealloc(w->out, sizeof *w->out * (size_t)(w->capout = w->capout ? 2 * w->capout : 64));
  w->rec[i] = w->nout;
  w->out[w->nout++] = d;
  w->found++;
  if (d.how == 'm') want_add(w, d.parent);
}

static int cmp_rec(const void *a, const void *b)
{
  const ac_draw_rec *x = a, *y = b;
  return x->k < y->k ? -1 : x->k > y->k;
}

/* Reads fd backwards in blocks, handing each whole line to take_line, until every wanted number
 * has its record or the start is reached. */
static int scan_back(int fd, off_t size, want_set *w)
{
  enum { BLOCK = 1 << 16 };
  char *buf = NULL;
  size_t carry = 0; /* bytes of a line cut by the block start, kept at buf[0..carry) */
  off_t pos = size;
  while (pos > 0 && w->found < w->n) {
    size_t got = pos > BLOCK ? BLOCK : (size_t)pos;
    pos -= (off_t)got;
    char *nb = ac_xmalloc(got + carry + 1);
    if (carry) memcpy(nb + got, buf, carry);
    free(buf);
    buf = nb;
    if (pread(fd, buf, got, pos) != (ssize_t)got) {
      free(buf);
      return -1;
    }
    size_t end = got + carry;
    while (end > 0) {
      size_t i = end - 1; /* buf[end - 1] ends the line (or the file) */
      while (i > 0 && buf[i - 1] != '\n') i--;
      if (i == 0 && pos > 0) break; /* the line may start in the block before */
      take_line(w, buf + i, buf[end - 1] == '\n' ? end - 1 - i : end - i);
      end = i;
    }
    carry = end;
  }
  free(buf);
  return 0;
}

int ac_journal_draws(const char *dir, const int64_t *want, int64_t n, ac_draw_rec **out, int64_t *nout, ac_err *e)
{
  *out = NULL;
  *nout = 0;
  if (n <= 0) return 0;
  char p[4096];
  snprintf(p, sizeof p, "%s/journal", dir);
  int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return ac_err_set(e, "%s: %s", p, strerror(errno));
  struct stat sb;
  want_set w = {0};
  for (int64_t i = 0; i < n; i++) want_add(&w, want[i]);
  int rc = fstat(fd, &sb) == 0 ? scan_back(fd, sb.st_size, &w) : -1;
  int err = errno;
  close(fd);
  free(w.k);
  free(w.rec);
  if (rc) {
    free(w.out);
    return ac_err_set(e, "%s: %s", p, strerror(err));
  }
  if (w.nout) qsort(w.out, (size_t)w.nout, sizeof *w.out, cmp_rec);
  *out = w.out;
  *nout = w.nout;
  return 0;
}
