#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the HTML page shows, read off the DOM headless Chromium built
(`--dump-dom`), against `memscribe report --format=json` of the same trace.

usage: html_screen.py DOM.html REPORT.json [VMEM.json]

- the summary table: every number on screen (its text, and the data-v the
  script put beside it) equals report's total, calls included; a sampled
  trace has no temporary row, card, column or flame cost;
- the cards: peak, allocations, leaked, temporary, peak RSS;
- the tables of call sites and leaks: each row's numbers equal a row of
  report of the same process (of the same program, report's "programs",
  on a tree where an executable ran more than once), and its stack is that
  row's frames, leaf
  first (a folded run of library frames stands for the frames in its
  title), as many as the cell says the stack has; no two rows read alike
  (item 7 of issue 40: rows showed the leaf only);
- a C++ stack that starts in the standard library shows the user's frame
  after its library frames (folded: "[6 library frames]"); each row starts
  after the leaf's allocation wrappers (data-skipped) and shows report's
  frame of interest ("interest");
- with VMEM.json (`memscribe vmem --format=json --top 0` of the window the
  page shows), the commit lifetimes' section: shown where vmem has groups
  (hidden where none), its window vmem's, each row of its table a group of
  vmem (Impacting Type, Count, Size, Impacting Size and the commit stack's
  frames), every group a row, in vmem's order, and its cards vmem's
  processes' classes, summed.
Prints a line per check; exits 1 with the differences.
"""
import json
import re
import sys

import html_dom

errors = []


def check(what, got, want):
    if got != want:
        errors.append("%s: on screen %r, report %r" % (what, got, want))


def number(text):
    """The leading integer of a cell's text ("1,234 (1.2 KiB)")."""
    m = re.match(r"\s*(-?[0-9][0-9,]*)", text)
    return int(m.group(1).replace(",", "")) if m else None


def summary(t, rep):
    tot = rep["total"]
    n = 0
    for td in t.root.find_all(lambda x: x.tag == "td" and x.attrs.get("id", "").startswith("sum-")):
        key = td.attrs["id"][4:]
        if "data-v" not in td.attrs:
            continue
        v = int(td.attrs["data-v"])
        if key.startswith("calls-"):
            want = tot["calls"].get(key[6:])
        elif key in tot:
            want = tot[key]
        else:
            continue
        check("summary " + key, v, want)
        if key != "peak_ns":
            check("summary %s as text" % key, number(td.all_text()), want)
        n += 1
    shown = {td.attrs["id"][4:] for td in t.root.find_all(lambda x: x.tag == "td" and "id" in x.attrs)}
    for key in ("temporary", "temporary_bytes", "peak_rss_bytes"):
        check("summary row %s shown" % key, key in shown, tot[key] is not None)
    for k in tot["calls"]:
        check("summary row calls-%s shown" % k, "calls-" + k in shown, True)
    print("ok: summary: %d numbers on screen equal report's" % n)


def cards(t, rep):
    tot = rep["total"]

    def card(cid, part):
        c = t.by_id.get(cid)
        if c is None:
            return None
        return [x for x in c.children if part in x.classes()][0].all_text()

    # A sampled trace's counted totals (report's "exact") where it has them.
    exact = tot.get("exact") or {}
    check("card peak (exact)", number(card("card-peak", "exact")), tot["peak_bytes"])
    check("card allocations", number(card("card-allocs", "value")),
          exact.get("allocations", tot["allocations"]))
    check("card leaked blocks", number(card("card-leaked", "exact")), tot["leaked_blocks"])
    temp = card("card-temp", "value")
    check("card temporary", None if temp is None else number(temp),
          exact.get("temporary", tot["temporary"]))
    if exact:
        check("card usable heap at the end", "card-usable" in t.by_id, True)
    check("card peak RSS shown", "card-rss" in t.by_id, tot["peak_rss_bytes"] is not None)
    options = [o.all_text() for o in t.by_id["flame-cost"].children if o.tag == "option"]
    check("flame graph cost 'temporary allocations' offered", "temporary allocations" in options,
          tot["temporary"] is not None)
    print("ok: cards and the flame graph's costs")


