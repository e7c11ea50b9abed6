#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The analysis benchmark: `memscribe report` on the trace of the storm
# workload (10 million malloc/free pairs) against `heaptrack_print` on
# heaptrack's trace of the same run of the same program, measured in one
# run, alternating, with medians of wall time, CPU time and peak RSS. Then
# the cost of a window over a 1-second slice of that (long) trace against a
# window over all of it: seeking must make it proportional to the slice.
# Targets (bench/README.md): memscribe >= 4x faster, no more peak memory.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
SRC_DIR=$(dirname "$BENCH_DIR")
BUILD=$SRC_DIR/build-bench
REPEAT=3
PAIRS=10000000
BUILD_IT=1

usage() {
    cat <<EOF2
usage: bash bench/bench_report.sh [options]
  -r, --repeat N      measurements per tool, medians quoted (default 3)
  -q, --quick         1 million pairs, 1 repeat (a smoke run; figures not comparable)
  -b, --build-dir DIR build directory (default: <source>/build-bench)
      --no-build      use the binaries already in the build directory
  -h, --help          this text
EOF2
}
while [ $# -gt 0 ]; do
    case "$1" in
    -r | --repeat) REPEAT=${2:?}; shift 2 ;;
    -q | --quick) PAIRS=1000000; REPEAT=1; shift ;;
    -b | --build-dir) BUILD=${2:?}; shift 2 ;;
    --no-build) BUILD_IT=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench_report.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "bench_report.sh: --repeat wants a positive integer" >&2; exit 2; }
log() { echo "bench_report: $*" >&2; }
for t in heaptrack heaptrack_print; do
    command -v "$t" >/dev/null || { echo "bench_report.sh: $t is not installed (bash scripts/setup.sh --test)" >&2; exit 1; }
done

if [ "$BUILD_IT" = 1 ]; then
    log "building in $BUILD"
    { cmake -S "$SRC_DIR" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
        cmake --build "$BUILD" -j2 --target memscribe memscribe_collector bench_storm bench_runner; } \
        >"$BUILD.report-build.log" 2>&1 || { cat "$BUILD.report-build.log" >&2; exit 1; }
fi
MEMSCRIBE=$BUILD/bin/memscribe
STORM=$BUILD/bench/bench_storm
RUNNER=$BUILD/bench/bench_runner
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ms-bench-report.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

log "recording storm ($PAIRS pairs) with memscribe and with heaptrack"
"$MEMSCRIBE" record -o "$WORK/storm.mscr" -- "$STORM" 1 "$PAIRS" >/dev/null 2>"$WORK/rec.err" ||
    { cat "$WORK/rec.err" >&2; exit 1; }
heaptrack -o "$WORK/storm.ht" "$STORM" 1 "$PAIRS" >"$WORK/ht.out" 2>&1 || { cat "$WORK/ht.out" >&2; exit 1; }
HT=$(compgen -G "$WORK/storm.ht.*" | head -n 1)

# usage: run TOOL CMD...: one measured run; appends "tool wall cpu rss" to RUNS.
RUNS=$WORK/runs
: >"$RUNS"
run() {
    local tool=$1 line
    shift
    line=$("$RUNNER" --stdout /dev/null --stderr "$WORK/err" -- "$@")
    case $line in *status=exit:0*) ;; *) cat "$WORK/err" >&2; echo "bench_report.sh: $tool failed: $line" >&2; exit 1 ;; esac
    echo "$tool $(echo "$line" | sed -E 's/.*wall_ns=([0-9]+).*cpu_ns=([0-9]+) maxrss_kb=([0-9]+).*/\1 \2 \3/')" >>"$RUNS"
}
trace_end_ns=$("$MEMSCRIBE" timeline --interval 1s --format=json "$WORK/storm.mscr" | sed -n 's/.*"time_ns": \([0-9]*\).*/\1/p' | tail -n 1)
slice_from=$((trace_end_ns / 2))
for ((rep = 1; rep <= REPEAT; rep++)); do
    log "run $rep of $REPEAT"
    if [ $((rep % 2)) = 1 ]; then
        run memscribe "$MEMSCRIBE" report "$WORK/storm.mscr"
        run heaptrack_print heaptrack_print -f "$HT"
    else
        run heaptrack_print heaptrack_print -f "$HT"
        run memscribe "$MEMSCRIBE" report "$WORK/storm.mscr"
    fi
    run window-all "$MEMSCRIBE" window "$WORK/storm.mscr"
    run window-1s "$MEMSCRIBE" window --from "${slice_from}ns" --to "$((slice_from + 1000000000))ns" "$WORK/storm.mscr"
done
read_all=$("$MEMSCRIBE" window --format=json "$WORK/storm.mscr" | sed -n 's/.*"events_read": \([0-9]*\).*/\1/p')
read_1s=$("$MEMSCRIBE" window --format=json --from "${slice_from}ns" --to "$((slice_from + 1000000000))ns" \
    "$WORK/storm.mscr" | sed -n 's/.*"events_read": \([0-9]*\).*/\1/p')

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$BENCH_DIR/results"
OUT=$BENCH_DIR/results/$STAMP.report.txt
{
    echo "memscribe report vs heaptrack_print, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg); memscribe $(git -C "$SRC_DIR" describe --always --dirty 2>/dev/null || echo unknown); $(heaptrack --version 2>&1 | head -n 1)"
    echo "workload: bench_storm 1 $PAIRS; traces: memscribe $(stat -c %s "$WORK/storm.mscr") bytes, heaptrack $(stat -c %s "$HT") bytes; trace spans $((trace_end_ns / 1000000)) ms"
    echo "medians of $REPEAT runs"
    echo
    awk -v read_all="$read_all" -v read_1s="$read_1s" -v end_ns="$trace_end_ns" '
        function median(tool, col,    n, i, j, t, v) {
            n = 0
            for (i = 1; i <= nr; i++) if (name[i] == tool) v[++n] = val[i, col]
            for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return n ? v[int((n + 1) / 2)] : 0
        }
        { nr++; name[nr] = $1; val[nr, 1] = $2; val[nr, 2] = $3; val[nr, 3] = $4 }
        END {
            printf "%-18s %10s %10s %12s\n", "tool", "wall s", "cpu s", "peak RSS MiB"
            split("memscribe heaptrack_print window-all window-1s", tools, " ")
            for (k = 1; k <= 4; k++)
                printf "%-18s %10.3f %10.3f %12.1f\n", tools[k], median(tools[k], 1) / 1e9,
                    median(tools[k], 2) / 1e9, median(tools[k], 3) / 1024
            mw = median("memscribe", 1); hw = median("heaptrack_print", 1)
            mc = median("memscribe", 2); hc = median("heaptrack_print", 2)
            mr = median("memscribe", 3); hr = median("heaptrack_print", 3)
            printf "\nspeed-up (wall): %.2fx, (cpu): %.2fx; target >= 4x: %s\n", hw / mw, hc / mc,
                (hw / mw >= 4 ? "met" : "NOT met")
            printf "peak RSS: memscribe %.1f MiB, heaptrack_print %.1f MiB; target no more: %s\n",
                mr / 1024, hr / 1024, (mr <= hr ? "met" : "NOT met")
            printf "1 s window of a %.1f s trace: %.1f%% of the events read, %.1f%% of the time of a whole-trace window (cpu)\n",
                end_ns / 1e9, 100 * read_1s / read_all, 100 * median("window-1s", 2) / median("window-all", 2)
        }' "$RUNS"
} | tee "$OUT"
log "written to $OUT"
