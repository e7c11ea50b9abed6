#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The HTML report of the demo in headless Chromium: record
# examples/memtest_demo, write the report, open it with a window selected
# through the URL (#window=T0ns-T1ns) and check the DOM the page's script
# built:
#  - the summary shows exactly `memscribe report`'s numbers;
#  - from the last four spikes on, the window table has the row of
#    ManipulateTemporaryBuffer as Transient, Count 4, Size 40 MB, Impacting
#    Size 0, and every row equals `memscribe window` for the same range,
#    in the same order (|Impacting Size|, then Size);
#  - leaks and the flame graph are there; the console has no line at all;
#  - a selection dragged with the (synthetic) mouse selects those buckets.
# Screenshots go to tests/artifacts/ in the build directory.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" html-demo MEMSCRIBE MS_BUILD MS_SOURCE
# shellcheck source=tests/e2e/html_chrome.sh
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
T=$WORK/demo.mscr
record_demo "$T"
"$MEMSCRIBE" html "$T" -o "$WORK/report.html" 2>"$WORK/html.err" ||
    fail "html exited with $?: $(cat "$WORK/html.err")"
[ ! -s "$WORK/html.err" ] || fail "html wrote to stderr: $(cat "$WORK/html.err")"

# The page's bucket width, from its own data.
bw=$(python3 - "$WORK/report.html" <<'EOF'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="ms-data">(.*?)</script>', page, re.S)
print(json.loads(m.group(1))["wpa"]["bucketNs"])
EOF
)
echo "bucket width: $bw ns"

# The last four spikes, from the trace (as tests/e2e/ana_demo.sh finds
# them): the last four 10 MB rises in 1 ms rows; the window runs from the
# whole bucket before the first of them to the end of the trace (the
# steady blocks freed at exit add Impacting rows of their own). The spikes
# are 100 ms apart, so a bucket of the page (10 ms) cannot reach the
# spike before.
"$MEMSCRIBE" timeline --interval 1ms --format=json "$T" >"$WORK/tl.json"
rises=$(jq -r '.processes[0].rows as $r | [range(0; $r | length)
    | select($r[.].heap_max_bytes - (if . == 0 then 0 else $r[. - 1].heap_bytes end) >= 9500000)
    | $r[.].time_ns] | .[-4:] | .[0]' "$WORK/tl.json")
end=$(jq -r '.processes[0].rows[-1].time_ns' "$WORK/tl.json")
t0=$(((rises - 1000000) / bw * bw))
t1=$((end / bw * bw + bw)) # exclusive: the page selects [t0, t1), the last bucket included
echo "window: [$t0, $t1) ns"

"$MEMSCRIBE" report --format=json --top 0 "$T" >"$WORK/report.json"
"$MEMSCRIBE" window --from "${t0}ns" --to "$((t1 - 1))ns" --top 0 --format=json "$T" >"$WORK/w.json"

url="file://$WORK/report.html#window=${t0}ns-${t1}ns"
dump_dom "$WORK" "$WORK/dom.html" "$WORK/chrome.err" "$READY" "$url" ||
    fail "chromium exited with $?: $(tail -5 "$WORK/chrome.err")"
lines=$(console_lines "$WORK/chrome.err")
[ -z "$lines" ] || fail "the page wrote to the console: $lines"

PYTHONPATH=$MS_SOURCE/tests/e2e python3 - "$WORK/dom.html" "$WORK/report.json" "$WORK/w.json" "$t0" "$t1" <<'EOF'
import json, re, sys
import html_dom

dom_path, report_path, window_path, t0, t1 = sys.argv[1:6]

t = html_dom.parse(dom_path)
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")
    else:
        print(f"ok: {what} = {want!r}")

body = t.root.find_all(lambda n: n.tag == "body")[0]
check("page ready", body.attrs.get("data-ready"), "1")
check("script errors", body.attrs.get("data-errors"), None)
print("page load to ready:", body.attrs.get("data-ready-ms"), "ms")

# Summary = memscribe report.
p = json.load(open(report_path))["processes"][0]
# One vocabulary (docs/json.md): each summary cell is named by report's key.
for key in ["allocations", "allocated_bytes", "frees", "peak_bytes", "peak_ns", "peak_blocks",
            "leaked_bytes", "leaked_blocks", "temporary", "temporary_bytes", "peak_rss_bytes",
            "failed_calls", "unmatched_frees", "dropped_events"]:
    check(f"summary {key}", int(t.by_id["sum-" + key].attrs["data-v"]), p[key])
