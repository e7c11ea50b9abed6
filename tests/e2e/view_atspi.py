#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What a desktop viewer shows, read through its accessibility tree (AT-SPI,
Debian's python3-gi and gir1.2-atspi-2.0): the names, roles and texts of
the widgets of one application, as a screen reader reads them.

usage: view_atspi.py APP OUT WAIT [TIMEOUT]

Waits until some widget of the application named APP (its AT-SPI name, the
program's name) has WAIT in its name or text, then writes every widget as
one line, "depth-indented name [role] text" (newlines in a name shown as
" | "), to OUT. Exits 1 if WAIT never shows within TIMEOUT seconds
(default 30), writing what was there; 2 if the application is not in the
registry within REGISTER_TIMEOUT seconds (Qt's bridge registers at once
or never, in about one start in three here: start the viewer again). Needs the session bus and the
accessibility bus of tests/e2e/view_lib.sh (view_desktop).
"""
import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, GLib  # noqa: E402

MAX_DEPTH = 40
REGISTER_TIMEOUT = 10.0


def flat(s):
    return (s or "").replace("\n", " | ")


def walk(node, depth, out):
    try:
        name, role = node.get_name(), node.get_role_name()
    except GLib.Error:
        return
    text = ""
    try:
        t = Atspi.Accessible.get_text(node)
        if t is not None:
            text = Atspi.Text.get_text(t, 0, Atspi.Text.get_character_count(t))
    except (GLib.Error, TypeError):
        pass
    out.append("%s%s [%s]%s" % ("  " * depth, flat(name), role, " " + flat(text) if text else ""))
    if depth >= MAX_DEPTH:
        return
    for i in range(node.get_child_count()):
        try:
            c = node.get_child_at_index(i)
        except GLib.Error:
            continue
        if c is not None:
            walk(c, depth + 1, out)


def dump(app_name):
    # The library caches what it has read, and learns of new applications
    # through signals only its main loop handles: handle them, and read
    # everything afresh (an application that registered after the first
    # look was never seen otherwise).
    ctx = GLib.MainContext.default()
    while ctx.pending():
        ctx.iteration(False)
    desk = Atspi.get_desktop(0)
    desk.clear_cache()
    out = []
    for i in range(desk.get_child_count()):
        app = desk.get_child_at_index(i)
        if app is not None and app.get_name() == app_name:
            walk(app, 0, out)
    return out


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: view_atspi.py APP OUT WAIT [TIMEOUT]")
    app, path, wait = sys.argv[1], sys.argv[2], sys.argv[3]
    timeout = float(sys.argv[4]) if len(sys.argv) == 5 else 30.0
    Atspi.init()
    start = time.monotonic()
    end = start + timeout
    lines = []
    while True:
        lines = dump(app)
        if any(wait in line for line in lines) or time.monotonic() > end:
            break
        if not lines and time.monotonic() > start + REGISTER_TIMEOUT:
            print("view_atspi: %s is not in the accessibility registry after %g s" % (app, REGISTER_TIMEOUT),
                  file=sys.stderr)
            sys.exit(2)
        time.sleep(0.5)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    if not any(wait in line for line in lines):
        print("view_atspi: %s never showed %r in %g s (%d widgets)" % (app, wait, timeout, len(lines)),
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
