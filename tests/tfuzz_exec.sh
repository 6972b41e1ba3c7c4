#!/bin/sh
# tfuzz_exec.sh: kernels in any language: python/attncheck/worker/numpy_sdpa.py as 'exec:' (one process
# per case) and as 'exec-persistent:' (one worker, line protocol) passes short campaigns with no
# FAIL; a worker that dies is a CRASH finding and is restarted; one that hangs is a TIMEOUT.
# Skipped (77) without python3 with numpy.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=${srcdir:-.}
py=${PYTHON_NUMPY:-none}
seed=${ATTNCHECK_TEST_SEED:-20261129}
if [ "$py" = none ] || [ -z "$py" ]; then echo "SKIP: no python3 with numpy"; exit 77; fi
tmp=$(mktemp -d /tmp/attncheck-texec-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
ex=$src/python/attncheck/worker/numpy_sdpa.py
[ -f "$ex" ] || exit 99
fams=normal,small_int,large_mag,late_max,masked_rows,tq_ne_tk,gqa,head_dim,ties,v_cancel

"$bin" fuzz --kernel "exec:$py $ex {in} {out}" --cases 8 --seed "$seed" --out "$tmp/oneshot" --families "$fams" \
  --dtypes f32,f16,bf16 --max-t 256 --no-minimize --no-live > "$tmp/1.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/1.txt"; fail "exec: sdpa_numpy.py exit $rc"; }
grep -q '^cases=8$' "$tmp/oneshot/stats" || fail "exec: not 8 cases"

"$bin" fuzz --kernel "exec-persistent:$py $ex --serve" --cases 40 --seed "$seed" --out "$tmp/persist" --families "$fams" \
  --dtypes f32,f16,bf16,f64 --max-t 256 --no-live > "$tmp/2.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/2.txt"; fail "exec-persistent: sdpa_numpy.py exit $rc"; }
grep -q '^skipped=0$' "$tmp/persist/stats" || fail "exec-persistent: skipped cases"
echo "ok: sdpa_numpy.py one-shot (8 cases) and persistent ($(sed -n 's/^cases_per_s=//p' "$tmp/persist/stats") cases/s)"

# a worker that dies on its third request: CRASH, restarted, the campaign goes on
cat > "$tmp/dying.sh" <<SHEOF
#!/bin/sh
n=0
while read in out; do
  n=\$((n + 1))
  if [ \$n -eq 3 ]; then kill -SEGV \$\$; fi
  $py $ex "\$in" "\$out" && echo ok || echo "error failed"
done
SHEOF
chmod +x "$tmp/dying.sh"
"$bin" fuzz --kernel "exec-persistent:$tmp/dying.sh" --cases 6 --seed "$seed" --out "$tmp/dying" --families normal \
  --no-minimize --no-live > "$tmp/3.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/3.txt"; fail "dying worker: exit $rc, expected 1"; }
ls "$tmp/dying/findings" | grep -q '__CRASH__' || fail "dying worker: no CRASH finding"
grep -q '^cases=6$' "$tmp/dying/stats" || fail "dying worker: the campaign did not go on"

# a worker that never answers: TIMEOUT
"$bin" fuzz --kernel "exec-persistent:sleep 100" --cases 1 --timeout 1 --seed "$seed" --out "$tmp/hang" --families normal \
  --no-minimize --no-live > "$tmp/4.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/4.txt"; fail "hanging worker: exit $rc, expected 1"; }
ls "$tmp/hang/findings" | grep -q '__TIMEOUT__' || fail "hanging worker: no TIMEOUT finding"
exit 0
