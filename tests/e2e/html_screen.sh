#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The numbers on screen: the HTML page of a single process (the demo), a
# process tree (`make -j2`), a sampled trace and a Windows trace
# (tests/golden/v1_2_windows.mscr), loaded in headless Chromium; what its
# script put on the page (summary, cards, the tables of call sites and
# leaks with their stacks) must equal `memscribe report --format=json`
# (tests/e2e/html_screen.py), and the commit lifetimes' section `memscribe
# vmem --format=json` (shown for the Windows trace, hidden where vmem has no
# group); the console stay silent. Rows show enough of
# their stacks to tell them apart (the leaf alone read the same on many
# rows), a C++ stack's library frames fold, and a sampled trace shows no
# temporary figure. A trace with leak classes (record --reach) shows each
# leak row's bytes per class as `memscribe leaks` gives them, and their
# totals under the table. An aggregated trace of record --keep-last and one
# of its segments say what they are as report's notes do. Screenshots go to
# tests/artifacts/.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on html-screen MEMSCRIBE MS_BUILD MS_SOURCE MS_PROGRAMS
# shellcheck source=tests/e2e/html_chrome.sh
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
need python3
need chromium

# usage: screen NAME TRACE: the page of TRACE on screen against report.
screen() {
    local name=$1 t=$2
    "$MEMSCRIBE" report --format=json --top 0 "$t" >"$WORK/$name.json" 2>/dev/null ||
        { fail "$name: report failed"; return; }
    "$MEMSCRIBE" vmem --format=json --top 0 "$t" >"$WORK/$name.vmem.json" 2>/dev/null ||
        { fail "$name: vmem failed"; return; }
    "$MEMSCRIBE" leaks --format=json --top 0 --no-default-suppressions "$t" >"$WORK/$name.leaks.json" \
        2>/dev/null || { fail "$name: leaks failed"; return; }
    "$MEMSCRIBE" html "$t" -o "$WORK/$name.html" 2>/dev/null || { fail "$name: html failed"; return; }
    dump_dom "$WORK" "$WORK/$name.dom" "$WORK/$name.err" "$READY" "file://$WORK/$name.html" ||
        { fail "$name: chromium exited with $?: $(tail -3 "$WORK/$name.err")"; return; }
    local lines
    lines=$(console_lines "$WORK/$name.err")
    [ -z "$lines" ] || fail "$name: the page wrote to the console: $lines"
    PYTHONPATH=$MS_SOURCE/tests/e2e python3 "$MS_SOURCE/tests/e2e/html_screen.py" "$WORK/$name.dom" "$WORK/$name.json" \
        "$WORK/$name.vmem.json" "$WORK/$name.leaks.json" ||
        fail "$name: the page shows other numbers than report, vmem and leaks (above)"
    chrome "$WORK" --window-size=1280,2400 --screenshot="$ART/html_screen_$name.png" \
        "file://$WORK/$name.html" >/dev/null 2>&1 || fail "$name: no screenshot"
}

"$MEMSCRIBE" record -q -o "$WORK/demo.mscr" -- "$MS_BUILD/examples/memtest_demo" >/dev/null ||
    fail "record demo: exit $?"
screen demo "$WORK/demo.mscr"

mkdir "$WORK/proj"
for i in 1 2 3 4; do
    printf '#include <stdlib.h>\nint f%d(int x) { char *p = malloc(100 + x); free(p); return x; }\n' "$i" >"$WORK/proj/f$i.c"
done
# shellcheck disable=SC2016 # make's own $ variables
printf 'OBJS = f1.o f2.o f3.o f4.o\nlibf.a: $(OBJS)\n\tar rcs $@ $(OBJS)\n%%.o: %%.c\n\tcc -O1 -c $< -o $@\n' \
    >"$WORK/proj/Makefile"
(cd "$WORK/proj" && "$MEMSCRIBE" record -q -o "$WORK/make.mscr" -- make -s -j2) || fail "record make: exit $?"
screen make "$WORK/make.mscr"

"$MEMSCRIBE" record -q --sample 4K -o "$WORK/sampled.mscr" -- "$MS_BUILD/examples/memtest_demo" >/dev/null ||
    fail "record --sample: exit $?"
screen sampled "$WORK/sampled.mscr"

screen windows "$MS_SOURCE/tests/golden/v1_2_windows.mscr"

# record --keep-last: the whole run (aggregated) and its latest exact segment say what
# they are, as report's notes say it.
"$MEMSCRIBE" record -q --keep-last 400ms --aggregate=10ms -o "$WORK/kl.mscr" -- \
    "$MS_BUILD/examples/memtest_demo" >/dev/null || fail "record --keep-last: exit $?"
screen keep-last "$WORK/kl.mscr"
seg=$(find "$WORK/kl.mscr.last" -name 'seg-*.mscr' | sort | tail -1)
screen segment "$seg"

# Leak classes at exit (record --reach): a block of each class.
"$MEMSCRIBE" record -q --reach -o "$WORK/reach.mscr" -- "$MS_PROGRAMS/rec_reach" >/dev/null ||
    fail "record --reach: exit $?"
screen reach "$WORK/reach.mscr"
finish "ok: the HTML pages show report's numbers, rows told apart"
