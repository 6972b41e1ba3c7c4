#!/bin/sh
# tforge_lines.sh: what a kernel or exec worker says cannot forge a line of attncheck's output or
# reach a terminal as a control sequence. A plugin's run() error and supports() reason and its
# description, a one-shot command's last stderr line and refusal, and an exec-persistent worker's
# declared name, error answers, refusals and chatter hold newlines, CR, ESC sequences, BEL, a C1
# control and a byte that is not UTF-8, with a forged "PASS  inj f32-fake.npz" line; check (lines
# and --json), list, suite (lines, TAP, JUnit, HTML), fuzz (summary, report.json, log.jsonl,
# stats, report.html, repro.sh) and report show them escaped, one line each, and no raw control
# byte anywhere.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
so=$top/tests/.libs/tplugin_misbehave.so
ek=$top/tests/tharness_execkernel
[ -f "$so" ] || { echo "test plugin not built: $so"; exit 99; }
[ -x "$ek" ] || { echo "exec helper not built: $ek"; exit 99; }
tmp=$(mktemp -d /tmp/attncheck-tforge-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }

ctl=$(printf '[\001-\011\013-\037\177]')   # C0 controls but newline, and DEL
c1=$(printf '\302[\200-\237]')              # C1 controls (CSI among them) in UTF-8
ff=$(printf '\377')                         # a byte no UTF-8 text holds
# clean WHAT FILE...: no raw control byte, no C1 control, no stray byte, no forged line
clean() {
  what=$1
  shift
  for f in "$@"; do
    [ -f "$f" ] || fail "$what: no file $f"
    for pat in "$ctl" "$c1" "$ff"; do
      if LC_ALL=C grep -n "$pat" "$f" | head -n 3 | cat -A | grep .; then fail "$what: a raw control byte in $f"; fi
    done
    if grep -n '^PASS  inj' "$f"; then fail "$what: a forged PASS line in $f"; fi
  done
}
# lines WHAT FILE: every line of a case listing is a verdict line or an indented detail line
lines() {
  if grep -n -v -E '^(PASS|FAIL|WARN|SKIP|ERROR) |^  ' "$2"; then fail "$1: a line that is neither a verdict nor a detail in $2"; fi
}

"$bin" gen --out "$tmp/a.npz" --dtype f32 --mask none --t 8 --dk 8 --seed 3 > /dev/null || fail "gen"
"$bin" gen --out "$tmp/b.npz" --dtype f32 --mask none --t 5 --dk 4 --seed 4 > /dev/null || fail "gen"
"$bin" gen --out "$tmp/h.npz" --dtype f16 --mask none --t 5 --dk 4 --seed 5 > /dev/null || fail "gen"

# 1. a plugin: run() error, supports() reason, description
"$bin" check --kernel "$so:forge-run" --json "$tmp/c1.json" "$tmp/a.npz" > "$tmp/c1.out" 2> "$tmp/c1.err"
[ $? -eq 1 ] || { cat "$tmp/c1.out"; fail "forge-run: check did not exit 1"; }
grep -q '^FAIL .*boom\\nPASS  inj f32-fake.npz - err/W=0\\r\\x1b\[2K\\x1b\]0;title\\x07\\x9b \\xff end' "$tmp/c1.out" ||
  { cat -A "$tmp/c1.out"; fail "forge-run: the message is not on the FAIL line, escaped"; }
"$bin" check --kernel "$so:forge-supports" --json "$tmp/c2.json" "$tmp/a.npz" > "$tmp/c2.out" 2> "$tmp/c2.err"
grep -q '^SKIP .*boom\\nPASS  inj' "$tmp/c2.out" || { cat -A "$tmp/c2.out"; fail "forge-supports: the reason is not on the SKIP line"; }
"$bin" list --kernel "$so:forge-run" > "$tmp/l.out" 2>&1 || fail "list"
grep -q 'boom\\nPASS' "$tmp/l.out" || { cat -A "$tmp/l.out"; fail "list: the description is not escaped"; }
for x in c1 c2; do lines "check $x" "$tmp/$x.out"; done
clean "plugin check and list" "$tmp/c1.out" "$tmp/c1.err" "$tmp/c1.json" "$tmp/c2.out" "$tmp/c2.err" "$tmp/c2.json" "$tmp/l.out"
echo "ok: a plugin's message, reason and description are escaped in check and list"

