#!/bin/sh
# tcmd_mixed_dtypes.sh: per-tensor dtypes end to end. `gen --dtypes Q,K,V,O` writes each tensor
# in its own dtype (NPZ descr and meta.json variants.dtypes); `info` and `explain` show them;
# kernels that declare mixed_dtypes are judged (naive-f32 and flash-f32 with f16/bf16 K and V,
# flash-e4m3/e5m2 with a bf16 or f32 output), the others SKIP; combinations the compute dtype's
# class cannot judge, and case files whose members or fields disagree, are refused with exit 2
# and one line naming the file and the field.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
tmp=$(mktemp -d /tmp/attncheck-mixed-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# expect CODE OUTFILE -- COMMAND...
expect() {
  code=$1 out=$2; shift 3
  "$@" > "$out" 2>&1
  rc=$?
  [ "$rc" -eq "$code" ] || { bad "exit $rc, expected $code: $*"; sed 's/^/  | /' "$out"; }
}
# descr of member $2 (q, k, v, o) of NPZ $1
descr() { python3 -c "import sys,zipfile; print(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]+'.npy')[10:60].split(b\"'\")[3].decode())" "$1" "$2"; }

expect 0 "$tmp/g1" -- "$bin" gen -o "$tmp/m1.npz" --dtypes f32,f16,bf16,f32 --tq 33 --tk 70 --dk 16 --mask causal-bottom-right --seed 4
grep -q "(q f32, k f16, v bf16, o f32)" "$tmp/g1" || bad "gen does not name the dtypes: $(cat "$tmp/g1")"
for m in q:'<f4' k:'<f2' v:'<u2'; do
  d=$(descr "$tmp/m1.npz" "${m%%:*}")
  [ "$d" = "${m#*:}" ] || bad "member ${m%%:*} stored as $d, expected ${m#*:}"
done
"$bin" info "$tmp/m1.npz" > "$tmp/i1" 2>&1 || bad "info"
grep -q "dtype      f32 (compute); q f32, k f16, v bf16, o f32" "$tmp/i1" || { bad "info lacks the dtypes"; cat "$tmp/i1"; }
"$bin" explain "$tmp/m1.npz" --row 5 --force > "$tmp/x1" 2>&1 || bad "explain"
grep -q "dtypes: q f32, k f16, v bf16 (decoded exactly), o f32" "$tmp/x1" || { bad "explain lacks the dtypes"; head -5 "$tmp/x1"; }
for k in naive-f32 flash-f32 naive-nolse-f32; do
  expect 0 "$tmp/c1" -- "$bin" check --kernel $k "$tmp/m1.npz"
  grep -q "^PASS  $k" "$tmp/c1" || bad "$k on f32/f16/bf16/f32: $(cat "$tmp/c1")"
done
expect 0 "$tmp/c2" -- "$bin" check --kernel flash-f16 "$tmp/m1.npz"
grep -q "SKIP.*mixed_dtypes" "$tmp/c2" || bad "flash-f16 did not SKIP: $(cat "$tmp/c2")"

# fp8 inputs with a wider output: the fp8 class, the output rounded into bf16 / f32
for o in bf16 f32; do
  for t in e4m3 e5m2; do
    expect 0 "$tmp/g2" -- "$bin" gen -o "$tmp/m2.npz" --dtypes $t,$t,$t,$o --t 80 --dk 32 --mask causal --seed 5
    [ "$(descr "$tmp/m2.npz" q)" = "|u1" ] || bad "$t q not stored as |u1"
    expect 0 "$tmp/c3" -- "$bin" check --kernel flash-$t "$tmp/m2.npz"
    grep -q "^PASS  flash-$t .*budget=class:$t-fa3" "$tmp/c3" || bad "flash-$t with $o output: $(cat "$tmp/c3")"
  done
done
expect 0 "$tmp/c4" -- "$bin" check --kernel naive-f32 "$tmp/m2.npz"
grep -q "SKIP" "$tmp/c4" || bad "naive-f32 took an e5m2 case: $(cat "$tmp/c4")"

# compare: an output in o's dtype is judged (zeros: FAIL, exit 1), one in the compute dtype refused
outnpz() {   # file descr shape-tuple nbytes
  python3 - "$@" <<'PY'
import sys, zipfile
path, descr, shape, nbytes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
h += " " * (63 - (10 + len(h)) % 64) + "\n"
with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
    z.writestr("o.npy", b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode() + bytes(nbytes))
PY
}
"$bin" gen -o "$tmp/m3.npz" --dtypes e4m3,e4m3,e4m3,bf16 --t 8 --dk 8 > /dev/null || bad "gen m3"
outnpz "$tmp/o-bf16.npz" '<u2' '(1, 1, 8, 8)' 128
outnpz "$tmp/o-e4m3.npz" '|u1' '(1, 1, 8, 8)' 64
expect 1 "$tmp/cmp1" -- "$bin" compare "$tmp/m3.npz" "$tmp/o-bf16.npz"
grep -q "^FAIL" "$tmp/cmp1" || bad "compare with a bf16 o: $(cat "$tmp/cmp1")"
expect 2 "$tmp/cmp2" -- "$bin" compare "$tmp/m3.npz" "$tmp/o-e4m3.npz"
grep -q "o has dtype '|u1' but the case's o is bf16 ('<u2', variants.dtypes.o)" "$tmp/cmp2" || bad "compare with an e4m3 o: $(cat "$tmp/cmp2")"

# refusals: gen
expect 2 "$tmp/r1" -- "$bin" gen -o "$tmp/r.npz" --dtype f16 --dtypes f32,f16,f16,f32
grep -q "variants.dtypes.q: f32 is wider than the compute dtype f16" "$tmp/r1" || bad "wider q: $(cat "$tmp/r1")"
expect 2 "$tmp/r2" -- "$bin" gen -o "$tmp/r.npz" --dtypes f32,f16,f16
expect 2 "$tmp/r3" -- "$bin" gen -o "$tmp/r.npz" --dtypes f32,f16,f99,f32
[ ! -e "$tmp/r.npz" ] || bad "a refused gen wrote a file"

# refusals: case files (meta.json edited, members kept)
edit() {   # src dst python-expression-on-meta
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys, zipfile
src, dst, expr = sys.argv[1:]
zi = zipfile.ZipFile(src)
m = json.loads(zi.read('meta.json'))
exec(expr)
with zipfile.ZipFile(dst, 'w', zipfile.ZIP_STORED) as zo:
    for i in zi.infolist():
        zo.writestr(i.filename, json.dumps(m) if i.filename == 'meta.json' else zi.read(i.filename))
PY
}
refused() {   # file needle
  expect 2 "$tmp/rr" -- "$bin" info "$1"
  [ "$(wc -l < "$tmp/rr")" -eq 1 ] || bad "refusal of $1 is not one line: $(cat "$tmp/rr")"
  grep -q "$1" "$tmp/rr" || bad "refusal does not name $1: $(cat "$tmp/rr")"
  grep -qF "$2" "$tmp/rr" || bad "refusal of $1 lacks '$2': $(cat "$tmp/rr")"
}
edit "$tmp/m1.npz" "$tmp/e1.npz" "m['variants']['dtypes']['k'] = 'f32'"
refused "$tmp/e1.npz" "member 'k' has descr '<f2', meta.json's variants.dtypes.k needs '<f4'"
edit "$tmp/m1.npz" "$tmp/e2.npz" "m['dtype'] = 'f16'"
refused "$tmp/e2.npz" "variants.dtypes.q: f32 is wider than the compute dtype f16"
edit "$tmp/m1.npz" "$tmp/e3.npz" "m['variants']['dtypes']['o'] = 'f8'"
refused "$tmp/e3.npz" "variants.dtypes.o: unknown dtype 'f8'"
edit "$tmp/m1.npz" "$tmp/e4.npz" "del m['variants']['dtypes']['v']"
refused "$tmp/e4.npz" "variants.dtypes lacks \"v\""
edit "$tmp/m1.npz" "$tmp/e5.npz" "m['variants']['features'] = []"
refused "$tmp/e5.npz" "variants.dtypes present but variants.features lacks mixed_dtypes"
[ $fail -eq 0 ] && echo "mixed dtypes: gen, info, explain, kernels and refusals ok"
exit $fail
