#!/bin/sh
# tfuzz_layout_families.sh: a campaign draws only families whose cases the kernel takes. A
# layout-only kernel (flash-varlen-f32: no dense case) draws the layout families alone, none of
# its cases SKIP, and its window, softcap, ALiBi and sinks are probed on a layout problem;
# campaign.json keeps "no_dense" for --resume. A dense-only kernel (flash-f32) draws no layout
# family.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261201}
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
tmp=$(mktemp -d /tmp/attncheck-tlfam-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
lay='"family":"(varlen_mix|page_table|decode)"'

# 1. layout-only kernel: 60 cases, every one from a layout family, none SKIP
"$bin" fuzz --kernel flash-varlen-f32 --cases 60 --seed "$seed" --log-cases --no-minimize --out "$tmp/v" --no-live \
  > "$tmp/v.txt" 2>&1 || { cat "$tmp/v.txt"; fail "flash-varlen-f32 campaign: exit $?"; }
n=$(grep -c '"event":"case"' "$tmp/v/log.jsonl")
[ "$n" -eq 60 ] || fail "flash-varlen-f32: $n case events, not 60"
other=$(grep '"event":"case"' "$tmp/v/log.jsonl" | grep -Ev "$lay" | head -n 3)
[ -z "$other" ] || fail "flash-varlen-f32 drew dense families: $other"
grep -q '^skipped=0$' "$tmp/v/stats" || fail "flash-varlen-f32: $(grep '^skipped=' "$tmp/v/stats") cases SKIP"
grep -q '"no_dense":1' "$tmp/v/campaign.json" || fail "campaign.json lacks no_dense"
feats=$(sed -n 's/.*"features":\([0-9]*\).*/\1/p' "$tmp/v/campaign.json")
[ $((feats & 1)) -eq 1 ] || fail "flash-varlen-f32: window not probed on a layout problem (features $feats)"
# --resume keeps it
"$bin" fuzz --out "$tmp/v" --resume --cases 70 --log-cases --no-minimize --no-live > "$tmp/v2.txt" 2>&1 ||
  { cat "$tmp/v2.txt"; fail "resume: exit $?"; }
other=$(grep '"event":"case"' "$tmp/v/log.jsonl" | grep -Ev "$lay" | head -n 3)
[ -z "$other" ] || fail "flash-varlen-f32 drew dense families after --resume: $other"
# a named dense family is dropped with one line; dense families only is bad usage
"$bin" fuzz --kernel flash-varlen-f32 --families normal,window --cases 2 --out "$tmp/n" --no-live > "$tmp/n.txt" 2>&1
rc=$?
[ $rc -eq 2 ] || { cat "$tmp/n.txt"; fail "dense families on a layout-only kernel: exit $rc, not 2"; }
grep -q 'takes no dense case' "$tmp/n.txt" || { cat "$tmp/n.txt"; fail "no reason given"; }

# 2. dense-only kernel: no layout family
"$bin" fuzz --kernel flash-f32 --cases 60 --seed "$seed" --log-cases --no-minimize --out "$tmp/d" --no-live \
  > "$tmp/d.txt" 2>&1
rc=$?
[ $rc -le 1 ] || { cat "$tmp/d.txt"; fail "flash-f32 campaign: exit $rc"; }
grep '"event":"case"' "$tmp/d/log.jsonl" | grep -Eq "$lay" && fail "flash-f32 drew a layout family"
grep -q '"no_dense":0' "$tmp/d/campaign.json" || fail "flash-f32: no_dense not 0"
echo "ok: campaigns draw the families whose cases the kernel takes"
exit 0