def row_stack(td):
    """The frames a stack cell shows, leaf first, with the frames of its
    folded library runs; and the pid it names, if any."""
    frames, pid = [], None
    for x in td.children:
        c = x.classes()
        if "frame" in c:
            frames.extend(x.all_text().split(" < "))
        elif "lib" in c:
            frames.extend(x.attrs["title"].split("\n"))
            check("a folded run's count", int(x.attrs["data-n"]), len(x.attrs["title"].split("\n")))
        elif "pid" in c:
            pid = int(re.search(r"pid (\d+)", x.all_text()).group(1))
    return frames, pid


def table(t, tid, rep, cols):
    """Match each row of table tid with a row of report: (pid, frames) and
    the numbers cols (page class -> report key)."""
    pool = []
    # A tree where an executable ran in several processes: the page's rows
    # are per program, as report's "programs" (pid: none).
    for p in rep.get("programs") or rep["processes"]:
        seen = set()
        for lst in p["top"].values():
            for r in lst or []:
                k = (tuple(r["stack"]), r["allocations"], r["allocated_bytes"])
                if k not in seen:
                    seen.add(k)
                    pool.append(dict(r, pid=p.get("pid")))
    one = len(rep["processes"]) == 1
    texts, n, other = [], 0, 0
    for tr in t.by_id[tid].find_all(lambda x: x.tag == "tr" and x.attrs.get("class") == "row"):
        fn = [c for c in tr.children if "fn" in c.classes()][0]
        text = fn.all_text()
        if re.match(r"\(\d+ other call sites", text):
            other += 1
            continue
        texts.append(text)
        frames, pid = row_stack(fn)
        if "data-frames" not in fn.attrs or not frames:
            errors.append("%s: the row %r shows no stack (its frames, and how many)" % (tid, text))
            continue
        depth = int(fn.attrs["data-frames"])
        skipped = int(fn.attrs.get("data-skipped", "0"))
        vals = {}
        for c in tr.children:
            for k in c.classes():
                if k.startswith("c-") and "data-v" in c.attrs:
                    vals[k[2:]] = int(c.attrs["data-v"])
                    check("%s: %s as text" % (tid, k), number(c.all_text()), vals[k[2:]])
        match = None
        for r in pool:
            # the row starts after the leaf's allocation wrappers it leaves
            # out (data-skipped) and shows report's frame of interest
            if (len(r["stack"]) == depth and r["stack"][skipped:skipped + len(frames)] == frames and
                    skipped <= r["interest"] < skipped + len(frames) and
                    (pid is None or r["pid"] is None or r["pid"] == pid) and
                    all(r[rk] == vals[pk] for pk, rk in cols.items()
                        if pk in vals and (one or rk != "peak_bytes"))):
                match = r
                break
        if match is None:
            errors.append("%s: no row of report has the stack %s and the numbers %s" %
                          (tid, " < ".join(frames) + (" (pid %d)" % pid if pid else ""), vals))
            continue
        pool.remove(match)
        n += 1
    dup = sorted({x for x in texts if texts.count(x) > 1})
    check("%s: rows that read alike" % tid, dup, [])
    print("ok: %s: %d rows equal report's (%s), no two alike%s" %
          (tid, n, ", ".join(cols), "; the lumped row left out" if other else ""))
    return n


