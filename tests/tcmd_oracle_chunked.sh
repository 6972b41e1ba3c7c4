#!/bin/sh
# tcmd_oracle_chunked.sh: without -o, `attncheck oracle` computes a large row selection in chunks
# of rows (memory: the inputs plus one chunk); its summary equals the one-run summary (with -o).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-chunk-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
"$bin" gen --out "$tmp/c.npz" --t 2048 --dk 32 --mask causal --seed 3 >/dev/null || { echo "FAIL: gen"; exit 1; }
"$bin" oracle "$tmp/c.npz" --rows edges+8 --no-cache > "$tmp/chunked.txt" 2>&1 || { cat "$tmp/chunked.txt"; echo "FAIL: chunked run"; exit 1; }
"$bin" oracle "$tmp/c.npz" --rows edges+8 --no-cache -o "$tmp/o.npz" > "$tmp/one.txt" 2>&1 || { cat "$tmp/one.txt"; echo "FAIL: one run"; exit 1; }
head -n 2 "$tmp/chunked.txt" > "$tmp/a"
head -n 2 "$tmp/one.txt" > "$tmp/b"
cat "$tmp/a"
cmp -s "$tmp/a" "$tmp/b" || { diff "$tmp/a" "$tmp/b"; echo "FAIL: the chunked summary differs from the one-run summary"; exit 1; }
grep -q "of 2048 rows" "$tmp/a" || { echo "FAIL: unexpected summary"; exit 1; }
echo "ok: chunked and one-run summaries agree"
