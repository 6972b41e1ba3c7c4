#!/bin/sh
# texec_decl.sh: exec workers that declare themselves (no Python needed). A worker answering
# "hello 1" with "attncheck-worker 1 {json}" gets only the cases of its dtypes, masks and
# features (the rest SKIP, never sent); "error unsupported: ..." is SKIP and no finding; a
# worker that answers the hello with an error, or not at all within the time limit, runs as
# before; a bad declaration is ERROR; a one-shot command exiting 77 is SKIP; two exec specs that
# differ only after their 40th character get different finding signatures; "quant_only" (with
# "kv_formats") makes a worker of quantized caches only.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-xdecl-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# worker DECL: answers the hello with DECL (or ignores it: DECL = -), logs every request to
# $tmp/requests and refuses it
mkworker() {
  cat > "$tmp/$1.sh" <<EOF
#!/bin/sh
while read a b; do
  if [ "\$a" = hello ]; then
    [ '$2' = - ] || echo '$2'
    continue
  fi
  echo "\$a" >> "$tmp/requests"
  echo "error unsupported: refused by the test worker"
done
EOF
  chmod +x "$tmp/$1.sh"
}

# 1. capabilities: dtype f32, mask none, feature tq-ne-tk only
mkworker f32only 'attncheck-worker 1 {"name":"f32only","dtypes":["f32"],"masks":["none"],"features":["tq-ne-tk"]}'
: > "$tmp/requests"
"$bin" suite --verbose --allow-all-skipped --kernel "exec-persistent:$tmp/f32only.sh" --case f32-1x1-d1-none --case f16-1x1-d1-none \
  --case f32-1x1-d64-causal-bottom-right --case f32-127x129-d3v5-none --case f32-64x96-d32-none \
  --case f32-64x96-d32-none-q2 > "$tmp/1.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/1.txt"; fail "declared worker: exit $rc"; }
for want in 'f16-1x1-d1-none SKIP (unsupported: f32only does not declare dtype f16)' \
  'f32-1x1-d64-causal-bottom-right SKIP (unsupported: f32only does not declare mask causal-bottom-right)' \
  'f32-127x129-d3v5-none SKIP (unsupported: f32only does not declare feature dv-ne-dk)' \
  'f32-64x96-d32-none-q2 SKIP (unsupported: f32only does not declare feature scale)' \
  'f32-1x1-d1-none SKIP (unsupported: worker: refused by the test worker)'; do
  grep -qF "$want" "$tmp/1.txt" || { cat "$tmp/1.txt"; fail "missing: $want"; }
done
[ "$(wc -l < "$tmp/requests")" -eq 2 ] || { cat "$tmp/1.txt"; fail "$(wc -l < "$tmp/requests") requests reached the worker, expected 2"; }
echo "ok: undeclared dtypes, masks and features are SKIP and never sent"

# 1b. a campaign draws the dtypes the worker declares; each job runs its own worker
: > "$tmp/requests"
"$bin" fuzz --allow-all-skipped --kernel "exec-persistent:$tmp/f32only.sh" --jobs 2 --cases 40 --families normal --out "$tmp/c1b" \
  --no-minimize --no-live > "$tmp/1b.txt" 2>&1 || { cat "$tmp/1b.txt"; fail "campaign on a declared worker"; }
grep -q '"dtypes":2,' "$tmp/c1b/campaign.json" || fail "the campaign did not draw the declared dtype f32"
ndir=$(sed 's|/[^/]*$||' "$tmp/requests" | sort -u | wc -l)
[ "$ndir" -eq 2 ] || { cat "$tmp/requests"; fail "two jobs used $ndir worker directories"; }
echo "ok: a campaign's jobs each run their own worker"

# 2. a worker without the handshake (answers the hello with an error) that refuses every case:
#    SKIP, and a campaign stores no finding
mkworker plain 'error expected IN OUT'
"$bin" fuzz --allow-all-skipped --kernel "exec-persistent:$tmp/plain.sh" --cases 6 --families normal --out "$tmp/c2" --no-minimize \
  --no-live > "$tmp/2.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/2.txt"; fail "refusing worker: exit $rc, expected 0"; }
