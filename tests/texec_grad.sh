#!/bin/sh
# texec_grad.sh: the backward of exec-persistent workers (README "Without C", "backward": true).
# Guards as for the forward: a worker that hangs is a TIMEOUT, one that exits a CRASH, "error
# unsupported: ..." a SKIP, other "error ..." answers and outputs without dq / of another dtype or
# shape or with misnamed members a KERNEL-ERROR (FAIL, exit 1), each with one line; a worker that
# declares no backward is SKIP (exit 0) and gets no suite grad case, a variant outside its
# "backward" list too; a bad "backward" value makes the declaration unusable. With python3 and numpy: sdpa_numpy.py's backward passes check --grad
# and the suite's grad cases, a dK without the scale fails them, and a fuzz campaign judges it.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=$(cd "${srcdir:-.}" && pwd)
py=${PYTHON_NUMPY:-none}
tmp=$(mktemp -d /tmp/attncheck-xgrad-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
PYTHONDONTWRITEBYTECODE=1
export ATTNCHECK_CACHE PYTHONDONTWRITEBYTECODE
fail() { echo "FAIL: $*"; exit 1; }
"$bin" gen -o "$tmp/g.npz" --tq 24 --tk 40 --dk 16 --batch 1 --heads 4 --kv-heads 2 --mask causal-bottom-right \
  --grad normal --seed 5 > /dev/null || exit 99

# 1. a misbehaving worker in sh (no numpy needed)
cat > "$tmp/w.sh" <<'EOF'
mode=$1
while read -r a b c; do
  case $a in
  hello)
    case $mode in
      nodecl) echo 'attncheck-worker 1 {"name":"bw","dtypes":["f32"]}' ;;
      baddecl) echo 'attncheck-worker 1 {"name":"bw","backward":"yes"}' ;;
      list) echo 'attncheck-worker 1 {"name":"bw","dtypes":["f32"],"features":["gqa","window","sinks"],"backward":["window"]}' ;;
      listbad) echo 'attncheck-worker 1 {"name":"bw","dtypes":["f32"],"features":["gqa","window"],"backward":["sinks"]}' ;;
      *) echo 'attncheck-worker 1 {"name":"bw","dtypes":["f32"],"backward":true}' ;;
    esac ;;
  backward)
    case $mode in
      hang) sleep 30 ;;
      crash) echo "backward blew up" >&2; exit 3 ;;
      refuse) echo "error unsupported: no backward with this mask" ;;
      err|list) echo "error ValueError: broken" ;;
      noout) echo ok ;;
      case) cp "$b" "$c"; echo ok ;;
    esac ;;
  *) echo "error forward not done" ;;
  esac
done
EOF
t0=$(date +%s)
run() { # mode, expected exit, expected pattern[, case]
  "$bin" check --grad --timeout 2 --kernel "exec-persistent:sh $tmp/w.sh $1" "${4:-$tmp/g.npz}" > "$tmp/o.txt" 2>&1
  rc=$?
  [ $rc -eq "$2" ] && grep -q "$3" "$tmp/o.txt" || { cat "$tmp/o.txt"; fail "$1: exit $rc, expected $2 and '$3'"; }
}
run hang 1 'grad TIMEOUT: worker gave no answer within the time limit of 2 s'
run crash 1 'grad CRASH: worker exited with status 3: backward blew up'
run refuse 0 '^SKIP .* grad UNSUPPORTED: worker: no backward with this mask'
run err 1 'grad KERNEL-ERROR: worker: ValueError: broken'
run noout 1 "grad KERNEL-ERROR: worker's backward output: .*out-1.npz"
run case 1 "grad KERNEL-ERROR: worker's backward output: .*: no member 'dq'"
run nodecl 0 '^SKIP .* grad UNSUPPORTED: bw declares no backward ("backward" in its declaration)'
run baddecl 2 "unusable worker declaration: 'backward' must be true, false or an array of feature names"
# "backward": [names]: only those variants (of the declared ones) reach the backward
"$bin" gen -o "$tmp/win.npz" --t 24 --dk 16 --heads 2 --window 4,0 --grad normal --seed 5 > /dev/null || exit 99
"$bin" gen -o "$tmp/sink.npz" --t 24 --dk 16 --heads 2 --sinks normal --grad normal --seed 5 > /dev/null || exit 99
run list 1 'grad KERNEL-ERROR: worker: ValueError: broken' "$tmp/win.npz"
run list 0 "^SKIP .* grad UNSUPPORTED: bw's backward does not take sinks (\"backward\" in its declaration)" "$tmp/sink.npz"
run listbad 2 "unusable worker declaration: 'backward': feature 'sinks' is not among the declared 'features'"
[ $(( $(date +%s) - t0 )) -lt 25 ] || fail "the guards took too long (a hang?)"
# the suite runs grad cases only on workers that declare a backward
"$bin" suite --kernel "exec-persistent:sh $tmp/w.sh nodecl" --case f32-grad-64x64-d32-dv32-none-h2kv2-do-normal > "$tmp/o.txt" 2>&1
grep -q ' grad ' "$tmp/o.txt" && { cat "$tmp/o.txt"; fail "suite: a grad case on a worker without a backward"; }
"$bin" suite --kernel "exec-persistent:sh $tmp/w.sh err" --case f32-grad-64x64-d32-dv32-none-h2kv2-do-normal > "$tmp/o.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL .* f32-grad-64x64-d32-dv32-none-h2kv2-do-normal grad KERNEL-ERROR' "$tmp/o.txt" ||
  { cat "$tmp/o.txt"; fail "suite: grad case on a declared backward (exit $rc)"; }
