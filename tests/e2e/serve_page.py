#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The numbers on memscribe serve's page, in a real browser (headless
Chromium driven by Selenium), against the JSON of the commands a user runs:

- the cards: `memscribe report --format=json`'s totals;
- the table of call sites of the process the page picked (the one with the
  highest peak): report's top lists of that process, each tab in order;
- the programs of several processes (report's programs table), and each
  program's site lists;
- a site clicked: its allocating function's callers and callees, as
  `memscribe tree --focus F` (with `--bottom-up` for the callers);
- a window dragged across the chart with the mouse: `memscribe window
  --format=json --from F --to T` of the times the page asked for (each
  process's AIFI, AIFO, AOFI, AOFO counts and bytes and Impacting Size, and
  the rows in order);
- a trace with chunk totals (format 1.10): the first view from them
  (report --index, timeline --index), then the page's check of them (report
  replayed: they agree);
- the chart zoomed into that window, and into 40 time units at the peak
  (rows a time unit apart: single events), against `memscribe timeline
  --format=json --from F --to T --interval I`;
- the blocks live at a moment picked on the slider: `memscribe leaks
  --format=json --at T` (totals and rows in order);
- the page wrote nothing to the console.

usage: serve_page.py URL MEMSCRIBE TRACE SCREENSHOT
Prints a line per check; exits 1 with the differences.
"""
import subprocess
import sys

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import page_check as pc
from page_check import check, cmd, errors, finish, wait

memscribe, trace = pc.memscribe, pc.trace


def value(d, id_):
    """A shown figure's exact value; None where report has none (null)."""
    v = d.find_element(By.ID, id_).get_attribute("data-value")
    return int(v) if v else None


def table(d, id_):
    """Each row's cells' data-value (None where a cell has none)."""
    return d.execute_script(
        "return [...document.getElementById(arguments[0]).tBodies[0].rows]"
        ".map(r => [...r.cells].map(c => c.dataset.value === undefined ? null : c.dataset.value))",
        id_)


def class_rows(processes):
    """The rows of a table of WPA's classes (window's or vmem's processes)."""
    return [[str(p["pid"])] + [str(p[k]) for k in ("aifi", "aifo", "aofi", "aofo")] +
            [str(p["impacting_size"])] for p in processes]


CLASS_KEYS = ("aifi", "aifo", "aofi", "aofo", "aifi_bytes", "aifo_bytes", "aofi_bytes", "aofo_bytes",
              "impacting_size")


def window_processes(w, rep):
    """A window's class table as the page shows it: the processes alive in
    the window (report's first_ns to last_ns reach into it), those of one
    executable summed into one row ("prog:EXE"), in window's order."""
    info = {p["pid"]: p for p in rep["processes"]}
    alive = [p for p in w["processes"] if p["pid"] not in info or
             (info[p["pid"]]["first_ns"] <= w["to_ns"] and info[p["pid"]]["last_ns"] >= w["from_ns"])]
    exe = lambda p: info.get(p["pid"], {}).get("exe") or ""  # noqa: E731
    out, done = [], set()
    for p in alive:
        same = [q for q in alive if exe(q) == exe(p)]
        if len(same) < 2 or not exe(p):
            out.append(p)
        elif exe(p) not in done:
            done.add(exe(p))
            out.append(dict({k: sum(q[k] for q in same) for k in CLASS_KEYS}, pid="prog:" + exe(p)))
    return out, len(w["processes"]) - len(alive)


