#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What numbers cannot say by themselves is said beside them, once per
# command: peak RSS includes memscribe's ring buffers (report: one trace
# note, text and JSON; timeline); a CPython program gets the pymalloc note
# naming PYTHONMALLOC=malloc (once in the text however many CPython
# processes), a C program (tests/programs/ana_heapcheck.c) does not, nor a
# CPython program run with PYTHONMALLOC=malloc; report's trace notes
# (sampled, ...) are in its output, not on stderr too. Unmatched frees say
# their cause: a fork child's frees of its parent's blocks
# (tests/programs/ana_unseen.c, and a shell script's subshell before it
# execs the program); a window's row of a block from before the window
# that a realloc inside it shrank says what it is, in text and JSON.
# Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/ana_lib.sh
source "$(dirname "$0")/ana_lib.sh"
record ana_heapcheck
T=$WORK/t.mscr

# The note stands beside peak RSS wherever the trace has an RSS sample (a
# program this short may end before the first one).
# It is the trace's note, said once (not again under each part).
run 0 report --format=json "$T"
expect "report JSON notes of a C program" "$(jq -c '.processes[0].notes' "$WORK/out")" "[]"
if [ "$(jq '.processes[0].peak_rss_bytes' "$WORK/out")" = null ]; then
    expect "report JSON trace notes, no RSS sample" "$(jq -c '.trace_notes' "$WORK/out")" "[]"
    rss=
else
    expect "report JSON trace notes of a C program" "$(jq -c '.trace_notes' "$WORK/out")" \
        "[\"peak RSS includes memscribe's own ring buffers (up to 4 MiB per traced thread)\"]"
    rss=1
fi
run 0 report "$T"
[ -z "$rss" ] || expect "report text: the ring-buffer note" \
    "$(grep -c "^note: peak RSS includes memscribe's own ring buffers" "$WORK/out")" 1
expect "report text: no ring-buffer note under a part" "$(grep -c "^  note: peak RSS" "$WORK/out")" 0
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
expect "python3: RSS note" "$(jq '[.trace_notes[] | select(test("ring buffers"))] | length' "$WORK/out")" 1
# Two CPython processes (a shell runs python3 twice): the note once in the
# text; each process's JSON notes keep it.
"$MEMSCRIBE" record -q -o "$WORK/py2.mscr" -- sh -c "$py -c 'x = 1'; $py -c 'x = 2'" \
    >/dev/null 2>"$WORK/rec.err" || fail "record sh python3 twice: $(cat "$WORK/rec.err")"
run 0 report --by-process "$WORK/py2.mscr"
expect "two python3: pymalloc notes in the text" "$(grep -c "note: CPython: with pymalloc" "$WORK/out")" 1
run 0 report --format=json "$WORK/py2.mscr"
expect "two python3: pymalloc notes in JSON" \
    "$(jq '[.processes[] | select(.notes | any(test("PYTHONMALLOC")))] | length' "$WORK/out")" 2
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

# report says what the trace is in its output (text "note:" lines, JSON
# trace_notes), and not on stderr again; leaks, whose output has no place
# for it, on stderr.
"$MEMSCRIBE" record -q --sample 4096 -o "$WORK/s.mscr" -- "$MS_PROGRAMS/ana_heapcheck" >/dev/null 2>&1 ||
    fail "record --sample"
run 0 report "$WORK/s.mscr"
expect "sampled: report text" "$(grep -c "^note: sampled trace (record --sample 4096)" "$WORK/out")" 1
expect "sampled: report stderr" "$(grep -c "sampled trace" "$WORK/err")" 0
run 0 report --format=json "$WORK/s.mscr"
expect "sampled: report JSON" "$(jq '[.trace_notes[] | select(test("^sampled trace"))] | length' "$WORK/out")" 1
expect "sampled: report JSON stderr" "$(grep -c "sampled trace" "$WORK/err")" 0
run 0 leaks "$WORK/s.mscr"
expect "sampled: leaks stderr" "$(grep -c "sampled trace (record --sample 4096)" "$WORK/err")" 1
# JSON has a place for them: every command whose JSON starts as leaks'
# does says them in its trace_notes, and not on stderr.
for cmd in leaks timeline window check; do
    extra=()
    [ "$cmd" = check ] && extra=(--max-allocations 1000000)
    run 0 "$cmd" --format=json "${extra[@]}" "$WORK/s.mscr"
    expect "sampled: $cmd JSON" "$(jq '[.trace_notes[] | select(test("^sampled trace \\(record --sample 4096\\)"))] | length' "$WORK/out")" 1
    expect "sampled: $cmd JSON stderr" "$(grep -c "sampled trace" "$WORK/err")" 0
done

# Unmatched frees name their cause. A fork child frees three blocks its
# parent allocated before the fork (two frees and a realloc).
"$MEMSCRIBE" record -q -o "$WORK/f.mscr" -- "$MS_PROGRAMS/ana_unseen" fork >"$WORK/f.out" 2>&1 ||
    fail "record ana_unseen fork: $(cat "$WORK/f.out")"
