#!/bin/sh
# tcmd_alibi_lse.sh: the LSE convention under ALiBi with a causal mask (docs/variants.md "ALiBi and
# the LSE"). FlashAttention-2 adds +m j where the ABI subtracts m |i + tk - tq - j|: the same o, an LSE
# larger by m (i + tk - tq). test-alibi-fa2 (that convention, declared by ATTNCHECK_CAP_ALIBI_LSE_FA2)
# PASSes forward and backward; the same kernel undeclared FAILs its LSE (and its backward, handed the
# ABI's LSE) unless --alibi-lse fa2 says it; a kernel of the ABI's convention declaring FlashAttention-2's
# FAILs, and flash-f32 FAILs under --alibi-lse fa2; without a causal mask nothing changes; an exec worker
# declares it with "alibi_lse": "fa2" (a bad value is ERROR), a C plugin with the caps bit; `list` shows the declaration; --alibi-lse
# takes abi or fa2 only.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-alibi-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
# expect EXIT STATUS PATTERN -- command...: the exit code, the first verdict line's status and a pattern in the output
expect() {
  want_rc=$1; want_st=$2; pat=$3; shift 4
  "$@" > "$tmp/o.txt" 2>&1
  rc=$?
  line=$(grep -E '^(PASS|WARN|FAIL|SKIP|ERROR) ' "$tmp/o.txt" | head -n 1)
  if [ $rc -eq "$want_rc" ] && echo "$line" | grep -q "^$want_st " && grep -q -- "$pat" "$tmp/o.txt"; then
    echo "ok: $(echo "$line" | cut -c1-150)"
  else
    echo "WRONG: exit $rc (want $want_rc, $want_st, /$pat/): $*"; cat "$tmp/o.txt"; bad=1
  fi
}
"$bin" gen -o "$tmp/a.npz" --t 40 --tk 48 --dk 8 --heads 4 --mask causal-bottom-right --alibi 4 --sinks normal --grad normal \
  --seed 1 >/dev/null || exit 99
"$bin" gen -o "$tmp/tl.npz" --tq 12 --tk 20 --dk 8 --heads 2 --mask causal --alibi 2 --seed 2 >/dev/null || exit 99
"$bin" gen -o "$tmp/n.npz" --t 16 --dk 8 --heads 2 --mask none --alibi 4 --seed 3 >/dev/null || exit 99
for c in a tl; do
  expect 0 PASS 'alibi-lse=fa2' -- "$bin" check --kernel test-alibi-fa2 "$tmp/$c.npz"
  expect 1 FAIL 'LSE values outside their bound' -- "$bin" check --kernel test-alibi-fa2-undeclared "$tmp/$c.npz"
  expect 0 PASS 'alibi-lse=fa2' -- "$bin" check --kernel test-alibi-fa2-undeclared --alibi-lse fa2 "$tmp/$c.npz"
  expect 1 FAIL 'LSE values outside their bound' -- "$bin" check --kernel test-alibi-abi-as-fa2 "$tmp/$c.npz"
  expect 0 PASS 'budget=class:fp32,kappa=1.5$' -- "$bin" check --kernel test-alibi-abi-as-fa2 --alibi-lse abi "$tmp/$c.npz"
  expect 0 PASS '' -- "$bin" check --kernel flash-f32 "$tmp/$c.npz"
  expect 1 FAIL 'LSE values outside their bound' -- "$bin" check --kernel flash-f32 --alibi-lse fa2 "$tmp/$c.npz"
done
# no causal mask: FlashAttention-2's ALiBi is the ABI's, both declarations pass
for k in test-alibi-fa2 test-alibi-fa2-undeclared test-alibi-abi-as-fa2; do
  expect 0 PASS '' -- "$bin" check --kernel $k "$tmp/n.npz"
done
# the backward gets the LSE of the kernel's convention
expect 0 PASS ' dsink err/W=' -- "$bin" check --grad --kernel test-alibi-fa2 "$tmp/a.npz"
expect 1 FAIL '' -- "$bin" check --grad --kernel test-alibi-fa2-undeclared "$tmp/a.npz"
expect 0 PASS '' -- "$bin" check --grad --kernel test-alibi-fa2-undeclared --alibi-lse fa2 "$tmp/a.npz"
expect 1 FAIL '' -- "$bin" check --grad --kernel test-alibi-abi-as-fa2 "$tmp/a.npz"
# a C plugin declares it with the caps bit
so=$top/tests/.libs/tplugin_alibi.so
[ -f "$so" ] || { echo "no $so"; exit 99; }
"$bin" gen -o "$tmp/br.npz" --tq 24 --tk 40 --dk 8 --heads 2 --kv-heads 1 --mask causal-bottom-right --alibi 4 --seed 5 \
  >/dev/null || exit 99
expect 0 PASS 'alibi-lse=fa2' -- "$bin" check --kernel "$so:alibi-fa2" "$tmp/br.npz" "$tmp/tl.npz"
grep -q '^PASS  alibi-fa2 .*tl.npz' "$tmp/o.txt" || { echo "WRONG: the plugin on tl.npz"; bad=1; }
expect 1 FAIL 'LSE values outside their bound' -- "$bin" check --kernel "$so:alibi-abi" "$tmp/br.npz"
# an exec worker declares it in its handshake ("alibi_lse"), computing with test-alibi-fa2
ek=$top/tests/tharness_execkernel
[ -x "$ek" ] || { echo "no $ek"; exit 99; }
mkworker() {
  cat > "$tmp/$1.sh" <<EOF
#!/bin/sh
while read a b; do
  if [ "\$a" = hello ]; then echo 'attncheck-worker 1 {"name":"$1","dtypes":["f32"],"features":["gqa","tq-ne-tk","alibi","sinks"]$2}'; continue; fi
  if "$ek" fa2 "\$a" "\$b" 2>/dev/null; then echo ok; else echo "error the test worker failed"; fi
done
EOF
  chmod +x "$tmp/$1.sh"
}
mkworker wfa2 ',"alibi_lse":"fa2"'
mkworker wundecl ''
mkworker wbad ',"alibi_lse":"flash2"'
expect 0 PASS 'alibi-lse=fa2' -- "$bin" check --kernel "exec-persistent:$tmp/wfa2.sh" "$tmp/a.npz"
expect 1 FAIL 'LSE values outside their bound' -- "$bin" check --kernel "exec-persistent:$tmp/wundecl.sh" "$tmp/a.npz"
"$bin" gen -o "$tmp/p.npz" --t 8 --dk 8 --seed 4 >/dev/null || exit 99   # a bad declaration: every case ERROR
expect 3 ERROR "'alibi_lse' must be" -- "$bin" check --kernel "exec-persistent:$tmp/wbad.sh" "$tmp/p.npz"
"$bin" list --tests > "$tmp/l.txt" 2>&1
grep -A1 '^  test-alibi-fa2 ' "$tmp/l.txt" | grep -q '; alibi-lse fa2' || { echo "WRONG: list"; cat "$tmp/l.txt"; bad=1; }
grep -A1 '^  test-alibi-fa2-undeclared ' "$tmp/l.txt" | grep -q 'alibi-lse' && { echo "WRONG: list shows an undeclared convention"; bad=1; }
"$bin" check --kernel flash-f32 --alibi-lse fa3 "$tmp/n.npz" > "$tmp/o.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "bad --alibi-lse 'fa3': expected abi or fa2" "$tmp/o.txt" || { echo "WRONG: --alibi-lse fa3 (exit $rc)"; cat "$tmp/o.txt"; bad=1; }
exit $bad