def labels_apart(what, labels, rows):
    """Rows that say where: each label is the row's frame of interest, then,
    only where another row reads the same, callers of it in their order
    (after "< ", or "< … <" past callers left out); no two rows whose
    callers differ read alike."""
    bad = []
    for i, (label, r) in enumerate(zip(labels, rows)):
        st, k = r["stack"], r.get("interest", 0)
        parts = [p for p in label.split(" < ") if p != "…"]
        at = k
        for p in parts[1:]:  # callers, in the stack's order
            at = st.index(p, at + 1) if p in st[at + 1:] else -1
            if at < 0:
                break
        if parts[0] != st[k] or at < 0:
            bad.append("row %d: %r is not its frame of interest and callers" % (i, label))
        for j in range(i):
            if labels[j] == label and rows[j]["stack"][rows[j].get("interest", 0):] != st[k:]:
                bad.append("rows %d and %d: both %r, other callers" % (j, i, label))
    check("%s: each row's label tells it apart (%d rows)" % (what, len(rows)), bad, [])


def where_cells(id_):
    return d.execute_script("return [...document.getElementById(arguments[0]).tBodies[0].rows]"
                            ".map(r => r.lastChild.textContent)", id_)


def window_class_rows(what, w):
    rows, left = window_processes(w, rep)
    check("%s: window classes (%d rows, %d processes not alive left out)" % (what, len(rows), left),
          table(d, "window-classes"), class_rows(rows))
    check("%s: the processes left out" % what,
          d.find_element(By.ID, "window-classes-note").get_attribute("data-left"), str(left))
    return rows


d = pc.start()
wait(d, "return document.body.dataset.loaded >= 1", "the page's first load")

rep = cmd("report", "--top", "20")
tot = rep["total"]
check("the trace's notes", d.execute_script(
    "return [...document.querySelectorAll('#notes div')].map(n => n.textContent)"),
    rep.get("trace_notes", []))
for card, key in (("peak", "peak_bytes"), ("peak-time", "peak_ns"), ("leaked", "leaked_bytes"),
                  ("leaked-blocks", "leaked_blocks"), ("allocations", "allocations"),
                  ("allocated", "allocated_bytes"), ("temporary", "temporary"),
                  ("temporary-bytes", "temporary_bytes"), ("peak-rss", "peak_rss_bytes")):
    check("card " + card, value(d, card), tot[key])
check("card peak-rss-time", value(d, "peak-rss-time"),
      tot["peak_rss_ns"] if tot["peak_rss_bytes"] is not None else None)

# The site lists: of the process with the highest peak, each tab.
proc = max(rep["processes"], key=lambda p: p["peak_bytes"])
check("process picked", d.find_element(By.ID, "proc").get_attribute("value"), str(proc["pid"]))
for tab in ("peak", "leaked", "allocations", "temporary"):
    d.find_element(By.CSS_SELECTOR, "#site-tabs button[data-list='%s']" % tab).click()
    want = [[str(r["peak_bytes"]), str(r["leaked_bytes"]), str(r["allocations"]),
             str(r["allocated_bytes"]), str(r["temporary"]), None] for r in proc["top"][tab]]
    check("sites, %s (%d rows)" % (tab, len(want)), table(d, "sites"), want)
    labels_apart("sites, " + tab, where_cells("sites"), proc["top"][tab])

# The programs of several processes: report's programs table (largest peak
# first), and each program's site lists when picked.
progs = sorted([g for g in rep.get("programs", []) if g["processes"] > 1],
               key=lambda g: -g["peak_bytes"])
check("programs (%d)" % len(progs), table(d, "programs"),
      [[str(g["processes"]), str(g["peak_bytes"]), str(g["leaked_bytes"]), str(g["allocations"]),
        str(g["temporary"]), None] for g in progs])
for g in progs:
    d.find_element(By.CSS_SELECTOR, "#proc option[value='prog:%s']" % g["exe"]).click()
    for tab in ("peak", "leaked", "allocations", "temporary"):
        d.find_element(By.CSS_SELECTOR, "#site-tabs button[data-list='%s']" % tab).click()
        want = [[str(r["peak_bytes"]), str(r["leaked_bytes"]), str(r["allocations"]),
                 str(r["allocated_bytes"]), str(r["temporary"]), None] for r in g["top"][tab]]
        check("program %s's sites, %s (%d rows)" % (g["exe"], tab, len(want)), table(d, "sites"), want)
        labels_apart("program %s's sites, %s" % (g["exe"], tab), where_cells("sites"), g["top"][tab])
