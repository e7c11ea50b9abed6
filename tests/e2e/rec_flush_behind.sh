#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A recorder behind its program still writes what it merged each second
# (docs/record.md, "Exit status and messages": a killed recorder's trace
# holds what was flushed, every second). The recorder and the three threads
# of tests/programs/rec_ledger share one CPU (taskset), so the recorder
# gets a quarter of it and merges for seconds a round; under --keep-last
# (two writers) and --aggregate=100ms (an aggregated trace fills no chunk of
# its own: only the flush writes it) the trace gets a chunk while the
# program runs, and a killed recorder leaves it. When it came is printed,
# not bounded: 1.0-1.25 s here on a quiet machine, 2.3 s once at load 7.6
# (when the flush waited for the round's end, 2.75-3 s quiet). That the
# flush does not wait for the round is test_rec_stream's
# test_long_merge_flushes_inside, which counts the flushes inside a merge
# and does not depend on the machine's speed. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rec_flush_behind MEMSCRIBE MS_PROGRAMS
need taskset
# The program runs 15 s: a chunk must come before it ends.
WAIT_MS=12000

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
    [ "$now_ms" -lt "$WAIT_MS" ] || break
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
[ -n "$first_ms" ] || fail "no chunk in the trace $((WAIT_MS / 1000)) s after the start"
# What the killed recorder left reads, chunks and all.
"$MEMSCRIBE" report "$t" >/dev/null 2>"$WORK/report.err" ||
    fail "the killed recorder's trace does not read: $(cat "$WORK/report.err")"
echo "ok: the first chunk of a recorder behind its program came $first_ms ms after the start"
