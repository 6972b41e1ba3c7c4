#!/bin/sh
# tcmd_list_caps.sh: `attncheck list` prints each kernel's ABI 2 caps after what it supports:
# "; features window,softcap,..." (ac_feat_list names), "; no LSE" and "; backward" (ABI 3
# run_backward); kernels without caps
# print neither. An exec-persistent worker's declared variants (and writes_lse false) are
# printed the same way; a one-shot exec kernel and a worker that does not declare any print none.
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
check flash-e4m3 "$all" "; features mixed_dtypes"
check flash-e5m2 "$all" "; features mixed_dtypes"
check flash-f16 "$all" "!mixed_dtypes"
check naive-f32 "$all" "!no LSE"
check naive-nolse-f32 "$all" "mixed_dtypes,descale; no LSE"
check mutant-sink-lse "$all" "; features window,"
check mutant-no-max-sub "$all" "!features"
check flash-bwd-f32 "$all" "; features window,softcap,alibi,bias,bool_mask,sinks,dropout; backward window,softcap,alibi,bias,bool_mask,sinks,dropout"
check mutant-bwd-no-lse "$all" "; backward"
check flash-f32 "$all" "!backward"
plug=$("$bin" list --kernel "$libs/tplugin_multi.so") || { echo "FAIL: list --kernel tplugin_multi.so"; exit 1; }
check multi-fail "$plug" "; features window,sinks; no LSE"
check multi-zero "$plug" "!features"
check multi-zero "$plug" "!no LSE"
check multi-zero "$plug" "!backward"
tmp=$(mktemp -d /tmp/attncheck-listcaps-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
mkworker() {   # file, answer to the hello ("-": none)
  cat > "$tmp/$1" <<EOF
#!/bin/sh
while read a b; do
  if [ "\$a" = hello ]; then [ '$2' = - ] || echo '$2'; continue; fi
  echo "error unsupported: listing only"
done
EOF
  chmod +x "$tmp/$1"
}
mkworker w1.sh 'attncheck-worker 1 {"name":"w1","dtypes":["f32"],"masks":["none"],"features":["gqa","window","sinks","mixed_dtypes"],"writes_lse":false}'
mkworker w2.sh 'attncheck-worker 1 {"name":"w2","dtypes":["f32"],"masks":["none"],"features":["softcap"],"writes_lse":true}'
mkworker w3.sh -
for w in w1 w2 w3; do
  out=$("$bin" list --kernel "exec-persistent:$tmp/$w.sh") || { echo "FAIL: list --kernel exec-persistent:$w.sh"; fail=1; }
  eval "$w=\$out"
done
check "exec-persistent:$tmp/w1.sh" "$w1" "; features window,sinks,mixed_dtypes; no LSE"
check "exec-persistent:$tmp/w2.sh" "$w2" "; features softcap"
check "exec-persistent:$tmp/w2.sh" "$w2" "!no LSE"
check "exec-persistent:$tmp/w3.sh" "$w3" "!features"
one=$("$bin" list --kernel "exec:$tmp/w1.sh {in} {out}") || { echo "FAIL: list --kernel exec:w1.sh"; fail=1; }
check "exec:$tmp/w1.sh" "$one" "!features"
printf "%s\n" "$w1" | grep -q "^  exec-persistent:" || { echo "FAIL: no exec-persistent line in: $w1"; fail=1; }
[ $fail -eq 0 ] && echo "caps listed"
exit $fail
