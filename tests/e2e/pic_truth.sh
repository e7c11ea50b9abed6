#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A picture is a claim: the timeline that `plot timeline` and the HTML
# report draw is read back out of the picture (pixels and tick labels,
# tests/e2e/pic_series.py) and must pass through every value of
# `memscribe timeline --format=json` at the same interval, its peak marker
# at `report`'s peak; the HTML page's data (tests/e2e/pic_data.py: its
# summary, call sites, flame graphs, window cells and threads) must equal
# report, tree, window and dump --header, and the size histogram's bars
# (the page's and plot histogram's) histogram's counts; on a single
# process (the demo), a process tree
# (`make -j2` of a small C project: ended processes keep what they
# allocated, so the tree's cumulative line never falls), a sampled trace
# and a Windows trace (tests/golden/v1_2_windows.mscr). Before: the last
# point of every series was drawn at twice its value, and a tree's
# cumulative line fell and left its panel.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on pic-truth MEMSCRIBE MS_BUILD MS_SOURCE
need python3
need jq
CHECK=$MS_SOURCE/tests/e2e/pic_series.py
DATA=$MS_SOURCE/tests/e2e/pic_data.py

# usage: truth NAME TRACE: both pictures of TRACE against its numbers.
truth() {
    local name=$1 t=$2 last iv
    "$MEMSCRIBE" report --format=json --top 0 "$t" >"$WORK/$name.report.json" 2>/dev/null ||
        { fail "$name: report failed"; return; }
    # The pictures' own default interval (a 2000th of the trace), given to
    # every command so that they sample the same times.
    last=$(jq '.total.last_ns' "$WORK/$name.report.json")
    iv=$((last / 2000 > 0 ? last / 2000 : 1))
    "$MEMSCRIBE" timeline --interval "${iv}ns" --format=json "$t" >"$WORK/$name.tl.json" 2>/dev/null ||
        { fail "$name: timeline failed"; return; }
    "$MEMSCRIBE" plot timeline --interval "${iv}ns" "$t" -o "$WORK/$name.svg" 2>/dev/null ||
        { fail "$name: plot failed"; return; }
    python3 "$CHECK" "$WORK/$name.svg" "$WORK/$name.tl.json" "$WORK/$name.report.json" ||
        fail "$name: plot timeline does not draw the timeline's numbers (above)"
    "$MEMSCRIBE" html "$t" -o "$WORK/$name.html" 2>/dev/null || { fail "$name: html failed"; return; }
    # The per-process page, which pic_data.py reads beside a page of the
    # per-program view.
    "$MEMSCRIBE" html --by-process "$t" -o "$WORK/$name.by-process.html" 2>/dev/null ||
        { fail "$name: html --by-process failed"; return; }
    python3 "$CHECK" "$WORK/$name.html" "$WORK/$name.tl.json" "$WORK/$name.report.json" ||
        fail "$name: the HTML report's timeline does not draw the timeline's numbers (above)"
    "$MEMSCRIBE" plot histogram "$t" -o "$WORK/$name.hist.svg" 2>/dev/null || { fail "$name: plot histogram failed"; return; }
    python3 "$DATA" "$MEMSCRIBE" "$t" "$WORK/$name.html" "$WORK/$name.hist.svg" ||
        fail "$name: the HTML report's data or a histogram differs from the text commands' (above)"
}

"$MEMSCRIBE" record -q -o "$WORK/demo.mscr" -- "$MS_BUILD/examples/memtest_demo" >/dev/null ||
    fail "record demo: exit $?"
truth demo "$WORK/demo.mscr"

mkdir "$WORK/proj"
for i in $(seq 1 8); do
    printf '#include <stdlib.h>\nint f%d(int x) { char *p = malloc(100 + x); free(p); return x; }\n' "$i" >"$WORK/proj/f$i.c"
done
# shellcheck disable=SC2016 # make's own $ variables
printf 'OBJS = f1.o f2.o f3.o f4.o f5.o f6.o f7.o f8.o\nlibf.a: $(OBJS)\n\tar rcs $@ $(OBJS)\n%%.o: %%.c\n\tcc -O1 -c $< -o $@\n' \
    >"$WORK/proj/Makefile"
(cd "$WORK/proj" && "$MEMSCRIBE" record -q -o "$WORK/make.mscr" -- make -s -j2) || fail "record make: exit $?"
[ "$(jq '.processes | length' <("$MEMSCRIBE" report --format=json "$WORK/make.mscr"))" -gt 8 ] ||
    fail "make: fewer processes than expected"
truth make "$WORK/make.mscr"

"$MEMSCRIBE" record -q --sample 4K -o "$WORK/sampled.mscr" -- "$MS_BUILD/examples/memtest_demo" >/dev/null ||
    fail "record --sample: exit $?"
truth sampled "$WORK/sampled.mscr"

truth windows "$MS_SOURCE/tests/golden/v1_2_windows.mscr"
finish "ok: the pictures and the HTML page's data hold the numbers of the text commands"