d.find_element(By.CSS_SELECTOR, "#proc option[value='%s']" % proc["pid"]).click()

# A site clicked: its allocating function's callers and callees, each node
# with its bytes at the peak and allocations, as tree --focus (--bottom-up).
def flat(tree):
    out = []

    def walk(n):
        out.append([str(n["inclusive"]["peak_bytes"]), str(n["inclusive"]["allocations"])])
        for c in n.get("children", []):
            walk(c)

    for c in tree.get("children", []):
        walk(c)
    return out


d.find_element(By.CSS_SELECTOR, "#site-tabs button[data-list='peak']").click()
d.find_element(By.CSS_SELECTOR, "#sites tbody tr").click()
wait(d, "return document.getElementById('focus').dataset.function !== undefined",
     "the clicked site's callers and callees")
fn = d.find_element(By.ID, "focus").get_attribute("data-function")
for what, extra, ul in (("callers", ["--bottom-up"], "callers"), ("callees", [], "callees")):
    want = flat(cmd("tree", "--focus", fn, "--depth", "4", "--top", "5", *extra))
    got = d.execute_script("return [...document.querySelectorAll('#%s li')]"
                           ".map(li => [li.dataset.peak, li.dataset.allocs])" % ul)
    check("%s of %s (%d nodes)" % (what, fn, len(want)), got, want)
    if not want:
        errors.append("%s of %s: none" % (what, fn))

# The top sites over time: each band's values, the series of timeline
# --sites 8 at the interval the page asked for, or, for a trace with chunk
# totals (format 1.10), timeline --index's (rows at each chunk's end).
interval = d.find_element(By.ID, "chart").get_attribute("data-interval")
if interval == "index":
    tl = cmd("timeline", "--sites", "8", "--index")
    # The first view from the totals, then its check: report replayed.
    wait(d, "return document.getElementById('status').dataset.checked", "the totals' check")
    check("the totals' check", d.find_element(By.ID, "status").get_attribute("data-checked"),
          "agree")
else:
    tl = cmd("timeline", "--sites", "8", "--interval", interval)


def sites_shown(tl, key, cost):
    """The legend's series and labels against timeline's sites of cost."""
    got = d.execute_script("return [...document.querySelectorAll('#sites-legend li')]"
                           ".map(li => li.dataset.values)")
    check("sites over time by %s (%d sites, %d times)" % (cost, len(tl["sites"]), len(tl["site_times_ns"])),
          got, [",".join(str(v) for v in s[key]) for s in tl["sites"]])
    labels_apart("the sites' legend by " + cost, d.execute_script(
        "return [...document.querySelectorAll('#sites-legend li')].map(li => li.dataset.label)"), tl["sites"])


sites_shown(tl, "bytes", "in-use")

# The allocation rate and the temporary allocations' rate: per interval,
# the growth of timeline's cumulative count (each process's last count
# carried on), which for one process adds up to report's total; a trace
# whose timeline has no temporary count (sampled, or from the chunks'
# totals) has no chart of it.
def per_interval(key):
    last, prev, counts = {}, 0, []
    times = sorted({r["time_ns"] for p in tl["processes"] for r in p["rows"]})
    for t in times:
        for p in tl["processes"]:
            for r in p["rows"]:
                if r["time_ns"] == t and key in r:
                    last[p["image"]] = r[key]
        counts.append(sum(last.values()) - prev)
        prev = sum(last.values())
    return counts


