/* cmd_merge.c: attncheck merge DIR... -o OUT: union of campaign directories by finding
 * signature; each reproducer is re-run once and the report says whether it reproduced. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "commands.h"
#include "fuzz.h"
#include "oracle.h"
#include "util.h"

static void usage(FILE *f)
{
  fprintf(f, "usage: attncheck merge DIR... -o OUT [--kernel K | --trust-recorded-kernel] [--no-rerun]\n\n"
             "Unions the findings of campaign directories (for example the shards of one campaign) by\n"
             "signature into OUT, re-running each reproducer once on K (without --kernel: on the\n"
             "recorded kernel when it is built in; a recorded exec: command runs only with\n"
             "--trust-recorded-kernel, a recorded plugin only when given as --kernel);\n"
             "corpus files, stats (case counts summed) and logs are merged; OUT/report.html is written.\n"
             "Each merged finding is assigned to a defect of OUT as a campaign assigns it: its minimized case\n"
             "judged again on the same kernel (with --no-rerun: by the fingerprint its shard recorded).\n"
             "A campaign directory is data: no link in it is followed, only regular files of the names\n"
             "and sizes a finding has are copied (case.npz, minimized.npz, report.json), repro.sh is\n"
             "written anew from report.json, and each entry left out is named on stderr.\n"
             "A directory whose stats say it judged no case (every case SKIP) is named on stderr.\n"
             "  --allow-all-skipped  exit 0 even when no merged case was judged\n"
             "  --no-cache           re-runs neither read nor write the oracle cache ($ATTNCHECK_CACHE)\n"
             "exit: 1 when a merged finding with policy fail reproduced, 2 bad usage, 3 internal error, 4 no\n"
             "case of the merged directories was judged (their stats' judged= all 0), else 0.\n");
}

#define STATS_MAX    (1u << 20) /* the largest stats file taken */
#define LOG_LINE_MAX (1u << 20) /* the longest log.jsonl line taken */

/* One line on stderr: an entry of a campaign directory left out, and why. */
static void skipped(const char *why)
{
  fprintf(stderr, "attncheck merge: skipped %s\n", why);
}

/* The bytes of fd into a new file dst (never through a link, never over a file); fsync'd. */
static int copy_fd(int in, const char *dst, ac_err *e)
{
  int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0) return ac_err_set(e, "%s: %s", dst, strerror(errno));
  char buf[65536];
  ssize_t n;
  int rc = 0;
  while (rc == 0 && (n = read(in, buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno != EINTR) rc = ac_err_set(e, "%s: read: %s", dst, strerror(errno));
      continue;
    }
    for (ssize_t o = 0; rc == 0 && o < n;) {
      ssize_t w = write(out, buf + o, (size_t)(n - o));
      if (w < 0 && errno != EINTR) rc = ac_err_set(e, "%s: %s", dst, strerror(errno));
      if (w > 0) o += w;
    }
  }
  if (fsync(out) != 0 && errno != EINVAL && rc == 0) rc = ac_err_set(e, "%s: fsync: %s", dst, strerror(errno));
  if (close(out) != 0 && rc == 0) rc = ac_err_set(e, "%s: %s", dst, strerror(errno));
  if (rc) unlink(dst);
  return rc;
}

/* Case file NAME of directory dirfd (label: its path) into dst: checked as data when opened
 * (a regular file within the memory cap, a zip), the opened file copied. */
static int copy_case_file(int dirfd, const char *name, const char *label, const char *dst, ac_err *e)
{
  int fd = ac_data_openat(dirfd, name, label, ac_mem_cap(), e);
  if (fd < 0) return -1;
  int rc = ac_case_file_check(fd, label, e) || copy_fd(fd, dst, e) ? -1 : 0;
  close(fd);
  return rc;
}

/* OUT/sources lists the directories merged so far (real paths), so that merging one again
 * adds neither its cases nor its log twice. */
static int already_merged(const char *out, const char *dir)
{
  char p[4096], rp[4096], line[4200];
  snprintf(p, sizeof p, "%s/sources", out);
  if (!realpath(dir, rp)) return 0;
  FILE *f = fopen(p, "r");
  int found = 0;
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!strcmp(line, rp)) found = 1;
  }
  if (f) fclose(f);
  if (!found && (f = fopen(p, "a"))) {
    fprintf(f, "%s\n", rp);
    fclose(f);
  }
  return found;
}

