/* cmd_explain.c: attncheck explain (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_explain(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("explain", "not implemented yet");
  return AC_EXIT_USAGE;
}
