/* cmd_replay.c: attncheck replay: reproduce a finding (DIR/findings/<sig>) or judge one case
 * file on a kernel. */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "commands.h"
#include "fuzz.h"
#include "oracle.h"
#include "util.h"

static void usage(FILE *f)
{
  fprintf(f, "usage: attncheck replay DIR/findings/SIGNATURE [--kernel K | --trust-recorded-kernel] [--precision NAME]\n"
             "                [--policy KIND=P]... [--timeout S] [--empty-rows C]\n"
             "       attncheck replay CASE.npz --kernel K [--precision NAME] [--policy KIND=P]... [--timeout S]\n"
             "                [--alibi-lse C] [--empty-rows C]\n\n"
             "Runs the kernel on the finding's minimized case and on its original case (or on CASE.npz)\n"
             "and prints the verdicts, the worst element and the budget. --kernel gives the kernel (to\n"
             "check a fix); without it the kernel recorded in the finding runs if it is a built-in one.\n"
             "A findings directory is data: a recorded exec: command runs only with\n"
             "--trust-recorded-kernel, and a recorded plugin is loaded only when given again as --kernel.\n"
             "--timeout S: the kernel time limit (default 60s; 30s, 5m; a number without a unit is seconds).\n"
             "--precision, --policy, --timeout and --empty-rows C (zero|nan|skip|mean-v) override what\n"
             "the finding's campaign recorded, and like the campaign's own options what the kernel declares.\n"
             "--no-cache: neither read nor write the oracle cache ($ATTNCHECK_CACHE; layout cases use it).\n"
             "exit: 1 when a verdict with policy fail occurs, 2 bad usage or input or a kernel that could not be\n"
             "started (one line: the kernel could not be started: ...), 3 internal error, else 0.\n");
}

int ac_cmd_replay(int argc, char **argv)
{
  enum { O_KERNEL = 256, O_PREC, O_POLICY, O_TIMEOUT, O_EMPTY, O_TRUST, O_HELP, O_ALIBI, O_NOCACHE };
  static const struct option lo[] = {{"kernel", 1, 0, O_KERNEL}, {"precision", 1, 0, O_PREC}, {"policy", 1, 0, O_POLICY},
                                     {"timeout", 1, 0, O_TIMEOUT}, {"empty-rows", 1, 0, O_EMPTY}, {"help", 0, 0, O_HELP},
                                     {"alibi-lse", 1, 0, O_ALIBI},
                                     {"trust-recorded-kernel", 0, 0, O_TRUST}, {"no-cache", 0, 0, O_NOCACHE},
                                     {0, 0, 0, 0}};
  const char *kernel = NULL, *prec = NULL;
  ac_policies pol;
  ac_policies_init(&pol);
  ac_empty_conv empty = AC_EMPTY_ZERO;
  const char *empty_given = NULL;
  char pols[1024] = "";   /* the --policy options as given, for a finding (after its campaign's) */
  double timeout = 0;
  ac_err e;
  int c, trust = 0, alibi = AC_ALIBI_LSE_DECLARED;
  optind = 1;
  opterr = 0;
  while ((c = ac_cmd_getopt_long(argc, argv, ":h", lo)) != -1) {
    switch (c) {
    case 'h':
    case O_HELP: usage(stdout); return AC_EXIT_OK;
    case O_KERNEL: kernel = optarg; break;
    case O_TRUST: trust = 1; break;
    case O_NOCACHE: ac_oracle_cache_disable(); break;
    case O_PREC:
      if (ac_precision_spec_check(optarg, &e)) return ac_cmd_usage_error("replay", "%s", e.msg);
      if (prec) return ac_cmd_usage_error("replay", "--precision given twice (replay judges under one class)");
      prec = optarg;
      break;
    case O_POLICY:
      if (ac_policies_set(&pol, optarg, &e)) return ac_cmd_usage_error("replay", "%s", e.msg);
      if (strlen(pols) + strlen(optarg) + 2 > sizeof pols)
        return ac_cmd_usage_error("replay", "too many --policy options");
      snprintf(pols + strlen(pols), sizeof pols - strlen(pols), "%s%s", pols[0] ? ";" : "", optarg);
      break;
    case O_TIMEOUT:
      if (ac_parse_duration_arg("replay", "--timeout", optarg, &timeout))
        return ac_cmd_usage_error("replay", "bad --timeout '%s'", optarg);
      break;
    case O_EMPTY:
      if (ac_empty_parse(optarg, &empty)) return ac_cmd_usage_error("replay", "bad --empty-rows '%s'", optarg);
      empty_given = optarg;
      break;
    case O_ALIBI:
      if (ac_alibi_lse_parse(optarg, &alibi)) return ac_cmd_usage_error("replay", "bad --alibi-lse '%s': expected abi or fa2", optarg);
      break;
    default: return ac_cmd_getopt_error("replay", c, argv);
    }
  }
  if (optind != argc - 1) return ac_cmd_usage_error("replay", "give one finding directory or one case file");
  const char *target = argv[optind];
  struct stat st;
  if (stat(target, &st) != 0) {
    ac_cmd_error("replay", "%s: no such file or directory", target);
    return AC_EXIT_USAGE;
  }
  if (S_ISDIR(st.st_mode)) {
    if (alibi != AC_ALIBI_LSE_DECLARED)
      return ac_cmd_usage_error("replay", "--alibi-lse is for a case file: a finding replays with its campaign's");
    uint32_t kinds = 0;
    ac_replay_opts ro = {kernel, trust, prec, empty_given, pols[0] ? pols : NULL, timeout};
    int rc = ac_replay_finding(target, &ro, stdout, &kinds, &e);
    if (rc < 0) {
      ac_cmd_error("replay", "%s", e.msg);
      return AC_EXIT_USAGE;
    }
    if (rc == 1) return AC_EXIT_FAIL;
    return (kinds & (1u << AC_V_ERROR)) ? AC_EXIT_INTERNAL : AC_EXIT_OK;
  }
  if (!kernel) return ac_cmd_usage_error("replay", "a case file needs --kernel K");
  ac_case cs;
  if (ac_case_read(&cs, target, &e)) {
    ac_cmd_error("replay", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  ac_kernel **list = NULL;
  int nk = 0;
  if (ac_kernel_resolve(kernel, &list, &nk, &e)) {
    ac_case_free(&cs);
    ac_cmd_error("replay", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  ac_exit ex = {0, 0};
  for (int i = 0; i < nk; i++) {
    ac_eval_ctx x;
    ac_eval_ctx_init(&x, list[i], kernel);
    x.precision = prec;
    x.pol = pol;
    x.cmp.empty = empty;
    x.cmp.empty_set = empty_given != NULL;   /* over the kernel's declaration, as everywhere */
    if (timeout > 0) x.run.timeout_s = timeout;
    x.run.alibi_lse = alibi;
    ac_eval ev;
    if (ac_eval_case(&x, &cs, 0, &ev, &e) && !ev.kinds) ex.any_error = 1;
    if (ev.not_started[0]) {   /* nothing could run */
      ac_cmd_error("replay", "%s", ev.not_started);
      ac_kernel_list_free(list, nk);
      ac_case_free(&cs);
      return AC_EXIT_USAGE;
    }
    char label[600];
    snprintf(label, sizeof label, "%s %s", list[i]->name, target);
    ac_eval_print(stdout, label, &cs, &ev);
    ac_exit_add(&ex, &pol, ev.kinds);
  }
  ac_kernel_list_free(list, nk);
  ac_case_free(&cs);
  return ac_exit_code(&ex);
}
