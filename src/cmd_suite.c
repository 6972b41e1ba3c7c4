/* cmd_suite.c: attncheck suite (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_suite(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("suite", "not implemented yet");
  return AC_EXIT_USAGE;
}