/* dir/stats read as data (NULL when there is none, or with one line when it is refused). */
static char *read_stats(const char *dir)
{
  char p[4200];
  snprintf(p, sizeof p, "%s/stats", dir);
  struct stat st;
  if (lstat(p, &st) != 0) return NULL;
  ac_err e;
  char *t = ac_data_read(dir, "stats", STATS_MAX, NULL, &e);
  if (!t) skipped(e.msg);
  return t;
}

/* The value of KEY= in a stats text (NULL: none); *found (may be NULL) 1 when the line is there. */
static int64_t stats_value(const char *stats, const char *key, int *found)
{
  int64_t v = 0;
  size_t kl = strlen(key);
  if (found) *found = 0;
  for (const char *s = stats; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : "")
    if (!strncmp(s, key, kl) && s[kl] == '=') {
      v = strtoll(s + kl + 1, NULL, 10);
      if (found) *found = 1;
    }
  return v;
}

static int64_t stats_cases(const char *stats)
{
  return stats_value(stats, "cases", NULL);
}

/* Adds the family.NAME= counts of dir's stats to names/counts (at most 64 families). */
typedef struct {
  char name[64][64];
  int64_t count[64];
  int n;
} fam_counts;

static void stats_families(const char *stats, fam_counts *fc)
{
  for (const char *s = stats; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : "") {
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(s, "\n"), s);
    char *eq = strchr(line, '=');
    if (strncmp(line, "family.", 7) || !eq) continue;
    *eq = 0;
    if (!ac_finding_name_ok(line + 7)) continue; /* a family's name: the same letters as a signature's */
    int i = 0;
    while (i < fc->n && strcmp(fc->name[i], line + 7)) i++;
    if (i == 64) continue;
    if (i == fc->n) snprintf(fc->name[fc->n], sizeof fc->name[0], "%.63s", line + 7), fc->count[fc->n++] = 0;
    fc->count[i] += strtoll(eq + 1, NULL, 10);
  }
}

/* report.json of a merged finding into fdir: the checked one with where it came from, the re-run's
 * answer, and its repro command written anew for its place in OUT (fin) with every word quoted. */
static int write_report(const char *fdir, const char *fin, json_object *r, int reproduced, const char *from, ac_err *e)
{
  char p[4400], qdir[9000], qspec[9000], rbuf[18100];
  snprintf(p, sizeof p, "%s/report.json", fdir);
  json_object_object_add(r, "reproduced_on_merge", json_object_new_boolean(reproduced));
  json_object_object_add(r, "merged_from", json_object_new_string(from));
  json_object *v;
  if (json_object_object_get_ex(r, "defect", &v)) {   /* the shard's; OUT assigns its own (defects_merge.c) */
    json_object_object_add(r, "shard_defect", json_object_get(v));
    json_object_object_del(r, "defect");
  }
  json_object_object_del(r, "repro");
  if (json_object_object_get_ex(r, "kernel_spec", &v) && ac_shquote(fin, qdir, sizeof qdir) &&
      ac_shquote(json_object_get_string(v), qspec, sizeof qspec)) {
    snprintf(rbuf, sizeof rbuf, "attncheck replay %s --kernel %s", qdir, qspec);
    json_object_object_add(r, "repro", json_object_new_string(rbuf));
  }
  const char *t = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY);
  return ac_write_file_atomic(p, t, strlen(t), e);
}

