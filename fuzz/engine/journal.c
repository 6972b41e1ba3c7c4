/* journal.c: the campaign journal (format in journal.h): read and summed up at start, appended
 * by the workers as cases and findings complete. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "journal.h"

int ac_journal_append(int fd, int sync, const char *fmt, ...)
{
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= (int)sizeof line) {
    errno = ENAMETOOLONG;
    return -1;
  }
  ssize_t w = write(fd, line, (size_t)n);   /* O_APPEND: one write, one whole line */
  if (w != n) {
    if (w >= 0) errno = ENOSPC;
    return -1;
  }
  if (sync && fdatasync(fd) != 0 && errno != EINVAL) return -1;
  return 0;
}

typedef struct {
  uint8_t *bits;
  int64_t cap;        /* bits allocated */
  char (*sigs)[256];
  int nsig, capsig;
} jread;

static int bit_set(jread *j, int64_t k)
{
  if (k >= j->cap) {
    int64_t nc = j->cap ? j->cap : 1 << 16;
    while (nc <= k) nc *= 2;
    j->bits = ac_xrealloc(j->bits, (size_t)(nc / 8));
    memset(j->bits + j->cap / 8, 0, (size_t)((nc - j->cap) / 8));
    j->cap = nc;
  }
  int had = (j->bits[k >> 3] >> (k & 7)) & 1;
  j->bits[k >> 3] |= (uint8_t)(1u << (k & 7));
  return had;
}

static int bit_get(const jread *j, int64_t k) { return k < j->cap && ((j->bits[k >> 3] >> (k & 7)) & 1); }

static int slot_of(const char *const *fam, int nfam, const char *name)
{
  for (int i = 0; i < nfam; i++)
    if (!strcmp(fam[i], name)) return i;
  return -1;
}

/* Counts finding sig once; 1 if it was new. */
static int add_finding(jread *j, ac_journal_state *st, const char *const *fam, int nfam, const ac_policies *pol,
                       const char *sig, const char *kind, const char *family)
{
  for (int i = 0; i < j->nsig; i++)
    if (!strcmp(j->sigs[i], sig)) return 0;
  if (j->nsig == j->capsig) j->sigs = ac_xrealloc(j->sigs, sizeof *j->sigs * (size_t)(j->capsig = j->capsig ? 2 * j->capsig : 64));
  snprintf(j->sigs[j->nsig++], 256, "%s", sig);
  st->findings++;
  ac_verdict_kind k;
  if (ac_verdict_parse(kind, &k) == 0 && pol->p[k] == AC_POLICY_FAIL) st->findings_fail++;
  int s = slot_of(fam, nfam, family);
  if (s >= 0) st->per_fam_find[s]++;
  return 1;
}

static int64_t stats_value(const char *dir, const char *key)
{
  char p[4096], line[512];
  snprintf(p, sizeof p, "%s/stats", dir);
  FILE *f = fopen(p, "r");
  int64_t v = 0;
  size_t kl = strlen(key);
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, key, kl) && line[kl] == '=') v = strtoll(line + kl + 1, NULL, 10);
  if (f) fclose(f);
  return v;
}

/* Parses the journal text; returns 1 when it is format 2, 0 for an older journal. */
static int parse(FILE *f, jread *j, ac_journal_state *st, const char *const *fam, int nfam, const ac_policies *pol)
{
  char *line = NULL;
  size_t cap = 0;
  int v2 = 0;
  long long k, n;
  char a[256], b[64], c[64], mark[2];
  while (getline(&line, &cap, f) > 0) {
    int nc;
    if (!strcmp(line, "format=2\n")) v2 = 1;
    else if (sscanf(line, "next=%lld", &k) == 1 && k > st->next) st->next = k;
    else if ((nc = sscanf(line, "c %lld %63s %1s", &k, c, mark)) >= 2 && k >= 0 && !bit_set(j, k)) {
      st->cases++;
      int s = slot_of(fam, nfam, c);
      if (s >= 0) st->per_fam[s]++;
      if (nc < 3)
        st->unmarked++;
      else if (mark[0] == 'j')
        st->judged++;
      else if (mark[0] == 's')
        st->skipped++;
    } else if (sscanf(line, "b %lld %lld", &k, &n) == 2 && k >= 0) {
      for (int64_t i = 0; i < k; i++) bit_set(j, i);
      st->cases += n;
      st->unmarked += n;
    } else if (sscanf(line, "f %255s %63s %63s", a, b, c) == 3) {
      add_finding(j, st, fam, nfam, pol, a, b, c);
    }
  }
  free(line);
  return v2;
}

