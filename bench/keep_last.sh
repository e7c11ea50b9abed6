#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --keep-last on a long run of a service-like workload (bench_service:
# requests allocating and freeing, a bounded cache, a slow leak from
# leak_session_token), bench/notes/aggregate.md "The flight recorder"; docs/aggregate.md,
# "Flight recorder". Samples every STEP seconds the bytes of the aggregated trace
# and of its segments folder (TRACE.last/), and at the end checks that the slow
# leak's site is at the top of `leaks` on the trace and on the latest segment.
# Prints the samples (seconds, trace bytes, segments bytes, segments) and the
# largest, with /proc/loadavg at the start and the end.
#
# usage: bench/keep_last.sh MEMSCRIBE BENCH_SERVICE [SECONDS [KEEP [THREADS [RATE]]]]
#   SECONDS  the run (default 3600)     KEEP  --keep-last's D (default 5m)
#   THREADS  bench_service's workers (2) RATE requests a second per worker (5000)
# environment: STEP (60), PERIOD (--aggregate's, default 1s), TMPDIR for the trace.
set -euo pipefail
MS=$1
SVC=$2
SECONDS_RUN=${3:-3600}
KEEP=${4:-5m}
THREADS=${5:-2}
RATE=${6:-5000}
STEP=${STEP:-60}
PERIOD=${PERIOD:-1s}
dir=$(mktemp -d "${TMPDIR:-/tmp}/keep_last.XXXXXX")
trace=$dir/svc.mscr
echo "# bench/keep_last.sh: ${SECONDS_RUN}s of bench_service $THREADS x $RATE/s, --keep-last $KEEP --aggregate=$PERIOD"
echo "# load at start: $(cat /proc/loadavg)"
"$MS" record -q --keep-last "$KEEP" --aggregate="$PERIOD" -o "$trace" -- \
    "$SVC" "$SECONDS_RUN" "$THREADS" "$RATE" >"$dir/svc.out" &
rec=$!
start=$(date +%s)
max_trace=0 max_segs=0 max_total=0
echo "# seconds trace_bytes segments_bytes segments"
while kill -0 "$rec" 2>/dev/null; do
    sleep "$STEP"
    t=$(($(date +%s) - start))
    tb=$(stat -c %s "$trace" 2>/dev/null || echo 0)
    sb=$(find "$trace.last" -name 'seg-*.mscr' -printf '%s\n' 2>/dev/null | awk '{s += $1} END {print s + 0}')
    ns=$(find "$trace.last" -name 'seg-*.mscr' 2>/dev/null | wc -l)
    echo "$t $tb $sb $ns"
    ((tb > max_trace)) && max_trace=$tb
    ((sb > max_segs)) && max_segs=$sb
    ((tb + sb > max_total)) && max_total=$((tb + sb))
done
wait "$rec"
echo "# load at end: $(cat /proc/loadavg)"
cat "$dir/svc.out"
echo "# largest: trace $max_trace bytes, segments $max_segs bytes, together $max_total bytes"
echo "# final: trace $(stat -c %s "$trace") bytes; segments: $(find "$trace.last" -name 'seg-*.mscr' -printf '%f ' | tr ' ' '\n' | sort | tr '\n' ' ')"
last=$(find "$trace.last" -name 'seg-*.mscr' | sort | tail -1)
for t in "$trace" "$last"; do
    "$MS" leaks "$t" >"$dir/leaks.txt" 2>/dev/null
    top=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9]+ +/ {print; exit}' "$dir/leaks.txt")
    echo "# top of leaks on $(basename "$t"): $top"
    case $top in
    *leak_session_token*) ;;
    *) echo "keep_last.sh: the slow leak is not at the top of leaks on $t" >&2; exit 1 ;;
    esac
done
echo "# traces kept in $dir"
