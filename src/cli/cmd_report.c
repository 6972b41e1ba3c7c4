/* cmd_report.c: attncheck report DIR [-o FILE]: (re)builds the HTML report of a campaign
 * directory or of a merged set of shards. */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "fuzz.h"
#include "util.h"

static void usage(FILE *f)
{
  fprintf(f, "usage: attncheck report DIR [-o FILE]\n\n"
             "Writes the HTML report of campaign directory DIR (a campaign of attncheck fuzz, or the\n"
             "output of attncheck merge) to DIR/report.html, or to FILE: inline SVG plots of err/E and\n"
             "err/W per family, the search's progress, findings over time, the share of cases per family,\n"
             "and every finding with its worst row and its repro command. One self-contained file (no\n"
             "JavaScript, nothing fetched). fuzz and merge write it themselves; campaigns run with\n"
             "--log-cases give the plots every case, others their findings.\n"
             "exit: 0 written, 2 DIR is not a campaign directory or FILE cannot be written, 3 internal error.\n");
}

int ac_cmd_report(int argc, char **argv)
{
  enum { O_HELP = 256 };
  static const struct option lo[] = {{"help", 0, 0, O_HELP}, {"output", 1, 0, 'o'}, {0, 0, 0, 0}};
  const char *out = NULL;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = ac_cmd_getopt_long(argc, argv, ":ho:", lo)) != -1) {
    switch (c) {
    case 'h':
    case O_HELP: usage(stdout); return AC_EXIT_OK;
    case 'o': out = optarg; break;
    default: return ac_cmd_getopt_error("report", c, argv);
    }
  }
  if (optind != argc - 1) return ac_cmd_usage_error("report", "give exactly one campaign directory");
  const char *dir = argv[optind];
  ac_err e;
  if (ac_report_html_to(dir, out, &e)) {
    ac_cmd_error("report", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  char def[4200];
  snprintf(def, sizeof def, "%s/report.html", dir);
  printf("wrote %s\n", out ? out : def);
  return AC_EXIT_OK;
}
