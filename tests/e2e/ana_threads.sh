#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --thread on a threaded program (tests/programs/ana_threads.c): a block
# belongs to the thread that allocated it, also when another thread frees
# it. report, leaks and window keep the selected threads' blocks; window
# --by thread has one row per thread. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana-threads MEMSCRIBE MS_PROGRAMS
T=$WORK/t.mscr

"$MEMSCRIBE" record -o "$T" -- "$MS_PROGRAMS/ana_threads" >"$WORK/out" 2>"$WORK/err" ||
    fail "record exited with $?: $(cat "$WORK/err")"
# The threads' ids, from the blocks they allocated.
"$MEMSCRIBE" leaks --all --top 0 --format=json "$T" >"$WORK/all.json"
leaker=$(jq '[.blocks[] | select(.size == 64 and (.stack[0] | test("leaker"))) | .tid] | unique | .[]' "$WORK/all.json")
[ -n "$leaker" ] && [ "$(echo "$leaker" | wc -l)" = 1 ] || fail "the leaker thread's tid: '$leaker'"
"$MEMSCRIBE" window --by thread --top 0 --format=json "$T" >"$WORK/w.json"
maker=$(jq '.rows[] | select(.size == 7000) | .tid' "$WORK/w.json")
[ -n "$maker" ] && [ "$maker" != "$leaker" ] || fail "the maker thread's tid: '$maker'"

"$MEMSCRIBE" report --thread "$leaker" --format=json "$T" >"$WORK/r1.json"
expect "--thread leaker: allocations" "$(jq '.processes[0].allocations' "$WORK/r1.json")" 100
expect "--thread leaker: leaked" "$(jq '.processes[0].leaked_bytes' "$WORK/r1.json")" 6400
expect "--thread leaker: peak" "$(jq '.processes[0].peak_bytes' "$WORK/r1.json")" 6400
"$MEMSCRIBE" report --thread "$maker" --format=json "$T" >"$WORK/r2.json"
expect "--thread maker: allocations" "$(jq '.processes[0].allocations' "$WORK/r2.json")" 7
expect "--thread maker: freed by main, still maker's" "$(jq '.processes[0].frees' "$WORK/r2.json")" 7
expect "--thread maker: leaked" "$(jq '.processes[0].leaked_bytes' "$WORK/r2.json")" 0
expect "--thread maker: peak" "$(jq '.processes[0].peak_bytes' "$WORK/r2.json")" 7000
# Calls belong to the thread that made them: the main thread's frees of
# maker's blocks are the main thread's calls (the main thread's tid is the
# pid), and the three threads' calls add up to all of them.
"$MEMSCRIBE" report --format=json "$T" >"$WORK/r0.json"
main=$(jq '.processes[0].pid' "$WORK/r0.json")
"$MEMSCRIBE" report --thread "$main" --format=json "$T" >"$WORK/rm.json"
[ "$(jq '.processes[0].calls.free // 0' "$WORK/rm.json")" -ge 7 ] || fail "main made fewer than 7 frees"
for fn in malloc free; do
    expect "$fn calls: main + leaker + maker = all" \
        $(($(jq ".processes[0].calls.$fn // 0" "$WORK/rm.json") + $(jq ".processes[0].calls.$fn // 0" "$WORK/r1.json") +
            $(jq ".processes[0].calls.$fn // 0" "$WORK/r2.json"))) "$(jq ".processes[0].calls.$fn // 0" "$WORK/r0.json")"
done
"$MEMSCRIBE" report --thread "$leaker,$maker" --format=json "$T" >"$WORK/r3.json"
expect "--thread both: allocations" "$(jq '.processes[0].allocations' "$WORK/r3.json")" 107
# window --by thread: maker's row is Transient (allocated and freed inside).
expect "window --by thread: maker's type" \
    "$(jq -r ".rows[] | select(.tid == $maker) | .impacting_type" "$WORK/w.json")" Transient
expect "window --by thread: leaker's impacting size" \
    "$(jq ".rows[] | select(.tid == $leaker) | .impacting_size" "$WORK/w.json")" 6400
# A window with --thread reads from the start and agrees.
"$MEMSCRIBE" window --thread "$maker" --top 0 --format=json "$T" >"$WORK/w2.json"
expect "window --thread maker: transient count" \
    "$(jq '[.rows[] | select(.impacting_type == "Transient") | .count] | add' "$WORK/w2.json")" 7
"$MEMSCRIBE" leaks --thread "$leaker" --format=json "$T" >"$WORK/l.json"
expect "leaks --thread leaker" "$(jq '.processes[0].leaked_bytes' "$WORK/l.json")" 6400
echo "PASS"
