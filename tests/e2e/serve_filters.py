#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The page's process and thread filters (memscribe serve), in headless
Chromium: each choice offered is a process of report or a thread that
allocated (window --by thread); with one picked, every view shows what the
commands show with --pid (or --thread) of it: the cards (report), the call
tree's root and first level (tree), the sizes (histogram) and the blocks
live at the end (leaks).

usage: serve_filters.py URL MEMSCRIBE TRACE SCREENSHOT pid|thread
Picks the process with the highest peak among several (pid), or the thread
that leaked most (thread). Prints a line per check; exits 1 with the
differences.
"""
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

import page_check as pc
from page_check import check, cmd, finish, wait

what = sys.argv[5]
d = pc.start()
wait(d, "return document.body.dataset.loaded >= 1 && document.getElementById('filters').dataset.filled >= 1",
     "the first load and the filters' choices")

rep = cmd("report", "--top", "20")
threads = cmd("window", "--by", "thread", "--top", "200")
options = lambda id_: d.execute_script(  # noqa: E731
    "return [...document.getElementById(arguments[0]).options].map(o => o.value)", id_)
check("the process filter's choices", options("f-pid"), [""] + [str(p["pid"]) for p in rep["processes"]])
tids = sorted({(r["pid"], r["tid"]) for r in threads["rows"]})
check("the thread filter's choices", options("f-thread"), [""] + [str(t) for _, t in tids])

if what == "pid":
    pick = max(rep["processes"], key=lambda p: p["peak_bytes"])["pid"]
    flag, select = ["--pid", str(pick)], "f-pid"
else:
    leaked = {}
    for r in threads["rows"]:
        leaked[r["tid"]] = leaked.get(r["tid"], 0) + (r["impacting_size"] if r["impacting_type"] == "Impacting" else 0)
    pick = max(leaked, key=lambda t: (leaked[t], -t))
    flag, select = ["--thread", str(pick)], "f-thread"

loaded = int(d.execute_script("return Number(document.body.dataset.loaded)"))
drawn_tree = int(d.execute_script("return Number(document.getElementById('tree').dataset.drawn || 0)"))
drawn_hist = int(d.execute_script("return Number(document.getElementById('hist').dataset.drawn || 0)"))
Select(d.find_element(By.ID, select)).select_by_value(str(pick))
wait(d, "return Number(document.body.dataset.loaded) > arguments[0] && "
        "Number(document.getElementById('tree').dataset.drawn || 0) > arguments[1] && "
        "Number(document.getElementById('hist').dataset.drawn || 0) > arguments[2]",
     "the page filtered by %s %s" % (what, pick), 120, loaded, drawn_tree, drawn_hist)

frep = cmd("report", "--top", "20", *flag)
scope = frep.get("total") or frep["processes"][0]
for card, key in (("peak", "peak_bytes"), ("leaked", "leaked_bytes"), ("allocations", "allocations"),
                  ("allocated", "allocated_bytes"), ("temporary", "temporary")):
    v = d.find_element(By.ID, card).get_attribute("data-value")
    check("%s %s: card %s" % (what, pick, card), int(v) if v else None, scope[key])
tree = cmd("tree", "--depth", "256", "--top", "100", "--sort", "peak", *flag)
rows = d.execute_script(
    "return [...document.getElementById('tree').tBodies[0].rows].filter(r => r.dataset.depth <= 1)"
    ".map(r => [r.dataset.fn, ...[...r.cells].slice(1).map(c => Number(c.dataset.value))])")
check("%s %s: the tree's root and first level" % (what, pick), rows,
      [[n["function"]] + [n["inclusive"][k] for k in pc.COSTS] for n in [tree] + tree.get("children", [])])
check("%s %s: the sizes' bars" % (what, pick), d.execute_script(pc.BARS), pc.size_classes(cmd("histogram", *flag)))
lk = cmd("leaks", "--top", "20", *flag)
check("%s %s: live at the end" % (what, pick),
      int(d.find_element(By.ID, "leaks-total").get_attribute("data-value")),
      sum(p["leaked_bytes"] for p in lk["processes"]))

sys.exit(finish(d))
