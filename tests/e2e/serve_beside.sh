#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The page beside heaptrack_gui on the same program (docs/serve.md,
# "Against heaptrack_gui"): the demo recorded once, opened in heaptrack_gui
# under Xvfb from memscribe's heaptrack export and in the page of memscribe
# serve in headless Chromium; each of heaptrack_gui's nine tabs pressed
# through its accessibility tree and kept as a screenshot
# (beside-heaptrack-VIEW.png), and the page's view of the same question
# brought up and kept beside it (beside-page-VIEW.png, by
# tests/e2e/serve_beside.py), in the build's tests/artifacts/. Each
# heaptrack_gui tab must be enabled (its data read) and each page view hold
# rows, bands or bars; the numbers are held elsewhere (serve_page,
# serve_views against the commands; export_view_heaptrack against
# heaptrack_gui's summary).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" serve-beside MEMSCRIBE MS_BUILD MS_SOURCE
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
# shellcheck source=tests/e2e/view_lib.sh
source "$MS_SOURCE/tests/e2e/view_lib.sh"
need_viewer heaptrack_gui heaptrack_gui
need_viewer "the page" chromium chromedriver
"$PY" -c 'import selenium' 2>/dev/null || fail "python3-selenium is not installed: run scripts/setup.sh --test"

record_demo "$WORK/demo.mscr"
"$MEMSCRIBE" export --to heaptrack "$WORK/demo.mscr" -o "$WORK/demo.heaptrack.zst" 2>"$WORK/err" ||
    fail "export --to heaptrack: $(cat "$WORK/err")"

# heaptrack_gui's tabs, each pressed as a person clicks it, and its window
# kept once it stops drawing.
view_desktop
view_open heaptrack_gui "Heaptrack - demo.heaptrack.zst" "total memory leaked:" \
    heaptrack_gui "$WORK/demo.heaptrack.zst" ||
    fail "heaptrack_gui's widgets could not be read: its tabs cannot be pressed"
for tab in "Summary" "Bottom-Up" "Caller / Callee" "Top-Down" "Flame Graph" "Consumed" "Allocations" \
    "Temporary Allocations" "Sizes"; do
    view=${tab,,}
    view=${view// \/ /-}
    view=${view// /-}
    "$PY" "$MS_SOURCE/tests/e2e/view_atspi_tab.py" heaptrack_gui "$tab" 2>"$WORK/tab.err" ||
        fail "heaptrack_gui: $(cat "$WORK/tab.err")"
    view_shot "$VIEW_WIN" "beside-heaptrack-$view"
done
view_stop heaptrack_gui

# The page's views of the same questions.
view_bg serve 600 "$MEMSCRIBE" serve --url-file "$WORK/url" "$WORK/demo.mscr"
view_wait_file "$WORK/url" 60 "memscribe serve's address"
"$PY" "$MS_SOURCE/tests/e2e/serve_beside.py" "$(cat "$WORK/url")" "$MEMSCRIBE" "$WORK/demo.mscr" \
    "$ART/beside-page.png" "$ART" || fail "the page's views (above)"
echo "serve beside heaptrack_gui: nine views of each kept in $ART (beside-heaptrack-*.png, beside-page-*.png)"
