#!/bin/sh
# journal_stats.sh DIR: exit 0 when DIR/stats says what DIR/journal says and what is on disk:
# cases (distinct "c" records, none repeated), cases per family, findings (distinct "f"
# records = finding directories), findings per family, findings_fail (report.json policy
# fail), judged and skipped ("c" records marked j or unmarked, s). Prints each difference otherwise. Used by tfuzz_lock.sh, tfuzz_fulldisk.sh and
# scripts/killtest.
d=${1:?usage: journal_stats.sh DIR}
[ -f "$d/journal" ] && [ -f "$d/stats" ] || { echo "journal_stats: $d has no journal or stats"; exit 1; }
ndirs=$(ls "$d/findings" 2>/dev/null | grep -vc '^\.')
nfail=$(cat "$d"/findings/*/report.json 2>/dev/null | grep -c '"policy":"fail"')
awk -v ndirs="$ndirs" -v nfail="$nfail" '
  FNR == NR {
    if ($1 == "c") { total++; if (!($2 in c)) { c[$2] = 1; cases++; fam[$3]++; judged += $4 == "j" || $4 == ""; skipped += $4 == "s" } }
    if ($1 == "f" && !($2 in f)) { f[$2] = 1; nf++; ffam[$4]++ }
    next
  }
  { split($0, kv, "="); s[kv[1]] = kv[2] }
  END {
    bad = 0
    if (total != cases) { print "journal: " total " case records, " cases " distinct"; bad = 1 }
    if (s["cases"] != cases + 0) { print "stats cases=" s["cases"] ", journal " cases + 0; bad = 1 }
    if (("judged" in s) && s["judged"] != judged + 0) { print "stats judged=" s["judged"] ", journal " judged + 0; bad = 1 }
    if (("judged" in s) && s["skipped"] != skipped + 0) { print "stats skipped=" s["skipped"] ", journal " skipped + 0; bad = 1 }
    if (s["findings"] != nf + 0) { print "stats findings=" s["findings"] ", journal " nf + 0; bad = 1 }
    if (nf + 0 != ndirs) { print "journal " nf + 0 " findings, " ndirs " finding directories"; bad = 1 }
    if (s["findings_fail"] != nfail) { print "stats findings_fail=" s["findings_fail"] ", reports " nfail; bad = 1 }
    # per family of the campaign (stats list each one; findings.NAME only when not 0)
    for (k in s) {
      if (k !~ /^family\./) continue
      n = substr(k, 8)
      if (s[k] != fam[n] + 0) { print "stats " k "=" s[k] ", journal " fam[n] + 0; bad = 1 }
      if (s["findings." n] + 0 != ffam[n] + 0) { print "stats findings." n "=" s["findings." n] + 0 ", journal " ffam[n] + 0; bad = 1 }
    }
    exit bad
  }' "$d/journal" "$d/stats"
