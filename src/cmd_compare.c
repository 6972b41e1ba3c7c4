/* cmd_compare.c: attncheck compare (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_compare(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("compare", "not implemented yet");
  return AC_EXIT_USAGE;
}
