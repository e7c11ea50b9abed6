#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Plots and flame graphs of the demo (examples/memtest_demo): every SVG is
# well-formed XML (xmllint, a real parser) and shows the numbers of the
# text reports: the peak of `memscribe report`, the size classes of
# `memscribe histogram`, the spikes, leaks and temporary allocations per
# cost in the flame graph; folded stacks add up to the allocated bytes and
# agree with `memscribe export --to folded`; the flame graph's own script
# finds frames (Chromium, #search=); the address-space map shows every
# mapping. Screenshots go to tests/artifacts/.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" pic-demo MEMSCRIBE MS_BUILD MS_SOURCE
# shellcheck source=tests/e2e/html_chrome.sh
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
T=$WORK/demo.mscr
record_demo "$T"
"$MEMSCRIBE" report --format=json --top 0 "$T" >"$WORK/report.json"
peak=$(jq '.processes[0].peak_bytes' "$WORK/report.json")
peak_ns=$(jq '.processes[0].peak_ns' "$WORK/report.json")
allocated=$(jq '.processes[0].allocated_bytes' "$WORK/report.json")

# A value as the plots print it (ana_unit_format): 1024-based bytes or
# 1000-based time, three significant digits.
human() {
    python3 - "$1" "$2" <<'EOF'
import sys
kind, v = sys.argv[1], float(sys.argv[2])
units = ["B", "KiB", "MiB", "GiB", "TiB"] if kind == "bytes" else ["ns", "\u00b5s", "ms", "s"]
base = 1024 if kind == "bytes" else 1000
k, scale = 0, 1
while k + 1 < len(units) and v >= scale * base:
    scale *= base
    k += 1
x = v / scale
print(("%.0f" % x if x >= 100 or x == int(x) else "%.3g" % x) + " " + units[k])
EOF
}

# --- Timeline. -----------------------------------------------------------
"$MEMSCRIBE" plot timeline "$T" -o "$WORK/timeline.svg"
wellformed "$WORK/timeline.svg"
has "$WORK/timeline.svg" "peak $(human bytes "$peak") at $(human ns "$peak_ns")"
has "$WORK/timeline.svg" '<circle class="peak" id="peak"'
has "$WORK/timeline.svg" ">heap in use</text>"
has "$WORK/timeline.svg" ">RSS (memscribe ring buffers included)</text>"
has "$WORK/timeline.svg" ">time since start</text>"
has "$WORK/timeline.svg" " MiB</text>"
has "$WORK/timeline.svg" ">1 s</text>"
has "$WORK/timeline.svg" "memtest_demo</text>"

# --- Histogram: one bar per size class, counts as memscribe histogram. ----
"$MEMSCRIBE" plot histogram "$T" -o "$WORK/histogram.svg"
wellformed "$WORK/histogram.svg"
"$MEMSCRIBE" histogram --format=json "$T" >"$WORK/hist.json"
n=$(jq length "$WORK/hist.json")
[ "$n" -ge 4 ] || fail "histogram has only $n classes"
for i in $(seq 0 $((n - 1))); do
    lo=$(jq ".[$i].min_size" "$WORK/hist.json")
    hi=$(jq ".[$i].max_size" "$WORK/hist.json")
    count=$(jq ".[$i].count" "$WORK/hist.json")
    has "$WORK/histogram.svg" "$(human bytes "$lo") .. $(human bytes "$hi"): $count allocations"
done
bars=$(grep -c '<rect class="bar-count"' "$WORK/histogram.svg")
[ "$bars" = "$n" ] || fail "histogram: $bars count bars for $n classes"
has "$WORK/histogram.svg" "8 MiB .. 16 MiB: 12 allocations, 114 MiB"

# --- Flame graphs, one per cost. -------------------------------------------
F='(anonymous namespace)::'
for cost in allocations bytes leaked peak temporary; do
    "$MEMSCRIBE" flamegraph --cost "$cost" "$T" -o "$WORK/flame-$cost.svg"
    wellformed "$WORK/flame-$cost.svg"
    has "$WORK/flame-$cost.svg" "<title>Flame graph: $cost</title>"
done
has "$WORK/flame-bytes.svg" "<title>${F}ManipulateTemporaryBuffer() (40,000,000 bytes"
has "$WORK/flame-bytes.svg" "<title>${F}TransientSpike() (60,000,000 bytes"
has "$WORK/flame-bytes.svg" "<title>all ($(python3 -c "print(f'{$allocated:,}')") bytes"
has "$WORK/flame-allocations.svg" "<title>${F}InnerLoopOperation() (320 allocations"
has "$WORK/flame-allocations.svg" "<title>${F}TransientSpike() (6 allocations"
has "$WORK/flame-leaked.svg" "<title>${F}InnerLoopOperation() (12,800 bytes"
has "$WORK/flame-temporary.svg" "<title>${F}ManipulateTemporaryBuffer() (4 temporary"
has "$WORK/flame-temporary.svg" "<title>all (10 temporary"
# At the peak: one spike (the last ones are ManipulateTemporaryBuffer's)
# and both steady blocks (self cost: the vector's growth sits above them).
has "$WORK/flame-peak.svg" "<title>${F}ManipulateTemporaryBuffer() (10,000,000 bytes"
"$MEMSCRIBE" flamegraph --folded --cost peak "$T" >"$WORK/peak.folded"
has "$WORK/peak.folded" "main;${F}AllocateSteadyState() 20000000"
# Leaked and peak totals are the report's.
leaked=$(jq '.processes[0].leaked_bytes' "$WORK/report.json")
grep -q "<title>all ($(python3 -c "print(f'{$leaked:,}')") bytes" "$WORK/flame-leaked.svg" ||
    fail "leaked flame graph total is not the report's $leaked"