[ -z "$(ls "$tmp/c2/findings")" ] || { ls "$tmp/c2/findings"; fail "refusals stored as findings"; }
grep -q '^skipped=6$' "$tmp/c2/stats" || { cat "$tmp/c2/stats"; fail "refusals not counted as skipped"; }
echo "ok: 'error unsupported:' is SKIP, no finding"

# 3. a worker that ignores the hello: the wait is bounded by the time limit, then it runs as before
mkworker silent -
"$bin" check --kernel "exec-persistent:$tmp/silent.sh" --timeout 1 example:tiny3 > "$tmp/3.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^SKIP .*refused by the test worker' "$tmp/3.txt" || { cat "$tmp/3.txt"; fail "silent worker: exit $rc"; }
echo "ok: a silent hello costs one time limit"

# 4. an unusable declaration: ERROR with the reason
mkworker badecl 'attncheck-worker 1 {"dtypes":["f33"]}'
"$bin" check --kernel "exec-persistent:$tmp/badecl.sh" example:tiny3 > "$tmp/4.txt" 2>&1
rc=$?
[ $rc -eq 3 ] && grep -q "^ERROR .*unusable worker declaration: 'dtypes': unknown name 'f33'" "$tmp/4.txt" ||
  { cat "$tmp/4.txt"; fail "bad declaration: exit $rc"; }
echo "ok: a bad declaration is ERROR"

# 4b. "quant_only": true (with kv_formats): `list` says so, a plain case SKIPs unsent; without
#     kv_formats the declaration is unusable
mkworker qonly 'attncheck-worker 1 {"name":"qonly","dtypes":["f32"],"kv_formats":["e4m3fn"],"quant_only":true}'
"$bin" list --kernel "exec-persistent:$tmp/qonly.sh" > "$tmp/4b.txt" 2>&1
grep -q 'kv formats e4m3fn.*quantized cases only' "$tmp/4b.txt" || { cat "$tmp/4b.txt"; fail "list of a quant_only worker"; }
: > "$tmp/requests"
"$bin" check --kernel "exec-persistent:$tmp/qonly.sh" example:tiny3 > "$tmp/4b.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^SKIP .*quantized tensors only' "$tmp/4b.txt" && [ ! -s "$tmp/requests" ] ||
  { cat "$tmp/4b.txt"; fail "a plain case on a quant_only worker: exit $rc"; }
mkworker qbad 'attncheck-worker 1 {"dtypes":["f32"],"quant_only":true}'
"$bin" check --kernel "exec-persistent:$tmp/qbad.sh" example:tiny3 > "$tmp/4b.txt" 2>&1
[ $? -eq 3 ] && grep -q "quant_only' without 'kv_formats'" "$tmp/4b.txt" || { cat "$tmp/4b.txt"; fail "quant_only without formats"; }
echo "ok: a worker of quantized caches only"

# 5. one-shot: exit status 77 is SKIP with the command's reason
"$bin" check --kernel 'exec:echo "unsupported: no fp8 here" >&2; exit 77; : {in} {out}' example:tiny3 > "$tmp/5.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^SKIP .*unsupported: command: no fp8 here' "$tmp/5.txt" || { cat "$tmp/5.txt"; fail "exit 77: exit $rc"; }
echo "ok: a one-shot exit 77 is SKIP"

# 6. signatures: two crashing commands equal in their first 40 characters
long='exec-persistent:kill -SEGV $$; : 0123456789012345678901234567890123456789'
for n in 1 2; do
  "$bin" fuzz --kernel "$long-$n" --cases 1 --families normal --out "$tmp/sig$n" --no-minimize --no-live > "$tmp/6.txt" 2>&1
  [ $? -eq 1 ] || { cat "$tmp/6.txt"; fail "crashing worker $n: not a finding"; }
done
s1=$(ls "$tmp/sig1/findings") s2=$(ls "$tmp/sig2/findings")
echo "$s1" | grep -q '__CRASH__' || fail "no CRASH signature: $s1"
[ "$s1" != "$s2" ] || fail "two commands share the signature $s1"
echo "ok: signatures $s1 and $s2"
exit 0
