/* cmd_quant_report.c: attncheck quant-report — what each quantized KV-cache format costs in
 * accuracy on given cases or a generated sweep (src/judge/quant_report.h, docs/quantized.md):
 * information beside the verdicts, never a FAIL. */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "casefile.h"
#include "commands.h"
#include "quant_report.h"
#include "quant_report_html.h"
#include "rng.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: attncheck quant-report [--formats F[:G],...] [--sweep N] [--seed S] [--rows SPEC] [--html FILE]\n"
          "                              [--json FILE] [CASE...]\n\n"
          "For each quantized format, K and V of every case quantized by the format's reference quantizer, and the\n"
          "exact attention over those codes against the exact attention over the case's own values: per format the\n"
          "50th, 90th, 99th percentile and largest |o_q - o| / (max V - min V) (the range of V over the row's visible\n"
          "keys, every column) and of |lse_q - lse|. Information, never a verdict: exit 0 whatever the errors.\n\n"
          "  --formats LIST  FMT[:GRANULARITY],... (default: every format, fp8 and int at two granularities)\n"
          "  --sweep N       N generated cases: normal(0,1) Q, K, V, T from 64 to 512, d 64 or 128, causal or not\n"
          "                  (stream 0 of the seed, case k from seed S + k); cases named on the line come first\n"
          "  --seed S        the sweep's seed (default 1)\n"
          "  --rows SPEC     oracle row selection, as check --rows (edges+K) for long cases\n"
          "  --threads N     oracle threads (default: all cores)\n"
          "  --html FILE     a page with the table and plots of both errors per format\n"
          "  --json FILE     the table as JSON\n"
          "  --mem-cap SIZE  refuse cases larger than SIZE bytes (default 8G)\n"
          "  --help\n\n"
          "exit: 0 the report was written; 2 bad usage or a case that cannot be read (or is quantized already).\n");
}

typedef struct {
  const char *formats, *rows, *html, *json;
  int64_t sweep, threads;
  uint64_t seed;
} qr_opts;

/* Sweep case k: one of 12 shapes (T, d, mask), values from stream 0 of seed + k. */
static int sweep_case(uint64_t seed, int64_t k, ac_case *c, ac_err *e)
{
  static const int64_t ts[] = {64, 128, 200, 512}, ds[] = {64, 128};
  ac_case_init(c);
  ac_problem *p = &c->p;
  p->dtype = AC_F32;
  p->mask = k % 2 ? AC_MASK_CAUSAL : AC_MASK_NONE;
  p->batch = 1;
  p->heads = 2, p->kv_heads = 1;
  p->tq = p->tk = ts[(k / 2) % 4];
  p->dk = p->dv = ds[(k / 8) % 2];
  p->scale_is_default = 1;
  p->scale = ac_problem_scale(p);
  if (ac_case_alloc(c, e)) return -1;
  ac_rng r;
  ac_rng_init(&r, seed + (uint64_t)k, 0);
  ac_counts n;
  ac_problem_counts(p, &n, NULL);
  for (int64_t i = 0; i < n.q; i++) ((float *)c->q)[i] = (float)ac_rng_normal(&r);
  for (int64_t i = 0; i < n.k; i++) ((float *)c->k)[i] = (float)ac_rng_normal(&r);
  for (int64_t i = 0; i < n.v; i++) ((float *)c->v)[i] = (float)ac_rng_normal(&r);
  c->seed = seed + (uint64_t)k;
  snprintf(c->generator, sizeof c->generator, "quant-report sweep");
  return 0;
}

static void print_table(const ac_qrep *r)
{
  printf("quant-report: %lld case(s), %lld rows, %lld elements; error |o_q - o| / (max V - min V over the row's visible keys), LSE |lse_q - lse|\n",
         (long long)r->cases, (long long)r->rows, (long long)r->elems);
  printf("%-14s %10s %10s %10s %10s   %10s %10s %10s %8s\n", "format", "p50", "p90", "p99", "max", "lse p50", "lse p99",
         "lse max", "skipped");
  for (int i = 0; i < r->nf; i++) {
    const ac_qrep_fmt *f = &r->f[i];
    if (!f->nerr) {
      printf("%-14s %10s (no case its block divides)\n", f->name, "-");
      continue;
    }
    printf("%-14s %10.3g %10.3g %10.3g %10.3g   %10.3g %10.3g %10.3g %8lld\n", f->name, f->q[0], f->q[1], f->q[2], f->q[3],
           f->lq[0], f->lq[1], f->lq[2], (long long)f->skipped);
  }
  printf("(information beside the verdicts: quantization error is the format's, not a kernel's)\n");
}