for key, chart in (("allocations", "rate-chart"), ("temporary", "temp-chart")):
    has = any(key in r for p in tl["processes"] for r in p["rows"])
    shown = d.execute_script("return !arguments[0].closest('.plot').hidden", d.find_element(By.ID, chart))
    check("%s: a chart where timeline has the count" % key, shown, has)
    if not has:
        continue
    counts = per_interval(key)
    check("%s per interval (%d intervals)" % (key, len(counts)),
          d.find_element(By.ID, chart).get_attribute("data-counts"), ",".join(str(c) for c in counts))
    if len(rep["processes"]) == 1:  # an ended process's last partial interval has no row
        check("the intervals' %s add up to report's" % key, sum(counts), tot[key])

# And the series themselves hold what leaks says: at the trace's end each
# site has its leaked bytes in use (one process: leaks merges the rows of
# a program's processes that read the same, a series is one process's site).
lk_end = cmd("leaks", "--top", "0", "--no-default-suppressions")
leaked = {}
for row in lk_end["stacks"]:
    leaked[tuple(row["stack"])] = leaked.get(tuple(row["stack"]), 0) + row["leaked_bytes"]
if len(rep["processes"]) == 1:
    check("sites at the end: their leaks", [s["bytes"][-1] for s in tl["sites"]],
          [leaked.get(tuple(s["stack"]), 0) for s in tl["sites"]])

# The process tree: report's process table, each process under its
# parent, in the order they started.
ptable = rep.get("process_table", [])
if len(ptable) > 1:
    pids = {p["pid"] for p in ptable}
    kids = {}
    for p in ptable:
        kids.setdefault(p["ppid"] if p["ppid"] in pids else 0, []).append(p)
    order = []

    def down(up):
        for p in sorted(kids.get(up, []), key=lambda p: (p["start_ns"], p["image"])):
            order.append([str(p["pid"]), str(p["ppid"]), str(p["peak_bytes"]),
                          str(p["leaked_bytes"]), str(p["start_ns"]),
                          str(p["end_ns"]) if p.get("end_ns") is not None else None, None])
            if p["pid"] != up:
                down(p["pid"])

    down(0)
    check("process tree (%d processes)" % len(order), table(d, "processes"), order)

# A window dragged across the chart with the mouse.
chart = d.find_element(By.ID, "chart")
w = chart.size["width"]
ActionChains(d).move_to_element_with_offset(chart, int(-0.25 * w), 0).click_and_hold() \
    .move_by_offset(int(0.35 * w), 0).release().perform()
wait(d, "return document.getElementById('window-classes').dataset.from !== undefined",
     "the window, whole on the page")
f = d.find_element(By.ID, "from").get_attribute("value")
t = d.find_element(By.ID, "to").get_attribute("value")
print("dragged window: %s to %s" % (f, t))
win = cmd("window", "--from", f, "--to", t, "--top", "20")
shown = window_class_rows("dragged window", win)
got_bytes = d.execute_script(
    "return [...document.getElementById('window-classes').tBodies[0].rows]"
    ".map(r => [...r.cells].slice(1, 5).map(c => c.dataset.bytes))")
check("window classes' bytes", got_bytes,
      [[str(p[k + "_bytes"]) for k in ("aifi", "aifo", "aofi", "aofo")] for p in shown])
check("window rows", table(d, "window-rows"),
      [[r["impacting_type"], str(r["count"]), str(r["size"]), str(r["impacting_size"]), None]
       for r in win["rows"]])
labels_apart("window rows", where_cells("window-rows"), win["rows"])

# The window's flame graph: each drawn box is a node of window --tree, as
# wide as its bytes, in the tree's order (boxes under half a pixel are not drawn).
tree = cmd("window", "--from", f, "--to", t, "--top", "50", "--tree")
want = []


def walk(node, d):
    if 1000 * node["inclusive"]["size"] / max(1, tree["inclusive"]["size"]) < 0.5 or d >= 40:
        return
    want.append([str(node["inclusive"]["size"]), str(node["inclusive"]["count"])])
    for c in node.get("children", []):
        walk(c, d + 1)