def vm_table(t, v):
    """The commit lifetimes' section against vmem's JSON v of the window the
    page shows."""
    def expect(what, got, want):
        if got != want:
            errors.append("commit lifetimes: %s: on screen %r, vmem %r" % (what, got, want))

    expect("section shown", "hidden" not in t.by_id["vmem"].attrs, bool(v["groups"]))
    expect("its link shown", "hidden" not in t.by_id["nav-vmem"].attrs, bool(v["groups"]))
    if not v["groups"]:
        print("ok: commit lifetimes: none, no section")
        return
    rng, end = t.by_id["vm-range"], int(t.by_id["sum-endNs"].attrs["data-v"])
    expect("window start", int(rng.attrs["data-t0"]), v["from_ns"])
    # Both ends in one unit, the end's: "0 ns \u2013 1.505 s" read as two scales.
    span = re.match(r"Window [0-9.]+ (s|ms|\u00b5s|ns) \u2013 [0-9.]+ (s|ms|\u00b5s|ns) ", rng.all_text())
    expect("window range in one unit (%r)" % rng.all_text(), bool(span) and span.group(1) == span.group(2),
           True)
    expect("window end (included; vmem stops at the trace's end)",
           min(int(rng.attrs["data-t1"]), end), v["to_ns"])
    pool, order = list(v["groups"]), []
    for tr in t.by_id["vm-table"].find_all(lambda x: x.tag == "tr" and x.attrs.get("class") == "row"):
        cell = {k[2:]: c for c in tr.children for k in c.classes() if k.startswith("c-")}
        fn = [c for c in tr.children if "fn" in c.classes()][0]
        frames, pid = row_stack(fn)
        depth = int(fn.attrs.get("data-frames", -1))
        skipped = int(fn.attrs.get("data-skipped", "0"))
        got = (cell["type"].all_text(), int(cell["count"].attrs["data-v"]),
               int(cell["size"].attrs["data-v"]), int(cell["impacting"].attrs["data-v"]))
        for k in ("count", "size", "impacting"):
            expect("%s as text" % k, number(cell[k].all_text()), int(cell[k].attrs["data-v"]))
        match = [g for g in pool
                 if (g["impacting_type"], g["count"], g["size"], g["impacting_size"]) == got and
                 len(g["group"]) == depth and g["group"][skipped:skipped + len(frames)] == frames and
                 skipped <= g["interest"] < skipped + len(frames) and
                 (pid is None or g["pid"] == pid)]
        if not match:
            errors.append("commit lifetimes: no group of vmem has the stack %s and %s" %
                          (" < ".join(frames), got))
            continue
        pool.remove(match[0])
        order.append((abs(got[3]), got[2]))
    expect("groups not on screen", [(g["impacting_type"], g["group"][:3]) for g in pool], [])
    expect("row order (|impacting size|, size)", order,
           [(abs(g["impacting_size"]), g["size"]) for g in v["groups"]][:len(order)])

    def card(cid, part):
        return number([x for x in t.by_id[cid].children if part in x.classes()][0].all_text())

    def total(key):
        return sum(p[key] for p in v["processes"])
    expect("card Transient lifetimes", card("vm-transient", "value"), total("aifi"))
    expect("card Transient bytes", card("vm-transient", "exact"), total("aifi_bytes"))
    expect("card Impacting lifetimes", card("vm-impacting", "value"), total("aifo") + total("aofi"))
    expect("card Impacting Size", card("vm-impacting-size", "exact"), total("impacting_size"))
    expect("card Size", card("vm-size", "exact"), total("aifi_bytes") + total("aifo_bytes"))
    expect("card AOFO lifetimes", card("vm-aofo", "value"), total("aofo"))
    expect("card AOFO bytes", card("vm-aofo", "exact"), total("aofo_bytes"))
    print("ok: commit lifetimes: %d rows equal vmem's groups for [%d, %d] ns, in its order; the cards" %
          (len(order), v["from_ns"], v["to_ns"]))


CLASSES = ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")


