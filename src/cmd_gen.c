/* cmd_gen.c: attncheck gen (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_gen(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("gen", "not implemented yet");
  return AC_EXIT_USAGE;
}
