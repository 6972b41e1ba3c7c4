#!/bin/sh
# tcli_hints.sh: the messages a newcomer meets first point at the fix. A command line given as a
# kernel without exec: names the prefix; unknown kernel names, options and commands get a "did you
# mean" (edit distance), nothing when no name is close; a duration without a unit is documented as
# seconds in every --help that takes one and a duration over a week is warned about; a kernel that
# leaves the LSE unwritten or NaN without declaring ATTNCHECK_CAP_NO_LSE is told about that cap.
set -u
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
lse_so=${abs_top_builddir:-.}/tests/.libs/tplugin_lse.so
[ -f "$lse_so" ] || { echo "test plugin not built: $lse_so"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-hints-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# says RC NEEDLE ARGS...: attncheck ARGS exits RC and its output (stdout and stderr) holds NEEDLE
says() {
  want=$1 needle=$2
  shift 2
  "$bin" "$@" > "$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$needle" "$tmp/out"; then
    bad "attncheck $*: exit $rc (expected $want), output lacks '$needle':"; head -5 "$tmp/out"
  else
    echo "ok: attncheck $*: $(grep -F -- "$needle" "$tmp/out" | head -1)"
  fi
}
# lacks NEEDLE ARGS...: the output of attncheck ARGS does not hold NEEDLE
lacks() {
  needle=$1
  shift
  "$bin" "$@" > "$tmp/out" 2>&1
  if grep -qF -- "$needle" "$tmp/out"; then bad "attncheck $*: '$needle' in: $(head -3 "$tmp/out")"; fi
}
"$bin" gen -o "$tmp/c.npz" --t 16 --dk 8 --heads 2 --mask causal --seed 3 > /dev/null || exit 99
printf '#!/bin/sh\nexit 0\n' > "$tmp/worker.sh" && chmod +x "$tmp/worker.sh"

# 1. a command line without exec: (with a space, with a '/', an existing executable script)
hint="a command needs the prefix exec:"
says 2 "$hint" check --kernel 'python3 sdpa.py {in} {out}' "$tmp/c.npz"
says 2 "no such plugin file; $hint" check --kernel "python3 $tmp/sdpa.py {in} {out}" "$tmp/c.npz"
says 2 "$hint" check --kernel "$tmp/worker.sh" "$tmp/c.npz"
says 2 "$hint" fuzz --kernel "sh $tmp/worker.sh" --cases 1 --out "$tmp/camp"
lacks "$hint" check --kernel "$tmp/missing.so" "$tmp/c.npz"
lacks "$hint" check --kernel flash-f33 "$tmp/c.npz"

# 2. did you mean: kernel names, long options, commands; nothing when no name is near
says 2 "did you mean 'flash-f32'?" check --kernel flash-f33 "$tmp/c.npz"
says 2 "did you mean 'flash-f32'?" check --kernel FLASH_F32 "$tmp/c.npz"
says 2 "did you mean 'mutant-no-rescale-sum'?" fuzz --kernel mutant-no-rescale --cases 1 --out "$tmp/camp"
says 2 "did you mean 'naive-f32'?" suite --kernel navie-f32 --suite ci
lacks "did you mean" check --kernel qqqqqq "$tmp/c.npz"
says 2 "unknown option '--kernal'; did you mean '--kernel'?" check --kernal flash-f32 "$tmp/c.npz"
says 2 "did you mean '--time'?" fuzz --kernel flash-f32 --tme 5 --out "$tmp/camp"
says 2 "did you mean '--dtype'?" gen -o "$tmp/x.npz" --dtpye=f16
says 2 "did you mean '--precision'?" list --precison
lacks "did you mean" check --zzzzzzzz flash-f32 "$tmp/c.npz"
says 2 "unknown command 'chek'; did you mean 'check'?" chek
lacks "did you mean" zzzzzzz

# 3. durations: every --help that takes one says what a bare number means; over a week warns
for c in $("$bin" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do
  "$bin" "$c" --help > "$tmp/help" 2>&1
  if grep -q -- '--time\b\|--timeout\|--minimize-time' "$tmp/help"; then
    grep -q 'a number without a unit is seconds' "$tmp/help" && echo "ok: $c --help documents seconds" ||
      bad "$c --help takes a duration but does not say that a number without a unit is seconds"
  fi
done
says 0 "warning: --time 1000000 is 11.6 days (a number without a unit is seconds" \
  fuzz --kernel flash-f32 --time 1000000 --cases 2 --out "$tmp/w1" --no-live --quiet
[ "$(grep -c warning "$tmp/out")" -eq 1 ] || bad "more than one warning line"
says 0 "warning: --timeout 700000" check --timeout 700000 --kernel flash-f32 "$tmp/c.npz"
lacks "warning" fuzz --kernel flash-f32 --time 7d --cases 2 --out "$tmp/w2" --no-live --quiet
lacks "warning" fuzz --kernel flash-f32 --time 8h --timeout 30 --cases 2 --out "$tmp/w3" --no-live --quiet

# 4. an LSE left unwritten or NaN by a kernel that does not declare ATTNCHECK_CAP_NO_LSE
says 1 "32 LSE values never written (none written: a kernel that computes no LSE declares ATTNCHECK_CAP_NO_LSE" \
  check --kernel "$lse_so:lse-unwritten" "$tmp/c.npz"
says 1 "32 LSE values outside their bound (every one NaN: a kernel that computes no LSE declares ATTNCHECK_CAP_NO_LSE" \
  check --kernel "$lse_so:lse-nan" "$tmp/c.npz"
says 0 "PASS  lse-nan" check --no-lse --kernel "$lse_so:lse-nan" "$tmp/c.npz"
# a kernel that writes some LSE values wrong gets no such hint
lacks "ATTNCHECK_CAP_NO_LSE" check --kernel test-unwritten "$tmp/c.npz"
lacks "ATTNCHECK_CAP_NO_LSE" check --kernel mutant-no-rescale-sum "$tmp/c.npz"

[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
exit 0
