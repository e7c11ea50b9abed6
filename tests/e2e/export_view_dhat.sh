#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# valgrind's dh_view.html opens memscribe's DHAT export of tests/programs/
# export_prog in headless Chromium the way a person does it: its "Load"
# button's file input is given the file, and dh_view's own code reads it
# (export_dhat.sh embeds the file in a page instead). The page's text must
# show the totals of `memscribe report --format=json`, its console stay
# free of errors. Screenshot: export_view_dhat.png.
source "$(dirname "$0")/export_lib.sh"
# shellcheck source=tests/e2e/view_lib.sh
source "$(dirname "$0")/view_lib.sh"
DH=/usr/libexec/valgrind/dh_view.html
need_viewer "dh_view.html in Chromium" "$DH" /usr/bin/chromedriver /usr/lib/chromium/chromium
"$PY" -c 'import selenium' 2>/dev/null || need_viewer "dh_view.html in Chromium" /usr/lib/python3/dist-packages/selenium

recorded
"$M" export --to dhat "$T/prog.mscr" -o "$T/dhat.out.json"
view_page export_view_dhat "file://$DH" --pick 'input[type=file]' "$T/dhat.out.json" \
    --wait "Invocation {" --size 1280x1000
txt=$T/export_view_dhat.txt
grep -q "^ *Command: .*export_prog$" "$txt" || fail "dh_view shows no command: $(head -30 "$txt")"
grep -q "Total: *$(commas "$REPORT_BYTES") bytes (100%" "$txt" || fail "total bytes: $(grep -m1 "Total:" "$txt")"
grep -q "in $(commas "$REPORT_ALLOCS") blocks (100%" "$txt" || fail "total blocks: $(grep -m1 "Total:" "$txt")"
grep -q "At t-gmax: $(commas "$REPORT_PEAK") bytes (100%)" "$txt" || fail "peak: $(grep -m1 "t-gmax:" "$txt")"
grep -q "At t-end: *$(commas "$REPORT_LEAKED") bytes (100%)" "$txt" || fail "leaked: $(grep -m1 "t-end:" "$txt")"
grep -q ": churn (.*export_prog.c:[0-9]*:[0-9]*)" "$txt" || fail "no churn frame"
! grep -qi "error" "$txt" || fail "dh_view error: $(grep -i error "$txt" | head -3)"
echo "export_view_dhat: ok ($REPORT_BYTES bytes in $REPORT_ALLOCS blocks, peak $REPORT_PEAK, leaked $REPORT_LEAKED)"
