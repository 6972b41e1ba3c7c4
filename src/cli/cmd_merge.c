/* cmd_merge.c: attncheck merge DIR... -o OUT: union of campaign directories by finding
 * signature; each reproducer is re-run once and the report says whether it reproduced. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
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
             "A directory whose stats say it judged no case (every case SKIP) is named on stderr.\n"
             "  --allow-all-skipped  exit 0 even when no merged case was judged\n"
             "  --no-cache           re-runs neither read nor write the oracle cache ($ATTNCHECK_CACHE)\n"
             "exit: 1 when a merged finding with policy fail reproduced, 2 bad usage, 3 internal error, 4 no\n"
             "case of the merged directories was judged (their stats' judged= all 0), else 0.\n");
}

static int copy_file(const char *src, const char *dst)
{
  FILE *in = fopen(src, "rb");
  if (!in) return -1;
  FILE *out = fopen(dst, "wb");
  if (!out) {
    fclose(in);
    return -1;
  }
  char buf[65536];
  size_t n;
  int rc = 0;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0)
    if (fwrite(buf, 1, n, out) != n) rc = -1;
  fclose(in);
  if (fflush(out) || fsync(fileno(out))) rc = -1;
  if (fclose(out)) rc = -1;
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

/* The value of KEY= in dir's stats; *found (may be NULL) 1 when the line is there. */
static int64_t stats_value(const char *dir, const char *key, int *found)
{
  char p[4096];
  snprintf(p, sizeof p, "%s/stats", dir);
  if (found) *found = 0;
  FILE *f = fopen(p, "r");
  if (!f) return 0;
  char line[512];
  int64_t v = 0;
  size_t kl = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, kl) && line[kl] == '=') {
      v = strtoll(line + kl + 1, NULL, 10);
      if (found) *found = 1;
    }
  fclose(f);
  return v;
}

static int64_t stats_cases(const char *dir)
{
  return stats_value(dir, "cases", NULL);
}

/* Adds the family.NAME= counts of dir's stats to names/counts (at most 64 families). */
typedef struct {
  char name[64][64];
  int64_t count[64];
  int n;
} fam_counts;

static void stats_families(const char *dir, fam_counts *fc)
{
  char p[4096], line[512];
  snprintf(p, sizeof p, "%s/stats", dir);
  FILE *f = fopen(p, "r");
  while (f && fgets(line, sizeof line, f)) {
    char *eq = strchr(line, '=');
    if (strncmp(line, "family.", 7) || !eq) continue;
    *eq = 0;
    int i = 0;
    while (i < fc->n && strcmp(fc->name[i], line + 7)) i++;
    if (i == 64) continue;
    if (i == fc->n) snprintf(fc->name[fc->n], sizeof fc->name[0], "%.63s", line + 7), fc->count[fc->n++] = 0;
    fc->count[i] += strtoll(eq + 1, NULL, 10);
  }
  if (f) fclose(f);
}

/* Copies one finding directory into OUT/findings/<sig> atomically with the replay result. */
static int merge_one(const char *src, const char *outdir, const char *sig, int reproduced, const char *from, ac_err *e)
{
  char tmp[4096], fin[4096], p[4400], q[4400];
  if (snprintf(tmp, sizeof tmp, "%s/findings/.tmp-merge-%s-%ld", outdir, sig, (long)getpid()) >= (int)sizeof tmp ||
      snprintf(fin, sizeof fin, "%s/findings/%s", outdir, sig) >= (int)sizeof fin)
    return ac_err_set(e, "%s: path too long", sig);
  if (mkdir(tmp, 0755) && errno != EEXIST) return ac_err_set(e, "%s: mkdir: %s", tmp, strerror(errno));
  DIR *d = opendir(src);
  if (!d) return ac_err_set(e, "%s: %s", src, strerror(errno));
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    if (snprintf(p, sizeof p, "%s/%s", src, de->d_name) >= (int)sizeof p ||
        snprintf(q, sizeof q, "%s/%s", tmp, de->d_name) >= (int)sizeof q)
      continue;
    if (!strcmp(de->d_name, "report.json")) {
      json_object *r = json_object_from_file(p);
      if (!r) continue;
      json_object_object_add(r, "reproduced_on_merge", json_object_new_boolean(reproduced));
      json_object_object_add(r, "merged_from", json_object_new_string(from));
      const char *t = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY);
      ac_write_file_atomic(q, t, strlen(t), e);
      json_object_put(r);
    } else if (copy_file(p, q)) {
      closedir(d);
      return ac_err_set(e, "%s: copy failed", p);
    } else if (!strcmp(de->d_name, "repro.sh")) {
      chmod(q, 0755);
    }
  }
  closedir(d);
  if (rename(tmp, fin) != 0) return ac_err_set(e, "%s: rename: %s", fin, strerror(errno));
  return 0;
}