walk(tree, 0)
got = d.execute_script("return [...document.querySelectorAll('#window-flame rect')]"
                       ".map(r => [r.dataset.size, r.dataset.count])")
check("window flame graph (%d boxes)" % len(want), got, want)

# The commit lifetimes: vmem's of the window, dragged, then the whole trace
# (the form emptied), where a Windows trace has its VirtualAlloc lifetimes.
def lifetimes(what, fr, to):
    args = ["--top", "20"] + (["--from", fr] if fr else []) + (["--to", to] if to else [])
    vm = cmd("vmem", *args)
    shown = d.execute_script("return !document.getElementById('vmem-section').hidden")
    check(what + ": commit lifetimes shown", shown, bool(vm["groups"]))
    if vm["groups"]:
        check(what + ": commit lifetimes' groups", table(d, "vmem-groups"),
              [[g["impacting_type"], str(g["count"]), str(g["size"]), str(g["impacting_size"]),
                None] for g in vm["groups"]])
        check(what + ": commit lifetimes' classes", table(d, "vmem-classes"),
              class_rows(vm["processes"]))


# Zoom into the dragged window: the chart's rows (times and heap in use of
# all processes) are timeline's over it, at the interval the page asked for.
def zoomed(what, fr, to):
    chart = d.find_element(By.ID, "chart")
    drawn = chart.get_attribute("data-drawn")
    d.find_element(By.ID, "zoom-in").click()
    wait(d, "return document.getElementById('chart').dataset.drawn !== '%s'" % drawn,
         what + ", drawn")
    check(what + ": range", [chart.get_attribute("data-zoom-from"),
                             chart.get_attribute("data-zoom-to")], [str(fr), str(to)])
    iv = chart.get_attribute("data-interval")
    tlz = cmd("timeline", "--from", "%dns" % fr, "--to", "%dns" % to, "--interval", iv)
    heap = {}
    for p in tlz["processes"]:
        for r in p["rows"]:
            heap[r["time_ns"]] = heap.get(r["time_ns"], 0) + r["heap_bytes"]
    check(what + ": the chart's rows (%d, every %s)" % (len(heap), iv),
          [chart.get_attribute("data-times"), chart.get_attribute("data-heap")],
          [",".join(str(t) for t in sorted(heap)), ",".join(str(heap[t]) for t in sorted(heap))])
    return int(iv[:-2])


zoomed("zoom into the dragged window", win["from_ns"], win["to_ns"])

# Down to single events: a window of 40 time units around the peak, asked in
# the form, zoomed into: rows no further apart than the trace's time unit.
head = subprocess.run([memscribe, "dump", "--header", trace], check=True, capture_output=True,
                      text=True).stdout
unit = 1
for line in head.splitlines():
    if line.startswith("# time_unit_ns="):
        unit = int(line.split("=")[1])
at = rep["total"]["peak_ns"] if rep.get("total") else rep["processes"][0]["peak_ns"]
nf, nt = max(0, at - 20 * unit), at + 20 * unit
d.find_element(By.ID, "from").clear()
d.find_element(By.ID, "from").send_keys("%dns" % nf)
d.find_element(By.ID, "to").clear()
d.find_element(By.ID, "to").send_keys("%dns" % nt)
d.find_element(By.CSS_SELECTOR, "#window-form button").click()
nwin = cmd("window", "--from", "%dns" % nf, "--to", "%dns" % nt, "--top", "20")
wait(d, "return document.getElementById('window-classes').dataset.from === '%d' && "
        "document.getElementById('window-classes').dataset.to === '%d'"
        % (nwin["from_ns"], nwin["to_ns"]), "the narrow window")
