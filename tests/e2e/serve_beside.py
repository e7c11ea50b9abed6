# SPDX-License-Identifier: MIT
"""The page's view of each heaptrack_gui tab, each kept as a screenshot
beside heaptrack_gui's of the same program (tests/e2e/serve_beside.sh):
python3 serve_beside.py URL MEMSCRIBE TRACE SHOT ARTDIR.

Each view is brought up as a person would (a tab, a mode, a window typed
in), checked to hold what its command answers (rows, bands, bars: the
numbers themselves are held by serve_page.py and serve_views.sh), and
kept as ARTDIR/beside-page-VIEW.png, VIEW named as heaptrack_gui's tab.
"""
import os
import sys

from selenium.webdriver.common.by import By

import page_check as pc

art = sys.argv[5]
d = pc.start()
d.set_window_size(1300, 1100)
pc.wait(d, "return document.body.dataset.loaded >= 1", "the page's first load")
pc.wait(d, "return Number(document.getElementById('tree').dataset.drawn || 0) >= 1", "the first tree")


def keep(view, css, holds):
    """A screenshot of the element css as beside-page-VIEW.png, once the
    script holds says it holds something (a count, more than 0)."""
    pc.wait(d, "return (%s) > 0" % holds, "the page's %s view" % view)
    e = d.find_element(By.CSS_SELECTOR, css)
    d.execute_script("arguments[0].scrollIntoView()", e)
    e.screenshot(os.path.join(art, "beside-page-%s.png" % view))
    print("ok: the page's %s view: %s" % (view, os.path.join(art, "beside-page-%s.png" % view)))


def tree_mode(mode):
    before = int(d.find_element(By.ID, "tree").get_attribute("data-drawn") or 0)
    d.find_element(By.CSS_SELECTOR, "#tree-tabs button[data-mode='%s']" % mode).click()
    pc.wait(d, "return Number(document.getElementById('tree').dataset.drawn || 0) > %d" % before,
            "the %s tree" % mode)


ROWS = "document.querySelectorAll('#tree tbody tr').length - 1"
keep("summary", "section.cards", "document.querySelectorAll('.card .value').length")
tree_mode("up")
keep("bottom-up", "#trees-section", ROWS)
# Caller / Callee: heaptrack_gui's list of every function with its
# inclusive and self costs (the page's "functions", tree --flat), whose
# "callers · callees" link opens the callers of the one picked.
tree_mode("flat")
keep("caller-callee", "#trees-section", ROWS)
d.find_elements(By.CSS_SELECTOR, "#tree tbody tr a.focus")[1].click()
pc.wait(d, "return document.querySelector('#tree-tabs button.on').dataset.mode === 'callers' && "
           "document.getElementById('tree').dataset.drawn > 0", "the callers of the function picked")
tree_mode("down")
keep("top-down", "#trees-section", ROWS)
# The flame graph: the window's, of the whole run.
rep = pc.cmd("report")
first = min(p["first_ns"] for p in rep["processes"])
last = max(p["last_ns"] for p in rep["processes"])
d.find_element(By.ID, "from").send_keys("%dns" % first)
d.find_element(By.ID, "to").send_keys("%dns" % last)
d.find_element(By.CSS_SELECTOR, "#window-form button").click()
keep("flame-graph", "section[aria-label='window']", "document.querySelectorAll('#window-flame rect').length")
keep("consumed", "section[aria-label='over time']", "document.querySelectorAll('#chart polyline, #chart path').length")
for cost, view in (("allocations", "allocations"), ("temporary", "temporary-allocations")):
    d.find_element(By.CSS_SELECTOR, "#sites-cost-tabs button[data-cost='%s']" % cost).click()
    pc.wait(d, "return document.getElementById('sites-chart').dataset.cost === '%s'" % cost, "the sites by " + cost)
    keep(view, "section[aria-label='call sites over time']", "document.querySelectorAll('#sites-chart polygon').length")
keep("sizes", "section[aria-label='sizes']", "document.querySelectorAll('#hist rect').length")
sys.exit(pc.finish(d))
