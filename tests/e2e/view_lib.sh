# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034 # VIEW_URL, VIEW_WIN: read by the tests that source this
# Sourced by the viewer tests (tests/e2e/export_view_*.sh) after
# export_lib.sh: each opens memscribe's export in the program its users
# open it in, on a screen, and keeps a screenshot in $ART (tests/artifacts/
# of the build directory, as tests/e2e/html_chrome.sh does; CI keeps it).
# - need_viewer: a viewer that is not installed skips the test (77), or
#   fails it where every viewer must run (MEMSCRIBE_REQUIRE_VIEWERS=1:
#   scripts/fresh-check.sh, so CI), as tests/windows/need_wine.sh does.
# - view_desktop: an X server (Xvfb), a session bus and the accessibility
#   bus, so that desktop viewers show a window and tests/e2e/view_atspi.py
#   can read what is in it.
# - view_bg: a program in a process group of its own, under timeout, so
#   that no viewer outlives its test: every group is killed at exit.
# - view_window, view_shot, view_alive, view_stop; view_serve for pages.
# Pages are driven by tests/e2e/view_page.py (chromedriver).
PY=/usr/bin/python3 # Debian's: python3-selenium, python3-gi
ART=$MS_BUILD/tests/artifacts
mkdir -p "$ART"
VIEW_GROUPS=()
VIEW_PID=
view_cleanup() {
    local g
    for g in "${VIEW_GROUPS[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done
    for g in "${VIEW_GROUPS[@]}"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- "-$g" 2>/dev/null || break; sleep 0.2; done
        kill -KILL -- "-$g" 2>/dev/null || true
    done
}
trap 'view_cleanup; rm -rf "$WORK"' EXIT

# usage: need_viewer WHAT PROGRAM-OR-PATH...
need_viewer() {
    local what=$1 x
    shift
    for x in "$@"; do
        if [ "${x#/}" != "$x" ]; then
            [ -e "$x" ] && continue
        else
            command -v "$x" >/dev/null && continue
        fi
        if [ "${MEMSCRIBE_REQUIRE_VIEWERS:-0}" = 1 ]; then
            echo "FAIL: $what: $x is missing, and this run requires every viewer" \
                "(MEMSCRIBE_REQUIRE_VIEWERS=1): run scripts/setup.sh --test" >&2
            exit 1
        fi
        echo "$what: SKIPPED: $x is missing (scripts/setup.sh --test installs it)"
        exit 77
    done
}

# usage: view_bg NAME SECONDS COMMAND...: run COMMAND in the background in a
# process group of its own, killed after SECONDS; its pid in VIEW_PID, its
# output in $WORK/NAME.out and NAME.err.
view_bg() {
    local name=$1 secs=$2
    shift 2
    setsid timeout -k 5 "$secs" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    VIEW_PID=$!
    VIEW_GROUPS+=("$VIEW_PID")
}

# usage: view_wait_file FILE SECONDS WHAT: wait until FILE is not empty.
view_wait_file() {
    local end=$((SECONDS + $2))
    while ((SECONDS < end)); do
        [ -s "$1" ] && return 0
        sleep 0.2
    done
    [ -s "$1" ] || fail "$3 did not start in $2 s"
}

# usage: view_wait_text FILE TEXT SECONDS WHAT: wait until FILE (a viewer's
# log) has a line with TEXT; fails, with its last lines, after SECONDS.
view_wait_text() {
    local end=$((SECONDS + $3))
    while ((SECONDS < end)); do
        grep -qF -- "$2" "$1" 2>/dev/null && return 0
        view_alive "$4"
        sleep 0.2
    done
    grep -qF -- "$2" "$1" 2>/dev/null || fail "$4 did not say '$2' in $3 s: $(tail -3 "$1")"
}

