#!/bin/sh
# tcmd_list_caps.sh: `attncheck list` prints each kernel's ABI 2 caps after what it supports:
# "; features window,softcap,..." (ac_feat_list names) and "; no LSE"; kernels without caps
# print neither.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
libs=${abs_top_builddir:-.}/tests/.libs
# the summary line that follows kernel $1's line in the listing $2
summary() { printf '%s\n' "$2" | awk -v k="$1" 'f {print; exit} $1 == k {f=1}'; }
fail=0
check() {   # kernel, listing, expected fixed string or "!" + string that must be absent
  s=$(summary "$1" "$2")
  case "$3" in
  !*) if printf '%s\n' "$s" | grep -qF -- "${3#!}"; then echo "FAIL: $1: '${3#!}' in: $s"; fail=1; fi;;
  *) printf '%s\n' "$s" | grep -qF -- "$3" || { echo "FAIL: $1: no '$3' in: $s"; fail=1; };;
  esac
}
all=$("$bin" list --mutants) || { echo "FAIL: list --mutants"; exit 1; }
check naive-f32 "$all" "; features window,softcap,alibi,bias,bool_mask,sinks,mixed_dtypes,descale"
check flash-f32 "$all" "; features window,softcap,alibi,bias,bool_mask,sinks,mixed_dtypes,descale"
check flash-f16 "$all" "; features window,softcap,alibi,bias,bool_mask,sinks,descale"
check flash-f16 "$all" "!mixed_dtypes"
check naive-scaleq-f32 "$all" "!features"
check flash-e4m3 "$all" "!features"
check naive-f32 "$all" "!no LSE"
check naive-nolse-f32 "$all" "mixed_dtypes,descale; no LSE"
check mutant-sink-lse "$all" "; features window,"
check mutant-no-max-sub "$all" "!features"
plug=$("$bin" list --kernel "$libs/tplugin_multi.so") || { echo "FAIL: list --kernel tplugin_multi.so"; exit 1; }
check multi-fail "$plug" "; features window,sinks; no LSE"
check multi-zero "$plug" "!features"
check multi-zero "$plug" "!no LSE"
[ $fail -eq 0 ] && echo "caps listed"
exit $fail
