#!/bin/sh
# tquant_cli.sh: quantized K and V from the outside (docs/quantized.md): gen --kv-format for every
# format (dense, varlen, paged), info describes them, one-line refusals (a head dim the block does
# not divide, a granularity the format does not take, a strided layout), the reference kernels PASS
# every format they declare and suite ci's quantized cases, kernels that declare none SKIP them with
# the reason, a kernel writing into its scales is GUARD, list names the formats, and a short
# campaign on a reference kernel draws and judges quantized cases with no finding of policy fail.
set -u
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tquant-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() {   # expect CODE WHAT -- COMMAND...
  code=$1; what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = "$code" ] || { fail "$what: exit $rc, expected $code ($*)"; sed 's/^/  | /' "$tmp/err" "$tmp/out" | head -5; }
}
one_line() { [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$1: not one line on stderr: $(cat "$tmp/err")"; }

kernel_of() {
  case $1 in
    q*|iq4_nl*) echo ggml-ref-f32 ;;
    e4m3*|e5m2*) echo fp8kv-ref-f32 ;;
    int*) echo intkv-ref-f32 ;;
    *) echo fp4kv-ref-f32 ;;
  esac
}
for f in q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl e4m3fn e4m3fn:head e4m3fnuz:token e5m2:channel int8 int8:channel int4 \
         int4:tensor nvfp4 mxfp4; do
  k=$(kernel_of "$f")
  expect 0 "gen $f" -- "$bin" gen -o "$tmp/c.npz" --tq 37 --tk 70 --dk 64 --dv 32 --heads 4 --kv-heads 2 \
    --mask causal-bottom-right --kv-format "$f" --seed 5
  grep -q "k: $f" "$tmp/out" || fail "gen $f does not name the format: $(cat "$tmp/out")"
  expect 0 "info $f" -- "$bin" info "$tmp/c.npz"
  grep -q "^  quant  *k ${f%%:*}" "$tmp/out" || fail "info $f: no quant line"
  grep -q "k_codes \[1,2,70,64\]" "$tmp/out" || fail "info $f: no k_codes row"
  expect 0 "check $k on $f" -- "$bin" check --kernel "$k" "$tmp/c.npz"
  grep -q "^PASS  $k" "$tmp/out" || fail "$k on $f: $(head -n 2 "$tmp/out")"
  expect 0 "check naive-f32 on $f" -- "$bin" check --kernel naive-f32 "$tmp/c.npz"
  grep -q "^SKIP .*declares no quantized format for k" "$tmp/out" || fail "naive-f32 on $f: $(head -n 1 "$tmp/out")"
done
# serving layouts
expect 0 "gen varlen q8_0" -- "$bin" gen -o "$tmp/v.npz" --seqlens-q 3,0,5 --seqlens-k 4,2,40 --dk 32 --heads 2 --kv-format q8_0
expect 0 "check varlen q8_0" -- "$bin" check --kernel ggml-ref-f32 "$tmp/v.npz"
grep -q '^PASS' "$tmp/out" || fail "varlen q8_0: $(head -n 1 "$tmp/out")"
expect 0 "gen paged e4m3fn:token" -- "$bin" gen -o "$tmp/p.npz" --cache-seqlens 300,17,0 --seqlens-q 1,2,1 --page-size 16 \
  --shuffle-pages --spare-pages 2 --dk 32 --kv-format e4m3fn:token
expect 0 "check paged" -- "$bin" check --kernel fp8kv-ref-f32 "$tmp/p.npz"
grep -q '^PASS' "$tmp/out" || fail "paged e4m3fn: $(head -n 1 "$tmp/out")"
expect 0 "info paged" -- "$bin" info "$tmp/p.npz"
grep -q 'k_scales \[1,1,' "$tmp/out" || fail "info paged: no per-token scales"
# refusals: one line, exit 2
expect 2 "dk not a multiple of the block" -- "$bin" gen -o "$tmp/x.npz" --dk 59 --kv-format q4_0
one_line "dk 59"
grep -q "dk 59 is not a multiple of q4_0's block of 32 (the format defines no padding)" "$tmp/err" || fail "dk 59: $(cat "$tmp/err")"
expect 2 "dv not a multiple of nvfp4's block" -- "$bin" gen -o "$tmp/x.npz" --dk 32 --dv 24 --v-format nvfp4
grep -q "dv 24 is not a multiple of nvfp4's block of 16" "$tmp/err" || fail "dv 24: $(cat "$tmp/err")"
expect 2 "granularity the format does not take" -- "$bin" gen -o "$tmp/x.npz" --kv-format q8_0:channel
one_line "q8_0:channel"
expect 2 "unknown format" -- "$bin" gen -o "$tmp/x.npz" --kv-format q3_k
expect 2 "strided layout" -- "$bin" gen -o "$tmp/x.npz" --dk 32 --kv-format q8_0 --layout padded
one_line "strided"
grep -q "a quantized tensor takes no strided layout" "$tmp/err" || fail "strided: $(cat "$tmp/err")"
expect 2 "descales" -- "$bin" gen -o "$tmp/x.npz" --dk 32 --kv-format int8 --descale normal
# a kernel that writes into its scales
expect 0 "gen q8_0 small" -- "$bin" gen -o "$tmp/s.npz" --t 8 --dk 32 --kv-format q8_0
expect 1 "scribble" -- "$bin" check --kernel test-quant-scribble "$tmp/s.npz"
grep -q "k_scales: kernel wrote into its input" "$tmp/out" || fail "scribble: $(cat "$tmp/out")"
# list names the formats
expect 0 "list" -- "$bin" list
grep -q "kv formats q8_0,q4_0,q4_1,q5_0,q5_1,iq4_nl; quantized cases only" "$tmp/out" || fail "list: no kv formats"
grep -q "q formats e4m3fn,e4m3fnuz,e5m2" "$tmp/out" || fail "list: no q formats"
# suite ci's quantized cases, and a short campaign
expect 0 "suite ci ggml-ref-f32" -- "$bin" suite --kernel ggml-ref-f32 --suite ci
grep -q "suite ci: ggml-ref-f32: [1-9][0-9]* pass, 0 warn, 0 fail" "$tmp/out" || fail "suite: $(tail -n 1 "$tmp/out")"
expect 0 "fuzz intkv-ref-f32" -- "$bin" fuzz --kernel intkv-ref-f32 --cases 60 --out "$tmp/camp" --quiet
grep -q '"kv_formats":52224' "$tmp/camp/campaign.json" || fail "campaign.json lacks kv_formats"
judged=$(sed -n 's/^judged=//p' "$tmp/camp/stats")
[ "${judged:-0}" -ge 20 ] || fail "campaign judged only ${judged:-0} cases"
[ "$(sed -n 's/^findings_fail=//p' "$tmp/camp/stats")" = 0 ] || fail "a correct kernel has findings of policy fail"
ls "$tmp/camp/corpus" | head -n 1 > /dev/null
[ "$fails" -eq 0 ] || exit 1
echo "PASS: quantized tensors from the command line"
