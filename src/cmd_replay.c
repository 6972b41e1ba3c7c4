/* cmd_replay.c: attncheck replay (not yet written). */
#include "commands.h"
#include "util.h"

int ac_cmd_replay(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ac_cmd_error("replay", "not implemented yet");
  return AC_EXIT_USAGE;
}
