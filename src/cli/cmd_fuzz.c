/* cmd_fuzz.c: attncheck fuzz: an adversarial campaign on one kernel, or --list-families. */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "fuzz.h"
#include "oracle.h"
#include "util.h"
#include "variants.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: attncheck fuzz --kernel K --out DIR [--time 8h | --cases N] [options]\n"
          "       attncheck fuzz --list-families\n"
          "       attncheck fuzz --generate FAMILY [--index K] [--seed S] [--dtypes ...] --out FILE.npz\n\n"
          "Searches for inputs on which kernel K leaves the exact answer: a stratified sweep over the\n"
          "generator families, then evolutionary refinement of the cases with the largest err/E.\n"
          "Findings are stored once per signature under DIR/findings/<sig>/ as found, then minimized and\n"
          "assigned to defects: findings whose minimized cases, judged again, fail the same way\n"
          "(DIR/defects.json; the summary lists the defects first).\n\n"
          "options:\n"
          "  --kernel K          built-in name, PATH.so[:NAME], 'exec:CMD {in} {out}', 'exec-persistent:CMD'\n"
          "  --out DIR           campaign directory (stats, findings/, corpus/, log.jsonl, report.html)\n"
          "  --time D            stop after D: 30s, 20m, 8h, 2d (a number without a unit is seconds)\n"
          "  --cases N           stop after N case numbers (with --resume: in total)\n"
          "  --jobs J            worker processes (default 1)\n"
          "  --seed S            campaign seed (default 1)\n"
          "  --resume            continue the campaign in DIR (kernel, seed, shard, families from DIR)\n"
          "  --shard I/N         shard I of N: seed hash(S, I), case numbers I, I+N, I+2N, ...\n"
          "  --families LIST     comma-separated families (default: all; see --list-families)\n"
          "  --policy KIND=P     verdict policy fail|warn|ignore (repeatable)\n"
          "  --precision NAME    precision class override (or per dtype: DTYPE=CLASS,...)\n"
          "  --empty-rows C      zero|nan|skip|mean-v: the empty-row convention of the kernel\n"
          "  --alibi-lse C       abi|fa2: the kernel's LSE convention under causal ALiBi (default: its own\n"
          "                      declaration; fa2: FlashAttention-2's +m j, docs/variants.md)\n"
          "  --dtypes LIST       dtypes to draw (default: what the kernel supports; exec kernels: what the\n"
          "                      worker declares, else f32)\n"
          "  --max-t N           longest T of the long-T family (default 16384; CUDA kernels 131072)\n"
          "  --max-elems N       cap on the elements of one tensor (default 4194304)\n"
          "  --max-d N           largest head dim (default 512)\n"
          "  --no-backward       judge the forward only, also of a kernel that declares a backward\n"
          "  --shape-buckets N   dense cases take one of N shapes drawn from the seed (1..64), so that a\n"
          "                      JIT-compiled kernel compiles each shape once; stats report first runs apart\n"
          "  --stop-on-fail      stop at the first finding with policy fail\n"
          "  --log-cases         one log.jsonl event per case (number, family, verdict kinds)\n"
          "  --generate F        write case --index K of family F (seed, limits as given) to --out FILE\n"
          "  --no-strided        never ask for strided layouts\n"
          "  --no-nonfinite      never store NaN or inf in inputs\n"
          "  --timeout S         per-case kernel time limit (default 60s; a number without a unit is seconds)\n"
          "  --no-minimize       store findings without minimizing them\n"
          "  --minimize-evals N  judgements per minimization (default 200)\n"
          "  --minimize-time S   also a time budget per minimization (default none: results then depend on the\n"
          "                      machine's load; a number without a unit is seconds)\n"
          "  --repeat-every N    run every Nth case twice for NONDETERMINISTIC (default 16, 0 off)\n"
          "  --corpus DIR        corpus to seed from and to keep the best cases in (default DIR/corpus)\n"
          "  --no-cache          neither read nor write the oracle cache ($ATTNCHECK_CACHE; layout cases use it)\n"
          "  --allow-all-skipped exit 0 even when no case of the campaign was judged (every case SKIP)\n"
          "  --quiet             no summary at the end; --live / --no-live: the status line\n\n"
          "One campaign runs in DIR at a time (a second one exits 2 naming its pid). A finding that\n"
          "cannot be stored (a full disk) stops the campaign (exit 3); --resume evaluates its case again.\n\n"
          "Ctrl-C (SIGINT) or SIGTERM stops the campaign: what is stored stays, the cases in flight run\n"
          "again with --resume, which the last line names.\n\n"
          "exit: 1 when a finding with policy fail exists in DIR, 3 internal error or a finding that could\n"
          "not be stored, 2 bad usage or DIR in use, 4 no case of the campaign was judged (every case SKIP;\n"
          "--allow-all-skipped: 0), 130 / 143 stopped by SIGINT / SIGTERM, else 0.\n");
}