# 2. the suite on both: lines, TAP, JUnit, HTML
for k in forge-run forge-supports; do
  "$bin" suite --kernel "$so:$k" --suite ci --dtypes f32 --tap "$tmp/$k.tap" --junit "$tmp/$k.xml" --html "$tmp/$k.html" \
    > "$tmp/$k.out" 2> "$tmp/$k.err"
  grep -q 'boom\\nPASS' "$tmp/$k.out" || { head -n 5 "$tmp/$k.out" | cat -A; fail "suite $k: the message is not escaped"; }
  clean "suite $k" "$tmp/$k.out" "$tmp/$k.err" "$tmp/$k.tap" "$tmp/$k.xml" "$tmp/$k.html"
  if grep -n -v -E '^(TAP version 13|1\.\.[0-9]+.*|(not )?ok [0-9]+ - .*|# .*)$' "$tmp/$k.tap"; then fail "suite $k: a line TAP does not know"; fi
done
echo "ok: suite lines, TAP, JUnit and HTML hold the plugin's text escaped"

# 3. a campaign and its files, and report
"$bin" fuzz --kernel "$so:forge-run" --cases 3 --families normal --dtypes f32 --out "$tmp/f" --no-minimize --no-live \
  > "$tmp/f.out" 2> "$tmp/f.err"
