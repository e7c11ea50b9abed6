#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record -p after a record -p that was killed (SIGKILL: nobody detached).
# The collector it loaded is left marked as attached; the next record -p
# must still attach, whether the collector has noticed its recorder gone
# (a full ring: round 1 allocates more than a ring holds) or not (right
# after the kill), and record exactly the round it attached for. The
# program runs on untouched: its output and exit status are those of an
# untraced run.
source "$(dirname "$0")/record_lib.sh"

PROG=$MS_PROGRAMS/rec_attach_target
target=0 # the program's pid, set by ms_attach_target
# A failed check leaves no program waiting for its next round.
trap '[ "$target" = 0 ] || kill "$target" 2>/dev/null || true; rm -rf "$WORK"' EXIT

# Attach to $target and kill the recorder with SIGKILL once it says it is
# attached. usage: kill_attached TRACE
kill_attached() {
    "$MEMSCRIBE" record -p "$target" -o "$1" 2>"$1.err" &
    local rec=$!
    wait_line "$1.err" "attached to process $target"
    kill -KILL "$rec"
    wait "$rec" 2>/dev/null || true
}

mkdir "$WORK/plain"
touch "$WORK/plain/go.1" "$WORK/plain/go.2" "$WORK/plain/go.3" "$WORK/plain/go.4"
REC_ATTACH_BIG=1 "$PROG" "$WORK/plain" 4 >"$WORK/plain.out"

D=$WORK/run
REC_ATTACH_BIG=1 ms_attach_target "$D" 4
# Killed, then round 1 (its big allocations fill the dead recorder's ring:
# the collector notices), then attached again for round 2.
kill_attached "$WORK/k1.mscr"
touch "$D/go.1"
wait_file "$D/done.1"
ms_attach_round "$WORK/t2.mscr" 2 "$D"
# Killed, and attached again at once, before any event could notice.
kill_attached "$WORK/k3.mscr"
ms_attach_round "$WORK/t3.mscr" 3 "$D"
touch "$D/go.4"
rc=0
wait "$target" || rc=$?
expect "exit status of the program whose recorders were killed" "$rc" 0
cmp -s "$WORK/plain.out" "$D/out" || fail "output differs: $(cat "$D/out") vs $(cat "$WORK/plain.out")"

# Each trace holds its round's calls: the 7 blocks of the round before
# were allocated while no live recorder was attached.
expect "round 2's heap calls" "$(ms_heap_calls "$WORK/t2.mscr" | grep -v 'size=1048576' | tr '\n' ';')" \
    "calloc size=300 1;free known 3;free unknown 7;malloc size=5002 5;malloc size=7002 3;realloc size=6002 1;"
expect "round 3's heap calls" "$(ms_heap_calls "$WORK/t3.mscr" | grep -v 'size=1048576' | tr '\n' ';')" \
    "calloc size=300 1;free known 4;free unknown 7;malloc size=5003 5;malloc size=7003 3;malloc size=7703 1;realloc size=6003 1;"
