#!/bin/sh
# texplain_variants_cli.sh: `attncheck explain` on a case with attention variants prints the
# stages per key (capped, +ALiBi, +bias, visibility), the sink among the weights and the
# output, not the plain prefix of visible keys; `attncheck gen` refuses fp64 descales with
# one line and exit 2.
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-texplainv-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$bin" gen --out "$tmp/v.npz" --dtype f16 --mask causal --t 24 --dk 8 --heads 2 --window 4,0 --softcap 10 \
  --alibi 1 --bias normal --sinks dominant --seed 3 >/dev/null || exit 99
"$bin" explain "$tmp/v.npz" --row 10 --head 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || fail "explain exit $rc: $(cat "$tmp/err")"
for want in "variants: window,softcap,alibi,bias,sinks" "capped" "+alibi" "+bias" "no (window)" "no (mask)" \
  "5 of 24 keys visible, and the sink" "sink " "(the sink included)" "LSE = m + ln L"; do
  grep -qF -- "$want" "$tmp/out" || fail "explain output lacks '$want'"
done

"$bin" gen --out "$tmp/d.npz" --dtype f64 --t 8 --dk 4 --descale normal >"$tmp/o.out" 2>"$tmp/o.err"
rc=$?
[ "$rc" = 2 ] || fail "gen of fp64 descales: exit $rc, expected 2"
[ "$(wc -l <"$tmp/o.err")" = 1 ] && grep -q "fp64 tensors take no descales" "$tmp/o.err" || fail "refusal: $(cat "$tmp/o.err")"
[ "$fails" = 0 ] && echo "ok" || exit 1
