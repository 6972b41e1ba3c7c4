#!/bin/sh
# treadme.sh: the README doc test. Every command block of README.md and examples/plugin/README.md
# runs as a reader would paste it, so the READMEs cannot drift from the tool.
#
# What is a command block: an indented code block (4 spaces, after a blank line) or a fenced one
# whose info string is sh, bash, shell or console (other fences, such as ```c, are not commands).
# The last non-blank line before a block may annotate it with an HTML comment (invisible when the
# README is rendered); several annotations are separated by ';' (a reason in parentheses may hold one):
#   <!-- doctest: skip (REASON) -->        not run (a build, a GPU, apt-get, minutes of benchmarks,
#                                          text that is not a command); the reason is printed
#   <!-- doctest: needs numpy -->          run only where python3 imports numpy (also: torch,
#                                          chromium, nvidia-smi, slurmctld: a program on PATH); else SKIP
#   <!-- doctest: may exit 1 (REASON) -->  its lines may exit 1 (a verdict with policy fail, as the
#                                          mutant demonstrations do); otherwise every line must exit 0
# An unannotated block that cannot run as written fails the test, naming the README line.
#
# How blocks run: in README order, one bash per block, each line on its own (a line ending in '\'
# continues on the next; a compound command must stay on one line), its exit status checked, the
# whole block under a time limit of 120 s. Every block of a README runs in one scratch copy of the
# README's folder (examples/ and python/ of the source tree are copied in, so README paths such as
# python/attncheck/worker/numpy_sdpa.py resolve), files persisting from block to block as in one terminal.
# The environment (printed): the built attncheck first on PATH; HOME, TMPDIR and the oracle cache in
# the scratch directory; pkg-config finds attncheck.pc with the build tree's <attncheck/kernel.h>
# (what `make install` provides); python3 is configure's numpy python where the first python3 on
# PATH lacks numpy. Rewrites (each printed where applied):
#   --time D                      -> --cases 20       (campaigns of 8h become 20 cases: a bound the
#                                                      clock does not move; dropped beside --cases)
#   --cases N (N > 50)            -> --cases 50       (a campaign of 50 cases, its findings minimized)
#   /tmp/                         -> SCRATCH/tmp/     (no file outside the scratch directory)
#   suite of an exec-persistent:  -> --dtypes f32 added (a Python worker takes 40 s for all dtypes)
# The summary counts the blocks run and skipped, with each skip's reason.
set -u
src=$(cd "${srcdir:-.}" && pwd) || exit 99
top=$(cd "${abs_top_builddir:-.}" && pwd) || exit 99
files=${TREADME_FILES:-"README.md examples/plugin/README.md"}
[ -x "$top/attncheck" ] || { echo "attncheck not built in $top"; exit 99; }
[ -f "$top/include/attncheck/kernel.h" ] || { echo "no $top/include/attncheck/kernel.h"; exit 99; }
command -v bash > /dev/null 2>&1 || { echo "SKIP: no bash"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-readme-XXXXXX") || exit 99
trap 'chmod -R u+w "$scratch" 2> /dev/null; rm -rf "$scratch"' EXIT
mkdir "$scratch/bin" "$scratch/home" "$scratch/tmp" "$scratch/pkgconfig" "$scratch/blocks" || exit 99

# The environment of every block.
printf '#!/bin/sh\nexec "%s/attncheck" "$@"\n' "$top" > "$scratch/bin/attncheck"
chmod +x "$scratch/bin/attncheck"
ver=$("$top/attncheck" --version | sed 's/^attncheck //')
printf 'Name: attncheck\nDescription: attncheck kernel ABI (build tree)\nVersion: %s\nCflags: -I%s/include\n' \
  "$ver" "$top" > "$scratch/pkgconfig/attncheck.pc"
has_numpy=no
if python3 -c 'import numpy' > /dev/null 2>&1; then
  has_numpy=yes
elif [ -n "${PYTHON_NUMPY:-}" ] && [ "$PYTHON_NUMPY" != none ] && "$PYTHON_NUMPY" -c 'import numpy' > /dev/null 2>&1; then
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$PYTHON_NUMPY" > "$scratch/bin/python3"
  chmod +x "$scratch/bin/python3"
  has_numpy=yes
  echo "env: python3 is $PYTHON_NUMPY (the first python3 on PATH has no numpy)"
fi
PATH="$scratch/bin:$PATH" HOME="$scratch/home" TMPDIR="$scratch/tmp" PKG_CONFIG_PATH="$scratch/pkgconfig"
PYTHONDONTWRITEBYTECODE=1
export PATH HOME TMPDIR PKG_CONFIG_PATH PYTHONDONTWRITEBYTECODE
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR ATTNCHECK_CACHE MAKEFLAGS MFLAGS MAKELEVEL 2> /dev/null || :
echo "env: PATH starts with attncheck -> $top/attncheck; HOME, TMPDIR in $scratch; /tmp/ in a command is $scratch/tmp/"
echo "env: pkg-config --cflags attncheck = $(pkg-config --cflags attncheck 2> /dev/null || echo '(no pkg-config)')"

# has NAME: is the optional software a block needs present?
has() {
  case $1 in
  numpy) [ "$has_numpy" = yes ] ;;
  torch) python3 -c 'import torch' > /dev/null 2>&1 ;;
  chromium) command -v chromium > /dev/null 2>&1 || command -v chromium-browser > /dev/null 2>&1 ;;
  *) command -v "$1" > /dev/null 2>&1 ;;
  esac
}

