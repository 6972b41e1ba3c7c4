#!/bin/sh
# tfuzz_trust.sh: a findings directory is data, not code, and its reproducers are exact.
# replay and merge never run a recorded exec: command unless --trust-recorded-kernel is given
# (nor load a recorded plugin unless it is given again); they exit 2 with one line instead.
# repro.sh and report.json's repro field quote every word, so a campaign directory and an
# exec: kernel whose paths hold spaces, quotes and $ reproduce exactly.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261129}
tmp=$(mktemp -d /tmp/attncheck-ttrust-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac

# a kernel that leaves a mark and fails, in a directory whose name needs quoting
kd="$tmp/k dir \$HOME 'q'"
mkdir "$kd"
kernel="$kd/my \$kernel's.sh"
cat > "$kernel" <<'EOF'
#!/bin/sh
echo ran >> "$(dirname "$0")/ran"
echo "marker-of-the-odd-kernel" >&2
exit 1
EOF
chmod +x "$kernel"
q=$(printf '%s' "$kernel" | sed "s/'/'\\\\''/g")
spec="exec:'$q' {in} {out}"
out="$tmp/camp \$x \"d\" 'y'"
"$bin" fuzz --kernel "$spec" --cases 2 --families normal --seed "$seed" --out "$out" --no-minimize --no-live --quiet \
  > "$tmp/fuzz.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/fuzz.txt"; fail "campaign on the marking kernel: exit $rc, expected 1"; }
[ "$(wc -l < "$kd/ran")" -eq 2 ] || fail "the kernel did not run twice"
f=$(ls -d "$out"/findings/*__FAIL__* | head -n 1)
[ -n "$f" ] || fail "no FAIL finding"
ran() { wc -l < "$kd/ran"; }

# 1. repro.sh runs exactly the recorded kernel
n=$(ran)
ATTNCHECK="$bin" "$f/repro.sh" > "$tmp/r1.txt" 2>&1
grep -q 'FAIL reproduced' "$tmp/r1.txt" || { cat "$tmp/r1.txt"; fail "repro.sh did not reproduce"; }
grep -q 'marker-of-the-odd-kernel' "$tmp/r1.txt" || { cat "$tmp/r1.txt"; fail "repro.sh ran another command"; }
[ "$(ran)" -gt "$n" ] || fail "repro.sh did not run the kernel"

# 2. so does report.json's repro field, as a shell command
mkdir "$tmp/bin" && ln -s "$bin" "$tmp/bin/attncheck"
repro=$(sed -n 's/^ *"repro":"\(.*\)",*$/\1/p' "$f/report.json" | sed 's/\\\\/\x01/g; s/\\\//\//g; s/\\"/"/g; s/\x01/\\/g')
[ -n "$repro" ] || fail "report.json has no repro field"
n=$(ran)
(PATH="$tmp/bin:$PATH"; eval "$repro") > "$tmp/r2.txt" 2>&1
grep -q 'FAIL reproduced' "$tmp/r2.txt" || { echo "$repro"; cat "$tmp/r2.txt"; fail "the repro field did not reproduce"; }
[ "$(ran)" -gt "$n" ] || fail "the repro field did not run the kernel"

# 3. replay and merge do not run a recorded command unasked: exit 2, one line, the kernel untouched
n=$(ran)
"$bin" replay "$f" > "$tmp/r3.txt" 2> "$tmp/r3.err"
rc=$?
[ $rc -eq 2 ] || { cat "$tmp/r3.txt" "$tmp/r3.err"; fail "replay of a recorded exec: kernel: exit $rc, expected 2"; }
[ "$(wc -l < "$tmp/r3.err")" -eq 1 ] && grep -q -- '--trust-recorded-kernel' "$tmp/r3.err" || { cat "$tmp/r3.err"; fail "replay: not one line naming --trust-recorded-kernel"; }
"$bin" merge "$out" -o "$tmp/m" > "$tmp/m1.txt" 2> "$tmp/m1.err"
rc=$?
[ $rc -eq 2 ] || { cat "$tmp/m1.txt" "$tmp/m1.err"; fail "merge of a recorded exec: kernel: exit $rc, expected 2"; }
[ "$(wc -l < "$tmp/m1.err")" -eq 1 ] || { cat "$tmp/m1.err"; fail "merge: not one line"; }
[ -n "$(ls "$tmp/m/findings" 2>/dev/null)" ] && fail "merge refused but merged findings"
[ "$(ran)" -eq "$n" ] || fail "a recorded exec: kernel ran without --trust-recorded-kernel"
# ... and they do when asked, or on the kernel given
"$bin" replay "$f" --trust-recorded-kernel > "$tmp/r4.txt" 2>&1
[ $? -eq 1 ] && grep -q 'FAIL reproduced' "$tmp/r4.txt" || { cat "$tmp/r4.txt"; fail "replay --trust-recorded-kernel"; }
"$bin" merge "$out" -o "$tmp/m" --trust-recorded-kernel > "$tmp/m2.txt" 2>&1
[ $? -eq 1 ] || { cat "$tmp/m2.txt"; fail "merge --trust-recorded-kernel: expected exit 1"; }
"$bin" replay "$f" --kernel flash-f32 > "$tmp/r5.txt" 2>&1
grep -q 'FAIL NOT reproduced' "$tmp/r5.txt" || { cat "$tmp/r5.txt"; fail "replay --kernel flash-f32"; }

# 4. a recorded plugin is named, not loaded
p="$tmp/plug"
cp -r "$f" "$p"
sed 's|"kernel_spec":"[^"]*"|"kernel_spec":"./their plugin.so"|' "$f/report.json" > "$p/report.json"
"$bin" replay "$p" > "$tmp/r6.txt" 2> "$tmp/r6.err"
rc=$?
[ $rc -eq 2 ] || { cat "$tmp/r6.txt" "$tmp/r6.err"; fail "replay of a recorded plugin: exit $rc, expected 2"; }
grep -q "plugin './their plugin.so'.*not loaded" "$tmp/r6.err" || { cat "$tmp/r6.err"; fail "replay: the plugin is not named"; }
echo "ok: reproducers quoted exactly; recorded commands and plugins run only when asked"
exit 0
