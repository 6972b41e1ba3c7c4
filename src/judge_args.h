/* judge_args.h: the options check, suite, compare (and replay) share. */
#ifndef AC_JUDGE_ARGS_H
#define AC_JUDGE_ARGS_H
#include <stdio.h>
#include "judge.h"

typedef struct {
  ac_judge_opts j;
  ac_policies pol;
  int budget_given, fixed_given;
  char repro_opts[256];     /* options to repeat in a reproducer command (e.g. " --precision fp32") */
} ac_judge_args;

void ac_judge_args_init(ac_judge_args *a);
/* Tries argv[*i] (and its value) as a shared option. 1 consumed (*i advanced past it), 0 not
 * a shared option, -1 bad value (message printed, *rc = 2). */
int ac_judge_args_parse(ac_judge_args *a, const char *cmd, int argc, char **argv, int *i, int *rc);
/* After parsing: --atol/--rtol without --budget select the fixed budget. */
int ac_judge_args_finish(ac_judge_args *a, const char *cmd);
void ac_judge_args_help(FILE *f);
/* Value of option name at argv[*i] ("--name V" or "--name=V"); NULL if argv[*i] is not it.
 * *missing set when the value is absent. */
const char *ac_opt_value(const char *name, int argc, char **argv, int *i, int *missing);

#endif