/* Cuts a torn last line (a write cut short by a full disk) so that appends start clean. */
static void cut_torn_line(int fd)
{
  struct stat sb;
  if (fstat(fd, &sb) || sb.st_size == 0) return;
  char buf[1024];
  off_t end = sb.st_size, pos = end;
  while (pos > 0) {
    size_t n = pos > (off_t)sizeof buf ? sizeof buf : (size_t)pos;
    if (pread(fd, buf, n, pos - (off_t)n) != (ssize_t)n) return;
    size_t i = n;
    while (i > 0 && buf[i - 1] != '\n') i--;
    if (i > 0) {
      pos = pos - (off_t)n + (off_t)i;
      break;
    }
    pos -= (off_t)n;
  }
  if (pos != end && ftruncate(fd, pos) != 0) return;
}

/* "f" lines for finding directories the journal lacks (killed between rename and append). */
static int reconcile(const char *dir, int fd, jread *j, ac_journal_state *st, const char *const *fam, int nfam,
                     const ac_policies *pol, ac_err *e)
{
  char fd_[4096];
  snprintf(fd_, sizeof fd_, "%s/findings", dir);
  DIR *d = opendir(fd_);
  if (!d) return 0;
  struct dirent *de;
  int rc = 0;
  while ((de = readdir(d)) && rc == 0) {
    if (de->d_name[0] == '.' || strlen(de->d_name) >= 256) continue;
    int known = 0;
    for (int i = 0; i < j->nsig && !known; i++) known = !strcmp(j->sigs[i], de->d_name);
    if (known) continue;
    char p[4400], kind[64] = "?", family[64] = "?";
    snprintf(p, sizeof p, "%s/%s/report.json", fd_, de->d_name);
    json_object *r = json_object_from_file(p), *v;
    if (r && json_object_object_get_ex(r, "kind", &v)) snprintf(kind, sizeof kind, "%s", json_object_get_string(v));
    if (r && json_object_object_get_ex(r, "family", &v)) snprintf(family, sizeof family, "%s", json_object_get_string(v));
    if (r) json_object_put(r);
    if (strchr(kind, ' ') || strchr(family, ' ')) continue;
    add_finding(j, st, fam, nfam, pol, de->d_name, kind, family);
    st->added++;
    if (ac_journal_append(fd, 0, "f %s %s %s\n", de->d_name, kind, family))
      rc = ac_err_set(e, "%s/journal: %s", dir, strerror(errno));
  }
  closedir(d);
  return rc;
}

int ac_journal_open(const char *dir, const char *const *fam, int nfam, const ac_policies *pol, ac_journal_state *st,
                    int *fdp, ac_err *e)
{
  memset(st, 0, sizeof *st);
  *fdp = -1;
  char p[4096];
  snprintf(p, sizeof p, "%s/journal", dir);
  int fd = open(p, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ac_err_set(e, "%s: %s", p, strerror(errno));
  cut_torn_line(fd);
  jread j = {0};
  FILE *f = fopen(p, "r");
  int v2 = f ? parse(f, &j, st, fam, nfam, pol) : 0;
  if (f) fclose(f);
  struct stat sb;
  int rc = 0;
  if (!v2) {
    /* new, or written by an older attncheck: every number below next= counts as evaluated */
    int64_t old_cases = fstat(fd, &sb) == 0 && sb.st_size > 0 ? stats_value(dir, "cases") : 0;
    int w = st->next > 0 ? ac_journal_append(fd, 1, "format=2\nnext=%lld\nb %lld %lld\n", (long long)st->next,
                                             (long long)st->next, (long long)old_cases)
                         : ac_journal_append(fd, 1, "format=2\n");
    if (w) rc = ac_err_set(e, "%s: %s", p, strerror(errno));
    for (int64_t i = 0; i < st->next; i++) bit_set(&j, i);
    st->cases = st->unmarked = old_cases;
    for (int i = 0; i < nfam && old_cases; i++) {
      char key[128];
      snprintf(key, sizeof key, "family.%s", fam[i]);
      st->per_fam[i] = stats_value(dir, key);
    }
  }
  if (rc == 0) rc = reconcile(dir, fd, &j, st, fam, nfam, pol, e);
  for (int64_t k = 0; k < st->next; k++) {
    if (bit_get(&j, k)) continue;
    if ((st->nholes & 255) == 0) st->holes = ac_xrealloc(st->holes, sizeof *st->holes * (size_t)(st->nholes + 256));
    st->holes[st->nholes++] = k;
  }
  free(j.bits);
  free(j.sigs);
  if (rc) {
    close(fd);
    ac_journal_state_free(st);
    return -1;
  }
  *fdp = fd;
  return 0;
}

void ac_journal_state_free(ac_journal_state *st)
{
  free(st->holes);
  st->holes = NULL;
  st->nholes = 0;
}