static void list_families(void)
{
  int n;
  const ac_family *f = ac_families(&n);
  char feats[160];
  for (int i = 0; i < n; i++)
    printf("%-14s %s  [hunts: %s]%s%s%s\n", f[i].name, f[i].summary, f[i].targets, f[i].feats ? "  [variants: " : "",
           f[i].feats ? ac_feat_list(f[i].feats, feats, sizeof feats) : "", f[i].feats ? "]" : f[i].usable ? "  [variants: several]" : "");
}

enum {
  O_KERNEL = 256, O_OUT, O_TIME, O_CASES, O_JOBS, O_SEED, O_RESUME, O_SHARD, O_FAMILIES, O_POLICY, O_PRECISION,
  O_DTYPES, O_MAXT, O_MAXE, O_NOSTRIDED, O_NONONFINITE, O_TIMEOUT, O_NOMIN, O_MINTIME, O_MINEVALS, O_REPEAT, O_CORPUS, O_QUIET,
  O_LIVE, O_NOLIVE, O_LIST, O_EMPTY, O_MAXD, O_STOPFAIL, O_LOGCASES, O_GENERATE, O_INDEX, O_HELP, O_ALIBI_LSE,
  O_ALLOWSKIP, O_NOCACHE, O_BUCKETS, O_NOBWD
};

/* An option handler's answer when the option belongs to another handler (AC_CMD_RUN: applied;
 * anything else: the exit code of a usage error). */
enum { OPT_OTHER = -2 };

typedef struct {
  ac_campaign_opts c;
  const char *generate;
  int64_t gen_index;
} fuzz_opts;

/* The campaign: kernel, directories, when to stop, seed, shard, families, what it prints. */
static int campaign_option(fuzz_opts *o, int c, const char *v)
{
  static char kspec_abs[4096];   /* the recorded spec: a plugin path made absolute */
  int64_t n;
  ac_err e;
  switch (c) {
  case O_KERNEL: o->c.kernel_spec = ac_kernel_spec_absolute(v, kspec_abs, sizeof kspec_abs); break;
  case 'o':
  case O_OUT: o->c.out_dir = v; break;
  case O_TIME:
    if (ac_parse_duration_arg("fuzz", "--time", v, &o->c.time_s)) return ac_cmd_usage_error("fuzz", "bad --time '%s' (use 30s, 20m, 8h, 2d)", v);
    break;
  case O_CASES:
    if (ac_parse_i64(v, &n) || n < 1) return ac_cmd_usage_error("fuzz", "bad --cases '%s'", v);
    o->c.max_cases = n;
    break;
  case O_JOBS:
    if (ac_parse_i64(v, &n) || n < 1 || n > 256) return ac_cmd_usage_error("fuzz", "bad --jobs '%s' (1..256)", v);
    o->c.jobs = (int)n;
    break;
  case O_SEED:
    if (ac_parse_u64(v, &o->c.seed)) return ac_cmd_usage_error("fuzz", "bad --seed '%s'", v);
    break;
  case O_RESUME: o->c.resume = 1; break;
  case O_SHARD: {
    int i, k;
    char extra;
    if (sscanf(v, "%d/%d%c", &i, &k, &extra) != 2 || k < 1 || i < 0 || i >= k)
      return ac_cmd_usage_error("fuzz", "bad --shard '%s' (I/N with 0 <= I < N)", v);
    o->c.shard_i = i;
    o->c.shard_n = k;
    break;
  }
  case O_FAMILIES: {
    int idx[64], k;
    if (ac_family_parse_list(v, idx, &k, 64, &e)) return ac_cmd_usage_error("fuzz", "%s", e.msg);
    snprintf(o->c.families, sizeof o->c.families, "%s", v);
    break;
  }
  case O_STOPFAIL: o->c.stop_on_fail = 1; break;
  case O_LOGCASES: o->c.log_cases = 1; break;
  case O_ALLOWSKIP: o->c.allow_all_skipped = 1; break;
  case O_NOCACHE: ac_oracle_cache_disable(); break;
  case O_CORPUS: o->c.corpus_dir = v; break;
  case 'q':
  case O_QUIET: o->c.quiet = 1; break;
  case O_LIVE: o->c.live = 1; break;
  case O_NOLIVE: o->c.live = 0; break;
  default: return OPT_OTHER;
  }
  return AC_CMD_RUN;
}