typedef struct {
  const char *out, *kernel;
  int rerun, trust, allow_skip;
  char **dirs;
  int ndirs;
} merge_opts;

/* Calls fn(ctx, path, name) for each entry of dir/sub whose name does not start with '.', until
 * one answers nonzero; that answer, or 0. */
static int each_entry(const char *dir, const char *sub, int (*fn)(void *ctx, const char *path, const char *name),
                      void *ctx)
{
  char dp[4096];
  snprintf(dp, sizeof dp, "%s/%s", dir, sub);
  DIR *d = opendir(dp);
  struct dirent *de;
  int rc = 0;
  while (!rc && d && (de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dp, de->d_name);
    rc = fn(ctx, p, de->d_name);
  }
  if (d) closedir(d);
  return rc;
}

/* 1 (with one line) when finding src, new to OUT, has no kernel it may be re-run on. */
static int untrusted(void *ctx, const char *src, const char *sig)
{
  const merge_opts *o = ctx;
  char dst[4400], spec[2048];
  snprintf(dst, sizeof dst, "%s/findings/%s", o->out, sig);
  ac_err e;
  if (access(dst, F_OK) != 0 && ac_finding_kernel(src, o->kernel, o->trust, spec, sizeof spec, &e)) {
    ac_cmd_error("merge", "%s; nothing merged (or merge with --no-rerun)", e.msg);
    return 1;
  }
  return 0;
}

/* Before anything is merged: every finding to be re-run must have a kernel it may run on (one
 * line and 1 when one has not: a recorded command or plugin is never run unasked). */
