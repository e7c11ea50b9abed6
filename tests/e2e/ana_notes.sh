#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What numbers cannot say by themselves is said beside them: peak RSS
# includes memscribe's ring buffers (report text and JSON, timeline); a
# CPython program gets the pymalloc note naming PYTHONMALLOC=malloc, a C
# program (tests/programs/ana_heapcheck.c) does not, nor a CPython program
# run with PYTHONMALLOC=malloc. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/ana_lib.sh
source "$(dirname "$0")/ana_lib.sh"
record ana_heapcheck
T=$WORK/t.mscr

# The note stands beside peak RSS wherever the trace has an RSS sample (a
# program this short may end before the first one).
run 0 report --format=json "$T"
if [ "$(jq '.processes[0].peak_rss_bytes' "$WORK/out")" = null ]; then
    expect "report JSON notes, no RSS sample" "$(jq -c '.processes[0].notes' "$WORK/out")" "[]"
    rss=
else
    expect "report JSON notes of a C program" "$(jq -c '.processes[0].notes' "$WORK/out")" \
        "[\"peak RSS includes memscribe's own ring buffers (up to 4 MiB per traced thread)\"]"
    rss=1
fi
run 0 report "$T"
[ -z "$rss" ] || grep -q "^  note: peak RSS includes memscribe's own ring buffers" "$WORK/out" ||
    fail "report text: no ring-buffer note"
! grep -q PYTHONMALLOC "$WORK/out" || fail "a C program got the pymalloc note"
run 0 timeline "$T"
grep -q "^(rss includes memscribe's own ring buffers" "$WORK/out" || fail "timeline: no ring-buffer note"

py=/usr/bin/python3
[ -x "$py" ] || fail "$py is not installed: run scripts/setup.sh"
# (It sleeps 0.2 s so that RSS is sampled, every 10 ms.)
"$MEMSCRIBE" record -q -o "$WORK/py.mscr" -- "$py" -c 'import time; x = [str(i) for i in range(1000)]; time.sleep(0.2)' \
    >/dev/null 2>"$WORK/rec.err" || fail "record python3: $(cat "$WORK/rec.err")"
run 0 report "$WORK/py.mscr"
grep -q "note: CPython: with pymalloc on .* run it with PYTHONMALLOC=malloc" "$WORK/out" ||
    fail "python3: no pymalloc note: $(grep note "$WORK/out")"
run 0 report --format=json "$WORK/py.mscr"
expect "python3: JSON notes" "$(jq '[.processes[0].notes[] | select(test("PYTHONMALLOC=malloc"))] | length' "$WORK/out")" 1
expect "python3: RSS note" "$(jq '[.processes[0].notes[] | select(test("ring buffers"))] | length' "$WORK/out")" 1
# Run with PYTHONMALLOC=malloc, the objects are malloc's: no advice to do
# what it did (the trace has no environment; pymalloc's arena mappings,
# which it makes while the interpreter starts, are what is missing).
PYTHONMALLOC=malloc "$MEMSCRIBE" record -q -o "$WORK/pym.mscr" -- "$py" -c 'x = [str(i) for i in range(1000)]' \
    >/dev/null 2>"$WORK/rec.err" || fail "record python3: $(cat "$WORK/rec.err")"
run 0 report "$WORK/pym.mscr"
! grep -q PYTHONMALLOC "$WORK/out" || fail "python3 with PYTHONMALLOC=malloc got the pymalloc note"
run 0 report --format=json "$WORK/pym.mscr"
expect "python3 with PYTHONMALLOC=malloc: JSON pymalloc notes" \
    "$(jq '[.processes[0].notes[] | select(test("PYTHONMALLOC"))] | length' "$WORK/out")" 0
echo "PASS"
