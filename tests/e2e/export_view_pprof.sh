#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pprof's web UI (`go tool pprof -http`) serves memscribe's pprof export of
# tests/programs/export_prog on 127.0.0.1, opened in headless Chromium: its
# graph (drawn by graphviz's dot) comes up, and its "top" page gives each
# sample type's total as `memscribe report --format=json` does (-unit=B:
# exact numbers). Screenshot: export_view_pprof.png (the graph).
source "$(dirname "$0")/export_lib.sh"
# shellcheck source=tests/e2e/view_lib.sh
source "$(dirname "$0")/view_lib.sh"
need_viewer "pprof's web UI in Chromium" go dot /usr/bin/chromedriver /usr/lib/chromium/chromium
"$PY" -c 'import selenium' 2>/dev/null || need_viewer "pprof's web UI" /usr/lib/python3/dist-packages/selenium
export HOME=$T GOCACHE=$T/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local

recorded
"$M" export --to pprof "$T/prog.mscr" -o "$T/prog.pb.gz"
port=$(view_port)
view_bg pprof 300 go tool pprof -unit=B -no_browser -http="127.0.0.1:$port" "$T/prog.pb.gz"
view_listening "$port" pprof 60
url=http://127.0.0.1:$port
view_page export_view_pprof "$url/ui/?si=alloc_space" --wait-css "svg g.node" --wait "churn" \
    --size 1280x900
grep -q "could not execute dot\|Could not execute dot" "$T/export_view_pprof.txt" && fail "no graph: graphviz"
for c in alloc_space:REPORT_BYTES alloc_objects:REPORT_ALLOCS inuse_space:REPORT_LEAKED \
    inuse_objects:REPORT_LEAKED_BLOCKS; do
    si=${c%%:*} var=${c#*:}
    view_page "pprof_top_$si" "$url/ui/top?si=$si" --wait-css "#toptable td"
    rm -f "$ART/pprof_top_$si.png"
    # The legend, in the page's menu (not shown until opened): the DOM.
    got=$(grep -o "Showing nodes accounting for [0-9]*B, [0-9.]*% of [0-9]*B total" "$T/pprof_top_$si.html" |
        sed -n 's/.* of \([0-9]*\)B total/\1/p;T;q')
    expect_eq "pprof's $si total" "$got" "${!var}"
done
grep -q "churn" "$T/pprof_top_alloc_objects.txt" || fail "no churn row in pprof's top"
view_stop pprof
echo "export_view_pprof: ok ($REPORT_BYTES bytes in $REPORT_ALLOCS allocations, $REPORT_LEAKED leaked in $REPORT_LEAKED_BLOCKS)"
