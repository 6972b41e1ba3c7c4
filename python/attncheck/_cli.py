"""The console command `attncheck` of the package: runs the attncheck program built with the
library (attncheck/_lib/attncheck), so that the reproducers a failed assertion prints
(`attncheck check FILE`) and every command of the README work after `pip install .`.
$ATTNCHECK_BIN names another program instead."""
import os
import sys


def command_path():
    """The attncheck program this package runs."""
    return os.environ.get("ATTNCHECK_BIN") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib",
                                                           "attncheck")


def main():
    exe = command_path()
    if not os.access(exe, os.X_OK):
        sys.stderr.write("attncheck: %s is not an executable program (reinstall the package: pip install .)\n" % exe)
        return 2
    os.execv(exe, [exe] + sys.argv[1:])