grep -q "<title>all ($(python3 -c "print(f'{$peak:,}')") bytes" "$WORK/flame-peak.svg" ||
    fail "peak flame graph total is not the report's $peak"
echo "ok: leaked and peak totals are the report's"

# Inverted: the allocating functions sit right on the root.
"$MEMSCRIBE" flamegraph --inverted "$T" -o "$WORK/flame-inv.svg"
wellformed "$WORK/flame-inv.svg"
has "$WORK/flame-inv.svg" "<title>Inverted flame graph: bytes</title>"
has "$WORK/flame-inv.svg" "data-d=\"1\" data-n=\"${F}ManipulateTemporaryBuffer()\""
has "$WORK/flame-inv.svg" "data-d=\"2\" data-n=\"${F}Operation1()\""

# Folded stacks: the same costs, as text.
"$MEMSCRIBE" flamegraph --folded "$T" -o "$WORK/bytes.folded"
sum=$(awk '{ s += $NF } END { printf "%d", s }' "$WORK/bytes.folded")
[ "$sum" = "$allocated" ] || fail "folded bytes add up to $sum, report says $allocated"
echo "ok: folded bytes add up to $allocated"
grep -qE ";${F//[()]/.}Operation1\(\);${F//[()]/.}ManipulateTemporaryBuffer\(\) 40000000$" \
    "$WORK/bytes.folded" || fail "no folded line for Operation1;ManipulateTemporaryBuffer 40000000"
echo "ok: folded line of ManipulateTemporaryBuffer"
"$MEMSCRIBE" export --to folded --cost bytes "$T" -o "$WORK/export.folded"
# Readers add up lines of the same path: compare after doing that. Exports
# keep whole C++ names; the flame graph shortens them unless --full-names.
merge() { awk '{ n = $NF; $NF = ""; s[$0] += n } END { for (k in s) print k s[k] }' "$1" | sort; }
"$MEMSCRIBE" flamegraph --folded --full-names "$T" >"$WORK/bytes-full.folded"
merge "$WORK/bytes-full.folded" >"$WORK/a"
merge "$WORK/export.folded" >"$WORK/b"
diff "$WORK/a" "$WORK/b" >"$WORK/folded.diff" ||
    fail "flamegraph --folded and export --to folded differ: $(head -5 "$WORK/folded.diff")"
echo "ok: flamegraph --folded = export --to folded"

# --- The flame graph's script: search from the URL, in Chromium. ----------
# The graph's script leaves no sign of its own that it has run: the DOM
# is read once the search's result is in it ("Matched: ...").
dump_dom "$WORK" "$WORK/flame.dom" "$WORK/chrome.err" '<text id="matched"[^>]*>Matched: ' \
    "file://$WORK/flame-bytes.svg#search=ManipulateTemporary" ||
    fail "chromium: $(tail -3 "$WORK/chrome.err")"
lines=$(console_lines "$WORK/chrome.err")
[ -z "$lines" ] || fail "the flame graph wrote to the console: $lines"
hits=$(grep -o 'class="f hit"' "$WORK/flame.dom" | wc -l)
[ "$hits" = 1 ] || fail "search highlighted $hits frames, want 1"
pct=$(python3 -c "print('%.1f' % (100 * 40000000 / $allocated))")
has "$WORK/flame.dom" "Matched: $pct%"

# Zoom from the URL: the frame fills the width, frames beside it are hidden,
# its ancestors stay (dimmed). The DOM is read once the zoom is done: its
# Reset Zoom button lit (opacity 1; 0.3 in the file).
dump_dom "$WORK" "$WORK/zoom.dom" "$WORK/chrome.err" '<text id="unzoom"[^>]*opacity: ?1[;"]' \
    "file://$WORK/flame-bytes.svg#zoom=ManipulateTemporaryBuffer" ||
    fail "chromium: $(tail -3 "$WORK/chrome.err")"
python3 - "$WORK/zoom.dom" <<'EOF'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
svg = re.search(r'<svg[^>]*>', dom).group(0)
width = float(re.search(r'data-width="([0-9.]+)"', svg).group(1))
pad = float(re.search(r'data-pad="([0-9.]+)"', svg).group(1))
frames = re.findall(r'<g class="f([^"]*)"([^>]*)>.*?<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"',
                    dom, re.S)