/* The temporary directory dir of a merge, with the files it may hold. */
static void remove_tmp(const char *dir, const char *const *names, int n)
{
  char p[4400];
  for (int i = 0; i < n; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  rmdir(dir);
}

/* Finding f into OUT/findings/<sig> atomically: its case files as checked when copied, its
 * report.json as parsed, and a repro.sh written from that report's kernel. */
static int merge_one(const ac_finding_dir *f, const char *outdir, int reproduced, const char *from, ac_err *e)
{
  char tmp[4096], fin[4096], p[4400], label[4700];
  if (snprintf(tmp, sizeof tmp, "%s/findings/.tmp-merge-%s-%ld", outdir, f->sig, (long)getpid()) >= (int)sizeof tmp ||
      snprintf(fin, sizeof fin, "%s/findings/%s", outdir, f->sig) >= (int)sizeof fin)
    return ac_err_set(e, "%s: path too long", f->sig);
  static const char *const names[] = {"case.npz", "minimized.npz", "report.json", "repro.sh"};
  remove_tmp(tmp, names, 4);
  if (mkdir(tmp, 0755)) return ac_err_set(e, "%s: mkdir: %s", tmp, strerror(errno));
  int rc = 0;
  for (int k = 0; rc == 0 && k < 1 + f->has_min; k++) {
    snprintf(p, sizeof p, "%s/%s", tmp, names[k]);
    snprintf(label, sizeof label, "%s/%s", f->path, names[k]);
    rc = copy_case_file(f->dirfd, names[k], label, p, e);
  }
  if (rc || write_report(tmp, fin, f->report, reproduced, from, e) || ac_finding_write_repro(tmp, f->sig, f->report, e)) {
    remove_tmp(tmp, names, 4);
    return -1;
  }
  if (rename(tmp, fin) != 0) return ac_err_set(e, "%s: rename: %s", fin, strerror(errno));
  return 0;
}

typedef struct {
  const char *out, *kernel;
  int rerun, trust, allow_skip;
  char **dirs;
  int ndirs;
} merge_opts;

/* 1 (with one line) when finding f, new to OUT, has no kernel it may be re-run on. */
static int untrusted(void *ctx, ac_finding_dir *f)
{
  const merge_opts *o = ctx;
  char dst[4400], spec[2048], label[4500];
  snprintf(dst, sizeof dst, "%s/findings/%s", o->out, f->sig);
  snprintf(label, sizeof label, "%s/report.json", f->path);
  ac_err e;
  struct stat st;
  if (lstat(dst, &st) != 0 && ac_finding_kernel_of(f->report, label, o->kernel, o->trust, spec, sizeof spec, &e)) {
    ac_cmd_error("merge", "%s; nothing merged (or merge with --no-rerun)", e.msg);
    return 1;
  }
  return 0;
}

static int parse_merge_args(int argc, char **argv, merge_opts *o)
{
  enum { O_HELP = 256, O_KERNEL, O_NORERUN, O_TRUST, O_ALLOWSKIP, O_NOCACHE };
  static const struct option lo[] = {{"help", 0, 0, O_HELP}, {"output", 1, 0, 'o'}, {"kernel", 1, 0, O_KERNEL},
                                     {"no-rerun", 0, 0, O_NORERUN}, {"trust-recorded-kernel", 0, 0, O_TRUST},
                                     {"allow-all-skipped", 0, 0, O_ALLOWSKIP}, {"no-cache", 0, 0, O_NOCACHE},
                                     {0, 0, 0, 0}};
  *o = (merge_opts){.rerun = 1};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = ac_cmd_getopt_long(argc, argv, ":ho:", lo)) != -1) {
    switch (c) {
    case 'h':
    case O_HELP: usage(stdout); return AC_EXIT_OK;
    case 'o': o->out = optarg; break;
    case O_KERNEL: o->kernel = optarg; break;
    case O_NORERUN: o->rerun = 0; break;
    case O_TRUST: o->trust = 1; break;
    case O_ALLOWSKIP: o->allow_skip = 1; break;
    case O_NOCACHE: ac_oracle_cache_disable(); break;
    default: return ac_cmd_getopt_error("merge", c, argv);
    }
  }
  if (!o->out) return ac_cmd_usage_error("merge", "-o OUT is required");
  if (optind >= argc) return ac_cmd_usage_error("merge", "give at least one campaign directory");
  o->dirs = argv + optind;
  o->ndirs = argc - optind;
  return AC_CMD_RUN;
}

/* Every DIR must be a campaign directory (its findings/ a directory, not a link), and with
 * re-runs, every finding to merge must have a kernel it may run on. */
static int check_dirs(const merge_opts *o)
{
  for (int i = 0; i < o->ndirs; i++) {
    ac_err e;
    int fd = ac_findings_open(o->dirs[i], &e);
    if (fd < 0) {
      char *q = ac_str_escape_dup(e.msg);
      ac_cmd_error("merge", "%s", q);
      free(q);
      return AC_EXIT_USAGE;
    }
    close(fd);
  }
  for (int i = 0; o->rerun && i < o->ndirs; i++) {
    ac_err e;
    if (ac_findings_each(o->dirs[i], NULL, "merge", untrusted, (void *)o, &e)) return AC_EXIT_USAGE;
  }
  return AC_CMD_RUN;
}