def leak_classes(t, lk):
    """The leak classes of record --reach: each leaks-table row's bytes per
    class equal the row of `memscribe leaks` (lk: its JSON, every stack, no
    suppression) with its stack and leaked bytes; the legend says the
    totals. A trace without classes shows none."""
    classed = any(p.get("reach") for p in lk["processes"])
    rows = t.by_id["leaks-table"].find_all(lambda x: x.tag == "tr" and x.attrs.get("class") == "row")
    legend = t.by_id["leaks-classes"]
    check("leak classes' legend shown", "hidden" not in legend.attrs, classed)
    if not classed:
        check("no class column without classes",
              [r for r in rows if r.find_all(lambda x: "c-definitely_lost_bytes" in x.classes())], [])
        return
    pool = [r for r in lk["stacks"]]
    n = 0
    for tr in rows:
        fn = [c for c in tr.children if "fn" in c.classes()][0]
        frames, pid = row_stack(fn)
        skipped = int(fn.attrs.get("data-skipped", "0"))
        vals = {k[2:]: int(c.attrs["data-v"]) for c in tr.children for k in c.classes()
                if k.startswith("c-") and "data-v" in c.attrs}
        match = [r for r in pool if r["stack"][skipped:skipped + len(frames)] == frames and
                 r["leaked_bytes"] == vals["leaked_bytes"] and (pid is None or r["pid"] == pid) and
                 all(r[c + "_bytes"] == vals[c + "_bytes"] for c in CLASSES)]
        if not match:
            errors.append("leaks-table: no row of leaks has the stack %s and the classes %s" %
                          (" < ".join(frames), vals))
            continue
        pool.remove(match[0])
        n += 1
    tot = lk["processes"]
    text = legend.all_text()
    for c, word in zip(CLASSES, ("definitely ", "indirectly ", "possibly lost ", "still reachable ")):
        want = sum(p["reach"][c + "_bytes"] for p in tot if p.get("reach"))
        got = re.search(re.escape(word) + r"([0-9.]+ [KMG]?i?B)", text)
        check("legend's %s" % c, got and got.group(1), human(want))
    print("ok: leak classes: %d rows equal leaks' per class; the legend's totals" % n)


def human(n):
    """A byte count as the page's bytes() writes it."""
    units, v, k = ["B", "KiB", "MiB", "GiB", "TiB"], float(abs(n)), 0
    while v >= 1024 and k < len(units) - 1:
        v /= 1024
        k += 1
    s = str(int(v)) if k == 0 else "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v
    return ("-" if n < 0 else "") + s + " " + units[k]


def kind_notes(t, rep):
    """What the trace is, when aggregated or of record --keep-last: the
    page's line holds report's notes of those kinds, each as a sentence."""
    notes = [n for n in rep.get("trace_notes", [])
             if n.startswith("aggregated trace") or "keep-last" in n]
    el = t.by_id.get("aggregated")
    shown = el is not None and "hidden" not in el.attrs
    check("the line of what the trace is shown", shown, bool(notes))
    if notes:
        want = " ".join(n[0].upper() + n[1:] + "." for n in notes)
        check("what the trace is", el.all_text(), want)
        print("ok: the page says what the trace is: %s" % want[:80])


def main():
    t = html_dom.parse(sys.argv[1])
    rep = json.load(open(sys.argv[2]))
    body = t.root.find_all(lambda n: n.tag == "body")[0]
    check("page ready", body.attrs.get("data-ready"), "1")
    check("script errors", body.attrs.get("data-errors"), None)
    kind_notes(t, rep)
    summary(t, rep)
    cards(t, rep)
    cols = {"allocations": "allocations", "allocated_bytes": "allocated_bytes",
            "peak_bytes": "peak_bytes", "leaked_bytes": "leaked_bytes", "temporary": "temporary"}
    table(t, "sites-table", rep, cols)
    table(t, "leaks-table", rep, {"leaked_bytes": "leaked_bytes", "leaked_blocks": "leaked_blocks",
                                  "allocations": "allocations", "allocated_bytes": "allocated_bytes"})
    # A stack that starts in the standard library (C++'s std::vector): its
    # library frames fold into the row's first item, and the user's frame
    # (report's frame of interest) shows after them.
    for tr in t.by_id["sites-table"].find_all(lambda x: x.tag == "tr" and x.attrs.get("class") == "row"):
        fn = [c for c in tr.children if "fn" in c.classes()][0]
        items = [c for c in fn.children if c.tag == "span"]
        if items and "std::" in items[0].attrs.get("title", "") and len(items) > 1:
            check("a std:: leaf is folded library frames", "lib" in items[0].classes(), True)
            check("the user's frame after them", "frame" in items[1].classes() and
                  not items[1].all_text().startswith("std::"), True)
            print("ok: library frames fold: %s" % fn.all_text())
    if len(sys.argv) > 3:
        vm_table(t, json.load(open(sys.argv[3])))
    if len(sys.argv) > 4:
        leak_classes(t, json.load(open(sys.argv[4])))
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