def frame(name):
    for cls, attrs, x, w in frames:
        if f'data-n="{name}"' in attrs:
            return cls, attrs, float(x), float(w)
    sys.exit(f"FAIL: no frame {name}")
cls, attrs, x, w = frame("(anonymous namespace)::ManipulateTemporaryBuffer()")
if abs(x - pad) > 0.2 or abs(w - (width - 2 * pad)) > 0.2 or 'display: none' in attrs:
    sys.exit(f"FAIL: the zoomed frame is at x={x} width={w}")
cls, attrs, x, w = frame("(anonymous namespace)::TransientSpike()")
if 'display: none' not in attrs:
    sys.exit("FAIL: a frame beside the zoomed one is still shown")
cls, attrs, x, w = frame("main")
if "parent" not in cls or 'display: none' in attrs:
    sys.exit("FAIL: an ancestor of the zoomed frame is not shown dimmed")
print("ok: zoom from the URL")
EOF

# --- Errors: usage errors exit 2, unreadable input or output 1, with the
# file in the message.
status() {
    set +e
    "$@" >"$WORK/st.out" 2>"$WORK/st.err"
    echo $?
    set -e
}
[ "$(status "$MEMSCRIBE" plot)" = 2 ] || fail "plot without a plot: not a usage error"
[ "$(status "$MEMSCRIBE" plot pie "$T")" = 2 ] || fail "plot pie: not a usage error"
[ "$(status "$MEMSCRIBE" flamegraph --cost nope "$T")" = 2 ] || fail "--cost nope: not a usage error"
[ "$(status "$MEMSCRIBE" html --buckets 0 "$T")" = 2 ] || fail "--buckets 0: not a usage error"
[ "$(status "$MEMSCRIBE" flamegraph "$WORK/missing.mscr")" = 1 ] || fail "missing trace: not 1"
grep -q "missing.mscr" "$WORK/st.err" || fail "the message does not name the missing trace"
[ "$(status "$MEMSCRIBE" html "$T" -o "$WORK/no/such/dir/r.html")" = 1 ] || fail "bad output: not 1"
grep -q "no/such/dir/r.html" "$WORK/st.err" || fail "the message does not name the output"
[ "$(status "$MEMSCRIBE" plot --help)" = 0 ] || fail "plot --help"
grep -q "usage: memscribe plot" "$WORK/st.out" || fail "plot --help says no usage"
echo "ok: exit statuses and messages"

# The address-space map of a 64-bit program: every mapping drawn at least
# a pixel wide, the holes of terabytes between them shortened to breaks
# labelled with their size, all inside the picture.
"$MEMSCRIBE" frag --svg "$WORK/map.svg" "$T" >/dev/null || fail "frag --svg exited with $?"
wellformed "$WORK/map.svg"
python3 - "$WORK/map.svg" <<'EOF'
import re, sys
import xml.etree.ElementTree as ET
svg = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
width = float(svg.get("width"))
rects = [r for r in svg.iter(ns + "rect") if r.get("class") in ("fr-res", "fr-com", "fr-chg", "fr-col")]
thin = [r.attrib for r in rects if float(r.get("width")) < 1]
if len(rects) < 10 or thin:
    sys.exit(f"FAIL: {len(rects)} mappings drawn, {len(thin)} under a pixel wide: {thin[:3]}")
right = max(float(r.get("x")) + float(r.get("width")) for r in svg.iter(ns + "rect")
            if r.get("class") != "background")
if right > width:
    sys.exit(f"FAIL: the map runs to x={right}, past the picture's width {width}")
labels = [t.text for t in svg.iter(ns + "text") if t.get("class") == "fr-bt"]
if not labels or not all(re.fullmatch(r"[0-9.]+ [KMGT]iB|[0-9]+ B", l) for l in labels):
    sys.exit(f"FAIL: breaks labelled {labels}")
print(f"ok: address-space map: {len(rects)} mappings each >= 1 px, breaks {labels}")
EOF

# Pictures.
chrome "$WORK" --window-size=1000,520 --screenshot="$ART/pic_timeline.png" \
    "file://$WORK/timeline.svg" >/dev/null 2>&1
chrome "$WORK" --window-size=1000,560 --screenshot="$ART/pic_histogram.png" \
    "file://$WORK/histogram.svg" >/dev/null 2>&1
chrome "$WORK" --window-size=1200,330 --screenshot="$ART/pic_flame.png" \
    "file://$WORK/flame-bytes.svg#search=ManipulateTemporary" >/dev/null 2>&1
for f in pic_timeline pic_histogram pic_flame; do
    [ -s "$ART/$f.png" ] || fail "no screenshot $f.png"
done
cp "$WORK/timeline.svg" "$WORK/histogram.svg" "$WORK/flame-bytes.svg" "$ART/"
echo "PASS"
