#!/bin/sh
# tests/layering.sh [ROOT]: fails when a source file includes a header of a layer above its own.
# The layers, lowest first (each folder's README.md says what it owns):
#   1 src/core   2 oracle   3 kernels (cuda, mutants, testkernels)   4 src/judge
#   5 fuzz, fuzz/families   6 fuzz/engine, fuzz/report   7 src/api (libattncheck)   8 src/cli
# Headers are included by name ("x.h"): a name resolves to the including file's own folder
# first, then to the one layer folder that holds it (a name in two folders is an error);
# names found in no layer folder (config.h, system headers) are not checked. Every C file
# under src/ and fuzz/ must lie in a layer folder. Exit 0: clean; 1: violations listed.
root=${1:-${srcdir:-.}}
LAYERS='1 src/core
2 oracle
3 kernels
3 kernels/cuda
3 kernels/mutants
3 kernels/testkernels
4 src/judge
5 fuzz
5 fuzz/families
6 fuzz/engine
6 fuzz/report
7 src/api
8 src/cli'
cd "$root" || { echo "layering: cannot enter $root" >&2; exit 2; }
missing=$(echo "$LAYERS" | while read -r rank dir; do [ -d "$dir" ] || echo "$dir"; done)
if [ -n "$missing" ]; then
	echo "layering: layer folders missing under $root:" $missing
	exit 1
fi
list=$(echo "$LAYERS" | while read -r rank dir; do
	for f in "$dir"/*.c "$dir"/*.h "$dir"/*.cu "$dir"/*.cuh; do
		[ -f "$f" ] && echo "$rank $dir $f"
	done
done)
stray=$(find src fuzz -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' | while read -r f; do
	d=$(dirname "$f")
	echo "$LAYERS" | awk -v d="$d" '$2 == d { found = 1 } END { exit !found }' || echo "$f"
done)
status=0
if [ -n "$stray" ]; then
	for f in $stray; do echo "layering: $f is in no layer folder"; done
	status=1
fi
# pass 1: which folder (and layer) holds each header name; pass 2: every #include "..." line.
echo "$list" | awk '
	{ rank[$3] = $1; dir[$3] = $2; n = split($3, p, "/"); base = p[n]
	  if (base ~ /\.(h|cuh)$/) { if (base in hdir && hdir[base] != $2) dup[base] = 1
	                              hdir[base] = $2; hrank[base] = $1 }
	  files[++nf] = $3 }
	END {
	  bad = 0
	  for (b in dup) { printf "layering: header %s is in more than one layer folder\n", b; bad = 1 }
	  for (i = 1; i <= nf; i++) {
	    f = files[i]; ln = 0
	    while ((getline line < f) > 0) {
	      ln++
	      if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
	      name = line; sub(/^[^"]*"/, "", name); sub(/".*$/, "", name)
	      if ((dir[f] "/" name) in rank) { r = rank[dir[f] "/" name]; hd = dir[f] }
	      else if (name in hrank) { r = hrank[name]; hd = hdir[name] }
	      else continue
	      if (r > rank[f]) {
	        printf "layering: %s:%d includes %s of %s (layer %d) from layer %d (%s)\n", f, ln, name, hd, r, rank[f], dir[f]
	        bad = 1
	      }
	    }
	    close(f)
	  }
	  exit bad
	}' || status=1
[ $status -eq 0 ] && echo "layering: $(echo "$list" | wc -l) files, no include reaches a higher layer"
exit $status
