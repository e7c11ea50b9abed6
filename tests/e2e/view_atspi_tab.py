#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Press a desktop viewer's page tab through its accessibility tree, as a
person clicks it (tests/e2e/view_atspi_chart.py's helpers).

usage: view_atspi_tab.py APP TAB

Waits until the page tab named TAB of the application named APP is
enabled (heaptrack_gui enables each once its data is in), presses it and
waits until it has the focus (Qt's tabs say which is current so: they
have no "selected" state). Exits 1 if it never has. Needs the
desktop of tests/e2e/view_lib.sh (view_desktop) and a viewer whose widgets
are readable (view_open).
"""
import sys

from view_atspi_chart import SHOW_TIMEOUT, Atspi, find, wait_for


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: view_atspi_tab.py APP TAB")
    app, name = sys.argv[1:3]
    Atspi.init()

    def tab(state):
        n = find(app, "page tab", "name", name)
        return n if n is not None and n.get_state_set().contains(state) else None

    t = wait_for(lambda: tab(Atspi.StateType.ENABLED), SHOW_TIMEOUT)
    if t is None:
        sys.exit("view_atspi_tab: %s has no enabled page tab %r in %g s" % (app, name, SHOW_TIMEOUT))
    Atspi.Action.do_action(t, 0)  # "Press"
    if wait_for(lambda: tab(Atspi.StateType.FOCUSED), SHOW_TIMEOUT) is None:
        sys.exit("view_atspi_tab: %s's page tab %r pressed, not current in %g s" % (app, name, SHOW_TIMEOUT))


if __name__ == "__main__":
    main()
