#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe flamegraph --diff on two builds of one program
# (tests/programs/diff_prog.c): widths from NEW, each frame's change in its
# tooltip, red for growth, blue for shrink, white when unchanged; a
# well-formed SVG; the options it refuses. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" diff-flame MEMSCRIBE MS_PROGRAMS
B=$WORK/base.mscr N=$WORK/new.mscr

# "<title> fill" of the frame named $2 in SVG $1.
frame() {
    grep -o "<title>$2 ([^<]*</title><rect[^>]*fill=\"[^\"]*\"" "$1" |
        sed 's/<title>//; s/<\/title><rect.*fill="/ | /; s/"$//'
}

"$MEMSCRIBE" record -o "$B" -- "$MS_PROGRAMS/diff_base/diff_prog" >/dev/null 2>&1 || fail "record base"
"$MEMSCRIBE" record -o "$N" -- "$MS_PROGRAMS/diff_new/diff_prog" >/dev/null 2>&1 || fail "record new"

"$MEMSCRIBE" flamegraph --diff "$B" "$N" -o "$WORK/grow.svg"
xmllint --noout "$WORK/grow.svg" || fail "not well-formed"
grep -q "Differential flame graph: bytes" "$WORK/grow.svg" || fail "no differential title"
# The largest change (+564 at the root and main) is the deepest red.
expect "main" "$(frame "$WORK/grow.svg" main)" \
    "main (1,924 bytes, 1.88 KiB, 100.00%) (+564 against the base) | rgb(255,55,55)"
expect "make_buffer" "$(frame "$WORK/grow.svg" make_buffer)" \
    "make_buffer (1,500 bytes, 1.46 KiB, 77.96%) (+500 against the base) | rgb(255,78,78)"
expect "leak_more" "$(frame "$WORK/grow.svg" leak_more)" \
    "leak_more (64 bytes, 64 B, 3.33%) (+64 against the base) | rgb(255,232,232)"
expect "churn" "$(frame "$WORK/grow.svg" churn)" \
    "churn (320 bytes, 320 B, 16.63%) (+0 against the base) | rgb(255,255,255)"

# The other way round the buffer shrank: blue, widths from the base build.
"$MEMSCRIBE" flamegraph --diff --cost leaked "$N" "$B" -o "$WORK/shrink.svg"
expect "leaked: leak_some" "$(frame "$WORK/shrink.svg" leak_some)" \
    "leak_some (40 bytes, 40 B, 100.00%) (+0 against the base) | rgb(255,255,255)"
expect "leaked: main" "$(frame "$WORK/shrink.svg" main)" \
    "main (40 bytes, 40 B, 100.00%) (-64 against the base) | rgb(55,55,255)"
"$MEMSCRIBE" flamegraph --diff "$N" "$B" -o "$WORK/shrink2.svg"
expect "bytes: make_buffer" "$(frame "$WORK/shrink2.svg" make_buffer)" \
    "make_buffer (1,000 bytes, 1000 B, 73.53%) (-500 against the base) | rgb(78,78,255)"

# An ordinary graph keeps its title and colours.
"$MEMSCRIBE" flamegraph "$N" -o "$WORK/plain.svg"
grep -q "against the base" "$WORK/plain.svg" && fail "plain graph has changes"
grep -q ">Flame graph: bytes<" "$WORK/plain.svg" || fail "plain graph: title"

set +e
"$MEMSCRIBE" flamegraph --diff "$N" 2>/dev/null
expect "one trace: exit" $? 2
"$MEMSCRIBE" flamegraph --diff --folded "$B" "$N" 2>/dev/null
expect "--folded: exit" $? 2
echo "not a trace" >"$WORK/bad.mscr"
"$MEMSCRIBE" flamegraph --diff "$WORK/bad.mscr" "$N" -o "$WORK/x.svg" 2>"$WORK/e"
expect "bad base: exit" $? 1
set -e
grep -q "bad.mscr" "$WORK/e" || fail "bad base: message: $(cat "$WORK/e")"
echo "PASS"