/* How each case is judged, repeated and minimized. */
static int judging_option(fuzz_opts *o, int c, const char *v)
{
  int64_t n;
  ac_err e;
  switch (c) {
  case O_POLICY: {
    ac_policies tmp;
    ac_policies_init(&tmp);
    if (ac_policies_set(&tmp, v, &e)) return ac_cmd_usage_error("fuzz", "%s", e.msg);
    size_t l = strlen(o->c.policies);
    snprintf(o->c.policies + l, sizeof o->c.policies - l, "%s%s", l ? ";" : "", v);
    break;
  }
  case O_PRECISION:
    if (ac_precision_spec_check(v, &e)) return ac_cmd_usage_error("fuzz", "%s", e.msg);
    if (o->c.precision)
      return ac_cmd_usage_error("fuzz", "--precision given twice (a campaign judges under one class)");
    o->c.precision = v;
    break;
  case O_EMPTY: {
    ac_empty_conv ec;
    if (ac_empty_parse(v, &ec)) return ac_cmd_usage_error("fuzz", "bad --empty-rows '%s' (zero|nan|skip|mean-v)", v);
    o->c.empty_rows = v;
    break;
  }
  case O_ALIBI_LSE: {
    int conv;
    if (ac_alibi_lse_parse(v, &conv)) return ac_cmd_usage_error("fuzz", "bad --alibi-lse '%s': expected abi or fa2", v);
    o->c.alibi_lse = v;
    break;
  }
  case O_TIMEOUT:
    if (ac_parse_duration_arg("fuzz", "--timeout", v, &o->c.timeout_s)) return ac_cmd_usage_error("fuzz", "bad --timeout '%s'", v);
    break;
  case O_NOMIN: o->c.minimize = 0; break;
  case O_MINTIME:
    if (ac_parse_duration_arg("fuzz", "--minimize-time", v, &o->c.min_seconds))
      return ac_cmd_usage_error("fuzz", "bad --minimize-time '%s'", v);
    break;
  case O_MINEVALS:
    if (ac_parse_i64(v, &n) || n < 1 || n > 1000000) return ac_cmd_usage_error("fuzz", "bad --minimize-evals '%s'", v);
    o->c.min_evals = (int)n;
    break;
  case O_REPEAT:
    if (ac_parse_i64(v, &n) || n < 0) return ac_cmd_usage_error("fuzz", "bad --repeat-every '%s'", v);
    o->c.repeat_every = (int)n;
    break;
  default: return OPT_OTHER;
  }
  return AC_CMD_RUN;
}

/* What the generators may draw, and --generate. */
static int generator_option(fuzz_opts *o, int c, const char *v)
{
  int64_t n;
  switch (c) {
  case O_DTYPES: {
    uint32_t m = 0;
    char badname[64];
    if (ac_dtype_parse_list(v, &m, badname, sizeof badname))
      return badname[0] ? ac_cmd_usage_error("fuzz", "unknown dtype '%s'", badname)
                        : ac_cmd_usage_error("fuzz", "empty --dtypes");
    o->c.lim.dtypes = m;
    o->c.dtypes_given = 1;
    break;
  }
  case O_MAXT:
    if (ac_parse_i64(v, &n) || n < 1) return ac_cmd_usage_error("fuzz", "bad --max-t '%s'", v);
    o->c.lim.max_t = n;
    break;
  case O_MAXE:
    if (ac_parse_i64(v, &n) || n < 16) return ac_cmd_usage_error("fuzz", "bad --max-elems '%s'", v);
    o->c.lim.max_elems = n;
    break;
  case O_MAXD:
    if (ac_parse_i64(v, &n) || n < 1) return ac_cmd_usage_error("fuzz", "bad --max-d '%s'", v);
    o->c.lim.max_d = n;
    break;
  case O_BUCKETS:
    if (ac_parse_i64(v, &n) || n < 1 || n > AC_MAX_BUCKETS)
      return ac_cmd_usage_error("fuzz", "bad --shape-buckets '%s' (1..%d)", v, AC_MAX_BUCKETS);
    o->c.lim.nbuckets = (int)n;
    break;
  case O_NOBWD: o->c.no_backward = 1; break;
  case O_NOSTRIDED: o->c.lim.no_strided = 1; break;
  case O_NONONFINITE: o->c.lim.no_nonfinite = 1; break;
  case O_GENERATE:
    if (!ac_family_find(v)) return ac_cmd_usage_error("fuzz", "unknown family '%s' (see --list-families)", v);
    o->generate = v;
    break;
  case O_INDEX:
    if (ac_parse_i64(v, &o->gen_index) || o->gen_index < 0) return ac_cmd_usage_error("fuzz", "bad --index '%s'", v);
    break;
  default: return OPT_OTHER;
  }
  return AC_CMD_RUN;
}

