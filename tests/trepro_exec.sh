#!/bin/sh
# trepro_exec.sh: reproducers of command kernels say what happened. A campaign records the program of
# an exec kernel's command as it resolved it (report.json kernel_spec_resolved: the absolute path of
# a program found on PATH), and repro.sh runs that program from a shell whose PATH lacks it; once the
# program is gone, repro.sh (and replay of a case file) prints "the kernel could not be started: ..."
# and exits 2, never "reproduced" nor "NOT reproduced". exec-persistent and one-shot exec alike. No
# Python needed.
set -u
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
[ -x "$bin" ] || { echo "attncheck binary not found at $bin"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-trepro-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
mkdir "$tmp/bin" || exit 99
# a persistent worker that crashes on every line it reads, and a one-shot command that crashes
printf '#!/bin/sh\nread a b\nkill -SEGV $$\n' > "$tmp/bin/crashworker"
printf '#!/bin/sh\nkill -SEGV $$\n' > "$tmp/bin/crashcmd"
chmod +x "$tmp/bin/crashworker" "$tmp/bin/crashcmd"

for k in "exec-persistent:crashworker" "exec:crashcmd {in} {out}"; do
  name=${k%%:*}
  PATH="$tmp/bin:$PATH" "$bin" fuzz --kernel "$k" --cases 1 --families normal --out "$tmp/$name" --no-minimize \
    --no-live > "$tmp/$name.txt" 2>&1
  rc=$?
  d=$(ls -d "$tmp/$name"/findings/*__CRASH__* 2> /dev/null | head -n 1)
  [ $rc -eq 1 ] && [ -n "$d" ] || { cat "$tmp/$name.txt"; fail "$k: no CRASH finding (exit $rc)"; continue; }
  grep -q "\"kernel_spec_resolved\": *\"$name:$(echo "$tmp" | sed 's|/|\\\\/|g')\\\\/bin\\\\/crash" "$d/report.json" ||
    { grep kernel_spec "$d/report.json"; fail "$k: report.json lacks the resolved program"; }
  # from a shell whose PATH does not have the program: it runs the recorded one
  (cd / && "$d/repro.sh") > "$tmp/r1.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] && grep -q 'CRASH reproduced' "$tmp/r1.txt" || { cat "$tmp/r1.txt"; fail "$k: repro.sh: exit $rc"; }
  # the program gone: it could not be started, which is neither reproduced nor not
  mv "$tmp/bin/crashworker" "$tmp/bin/crashworker.gone" 2> /dev/null
  mv "$tmp/bin/crashcmd" "$tmp/bin/crashcmd.gone" 2> /dev/null
  "$d/repro.sh" > "$tmp/r2.txt" 2>&1
  rc=$?
  [ $rc -eq 2 ] && grep -q '^attncheck replay: the kernel could not be started: .*status 127' "$tmp/r2.txt" &&
    ! grep -q 'reproduced' "$tmp/r2.txt" || { cat "$tmp/r2.txt"; fail "$k: repro.sh without its program: exit $rc"; }
  "$bin" replay "$d/case.npz" --kernel "$(echo "$k" | sed "s|:crash|:$tmp/bin/crash|")" > "$tmp/r3.txt" 2>&1
  rc=$?
  [ $rc -eq 2 ] && grep -q 'the kernel could not be started' "$tmp/r3.txt" || { cat "$tmp/r3.txt"; fail "$k: replay CASE: exit $rc"; }
  mv "$tmp/bin/crashworker.gone" "$tmp/bin/crashworker" 2> /dev/null
  mv "$tmp/bin/crashcmd.gone" "$tmp/bin/crashcmd" 2> /dev/null
  echo "ok: $k: repro.sh runs the program the campaign ran; without it, 'the kernel could not be started'"
done
exit $((fails > 0))
