#!/bin/sh
# tfuzz_errors.sh: the tool's own failures are findings about the tool. An exec worker kills the
# campaign worker that judges its third case (the attncheck process two levels above it: campaign
# worker, then the harness's child that runs the kernel), as a bug of attncheck would: the campaign
# exits 3, its summary says "attncheck failed on 1 cases" and names DIR/errors/case-2.npz, which is
# the case the worker was handed (the same hash), drawn again from the journal, beside case-2.sh, a
# one-line reproducer that runs. A kernel that crashes itself stays a CRASH finding (exit 1, no
# errors/). No Python needed.
set -u
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
[ -x "$bin" ] || { echo "attncheck binary not found at $bin"; exit 99; }
[ -r /proc/self/stat ] || { echo "SKIP: no /proc (the worker finds its ancestors there)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tferr-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fail() { echo "FAIL: $*"; exit 1; }
hash_of() { "$bin" info "$1" | sed -n 's/^ *hash *//p'; }

# the worker: refuses every case; on its third, once, keeps the case and kills the campaign worker
cat > "$tmp/killer.sh" << EOF
#!/bin/sh
n=0
while read a b; do
  if [ "\$a" = hello ]; then echo 'attncheck-worker 1 {"name":"killer","dtypes":["f32"]}'; continue; fi
  n=\$((n + 1))
  if [ \$n -eq 3 ] && [ ! -e "$tmp/killed" ]; then
    : > "$tmp/killed"
    cp "\$a" "$tmp/handed.npz"
    p=\$PPID w= s=
    while [ "\$p" -gt 1 ]; do
      if grep -q attncheck /proc/\$p/comm; then w=\$s; s=\$p; fi
      p=\$(cut -d' ' -f4 /proc/\$p/stat)
    done
    [ -n "\$w" ] && kill -KILL "\$w"
  fi
  echo "error unsupported: refused by the test worker"
done
EOF
chmod +x "$tmp/killer.sh"
"$bin" fuzz --kernel "exec-persistent:$tmp/killer.sh" --out "$tmp/c" --cases 8 --families normal --no-live \
  --allow-all-skipped > "$tmp/1.txt" 2>&1
rc=$?
[ -f "$tmp/handed.npz" ] || { cat "$tmp/1.txt"; fail "the worker never reached its third case"; }
[ $rc -eq 3 ] || { cat "$tmp/1.txt"; fail "a campaign whose worker died: exit $rc, expected 3"; }
grep -q "^attncheck failed on 1 cases" "$tmp/1.txt" || { cat "$tmp/1.txt"; fail "no 'attncheck failed on 1 cases' in the summary"; }
grep -q "$tmp/c/errors/case-2.npz" "$tmp/1.txt" || { cat "$tmp/1.txt"; fail "the summary does not name errors/case-2.npz"; }
[ -f "$tmp/c/errors/case-2.npz" ] && [ -x "$tmp/c/errors/case-2.sh" ] || { ls -la "$tmp/c" "$tmp/c/errors"; fail "errors/case-2.npz and .sh not kept"; }
[ "$(hash_of "$tmp/c/errors/case-2.npz")" = "$(hash_of "$tmp/handed.npz")" ] ||
  fail "errors/case-2.npz is not the case the worker was on ($(hash_of "$tmp/c/errors/case-2.npz") vs $(hash_of "$tmp/handed.npz"))"
[ "$(grep -c '^exec ' "$tmp/c/errors/case-2.sh")" -eq 1 ] || { cat "$tmp/c/errors/case-2.sh"; fail "not a one-line reproducer"; }
grep -q '^cases=8$' "$tmp/c/stats" && grep -q '^errors=1$' "$tmp/c/stats" || { cat "$tmp/c/stats"; fail "stats"; }
grep -q '"event":"worker-died"' "$tmp/c/log.jsonl" || fail "no worker-died event in log.jsonl"
# the reproducer runs (the worker no longer kills: the case is refused, SKIP, exit 0)
"$tmp/c/errors/case-2.sh" > "$tmp/2.txt" 2>&1 || { cat "$tmp/2.txt"; fail "errors/case-2.sh: exit $?"; }
grep -q "^SKIP .*case-2.npz" "$tmp/2.txt" || { cat "$tmp/2.txt"; fail "errors/case-2.sh did not judge the case"; }
echo "ok: a dead campaign worker: exit 3, errors/case-2.npz (the case it was on) and its reproducer"

# a kernel's own crash is the kernel's: a CRASH finding, no errors/
"$bin" fuzz --kernel 'exec-persistent:kill -SEGV $$' --out "$tmp/k" --cases 2 --families normal --no-minimize --no-live \
  > "$tmp/3.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && ls "$tmp/k/findings" | grep -q '__CRASH__' || { cat "$tmp/3.txt"; fail "a crashing kernel: exit $rc, expected a CRASH finding"; }
[ ! -e "$tmp/k/errors" ] && ! grep -q "attncheck failed" "$tmp/3.txt" || fail "a kernel's crash counted as attncheck's"
echo "ok: a kernel's crash stays a CRASH finding"
exit 0
