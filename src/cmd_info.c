/* cmd_info.c: attncheck info (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_info(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("info", "not implemented yet");
  return AC_EXIT_USAGE;
}
