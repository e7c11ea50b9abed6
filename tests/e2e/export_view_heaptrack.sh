#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# heaptrack_gui opens memscribe's heaptrack export of tests/programs/
# export_prog under Xvfb (issue 46: it crashed on every export, reading an
# allocation index it had not seen): it does not crash, its window comes
# up, and its summary, read through the accessibility tree, shows the
# numbers of `memscribe report --format=json` (calls, temporary, peak,
# leaked) and the machine's memory. Screenshot: export_view_heaptrack.png.
source "$(dirname "$0")/export_lib.sh"
# shellcheck source=tests/e2e/view_lib.sh
source "$(dirname "$0")/view_lib.sh"
need_viewer heaptrack_gui heaptrack_gui
view_desktop

recorded
"$M" export --to heaptrack "$T/prog.mscr" -o "$T/prog.heaptrack.zst"
# The summary is there once the file is read (the labels' text, one widget
# per column of it).
read=1
view_open heaptrack_gui "Heaptrack - prog.heaptrack.zst" "total memory leaked:" \
    heaptrack_gui "$T/prog.heaptrack.zst" || read=0
view_alive heaptrack_gui
# The picture once the window stops changing (view_shot): the summary and
# its tables drawn (where its widgets were not readable, the one sign that
# the file was read).
view_shot "$VIEW_WIN" export_view_heaptrack
if [ "$read" = 0 ]; then
    view_stop heaptrack_gui
    echo "export_view_heaptrack: ok (window and screenshot; numbers not read)"
    exit 0
fi

shows() { # what text
    grep -qF -- "$2" "$T/heaptrack_gui.a11y" || fail "heaptrack_gui's $1: want '$2' in: $(grep -F -- "${2%%|*}" "$T/heaptrack_gui.a11y")"
}
shows calls "calls to allocation functions: | $(commas "$REPORT_ALLOCS") ("
shows temporary "temporary allocations: | $(commas "$REPORT_TEMPORARY") ("
shows peak "peak heap memory consumption: | $(view_size "$REPORT_PEAK" metric) after"
shows leaked "total memory leaked: | $(view_size "$REPORT_LEAKED" metric)"
grep -q "total system memory: | [1-9]" "$T/heaptrack_gui.a11y" ||
    fail "system memory: $(grep -o "total system memory: | [^ ]*" "$T/heaptrack_gui.a11y")"
# The tables name the program's functions.
grep -q "^ *churn in export_prog \[table cell\]" "$T/heaptrack_gui.a11y" || fail "no churn row in the summary's tables"
view_stop heaptrack_gui
echo "export_view_heaptrack: ok ($REPORT_ALLOCS calls, $REPORT_TEMPORARY temporary, peak $(view_size "$REPORT_PEAK" metric), leaked $(view_size "$REPORT_LEAKED" metric))"
