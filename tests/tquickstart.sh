#!/bin/sh
# tquickstart.sh: ./quickstart.sh check on a machine without chromium says, in one line, how to
# enable the browser test it will SKIP (tests/treport_html.sh); with chromium it says nothing of
# it. quickstart.sh runs on a copy of itself beside a configured-looking tree, with a PATH of the
# few programs it calls, make and dpkg-query being stubs (nothing is built or installed).
set -u
src=$(cd "${srcdir:-.}" && pwd) || exit 99
command -v bash > /dev/null 2>&1 || { echo "SKIP: no bash"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tquickstart-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tree/build" "$tmp/bin" || exit 99
cp "$src/quickstart.sh" "$tmp/tree/" || exit 99
: > "$tmp/tree/configure.ac"
sleep 1
printf '#!/bin/sh\n' > "$tmp/tree/configure" && chmod +x "$tmp/tree/configure"
: > "$tmp/tree/Makefile.in"
: > "$tmp/tree/build/Makefile"
echo "" > "$tmp/tree/build/.quickstart-flags"
for p in env bash dirname grep id nproc mkdir cat find tail; do
  w=$(command -v "$p") || { echo "SKIP: no $p"; exit 77; }
  ln -s "$w" "$tmp/bin/$p"
done
printf '#!/bin/sh\necho "install ok installed"\n' > "$tmp/bin/dpkg-query"
printf '#!/bin/sh\necho "make $*" >> "%s/make.log"\n' "$tmp" > "$tmp/bin/make"
chmod +x "$tmp/bin/dpkg-query" "$tmp/bin/make"
line="tests/treport_html.sh SKIPs without chromium; to run it: "
out=$(PATH="$tmp/bin" "$tmp/bin/bash" "$tmp/tree/quickstart.sh" check 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "$out"; echo "FAIL: quickstart.sh check exits $rc with stub make"; exit 1; }
grep -q ' check$' "$tmp/make.log" || { echo "FAIL: quickstart.sh check did not run make check"; exit 1; }
echo "$out" | grep -q "^quickstart: ${line}\(sudo \)\?apt-get install -y chromium$" ||
  { echo "$out"; echo "FAIL: no line enabling the browser test"; exit 1; }
echo "ok: $(echo "$out" | grep -m1 chromium)"
printf '#!/bin/sh\nexit 0\n' > "$tmp/bin/chromium" && chmod +x "$tmp/bin/chromium"
out=$(PATH="$tmp/bin" "$tmp/bin/bash" "$tmp/tree/quickstart.sh" check 2>&1)
if echo "$out" | grep -q chromium; then echo "$out"; echo "FAIL: a chromium note although chromium is there"; exit 1; fi
echo "ok: nothing said with chromium on PATH"
exit 0