/* OUT/findings and OUT/corpus made, and OUT locked: it is written by one process at a time, not
 * while a campaign or another merge runs there. */
static int lock_out(const merge_opts *o, int *lock_fd)
{
  ac_err e;
  char fo[4096], co[4096];
  snprintf(fo, sizeof fo, "%s/findings", o->out);
  snprintf(co, sizeof co, "%s/corpus", o->out);
  if (ac_mkdir_p(fo, &e) || ac_mkdir_p(co, &e)) {
    ac_cmd_error("merge", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  long holder;
  int lr = ac_campaign_lock(o->out, lock_fd, &holder, &e);
  if (lr) {
    if (lr < 0) ac_cmd_error("merge", "%s", e.msg);
    else if (holder > 0) ac_cmd_error("merge", "%s is in use by another process (pid %ld)", o->out, holder);
    else ac_cmd_error("merge", "%s is in use by another process", o->out);
    return AC_EXIT_USAGE;
  }
  return AC_CMD_RUN;
}

/* The counts of one merge. */
typedef struct {
  const merge_opts *o;
  const char *dir;   /* the campaign directory being merged */
  int64_t cases, merged, dup, not_repro;
  int64_t judged, skipped; /* summed from the stats; unknown (-1) once one lacks judged= */
  fam_counts fams;
  int any_fail, any_err;
  ac_policies pol;
} merge_state;

/* The verdict kind a finding's report.json records; 0 when it names none this version knows. */
static int recorded_kind(json_object *r, ac_verdict_kind *k)
{
  json_object *v;
  *k = AC_V_FAIL;
  return json_object_object_get_ex(r, "kind", &v) && ac_verdict_parse(json_object_get_string(v), k) == 0;
}

/* Finding f of the campaign directory into OUT unless OUT holds its signature already, then
 * re-run there (the copy, which this merge wrote) unless --no-rerun. */
static int merge_finding(void *ctx, ac_finding_dir *f)
{
  merge_state *m = ctx;
  const merge_opts *o = m->o;
  char dst[4400];
  snprintf(dst, sizeof dst, "%s/findings/%s", o->out, f->sig);
  struct stat st;
  if (lstat(dst, &st) == 0) {
    m->dup++;
    return 0;
  }
  ac_finding_dir_extras(f, stderr, "merge");
  ac_verdict_kind k;
  int have_kind = recorded_kind(f->report, &k), reproduced = !o->rerun;
  ac_err e;
  if (merge_one(f, o->out, reproduced, m->dir, &e)) {
    fprintf(stderr, "attncheck merge: %s\n", e.msg);
    m->any_err = 1;
    return 0;
  }
  if (o->rerun) {
    uint32_t kinds = 0;
    ac_replay_opts ro = {.kernel = o->kernel, .trust = o->trust};
    int rc = ac_replay_finding(dst, &ro, stdout, &kinds, &e);
    if (rc < 0) {
      fprintf(stderr, "attncheck merge: %s: %s\n", f->path, e.msg);
      m->any_err = 1;
    }
    reproduced = rc >= 0 && have_kind && (kinds & (1u << k));
    if (write_report(dst, dst, f->report, reproduced, m->dir, &e)) { /* the same report, with the re-run's answer */
      fprintf(stderr, "attncheck merge: %s\n", e.msg);
      m->any_err = 1;
    }
  }
  m->merged++;
  if (!reproduced) m->not_repro++;
  if (reproduced && have_kind && m->pol.p[k] == AC_POLICY_FAIL) m->any_fail = 1;
  return 0;
}

/* dir/corpus into OUT/corpus, a union by file name: case files checked as data when copied. */
static void merge_corpus(const merge_opts *o, const char *dir)
{
  char cp[4200];
  snprintf(cp, sizeof cp, "%s/corpus", dir);
  struct stat st;
  if (lstat(cp, &st) != 0) return;
  ac_err e;
  int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC),
      fd = root < 0 ? -1 : ac_data_dir_openat(root, "corpus", cp, &e);
  if (root >= 0) close(root);
  if (fd < 0) {
    if (root >= 0) skipped(e.msg);
    return;
  }
  int n;
  char **names = ac_dir_names(fd, &n);
  for (int i = 0; i < n; i++) {
    char dst[4400], label[4500], *q = ac_str_escape_dup(names[i]);
    snprintf(label, sizeof label, "%s/%s", cp, q);
    free(q);
    if (names[i][0] == '.') continue;
    if (!ac_finding_name_ok(names[i])) {
      fprintf(stderr, "attncheck merge: skipped %s: not a corpus file's name\n", label);
      continue;
    }
    snprintf(dst, sizeof dst, "%s/corpus/%s", o->out, names[i]);
    if (lstat(dst, &st) == 0) continue;
    if (copy_case_file(fd, names[i], label, dst, &e)) skipped(e.msg);
  }
  ac_dir_names_free(names, n);
  close(fd);
}

/* 1 when line (without its newline) is a JSON object in clean text: what a log line is. */
static int log_line_ok(char *line, size_t n)
{
  char *esc = ac_str_escape_dup(line);
  int clean = strlen(esc) == n && !memcmp(esc, line, n); /* valid UTF-8, no control character */
  free(esc);
  json_object *j = clean ? json_tokener_parse(line) : NULL;
  int ok = j && json_object_is_type(j, json_type_object);
  json_object_put(j);
  return ok;
}

/* dir's log appended to OUT's with the source named: the lines that are JSON objects. */
static void append_log(const merge_opts *o, const char *dir)
{
  char lp[4096], lo[4096];
  snprintf(lp, sizeof lp, "%s/log.jsonl", dir);
  snprintf(lo, sizeof lo, "%s/log.jsonl", o->out);
  struct stat st;
  if (lstat(lp, &st) != 0) return;
  ac_err e;
  int fd = ac_data_open(dir, "log.jsonl", UINT64_MAX, &e);
  FILE *in = fd < 0 ? NULL : fdopen(fd, "r");
  if (!in) {
    skipped(e.msg);
    if (fd >= 0) close(fd);
    return;
  }
  FILE *f = fopen(lo, "a");
  char *line = ac_xmalloc(LOG_LINE_MAX + 2);
  int64_t bad = 0;
  if (f) {
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "event", json_object_new_string("merge"));
    json_object_object_add(ev, "from", json_object_new_string(dir));
    fprintf(f, "%s\n", json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN));
    json_object_put(ev);
    while (fgets(line, LOG_LINE_MAX + 2, in)) {
      size_t n = strlen(line);
      int whole = n && line[n - 1] == '\n';
      if (whole) line[--n] = 0;
      if (!whole && !feof(in)) { /* longer than a log line: the rest of it is dropped too */
        int ch;
        while ((ch = fgetc(in)) != EOF && ch != '\n') {}
        bad++;
        continue;
      }
      if (n && log_line_ok(line, n))
        fprintf(f, "%s\n", line);
      else if (n)
        bad++;
    }
    fclose(f);
  }
  if (bad) fprintf(stderr, "attncheck merge: skipped %lld lines of %s that are not JSON objects\n", (long long)bad, lp);
  free(line);
  fclose(in);
}

