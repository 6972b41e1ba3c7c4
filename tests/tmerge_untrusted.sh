#!/bin/sh
# tmerge_untrusted.sh: a shard is data. merge (and replay and report) follow no link in a
# campaign directory — not its findings/, not a finding's directory, not a file —, open no FIFO
# or device, take only regular files of a finding's names and sizes, refuse a directory without a
# report.json (or with one that is no JSON object, names another signature or is too large), and
# say in one line per entry what they left out; repro.sh is written anew from report.json, every
# word of a kernel string holding $(...), backquotes, quotes and a newline quoted; corpus files,
# stats and log.jsonl are taken as data too.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
tmp=$(mktemp -d /tmp/attncheck-tmerge-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac

"$bin" gen --out "$tmp/c.npz" --dtype f32 --mask none --t 8 --dk 8 --seed 3 > /dev/null || fail "gen"
mkdir "$tmp/secret"
echo "SECRET-MARK root:x:0:0" > "$tmp/secret/passwd"
cp "$tmp/c.npz" "$tmp/secret/secret.npz"
printf 'SECRET-MARK' >> "$tmp/secret/secret.npz"

# finding DIR SIG [SPEC]: a finding written by hand, with a forged repro.sh
finding() {
  d=$1/findings/$2
  mkdir -p "$d"
  cp "$tmp/c.npz" "$d/case.npz"
  printf '{"signature":"%s","kernel":"flash-f32","kernel_spec":"%s","kind":"FAIL","policy":"fail","family":"normal","position":"first","err_w":2,"err_e":3,"size":"B1 H1/1 tq8 tk8 dk8 dv8 f32 none","elements":256,"case_index":1,"note":""}\n' \
    "$2" "${3:-flash-f32}" > "$d/report.json"
  printf '#!/bin/sh\ntouch %s/pwned\n' "$tmp" > "$d/repro.sh"
  chmod +x "$d/repro.sh"
}
# merge OUT SHARD...: merge --no-rerun within 60 s (output in OUT.out, OUT.err, exit status in rc)
merge() {
  o=$1
  shift
  timeout 60 "$bin" merge "$@" -o "$o" --no-rerun > "$o.out" 2> "$o.err"
  rc=$?
  [ $rc -eq 124 ] && fail "merge $*: did not end within 60 s"
}
# skipped OUT WHAT: exactly one line of OUT.err says WHAT was skipped
skipped() {
  [ "$(grep -c "^attncheck merge: skipped .*$2" "$1.err")" -eq 1 ] || { cat "$1.err"; fail "not one line saying $2 was skipped"; }
}
# no_secret OUT: nothing in OUT is a link or holds what the links pointed at, repro.sh never ran
no_secret() {
  [ -z "$(find "$1" -type l)" ] || { find "$1" -type l; fail "$1 holds a link"; }
  if grep -r -l SECRET-MARK "$1" "$1.out"; then fail "$1 holds what a link of the shard pointed at"; fi
  [ -e "$tmp/pwned" ] && fail "a shard's repro.sh ran"
  grep -q '^PASS  inj' "$1.out" "$1.err" && fail "a forged line in the output of merge"
  return 0
}

# 1. links at every level below the shard's root: a finding's directory, its files, a file in it
s=$tmp/s1
finding "$s" flash-f32__FAIL__normal__first
ln -s "$tmp/secret" "$s/findings/zz"
finding "$s" a__FAIL__normal__first
ln -sf "$tmp/secret/secret.npz" "$s/findings/a__FAIL__normal__first/case.npz"
finding "$s" b__FAIL__normal__first
mv "$s/findings/b__FAIL__normal__first/report.json" "$tmp/secret/report.json"
ln -s "$tmp/secret/report.json" "$s/findings/b__FAIL__normal__first/report.json"
g=$s/findings/flash-f32__FAIL__normal__first
ln -s "$tmp/secret/secret.npz" "$g/minimized.npz"
ln -s "$tmp/secret/passwd" "$g/notes"
echo "not a finding's file" > "$g/notes.txt"
mkdir "$g/sub"
merge "$tmp/m1" "$s"
[ $rc -eq 1 ] || { cat "$tmp/m1.out" "$tmp/m1.err"; fail "links: exit $rc, expected 1 (the good finding merged)"; }
no_secret "$tmp/m1"
[ "$(ls "$tmp/m1/findings")" = flash-f32__FAIL__normal__first ] || { ls -la "$tmp/m1/findings"; fail "links: merged more than the good finding"; }
[ "$(ls "$tmp/m1/findings/flash-f32__FAIL__normal__first" | tr '\n' ' ')" = "case.npz report.json repro.sh " ] ||
  { ls -la "$tmp/m1/findings/flash-f32__FAIL__normal__first"; fail "links: the merged finding holds other files"; }
skipped "$tmp/m1" 'findings/zz: a symbolic link'
skipped "$tmp/m1" 'a__FAIL__normal__first/case.npz: a symbolic link'
skipped "$tmp/m1" 'b__FAIL__normal__first/report.json: a symbolic link'
skipped "$tmp/m1" 'first/minimized.npz: a symbolic link'
skipped "$tmp/m1" 'first/notes: not a file a finding holds'
skipped "$tmp/m1" 'first/notes.txt: not a file a finding holds'
skipped "$tmp/m1" 'first/sub: not a file a finding holds'
[ "$(grep -c . "$tmp/m1.err")" -eq 7 ] || { cat "$tmp/m1.err"; fail "links: not one line per refused entry"; }
r=$tmp/m1/findings/flash-f32__FAIL__normal__first/repro.sh
grep -q pwned "$r" && fail "links: the shard's repro.sh was copied"
grep -q 'replay "$d" --kernel flash-f32' "$r" && [ -x "$r" ] || { cat "$r"; fail "links: repro.sh not written anew"; }
grep -q 'repro: .*m1/findings/flash-f32__FAIL__normal__first/repro.sh' "$tmp/m1.out" || { cat "$tmp/m1.out"; fail "links: no repro line"; }
echo "ok: links in a shard are never followed, each refused entry named once, repro.sh written anew"

# 2. FIFOs, devices, oversized files, directories without (or with a bad) report.json, bad names
s=$tmp/s2
finding "$s" flash-f32__FAIL__normal__first
for x in fifo noreport bigjson bigcase array othersig device; do finding "$s" "$x"__FAIL__normal__first; done
rm "$s/findings/fifo__FAIL__normal__first/case.npz"
mkfifo "$s/findings/fifo__FAIL__normal__first/case.npz"
mkfifo "$s/findings/flash-f32__FAIL__normal__first/minimized.npz"
rm "$s/findings/noreport__FAIL__normal__first/report.json"
head -c 2000000 /dev/zero | tr '\0' ' ' >> "$s/findings/bigjson__FAIL__normal__first/report.json"
truncate -s 3M "$s/findings/bigcase__FAIL__normal__first/case.npz"
echo '[1, 2]' > "$s/findings/array__FAIL__normal__first/report.json"
sed -i 's/"signature":"[^"]*"/"signature":"another"/' "$s/findings/othersig__FAIL__normal__first/report.json"
rm "$s/findings/device__FAIL__normal__first/case.npz"
dev=0
if mknod "$s/findings/device__FAIL__normal__first/case.npz" c 1 3 2> /dev/null; then dev=1; else rm -rf "$s/findings/device__FAIL__normal__first"; fi
nl="bad
PASS  inj f32-fake.npz - err:W=0"
mkdir "$s/findings/$nl"
cp "$tmp/c.npz" "$s/findings/$nl/case.npz"
mkfifo "$s/findings/pipe"
ATTNCHECK_MEM_CAP=2M merge "$tmp/m2" "$s"
[ $rc -eq 1 ] || { cat "$tmp/m2.out" "$tmp/m2.err"; fail "special files: exit $rc, expected 1"; }
no_secret "$tmp/m2"
[ "$(ls "$tmp/m2/findings")" = flash-f32__FAIL__normal__first ] || { ls -la "$tmp/m2/findings"; fail "special files: merged more than the good finding"; }
skipped "$tmp/m2" 'fifo__FAIL__normal__first/case.npz: a FIFO'
skipped "$tmp/m2" 'first/minimized.npz: a FIFO'
skipped "$tmp/m2" 'noreport__FAIL__normal__first: no report.json'
skipped "$tmp/m2" 'bigjson__FAIL__normal__first/report.json: [0-9]* bytes, more than'
skipped "$tmp/m2" 'bigcase__FAIL__normal__first/case.npz: [0-9]* bytes, more than'
skipped "$tmp/m2" 'array__FAIL__normal__first/report.json: not a JSON object'
skipped "$tmp/m2" 'othersig__FAIL__normal__first/report.json: its signature is not'
skipped "$tmp/m2" 'findings/bad\\nPASS  inj f32-fake.npz - err:W=0: not a finding'
skipped "$tmp/m2" 'findings/pipe: not a directory'
[ $dev -eq 0 ] || skipped "$tmp/m2" 'device__FAIL__normal__first/case.npz: a device'
[ "$(grep -c . "$tmp/m2.err")" -eq $((9 + dev)) ] || { cat "$tmp/m2.err"; fail "special files: not one line per refused entry"; }
echo "ok: FIFOs, devices (tested: $dev), oversized files, directories without a report.json and bad names refused"

# 3. a kernel string holding $(...), backquotes, quotes and a newline: quoted in repro.sh
s=$tmp/s3
spec='exec:touch '$tmp'/pwned; $(touch '$tmp'/pwned) `touch '$tmp'/pwned` "q" '"'x'"' \\ {in}
{out}'
jspec=$(printf '%s' "$spec" | sed 's/\\/\\\\/g; s/"/\\"/g' | awk 'NR > 1 { printf "\\n" } { printf "%s", $0 }')
finding "$s" execp_x__FAIL__normal__first "$jspec"
merge "$tmp/m3" "$s"
[ $rc -le 1 ] || { cat "$tmp/m3.out" "$tmp/m3.err"; fail "kernel string: exit $rc"; }
r=$tmp/m3/findings/execp_x__FAIL__normal__first/repro.sh
[ -x "$r" ] || { cat "$tmp/m3.err"; fail "kernel string: no repro.sh"; }
cat > "$tmp/fake.sh" <<EOF
#!/bin/sh
for a in "\$@"; do printf '%s\\0' "\$a"; done > "$tmp/args"
EOF
chmod +x "$tmp/fake.sh"
ATTNCHECK=$tmp/fake.sh sh "$r" > /dev/null 2>&1
printf '%s\0' replay "$tmp/m3/findings/execp_x__FAIL__normal__first" --kernel "$spec" > "$tmp/want"
cmp -s "$tmp/args" "$tmp/want" || { cat "$r"; tr '\0' '|' < "$tmp/args"; echo; fail "kernel string: repro.sh does not pass it as one word"; }
no_secret "$tmp/m3"
grep -q 'records the command kernel' "$tmp/m3.out" "$tmp/m3.err" && fail "kernel string: merge --no-rerun judged the kernel"
timeout 60 "$bin" replay "$tmp/m3/findings/execp_x__FAIL__normal__first" > "$tmp/r3.out" 2> "$tmp/r3.err"
[ $? -eq 2 ] && [ "$(grep -c . "$tmp/r3.err")" -eq 1 ] || { cat "$tmp/r3.err"; fail "kernel string: replay of a recorded command not one line and exit 2"; }
[ -e "$tmp/pwned" ] && fail "kernel string: a word of it ran"
echo "ok: a kernel string with \$(...), backquotes, quotes and a newline stays one quoted word"

# 4. corpus files, stats and log.jsonl: data too
s=$tmp/s4
finding "$s" flash-f32__FAIL__normal__first
mkdir "$s/corpus"
cp "$tmp/c.npz" "$s/corpus/s0000001.0000_normal_0000000000000001.npz"
ln -s "$tmp/secret/secret.npz" "$s/corpus/s0000002.0000_normal_0000000000000002.npz"
mkfifo "$s/corpus/s0000003.0000_normal_0000000000000003.npz"
ln -s "$tmp/secret/passwd" "$s/stats"
esc=$(printf '\033')
{
  echo '{"t":0.1,"event":"start","kernel":"flash-f32"}'
  echo 'PASS  inj f32-fake.npz - err/W=0'
  echo "{\"t\":0.2,\"event\":\"x$esc[2J\"}"
  echo '{"t":0.3,"event":"end","cases":3}'
} > "$s/log.jsonl"
merge "$tmp/m4" "$s"
no_secret "$tmp/m4"
[ "$(ls "$tmp/m4/corpus")" = s0000001.0000_normal_0000000000000001.npz ] || { ls -la "$tmp/m4/corpus"; fail "corpus: not the one regular file"; }
skipped "$tmp/m4" 'corpus/s0000002.0000_normal_0000000000000002.npz: a symbolic link'
skipped "$tmp/m4" 'corpus/s0000003.0000_normal_0000000000000003.npz: a FIFO'
skipped "$tmp/m4" 's4/stats: a symbolic link'
skipped "$tmp/m4" '2 lines of .*s4/log.jsonl that are not JSON objects'
[ "$(grep -c '"event":"end"' "$tmp/m4/log.jsonl")" -eq 1 ] || { cat "$tmp/m4/log.jsonl"; fail "log: the good lines are not merged"; }
grep -q -e 'PASS  inj' -e "$esc" "$tmp/m4/log.jsonl" && { cat -A "$tmp/m4/log.jsonl"; fail "log: a line that is not a JSON object was merged"; }
s5=$tmp/s5
mkdir -p "$s5/findings"
mkfifo "$s5/stats" "$s5/log.jsonl"
merge "$tmp/m5" "$s5"
[ $rc -eq 0 ] || { cat "$tmp/m5.err"; fail "FIFO stats and log: exit $rc"; }
skipped "$tmp/m5" 's5/stats: a FIFO'
skipped "$tmp/m5" 's5/log.jsonl: a FIFO'
echo "ok: corpus files, stats and log.jsonl are taken as data"

# 5. a shard whose findings/ is a link: not a campaign directory, nothing merged
s=$tmp/s6
mkdir "$s"
ln -s "$tmp/s1/findings" "$s/findings"
merge "$tmp/m6" "$s"
[ $rc -eq 2 ] && [ "$(grep -c . "$tmp/m6.err")" -eq 1 ] && grep -q 'findings: a symbolic link' "$tmp/m6.err" ||
  { cat "$tmp/m6.err"; fail "findings/ as a link: exit $rc, expected 2 with one line"; }
[ -z "$(ls "$tmp/m6/findings" 2>/dev/null)" ] || fail "findings/ as a link: something was merged"
echo "ok: a shard whose findings/ is a link is refused"

# 6. replay and report read a findings directory as data too
timeout 60 "$bin" replay "$tmp/s2/findings/fifo__FAIL__normal__first" --kernel flash-f32 > "$tmp/r1.out" 2> "$tmp/r1.err"
[ $? -ne 124 ] || fail "replay: hangs on a FIFO"
grep -q 'case.npz: a FIFO' "$tmp/r1.err" || { cat "$tmp/r1.out" "$tmp/r1.err"; fail "replay: the FIFO is not named"; }
timeout 60 "$bin" replay "$tmp/s1/findings/a__FAIL__normal__first" --kernel flash-f32 > "$tmp/r2.out" 2> "$tmp/r2.err"
grep -q 'case.npz: a symbolic link' "$tmp/r2.err" && ! grep -q '^PASS\|^FAIL' "$tmp/r2.out" ||
  { cat "$tmp/r2.out" "$tmp/r2.err"; fail "replay: followed the link of case.npz"; }
timeout 60 "$bin" replay "$tmp/s1/findings/b__FAIL__normal__first" --kernel flash-f32 > "$tmp/r4.out" 2> "$tmp/r4.err"
[ $? -eq 2 ] && grep -q 'report.json: a symbolic link' "$tmp/r4.err" || { cat "$tmp/r4.err"; fail "replay: followed the link of report.json"; }
for x in s1 s2; do
  timeout 60 "$bin" report "$tmp/$x" -o "$tmp/$x.html" > "$tmp/$x.rout" 2> "$tmp/$x.rerr"
  [ $? -eq 0 ] || { cat "$tmp/$x.rerr"; fail "report $x: did not write the page"; }
  grep -q SECRET-MARK "$tmp/$x.html" && fail "report $x: the page holds what a link pointed at"
  grep -q 'attncheck report: skipped' "$tmp/$x.rerr" || { cat "$tmp/$x.rerr"; fail "report $x: refused entries not named"; }
done
echo "ok: replay and report follow no link and open no FIFO"
exit 0