# Distinct stacks: the call sites the heap events use (report's every
# site by allocations), not the trace's stack nodes.
check("summary distinct stacks", int(t.by_id["sum-stack_count"].attrs["data-v"]),
      len(p["top"]["allocations"]))
check("summary leaked bytes as text", t.by_id["sum-leaked_bytes"].all_text().split(" ")[0],
      f"{p['leaked_bytes']:,}")

# The window's range.
wr = t.by_id["window-range"]
check("window start", int(wr.attrs["data-t0"]), int(t0))
check("window end (included)", int(wr.attrs["data-t1"]), int(t1) - 1)
# Both ends in one unit, the end's ("0 ns - 1.505 s" read as two scales).
span = re.match(r"Window ([0-9.]+) (s|ms|\u00b5s|ns) \u2013 ([0-9.]+) (s|ms|\u00b5s|ns) ", wr.all_text())
check("window range in one unit", bool(span) and span.group(2) == span.group(4), True)

# The window table, row by row, against memscribe window.
rows = []
for tr in t.by_id["window-table"].find_all(lambda n: n.tag == "tr" and n.attrs.get("class") == "row"):
    def v(name):
        for c in tr.children:
            if ("c-" + name) in c.attrs.get("class", "").split():
                return c
        raise KeyError(name)
    fn_cell = [c for c in tr.children if "fn" in c.attrs.get("class", "").split()][0]
    rows.append({"type": v("type").all_text(), "count": int(v("count").attrs["data-v"]),
                 "size": int(v("size").attrs["data-v"]),
                 "impacting": int(v("impacting").attrs["data-v"]),
                 "fn": fn_cell.text[0] if fn_cell.text else ""})
w = json.load(open(window_path))
want = sorted((r["impacting_type"], r["count"], r["size"], r["impacting_size"]) for r in w["rows"])
got = sorted((r["type"], r["count"], r["size"], r["impacting"]) for r in rows)
check("window rows (type, count, size, impacting size) = memscribe window", got, want)
# And in its order: |Impacting Size|, then Size, as the CLI sorts (rows of
# equal keys may come in either order).
order = lambda imp, size: (abs(imp), size)
check("window row order (|impacting size|, size) = memscribe window's",
      [order(r["impacting"], r["size"]) for r in rows],
      [order(r["impacting_size"], r["size"]) for r in w["rows"]][:len(rows)])
spike = [r for r in rows if "ManipulateTemporaryBuffer" in r["fn"]]
check("ManipulateTemporaryBuffer rows", len(spike), 1)
if spike:
    check("its impacting type", spike[0]["type"], "Transient")
    check("its count", spike[0]["count"], 4)
    check("its size", spike[0]["size"], 40 * 1000 * 1000)
    check("its impacting size", spike[0]["impacting"], 0)

# Leaks: InnerLoopOperation leaked 320 x 40 bytes.
leak = [tr for tr in t.by_id["leaks-table"].find_all(lambda n: n.tag == "tr")
        if "InnerLoopOperation" in tr.all_text()]
check("leak rows of InnerLoopOperation", len(leak), 1)
if leak:
    vals = {c.attrs["class"]: c.attrs.get("data-v") for c in leak[0].children if "data-v" in c.attrs}
    check("its leaked bytes", vals.get("c-leaked_bytes"), "12800")
    check("its leaked blocks", vals.get("c-leaked_blocks"), "320")

# The flame graph (bytes): frames drawn, the spikes among them.
frames = t.by_id["flame-svg"].find_all(lambda n: n.tag == "g")
names = [f.all_text() for f in frames]
if len(frames) < 5:
    errors.append(f"flame graph: only {len(frames)} frames drawn")
if not any("TransientSpike" in n for n in names):
    errors.append("flame graph: no TransientSpike frame")
if errors:
    print("\n".join("FAIL: " + e for e in errors), file=sys.stderr)
    sys.exit(1)
EOF

# The whole run as the window: every freed block is Transient (Impacting
# Size 0), so the order among those rows rests on Size alone.
"$MEMSCRIBE" window --to "$((t1 - 1))ns" --top 0 --format=json "$T" >"$WORK/wall.json"
dump_dom "$WORK" "$WORK/all.html" "$WORK/all.err" "$READY" "file://$WORK/report.html#window=0ns-${t1}ns" ||
    fail "chromium: $(tail -3 "$WORK/all.err")"
