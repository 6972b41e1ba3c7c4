#!/bin/sh
# tcli_usage.sh: usage errors and bad command-line input: exit 2 and exactly one line on stderr
# (pointing to --help), nothing on stdout, for every command; check --rows naming a row the
# case lacks, and gen --scale with a hex float binary64 cannot hold, are refused the same way.
set -u
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
test -x "$bin" || { echo "attncheck binary not found at $bin"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-usage-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
# refused NEEDLE ARGS...: exit 2, one line on stderr containing NEEDLE, empty stdout.
refused() {
  needle=$1
  shift
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: attncheck $*: exit $rc, expected 2"; fails=$((fails + 1))
  elif [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
    echo "FAIL: attncheck $*: stderr has $(wc -l <"$tmp/err") lines, expected 1:"; head -5 "$tmp/err"; fails=$((fails + 1))
  elif ! grep -qF -- "$needle" "$tmp/err"; then
    echo "FAIL: attncheck $*: stderr lacks '$needle': $(cat "$tmp/err")"; fails=$((fails + 1))
  elif [ -s "$tmp/out" ]; then
    echo "FAIL: attncheck $*: wrote to stdout:"; head -3 "$tmp/out"; fails=$((fails + 1))
  else
    echo "ok: attncheck $*: $(cat "$tmp/err")"
  fi
}

refused "attncheck --help"
refused "attncheck --help" frob
refused "attncheck --help" help frob
for c in gen info oracle explain list check suite compare fuzz replay merge; do
  refused "attncheck $c --help" "$c" --bogus
done
refused "attncheck gen --help" gen --dtype
refused "attncheck check --help" check --kernel
refused "attncheck oracle --help" oracle --rows
refused "attncheck check --help" check --kernel flash-f32 --policy FAIL=sometimes x.npz
refused "unknown precision class 'fp33'" check --kernel flash-f32 --precision fp33 x.npz

# getopt_long everywhere: -h is --help, a missing value and an unknown option are named, a value
# may follow as --opt=value (the shared judging options included).
for c in gen info oracle explain list check suite compare fuzz replay merge report; do
  "$bin" "$c" -h >"$tmp/out" 2>"$tmp/err" && grep -q "usage: attncheck $c" "$tmp/out" ||
    { echo "FAIL: attncheck $c -h does not print the usage"; fails=$((fails + 1)); }
done
refused "attncheck check: option '--kernel' needs a value (see 'attncheck check --help')" check --kernel
refused "attncheck suite: unknown option '--bogus' (see 'attncheck suite --help')" suite --kernel flash-f32 --bogus
refused "attncheck compare: unknown option '-x'" compare -x
refused "attncheck list: unexpected argument 'frob'" list frob
refused "bad --timeout 'soon'" check --kernel=flash-f32 --timeout=soon x.npz
refused "bad --timeout 'soon'" suite --kernel=flash-f32 --timeout=soon
refused "bad --kappa '-1'" compare --kappa=-1 x.npz
refused "--suite takes ci or full" suite --kernel=flash-f32 --suite=nightly

# gen --scale: a hex float is stored exactly or refused, never rounded.
refused "more significant bits than binary64 holds" gen --out "$tmp/s.npz" --t 2 --dk 2 --scale 0x1.00000000000008p+0
refused "underflows to 0" gen --out "$tmp/s.npz" --t 2 --dk 2 --scale 0x1p-1075
test -e "$tmp/s.npz" && { echo "FAIL: a refused gen wrote $tmp/s.npz"; fails=$((fails + 1)); }
"$bin" gen --out "$tmp/s.npz" --t 2 --dk 2 --scale -0x1.fffffffffffffp-1 >/dev/null 2>&1 ||
  { echo "FAIL: gen refused the exact scale -0x1.fffffffffffffp-1"; fails=$((fails + 1)); }

# check --rows: a selection the case cannot satisfy is bad input (2) before anything runs.
"$bin" gen --out "$tmp/tiny3.npz" --example tiny3 >/dev/null || exit 99
refused "$tmp/tiny3.npz: --rows: row 99999 out of range (the case has 3 rows)" \
  check --kernel flash-f32 --rows 99999 "$tmp/tiny3.npz"
refused "bad row list" check --kernel flash-f32 --rows 1,x "$tmp/tiny3.npz"
"$bin" check --kernel flash-f32 --rows 2 "$tmp/tiny3.npz" >"$tmp/out" 2>&1 ||
  { echo "FAIL: check --rows 2 on tiny3 did not pass:"; cat "$tmp/out"; fails=$((fails + 1)); }
"$bin" check "$tmp/tiny3.npz" --kernel=flash-f32 --rows=2 -v >"$tmp/out" 2>&1 ||
  { echo "FAIL: check CASE --kernel=K --rows=2 -v on tiny3 did not pass:"; cat "$tmp/out"; fails=$((fails + 1)); }
exit $((fails > 0))
