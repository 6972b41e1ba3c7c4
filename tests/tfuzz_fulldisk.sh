#!/bin/sh
# tfuzz_fulldisk.sh: a full disk never drops a finding. A campaign on a small tmpfs whose space
# runs out stops at the first finding it cannot store, with exit 3 and one line; after space is
# freed, --resume evaluates that case number again and stores the finding, so the campaign ends
# with exactly the findings of the same campaign on a roomy disk, and stats equal the journal.
# The same past the sweep: tmpfs mounts of three sizes fill up at three cases, then the mount size is
# bisected until the disk fills at the first mutation of the elite pool the roomy campaign stored
# (the case where a size fills up moves whenever the generators change); after the mount is
# enlarged, --resume draws the case again as it was and stores the finding the roomy campaign
# stored, byte for byte.
# Needs a tmpfs mount in a private mount namespace (root, or unprivileged user namespaces);
# skipped (77) where neither is possible.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=${srcdir:-.}
seed=${ATTNCHECK_TEST_SEED:-20261129}
if [ -z "${ATTNCHECK_TEST_NS:-}" ]; then
  for ns in "unshare -m" "unshare -rm"; do
    if $ns sh -c 'd=$(mktemp -d) && mount -t tmpfs -o size=1m tmpfs "$d" && umount "$d"; r=$?; rmdir "$d"; exit $r' \
      > /dev/null 2>&1; then
      ATTNCHECK_TEST_NS=1 exec $ns sh "$0" "$@"
    fi
  done
  echo "SKIP: cannot mount a tmpfs in a private mount namespace"
  exit 77
fi
tmp=$(mktemp -d /tmp/attncheck-tdisk-XXXXXX) || exit 99
trap 'umount "$tmp/disk" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
run() {
  "$bin" fuzz --kernel mutant-causal-off-by-one --cases 40 --seed "$seed" --max-elems 65536 --no-minimize \
    --no-live --quiet "$@"
}

# the findings of the campaign on a roomy disk (the first 100 cases are a sweep: a function of the seed)
run --out "$tmp/ref" --corpus "$tmp/corpus-ref" > "$tmp/ref.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/ref.txt"; fail "reference campaign: exit $rc, expected 1"; }
ls "$tmp/ref/findings" | grep -v '^\.' | sort > "$tmp/ref.sigs"
[ "$(wc -l < "$tmp/ref.sigs")" -ge 5 ] || fail "reference campaign: fewer than 5 findings"

# the same on a 4 MiB tmpfs with all but 400 KiB taken
mkdir "$tmp/disk"
mount -t tmpfs -o size=4m tmpfs "$tmp/disk" || { echo "SKIP: tmpfs mount failed"; exit 77; }
avail=$(df -k "$tmp/disk" | awk 'NR == 2 { print $4 }')
dd if=/dev/zero of="$tmp/disk/filler" bs=1k count=$((avail - 400)) 2> /dev/null
dir=$tmp/disk/camp
run --out "$dir" --corpus "$tmp/corpus" > "$tmp/full.txt" 2> "$tmp/full.err"
rc=$?
[ $rc -eq 3 ] || { cat "$tmp/full.err"; fail "full disk: exit $rc, expected 3"; }
[ "$(wc -l < "$tmp/full.err")" -eq 1 ] || { cat "$tmp/full.err"; fail "full disk: not one line on stderr"; }
grep -q 'cannot store finding' "$tmp/full.err" || { cat "$tmp/full.err"; fail "full disk: the line does not name the finding"; }
stored=$(ls "$dir/findings" | grep -vc '^\.')
[ "$stored" -lt "$(wc -l < "$tmp/ref.sigs")" ] || fail "the disk did not fill up ($stored findings stored)"
echo "ok: full disk after $stored findings: $(cat "$tmp/full.err")"
sh "$src/tests/journal_stats.sh" "$dir" || fail "full disk: stats differ from the journal"

# free the space, resume: every finding of the reference is there, stats equal the journal
rm "$tmp/disk/filler"
"$bin" fuzz --resume --out "$dir" --cases 40 --no-live --quiet > "$tmp/resume.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/resume.txt"; fail "resume: exit $rc, expected 1"; }
ls "$dir/findings" | grep -v '^\.' | sort > "$tmp/got.sigs"
cmp -s "$tmp/ref.sigs" "$tmp/got.sigs" || { diff "$tmp/ref.sigs" "$tmp/got.sigs"; fail "findings differ from the reference"; }
grep -q '^cases=40$' "$dir/stats" || fail "stats: cases is not 40 after the resume"
sh "$src/tests/journal_stats.sh" "$dir" || fail "after the resume: stats differ from the journal"
echo "ok: resumed: all $(wc -l < "$tmp/got.sigs") findings of the reference stored, 40 cases"