# usage: view_desktop: Xvfb, a session bus and AT-SPI, for desktop viewers.
view_desktop() {
    need_viewer "the desktop" Xvfb xwininfo xprop xwd dbus-daemon dbus-send /usr/libexec/at-spi-bus-launcher \
        /usr/libexec/at-spi2-registryd
    rm -rf "$WORK/xdg" "$WORK/display" "$WORK/bus"
    mkdir -m 700 "$WORK/xdg"
    export XDG_RUNTIME_DIR=$WORK/xdg
    setsid timeout -k 5 600 Xvfb -displayfd 3 -screen 0 1400x1000x24 -nolisten tcp \
        3>"$WORK/display" >"$WORK/xvfb.log" 2>&1 &
    VIEW_GROUPS+=("$!")
    view_wait_file "$WORK/display" 60 "Xvfb"
    DISPLAY=:$(head -n 1 "$WORK/display")
    export DISPLAY
    setsid timeout -k 5 600 dbus-daemon --session --nofork --print-address=3 \
        3>"$WORK/bus" >"$WORK/dbus.log" 2>&1 &
    VIEW_GROUPS+=("$!")
    view_wait_file "$WORK/bus" 60 "the session bus"
    DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$WORK/bus")
    export DBUS_SESSION_BUS_ADDRESS
    # The accessibility bus, then its registry, each up before a viewer
    # starts (Qt's bridge looks for them once, at start): asking the session
    # bus for the first starts it (at-spi-bus-launcher), and a call to the
    # registry on that bus starts the registry. Both are children of the
    # session bus, in its process group.
    local end=$((SECONDS + 60)) a11y='' up=0
    while ((SECONDS < end)); do
        a11y=$(dbus-send --session --print-reply=literal --dest=org.a11y.Bus /org/a11y/bus \
            org.a11y.Bus.GetAddress 2>/dev/null | tr -d ' ') && [ -n "$a11y" ] && break
        sleep 0.2
    done
    [ -n "$a11y" ] || fail "the accessibility bus did not start in 60 s: $(cat "$WORK/dbus.log")"
    end=$((SECONDS + 60))
    while ((SECONDS < end)); do
        dbus-send --bus="$a11y" --print-reply --dest=org.a11y.atspi.Registry \
            /org/a11y/atspi/accessible/root org.freedesktop.DBus.Peer.Ping >/dev/null 2>&1 && up=1 && break
        sleep 0.2
    done
    ((up)) || fail "the accessibility registry did not start in 60 s: $(cat "$WORK/dbus.log")"
    # The accessibility bus's address on the root window, as a desktop's
    # launcher puts it: Qt 5's bridge reads it as it starts and turns itself
    # on there and then. Without it the bridge learns the address from the
    # session bus, and missed turning on in 7 starts of 8 on a quiet machine
    # (the registry never had the viewer; 4 of 8 with two busy loops
    # beside it); with it, 10 starts of 10 registered.
    xprop -root -f AT_SPI_BUS 8s -set AT_SPI_BUS "$a11y" ||
        fail "could not set AT_SPI_BUS on the root window of $DISPLAY"
    # Qt's AT-SPI bridge, on without a screen reader asking for it.
    export QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 QT_ACCESSIBILITY=1
}

# usage: view_alive WHAT: the viewer of the last view_bg still runs.
view_alive() {
    kill -0 "$VIEW_PID" 2>/dev/null && return 0
    local rc=0
    wait "$VIEW_PID" || rc=$?
    fail "$1 exited (status $rc$([ "$rc" -gt 128 ] && echo ", signal $((rc - 128))")): $(tail -5 "$WORK/$1.err")"
}

# usage: view_window WHAT TITLE SECONDS: the id of the top-level window whose
# title contains TITLE, once it is there (fails if the viewer ends first).
view_window() {
    local i id
    for ((i = 0; i < $3 * 4; i++)); do
        view_alive "$1"
        id=$(xwininfo -root -children 2>/dev/null | grep -F -- "\"" | grep -F -- "$2" |
            awk '$2 !~ /^"Qt/ { print $1; exit }')
        [ -n "$id" ] && echo "$id" && return 0
        sleep 0.25
    done
    fail "$1: no window titled '$2' in $3 s: $(xwininfo -root -children | grep '"' | head -5)"
}

# usage: view_open NAME TITLE WAIT COMMAND...: start viewer NAME (view_bg,
# 120 s), wait for its window titled TITLE (its id in VIEW_WIN) and for
# WAIT among its widgets (tests/e2e/view_atspi.py, into $WORK/NAME.a11y).
# Qt's accessibility bridge puts a viewer in the registry as it starts, or
# never: view_desktop publishes the bus on the root window so that it does
# (AT_SPI_BUS); should one still not show, view_atspi.py tells within 10 s
# and the viewer is started again, up to VIEW_TRIES times. After that, or if
# WAIT never shows, view_open returns 1 (the window is there, VIEW_WIN set)
# and the test says it could not read the numbers. A viewer that exits by
# itself fails the test at once.
VIEW_TRIES=6
view_open() {
    local name=$1 title=$2 wait=$3 try rc
    shift 3
    for ((try = 1; try <= VIEW_TRIES; try++)); do
        view_bg "$name" 120 "$@"
        VIEW_WIN=$(view_window "$name" "$title" 60) || exit 1
        rc=0
        "$PY" "$MS_SOURCE/tests/e2e/view_atspi.py" "$name" "$WORK/$name.a11y" "$wait" 30 \
            2>>"$WORK/$name.a11y.err" || rc=$?
        [ "$rc" = 0 ] && return 0
        view_alive "$name"
        echo "note: $name's widgets not readable (try $try of $VIEW_TRIES): $(tail -1 "$WORK/$name.a11y.err")"
        [ "$rc" = 2 ] && [ "$try" -lt "$VIEW_TRIES" ] || break
        view_stop "$name"
    done
    echo "note: $name: its widgets were not read: its numbers are not compared"
    return 1
}

