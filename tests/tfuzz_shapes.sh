#!/bin/sh
# tfuzz_shapes.sh: a campaign draws only the shapes its kernel declares: a worker that declares
# neither gqa, dv-ne-dk, tq-ne-tk nor scale is sent none of them and no case is SKIP for them (a
# draw the kernel refuses is drawn again and counted: draws_discarded in stats and the summary);
# --shape-buckets N keeps every dense case to N shapes and reports first runs of a shape apart
# from later ones; repro.sh sets the environment variables the worker declares it reads, quoted,
# and unsets the declared ones that were unset; --no-backward judges no backward. Shell workers: no
# Python needed.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-shapes-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# worker NAME DECL ANSWER: answers the hello with DECL, logs the shape of every case it is sent
# (and the value of ATTNCHECK_TEST_KNOB) and answers ANSWER
mkworker() {
  cat > "$tmp/$1.sh" <<EOF
#!/bin/sh
while read a b; do
  if [ "\$a" = hello ]; then echo '$2'; continue; fi
  "$bin" info "\$a" | grep -E '^  (shape|scale) ' | tr '\n' ' ' >> "$tmp/$1.log"
  echo "knob=[\${ATTNCHECK_TEST_KNOB-unset}]" >> "$tmp/$1.log"
  echo '$3'
done
EOF
  chmod +x "$tmp/$1.sh"
}

# 1. nothing but square, single-group, dv = dk cases at the default scale
mkworker square 'attncheck-worker 1 {"name":"square","dtypes":["f32"],"features":[]}' 'error unsupported: the test worker computes nothing'
out=$("$bin" fuzz --kernel "exec-persistent:$tmp/square.sh" --cases 120 --out "$tmp/c1" --no-minimize --no-live \
  --allow-all-skipped 2>&1) ||
  { echo "$out"; fail "campaign on a worker that declares no shape feature"; }