# a disk that fills up to the last byte during a run (the kernel fills it on its third case, then
# fails: a FAIL finding of a new signature that cannot be stored): stats, rewritten in place,
# still equal the journal
umount "$tmp/disk" && mount -t tmpfs -o size=4m tmpfs "$tmp/disk" || fail "remount"
cat > "$tmp/filling.sh" <<EOF
#!/bin/sh
n=\$(cat "$tmp/calls" 2>/dev/null || echo 0)
echo \$((n + 1)) > "$tmp/calls"
[ \$n -eq 2 ] && dd if=/dev/zero of="$tmp/disk/filler" bs=64k 2>/dev/null
exit 1
EOF
chmod +x "$tmp/filling.sh"
dir=$tmp/disk/camp2
"$bin" fuzz --kernel "exec:$tmp/filling.sh {in} {out}" --cases 6 --seed "$seed" --families normal,uniform,ties --no-minimize \
  --no-live --quiet --out "$dir" > "$tmp/fill.txt" 2> "$tmp/fill.err"
rc=$?
[ $rc -eq 3 ] || { cat "$tmp/fill.err"; fail "disk filled during the run: exit $rc, expected 3"; }
grep -q 'cannot store finding' "$tmp/fill.err" || { cat "$tmp/fill.err"; fail "disk filled during the run: no line naming the finding"; }
grep -q '^cases=2$' "$dir/stats" || { cat "$dir/stats"; fail "disk filled during the run: stats do not say 2 cases"; }
sh "$src/tests/journal_stats.sh" "$dir" || fail "disk filled during the run: stats differ from the journal"
echo "ok: disk filled to the last byte during the run: stopped, stats equal the journal"

# past the sweep: 250 cases of mutant-no-rescale-sum on tmpfs mounts of several sizes
umount "$tmp/disk"
camp() { "$bin" fuzz --kernel mutant-no-rescale-sum --seed 1 --max-elems 65536 --no-minimize --no-live --quiet "$@"; }
camp --cases 250 --out "$tmp/ref2" > /dev/null 2>&1
past_sweep=0
# one mount of SIZE KiB: the campaign stops at case $n storing $sig; --resume stores it as the reference did
try_size() {
  size=$1
  mount -t tmpfs -o size=${size}k tmpfs "$tmp/disk" || fail "mount ${size}k"
  camp --cases 250 --out "$tmp/disk/c" > /dev/null 2> "$tmp/s.err"
  rc=$?
  sig=$(sed -n 's/.*cannot store finding \([^ ]*\) of case \([0-9]*\):.*/\1/p' "$tmp/s.err")
  n=$(sed -n 's/.*cannot store finding \([^ ]*\) of case \([0-9]*\):.*/\2/p' "$tmp/s.err")
  if [ -z "$sig" ] && [ $rc -le 1 ] && [ "${2:-}" = bisect ]; then   # roomy enough for the whole campaign
    n=999999
    umount "$tmp/disk"
    return 0
  fi
  [ $rc -eq 3 ] && [ -n "$sig" ] || { cat "$tmp/s.err"; fail "tmpfs ${size}k: exit $rc, no finding named"; }
  mount -o remount,size=64m "$tmp/disk" || fail "remount ${size}k"
  "$bin" fuzz --resume --out "$tmp/disk/c" --cases 250 --no-live --quiet > "$tmp/s.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { cat "$tmp/s.txt"; fail "tmpfs ${size}k: resume: exit $rc, expected 1"; }
  cmp -s "$tmp/ref2/findings/$sig/case.npz" "$tmp/disk/c/findings/$sig/case.npz" ||
    fail "tmpfs ${size}k: finding $sig of case $n lost or drawn from another case after --resume"
  grep -q "\"event\":\"redrawn\",\"case\":$n,\"exact\":true" "$tmp/disk/c/log.jsonl" || fail "tmpfs ${size}k: case $n not drawn again"
  sh "$src/tests/journal_stats.sh" "$tmp/disk/c" || fail "tmpfs ${size}k: stats differ from the journal"
  gen=$(sed -n 's/.*"generator":"\([^"]*\)".*/\1/p' "$tmp/disk/c/findings/$sig/report.json")
  case $gen in *+mut) past_sweep=1 ;; esac
  echo "ok: tmpfs ${size}k full at case $n ($gen): $sig stored after --resume, the reference's case"
  umount "$tmp/disk"
}
for size in 1500 3000 3500; do try_size $size; done
# a stop at a mutation of the elite pool: the first mutation the reference stored (its case
# number m), reached by bisecting the mount size on the case where the disk fills
m=$(for f in "$tmp"/ref2/findings/*/report.json; do
      sed -n 's/.*"generator":"[^"]*+mut".*/MUT/p' "$f" | grep -q MUT &&
        sed -n 's/.*"case_index":\([0-9]*\).*/\1/p' "$f"
    done | sort -n | head -1)
[ -n "$m" ] || fail "the reference campaign stored no finding of a mutation: lengthen it"
lo=1000 hi=6000 tries=0
while [ $past_sweep -eq 0 ] && [ $tries -lt 8 ]; do
  mid=$(((lo + hi) / 2)) tries=$((tries + 1))
  try_size $mid bisect
  if [ "$n" -lt "$m" ]; then lo=$mid; elif [ "$n" -gt "$m" ]; then hi=$mid; fi
done
[ $past_sweep -eq 1 ] || fail "no mount filled up at a mutation of the elite pool"
exit 0
