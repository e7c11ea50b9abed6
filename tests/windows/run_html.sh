#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The HTML report of a Windows program shows its VirtualAlloc commit
# lifetimes (issue 42, item 4): the demo (examples/windows/
# memtest_demo_win.cc, WPA's MemoryTestApp) recorded under wine64 by
# `memscribe record`, its page opened in headless Chromium with a window
# selected through the URL or dragged with the (synthetic) mouse, and the
# section's table and cards on screen against `memscribe vmem --format=json`
# of the window the page shows, exactly (tests/e2e/html_screen.py): the
# whole run (12 buffers, all Transient); the step around the second
# steady-state buffer (AllocateSteadyState: Impacting, Count 1, +10 MB); the
# last four spikes (ManipulateTemporaryBuffer: Transient, Count 4, 40 MB);
# a dragged window. The page's data against vmem in windows at every cell's
# edges (tests/e2e/pic_data.py) and its committed and reserved lines
# against `timeline` (tests/e2e/pic_series.py). Screenshot:
# tests/artifacts/html_vmem_windows.png in the build directory.
# Usage: run_html.sh WINE WINDIR PREFIX OUTDIR MEMSCRIBE SOURCE BUILD
set -euo pipefail
wine=$1 windir=$2 prefix=$3 out=$4 memscribe=$5 src=$6 build=$7
export WINEPREFIX=$prefix MEMSCRIBE_WINE=$wine MEMSCRIBE_WINDOWS_DIR=$windir
MS_BUILD=$build
# shellcheck source=tests/e2e/html_chrome.sh
source "$src/tests/e2e/html_chrome.sh"
command -v chromium >/dev/null ||
    { echo "run_html: chromium is not installed: run scripts/setup.sh --test"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
t=$out/demo.mscr
"$memscribe" record -o "$t" -- "$windir/memtest_demo_win.exe" >"$out/demo.out" 2>"$out/demo.log" ||
    { echo "run_html: record exited with $?"; tail -5 "$out/demo.log"; exit 1; }
grep -q 'memtest_demo_win: 10 spikes of 10 MB, 20 MB steady' "$out/demo.out"
"$memscribe" html "$t" -o "$out/demo.html" 2>"$out/html.err" ||
    { echo "run_html: html exited with $?"; cat "$out/html.err"; exit 1; }
"$memscribe" report --format=json --top 0 "$t" >"$out/report.json" 2>/dev/null
"$memscribe" vmem --format=json --top 0 --rows 0 "$t" >"$out/run.json" 2>/dev/null

# The windows, from the run's lifetimes: 50 ms either side of the second
# steady buffer; from 1 ms before the first of ManipulateTemporaryBuffer's
# four buffers to 1 ms after the last.
read -r step spikes < <(python3 - "$out/run.json" <<'EOF'
import json, sys
BUF = 10002432
life = [l for l in json.load(open(sys.argv[1]))["lifetimes"] if l["size"] == BUF]
def has(l, f):
    return any(f in x for x in l["stack"])
steady = sorted(l["commit_ns"] for l in life if has(l, "AllocateSteadyState"))
mtb = sorted((l["commit_ns"], int(l["decommit_ns"])) for l in life if has(l, "ManipulateTemporaryBuffer"))
assert len(steady) == 2 and len(mtb) == 4, (steady, mtb)
print("%dns-%dns %dns-%dns" % (steady[1] - 50000000, steady[1] + 50000000,
                               mtb[0][0] - 1000000, mtb[-1][1] + 1000000))
EOF
)

# usage: screen NAME HASH: the page with HASH (a window or a drag) on screen
# against vmem of the window it shows, and against report.
screen() {
    local name=$1 hash=$2 t0 t1 lines
    dump_dom "$out" "$out/$name.dom" "$out/$name.err" "$READY" --window-size=1280,2400 \
        "file://$out/demo.html$hash" || { echo "run_html: $name: chromium exited with $?"; exit 1; }
    lines=$(console_lines "$out/$name.err")
    [ -z "$lines" ] || { echo "run_html: $name: the page wrote to the console: $lines"; exit 1; }
    read -r t0 t1 < <(sed -n 's/.*id="vm-range" data-t0="\([0-9]*\)" data-t1="\([0-9]*\)".*/\1 \2/p' "$out/$name.dom")
    [ -n "$t1" ] || { echo "run_html: $name: no commit lifetimes' window on the page"; exit 1; }
    "$memscribe" vmem --format=json --top 0 --from "${t0}ns" --to "${t1}ns" "$t" >"$out/$name.json" 2>/dev/null
    echo "$name: [$t0, $t1] ns"
    PYTHONPATH=$src/tests/e2e python3 "$src/tests/e2e/html_screen.py" "$out/$name.dom" "$out/report.json" \
        "$out/$name.json" || { echo "run_html: $name: the page differs from vmem or report (above)"; exit 1; }
}

# usage: row NAME FUNCTION TYPE COUNT SIZE IMPACTING: the window's table has
# exactly one row of FUNCTION's stack, with these numbers (WPA's).
row() {
    PYTHONPATH=$src/tests/e2e python3 - "$out/$1.dom" "${@:2}" <<'EOF'
import sys
import html_dom
dom, fn, want = sys.argv[1], sys.argv[2], tuple(sys.argv[3:])
t = html_dom.parse(dom)
rows = []
for tr in t.by_id["vm-table"].find_all(lambda x: x.tag == "tr" and x.attrs.get("class") == "row"):
    if fn not in tr.all_text():
        continue
    c = {k[2:]: x for x in tr.children for k in x.classes() if k.startswith("c-")}
    rows.append((c["type"].all_text(), c["count"].attrs["data-v"], c["size"].attrs["data-v"],
                 c["impacting"].attrs["data-v"]))
if rows != [want]:
    sys.exit("FAIL: %s: rows of %s %s, want %s" % (dom, fn, rows, [want]))
print("ok: %s: %s %s" % (dom.rsplit("/", 1)[-1], fn, want))
EOF
}

screen run ""
screen step "#window=$step"
row step AllocateSteadyState Impacting 1 10002432 10002432
screen spikes "#window=$spikes"
row spikes ManipulateTemporaryBuffer Transient 4 40009728 0
screen drag "#drag=0.3,0.7"

# The page's data, and its committed and reserved lines.
python3 "$src/tests/e2e/pic_data.py" "$memscribe" "$t" "$out/demo.html"
last=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total"]["last_ns"])' "$out/report.json")
"$memscribe" timeline --interval "$((last / 2000))ns" --format=json "$t" >"$out/tl.json" 2>/dev/null
python3 "$src/tests/e2e/pic_series.py" "$out/demo.html" "$out/tl.json" "$out/report.json"

chrome "$out" --window-size=1280,3000 --screenshot="$ART/html_vmem_windows.png" \
    "file://$out/demo.html#window=$spikes" >/dev/null 2>&1
[ -s "$ART/html_vmem_windows.png" ] || { echo "run_html: no screenshot"; exit 1; }
echo "run_html: ok (screenshot: $ART/html_vmem_windows.png)"