# usage: view_shot WINDOW NAME: a screenshot of WINDOW in $ART/NAME.png,
# once the viewer has stopped drawing in it: the same picture three times
# in a row, half a second apart (the numbers a test waited for come before
# the charts beside them are drawn). Fails if it still changes after 60 s.
view_shot() {
    local end=$((SECONDS + 60)) same=0
    xwd -silent -id "$1" >"$WORK/$2.xwd" || fail "xwd of window $1 failed"
    while ((same < 2 && SECONDS < end)); do
        sleep 0.5
        xwd -silent -id "$1" >"$WORK/$2.next.xwd" || fail "xwd of window $1 failed"
        if cmp -s "$WORK/$2.xwd" "$WORK/$2.next.xwd"; then
            same=$((same + 1))
        else
            same=0
            mv "$WORK/$2.next.xwd" "$WORK/$2.xwd"
        fi
    done
    ((same == 2)) || fail "window $1 ($2) still changed after 60 s"
    "$PY" "$MS_SOURCE/tests/e2e/xwd_png.py" "$WORK/$2.xwd" "$ART/$2.png" || fail "no screenshot $2"
    echo "ok: screenshot $ART/$2.png"
}

# usage: view_stop WHAT: the viewer still runs (it did not crash), then end it.
view_stop() {
    view_alive "$1"
    kill -TERM -- "-$VIEW_PID" 2>/dev/null || true
    wait "$VIEW_PID" 2>/dev/null || true
}

# usage: view_size BYTES metric|binary: a size as KDE's KFormat writes it,
# 1 decimal: metric (heaptrack_gui: "843B", "111.0kB") or binary
# (massif-visualizer: "1,000 B", "108.4 KiB").
view_size() {
    awk -v b="$1" -v dialect="$2" 'BEGIN {
        base = dialect == "binary" ? 1024 : 1000; sep = dialect == "binary" ? " " : ""
        split(dialect == "binary" ? "KiB MiB GiB TiB" : "kB MB GB TB", u, " ")
        if (b < base) { printf "%d%sB", b, sep; exit }
        v = b / base; i = 1
        while (v >= base && i < 4) { v /= base; i++ }
        printf "%.1f%s%s", v, sep, u[i] }' | sed -e ':a' -e 's/^\([0-9]\+\)\([0-9]\{3\}\)/\1,\2/' -e 'ta'
}

# usage: view_port: a free TCP port on 127.0.0.1.
view_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# usage: view_listening PORT WHAT SECONDS: wait until 127.0.0.1:PORT accepts.
view_listening() {
    local i
    for ((i = 0; i < $3 * 4; i++)); do
        view_alive "$2"
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.25
    done
    fail "$2 does not listen on 127.0.0.1:$1 after $3 s: $(tail -3 "$WORK/$2.err")"
}

# usage: view_serve DIR: serve DIR on 127.0.0.1 (python3's http.server);
# its URL in VIEW_URL.
view_serve() {
    local port
    port=$(view_port)
    view_bg http 300 "$PY" -m http.server --bind 127.0.0.1 --directory "$1" "$port"
    view_listening "$port" http 60
    VIEW_URL=http://127.0.0.1:$port
}

# usage: view_page NAME URL [view_page.py options]: open URL in headless
# Chromium; its text in $WORK/NAME.txt, its screenshot in $ART/NAME.png.
view_page() {
    local name=$1 url=$2
    shift 2
    timeout -k 5 180 "$PY" "$MS_SOURCE/tests/e2e/view_page.py" "$url" "$WORK/$name" "$@" \
        2>"$WORK/$name.page.err" || fail "$name: $(tail -5 "$WORK/$name.page.err")"
    cp "$WORK/$name.png" "$ART/$name.png" && echo "ok: screenshot $ART/$name.png"
}
