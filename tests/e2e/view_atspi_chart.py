#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What a desktop viewer's chart shows under the pointer, read through its
accessibility tree (AT-SPI, as tests/e2e/view_atspi.py reads widgets): the
pointer sweeps the chart and the status bar's text is read at each step,
as a person reads heaptrack_gui's "T = 00.532s, Consumed: 8.4MB".

usage: view_atspi_chart.py APP TAB TIP OUT [STEPS]

Waits until the page tab named TAB of the application named APP is
enabled (heaptrack_gui enables a chart's tab once its data is drawn; with
STEPS 0, that is all), presses it, waits for the widget whose description
(its tooltip) contains TIP to be on screen, then moves the pointer across it at half its height in STEPS steps
(default 150), each time waiting until the status bar's text changes (at
most STEP_TIMEOUT seconds: two steps may show the same text), and writes
the texts, one a line, to OUT. The sweep ends where a text read before the
last one shows again (past the chart's end, the hint of its start). Exits 1 if the tab or
the chart never shows. Needs the desktop of tests/e2e/view_lib.sh
(view_desktop) and a viewer whose widgets are readable (view_open).
"""
import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, GLib  # noqa: E402

MAX_DEPTH = 40
SHOW_TIMEOUT = 60.0  # seconds for the tab to be enabled, then its page shown
STEP_TIMEOUT = 1.0  # seconds for the status bar to follow the pointer
POLL = 0.02


def walk(node, depth, out):
    try:
        out.append(node)
        n = node.get_child_count()
    except GLib.Error:
        return out
    if depth < MAX_DEPTH:
        for i in range(n):
            try:
                c = node.get_child_at_index(i)
            except GLib.Error:
                continue
            if c is not None:
                walk(c, depth + 1, out)
    return out


def refresh():
    # Handle the events that tell the library's cache what changed.
    ctx = GLib.MainContext.default()
    while ctx.pending():
        ctx.iteration(False)


def app_nodes(app_name):
    refresh()
    desk = Atspi.get_desktop(0)
    desk.clear_cache()
    for i in range(desk.get_child_count()):
        app = desk.get_child_at_index(i)
        if app is not None and app.get_name() == app_name:
            return walk(app, 0, [])
    return []


def attr(node, what):
    try:
        return (node.get_name() if what == "name" else node.get_description()) or ""
    except GLib.Error:
        return ""


def find(app, role, what, text):
    for n in app_nodes(app):
        try:
            if n.get_role_name() == role and text in attr(n, what):
                return n
        except GLib.Error:
            continue
    return None


def wait_for(fn, timeout):
    end = time.monotonic() + timeout
    while True:
        got = fn()
        if got or time.monotonic() > end:
            return got
        time.sleep(POLL)


def status_text(bar):
    refresh()
    bar.clear_cache()
    return attr(bar, "name")


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: view_atspi_chart.py APP TAB TIP OUT [STEPS]")
    app, tab_name, tip, path = sys.argv[1:5]
    steps = int(sys.argv[5]) if len(sys.argv) == 6 else 150
    Atspi.init()
    def enabled():
        n = find(app, "page tab", "name", tab_name)
        return n if n is not None and n.get_state_set().contains(Atspi.StateType.ENABLED) else None

    tab = wait_for(enabled, SHOW_TIMEOUT)
    if tab is None:
        sys.exit("view_atspi_chart: %s has no enabled page tab %r in %g s" % (app, tab_name, SHOW_TIMEOUT))
    if steps == 0:
        return
    Atspi.Action.do_action(tab, 0)  # "Press"

    def shown():
        n = find(app, "filler", "description", tip)
        if n is None:
            return None
        e = n.get_extents(Atspi.CoordType.SCREEN)
        return e if e.width > 0 and e.height > 0 else None

    box = wait_for(shown, SHOW_TIMEOUT)
    if box is None:
        sys.exit("view_atspi_chart: %s shows no chart described %r after pressing %r" % (app, tip, tab_name))
    bar = find(app, "status bar", "name", "")
    if bar is None:
        sys.exit("view_atspi_chart: %s has no status bar" % app)
    texts, last = [], status_text(bar)
    y = box.y + box.height // 2
    for i in range(steps):
        x = box.x + (2 * i + 1) * box.width // (2 * steps)
        Atspi.generate_mouse_event(x, y, "abs")
        last = wait_for(lambda: (lambda t: t if t != last else None)(status_text(bar)), STEP_TIMEOUT) or last
        # A text read before, back after another: the pointer is past the
        # chart's end, where the hint of its start shows again.
        if texts and last != texts[-1] and last in texts:
            break
        texts.append(last)
    with open(path, "w") as f:
        f.write("\n".join(texts) + "\n")


if __name__ == "__main__":
    main()
