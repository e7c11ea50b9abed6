#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --snapshot-every T -o DIR (docs/record.md, Snapshots): while the
# program runs, pprof profiles of the heap in use and allocated so far
# appear in DIR beside the trace, each read by `go tool pprof` (a strict
# profile.proto reader). tests/programs/col_phases.c pauses 4 s after each
# of its first two phases: in use 1 MiB in 16 blocks (1 MiB allocated),
# then 2.5 MiB in 16 blocks (3 MiB allocated). A snapshot taken in a pause
# gives those exactly; one taken as a phase runs may fall between. Each
# export (0.2 s of CPU for this trace) took over 2 s of wall time on this
# machine under load, hence pauses of 4 s. With
# --sample 1K the same (its blocks of 64 KiB and more are each sampled
# with probability 1), and the profile's comment says it is sampled.
source "$(dirname "$0")/record_lib.sh"
command -v go >/dev/null || fail "go not installed (scripts/setup.sh --test)"
export HOME=$WORK GOCACHE=$WORK/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local

# "Total samples" of one sample type of a profile (-unit=B: bytes as they are).
total() { # profile sample-type
    go tool pprof -top -unit=B -sample_index="$2" "$1" >"$WORK/pp.out" 2>"$WORK/pp.err" ||
        fail "go tool pprof failed on $1: $(cat "$WORK/pp.err")"
    sed -n 's/.*Total samples = \([0-9]*\)B* *$/\1/p' "$WORK/pp.out"
}

for mode in exact sampled; do
    D=$WORK/$mode
    args=()
    [ "$mode" = sampled ] && args=(--sample 1K)
    "$MEMSCRIBE" record -q "${args[@]}" --snapshot-every 250ms -o "$D" -- "$MS_PROGRAMS/col_phases" 4000 \
        2>"$WORK/err" || fail "$mode: record exited with $?: $(cat "$WORK/err")"
    [ ! -s "$WORK/err" ] || fail "$mode: record said: $(cat "$WORK/err")"
    # The trace is whole, and the same as without snapshots.
    "$MEMSCRIBE" report --format=json "$D/trace.mscr" 2>/dev/null |
        jq -e '.incomplete == false and .processes[0].allocations == 28 and .processes[0].leaked_bytes == 2097152' >/dev/null ||
        fail "$mode: $D/trace.mscr is not the whole trace"
    # Only the trace and whole profiles (a .part is renamed when complete).
    other=$(find "$D" -mindepth 1 ! -name trace.mscr ! -name 'heap.[0-9][0-9][0-9][0-9].pb.gz')
    [ -z "$other" ] || fail "$mode: other files in $D: $other"
    n=$(find "$D" -name 'heap.*.pb.gz' | wc -l)
    [ "$n" -ge 2 ] || fail "$mode: $n snapshots in $D"
    : >"$WORK/$mode.seen"
    for f in "$D"/heap.*.pb.gz; do
        echo "$(total "$f" inuse_space) $(total "$f" inuse_objects) $(total "$f" alloc_space)" >>"$WORK/$mode.seen"
        if [ "$mode" = sampled ]; then
            go tool pprof -comments "$f" 2>/dev/null |
                grep -q "memscribe: sampled trace (record --sample 1024): figures are estimates" ||
                fail "$f: no sampling comment: $(go tool pprof -comments "$f" 2>&1)"
        else
            grep -q "sampled" <(go tool pprof -comments "$f" 2>/dev/null) && fail "$f: an exact trace's profile says sampled"
        fi
    done
    # One snapshot in each pause at least: in use, objects in use, allocated.
    grep -qx "1048576 16 1048576" "$WORK/$mode.seen" || fail "$mode: no snapshot of phase 1: $(cat "$WORK/$mode.seen")"
    grep -qx "2621440 16 3145728" "$WORK/$mode.seen" || fail "$mode: no snapshot of phase 2: $(cat "$WORK/$mode.seen")"
    echo "$mode: $n snapshots: $(tr '\n' ',' <"$WORK/$mode.seen")"
done

# Usage errors: no -o, a period that is not a time (a bare number is
# seconds, as for every option that takes a time: util_duration.h).
set +e
"$MEMSCRIBE" record --snapshot-every 1s -- true 2>"$WORK/err"
rc=$?
[ "$rc" = 2 ] && grep -q "snapshot-every wants -o DIR" "$WORK/err" || fail "no -o: exit $rc: $(cat "$WORK/err")"
"$MEMSCRIBE" record --snapshot-every 10parsecs -o "$WORK/x" -- true 2>"$WORK/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "wants a time such as 500ms" "$WORK/err" || fail "--snapshot-every 10parsecs: exit $rc"
echo "ok: snapshots while the program runs, exact and sampled"
