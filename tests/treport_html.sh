#!/bin/sh
# treport_html.sh: the HTML reports as a browser draws them. A campaign's report.html and a suite
# page are rendered in headless Chromium (Debian's chromium; SKIP 77 without it) and their
# screenshots checked by tests/png_check: not blank, every plot's frame colour present (each svg
# names its frame colour in data-frame), nothing drawn right of the page (1232 px in a
# 1400 px window) and the page ending inside the screenshot; on the suite page, nothing cut at the
# plots' left edge (page columns 16..19 white beside the grid: long case names readable).
# KEEP_SHOTS=DIR copies the screenshots into DIR to look at them.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
png_check=${abs_top_builddir:-.}/tests/png_check
seed=${ATTNCHECK_TEST_SEED:-20261129}
browser=$(command -v chromium || command -v chromium-browser) || { echo "SKIP: chromium is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/attncheck-treporthtml-XXXXXX) || exit 99
trap '[ -n "${KEEP_SHOTS:-}" ] && cp "$tmp"/*.png "$KEEP_SHOTS"/; rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off HOME="$tmp"
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }

# shot PAGE PNG HEIGHT [PNG_CHECK OPTIONS], then the checks
shot() {
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" \
    --screenshot="$2" --window-size=1400,"$3" "file://$1" > "$tmp/browser.txt" 2>&1
  [ -s "$2" ] || { cat "$tmp/browser.txt"; fail "$1: chromium wrote no screenshot"; }
  frames=$(grep -o 'data-frame="#[0-9a-f]*"' "$1" | sed 's/data-frame="\(.*\)"/--frame \1/')
  [ -n "$frames" ] || fail "$1: no plot"
  page=$1 png=$2
  shift 3
  # shellcheck disable=SC2086
  "$png_check" "$png" --page-width 1232 --blank-bottom 100 $frames "$@" || fail "$page: screenshot check failed"
}

"$bin" fuzz --kernel mutant-no-rescale-sum --cases 40 --seed "$seed" --out "$tmp/c" --log-cases --no-minimize \
  --families late_max,tile_edge,masked_rows,normal --max-t 300 --no-live --quiet > "$tmp/c.txt" 2>&1
[ $? -eq 1 ] || { cat "$tmp/c.txt"; fail "campaign: expected exit 1"; }
shot "$tmp/c/report.html" "$tmp/campaign.png" 9000
"$bin" suite --kernel flash-f32 --kernel mutant-no-rescale-sum --html "$tmp/suite.html" > "$tmp/s.txt" 2>&1
[ $? -eq 1 ] || { cat "$tmp/s.txt"; fail "suite: expected exit 1"; }
shot "$tmp/suite.html" "$tmp/suite.png" 6000 --clear-left 16 20

# the check itself fails on a page whose plot is not drawn
sed 's/<svg id="plot-err-w"/<svg id="plot-err-w" style="display:none"/' "$tmp/c/report.html" > "$tmp/c/hidden.html"
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" \
  --screenshot="$tmp/hidden.png" --window-size=1400,9000 "file://$tmp/c/hidden.html" > /dev/null 2>&1
frames=$(grep -o 'data-frame="#[0-9a-f]*"' "$tmp/c/report.html" | sed 's/data-frame="\(.*\)"/--frame \1/')
# shellcheck disable=SC2086
"$png_check" "$tmp/hidden.png" --page-width 1232 $frames > /dev/null && fail "a hidden plot went unnoticed"
echo "ok"
