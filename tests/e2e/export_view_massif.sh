#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# massif-visualizer opens memscribe's massif export of tests/programs/
# export_prog under Xvfb: it does not crash, its window comes up, and its
# list of snapshots, read through the accessibility tree, has every
# snapshot with the peak's and the last one's heap as `memscribe report
# --format=json` gives them. The detailed snapshots (every 10th, issue 46)
# are what its per-site bands are drawn through; export_massif.sh checks
# with ms_print that their sites add up to at most their totals.
# Screenshot: export_view_massif.png.
source "$(dirname "$0")/export_lib.sh"
# shellcheck source=tests/e2e/view_lib.sh
source "$(dirname "$0")/view_lib.sh"
need_viewer massif-visualizer massif-visualizer
view_desktop

recorded
"$M" export --to massif "$T/prog.mscr" -o "$T/prog.massif"
read=1
view_open massif-visualizer "(prog.massif) — Massif Visualizer" "(peak) [table cell]" \
    massif-visualizer -qwindowgeometry 1300x900+0+0 "$T/prog.massif" || read=0
view_alive massif-visualizer
# The file read (its log says so), then the picture once the window stops
# changing (view_shot): the chart drawn.
view_wait_text "$T/massif-visualizer.err" "loaded massif file" 60 massif-visualizer
view_shot "$VIEW_WIN" export_view_massif

grep -q "loaded massif file" "$T/massif-visualizer.err" || fail "massif-visualizer did not say it loaded the file"
! grep -q "invalid line" "$T/massif-visualizer.err" || fail "$(grep "invalid line" "$T/massif-visualizer.err")"
peak=$(view_size "$REPORT_PEAK" binary)
# Its log says what it read (the peak in its own units) in any case.
grep -q "peak cost: \"$peak\" heap" "$T/massif-visualizer.err" ||
    fail "massif-visualizer's peak: want $peak, got $(grep "peak cost" "$T/massif-visualizer.err")"
if [ "$read" = 0 ]; then
    view_stop massif-visualizer
    echo "export_view_massif: ok (window, screenshot, peak $peak in its log; its list not read)"
    exit 0
fi
expect_eq "snapshots listed" "$(grep -c ": Snapshot #[0-9]*.* \[table cell\]$" "$T/massif-visualizer.a11y")" 51
grep -q "^ *$peak: Snapshot #[0-9]* (peak) \[table cell\]$" "$T/massif-visualizer.a11y" ||
    fail "peak snapshot: want $peak, got $(grep "(peak)" "$T/massif-visualizer.a11y")"
leaked=$(view_size "$REPORT_LEAKED" binary)
grep -q "^ *$leaked: Snapshot #50 \[table cell\]$" "$T/massif-visualizer.a11y" ||
    fail "last snapshot: want $leaked, got $(grep "Snapshot #50" "$T/massif-visualizer.a11y")"
view_stop massif-visualizer
echo "export_view_massif: ok (51 snapshots, peak $peak, at the end $leaked)"
