#!/bin/sh
# tquant_mutants.sh: the quantized-cache mutants (kernels/mutants/quant_mutants.c, docs/bugclasses.md
# §2.28) are listed with their reference kernel's class, and a short fuzz campaign on each (seed 1,
# 400 cases at most, --stop-on-fail) ends with a FAIL finding: a bound by cases, not by the clock, so
# that the verdict is the same on an idle and a saturated machine (at this commit the first FAIL comes
# at case 1 for most, within 40 cases for every one; the campaign stops there). tcmd_suite_mutants.sh requires suite ci to
# FAIL each of them too (but mutant-quant-qhead-scale, which needs per-head fp8 scales under GQA:
# no suite case has them); tquant_cli.sh requires the reference kernels to PASS the same suite.
set -u
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tqmut-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$bin" list --mutants > "$tmp/list" || { echo "list --mutants failed"; exit 99; }
for mc in nibble-swap:kv-f32 q4-no-offset:kv-f32 next-scale:kv-f32 no-v-scale:qkv-f32 no-q-descale:qkv-f32 \
          scale-twice:qkv-f32 fn-as-fnuz:qkv-f32 zero-sign:kv-f32 bf16-scale:kv-f32 nan-dropped:qkv-f32 \
          qhead-scale:qkv-f32 past-seqlen:qkv-f32; do
  m=mutant-quant-${mc%%:*}
  c=${mc#*:}
  grep -q "^  $m  *$c  *host " "$tmp/list" || { fail "$m not listed with class $c"; continue; }
  "$bin" fuzz --kernel "$m" --out "$tmp/$m" --cases 400 --stop-on-fail --no-minimize --seed 1 --no-live > "$tmp/$m.txt" 2>&1
  rc=$?
  if [ $rc -ne 1 ] || ! ls "$tmp/$m/findings" 2>/dev/null | grep -q "^${m}__FAIL__"; then
    fail "$m: no FAIL finding within 400 cases (exit $rc)"; tail -n 5 "$tmp/$m.txt"
  else
    echo "found: $m: $(ls "$tmp/$m/findings" | grep "__FAIL__" | head -n 1) ($(sed -n 's/^cases=//p' "$tmp/$m/stats") cases)"
  fi
done
[ "$(grep -c '^  mutant-quant-' "$tmp/list")" -eq 12 ] || fail "expected 12 mutant-quant-* mutants: $(grep '^  mutant-quant-' "$tmp/list" | awk '{print $1}' | tr '\n' ' ')"
exit $((fails > 0))
