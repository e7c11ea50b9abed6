#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The demo end to end: record examples/memtest_demo (WPA's MemoryTestApp on
# Linux) and check that the reports find exactly what it does:
#  - the steady-state step halfway: in a window around it, the row of
#    AllocateSteadyState (called from main) is Impacting, Count 1,
#    Size 10 MB, Impacting Size 10 MB;
#  - the last four spikes: in a window over them, the row under
#    Operation1 -> ManipulateTemporaryBuffer is Transient, Count 4,
#    Size 40 MB, Impacting Size 0;
#  - the leaks: 320 blocks (10 steps x 32) of 40 bytes = 12800 bytes, by
#    InnerLoopOperation;
#  - report: calls are the demo's own (no mmap: the start's mappings are a
#    snapshot, shown apart); 10 temporary allocations of 10 MB, and the peak = 20 MB steady
#    + one 10 MB spike + what else was live then;
#  - stacks read leaf first in every command, --frames N cuts them with
#    "... N more", C++ names are short unless --full-names; tree has a
#    default depth and a total line.
# Window times come from the trace itself (timeline and leaks --all in
# JSON), never from the program's sleeps. Needs MEMSCRIBE, MS_BUILD.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana-demo MEMSCRIBE MS_BUILD
T=$WORK/demo.mscr
MB=1000000

"$MEMSCRIBE" record -o "$T" -- "$MS_BUILD/examples/memtest_demo" >"$WORK/out" 2>"$WORK/err" ||
    fail "record exited with $?: $(cat "$WORK/err")"

# --- Leaks: grouped by stack, the InnerLoopOperation row. ------------------
"$MEMSCRIBE" leaks --format=json --top 0 "$T" >"$WORK/leaks.json"
inner='.stacks[] | select(.stack[0] | test("InnerLoopOperation"))'
expect "leaked blocks of InnerLoopOperation" "$(jq "[$inner] | length" "$WORK/leaks.json")" 1
expect "leaked blocks of InnerLoopOperation" "$(jq "$inner | .leaked_blocks" "$WORK/leaks.json")" 320
expect "leaked bytes of InnerLoopOperation" "$(jq "$inner | .leaked_bytes" "$WORK/leaks.json")" 12800
# Each of them is 40 bytes.
"$MEMSCRIBE" leaks --all --format=json --top 0 "$T" >"$WORK/blocks.json"
expect "40-byte leaked blocks from InnerLoopOperation" \
    "$(jq '[.blocks[] | select(.size == 40 and (.stack[0] | test("InnerLoopOperation")))] | length' \
        "$WORK/blocks.json")" 320

# --- Steady-state step: its allocation time from the blocks live at the
# peak (the second AllocateSteadyState block), then a window around it.
"$MEMSCRIBE" leaks --all --format=json --top 0 --at peak "$T" >"$WORK/peak.json"
steady=$(jq -r '[.blocks[] | select(.size == 10000000 and (.stack[0] | test("AllocateSteadyState")))
                | .time_ns] | sort | .[1]' "$WORK/peak.json")