static int parse_fuzz_args(int argc, char **argv, fuzz_opts *o)
{
  static const struct option lo[] = {
    {"kernel", 1, 0, O_KERNEL}, {"out", 1, 0, O_OUT}, {"time", 1, 0, O_TIME}, {"cases", 1, 0, O_CASES},
    {"jobs", 1, 0, O_JOBS}, {"seed", 1, 0, O_SEED}, {"resume", 0, 0, O_RESUME}, {"shard", 1, 0, O_SHARD},
    {"families", 1, 0, O_FAMILIES}, {"policy", 1, 0, O_POLICY}, {"precision", 1, 0, O_PRECISION},
    {"dtypes", 1, 0, O_DTYPES}, {"max-t", 1, 0, O_MAXT}, {"max-elems", 1, 0, O_MAXE}, {"no-strided", 0, 0, O_NOSTRIDED},
    {"no-nonfinite", 0, 0, O_NONONFINITE}, {"timeout", 1, 0, O_TIMEOUT}, {"no-minimize", 0, 0, O_NOMIN},
    {"minimize-time", 1, 0, O_MINTIME}, {"minimize-evals", 1, 0, O_MINEVALS}, {"repeat-every", 1, 0, O_REPEAT}, {"corpus", 1, 0, O_CORPUS},
    {"quiet", 0, 0, O_QUIET}, {"live", 0, 0, O_LIVE}, {"no-live", 0, 0, O_NOLIVE}, {"list-families", 0, 0, O_LIST},
    {"empty-rows", 1, 0, O_EMPTY}, {"max-d", 1, 0, O_MAXD}, {"stop-on-fail", 0, 0, O_STOPFAIL}, {"log-cases", 0, 0, O_LOGCASES},
    {"generate", 1, 0, O_GENERATE}, {"index", 1, 0, O_INDEX}, {"alibi-lse", 1, 0, O_ALIBI_LSE},
    {"allow-all-skipped", 0, 0, O_ALLOWSKIP}, {"no-cache", 0, 0, O_NOCACHE},
    {"shape-buckets", 1, 0, O_BUCKETS}, {"no-backward", 0, 0, O_NOBWD},
    {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  ac_campaign_opts_init(&o->c);
  o->c.lim.max_t = 0;   /* auto: by the kernel's memory (host or device) */
  int c;
  optind = 1;
  opterr = 0;
  while ((c = ac_cmd_getopt_long(argc, argv, ":ho:q", lo)) != -1) {
    if (c == 'h' || c == O_HELP) {
      usage(stdout);
      return AC_EXIT_OK;
    }
    if (c == O_LIST) {
      list_families();
      return AC_EXIT_OK;
    }
    int r = campaign_option(o, c, optarg);
    if (r == OPT_OTHER) r = judging_option(o, c, optarg);
    if (r == OPT_OTHER) r = generator_option(o, c, optarg);
    if (r == OPT_OTHER) return ac_cmd_getopt_error("fuzz", c, argv);
    if (r != AC_CMD_RUN) return r;
  }
  if (optind < argc) return ac_cmd_usage_error("fuzz", "unexpected argument '%s'", argv[optind]);
  if (o->generate) return o->c.out_dir ? AC_CMD_RUN : ac_cmd_usage_error("fuzz", "--generate needs --out FILE.npz");
  if (!o->c.out_dir) return ac_cmd_usage_error("fuzz", "--out DIR is required");
  if (!o->c.kernel_spec && !o->c.resume) return ac_cmd_usage_error("fuzz", "--kernel K is required");
  if (!o->c.resume && o->c.time_s <= 0 && o->c.max_cases <= 0)
    return ac_cmd_usage_error("fuzz", "give --time D or --cases N");
  return AC_CMD_RUN;
}

/* --generate: one case of a family, as a campaign with these limits would draw it. */
static int generate_case(fuzz_opts *o)
{
  ac_case gc;
  ac_err e;
  if (o->c.lim.max_t <= 0) o->c.lim.max_t = 16384;
  if (o->c.lim.nbuckets > 0) ac_gen_buckets(&o->c.lim, o->c.seed, o->c.lim.nbuckets);
  if (ac_generate(ac_family_find(o->generate), o->c.seed, o->gen_index, &o->c.lim, &gc, &e) ||
      ac_case_write(&gc, o->c.out_dir, &e)) {
    ac_cmd_error("fuzz", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  char size[200];
  ac_case_size_str(&gc, size, sizeof size);
  printf("%s: family %s, seed %llu, index %lld: %s\n", o->c.out_dir, o->generate, (unsigned long long)o->c.seed,
         (long long)o->gen_index, size);
  ac_case_free(&gc);
  return AC_EXIT_OK;
}

int ac_cmd_fuzz(int argc, char **argv)
{
  fuzz_opts o;
  int rc = parse_fuzz_args(argc, argv, &o);
  if (rc != AC_CMD_RUN) return rc;
  return o.generate ? generate_case(&o) : ac_campaign_run(&o.c);
}
