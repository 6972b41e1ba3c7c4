/* cmd_fuzz.c: attncheck fuzz: an adversarial campaign on one kernel, or --list-families. */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "fuzz.h"
#include "util.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: attncheck fuzz --kernel K --out DIR [--time 8h | --cases N] [options]\n"
          "       attncheck fuzz --list-families\n"
          "       attncheck fuzz --generate FAMILY [--index K] [--seed S] [--dtypes ...] --out FILE.npz\n\n"
          "Searches for inputs on which kernel K leaves the exact answer: a stratified sweep over the\n"
          "generator families, then evolutionary refinement of the cases with the largest err/E.\n"
          "Findings are stored once per signature under DIR/findings/<sig>/ as found, then minimized.\n\n"
          "options:\n"
          "  --kernel K          built-in name, PATH.so[:NAME], 'exec:CMD {in} {out}', 'exec-persistent:CMD'\n"
          "  --out DIR           campaign directory (stats, findings/, corpus/, log.jsonl, report.html)\n"
          "  --time D            stop after D (30s, 20m, 8h)\n"
          "  --cases N           stop after N case numbers (with --resume: in total)\n"
          "  --jobs J            worker processes (default 1)\n"
          "  --seed S            campaign seed (default 1)\n"
          "  --resume            continue the campaign in DIR (kernel, seed, shard, families from DIR)\n"
          "  --shard I/N         shard I of N: seed hash(S, I), case numbers I, I+N, I+2N, ...\n"
          "  --families LIST     comma-separated families (default: all; see --list-families)\n"
          "  --policy KIND=P     verdict policy fail|warn|ignore (repeatable)\n"
          "  --precision NAME    precision class override (or per dtype: DTYPE=CLASS,...)\n"
          "  --empty-rows C      zero|nan|skip: the empty-row convention of the kernel\n"
          "  --dtypes LIST       dtypes to draw (default: what the kernel supports; exec kernels: what the\n"
          "                      worker declares, else f32)\n"
          "  --max-t N           longest T of the long-T family (default 16384; CUDA kernels 131072)\n"
          "  --max-elems N       cap on the elements of one tensor (default 4194304)\n"
          "  --max-d N           largest head dim (default 512)\n"
          "  --stop-on-fail      stop at the first finding with policy fail\n"
          "  --log-cases         one log.jsonl event per case (number, family, verdict kinds)\n"
          "  --generate F        write case --index K of family F (seed, limits as given) to --out FILE\n"
          "  --no-strided        never ask for strided layouts\n"
          "  --no-nonfinite      never store NaN or inf in inputs\n"
          "  --timeout S         per-case kernel time limit in seconds (default 60)\n"
          "  --no-minimize       store findings without minimizing them\n"
          "  --minimize-time S   time budget per minimization (default 30)\n"
          "  --repeat-every N    run every Nth case twice for NONDETERMINISTIC (default 16, 0 off)\n"
          "  --corpus DIR        corpus to seed from and to keep the best cases in (default DIR/corpus)\n"
          "  --quiet             no summary at the end; --live / --no-live: the status line\n\n"
          "One campaign runs in DIR at a time (a second one exits 2 naming its pid). A finding that\n"
          "cannot be stored (a full disk) stops the campaign (exit 3); --resume evaluates its case again.\n\n"
          "exit: 1 when a finding with policy fail exists in DIR, 3 internal error or a finding that could\n"
          "not be stored, 2 bad usage or DIR in use, else 0.\n");
}

static void list_families(void)
{
  int n;
  const ac_family *f = ac_families(&n);
  for (int i = 0; i < n; i++) printf("%-14s %s  [hunts: %s]\n", f[i].name, f[i].summary, f[i].targets);
}

