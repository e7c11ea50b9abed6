# SPDX-License-Identifier: MIT
"""The page's leak classes (run by tests/e2e/serve_views.sh on
tests/programs/rec_reach recorded with --reach): python3 serve_leaks.py
URL MEMSCRIBE TRACE SHOT.

At the end, a bar per memcheck class whose bytes and blocks are `memscribe
leaks --format=json`'s reach sums over the processes; each class the
program makes has some; the slider moved before the end (a moment: no
scan then) hides the chart, as the command has no classes there.
"""
import sys

import page_check as pc

d = pc.start()
pc.wait(d, "return document.body.dataset.loaded >= 1", "the page's first load")
pc.wait(d, "return !document.getElementById('leak-classes').hidden", "the leak classes", 60)
CLASSES = ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable", "unclassed")
leaks = pc.cmd("leaks", "--top", "20")
scanned = [p["reach"] for p in leaks["processes"] if p.get("reach")]
want = [[k, sum(r[k + "_bytes"] for r in scanned), sum(r[k + "_blocks"] for r in scanned)] for k in CLASSES]
got = d.execute_script("return [...document.querySelectorAll('#leak-classes-chart rect')]"
                       ".map(r => [r.dataset.class, Number(r.dataset.bytes), Number(r.dataset.blocks)])")
pc.check("the leak classes' bars", got, want)
pc.check("each class the program makes has blocks", [k for k, b, n in want[:4] if n == 0], [])
# A moment before the end: no scan, no classes.
d.execute_script("const s = document.getElementById('at'); s.value = 500;"
                 "s.dispatchEvent(new Event('input'))")
pc.wait(d, "return document.getElementById('leaks-total').dataset.at !== ''", "the leaks at a moment")
pc.check("no classes at a moment before the end",
         d.execute_script("return document.getElementById('leak-classes').hidden"), True)
sys.exit(pc.finish(d))
