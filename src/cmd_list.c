/* cmd_list.c: attncheck list (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_list(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("list", "not implemented yet");
  return AC_EXIT_USAGE;
}
