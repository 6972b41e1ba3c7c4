/* cmd_check.c: attncheck check (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_check(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("check", "not implemented yet");
  return AC_EXIT_USAGE;
}