static int refuse_untrusted(const merge_opts *o)
{
  for (int i = 0; i < o->ndirs; i++)
    if (each_entry(o->dirs[i], "findings", untrusted, (void *)o)) return 1;
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
  while ((c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
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

/* Every DIR must be a campaign directory, and with re-runs, every finding to merge must have a
 * kernel it may run on. */
static int check_dirs(const merge_opts *o)
{
  for (int i = 0; i < o->ndirs; i++) {
    struct stat st;
    char p[4096];
    snprintf(p, sizeof p, "%s/findings", o->dirs[i]);
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
      ac_cmd_error("merge", "%s: not a campaign directory (no findings/)", o->dirs[i]);
      return AC_EXIT_USAGE;
    }
  }
  if (o->rerun && refuse_untrusted(o)) return AC_EXIT_USAGE;
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
static int recorded_kind(const char *src, ac_verdict_kind *k)
{
  char kind[64] = "", rp[4500];
  snprintf(rp, sizeof rp, "%s/report.json", src);
  json_object *r = json_object_from_file(rp), *v;
  if (r && json_object_object_get_ex(r, "kind", &v)) snprintf(kind, sizeof kind, "%s", json_object_get_string(v));
  if (r) json_object_put(r);
  *k = AC_V_FAIL;
  return ac_verdict_parse(kind, k) == 0;
}

/* Finding src (named sig) of the campaign directory into OUT unless OUT holds its signature
 * already, re-run first unless --no-rerun. */
static int merge_finding(void *ctx, const char *src, const char *sig)
{
  merge_state *m = ctx;
  const merge_opts *o = m->o;
  char dst[4400];
  snprintf(dst, sizeof dst, "%s/findings/%s", o->out, sig);
  struct stat st;
  if (stat(dst, &st) == 0) {
    m->dup++;
    return 0;
  }
  ac_verdict_kind k;
  int have_kind = recorded_kind(src, &k), reproduced = 1;
  ac_err e;
  if (o->rerun) {
    uint32_t kinds = 0;
    int rc = ac_replay_finding(src, o->kernel, o->trust, NULL, stdout, &kinds, &e);
    if (rc < 0) {
      fprintf(stderr, "attncheck merge: %s: %s\n", src, e.msg);
      m->any_err = 1;
      reproduced = 0;
    } else {
      reproduced = have_kind && (kinds & (1u << k));
    }
  }
  if (merge_one(src, o->out, sig, reproduced, m->dir, &e)) {
    fprintf(stderr, "attncheck merge: %s\n", e.msg);
    m->any_err = 1;
    return 0;
  }
  m->merged++;
  if (!reproduced) m->not_repro++;
  if (reproduced && have_kind && m->pol.p[k] == AC_POLICY_FAIL) m->any_fail = 1;
  return 0;
}

/* A corpus file into OUT/corpus unless one of its name is there. */
static int copy_new(void *ctx, const char *src, const char *name)
{
  const merge_opts *o = ctx;
  char dst[4400];
  snprintf(dst, sizeof dst, "%s/corpus/%s", o->out, name);
  if (access(dst, F_OK) != 0) copy_file(src, dst);
  return 0;
}

/* dir's log appended to OUT's with the source named. */
static void append_log(const merge_opts *o, const char *dir)
{
  char lp[4096], lo[4096];
  snprintf(lp, sizeof lp, "%s/log.jsonl", dir);
  snprintf(lo, sizeof lo, "%s/log.jsonl", o->out);
  FILE *in = fopen(lp, "r");
  if (!in) return;
  FILE *f = fopen(lo, "a");
  if (f) {
    fprintf(f, "{\"event\":\"merge\",\"from\":\"%s\"}\n", dir);
    char line[4096];
    while (fgets(line, sizeof line, in)) fputs(line, f);
    fclose(f);
  }
  fclose(in);
}

/* One campaign directory: its findings, and unless it was merged before, its cases, its corpus
 * (a union by file name) and its log. */
static void merge_dir(merge_state *m, const char *dir)
{
  int again = !strcmp(dir, m->o->out) || already_merged(m->o->out, dir);
  if (!again) {
    int64_t cases = stats_cases(dir);
    m->cases += cases;
    stats_families(dir, &m->fams);
    int known;
    int64_t judged = stats_value(dir, "judged", &known), skipped = stats_value(dir, "skipped", NULL);
    if (known && judged == 0 && cases > 0)
      ac_cmd_error("merge", "%s judged no case (%lld skipped)", dir, (long long)skipped);
    if (!known || m->judged < 0)
      m->judged = -1;
    else
      m->judged += judged, m->skipped += skipped;
  }
  m->dir = dir;
  each_entry(dir, "findings", merge_finding, m);
  if (again) return;
  each_entry(dir, "corpus", copy_new, (void *)m->o);
  append_log(m->o, dir);
}

static int count(void *ctx, const char *path, const char *name)
{
  (void)path, (void)name;
  ++*(int *)ctx;
  return 0;
}

/* OUT/stats, OUT/report.html and the summary. */
static void merge_finish(const merge_state *m)
{
  const char *out = m->o->out;
  int nfind = 0;
  each_entry(out, "findings", count, &nfind);
  char stats[8192];
  int n = snprintf(stats, sizeof stats, "state=merged\ncases=%lld\nfindings=%d\nmerged_now=%lld\nduplicates=%lld\nnot_reproduced=%lld\n",
                   (long long)m->cases, nfind, (long long)m->merged, (long long)m->dup, (long long)m->not_repro);
  if (m->judged >= 0)
    n += snprintf(stats + n, sizeof stats - (size_t)n, "judged=%lld\nskipped=%lld\n", (long long)m->judged,
                  (long long)m->skipped);
  for (int i = 0; i < m->fams.n && n < (int)sizeof stats - 100; i++)
    n += snprintf(stats + n, sizeof stats - (size_t)n, "family.%s=%lld\n", m->fams.name[i], (long long)m->fams.count[i]);
  char sp[4096];
  ac_err e;
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
  int known;
  merge_state m = {.o = &o,
                   .cases = stats_cases(o.out),
                   .judged = stats_value(o.out, "judged", &known),
                   .skipped = stats_value(o.out, "skipped", NULL)};
  if (!known && m.cases > 0) m.judged = -1; /* an OUT merged by an older attncheck */
  stats_families(o.out, &m.fams);
  ac_policies_init(&m.pol);
  for (int i = 0; i < o.ndirs; i++) merge_dir(&m, o.dirs[i]);
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
