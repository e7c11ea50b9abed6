#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Traces survive a SIGKILL, of the program or of the recorder, at a random
# moment, in every recording mode (MODES below). tests/programs/rec_ledger
# allocates and frees in 3 threads and keeps, in a MAP_SHARED file that the
# kill leaves as it was, per thread the heap calls started and done and the
# blocks and bytes it holds; the trace is held to that ledger, the workers'
# threads selected (report --thread: pthread_create allocates too):
#  - the program killed (the recorder finishes the trace: record exits 137):
#    check and report read it whole; allocations and frees lie between the
#    ledger's calls done and started, bytes allocated and the blocks and
#    bytes live at the end are the ledger's up to the calls in flight
#    (aggregated traces give the same totals: docs/aggregate.md);
#  - the recorder killed (docs/record.md, "Exit status and messages": the
#    program runs on untraced, the trace holds what was flushed, about each
#    second, and reads as incomplete): the program goes on, check passes
#    and says the trace is incomplete, report reads it; its counts are at
#    most the calls started by the kill, and not zero when the kill came 2 s
#    or more after the workers started.
# With --keep-last, its segments read too, and the latest one's blocks live at
# the end are the trace's. Each (mode, who is killed) case runs three times, the kill drawn in a
# window of its own (early, middle, late) from a seed printed first:
# MS_LEDGER_SEED=N replays the same moments. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rec_killed_ledger MEMSCRIBE MS_PROGRAMS
need jq
PROG=$MS_PROGRAMS/rec_ledger

# The recording modes, one a line: a name, "|", then record's options.
# A new mode is one more line.
MODES=(
    "exact|"
    "aggregate=100ms|--aggregate=100ms"
    "max-size=64K|--max-size 64K"
    "keep-last=1s|--keep-last 1s --aggregate=100ms"
)

# Each repetition's window for the kill, in ms after every worker's first
# call: the program's (its kill may come before the trace's first chunk),
# the recorder's (the last one 2 s or more after the start: its trace must
# hold calls).
PROGRAM_WINDOWS=(50:600 600:1500 1500:2500)
RECORDER_WINDOWS=(50:1000 1000:2000 2000:3000)
FLUSHED_AFTER_MS=2000

SEED=${MS_LEDGER_SEED:-$(((RANDOM << 15) | RANDOM))}
RANDOM=$SEED
echo "seed: $SEED (MS_LEDGER_SEED=$SEED replays these kill moments)"

rec=0 prog=0 # the recorder and the program of the case under way
# A failed check leaves nothing running.
trap '[ "$rec" = 0 ] || kill -KILL "$rec" 2>/dev/null; [ "$prog" = 0 ] || kill -KILL "$prog" 2>/dev/null; rm -rf "$WORK"' EXIT