step = zoomed("zoom to 40 time units at the peak", nwin["from_ns"], nwin["to_ns"])
# (an aggregated trace's rows are at its cuts: a period apart at the finest)
finest = max(unit, rep.get("aggregate_ns", 0))
check("zoomed rows at most %d ns apart" % finest, step <= finest, True)
drawn = d.find_element(By.ID, "chart").get_attribute("data-drawn")
d.find_element(By.ID, "zoom-out").click()
wait(d, "return document.getElementById('chart').dataset.drawn !== '%s'" % drawn, "zoomed out")
check("zoomed out", d.find_element(By.ID, "chart").get_attribute("data-zoom-from"), "")
d.find_element(By.ID, "from").send_keys(Keys.CONTROL, "a")
d.find_element(By.ID, "from").clear()
d.find_element(By.ID, "from").send_keys(f)
d.find_element(By.ID, "to").clear()
d.find_element(By.ID, "to").send_keys(t)
d.find_element(By.CSS_SELECTOR, "#window-form button").click()
wait(d, "return document.getElementById('window-classes').dataset.from === '%d'" % win["from_ns"],
     "the dragged window again")

lifetimes("dragged window", str(win["from_ns"]) + "ns", str(win["to_ns"]) + "ns")
d.find_element(By.ID, "from").clear()
d.find_element(By.ID, "to").clear()
d.find_element(By.CSS_SELECTOR, "#window-form button").click()
whole = cmd("window", "--top", "20")
wait(d, "return document.getElementById('window-classes').dataset.from === '%d' && "
        "document.getElementById('window-classes').dataset.to === '%d'"
        % (whole["from_ns"], whole["to_ns"]), "the whole trace's window")
window_class_rows("whole trace", whole)
lifetimes("whole trace", None, None)

# The blocks live at a moment picked on the slider.
d.execute_script("const s = document.getElementById('at'); s.value = 500;"
                 "s.dispatchEvent(new Event('input'));")
wait(d, "return document.getElementById('at-label').dataset.value !== ''", "the slider's moment")
wait(d, "return document.getElementById('leaks-total').dataset.at === "
        "document.getElementById('at-label').dataset.value", "the leaks at the moment")
at = d.find_element(By.ID, "at-label").get_attribute("data-value")
lk = cmd("leaks", "--at", at + "ns", "--top", "20")
check("live at %s ns: bytes" % at, value(d, "leaks-total"),
      sum(p["leaked_bytes"] for p in lk["processes"]))
check("live at %s ns: blocks" % at,
      int(d.find_element(By.ID, "leaks-total").get_attribute("data-blocks")),
      sum(p["leaked_blocks"] for p in lk["processes"]))
check("live at %s ns: rows" % at, table(d, "leaks"),
      [[str(s["leaked_bytes"]), str(s["leaked_blocks"]), None] for s in lk["stacks"]])
# The address-space map of that moment: frag's, rect for rect.
wait(d, "return document.getElementById('map').dataset.at === "
        "document.getElementById('at-label').dataset.value", "the map at the moment")
svg = subprocess.run([memscribe, "frag", "--svg", "-", "--at", at + "ns", trace], check=True,
                     capture_output=True, text=True).stdout
check("the map's boxes at %s ns" % at,
      d.execute_script("return document.querySelectorAll('#map rect').length"),
      svg.count("<rect"))
check("the map's title", d.execute_script("const t = document.querySelector('#map title');"
                                          "return t ? t.textContent : null"),
      svg.split("<title>", 1)[1].split("</title>", 1)[0] if "<title>" in svg else None)
# The axes: each label says what the drawing holds at its place. A time
# tick's text is its time from the trace's start in the unit it names, at
# x = its time across the chart's span (the SVG's data-start-ns and
# data-end-ns); a value tick's text is its bytes (or allocations per
# second), at y = its value over the chart's top. At least three of each.
UNITS = {"s": 1e9, "ms": 1e6, "µs": 1e3, "ns": 1, "B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3,
         "TiB": 1024 ** 4}


