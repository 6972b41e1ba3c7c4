#!/bin/sh
# tests/layering_selftest.sh: tests/layering.sh passes on a copy of the tree and fails on the same
# copy with an include that reaches up a layer, with a C file outside the layer folders, and with
# one header name in two layer folders.
src=${srcdir:-.}
check="$src/tests/layering.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
copy() {
	rm -rf "$tmp/t" && mkdir "$tmp/t" &&
	(cd "$src" && tar cf - --exclude='*.o' --exclude='*.a' src oracle kernels fuzz) | (cd "$tmp/t" && tar xf -)
}
fail=0
expect() { # expect RC PATTERN: run the check on the copy
	out=$("$check" "$tmp/t" 2>&1); rc=$?
	if [ "$rc" -ne "$1" ] || ! echo "$out" | grep -q -- "$2"; then
		echo "FAIL: expected rc $1 and '$2', got rc $rc:"; echo "$out"; fail=1
	else
		echo "ok: rc $rc, $(echo "$out" | grep -- "$2" | head -1)"
	fi
}
copy && expect 0 'no include reaches a higher layer'
copy && printf '#include "judge.h"\n' >> "$tmp/t/src/core/util.c" &&
	expect 1 'src/core/util.c:[0-9]* includes judge.h of src/judge (layer 4) from layer 1'
copy && printf '#include "campaign.h"\n' >> "$tmp/t/fuzz/families/gen_normal.c" &&
	expect 1 'gen_normal.c:[0-9]* includes campaign.h of fuzz/engine (layer 6) from layer 5'
copy && printf '#include "fuzz.h"\n' >> "$tmp/t/oracle/ziv.c" && expect 1 'oracle/ziv.c'
copy && printf 'int x;\n' > "$tmp/t/src/stray.c" && expect 1 'src/stray.c is in no layer folder'
copy && cp "$tmp/t/src/judge/tap.h" "$tmp/t/src/core/tap.h" && expect 1 'header tap.h is in more than one'
exit $fail