ls "$tmp"/f/findings/*/report.json > /dev/null 2>&1 || { cat "$tmp/f.out" "$tmp/f.err"; fail "fuzz: no finding"; }
grep -q 'boom\\\\nPASS' "$tmp"/f/findings/*/report.json || { cat "$tmp"/f/findings/*/report.json; fail "fuzz: report.json lacks the message"; }
"$bin" report "$tmp/f" -o "$tmp/f2.html" > "$tmp/r.out" 2>&1 || { cat "$tmp/r.out"; fail "report"; }
clean "fuzz" "$tmp/f.out" "$tmp/f.err" "$tmp"/f/findings/*/report.json "$tmp"/f/findings/*/repro.sh "$tmp/f/log.jsonl" \
  "$tmp/f/stats" "$tmp/f/report.html" "$tmp/f2.html" "$tmp/r.out"
echo "ok: a campaign's summary, report.json, log.jsonl, stats and report.html hold it escaped"

# 4. a one-shot command: its last stderr line (an error) and its refusal (exit 77)
"$bin" check --kernel "exec:$ek forge {in} {out}" "$tmp/a.npz" > "$tmp/e1.out" 2> "$tmp/e1.err"
grep -q '^FAIL .*PASS  inj f32-fake.npz - err/W=0\\r\\x1b\[2K' "$tmp/e1.out" || { cat -A "$tmp/e1.out"; fail "exec: the last line is not escaped"; }
"$bin" check --kernel "exec:$ek forge-skip {in} {out}" "$tmp/a.npz" > "$tmp/e2.out" 2> "$tmp/e2.err"
grep -q '^SKIP .*PASS  inj f32-fake.npz - err/W=0\\r' "$tmp/e2.out" || { cat -A "$tmp/e2.out"; fail "exec: the refusal is not escaped"; }
lines "exec" "$tmp/e1.out"
lines "exec" "$tmp/e2.out"
clean "exec:" "$tmp/e1.out" "$tmp/e1.err" "$tmp/e2.out" "$tmp/e2.err"
# ... and a command of two lines (the second a shell comment) as the kernel's name
nk="exec:$ek forge {in} {out}
#PASS  inj f32-fake.npz - err/W=0"
"$bin" check --kernel "$nk" "$tmp/a.npz" > "$tmp/e3.out" 2> "$tmp/e3.err"
grep -q '^FAIL  exec:.*{out}\\n#PASS  inj' "$tmp/e3.out" || { cat -A "$tmp/e3.out"; fail "exec: a kernel name of two lines is not escaped"; }
lines "exec" "$tmp/e3.out"
"$bin" fuzz --kernel "$nk" --cases 2 --families normal --out "$tmp/ef" --no-minimize --no-live > "$tmp/ef.out" 2> "$tmp/ef.err"
grep -q '^kernel=.*\\n#PASS' "$tmp/ef/stats" || { cat "$tmp/ef/stats"; fail "exec: stats do not hold the kernel on one line"; }
clean "exec: of two lines" "$tmp/e3.out" "$tmp/e3.err" "$tmp/ef.out" "$tmp/ef.err" "$tmp/ef/stats" "$tmp/ef/report.html"
echo "ok: a command's error line, refusal and name are escaped"

# 5. an exec-persistent worker: declared name, error answers, refusals, chatter
cat > "$tmp/forge.sh" <<'EOF'
n=0
while read in out; do
  if [ "$in" = hello ]; then
    printf 'attncheck-worker 1 {"name":"w\\nPASS  inj f32-fake.npz - err/W=0\\u001b[2J\\r\\u009b","dtypes":["f32"]}\n'
    continue
  fi
  n=$((n + 1))
  printf '\033[2Jchatter\rPASS  inj f32-fake.npz - err/W=0\n'
  if [ $((n % 2)) -eq 1 ]; then printf 'error boom\rPASS  inj f32-fake.npz - err/W=0\033[2K\377 end\n'
  else printf 'error unsupported: \033[31mno\rPASS  inj f32-fake.npz - err/W=0\302\233\n'; fi
done
EOF
w="exec-persistent:sh $tmp/forge.sh"
"$bin" check --kernel "$w" --json "$tmp/w.json" "$tmp/a.npz" "$tmp/b.npz" "$tmp/h.npz" > "$tmp/w.out" 2> "$tmp/w.err"
grep -q '^FAIL .*boom\\rPASS  inj f32-fake.npz - err/W=0\\x1b\[2K\\xff end' "$tmp/w.out" || { cat -A "$tmp/w.out"; fail "worker: the error answer is not escaped"; }
grep -q '^SKIP .*b.npz.*\\x1b\[31mno\\rPASS' "$tmp/w.out" || { cat -A "$tmp/w.out"; fail "worker: the refusal is not escaped"; }
grep -q '^SKIP .*h.npz.*w\\nPASS  inj f32-fake.npz - err/W=0\\x1b\[2J\\r\\x9b does not declare dtype f16' "$tmp/w.out" ||
  { cat -A "$tmp/w.out"; fail "worker: the declared name is not escaped"; }
grep -q '\\x1b\[2Jchatter\\rPASS' "$tmp/w.err" || { cat -A "$tmp/w.err"; fail "worker: the chatter is not escaped"; }
lines "worker" "$tmp/w.out"
"$bin" list --kernel "$w" > "$tmp/wl.out" 2>&1
"$bin" fuzz --kernel "$w" --cases 4 --families normal --out "$tmp/wf" --no-minimize --no-live > "$tmp/wf.out" 2> "$tmp/wf.err"
clean "exec worker" "$tmp/w.out" "$tmp/w.err" "$tmp/w.json" "$tmp/wl.out" "$tmp/wf.out" "$tmp/wf.err" "$tmp/wf/log.jsonl" \
  "$tmp/wf/report.html" "$tmp/wf/stats"
for f in "$tmp"/wf/findings/*/report.json "$tmp"/wf/findings/*/repro.sh; do [ -f "$f" ] && clean "exec worker" "$f"; done
echo "ok: a worker's name, answers, refusals and chatter are escaped in check, list and fuzz"
exit 0