# usage: draw LO:HI: a moment in [LO, HI) ms into $delay_ms (not in a
# subshell: the seed's sequence is this shell's).
draw() {
    local lo=${1%:*} hi=${1#*:}
    delay_ms=$((lo + RANDOM % (hi - lo)))
}

# usage: sleep_ms MS
sleep_ms() {
    sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"
}

# usage: ledger_parse FILE: the KEY=VALUE lines of rec_ledger read into
# L[KEY], and the calls in flight.
declare -A L
ledger_parse() {
    local k v
    L=()
    while IFS='=' read -r k v; do L[$k]=$v; done <"$1"
    L[alloc_flight]=$((L[alloc_started] - L[alloc_done]))
    L[free_flight]=$((L[free_started] - L[free_done]))
}
# usage: ledger_read LEDGER: the ledger now, into LEDGER.txt and L; 1 until
# every worker has made a call.
ledger_read() {
    "$PROG" read "$1" >"$1.txt" 2>/dev/null || return 1
    ledger_parse "$1.txt"
}

# usage: start_case TRACE LEDGER OPTIONS...: record the program in the
# background ($rec), wait until every worker has made a call ($prog).
start_case() {
    local trace=$1 ledger=$2
    shift 2
    "$MEMSCRIBE" record "$@" -o "$trace" -- "$PROG" run "$ledger" >"$trace.out" 2>"$trace.err" &
    rec=$!
    L=()
    for _ in $(seq 1 1500); do
        ledger_read "$ledger" && break
        kill -0 "$rec" 2>/dev/null || fail "$what: record ended before the program started: $(cat "$trace.err")"
        sleep 0.02
    done
    [ -n "${L[pid]:-}" ] || fail "$what: the program's workers did not start within 30 s"
    prog=${L[pid]}
}

# usage: wait_gone PID: until the process (not our child) is gone or a zombie.
wait_gone() {
    local state
    for _ in $(seq 1 500); do
        state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
        [ "$state" != Z ] || return 0
        sleep 0.02
    done
    fail "$what: process $1 still runs 10 s after SIGKILL"
}

# usage: within WHAT GOT LO HI
within() {
    [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] ||
        fail "$what: $1 = $2, not within the ledger's [$3, $4] (seed $SEED; ledger: $(tr '\n' ' ' <"$ledger.txt"))"
}

# usage: report_totals TRACE: report --format=json of the workers' threads
# into TRACE.json, its totals into T[KEY]; an exit status of 1 with "no
# thread of --thread is in the trace" (a recorder killed before its first
# flush) gives zeros.
declare -A T
report_totals() {
    local k
    T=()
    if "$MEMSCRIBE" report --format=json --top 0 --thread "${L[tids]}" "$1" >"$1.json" 2>"$1.rerr"; then
        for k in allocations frees allocated_bytes leaked_bytes leaked_blocks; do
            T[$k]=$(jq ".total.$k" "$1.json")
        done
        T[incomplete]=$(jq '.incomplete' "$1.json")
        # For the record: whether the trace reached the aggregated stretch
        # (report's JSON says it in its notes, not on stderr).
        ! jq -e '.trace_notes | any(test("aggregated"))' "$1.json" >/dev/null ||
            T[aggregated]=" (aggregated)"
    elif grep -q 'no thread of --thread is in the trace' "$1.rerr"; then
        T=([allocations]=0 [frees]=0 [allocated_bytes]=0 [incomplete]=true)
    else
        fail "$what: report failed: $(cat "$1.rerr")"
    fi
}

# usage: check_reads TRACE INCOMPLETE: memscribe check reads the trace and
# passes (exit 0: docs/check.md; a cut trace too, read up to its last
# chunk), and says it is incomplete (yes) or not (no).
check_reads() {
    local rc=0
    "$MEMSCRIBE" check --max-allocations 1000000000 "$1" >"$1.check" 2>"$1.cerr" || rc=$?
    [ "$rc" = 0 ] || fail "$what: check exited $rc: $(cat "$1.check" "$1.cerr")"
    if [ "$2" = yes ]; then
        grep -q 'the trace is incomplete' "$1.cerr" ||
            fail "$what: check does not say the trace is incomplete: $(cat "$1.cerr")"
    elif grep -q incomplete "$1.cerr"; then
        fail "$what: check calls the finished trace incomplete: $(cat "$1.cerr")"
    fi
}

# usage: segments_read TRACE [LIVE]: --keep-last's segments beside TRACE (if
# any), at most the two of 500 ms that hold 1 s and the one begun (segments
# of D/2, a multiple of the 100 ms period), each passes check; with LIVE (the program
# killed: the latest segment ends with the run), the latest one's blocks live
# at the end are the trace's (T, report_totals's).
segments_read() {
    local segs=() seg
    [ -d "$1.last" ] || return 0
    mapfile -t segs < <(find "$1.last" -name 'seg-*.mscr' | sort)
    [ "${#segs[@]}" -ge 1 ] && [ "${#segs[@]}" -le 3 ] ||
        fail "$what: ${#segs[@]} segments beside the trace"
    for seg in "${segs[@]}"; do
        "$MEMSCRIBE" check --max-allocations 1000000000 "$seg" >"$seg.check" 2>&1 ||
            fail "$what: check of $seg failed: $(cat "$seg.check")"
    done
    [ -n "${2:-}" ] || return 0
    seg=${segs[-1]}
    "$MEMSCRIBE" report --format=json --top 0 --thread "${L[tids]}" "$seg" >"$seg.json" 2>"$seg.rerr" ||
        fail "$what: report of $seg failed: $(cat "$seg.rerr")"
    local got
    got="$(jq -c '[.total.leaked_bytes, .total.leaked_blocks]' "$seg.json")"
    [ "$got" = "[${T[leaked_bytes]},${T[leaked_blocks]}]" ] || segment_differs "$1" "$seg" "$got"
}

# usage: segment_differs TRACE SEGMENT GOT: the latest segment's blocks
# live at the end are not the trace's: keep both, the ledger and record's
# messages in the build's artifacts, say which call sites differ, fail.
segment_differs() {
    local keep=${MS_BUILD:-$WORK}/tests/artifacts/rec_killed_ledger-$SEED-$n
    rm -rf "$keep"
    mkdir -p "$keep"
    cp -r "$1" "$1.last" "$1.err" "$ledger.txt" "$keep/" 2>/dev/null || true
    "$MEMSCRIBE" leaks --format=json --top 0 --thread "${L[tids]}" "$1" >"$keep/trace.leaks.json" 2>&1 || true
    "$MEMSCRIBE" leaks --format=json --top 0 --thread "${L[tids]}" "$2" >"$keep/segment.leaks.json" 2>&1 || true
    echo "the call sites whose blocks live at the end differ (trace, segment):"
    jq -rn --slurpfile a "$keep/trace.leaks.json" --slurpfile b "$keep/segment.leaks.json" '
        def rows(x): reduce (x[0].stacks // [])[] as $s ({}; .[$s.stack | join(" < ")] = [$s.leaked_bytes, $s.leaked_blocks]);
        rows($a) as $t | rows($b) as $g
        | ([$t, $g] | map(keys) | add | unique)[] as $k
        | select($t[$k] != $g[$k]) | "  \($t[$k] // [0, 0]) \($g[$k] // [0, 0]) \($k[0:160])"' | head -20
    echo "record said: $(tr '\n' ' ' <"$1.err")"
    fail "$what: the latest segment's bytes and blocks live at the end: got $3, want [${T[leaked_bytes]},${T[leaked_blocks]}] (kept in $keep)"
}

# usage: program_killed MODE_NAME WINDOW OPTIONS...
program_killed() {
    local name=$1 window=$2 trace ledger rc=0
    shift 2
    draw "$window"
    what="$name, program killed at $delay_ms ms"
    trace=$WORK/$n.mscr ledger=$WORK/$n.ledger
    start_case "$trace" "$ledger" "$@"
    sleep_ms "$delay_ms"
    kill -KILL "$prog"
    wait "$rec" || rc=$?
    rec=0 prog=0
    expect_eq "$what: record's exit status" "$rc" 137
    ledger_read "$ledger" || fail "$what: the ledger does not read"
    check_reads "$trace" no
    report_totals "$trace"
    expect_eq "$what: report's incomplete" "${T[incomplete]}" false
    within allocations "${T[allocations]}" "${L[alloc_done]}" "${L[alloc_started]}"
    within frees "${T[frees]}" "${L[free_done]}" "${L[free_started]}"
    within allocated_bytes "${T[allocated_bytes]}" "${L[alloc_size]}" $((L[alloc_size] + L[pending_alloc]))
    within "leaked_bytes (live at the end)" "${T[leaked_bytes]}" $((L[live_size] - L[pending_free])) \
        $((L[live_size] + L[pending_alloc]))
    within leaked_blocks "${T[leaked_blocks]}" $((L[live_blocks] - L[free_flight])) \
        $((L[live_blocks] + L[alloc_flight]))
    segments_read "$trace" live
    echo "ok: $what${T[aggregated]:-}: ${T[allocations]} allocations (ledger ${L[alloc_done]}..${L[alloc_started]})," \
        "${T[frees]} frees (${L[free_done]}..${L[free_started]}), ${T[leaked_bytes]} bytes live at the end"
}

# usage: recorder_killed MODE_NAME WINDOW OPTIONS...
recorder_killed() {
    local name=$1 window=$2 trace ledger rc=0 before='' started
    shift 2
    draw "$window"
    what="$name, recorder killed at $delay_ms ms"
    trace=$WORK/$n.mscr ledger=$WORK/$n.ledger
    start_case "$trace" "$ledger" "$@"
    # For the record: the calls done a second before the kill.
    if [ "$delay_ms" -gt 1000 ]; then
        sleep_ms $((delay_ms - 1000))
        ledger_read "$ledger" || fail "$what: the ledger does not read"
        before=", ${L[alloc_done]} done a second before it"
        sleep 1
    else
        sleep_ms "$delay_ms"
    fi
    kill -KILL "$rec" 2>/dev/null || fail "$what: the recorder ended before it could be killed"
    # Reaped at once: the collector sees its recorder gone only once it is.
    wait "$rec" 2>/dev/null || rc=$?
    rec=0
    expect_eq "$what: the killed recorder's status" "$rc" 137
    # The calls started by now bound the trace's (they only grow).
    ledger_read "$ledger" || fail "$what: the ledger does not read"
    cp "$ledger.txt" "$ledger.kill"
    started=${L[alloc_started]}
    # The program runs on, untraced once it notices its recorder gone.
    for _ in $(seq 1 1000); do
        ledger_read "$ledger" || fail "$what: the ledger does not read"
        [ "${L[alloc_done]}" -le $((started + 10000)) ] || break
        sleep 0.02
    done
    [ "${L[alloc_done]}" -gt $((started + 10000)) ] ||
        fail "$what: the program stopped after its recorder was killed (ledger: $(tr '\n' ' ' <"$ledger.txt"))"
    kill -KILL "$prog"
    wait_gone "$prog"
    prog=0
    cp "$ledger.kill" "$ledger.txt"
    ledger_parse "$ledger.txt"

    check_reads "$trace" yes
    segments_read "$trace"
    report_totals "$trace"
    expect_eq "$what: report's incomplete" "${T[incomplete]}" true
    within allocations "${T[allocations]}" 0 "${L[alloc_started]}"
    within frees "${T[frees]}" 0 "${L[free_started]}"
    within allocated_bytes "${T[allocated_bytes]}" 0 $((L[alloc_size] + L[pending_alloc]))
    if [ "$delay_ms" -ge "$FLUSHED_AFTER_MS" ]; then
        within "allocations (killed after ${FLUSHED_AFTER_MS} ms)" "${T[allocations]}" 1 "${L[alloc_started]}"
        within "frees (killed after ${FLUSHED_AFTER_MS} ms)" "${T[frees]}" 1 "${L[free_started]}"
    fi
    echo "ok: $what${T[aggregated]:-}: ${T[allocations]} of the ${L[alloc_started]} allocations started by the kill$before;" \
        "${T[frees]} frees of ${L[free_started]}"
}

start=$SECONDS
n=0
for mode in "${MODES[@]}"; do
    name=${mode%%|*}
    read -ra opts <<<"${mode#*|}"
    for w in "${PROGRAM_WINDOWS[@]}"; do
        n=$((n + 1))
        program_killed "$name" "$w" "${opts[@]}"
    done
    for w in "${RECORDER_WINDOWS[@]}"; do
        n=$((n + 1))
        recorder_killed "$name" "$w" "${opts[@]}"
    done
done
echo "ok: $n kills in ${#MODES[@]} modes, traces held to the ledger ($((SECONDS - start)) s, seed $SEED)"