# Splits a README into blocks: $scratch/blocks/N holds "@ FILE LINE", "! ANNOTATION" and the
# block's lines as "LINE<TAB>TEXT" (indentation removed, '\' continuations joined).
split_blocks() { # FILE TAG
  awk -v file="$1" -v out="$scratch/blocks/$2" '
    function flush() {
      if (nl > 0) { n++; f = sprintf("%s-%03d", out, n); print "@ " file " " start > f
        # one "! ITEM" per annotation item, split at semicolons outside parentheses
        item = ""; depth = 0
        for (k = 1; k <= length(ann); k++) {
          ch = substr(ann, k, 1)
          if (ch == "(") depth++
          if (ch == ")") depth--
          if (ch == ";" && depth == 0) { print "! " item > f; item = "" } else item = item ch
        }
        if (item != "") print "! " item > f
        for (k = 1; k <= nl; k++) print lines[k] > f
        close(f) }
      nl = 0; inblock = 0; cont = ""
    }
    function add(ln, text) {
      if (cont != "") { text = cont " " text; ln = contln }
      if (text ~ /\\$/) { cont = substr(text, 1, length(text) - 1); contln = ln; return }
      cont = ""; if (text ~ /^[ \t]*(#|$)/) return
      lines[++nl] = ln "\t" text
    }
    BEGIN { n = 0; nl = 0; fence = ""; prev = ""; lastnb = ""; inblock = 0 }
    {
      line = $0
      if (fence != "") {
        if (line ~ /^(```|~~~)[ \t]*$/) { if (cmd) flush(); fence = ""; lastnb = line; prev = line; next }
        if (cmd) add(NR, line)
        next
      }
      if (inblock) {
        if (line ~ /^(    |\t)/) { t = line; sub(/^(    |\t)/, "", t); add(NR, t); prev = line; next }
        if (line ~ /^[ \t]*$/) { prev = line; next }
        flush()
      }
      if (line ~ /^(```|~~~)/) {
        info = line; sub(/^(```|~~~)[ \t]*/, "", info); sub(/[ \t].*/, "", info)
        fence = substr(line, 1, 3); cmd = (info == "sh" || info == "bash" || info == "shell" || info == "console")
        if (cmd) { start = NR + 1; ann = annot(lastnb) }
        prev = line; next
      }
      if (line ~ /^(    |\t)[^ \t]/ && prev ~ /^[ \t]*$/ && lastnb !~ /^[ \t]*([-*+]|[0-9]+\.)[ \t]/) {
        inblock = 1; start = NR; ann = annot(lastnb); t = line; sub(/^(    |\t)/, "", t); add(NR, t); prev = line; next
      }
      if (line !~ /^[ \t]*$/) lastnb = line
      prev = line
    }
    function annot(s) {
      if (s !~ /^[ \t]*<!--[ \t]*doctest:/) return ""
      sub(/^[ \t]*<!--[ \t]*doctest:[ \t]*/, "", s); sub(/[ \t]*-->[ \t]*$/, "", s); return s
    }
    END { if (inblock) flush() }
  ' "$src/$1"
}

nfile=0
for f in $files; do
  [ -f "$src/$f" ] || { echo "FAIL: $f: no such README"; exit 1; }
  nfile=$((nfile + 1))
  split_blocks "$f" "$(printf 'f%02d' "$nfile")"
done

ran=0 skipped=0 failed=0 rewrites=0
skips=""
# rewrite LINE: the documented rewrites, printed when one applies
rewrite() {
  case "$1" in
  *--cases*) tsub='s#--time[ =][^ ]*##g' ;;
  *) tsub='s#--time[ =][^ ]*#--cases 20#g' ;;
  esac
  new=$(printf '%s\n' "$1" | sed -e "$tsub" -e "s#/tmp/#$scratch/tmp/#g" \
    -e 's#--cases[ =]\([5-9][0-9]\|[1-9][0-9][0-9][0-9]*\)\([^0-9]\|$\)#--cases 50\2#g')
  case $new in *"attncheck suite "*exec-persistent:*) case $new in *--dtypes*) ;; *) new=$(printf '%s\n' "$new" | sed 's/attncheck suite /attncheck suite --dtypes f32 /') ;; esac ;; esac
  printf '%s\n' "$new"
}
for b in "$scratch"/blocks/f*; do
  [ -f "$b" ] || continue
  set -- $(sed -n 's/^@ //p' "$b")
  file=$1 start=$2
  where="$file:$start"
  reason=""
  may1=no
  sed -n 's/^! [ \t]*//p' "$b" | sed 's/[ \t]*$//' > "$b.ann"
  while read -r a; do
    case $a in
    "skip ("*")") reason=$(printf '%s' "$a" | sed 's/^skip (//; s/)$//') ;;
    "needs "*) need=${a#needs }; has "$need" || reason="needs $need, absent here" ;;
    "may exit 1 ("*")") may1=yes ;;
    *) echo "FAIL: $where: unknown doctest annotation '$a' (skip (REASON), needs NAME, may exit 1 (REASON))"; exit 1 ;;
    esac
  done < "$b.ann"
  if [ -n "$reason" ]; then
    skipped=$((skipped + 1))
    echo "SKIP  $where ($reason)"
    skips="$skips
  $where: $reason"
    continue
  fi
  # the block's folder in the scratch tree: README.md at the root, examples/plugin/README.md there
  dir="$scratch/work/$(dirname "$file")"
  if [ ! -d "$scratch/work" ]; then
    mkdir "$scratch/work" && cp -R "$src/examples" "$scratch/work/" && { [ ! -d "$src/python" ] || cp -R "$src/python" "$scratch/work/"; } && chmod -R u+w "$scratch/work" || exit 99
  fi
  script="$b.bash"
  {
    echo "cd '$dir' || exit 99"
    grep "$(printf '^[0-9]*\t')" "$b" | while IFS="$(printf '\t')" read -r ln text; do
      new=$(rewrite "$text")
      shown=$(printf '%s\n' "$new" | sed "s#$scratch/tmp/#/tmp/#g")
      if [ "$shown" != "$text" ]; then echo "echo 'rewritten $file:$ln: $(printf '%s' "$shown" | sed "s/'/'\\\\''/g")' >&2"; fi
      echo 't0=$(date +%s)'
      printf '%s\n' "$new"
      printf 'rc=$?; t=$(($(date +%%s) - t0)); [ $t -lt 5 ] || echo "slow  %s:%s: $t s" >&2; if [ $rc -ne 0 ] && ! { [ $rc -eq 1 ] && [ %s = yes ]; }; then echo "FAIL  %s:%s exited $rc: %s" | head -c 400; echo; exit 1; fi\n' \
        "$file" "$ln" "$may1" "$file" "$ln" "$(printf '%s' "$text" | sed 's/[\\"$`]/\\&/g')"
    done
  } > "$script"
  [ -d "$dir" ] || { echo "FAIL: $where: no folder $dir"; exit 1; }
  t0=$(date +%s)
  timeout 120 bash "$script" > "$b.out" 2>&1
  rc=$?
  t1=$(date +%s)
  grep -c '^rewritten ' "$b.out" > "$b.nrw" || :
  rewrites=$((rewrites + $(cat "$b.nrw")))
  if [ $rc -eq 0 ]; then
    ran=$((ran + 1))
    echo "ran   $where ($(grep -c "$(printf '^[0-9]*\t')" "$b") lines, $((t1 - t0)) s)"
    grep '^rewritten \|^slow ' "$b.out" | sed 's/^/      /'
  else
    failed=$((failed + 1))
    echo "FAIL  $where (a block of $(grep -c "$(printf '^[0-9]*\t')" "$b") lines, exit $rc$([ $rc -eq 124 ] && echo ': over 120 s')):"
    tail -n 25 "$b.out" | sed 's/^/      /'
  fi
done
echo "README doc test: $ran blocks ran, $skipped skipped, $failed failed; $rewrites lines rewritten"
[ -n "$skips" ] && echo "skipped:$skips"
[ $((ran + skipped + failed)) -gt 0 ] || { echo "FAIL: no command block found in $files"; exit 1; }
[ "$failed" -eq 0 ] || exit 1
exit 0
