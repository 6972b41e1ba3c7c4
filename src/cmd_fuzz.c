/* cmd_fuzz.c: attncheck fuzz (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_fuzz(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("fuzz", "not implemented yet");
  return AC_EXIT_USAGE;
}
