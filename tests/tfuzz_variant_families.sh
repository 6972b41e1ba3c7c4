#!/bin/sh
# tfuzz_variant_families.sh: a campaign draws a variant family only for a kernel that declares
# its features: named families it cannot draw are dropped with one line on stderr (exit 2 when
# none is left), all families (the default) leave them out silently, and the declared features
# are kept in campaign.json for --resume. --list-families names every variant family.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261129}
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
tmp=$(mktemp -d /tmp/attncheck-tvfam-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }

# 1. every variant family is listed with the features it draws
"$bin" fuzz --list-families > "$tmp/list.txt" || fail "--list-families: exit $?"
for f in window softcap alibi bias bool_mask sinks descale variant_mix; do
  grep -q "^$f " "$tmp/list.txt" || fail "--list-families lacks $f"
done
grep '^window ' "$tmp/list.txt" | grep -q '\[variants: window\]' || fail "window: features not listed"

# workers that refuse every case, declaring FEATURES
mkworker() {
  cat > "$tmp/$1.sh" <<W
#!/bin/sh
while read a b; do
  if [ "\$a" = hello ]; then
    echo 'attncheck-worker 1 {"name":"$1","dtypes":["f32"],"masks":["none","causal","causal-bottom-right"],"features":[$2]}'
    continue
  fi
  echo "error unsupported: refused by the test worker"
done
W
  chmod +x "$tmp/$1.sh"
}
mkworker plain '"gqa"'
mkworker w '"window","sinks"'

# 2. a kernel without variants: variant families only is bad usage, with one line
"$bin" fuzz --kernel "exec-persistent:$tmp/plain.sh" --families window,bias --cases 4 --out "$tmp/none" --no-live \
  > "$tmp/none.txt" 2>&1
rc=$?
[ $rc -eq 2 ] || { cat "$tmp/none.txt"; fail "variant families on a kernel without variants: exit $rc, not 2"; }
grep -q 'declares none of the attention variants of families window,bias' "$tmp/none.txt" || fail "no reason given"

# 3. a worker declaring window and sinks: bias is dropped (named), window and variant_mix drawn
"$bin" fuzz --allow-all-skipped --kernel "exec-persistent:$tmp/w.sh" --families window,bias,normal,variant_mix --cases 12 --seed "$seed" \
  --log-cases --out "$tmp/ws" --no-live > "$tmp/ws.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/ws.txt"; fail "worker campaign: exit $rc"; }
grep -q 'families bias not drawn' "$tmp/ws.txt" || fail "the dropped family is not named"
grep -q '"family":"bias"' "$tmp/ws/log.jsonl" && fail "bias drawn for a kernel without bias"
grep -q '"family":"window"' "$tmp/ws/log.jsonl" || fail "window not drawn"
grep -q '"family":"variant_mix"' "$tmp/ws/log.jsonl" || fail "variant_mix not drawn"
grep -q '"features":33' "$tmp/ws/campaign.json" || fail "campaign.json lacks the declared features"
# --resume keeps the family set
"$bin" fuzz --allow-all-skipped --out "$tmp/ws" --resume --cases 20 --log-cases --no-live > "$tmp/ws2.txt" 2>&1 || { cat "$tmp/ws2.txt"; fail "resume: exit $?"; }
grep -q '"family":"bias"' "$tmp/ws/log.jsonl" && fail "bias drawn after --resume"
# with --dtypes the declaration is still read
"$bin" fuzz --allow-all-skipped --kernel "exec-persistent:$tmp/w.sh" --families sinks --dtypes f32 --cases 3 --out "$tmp/wd" --no-live \
  > "$tmp/wd.txt" 2>&1 || { cat "$tmp/wd.txt"; fail "sinks with --dtypes: exit $?"; }

# 4. every family (the default) on that worker: no variant family it does not declare
"$bin" fuzz --allow-all-skipped --kernel "exec-persistent:$tmp/w.sh" --cases 40 --seed "$seed" --log-cases --out "$tmp/all" --no-live \
  > "$tmp/all.txt" 2>&1 || { cat "$tmp/all.txt"; fail "all families: exit $?"; }
grep -q 'not drawn' "$tmp/all.txt" && fail "default family list: dropped families named"
for f in softcap alibi bias bool_mask descale; do
  grep -q "\"family\":\"$f\"" "$tmp/all/log.jsonl" && fail "$f drawn for a kernel without it"
done
# 5. a corpus case with variants the kernel does not declare does not seed its pool
mkdir -p "$tmp/corpus"
"$bin" fuzz --generate window --index 0 --dtypes f32 --out "$tmp/corpus/s000001.0000_window_0000000000000001.npz" \
  > /dev/null 2>&1 || fail "--generate window"
"$bin" fuzz --generate normal --index 0 --dtypes f32 --out "$tmp/corpus/s000001.0000_normal_0000000000000002.npz" \
  > /dev/null 2>&1 || fail "--generate normal"
"$bin" fuzz --allow-all-skipped --kernel "exec-persistent:$tmp/plain.sh" --families normal --corpus "$tmp/corpus" --cases 2 --log-cases --out "$tmp/co" --no-live \
  > "$tmp/co.txt" 2>&1 || { cat "$tmp/co.txt"; fail "corpus campaign: exit $?"; }
grep '"event":"corpus"' "$tmp/co/log.jsonl" | grep -q '"loaded":1' || fail "corpus: not only the plain case loaded"
echo "ok: variant families follow the declared features"
exit 0