python3 - "$WORK/all.html" "$WORK/wall.json" <<'EOF'
import json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
table = re.search(r'<table[^>]*id="window-table"[^>]*>(.*?)</table>', dom, re.S).group(1)
got = []
for tr in re.findall(r'<tr class="row"[^>]*>(.*?)</tr>', table, re.S):
    v = dict(re.findall(r'class="[^"]*c-(size|impacting)[^"]*" data-v="(-?[0-9]+)"', tr))
    got.append((abs(int(v["impacting"])), int(v["size"])))
want = [(abs(r["impacting_size"]), r["size"]) for r in json.load(open(sys.argv[2]))["rows"]]
if len(got) < 5 or got != want[:len(got)]:
    sys.exit(f"FAIL: whole-run window rows in the page's order {got}, want {want[:len(got)]}")
print(f"ok: whole-run window: {len(got)} rows in memscribe window's order")
EOF

# The stack panel (a click on a row; #stack=REGEX from the URL): the whole
# stack of the site, allocating function first, main below it.
dump_dom "$WORK" "$WORK/stack.html" "$WORK/stack.err" "$READY" \
    "file://$WORK/report.html#stack=ManipulateTemporaryBuffer" || fail "chromium: $(tail -3 "$WORK/stack.err")"
python3 - "$WORK/stack.html" <<'EOF'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
panel = re.search(r'<aside id="stack-panel"([^>]*)>(.*?)</aside>', dom, re.S)
if not panel or "hidden" in panel.group(1):
    sys.exit("FAIL: the stack panel is not shown")
frames = re.findall(r'<li>(.*?)</li>', panel.group(2))
names = [re.sub(r' \(.*', '', f) for f in frames]
want = ["(anonymous namespace)::ManipulateTemporaryBuffer()", "(anonymous namespace)::Operation1()",
        "main"]
if names[:3] != want:
    sys.exit(f"FAIL: the stack panel shows {names}, want {want} first")
print(f"ok: stack panel: {' <- '.join(names)}")
EOF

# A selection made with the mouse (synthetic events through the page's own
# handlers, #drag=F0,F1 in fractions of the plot's width) selects the
# buckets under the pointer.
dump_dom "$WORK" "$WORK/drag.html" "$WORK/drag.err" "$READY" --window-size=1280,2000 \
    "file://$WORK/report.html#drag=0.25,0.5" || fail "chromium: $(tail -3 "$WORK/drag.err")"
lines=$(console_lines "$WORK/drag.err")
[ -z "$lines" ] || fail "the page wrote to the console: $lines"
python3 - "$WORK/drag.html" "$WORK/report.html" <<'EOF'
import json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
page = open(sys.argv[2], encoding="utf-8").read()
svg = re.search(r'<svg[^>]*id="timeline-svg"[^>]*>', page).group(0)
lo = float(re.search(r'data-t-lo="([0-9.]+)"', svg).group(1))
hi = float(re.search(r'data-t-hi="([0-9.]+)"', svg).group(1))
bw = json.loads(re.search(r'<script type="application/json" id="ms-data">(.*?)</script>', page,
                          re.S).group(1))["wpa"]["bucketNs"]
m = re.search(r'id="window-range" data-t0="([0-9]+)" data-t1="([0-9]+)"', dom)
if not m:
    sys.exit("FAIL: no window after the drag")
t0, t1 = int(m.group(1)), int(m.group(2))
# Pointer positions are rounded to device pixels: allow one bucket.
want0 = int((lo + 0.25 * (hi - lo)) // bw) * bw
want1 = int((lo + 0.5 * (hi - lo)) // bw) * bw + bw - 1
if abs(t0 - want0) > bw or abs(t1 - want1) > bw:
    sys.exit(f"FAIL: drag selected [{t0}, {t1}], want about [{want0}, {want1}]")
print(f"ok: the drag selected [{t0}, {t1}] ns (want about [{want0}, {want1}])")
EOF

# Pictures to look at: the page with the selection.
chrome "$WORK" --window-size=1280,2600 --screenshot="$ART/html_demo.png" "$url" \
    >/dev/null 2>"$WORK/shot.err" || fail "screenshot: $(tail -3 "$WORK/shot.err")"
[ -s "$ART/html_demo.png" ] || fail "no screenshot"
cp "$WORK/report.html" "$ART/html_demo.html"
echo "PASS (screenshot: $ART/html_demo.png)"
