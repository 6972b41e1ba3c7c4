#!/bin/sh
# tparams_dtype.sh: a worker that takes the scale and a bias in Q's dtype ("params_dtype": "q", as
# OpenVINO's and MLX's attention do; ATTNCHECK_CAP_PARAMS_Q_DTYPE for a plugin) and refuses any other
# value. Declared, a campaign draws only scales and biases that Q's dtype holds: 24 f16/bf16 cases, none
# refused. The same worker undeclared gets such values and refuses them (skipped_by_run > 0): the
# declaration is what saves the draws. SKIP (77) without a python3 with numpy.
set -u
top=$(cd "${abs_top_builddir:-.}" && pwd) || exit 99
src=$(cd "${srcdir:-.}" && pwd) || exit 99
A=$top/attncheck
py=
for c in "${PYTHON_NUMPY:-}" python3 /usr/bin/python3; do
  [ -n "$c" ] && [ "$c" != none ] || continue
  if "$c" -c 'import numpy' > /dev/null 2>&1; then py=$c; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with numpy"; exit 77; }
tmp=$(mktemp -d /tmp/attncheck-tparams-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off TMPDIR="$tmp"
fail() { echo "FAIL: $*"; exit 1; }
cat > "$tmp/w.py" << 'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
from attncheck.worker import numpy_sdpa, protocol
def attn(q, k, v, p):
    if not protocol.holds(p.scale, p.dtype) or (p.bias is not None and not protocol.holds(p.bias, p.dtype)):
        raise NotImplementedError("a scale or bias value %s does not hold" % p.dtype)
    return numpy_sdpa.attend(q, k, v, p)
sys.exit(protocol.run(attn, [], name="params-in-q", dtypes=("f16", "bf16"), writes_lse=True,
                      features=protocol.ALL_FEATURES + ("bias", "window"),
                      params_dtype=None if sys.argv[2] == "stored" else sys.argv[2]))
PYEOF
for d in q stored; do
  "$A" fuzz --kernel "exec-persistent:$py $tmp/w.py $src/python $d" --cases 24 --seed 3 --out "$tmp/c-$d" > "$tmp/$d.log" 2>&1 ||
    { cat "$tmp/$d.log"; fail "fuzz ($d) exited $?"; }
  n=$(sed -n 's/^skipped_by_run=//p' "$tmp/c-$d/stats")
  c=$(sed -n 's/^cases=//p' "$tmp/c-$d/stats")
  echo "params_dtype $d: $c cases, $n refused by the worker"
  if [ "$d" = q ]; then [ "$n" = 0 ] || fail "declared, the campaign still drew $n values Q's dtype does not hold"
  else [ "${n:-0}" -gt 0 ] || fail "undeclared, no case had a scale or bias outside Q's dtype: the test proves nothing"; fi
done
exit 0
