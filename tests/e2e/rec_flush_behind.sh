#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A recorder behind its program still writes what it merged each second
# (docs/record.md, "Exit status and messages": a killed recorder's trace
# holds what was flushed, every second). The recorder and the three threads
# of tests/programs/rec_ledger share one CPU (taskset), so the recorder
# gets a quarter of it and merges for seconds a round; under --keep-last
# (two writers) and --aggregate=100ms (an aggregated trace fills no chunk of
# its own: only the flush writes it) the trace's first chunk must come
# within 2 s of the start. It comes at 1.0-1.25 s here; when the flush
# waited for the round's end, at 2.75-3 s (CI's rec_killed_ledger then
# found a killed recorder's trace empty). Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rec_flush_behind MEMSCRIBE MS_PROGRAMS
need taskset
BOUND_MS=2000

# The first CPU this test may run on (a container may not offer CPU 0).
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
rec=0 prog=''
# A failed check leaves nothing running.
trap '[ "$rec" = 0 ] || kill -KILL "$rec" 2>/dev/null; [ -z "$prog" ] || kill -KILL "$prog" 2>/dev/null; rm -rf "$WORK"' EXIT

# The program's pid, once its workers started (the ledger reads then).
program_pid() {
    { "$MS_PROGRAMS/rec_ledger" read "$WORK/ledger" 2>/dev/null || true; } | sed -n 's/^pid=//p'
}
# usage: chunks TRACE: the whole chunks of the unfinished trace.
chunks() {
    "$MEMSCRIBE" dump --header "$1" 2>/dev/null | sed -n 's/.* chunks=\([0-9]*\) .*/\1/p'
}

t=$WORK/t.mscr
start=$(date +%s%N)
taskset -c "$cpu" "$MEMSCRIBE" record --keep-last 1s --aggregate=100ms -o "$t" -- \
    "$MS_PROGRAMS/rec_ledger" run "$WORK/ledger" 15 >/dev/null 2>"$WORK/err" &
rec=$!
first_ms=''
while :; do
    now_ms=$((($(date +%s%N) - start) / 1000000))
    if [ -f "$t" ] && [ "$(chunks "$t")" -gt 0 ] 2>/dev/null; then
        first_ms=$now_ms
        break
    fi
    [ "$now_ms" -lt 10000 ] || break
    kill -0 "$rec" 2>/dev/null || fail "record ended: $(cat "$WORK/err")"
    [ -n "$prog" ] || prog=$(program_pid)
    sleep 0.05
done
# The program runs on, untraced once its recorder is gone, until killed (or
# for 15 s).
kill -KILL "$rec"
wait "$rec" 2>/dev/null || true
rec=0
[ -n "$prog" ] || prog=$(program_pid)
[ -z "$prog" ] || kill -KILL "$prog" 2>/dev/null || true
prog=''
[ -n "$first_ms" ] || fail "no chunk in the trace 10 s after the start"
[ "$first_ms" -le "$BOUND_MS" ] ||
    fail "the trace's first chunk came $first_ms ms after the start, more than $BOUND_MS ms"
echo "ok: the first chunk of a recorder behind its program came $first_ms ms after the start"
