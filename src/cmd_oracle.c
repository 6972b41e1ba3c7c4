/* cmd_oracle.c: attncheck oracle (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_oracle(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("oracle", "not implemented yet");
  return AC_EXIT_USAGE;
}