def said(text):
    """A label's number in base units: '1.5 s', '20 MiB', '2,000/s', '0'."""
    num, _, unit = text.replace(",", "").replace("/s", "").partition(" ")
    return float(num) * UNITS.get(unit, 1)


def axes(chart):
    ticks = d.execute_script(
        "const t = document.getElementById(arguments[0] + '-ticks'); return [{...t.dataset}, "
        "[...t.children].map(s => [s.className, s.textContent, Number(s.dataset.value), "
        "parseFloat(s.style.left || s.style.top)])]", chart)
    meta, labels = ticks
    t0, t1, vmax = float(meta["t0"]), float(meta["t1"]), float(meta["max"])
    bottom, height = float(meta["bottom"]), float(meta["height"])
    bad, nx, ny = [], 0, 0
    for cls, text, v, at in labels:
        want = 100 * (v - t0) / (t1 - t0) if cls == "xtick" else 100 * (bottom - height * v / vmax)
        if abs(at - want) > 0.01 or abs(said(text) - v) > max(1e-6 * abs(v), 1e-9):
            bad.append((text, v, at, want))
        nx += cls == "xtick"
        ny += cls == "ytick"
    check("%s: every tick label at its value (%d time, %d value ticks)" % (chart, nx, ny), bad, [])
    if nx < 3 or ny < 3:
        pc.errors.append("%s: %d time and %d value ticks, fewer than 3" % (chart, nx, ny))
    return t0, t1


span0 = axes("chart")
check("the heap chart's axis spans the chart's times", [str(int(x)) for x in span0],
      [d.find_element(By.ID, "chart").get_attribute(k) for k in ("data-start-ns", "data-end-ns")])
axes("rate-chart")
if d.execute_script("return !document.getElementById('temp-chart').closest('.plot').hidden"):
    axes("temp-chart")
axes("sites-chart")
# The other costs, heaptrack_gui's Allocations and Temporary Allocations
# charts by function: each tab asks timeline --site-cost (the index's
# totals hold no per-site count: that command replays, as the page's).
site_args = ["--index"] if interval == "index" else ["--interval", interval]
for cost, key in (("allocations", "allocations"), ("temporary", "temporary")):
    tab = d.find_element(By.CSS_SELECTOR, "#sites-cost-tabs button[data-cost='%s']" % cost)
    if not tab.is_displayed():
        check("no temporary sites: the trace has no temporary count", "temporary" in tl["processes"][0]["rows"][0], False)
        continue
    tab.click()
    wait(d, "return document.getElementById('sites-chart').dataset.cost === arguments[0]",
         "the sites by " + cost, 60, cost)
    sites_shown(cmd("timeline", "--sites", "8", "--site-cost", cost, *site_args), key, cost)
    axes("sites-chart")
d.find_element(By.CSS_SELECTOR, "#sites-cost-tabs button[data-cost='in-use']").click()
wait(d, "return document.getElementById('sites-chart').dataset.cost === 'in-use'", "the sites by bytes in use")

# The sizes: histogram's classes summed over the processes, bar for bar,
# then drawn by bytes.
classes = pc.size_classes(cmd("histogram"))
check("the sizes' bars (%d classes)" % len(classes), d.execute_script(pc.BARS), classes)
drawn = d.execute_script("return Number(document.getElementById('hist').dataset.drawn)")
d.find_element(By.CSS_SELECTOR, "#hist-tabs button[data-by='bytes']").click()
wait(d, "return Number(document.getElementById('hist').dataset.drawn) > arguments[0]", "the sizes by bytes",
     60, drawn)
tallest = d.execute_script("const r = [...document.querySelectorAll('#hist rect')]; "
                           "return Number(r.reduce((a, b) => (Number(b.getAttribute('height')) > "
                           "Number(a.getAttribute('height')) ? b : a)).dataset.min)")
check("the sizes by bytes: the tallest bar's class", tallest,
      max(classes, key=lambda c: (c[3], -c[0]))[0])

sys.exit(finish(d))