static int run(const qr_opts *o, char **files, int nfiles)
{
  const char *cmd = "quant-report";
  ac_qrep r;
  ac_err e;
  if (ac_qrep_init(&r, o->formats, &e)) return ac_cmd_usage_error(cmd, "--formats: %s", e.msg);
  int rc = AC_EXIT_OK;
  for (int i = 0; i < nfiles + o->sweep && rc == AC_EXIT_OK; i++) {
    ac_case c;
    if (i < nfiles ? ac_case_read(&c, files[i], &e) : sweep_case(o->seed, i - nfiles, &c, &e)) {
      ac_cmd_error(cmd, "%s", e.msg);   /* names the file */
      rc = AC_EXIT_USAGE;
      break;
    }
    if (ac_qrep_add_case(&r, &c, o->rows, (int)o->threads, &e)) {
      if (i < nfiles) ac_cmd_error(cmd, "%s: %s", files[i], e.msg);
      else ac_cmd_error(cmd, "sweep case %lld: %s", (long long)(i - nfiles), e.msg);
      rc = AC_EXIT_USAGE;
    }
    ac_case_free(&c);
  }
  if (rc == AC_EXIT_OK) {
    ac_qrep_finish(&r);
    print_table(&r);
    if (o->html && ac_quant_report_html(o->html, &r, &e)) rc = (ac_cmd_error(cmd, "%s", e.msg), AC_EXIT_USAGE);
    if (o->json && ac_quant_report_json(o->json, &r, &e)) rc = (ac_cmd_error(cmd, "%s", e.msg), AC_EXIT_USAGE);
  }
  ac_qrep_free(&r);
  return rc;
}

int ac_cmd_quant_report(int argc, char **argv)
{
  const char *cmd = "quant-report";
  enum { O_FORMATS = 256, O_SWEEP, O_SEED, O_ROWS, O_THREADS, O_HTML, O_JSON, O_MEMCAP, O_HELP };
  static const struct option lo[] = {
    {"formats", required_argument, 0, O_FORMATS}, {"sweep", required_argument, 0, O_SWEEP},
    {"seed", required_argument, 0, O_SEED},       {"rows", required_argument, 0, O_ROWS},
    {"threads", required_argument, 0, O_THREADS}, {"html", required_argument, 0, O_HTML},
    {"json", required_argument, 0, O_JSON},       {"mem-cap", required_argument, 0, O_MEMCAP},
    {"help", no_argument, 0, O_HELP},             {0, 0, 0, 0}};
  qr_opts o = {.seed = 1};
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = ac_cmd_getopt_long(argc, argv, ":h", lo)) != -1) {
    uint64_t cap;
    switch (ch) {
    case 'h':
    case O_HELP: usage(stdout); return AC_EXIT_OK;
    case O_FORMATS: o.formats = optarg; break;
    case O_SWEEP:
      if (ac_parse_i64(optarg, &o.sweep) || o.sweep < 0 || o.sweep > 100000)
        return ac_cmd_usage_error(cmd, "bad value '%s' for --sweep", optarg);
      break;
    case O_SEED:
      if (ac_parse_u64(optarg, &o.seed)) return ac_cmd_usage_error(cmd, "bad value '%s' for --seed", optarg);
      break;
    case O_ROWS: o.rows = optarg; break;
    case O_THREADS:
      if (ac_parse_i64(optarg, &o.threads) || o.threads < 0 || o.threads > 4096)
        return ac_cmd_usage_error(cmd, "bad value '%s' for --threads", optarg);
      break;
    case O_HTML: o.html = optarg; break;
    case O_JSON: o.json = optarg; break;
    case O_MEMCAP:
      if (ac_parse_size(optarg, &cap) || cap == 0) return ac_cmd_usage_error(cmd, "bad value '%s' for --mem-cap", optarg);
      ac_set_mem_cap(cap);
      break;
    default: return ac_cmd_getopt_error(cmd, ch, argv);
    }
  }
  int nfiles = argc - optind;
  if (nfiles == 0 && o.sweep == 0) return ac_cmd_usage_error(cmd, "name a CASE or ask for a --sweep N");
  return run(&o, argv + optind, nfiles);
}