echo "$out" | head -n 3
n=$(wc -l < "$tmp/square.log")
[ "$n" -ge 100 ] || fail "only $n cases reached the worker"
bad=$(awk '{ for (i = 1; i <= NF; i++) v[$i] = $(i + 1) }
  v["heads"] + 0 != v["kv_heads"] + 0 || v["tq"] + 0 != v["tk"] + 0 || v["dk"] + 0 != v["dv"] + 0 || $0 !~ /scale +default/' \
  FS='[ ,]+' "$tmp/square.log" | head -n 3)
[ -z "$bad" ] || { echo "$bad"; fail "the worker was sent shapes it does not declare"; }
sk=$(sed -n 's/^skipped=//p' "$tmp/c1/stats") sr=$(sed -n 's/^skipped_by_run=//p' "$tmp/c1/stats")
[ "$sk" = "$sr" ] || { grep skipped "$tmp/c1/stats"; fail "cases SKIP for an undeclared shape ($sk skipped, $sr by the worker)"; }
grep -q '"shapes":0,' "$tmp/c1/campaign.json" || fail "campaign.json does not record the shapes the kernel takes"
nd=$(sed -n 's/^draws_discarded=//p' "$tmp/c1/stats")
[ -n "$nd" ] || fail "no draws_discarded in stats"
[ "$nd" -eq 0 ] || echo "$out" | grep -q "^$nd draws discarded" || fail "the summary does not say how many draws were discarded"
for f in gqa tq_ne_tk scale; do grep -q "^family\.$f=" "$tmp/c1/stats" && fail "family $f drawn for a kernel without its shape"; done
echo "ok: undeclared shapes are never drawn ($nd draws discarded)"

# 2. a kernel whose supports() refuses those shapes: the mutations that make them are drawn again
out=$("$bin" fuzz --kernel test-square-only --dtypes f32 --max-t 256 --cases 200 --out "$tmp/c2" --no-minimize --no-live 2>&1) ||
  { echo "$out"; fail "campaign on test-square-only"; }
echo "$out" | head -n 2
grep -q '^skipped=0$' "$tmp/c2/stats" || { grep skipped "$tmp/c2/stats"; fail "cases SKIP for shapes the kernel refuses"; }
nd=$(sed -n 's/^draws_discarded=//p' "$tmp/c2/stats")
[ "$nd" -gt 0 ] || fail "no draw discarded on a kernel that refuses resized cases"
echo "$out" | grep -q "^$nd draws discarded" || fail "the summary does not say how many draws were discarded"
"$bin" fuzz --kernel test-run-refuses --cases 60 --families normal --out "$tmp/c2b" --no-minimize --no-live >/dev/null 2>&1
grep -q '^draws_discarded=0$' "$tmp/c2b/stats" || fail "draws_discarded for a kernel that takes every shape"
echo "ok: $nd draws discarded for test-square-only, none SKIP"

# 3. --shape-buckets 3: at most three shapes, first runs apart
mkworker all 'attncheck-worker 1 {"name":"all","dtypes":["f32"]}' 'error unsupported: the test worker computes nothing'
"$bin" fuzz --kernel "exec-persistent:$tmp/all.sh" --cases 80 --shape-buckets 3 --out "$tmp/c3" --no-minimize --no-live \
  --allow-all-skipped > "$tmp/3.txt" 2>&1 || { cat "$tmp/3.txt"; fail "--shape-buckets 3"; }
ns=$(sed 's/ knob=.*//; s/ *scale.*//' "$tmp/all.log" | sort -u | wc -l)
[ "$ns" -ge 1 ] && [ "$ns" -le 3 ] || { sed 's/ knob=.*//; s/ *scale.*//' "$tmp/all.log" | sort | uniq -c; fail "$ns shapes with 3 buckets"; }
grep -q '"shape_buckets":3,' "$tmp/c3/campaign.json" || fail "campaign.json does not record the buckets"
"$bin" fuzz --kernel flash-f32 --families normal,tile_edge,head_dim,gqa --cases 100 --shape-buckets 2 --out "$tmp/c4" \
  --no-minimize --no-live > "$tmp/4.txt" 2>&1 || { cat "$tmp/4.txt"; fail "--shape-buckets 2 on flash-f32"; }
cat "$tmp/4.txt"
fr=$(sed -n 's/^first_runs=//p' "$tmp/c4/stats") lr=$(sed -n 's/^later_runs=//p' "$tmp/c4/stats")
[ -n "$fr" ] && [ "$fr" -ge 1 ] && [ "$fr" -le 12 ] && [ "$lr" -ge 80 ] || { grep runs "$tmp/c4/stats"; fail "first runs $fr, later runs $lr"; }
grep -q '^compile_s_est=' "$tmp/c4/stats" || fail "no compile_s_est in stats"
grep -q '^kernel time: [0-9]* first runs of a shape' "$tmp/4.txt" || fail "the summary does not report first runs apart"
echo "ok: --shape-buckets draws $ns shapes; first runs $fr, later runs $lr"

# --no-backward: the forward alone, also of a kernel with a backward
"$bin" fuzz --kernel flash-bwd-f32 --no-backward --cases 10 --families normal --out "$tmp/c6" --no-minimize --no-live >/dev/null 2>&1 ||
  fail "--no-backward campaign"
grep -q '"backward":0' "$tmp/c6/campaign.json" && ! grep -q '^grad_checked' "$tmp/c6/stats" || fail "--no-backward judged a backward"

# 4. repro.sh records the environment the worker declares
mkworker env 'attncheck-worker 1 {"name":"env","dtypes":["f32"],"env":["ATTNCHECK_TEST_KNOB","ATTNCHECK_TEST_UNSET"]}' 'error boom'
ATTNCHECK_TEST_KNOB="a b'c" "$bin" fuzz --kernel "exec-persistent:$tmp/env.sh" --cases 3 --families normal --out "$tmp/c5" \
  --no-minimize --no-live >/dev/null 2>&1
r=$(ls "$tmp/c5/findings"/*/repro.sh | head -n 1)
[ -f "$r" ] || fail "no finding from a worker that answers errors"
cat "$r"
grep -qF "export ATTNCHECK_TEST_KNOB='a b'\\''c'" "$r" || fail "repro.sh does not set the declared variable, quoted"
grep -q '^unset ATTNCHECK_TEST_UNSET$' "$r" || fail "repro.sh does not unset the declared variable that was unset"
grep -q '"ATTNCHECK_TEST_KNOB": *"a b'"'"'c"' "$(dirname "$r")/report.json" || fail "report.json does not record env"
: > "$tmp/env.log"
env -u ATTNCHECK_TEST_KNOB ATTNCHECK="$bin" sh "$r" >/dev/null 2>&1
grep -qF "knob=[a b'c]" "$tmp/env.log" || { cat "$tmp/env.log"; fail "the worker run by repro.sh does not see the variable"; }
echo "ok: repro.sh sets the declared environment"
exit 0