int ac_cmd_fuzz(int argc, char **argv)
{
  static char kspec_abs[4096];   /* the recorded spec: a plugin path made absolute */
  enum {
    O_KERNEL = 256, O_OUT, O_TIME, O_CASES, O_JOBS, O_SEED, O_RESUME, O_SHARD, O_FAMILIES, O_POLICY, O_PRECISION,
    O_DTYPES, O_MAXT, O_MAXE, O_NOSTRIDED, O_NONONFINITE, O_TIMEOUT, O_NOMIN, O_MINTIME, O_REPEAT, O_CORPUS, O_QUIET,
    O_LIVE, O_NOLIVE, O_LIST, O_EMPTY, O_MAXD, O_STOPFAIL, O_LOGCASES, O_GENERATE, O_INDEX, O_HELP
  };
  static const struct option lo[] = {
    {"kernel", 1, 0, O_KERNEL}, {"out", 1, 0, O_OUT}, {"time", 1, 0, O_TIME}, {"cases", 1, 0, O_CASES},
    {"jobs", 1, 0, O_JOBS}, {"seed", 1, 0, O_SEED}, {"resume", 0, 0, O_RESUME}, {"shard", 1, 0, O_SHARD},
    {"families", 1, 0, O_FAMILIES}, {"policy", 1, 0, O_POLICY}, {"precision", 1, 0, O_PRECISION},
    {"dtypes", 1, 0, O_DTYPES}, {"max-t", 1, 0, O_MAXT}, {"max-elems", 1, 0, O_MAXE}, {"no-strided", 0, 0, O_NOSTRIDED},
    {"no-nonfinite", 0, 0, O_NONONFINITE}, {"timeout", 1, 0, O_TIMEOUT}, {"no-minimize", 0, 0, O_NOMIN},
    {"minimize-time", 1, 0, O_MINTIME}, {"repeat-every", 1, 0, O_REPEAT}, {"corpus", 1, 0, O_CORPUS},
    {"quiet", 0, 0, O_QUIET}, {"live", 0, 0, O_LIVE}, {"no-live", 0, 0, O_NOLIVE}, {"list-families", 0, 0, O_LIST},
    {"empty-rows", 1, 0, O_EMPTY}, {"max-d", 1, 0, O_MAXD}, {"stop-on-fail", 0, 0, O_STOPFAIL}, {"log-cases", 0, 0, O_LOGCASES},
    {"generate", 1, 0, O_GENERATE}, {"index", 1, 0, O_INDEX},
    {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
  ac_campaign_opts o;
  ac_campaign_opts_init(&o);
  o.lim.max_t = 0;   /* auto: by the kernel's memory (host or device) */
  ac_err e;
  int c;
  optind = 1;
  opterr = 0;
  const char *empty = NULL, *generate = NULL;
  int64_t gen_index = 0;
  while ((c = getopt_long(argc, argv, ":ho:q", lo, NULL)) != -1) {
    int64_t v;
    switch (c) {
    case 'h':
    case O_HELP: usage(stdout); return AC_EXIT_OK;
    case O_LIST: list_families(); return AC_EXIT_OK;
    case O_KERNEL: o.kernel_spec = ac_kernel_spec_absolute(optarg, kspec_abs, sizeof kspec_abs); break;
    case 'o':
    case O_OUT: o.out_dir = optarg; break;
    case O_TIME:
      if (ac_parse_duration(optarg, &o.time_s) || o.time_s <= 0) return ac_cmd_usage_error("fuzz", "bad --time '%s' (use 30s, 20m, 8h)", optarg);
      break;
    case O_CASES:
      if (ac_parse_i64(optarg, &v) || v < 1) return ac_cmd_usage_error("fuzz", "bad --cases '%s'", optarg);
      o.max_cases = v;
      break;
    case O_JOBS:
      if (ac_parse_i64(optarg, &v) || v < 1 || v > 256) return ac_cmd_usage_error("fuzz", "bad --jobs '%s' (1..256)", optarg);
      o.jobs = (int)v;
      break;
    case O_SEED:
      if (ac_parse_u64(optarg, &o.seed)) return ac_cmd_usage_error("fuzz", "bad --seed '%s'", optarg);
      break;
    case O_RESUME: o.resume = 1; break;
    case O_SHARD: {
      int i, n;
      char extra;
      if (sscanf(optarg, "%d/%d%c", &i, &n, &extra) != 2 || n < 1 || i < 0 || i >= n)
        return ac_cmd_usage_error("fuzz", "bad --shard '%s' (I/N with 0 <= I < N)", optarg);
      o.shard_i = i;
      o.shard_n = n;
      break;
    }
    case O_FAMILIES: {
      int idx[64], n;
      if (ac_family_parse_list(optarg, idx, &n, 64, &e)) return ac_cmd_usage_error("fuzz", "%s", e.msg);
      snprintf(o.families, sizeof o.families, "%s", optarg);
      break;
    }
    case O_POLICY: {
      ac_policies tmp;
      ac_policies_init(&tmp);
      if (ac_policies_set(&tmp, optarg, &e)) return ac_cmd_usage_error("fuzz", "%s", e.msg);
      size_t l = strlen(o.policies);
      snprintf(o.policies + l, sizeof o.policies - l, "%s%s", l ? ";" : "", optarg);
      break;
    }
    case O_PRECISION:
      if (ac_precision_spec_check(optarg, &e)) return ac_cmd_usage_error("fuzz", "%s", e.msg);
      o.precision = optarg;
      break;
    case O_EMPTY: {
      ac_empty_conv ec;
      if (ac_empty_parse(optarg, &ec)) return ac_cmd_usage_error("fuzz", "bad --empty-rows '%s' (zero|nan|skip)", optarg);
      empty = optarg;
      break;
    }
    case O_DTYPES: {
      uint32_t m = 0;
      char badname[64];
      if (ac_dtype_parse_list(optarg, &m, badname, sizeof badname))
        return badname[0] ? ac_cmd_usage_error("fuzz", "unknown dtype '%s'", badname)
                          : ac_cmd_usage_error("fuzz", "empty --dtypes");
      o.lim.dtypes = m;
      o.dtypes_given = 1;
      break;
    }
    case O_MAXT:
      if (ac_parse_i64(optarg, &v) || v < 1) return ac_cmd_usage_error("fuzz", "bad --max-t '%s'", optarg);
      o.lim.max_t = v;
      break;
    case O_MAXE:
      if (ac_parse_i64(optarg, &v) || v < 16) return ac_cmd_usage_error("fuzz", "bad --max-elems '%s'", optarg);
      o.lim.max_elems = v;
      break;
    case O_MAXD:
      if (ac_parse_i64(optarg, &v) || v < 1) return ac_cmd_usage_error("fuzz", "bad --max-d '%s'", optarg);
      o.lim.max_d = v;
      break;
    case O_STOPFAIL: o.stop_on_fail = 1; break;
    case O_LOGCASES: o.log_cases = 1; break;
    case O_GENERATE:
      if (!ac_family_find(optarg)) return ac_cmd_usage_error("fuzz", "unknown family '%s' (see --list-families)", optarg);
      generate = optarg;
      break;
    case O_INDEX:
      if (ac_parse_i64(optarg, &gen_index) || gen_index < 0) return ac_cmd_usage_error("fuzz", "bad --index '%s'", optarg);
      break;
    case O_NOSTRIDED: o.lim.no_strided = 1; break;
    case O_NONONFINITE: o.lim.no_nonfinite = 1; break;
    case O_TIMEOUT:
      if (ac_parse_duration(optarg, &o.timeout_s) || o.timeout_s <= 0) return ac_cmd_usage_error("fuzz", "bad --timeout '%s'", optarg);
      break;
    case O_NOMIN: o.minimize = 0; break;
    case O_MINTIME:
      if (ac_parse_duration(optarg, &o.min_seconds) || o.min_seconds <= 0) return ac_cmd_usage_error("fuzz", "bad --minimize-time '%s'", optarg);
      break;
    case O_REPEAT:
      if (ac_parse_i64(optarg, &v) || v < 0) return ac_cmd_usage_error("fuzz", "bad --repeat-every '%s'", optarg);
      o.repeat_every = (int)v;
      break;
    case O_CORPUS: o.corpus_dir = optarg; break;
    case 'q':
    case O_QUIET: o.quiet = 1; break;
    case O_LIVE: o.live = 1; break;
    case O_NOLIVE: o.live = 0; break;
    default: return ac_cmd_getopt_error("fuzz", c, argv);
    }
  }
  if (optind < argc) return ac_cmd_usage_error("fuzz", "unexpected argument '%s'", argv[optind]);
  if (generate) {
    /* one case of a family, as a campaign with these limits would draw it */
    if (!o.out_dir) return ac_cmd_usage_error("fuzz", "--generate needs --out FILE.npz");
    ac_case gc;
    if (o.lim.max_t <= 0) o.lim.max_t = 16384;
    if (ac_generate(ac_family_find(generate), o.seed, gen_index, &o.lim, &gc, &e) || ac_case_write(&gc, o.out_dir, &e)) {
      ac_cmd_error("fuzz", "%s", e.msg);
      return AC_EXIT_USAGE;
    }
    char size[200];
    ac_case_size_str(&gc, size, sizeof size);
    printf("%s: family %s, seed %llu, index %lld: %s\n", o.out_dir, generate, (unsigned long long)o.seed,
           (long long)gen_index, size);
    ac_case_free(&gc);
    return AC_EXIT_OK;
  }
  if (!o.out_dir) return ac_cmd_usage_error("fuzz", "--out DIR is required");
  if (!o.kernel_spec && !o.resume) return ac_cmd_usage_error("fuzz", "--kernel K is required");
  if (!o.resume && o.time_s <= 0 && o.max_cases <= 0) return ac_cmd_usage_error("fuzz", "give --time D or --cases N");
  o.empty_rows = empty;
  return ac_campaign_run(&o);
}
