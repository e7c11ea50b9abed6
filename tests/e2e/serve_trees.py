#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The call trees of memscribe serve's page, in a real browser (headless
Chromium driven by Selenium), against the JSON of the command a user runs
for the same question (`memscribe tree --format=json --depth 256 --top 100`
with the page's options):

- top-down: the root's row, then the largest child opened level by level
  down to a leaf, each level's rows (function and every cost) in order;
- bottom-up, and each cost's order (--sort);
- a function's callers and callees, picked on a row (--focus F, with
  --bottom-up for the callers); every function once with its inclusive and
  self costs (--flat);
- the filter, by function, by file and by module: the rows that match are
  the functions of the command's tree that hold the text (in their name,
  their "files" or their "modules"), each drawn on its path;
- the window's tree (window --tree --from --to of a window typed in);
- the page wrote nothing to the console.

usage: serve_trees.py URL MEMSCRIBE TRACE SCREENSHOT
Prints a line per check; exits 1 with the differences.
"""
import json
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

import page_check as pc
from page_check import check, cmd, finish, wait

TREE = ("--depth", "256", "--top", "100")
COSTS = pc.COSTS
WINDOW_COSTS = ("impacting_size", "size", "count")


def drawn(d):
    return int(d.find_element(By.ID, "tree").get_attribute("data-drawn") or 0)


def redrawn(d, before, what):
    wait(d, "return Number(document.getElementById('tree').dataset.drawn || 0) > arguments[0]",
         what, 60, before)


def rows(d):
    """Each shown row: its depth, function, and its cells' data-value."""
    return d.execute_script(
        "return [...document.getElementById('tree').tBodies[0].rows].map(r => "
        "[Number(r.dataset.depth), r.dataset.fn, ...[...r.cells].slice(1).map(c => c.dataset.value)])")


def js_path(path):
    """A path as the page's data-path holds it (JSON.stringify)."""
    return json.dumps(path, separators=(",", ":"), ensure_ascii=False)


def node_row(n, depth, costs):
    return [depth, n["function"]] + [str(n["inclusive"][k]) for k in costs]


def open_down(d, tree, what, costs, levels=40):
    """The root's row, then at each level the largest child opened: the
    rows under it must be its children in the command's order."""
    check("%s: the root" % what, rows(d)[0], node_row(tree, 0, costs))
    node, depth, path = tree, 0, []
    while node.get("children") and depth < levels:
        shown = [r for r in rows(d) if r[0] == depth + 1]
        check("%s: level %d under %s (%d rows)" % (what, depth + 1, path[-1:] or "the root",
                                                   len(node["children"])),
              shown, [node_row(c, depth + 1, costs) for c in node["children"]])
        node = node["children"][0]
        path.append(node["function"])
        depth += 1
        if not node.get("children"):
            break
        d.execute_script(
            "[...document.getElementById('tree').tBodies[0].rows]"
            ".find(r => r.dataset.path === arguments[0]).click()", js_path(path))
    print("ok: %s: opened %d levels down to %s" % (what, depth, node["function"]))
    return depth


def mode(d, name):
    before = drawn(d)
    d.find_element(By.CSS_SELECTOR, "#tree-tabs button[data-mode='%s']" % name).click()
    redrawn(d, before, "the %s tree" % name)


d = pc.start()
wait(d, "return Number(document.getElementById('tree').dataset.drawn || 0) >= 1", "the first tree")

down = cmd("tree", *TREE, "--sort", "peak")
deepest = open_down(d, down, "top-down by peak", COSTS)
if deepest < 3:
    pc.errors.append("top-down: only %d levels opened: a trace this deep should give more" % deepest)

mode(d, "up")
open_down(d, cmd("tree", *TREE, "--sort", "peak", "--bottom-up"), "bottom-up by peak", COSTS, 3)
for cost, key in (("allocations", "allocations"), ("leaked", "leaked_bytes"), ("bytes", "allocated_bytes"),
                  ("temporary", "temporary")):
    before = drawn(d)
    Select(d.find_element(By.ID, "tree-cost")).select_by_value(cost)
    redrawn(d, before, "the tree by " + cost)
    up = cmd("tree", *TREE, "--sort", cost, "--bottom-up")
    check("bottom-up by %s: the first level in order" % cost, [r for r in rows(d) if r[0] == 1],
          [node_row(c, 1, COSTS) for c in up["children"]])
Select(d.find_element(By.ID, "tree-cost")).select_by_value("peak")
mode(d, "down")

# A function's callers and callees, picked on a row of the top-down tree:
# the first level's largest function (under the largest program, when the
# first level is one node per program).
rep = cmd("report", "--top", "1")
first = down["children"][0]
path = [first["function"]]
if len(rep["processes"]) > 1:
    first = first["children"][0]
    path.append(first["function"])
    before = drawn(d)
    d.execute_script(
        "[...document.getElementById('tree').tBodies[0].rows].find(r => r.dataset.path === arguments[0])"
        ".click()", js_path(path[:1]))
