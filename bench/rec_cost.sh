#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The recorder's own cost: CPU time, minor page faults and peak RSS of the
# `memscribe record` process alone (not the traced program), per heap call,
# for memscribe binaries run alternately on the same workloads; medians, and
# for each binary after the first the median of its runs' CPU ratios to the
# first binary's run of the same repetition (paired).
# bench_runner --self reads the recorder's /proc figures at its exit.
#
# usage: bench/rec_cost.sh BENCH_BIN NAME=MEMSCRIBE... [-r N] [-- WORKLOAD...]
#   BENCH_BIN  directory with bench_runner, bench_storm, libbench_count.so
#              (build/bench of the project build)
#   MEMSCRIBE  memscribe binaries to compare, each with a column name
#              (e.g. base=/work/wt/base/build/bin/memscribe new=build/bin/memscribe)
#   -r N       runs of each binary on each workload (default 5), alternating
#   WORKLOAD   storm-1t storm-pool sqlite python (run.sh's, full size; default all)
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$1" && pwd)
shift
REPS=5
# shellcheck source=bench/tool_args.sh
. "$BENCH_DIR/tool_args.sh"
tool_args 1 "bench/rec_cost.sh BENCH_BIN NAME=MEMSCRIBE... [-r N] [-- WORKLOAD...]" "$@"
WORKLOADS=("${REST[@]}")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(storm-1t storm-pool sqlite python)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rec-cost.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export PYTHONMALLOC=malloc

workload() {
    case $1 in
    storm-1t) CMD=("$BIN/bench_storm" 1 10000000) ;;
    storm-pool) CMD=("$BIN/bench_storm" 1 10000000 4096) ;;
    sqlite)
        [ -s "$WORK/sqlite.sql" ] || awk -v rows=200000 -f "$BENCH_DIR/gen_sql.awk" >"$WORK/sqlite.sql"
        CMD=(sqlite3 -batch :memory: ".read $WORK/sqlite.sql")
        ;;
    python) CMD=(/usr/bin/python3 "$BENCH_DIR/json_roundtrip.py" 100000) ;;
    *) echo "rec_cost.sh: unknown workload $1" >&2; exit 2 ;;
    esac
}

# A figure of bench_runner --self (field) of each run in a runs file, in order.
field() { sed -E "s/.*$1=([0-9]+).*/\\1/" "$2"; }
# The recorder's CPU (user + sys, ns) of each run in a runs file, in order.
cpu_of() { paste -d' ' <(field self_user_ns "$1") <(field self_sys_ns "$1") | awk '{ print $1 + $2 }'; }

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) at start"
printf '| workload | heap calls | recorder |'
printf ' ns/ev (user, sys) | minor faults/1k ev | peak RSS MiB | runs | CPU / first, paired |\n'
for w in "${WORKLOADS[@]}"; do
    workload "$w"
    calls=$(count_calls "$BIN" "$WORK/count" "${CMD[@]}")
    for i in "${!TOOLS[@]}"; do : >"$WORK/runs.$i"; done
    for ((rep = 0; rep < REPS; rep++)); do
        for i in "${!TOOLS[@]}"; do
            # Alternate the order from one repetition to the next.
            j=$(((i + rep) % ${#TOOLS[@]}))
            "$BIN/bench_runner" --self --stdout /dev/null -- "${TOOLS[$j]}" record -q \
                -o "$WORK/t.mscr" -- "${CMD[@]}" >>"$WORK/runs.$j"
        done
    done
    for i in "${!TOOLS[@]}"; do
        f=$WORK/runs.$i
        ok=$(grep -c 'self_user_ns=.*status=exit:0' "$f" || true)
        ns=$(cpu_of "$f" | awk -v n="$calls" '{ print $1 / n }' | median)
        us=$(field self_user_ns "$f" | awk -v n="$calls" '{ print $1 / n }' | median)
        sy=$(field self_sys_ns "$f" | awk -v n="$calls" '{ print $1 / n }' | median)
        fl=$(field self_minflt "$f" | awk -v n="$calls" '{ print $1 * 1000 / n }' | median)
        mb=$(field self_hwm_kb "$f" | awk '{ print $1 / 1024 }' | median)
        # The runs of one repetition are seconds apart: the median of their
        # ratios to the first binary's moves less with the host than the
        # ratio of two medians (bench/notes/collector.md, "Paired ratios").
        paired=-
        if [ "$i" -gt 0 ]; then
            paired=$(paste -d' ' <(cpu_of "$WORK/runs.0") <(cpu_of "$f") |
                awk '$1 > 0 { print $2 / $1 }' | median)
            paired=$(printf '%.3f' "$paired")
        fi
        printf '| %s | %s | %s | %.1f (%.1f, %.1f) | %.2f | %.1f | %s/%s | %s |\n' "$w" "$calls" \
            "${NAMES[$i]}" "$ns" "$us" "$sy" "$fl" "$mb" "$ok" "$REPS" "$paired"
    done
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) at end"