/* One campaign directory: its findings, and unless it was merged before, its cases, its corpus
 * (a union by file name) and its log. */
static void merge_dir(merge_state *m, const char *dir)
{
  int again = !strcmp(dir, m->o->out) || already_merged(m->o->out, dir);
  if (!again) {
    char *stats = read_stats(dir);
    int64_t cases = stats_cases(stats);
    m->cases += cases;
    stats_families(stats, &m->fams);
    int known;
    int64_t judged = stats_value(stats, "judged", &known), skipped = stats_value(stats, "skipped", NULL);
    free(stats);
    if (known && judged == 0 && cases > 0)
      ac_cmd_error("merge", "%s judged no case (%lld skipped)", dir, (long long)skipped);
    if (!known || m->judged < 0)
      m->judged = -1;
    else
      m->judged += judged, m->skipped += skipped;
  }
  m->dir = dir;
  ac_err e;
  if (ac_findings_each(dir, stderr, "merge", merge_finding, m, &e) < 0) {
    fprintf(stderr, "attncheck merge: %s\n", e.msg);
    m->any_err = 1;
  }
  if (again) return;
  merge_corpus(m->o, dir);
  append_log(m->o, dir);
}

static int count(void *ctx, ac_finding_dir *f)
{
  (void)f;
  ++*(int *)ctx;
  return 0;
}