fn = first["function"]
before = drawn(d)
d.execute_script(
    "[...document.getElementById('tree').tBodies[0].rows].find(r => r.dataset.path === arguments[0])"
    ".querySelector('a.focus').click()", js_path(path))
redrawn(d, before, "the callers of " + fn)
check("callers picked on a row: the function", d.find_element(By.ID, "tree-focus").get_attribute("value"), fn)
open_down(d, cmd("tree", *TREE, "--sort", "peak", "--bottom-up", "--focus", fn), "callers of " + fn, COSTS, 4)
mode(d, "callees")
open_down(d, cmd("tree", *TREE, "--sort", "peak", "--focus", fn), "callees of " + fn, COSTS, 4)
# Every function once (heaptrack_gui's Caller / Callee list): each row's
# inclusive and self costs, as tree --flat gives them.
mode(d, "flat")
flat = cmd("tree", "--flat", "--top", "200", "--sort", "peak")
check("functions: each once, inclusive and self (%d)" % len(flat["children"]),
      [r for r in rows(d) if r[0] == 1],
      [node_row(c, 1, COSTS) + [str(c["self"][k]) for k in COSTS] for c in flat["children"]])
check("functions: one row each", len({c["function"] for c in flat["children"]}), len(flat["children"]))
mode(d, "down")


# The filter: a function deep in the tree, its text lower-cased as typed.
def deepest(n, key, depth=0):
    """The deepest node of the command's tree with a non-empty key (its
    depth and the node; depth -1: none)."""
    best = (depth, n) if n.get(key) else (-1, None)
    for c in n.get("children", []):
        d2 = deepest(c, key, depth + 1)
        best = d2 if d2[0] > best[0] else best
    return best


def filter_by(by, text):
    """The filter typed by the page's choice `by` (function, files or
    modules): the rows drawn are the command's paths to each node that
    holds text, at most the page's cap of them."""
    Select(d.find_element(By.ID, "tree-filter-by")).select_by_value(by)
    box = d.find_element(By.ID, "tree-filter")
    box.clear()
    before = drawn(d)
    box.send_keys(text)
    wait(d, "return document.getElementById('tree').dataset.filter === arguments[0]",
         "the tree filtered by %s %r" % (by, text), 60, "%s:%s" % (by, text))
    cap = int(d.find_element(By.ID, "tree-info").get_attribute("data-cap"))

    def hit(m):
        if by == "function":
            return text in m["function"].lower()
        return any(text in w.lower() for w in m.get(by, []))

    def holds(m):
        return hit(m) or any(holds(c) for c in m.get("children", []))

    def filtered(n, depth, out):
        if len(out) < cap and holds(n):
            out.append([depth, n["function"], hit(n)])
            for c in n.get("children", []):
                filtered(c, depth + 1, out)
        return out

    want = filtered(down, 0, [])
    got = d.execute_script(
        "return [...document.getElementById('tree').tBodies[0].rows]"
        ".map(r => [Number(r.dataset.depth), r.dataset.fn, r.classList.contains('match')])")
    check("filter by %s %r: the paths to the %d functions that hold it%s" % (
        by, text, sum(1 for r in want if r[2]), " (the first %d rows)" % cap if len(want) >= cap else ""),
        got, want)
    check("filter by %s %r: some function matched" % (by, text), any(r[2] for r in want), True)
    return before


# A function deep in the tree, its text lower-cased as typed; then its
# file and its module (each node's "files" and "modules").
fn = deepest(down, "function")[1]["function"]
filter_by("function", fn[: max(4, len(fn) // 2)].lower())
for by in ("files", "modules"):
    node = deepest(down, by)[1]
    check("a node with %s in the tree" % by, node is not None, True)
    if node:
        filter_by(by, node[by][0].lower())
Select(d.find_element(By.ID, "tree-filter-by")).select_by_value("function")
d.find_element(By.ID, "tree-filter").clear()
before = drawn(d)
d.execute_script("document.getElementById('tree-filter').dispatchEvent(new Event('input'))")
redrawn(d, before, "the tree unfiltered")

# The window's tree: a window typed in, the scope switched to it.
last = rep["total"]["last_ns"] if "total" in rep else rep["processes"][0]["last_ns"]
frm, to = "%dns" % (last // 4), "%dns" % (3 * last // 4)
d.find_element(By.ID, "from").clear()
d.find_element(By.ID, "from").send_keys(frm)
d.find_element(By.ID, "to").clear()
d.find_element(By.ID, "to").send_keys(to)
d.find_element(By.CSS_SELECTOR, "#window-form button").click()
wait(d, "return document.getElementById('window-classes').dataset.to === arguments[0]", "the window", 60,
     str(3 * last // 4))
before = drawn(d)
Select(d.find_element(By.ID, "tree-scope")).select_by_value("window")
redrawn(d, before, "the window's tree")
w = cmd("window", "--tree", "--from", frm, "--to", to, *TREE, "--sort", "impacting")
open_down(d, w, "the window's tree (%s to %s)" % (frm, to), WINDOW_COSTS, 4)

sys.exit(finish(d))
