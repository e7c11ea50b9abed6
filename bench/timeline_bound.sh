#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A bounded timeline of a large trace and of one being written
# (docs/timeline.md, "From the chunks' totals"; docs/planner.md): the live
# page's question, a timeline at 1 ns with at most 1,000 points, asked of
# bench_storm's trace recorded with --totals, finished and while it is
# written. From the totals (--index: rows at chunk ends) and, once, by
# replay (the route it took before the totals answered an interval), each
# with its time, the most rows of a process and the load average.
#
# usage: bench/timeline_bound.sh MEMSCRIBE BENCH_STORM [PAIRS [RUNS]]
#   PAIRS  bench_storm's malloc/free pairs on one thread (default 100000000:
#          200 M events)
#   RUNS   queries of the finished trace, the median kept (default 5)
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
MS=$1
STORM=$2
PAIRS=${3:-100000000}
RUNS=${4:-5}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/timeline-bound.XXXXXX")
REC=""
trap '[ -z "$REC" ] || kill "$REC" 2>/dev/null; rm -rf "$WORK"' EXIT
ASK=(timeline --format=json --interval 1ns --max-points 1000)

# usage: ask FILE ARGS...: "SECONDS ROWS" of one query, ROWS the most of a process
ask() {
    local f=$1 s e rows
    shift
    s=$(date +%s%N)
    "$MS" "${ASK[@]}" "$@" "$f" >"$WORK/q.json" 2>/dev/null || { echo "failed -"; return; }
    e=$(date +%s%N)
    rows=$(jq '[.processes[].rows | length] | max // 0' "$WORK/q.json")
    echo "$(((e - s) / 1000000)) $rows"
}

echo "bench_storm 1 $PAIRS, record --totals; $(git -C "$BENCH_DIR" describe --always --dirty 2>/dev/null)"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
s=$(date +%s%N)
"$MS" record -q --totals -o "$WORK/storm.mscr" -- "$STORM" 1 "$PAIRS" >/dev/null
echo "recorded in $((($(date +%s%N) - s) / 1000000)) ms: $(stat -c %s "$WORK/storm.mscr") bytes"

times=""
for ((i = 0; i < RUNS; i++)); do
    read -r ms rows < <(ask "$WORK/storm.mscr" --index)
    times="$times $ms"
done
med=$(awk -v L="$times" -f "$BENCH_DIR/median.awk" -f /dev/stdin <<<'END { print median(L) }')
echo "finished, from the totals: median $med ms of $RUNS ($times ms), $rows rows"
read -r ms rows < <(ask "$WORK/storm.mscr")
echo "finished, by replay: $ms ms, $rows rows"

# The same question of the trace while it is written, once a second.
"$MS" record -q --totals -o "$WORK/growing.mscr" -- "$STORM" 1 "$PAIRS" >/dev/null &
REC=$!
most=0
while kill -0 "$REC" 2>/dev/null; do
    sleep 1
    [ -s "$WORK/growing.mscr" ] || continue
    read -r ms rows < <(ask "$WORK/growing.mscr" --index)
    [ "$ms" = failed ] && continue
    echo "growing, $(stat -c %s "$WORK/growing.mscr") bytes, from the totals: $ms ms, $rows rows"
    [ "$ms" -gt "$most" ] && most=$ms
done
wait "$REC" || true
REC=""
echo "growing: the slowest answer $most ms"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