/* OUT/stats, OUT/report.html and the summary. */
static void merge_finish(const merge_state *m)
{
  const char *out = m->o->out;
  int nfind = 0;
  ac_err e;
  ac_findings_each(out, NULL, "merge", count, &nfind, &e);
  ac_defect_list dl;
  if (ac_defects_read(out, &dl, &e)) memset(&dl, 0, sizeof dl);
  int nd_fail, nd = ac_defects_confirmed(&dl, &nd_fail);
  char stats[8192];
  int n = snprintf(stats, sizeof stats, "state=merged\ncases=%lld\nfindings=%d\ndefects=%d\ndefects_fail=%d\nmerged_now=%lld\n"
                   "duplicates=%lld\nnot_reproduced=%lld\n",
                   (long long)m->cases, nfind, nd, nd_fail, (long long)m->merged, (long long)m->dup, (long long)m->not_repro);
  ac_defects_free(&dl);
  if (m->judged >= 0)
    n += snprintf(stats + n, sizeof stats - (size_t)n, "judged=%lld\nskipped=%lld\n", (long long)m->judged,
                  (long long)m->skipped);
  for (int i = 0; i < m->fams.n && n < (int)sizeof stats - 100; i++)
    n += snprintf(stats + n, sizeof stats - (size_t)n, "family.%s=%lld\n", m->fams.name[i], (long long)m->fams.count[i]);
  char sp[4096];
  snprintf(sp, sizeof sp, "%s/stats", out);
  ac_write_file_atomic(sp, stats, (size_t)n, &e);
  if (ac_report_html(out, &e)) fprintf(stderr, "attncheck merge: %s\n", e.msg);
  printf("merged into %s: %lld new findings, %lld duplicates by signature, %lld not reproduced; %lld cases in all", out,
         (long long)m->merged, (long long)m->dup, (long long)m->not_repro, (long long)m->cases);
  if (m->judged == 0)
    printf(", NO CASE JUDGED (%lld skipped)\n", (long long)m->skipped);
  else if (m->judged > 0)
    printf(", %lld judged, %lld skipped\n", (long long)m->judged, (long long)m->skipped);
  else
    printf("\n");
  ac_findings_summary(out, stdout, 20);
}

int ac_cmd_merge(int argc, char **argv)
{
  merge_opts o;
  int rc = parse_merge_args(argc, argv, &o);
  if (rc != AC_CMD_RUN) return rc;
  int lock_fd;
  if ((rc = check_dirs(&o)) != AC_CMD_RUN || (rc = lock_out(&o, &lock_fd)) != AC_CMD_RUN) return rc;
  ac_campaign_clean_tmp(o.out);
  char *own = read_stats(o.out);
  int known;
  merge_state m = {.o = &o,
                   .cases = stats_cases(own),
                   .judged = stats_value(own, "judged", &known),
                   .skipped = stats_value(own, "skipped", NULL)};
  if (!known && m.cases > 0) m.judged = -1; /* an OUT merged by an older attncheck */
  stats_families(own, &m.fams);
  free(own);
  ac_policies_init(&m.pol);
  for (int i = 0; i < o.ndirs; i++) merge_dir(&m, o.dirs[i]);
  int nd;
  ac_err de;
  if (ac_defects_assign_all(o.out, o.kernel, o.trust, o.rerun, &nd, &de)) {   /* by the rule of a campaign */
    fprintf(stderr, "attncheck merge: defects: %s\n", de.msg);
    m.any_err = 1;
  }
  merge_finish(&m);
  ac_campaign_unlock(lock_fd);
  if (m.any_fail) return AC_EXIT_FAIL;
  if (m.any_err) return AC_EXIT_INTERNAL;
  if (m.judged == 0 && m.cases > 0 && !o.allow_skip) {
    ac_cmd_error("merge", "no merged case was judged: exit %d (--allow-all-skipped: 0)", AC_EXIT_NOTHING_JUDGED);
    return AC_EXIT_NOTHING_JUDGED;
  }
  return AC_EXIT_OK;
}
