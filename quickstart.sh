#!/usr/bin/env bash
# quickstart.sh: install what is missing, build, and run the main job.
#   ./quickstart.sh          set up, build, run the demonstration on the built-in kernels
#   ./quickstart.sh check    set up, build, run make check
# Extra configure flags: ATTNCHECK_CONFIGURE_FLAGS="--with-cuda" ./quickstart.sh check
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
case "$mode" in run|check) ;; *) echo "usage: $0 [check]" >&2; exit 2 ;; esac

# Debian packages the build and the tests need (python3-*: the optional numpy tests and tests/python).
pkgs="build-essential autoconf automake libtool pkg-config libgmp-dev libmpfr-dev libopenblas-dev check libsubunit-dev libjson-c-dev libzip-dev zlib1g-dev nettle-dev python3-numpy python3-pytest python3-venv python3-wheel python3-setuptools"
missing=""
for p in $pkgs; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "quickstart: missing packages:$missing"
    echo "run: sudo apt-get update && sudo apt-get install -y$missing"
    exit 2
  fi
  echo "quickstart: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ ! -f Makefile.in ]; then
  autoreconf -fi
fi
builddir=${ATTNCHECK_BUILDDIR:-build}
mkdir -p "$builddir"
cd "$builddir"
flags=${ATTNCHECK_CONFIGURE_FLAGS:-}
if [ ! -f Makefile ] || [ "$(cat .quickstart-flags 2>/dev/null)" != "$flags" ]; then
  # shellcheck disable=SC2086
  ../configure $flags
  echo "$flags" > .quickstart-flags
fi
make -j"$jobs"

# The browser test (tests/treport_html.sh) needs chromium, which is not installed here: it is
# optional and large (about 290 MB installed with its libraries). CI installs it (.ci/run).
browser_note() {
  if ! command -v chromium > /dev/null 2>&1 && ! command -v chromium-browser > /dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo "
    echo "quickstart: tests/treport_html.sh SKIPs without chromium; to run it: ${sudo}apt-get install -y chromium"
  fi
}
if [ "$mode" = check ]; then
  browser_note
  if ! make -j"$jobs" check; then
    for f in $(find . -name '*.log' -path '*tests*' -newer Makefile); do
      if grep -qE '^(FAIL|ERROR)' "${f%.log}.trs" 2>/dev/null; then
        echo "=== $f"; tail -n 60 "$f"
      fi
    done
    browser_note
    exit 1
  fi
  browser_note
  exit 0
fi

exec ../scripts/demo
