#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Two runs compared on memscribe serve's page (serve --base OLD NEW), in
headless Chromium: the totals' base, new and change, and each cost's sites
(change, base, new, allocations' change, in order) against `memscribe diff
--format=json OLD NEW --sort COST`, and the differential flame graph
against `memscribe flamegraph --diff --cost COST OLD NEW` (the same frames,
each with its title). Holds the expected change of
tests/programs/diff_prog.c's two builds: allocations +1, bytes +564, peak
+500, leaked +64, temporary 0.

usage: serve_compare.py URL MEMSCRIBE NEW SCREENSHOT OLD
Prints a line per check; exits 1 with the differences.
"""
import json
import re
import subprocess
import sys

from selenium.webdriver.common.by import By

import page_check as pc
from page_check import check, finish, wait

base = sys.argv[5]
d = pc.start()
wait(d, "return Number(document.getElementById('compare-section').dataset.drawn || 0) >= 1",
     "the comparison")


def run(*args):
    return subprocess.run([pc.memscribe, *args], check=True, capture_output=True, text=True).stdout


COSTS = {"peak": "peak_bytes", "leaked": "leaked_bytes", "allocations": "allocations",
         "bytes": "allocated_bytes", "temporary": "temporary"}
diff = json.loads(run("diff", "--format=json", "--sort", "peak", "--top", "20", base, pc.trace))
total = d.execute_script(
    "return [...document.getElementById('compare-total').tBodies[0].rows].map(r => [r.dataset.cost, "
    "...[...r.cells].slice(1).map(c => Number(c.dataset.value))])")
check("the totals: base, this run, change", total,
      [[k, diff["total"][f + "_base"], diff["total"][f + "_new"], diff["total"][f + "_change"]]
       for k, f in COSTS.items()])
check("the totals' changes (diff_prog's two builds)", {r[0]: r[3] for r in total},
      {"peak": 500, "leaked": 64, "allocations": 1, "bytes": 564, "temporary": 0})

for cost, f in COSTS.items():
    drawn = int(d.find_element(By.ID, "compare-section").get_attribute("data-drawn"))
    if cost != "peak":
        d.find_element(By.CSS_SELECTOR, "#compare-tabs button[data-sort='%s']" % cost).click()
        wait(d, "const s = document.getElementById('compare-section'); "
                "return Number(s.dataset.drawn) > arguments[0] && s.dataset.sort === arguments[1]",
             "the sites by " + cost, 60, drawn, cost)
    want = json.loads(run("diff", "--format=json", "--sort", cost, "--top", "20", base, pc.trace))
    rows = d.execute_script(
        "return [...document.getElementById('compare-sites').tBodies[0].rows].map(r => "
        "[...r.cells].slice(0, 4).map(c => Number(c.dataset.value)))")
    check("sites by the change of %s (%d)" % (cost, len(want["rows"])), rows,
          [[r[f + "_change"], r[f + "_base"], r[f + "_new"], r["allocations_change"]] for r in want["rows"]])
    svg = run("flamegraph", "--diff", "--cost", cost, "--width", "1000", "-o", "-", base, pc.trace)
    titles = re.findall(r"<title>([^<]*)</title>", svg)
    shown = d.execute_script("return [...document.querySelectorAll('#compare-flame title')].map(t => t.textContent)")
    check("the differential flame graph of %s: its %d titles" % (cost, len(titles)),
          shown, [re.sub(r"&(amp|lt|gt|quot|#39);", lambda m: {"amp": "&", "lt": "<", "gt": ">", "quot": '"',
                                                              "#39": "'"}[m.group(1)], t) for t in titles])

sys.exit(finish(d))
