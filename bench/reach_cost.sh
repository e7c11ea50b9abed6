#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The leak scan of record --reach against LeakSanitizer's check of the same
# heap (bench/notes/reach.md, "The leak scan against LeakSanitizer"). bench_reach.c
# is built twice: plain, recorded with memscribe record --reach, whose
# summary says how long its scan took (reading and classing) and how long
# the program was held; and with -fsanitize=leak -DBENCH_LSAN, which times
# LSan's own check (__lsan_do_recoverable_leak_check: stop the world, scan,
# report, symbolize=0) inside the program. As a cross-check, LSan's cost is
# also the wall time of the LSan build with detect_leaks=1 less the same
# with detect_leaks=0. Medians of RUNS runs, alternating; the load average
# before and after.
#
# usage: bench/reach_cost.sh MEMSCRIBE [RUNS [NODES [LISTS [LOST]]]]
#   MEMSCRIBE  the memscribe binary (build/bin/memscribe)
#   RUNS       runs of each (default 5)
#   NODES      32-byte nodes (default 4000000), in LISTS lists (64), LOST lost (8)
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
MS=$1
RUNS=${2:-5}
ARGS=("${3:-4000000}" "${4:-64}" "${5:-8}")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/reach-cost.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

${CC:-gcc} -O2 -g -o "$WORK/plain" "$BENCH_DIR/bench_reach.c"
${CC:-gcc} -O2 -g -fsanitize=leak -DBENCH_LSAN -o "$WORK/lsan" "$BENCH_DIR/bench_reach.c"

now_ns() { date +%s%N; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
scan="" held="" check="" diff=""
for ((i = 0; i < RUNS; i++)); do
    "$MS" record --reach -o "$WORK/t.mscr" -- "$WORK/plain" "${ARGS[@]}" >/dev/null 2>"$WORK/rec.err"
    line=$(grep 'leak classes:' "$WORK/rec.err") || {
        cat "$WORK/rec.err" >&2
        exit 1
    }
    scan+=" $(sed -E 's/.* ([0-9.]+) ms scanning.*/\1/' <<<"$line")"
    held+=" $(sed -E 's/.*program held ([0-9.]+) ms.*/\1/' <<<"$line")"
    ns=$(LSAN_OPTIONS=symbolize=0 "$WORK/lsan" "${ARGS[@]}" 2>/dev/null | sed -n 's/^lsan-check-ns: //p')
    check+=" $(awk -v n="$ns" 'BEGIN { printf "%.1f", n / 1e6 }')"
    t0=$(now_ns)
    LSAN_OPTIONS=symbolize=0:detect_leaks=1 "$WORK/lsan" "${ARGS[@]}" >/dev/null 2>&1
    t1=$(now_ns)
    LSAN_OPTIONS=symbolize=0:detect_leaks=0 "$WORK/lsan" "${ARGS[@]}" >/dev/null 2>&1
    t2=$(now_ns)
    diff+=" $(awk -v a=$((t1 - t0)) -v b=$((t2 - t1)) 'BEGIN { printf "%.1f", (a - b) / 1e6 }')"
done
"$WORK/plain" "${ARGS[@]}" | head -1
echo "load before: $load0; after: $(cut -d' ' -f1-3 /proc/loadavg); runs $RUNS; $(git -C "$BENCH_DIR" describe --always --dirty 2>/dev/null)"
awk -f "$BENCH_DIR/median.awk" -f /dev/stdin <<EOF
BEGIN {
    printf "| | median ms | runs |\n|---|---:|---|\n"
    printf "| memscribe: scan (read, class) | %.1f |%s |\n", median("$scan"), "$scan"
    printf "| memscribe: program held | %.1f |%s |\n", median("$held"), "$held"
    printf "| LSan: check (in the program) | %.1f |%s |\n", median("$check"), "$check"
    printf "| LSan: detect_leaks=1 less =0 (wall) | %.1f |%s |\n", median("$diff"), "$diff"
}
EOF
