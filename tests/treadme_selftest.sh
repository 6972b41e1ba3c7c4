#!/bin/sh
# treadme_selftest.sh: tests/treadme.sh on made-up READMEs: it runs plain and ```sh blocks (not
# ```c), fails naming the README line of a command that cannot run as written (exit 2 of an unknown
# command, 127 of a missing program, exit 1 without "may exit 1"), SKIPs annotated blocks with
# their reasons and counts them, shows its rewrites, and refuses an unknown annotation.
set -u
src=$(cd "${srcdir:-.}" && pwd) || exit 99
top=$(cd "${abs_top_builddir:-.}" && pwd) || exit 99
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-treadme-self-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/examples" || exit 99
fail=0
expect() { # expect RC PATTERN...: run treadme.sh on $tmp/src/README.md
  want=$1
  shift
  out=$(TREADME_FILES=README.md srcdir="$tmp/src" abs_top_builddir="$top" sh "$src/tests/treadme.sh" 2>&1)
  rc=$?
  [ "$rc" -eq "$want" ] || { echo "FAIL: exit $rc, expected $want:"; echo "$out"; fail=1; return; }
  for p in "$@"; do
    echo "$out" | grep -q -- "$p" || { echo "FAIL: no '$p' in:"; echo "$out"; fail=1; return; }
  done
  echo "ok: exit $rc: $(echo "$out" | grep '^README doc test')"
}
cat > "$tmp/src/README.md" <<'MD'
# A README

    attncheck --version
    attncheck gen -o /tmp/x.npz --example tiny3 && attncheck info /tmp/x.npz

```c
int main(void) { return this_is_not_a_command; }
```

<!-- doctest: skip (needs a GPU) -->

    nvidia-smi --no-such-flag

<!-- doctest: needs no-such-program-here -->

    no-such-program-here --run

<!-- doctest: may exit 1 (a FAIL verdict) -->

    attncheck check --kernel mutant-no-rescale-sum example:andrea-120m --rows 0,1000

```sh
attncheck fuzz --kernel flash-f32 --time 8h --out camp --no-live --quiet
```
MD
expect 0 'ran   README.md:3 (2 lines' 'SKIP  README.md:12 (needs a GPU)' \
  'SKIP  README.md:16 (needs no-such-program-here, absent here)' 'ran   README.md:20 (1 lines' \
  'rewritten README.md:23: attncheck fuzz --kernel flash-f32 --cases 20 --out camp' \
  'README doc test: 3 blocks ran, 2 skipped, 0 failed; 1 lines rewritten'
cat >> "$tmp/src/README.md" <<'MD'

Commands that do not work as written: an unknown command,

    attncheck --version
    attncheck frobnicate --all

a program that does not exist,

    no-such-program-here

a FAIL verdict in a block that does not say it may exit 1.

    attncheck check --kernel mutant-no-rescale-sum example:andrea-120m --rows 0,1000
MD
expect 1 'FAIL  README.md:29 exited 2: attncheck frobnicate --all' 'FAIL  README.md:33 exited 127: no-such-program-here' \
  'FAIL  README.md:37 exited 1: attncheck check' 'README doc test: 3 blocks ran, 2 skipped, 3 failed'
printf '\n<!-- doctest: skipp (typo) -->\n\n    attncheck --version\n' >> "$tmp/src/README.md"
expect 1 "unknown doctest annotation 'skipp (typo)'"
exit $fail
