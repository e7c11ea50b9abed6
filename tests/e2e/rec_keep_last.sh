#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --keep-last (docs/aggregate.md, "Flight recorder"): tests/programs/rec_agg
# (the same heap calls every run) recorded with --keep-last 20ms at --aggregate=1ms
# and exactly. The whole run's trace gives the exact recording's totals per process
# (allocations, bytes, temporaries, peak, leaks). Its folder holds the latest three
# segments of 10 ms, numbered on from 1, each a trace of its own (format 1.9, META
# SEGMENT: its number, its start at (number - 1) x 10 ms). In each, the blocks live
# at any moment from its start on are the whole run's then (leaks --at, to the
# byte), so are the blocks carried in (live at start), and the last one's leaks are
# the whole run's. Then: a recorder killed mid-run leaves the trace and its latest
# segments readable; the refusals exit 2.
# Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rec_keep_last MEMSCRIBE MS_PROGRAMS
need jq
PROG=$MS_PROGRAMS/rec_agg
T=$WORK/k.mscr
SPAN=10000000

"$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$PROG" 30 || fail "exact record failed"
"$MEMSCRIBE" record -q --keep-last 20ms --aggregate=1ms -o "$T" -- "$PROG" 30 ||
    fail "record --keep-last failed"

# usage: totals FILE: per process in order, the figures every trace kind gives exactly.
totals() {
    "$MEMSCRIBE" report --format=json --top 0 "$1" 2>/dev/null |
        jq -c '[.processes[] | {allocations, allocated_bytes, frees, temporary, temporary_bytes,
                                peak_bytes, leaked_bytes, leaked_blocks}]'
}
expect "the whole run's totals against the exact recording's" "$(totals "$T")" "$(totals "$WORK/exact.mscr")"
"$MEMSCRIBE" report --format=json --top 0 "$T" >"$WORK/whole.json" 2>/dev/null || fail "report"
expect "the whole run's keep_last" "$(jq -c .keep_last "$WORK/whole.json")" '{"keep_last_ns":20000000}'

ls "$T.last" >"$WORK/segs.txt"
nr=$(wc -l <"$WORK/segs.txt")
[ "$nr" -eq 3 ] || fail "$nr segments kept, not 3: $(tr '\n' ' ' <"$WORK/segs.txt")"
first=$(head -1 "$WORK/segs.txt" | sed 's/seg-0*\([0-9]*\)\.mscr/\1/')
last=$(tail -1 "$WORK/segs.txt" | sed 's/seg-0*\([0-9]*\)\.mscr/\1/')
expect "segments kept" "$((last - first + 1))" 3
end_ns=$(jq '[.processes[].last_ns // empty] | max // 0' "$WORK/whole.json")
for n in $(seq "$first" "$last"); do
    seg=$T.last/$(printf 'seg-%06d.mscr' "$n")
    from=$(((n - 1) * SPAN))
    "$MEMSCRIBE" report --format=json --top 0 "$seg" >"$WORK/seg$n.json" 2>"$WORK/seg$n.err" ||
        fail "segment $n: report failed: $(cat "$WORK/seg$n.err")"
    expect "segment $n's META" "$(jq -c .keep_last "$WORK/seg$n.json")" \
        "{\"keep_last_ns\":20000000,\"segment\":$n,\"from_ns\":$from}"
    "$MEMSCRIBE" dump --header "$seg" >"$WORK/seg$n.txt" 2>&1 || fail "segment $n: dump failed"
    grep -q '^# memscribe trace version 1\.9$' "$WORK/seg$n.txt" || fail "segment $n: not a 1.9 trace"
    expect "segment $n's command and host" "$(grep '^# command ' "$WORK/seg$n.txt")" \
        "$("$MEMSCRIBE" dump --header "$T" | grep '^# command ')"
    # At its start and 5 ms in (cuts of the whole run, where it is exact), the same
    # blocks live to the byte in both, of the processes it holds (those running at its
    # start or started in it: one that ended before is the whole run's alone); the
    # carried ones are those live at the start.
    for at in "$from" $((from + 5000000)); do
        for f in "$T" "$seg"; do
            "$MEMSCRIBE" leaks --format=json --at "${at}ns" "$f" 2>/dev/null |
                jq -c --slurpfile s "$WORK/seg$n.json" \
                    '[.processes[] | select(.pid as $p | $s[0].processes | map(.pid) | index($p))
                      | {pid, leaked_bytes, leaked_blocks}]' >"$WORK/at.$(basename "$f")"
        done
        expect "segment $n: blocks live at ${at} ns" "$(cat "$WORK/at.$(basename "$seg")")" \
            "$(cat "$WORK/at.$(basename "$T")")"
    done
    carried=$(jq '[.processes[].carried_blocks // 0] | add' "$WORK/seg$n.json")
    live=$("$MEMSCRIBE" leaks --format=json --at "${from}ns" "$T" 2>/dev/null |
        jq --slurpfile s "$WORK/seg$n.json" \
            '[.processes[] | select(.pid as $p | $s[0].processes | map(.pid) | index($p)) | .leaked_blocks] | add // 0')
    expect "segment $n: blocks carried in" "$carried" "$live"
done
# The last segment ends with the run: its processes' leaks are the whole run's.
expect "the last segment's leaks" \
    "$(jq -c '[.processes[] | {pid, leaked_bytes, leaked_blocks}]' "$WORK/seg$last.json")" \
    "$(jq -c --slurpfile s "$WORK/seg$last.json" \
        '[.processes[] | select(.pid as $p | $s[0].processes | map(.pid) | index($p)) | {pid, leaked_bytes, leaked_blocks}]' \
        "$WORK/whole.json")"
echo "ok: segments $first-$last of a run of $end_ns ns, each the whole run's blocks from its start"

# A recorder killed mid-run: the trace and the segments it kept read (up to their last
# flushed chunk: a second), the oldest ones removed as they went.
"$MEMSCRIBE" record -q --keep-last 400ms --aggregate=10ms -o "$WORK/killed.mscr" -- "$PROG" 4000 &
rec=$!
sleep 2.5
kill -KILL "$rec"
wait "$rec" 2>/dev/null || true
pkill -KILL -f "$PROG 4000" 2>/dev/null || true
ls "$WORK/killed.mscr.last" >"$WORK/killed.txt"
[ "$(wc -l <"$WORK/killed.txt")" -le 3 ] || fail "more than 3 segments after the kill: $(cat "$WORK/killed.txt")"
for f in "$WORK/killed.mscr" "$WORK/killed.mscr.last"/*; do
    "$MEMSCRIBE" report "$f" >"$WORK/killed.out" 2>&1 || fail "$f after the kill: $(cat "$WORK/killed.out")"
done
echo "ok: a killed recorder left $(tr '\n' ' ' <"$WORK/killed.txt")readable"

# Refusals: usage errors, exit 2, before anything runs.
for bad in "--keep-last 1s --max-size 1M" "--keep-last 1s --sample 4K" "--keep-last 10ms --aggregate=1s" \
    "--keep-last x"; do
    code=0
    # shellcheck disable=SC2086 # the options are words
    "$MEMSCRIBE" record -q $bad -o "$WORK/bad.mscr" -- true 2>"$WORK/bad.err" || code=$?
    expect "exit of record $bad" "$code" 2
done
code=0
"$MEMSCRIBE" record -q --keep-last 1s -- true 2>"$WORK/bad.err" || code=$?
expect "exit of --keep-last without -o" "$code" 2
echo "ok: record --keep-last"