"$bin" list --kernel "exec-persistent:sh $tmp/w.sh err" | grep -q '; backward' || fail "list does not show the declared backward"
echo "ok: guards of the backward request"

if [ "$py" = none ] || [ -z "$py" ]; then echo "SKIP: no python3 with numpy (the python workers are not run)"; exit 77; fi

# 2. outputs of another dtype or shape, misnamed members
cat > "$tmp/wrong.py" <<EOF
import sys
sys.path.insert(0, "$src/python/attncheck/worker")
import protocol as attncheck_worker, numpy_sdpa as sdpa_numpy
import numpy as np
mode = sys.argv[1]
def bwd(q, k, v, o, lse, do, p):
    dq, dk, dv, ds = sdpa_numpy.backward(q, k, v, o, lse, do, p)
    return dq, dk, dv, ds
orig = attncheck_worker._save
def save(out, members):
    if "dq" in members:
        if mode == "dtype":
            members["dq"] = members["dq"].astype(np.float64)
        elif mode == "shape":
            members["dk"] = np.swapaxes(members["dk"], 2, 3)
        elif mode == "name":
            members["dV"] = members.pop("dv")
    orig(out, members)
attncheck_worker._save = save
sys.exit(attncheck_worker.run(sdpa_numpy.attend, [], name="wrong", backward=bwd))
EOF
for m in "dtype:member 'dq' must be f32 ('<f4') of shape \[1,4,24,16\], got '<f8'" \
  "shape:member 'dk' must be f32 ('<f4') of shape \[1,2,40,16\], got '<f4' of shape \[1,2,16,40\]" \
  "name:no member 'dv'"; do
  "$bin" check --grad --kernel "exec-persistent:$py $tmp/wrong.py ${m%%:*}" "$tmp/g.npz" > "$tmp/o.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] && grep -q "grad KERNEL-ERROR: worker's backward output: .*${m#*:}" "$tmp/o.txt" ||
    { cat "$tmp/o.txt"; fail "${m%%:*}: exit $rc"; }
done
echo "ok: wrong dtype, shape, member name"

# 3. sdpa_numpy.py's backward: check --grad, the suite's grad cases (window, sinks), a broken dK
k="exec-persistent:$py $src/python/attncheck/worker/numpy_sdpa.py --serve"
"$bin" check --grad --kernel "$k" "$tmp/g.npz" > "$tmp/o.txt" 2>&1 && grep -q '^PASS .* grad dq err/W=.* bad=0/1536 dk .* bad=0/1280 dv .* bad=0/1280 f32' "$tmp/o.txt" ||
  { cat "$tmp/o.txt"; fail "sdpa_numpy: check --grad"; }
gc="--case f32-grad-48x48-d16-dv16-causal-bottom-right-h2kv1-do-normal-window-sinks --case bf16-grad-40x40-d16-dv16-none-h2kv2-do-huge"
"$bin" suite --kernel "$k" $gc > "$tmp/o.txt" 2>&1 && grep -q ' 2 pass, 0 warn, 0 fail, 0 skip, 0 error' "$tmp/o.txt" ||
  { cat "$tmp/o.txt"; fail "sdpa_numpy: suite grad cases"; }
ATTNCHECK_WORKER_MUTATE=dk-noscale "$bin" check --grad --kernel "$k" "$tmp/g.npz" > "$tmp/o.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL .* dk err/W=[0-9.e+]* bad=1280/1280' "$tmp/o.txt" || { cat "$tmp/o.txt"; fail "broken dK: exit $rc"; }
echo "ok: sdpa_numpy.py backward (and a broken dK fails)"

# 4. a campaign judges the worker's backward (campaign.json records it)
"$bin" fuzz --kernel "$k" --cases 6 --seed 3 --families normal,gqa --max-t 48 --out "$tmp/camp" --no-live --no-minimize --quiet \
  > "$tmp/o.txt" 2>&1 || { cat "$tmp/o.txt"; fail "campaign on sdpa_numpy's backward"; }
grep -q '"backward": *1' "$tmp/camp/campaign.json" || fail "campaign.json does not record the worker's backward"
ATTNCHECK_WORKER_MUTATE=dk-noscale "$bin" fuzz --kernel "$k" --cases 20 --seed 3 --families normal --max-t 48 \
  --out "$tmp/campm" --no-live --no-minimize --quiet --stop-on-fail > "$tmp/o.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && ls "$tmp/campm/findings" | grep -q GRAD-FAIL || { cat "$tmp/o.txt"; fail "campaign: broken dK not found (exit $rc)"; }
echo "ok: fuzz judges a worker's backward"
exit 0