[ "$steady" != null ] || fail "no second steady-state block live at the peak"
from=$((steady - 50000000))
to=$((steady + 50000000))
"$MEMSCRIBE" window --from "${from}ns" --to "${to}ns" --top 0 --format=json "$T" >"$WORK/w1.json"
# usage: window_row FILE.json JQ-ROW LABEL TYPE COUNT SIZE IMPACTING: the
# window's one row that JQ-ROW selects, and its numbers.
window_row() {
    expect "$3 rows in the window" "$(jq "[$2] | length" "$1")" 1
    expect "$3 impacting type" "$(jq -r "$2 | .impacting_type" "$1")" "$4"
    expect "$3 count" "$(jq "$2 | .count" "$1")" "$5"
    expect "$3 size" "$(jq "$2 | .size" "$1")" "$6"
    expect "$3 impacting size" "$(jq "$2 | .impacting_size" "$1")" "$7"
}
row='.rows[] | select(.stack[0] | test("AllocateSteadyState"))'
window_row "$WORK/w1.json" "$row" steady-state Impacting 1 $((10 * MB)) $((10 * MB))
expect "steady-state stack: main calls AllocateSteadyState" \
    "$(jq -r "$row | .stack[0:2] | reverse | map(sub(\" [(][^()]*:[0-9]+[)]$\";\"\")) | join(\" -> \")" \
        "$WORK/w1.json")" "main -> (anonymous namespace)::AllocateSteadyState()"

# --- The last four spikes: from a 1 ms timeline, the intervals where the
# heap rises by 10 MB (a spike or steady block starts) and where it drops
# by 10 MB (a spike ends, or a steady block is freed at exit). The last four
# rises are the last four spikes; the window ends with the first drop after
# the last rise (the last spike's end). Counting drops from the end instead
# would depend on whether the two steady frees at exit land in one 1 ms
# interval or two, which is up to how long munmap takes.
"$MEMSCRIBE" timeline --interval 1ms --format=json "$T" >"$WORK/tl.json"
rise_times=$(jq -c '.processes[0].rows as $r | [range(0; $r | length)
    | select($r[.].heap_max_bytes - (if . == 0 then 0 else $r[. - 1].heap_bytes end) >= 9500000)
    | $r[.].time_ns]' "$WORK/tl.json")
rises=$(jq -r '.[-4:] | .[0]' <<<"$rise_times")
last_rise=$(jq -r '.[-1]' <<<"$rise_times")
drops=$(jq -r --argjson after "$last_rise" '.processes[0].rows as $r | [range(1; $r | length)
    | select($r[. - 1].heap_bytes - $r[.].heap_bytes >= 9500000) | $r[.].time_ns
    | select(. > $after)] | .[0]' "$WORK/tl.json")
[ "$drops" != null ] || fail "no drop after the last spike starts"
# A row at time t holds the events of [t - 1ms, t).
from=$((rises - 1000000))
to=$((drops - 1))
"$MEMSCRIBE" window --from "${from}ns" --to "${to}ns" --top 0 --format=json "$T" >"$WORK/w2.json"
row='.rows[] | select(any(.stack[]; test("Operation1")) and (.stack[0] | test("ManipulateTemporaryBuffer")))'
window_row "$WORK/w2.json" "$row" ManipulateTemporaryBuffer Transient 4 $((40 * MB)) 0
# No other 10 MB block lives or dies in that window.
expect "transient blocks in the window (all stacks)" \
    "$(jq '[.processes[0].aifi] | .[0]' "$WORK/w2.json")" \
    "$(jq '[.rows[] | select(.impacting_type == "Transient") | .count] | add' "$WORK/w2.json")"
# Bottom-up: the allocating function comes first.
"$MEMSCRIBE" window --from "${from}ns" --to "${to}ns" --bottom-up --by function --format=json \
    "$T" >"$WORK/w3.json"
expect "bottom-up by function: ManipulateTemporaryBuffer count" \
    "$(jq '.rows[] | select(.function | test("ManipulateTemporaryBuffer")) | .count' "$WORK/w3.json")" 4

# --- Report: temporary allocations, peak. -----------------------------------
"$MEMSCRIBE" report --format=json --top 0 "$T" >"$WORK/report.json"
p='.processes[0]'
expect "temporary allocations" "$(jq "$p.temporary" "$WORK/report.json")" 10
expect "temporary bytes" "$(jq "$p.temporary_bytes" "$WORK/report.json")" $((100 * MB))
expect "top temporary site is a spike" \
    "$(jq -r "$p.top.temporary[0].stack[0] | test(\"TransientSpike|ManipulateTemporaryBuffer\")" \
        "$WORK/report.json")" true
# The demo makes no mmap call: the mappings of its start are a snapshot,
# shown apart, not calls (they read "mmap 52").
expect "calls (the demo's own)" "$(jq -c "$p.calls | keys" "$WORK/report.json")" '["free","malloc"]'
[ "$(jq "$p.start_mappings" "$WORK/report.json")" -gt 10 ] || fail "no ranges mapped at start"
"$MEMSCRIBE" report "$T" >"$WORK/report.txt"
grep -q "^  calls:              malloc 336, free 14$" "$WORK/report.txt" || fail "text calls: $(grep calls: "$WORK/report.txt")"
grep -q "^  mapped at start:    [0-9]* ranges (a snapshot, not calls)$" "$WORK/report.txt" ||
    fail "text: no 'mapped at start' line"
peak=$(jq "$p.peak_bytes" "$WORK/report.json")
# At the peak: both steady blocks and one spike, plus the small blocks then
# live (the 72704-byte libstdc++ pool, leaks so far, the vector).
[ "$peak" -ge $((30 * MB)) ] && [ "$peak" -lt $((30 * MB + 100000)) ] ||
    fail "peak $peak is not 30 MB plus under 100 kB of small blocks"
echo "ok: peak $peak"
expect "peak contribution of the spike site at the peak" \
    "$(jq "[$p.top.peak[] | select(.stack[0] | test(\"TransientSpike|ManipulateTemporaryBuffer\")) | .peak_bytes] | add" \
        "$WORK/report.json")" $((10 * MB))
# The text report runs and names the sections.
"$MEMSCRIBE" report "$T" >"$WORK/report.txt"
grep -q "top call sites by peak contribution" "$WORK/report.txt" || fail "text report lacks its lists"

# --- Stacks: one notation, cut stacks marked, short names. -------------------
# InnerLoopOperation's leak stack, all frames (JSON), leaf first.
"$MEMSCRIBE" leaks --format=json "$T" >"$WORK/l.json"
full=$(jq -c "[$inner] | .[0].stack" "$WORK/l.json")
n=$(jq length <<<"$full")
[ "$n" -ge 3 ] || fail "InnerLoopOperation's stack has $n frames"
expect "short C++ name, leaf first" "$(jq -r '.[0] | sub(" [(][^()]*:[0-9]+[)]$";"")' <<<"$full")" \
    "(anonymous namespace)::InnerLoopOperation()"
"$MEMSCRIBE" leaks --frames 2 --format=json "$T" >"$WORK/l2.json"
expect "--frames 2: two frames and what was cut" "$(jq -c "[$inner] | .[0].stack" "$WORK/l2.json")" \
    "$(jq -c ".[0:2] + [\"... $((n - 2)) more\"]" <<<"$full")"
# Text rows leave out libc's start-up (docs/symbols.md, "The frame of
# interest"): main ends the row; --frames 1 cuts it.
"$MEMSCRIBE" leaks --frames 2 "$T" >"$WORK/l2.txt"
grep -q "InnerLoopOperation() (memtest_demo.cc:[0-9]*) < main (memtest_demo.cc:[0-9]*)$" \
    "$WORK/l2.txt" || fail "leaks --frames 2 text: $(grep InnerLoop "$WORK/l2.txt")"
"$MEMSCRIBE" leaks --frames 1 "$T" >"$WORK/l2.txt"
grep -q "InnerLoopOperation() (memtest_demo.cc:[0-9]*) < \.\.\. 1 more$" \
    "$WORK/l2.txt" || fail "leaks --frames 1 text: $(grep InnerLoop "$WORK/l2.txt")"
"$MEMSCRIBE" leaks --full-names --format=json "$T" >"$WORK/lf.json"
expect "--full-names keeps the arguments" \
    "$(jq -r "[$inner] | .[0].stack[0] | sub(\" [(][^()]*:[0-9]+[)]\$\";\"\")" "$WORK/lf.json")" \
    "(anonymous namespace)::InnerLoopOperation(int)"
# The window's rows read leaf first too (the same list as leaks').
"$MEMSCRIBE" window --format=json --top 0 "$T" >"$WORK/wall.json"
expect "window stack = leaks stack" \
    "$(jq -c '.rows[] | select(.stack[0] | test("InnerLoopOperation")) | .stack' "$WORK/wall.json")" "$full"
# tree: 12 levels by default, and a total line with report's numbers.
"$MEMSCRIBE" tree "$T" >"$WORK/tree.txt"
leaked=$(jq "$p.leaked_bytes" "$WORK/report.json")
allocs=$(jq "$p.allocations" "$WORK/report.json")
abytes=$(jq "$p.allocated_bytes" "$WORK/report.json")
grep -q "^total: peak $peak bytes, leaked $leaked bytes, $allocs allocations of $abytes bytes, 10 temporary$" \
    "$WORK/tree.txt" ||
    fail "tree total: $(grep total "$WORK/tree.txt")"
grep -q "^(at most 12 levels" "$WORK/tree.txt" || fail "tree does not say its depth limit"
"$MEMSCRIBE" tree --depth 0 --format=json "$T" >"$WORK/tree.json"
expect "tree total leaked" "$(jq '.inclusive.leaked_bytes' "$WORK/tree.json")" "$leaked"

# --- Suppressions: the runtime's one-time allocations are listed apart. ------
"$MEMSCRIBE" leaks --format=json "$T" >"$WORK/ls.json"
expect "libstdc++'s pool, listed apart" \
    "$(jq '[.suppressed[] | select(.stack[0] | test("libstdc[+][+]"))] | .[0].leaked_bytes' "$WORK/ls.json")" 72704
expect "stdout's buffer, listed apart" \
    "$(jq '[.suppressed[] | select(.stack[0] | test("_IO_file_doallocate"))] | .[0].leaked_bytes' "$WORK/ls.json")" 4096
expect "and not among the program's leaks" "$(jq '[.stacks[] | select(.leaked_bytes == 72704)] | length' "$WORK/ls.json")" 0
expect "report: leaked total unchanged" "$(jq "$p.leaked_bytes" "$WORK/report.json")" $((12800 + 72704 + 4096))
expect "report: of which apart" "$(jq "$p.suppressed_leaked_bytes" "$WORK/report.json")" $((72704 + 4096))
expect "report: top leaked without the pool" \
    "$(jq "[$p.top.leaked[] | select(.leaked_bytes == 72704)] | length" "$WORK/report.json")" 0
"$MEMSCRIBE" leaks --no-default-suppressions --format=json "$T" >"$WORK/ln.json"
expect "--no-default-suppressions: the pool with the rest" \
    "$(jq '[.stacks[] | select(.leaked_bytes == 72704)] | length' "$WORK/ln.json")" 1
expect "--no-default-suppressions: nothing apart" "$(jq '.suppressed | length' "$WORK/ln.json")" 0
printf '# ours\nleak:*InnerLoopOperation*\n' >"$WORK/supp"
"$MEMSCRIBE" leaks --suppress "$WORK/supp" --format=json "$T" >"$WORK/lu.json"
expect "--suppress FILE: InnerLoopOperation apart" \
    "$(jq '[.suppressed[] | select(.stack[0] | test("InnerLoopOperation"))] | .[0].leaked_bytes' "$WORK/lu.json")" 12800
printf 'leek:main\n' >"$WORK/bad.supp"
st=0
"$MEMSCRIBE" leaks --suppress "$WORK/bad.supp" "$T" >/dev/null 2>"$WORK/err" || st=$?
expect "a bad suppression file: exit" "$st" 1
grep -q "bad.supp:1: a rule is 'leak:PATTERN'" "$WORK/err" || fail "bad suppressions: $(cat "$WORK/err")"

# --- timeline: a committed column flat for want of --vm-precise says so. -------
# Rows every 500 ms: the first comes after the snapshot of the mappings at
# the start, even on a loaded machine (a row before it reads 0 committed, and
# the column is not flat: seen with the default interval, 1 % of the run).
"$MEMSCRIBE" timeline --interval 500ms "$T" >"$WORK/tl.txt"
grep -q "committed does not change: recorded without --vm-precise" "$WORK/tl.txt" ||
    fail "timeline does not say why committed is flat"
"$MEMSCRIBE" record -q --vm-precise -o "$WORK/precise.mscr" -- "$MS_BUILD/examples/memtest_demo" \
    >/dev/null 2>"$WORK/err" || fail "record --vm-precise: $(cat "$WORK/err")"
"$MEMSCRIBE" timeline --interval 500ms "$WORK/precise.mscr" >"$WORK/tl2.txt"
! grep -q "committed does not change" "$WORK/tl2.txt" || fail "timeline --vm-precise trace: note"
echo "ok: timeline says why committed is flat, only without --vm-precise"
echo "PASS"
