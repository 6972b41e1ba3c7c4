/* cmd_merge.c: attncheck merge (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_merge(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("merge", "not implemented yet");
  return AC_EXIT_USAGE;
}