grep -q "^EXPECT child unmatched 3$" "$WORK/f.out" || fail "ana_unseen fork: $(cat "$WORK/f.out")"
run 0 report --format=json --by-process "$WORK/f.mscr"
expect "fork: unmatched frees by process" "$(jq -c '[.processes[] | .unmatched_frees]' "$WORK/out")" "[0,3]"
expect "fork: the child's by cause" "$(jq -c '.processes[1].unmatched_frees_by_cause' "$WORK/out")" \
    '{"inherited_at_fork":3,"before_attach":0,"wine_before_hooks":0,"before_tracing":0}'
expect "fork: the total's by cause" "$(jq -c '.total.unmatched_frees_by_cause.inherited_at_fork' "$WORK/out")" 3
run 0 report --by-process "$WORK/f.mscr"
expect "fork: the text's cause" \
    "$(grep -c "^  unmatched frees:    3 (addresses never seen allocated: inherited at fork, the parent allocated them before it" "$WORK/out")" 2
# A real case: a shell script runs a command substitution (a forked
# subshell, which frees blocks of the shell's) and then execs the program,
# as a pyenv shim does.
"$MEMSCRIBE" record -q -o "$WORK/sh.mscr" -- sh -c "v=\$(echo x); exec $MS_PROGRAMS/ana_heapcheck" \
    >/dev/null 2>"$WORK/rec.err" || fail "record sh -c ... exec: $(cat "$WORK/rec.err")"
run 0 report --format=json "$WORK/sh.mscr"
n=$(jq '.total.unmatched_frees' "$WORK/out")
[ "$n" -gt 0 ] || fail "sh -c ... exec: no unmatched frees"
expect "sh -c ... exec: all inherited at fork" "$(jq '.total.unmatched_frees_by_cause.inherited_at_fork' "$WORK/out")" "$n"
run 0 report "$WORK/sh.mscr"
grep -q "^  unmatched frees:    $n (addresses never seen allocated: inherited at fork" "$WORK/out" ||
    fail "sh -c ... exec: the text does not name the cause: $(grep unmatched "$WORK/out")"

# A window row of a block allocated before the window and ended inside it
# says what it is: make's block, which shrink() reallocs from 4000 to 1000
# bytes (count 1, size 0, impacting size -4000), and keep's, freed.
"$MEMSCRIBE" record -q -o "$WORK/w.mscr" -- "$MS_PROGRAMS/ana_unseen" window >"$WORK/w.out" 2>&1 ||
    fail "record ana_unseen window: $(cat "$WORK/w.out")"
t_alloc=$("$MEMSCRIBE" dump "$WORK/w.mscr" | awk '$5 == "malloc" && / size=3000 / { print $1 }')
t_realloc=$("$MEMSCRIBE" dump "$WORK/w.mscr" | awk '$5 == "realloc" && / size=1000 / { print $1 }')
[ -n "$t_alloc" ] && [ -n "$t_realloc" ] || fail "window: no malloc or realloc in the dump"
from=$(awk -v a="$t_alloc" -v b="$t_realloc" 'BEGIN { printf "%dns", (a + b) / 2 * 1e9 }')
run 0 window --from "$from" --format=json "$WORK/w.mscr"
row() { jq -c --arg f "$1" '[.rows[] | select(.stack[0] | startswith($f + " ")) |
    [.impacting_type, .count, .size, .impacting_size, .aofi, .aofi_realloc, (.what // "" | .[0:40])]]' "$WORK/out"; }
expect "window JSON: make's block, shrunk" "$(row make)" \
    '[["Impacting",1,0,-4000,1,1,"its count holds blocks allocated before "]]'
expect "window JSON: keep's block, freed" "$(row keep)" \
    '[["Impacting",1,0,-3000,1,0,"its count holds blocks allocated before "]]'
expect "window JSON: shrink's new block" "$(row shrink)" '[["Impacting",1,1000,1000,0,0,""]]'
expect "window JSON: the realloc's row says so" \
    "$(jq '[.rows[] | select(.what // "" | test("a realloc inside it resized or moved"))] | length' "$WORK/out")" 1
run 0 window --from "$from" "$WORK/w.mscr"
grep -q "^ *[0-9]*  Impacting (AOFI realloc) *1 *0 *-4000  make (ana_unseen.c:" "$WORK/out" ||
    fail "window text: make's row: $(grep make "$WORK/out")"
grep -q "^ *[0-9]*  Impacting (AOFI) *1 *0 *-3000  keep (ana_unseen.c:" "$WORK/out" ||
    fail "window text: keep's row: $(grep keep "$WORK/out")"
grep -q "^Impacting (AOFI realloc): its count holds blocks allocated before the window that a realloc inside it" \
    "$WORK/out" || fail "window text: no legend of (AOFI realloc)"
expect "window text: one legend line each" "$(grep -c "^Impacting (AOFI" "$WORK/out")" 2
echo "PASS"
