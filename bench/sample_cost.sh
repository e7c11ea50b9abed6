#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What record --sample costs and how near its estimates are (docs/record.md,
# Sampling). Cost in instructions (callgrind, whole traced program, so the
# figures do not depend on the machine's load): untraced, exact and sampled
# at RATE, as added instructions per heap call and as the sampled run's
# instructions over the untraced run's. The recorder, a separate process,
# is not counted: it handles only the events, few when sampling. Then the
# estimates: the workload recorded exact and sampled (seeds 1..SEEDS), and
# for the exact trace's top call sites by allocated bytes (flamegraph
# --folded, sites matched by their function chain) the estimate's error.
#
# usage: bench/sample_cost.sh BENCH_BIN MEMSCRIBE [RATE [SEEDS]] [-- WORKLOAD...]
#   BENCH_BIN  directory with bench_storm, libbench_count.so (bench/run.sh builds
#              them into build-bench/bench-tools)
#   RATE       sampling rate (default 512K)
#   WORKLOAD   storm sqlite (default: both)
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$1" && pwd)
MS=$2
shift 2
RATE=512K
SEEDS=3
if [ $# -gt 0 ] && [ "$1" != -- ]; then RATE=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != -- ]; then SEEDS=$1; shift; fi
[ "${1:-}" = -- ] && shift
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(storm sqlite)
# shellcheck source=bench/tool_args.sh
. "$BENCH_DIR/tool_args.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sample-cost.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

awk -v rows=5000 -f "$BENCH_DIR/gen_sql.awk" >"$WORK/small.sql"
awk -v rows=200000 -f "$BENCH_DIR/gen_sql.awk" >"$WORK/big.sql"
# small: under callgrind (~50x slower); big (bench/run.sh's sizes): for the estimates.
workload() {
    case $1 in
    storm) SMALL=("$BIN/bench_storm" 1 300000) BIG=("$BIN/bench_storm" 1 10000000) ;;
    sqlite) SMALL=(sqlite3 -batch :memory: ".read $WORK/small.sql")
        BIG=(sqlite3 -batch :memory: ".read $WORK/big.sql") ;;
    *) echo "sample_cost.sh: unknown workload $1" >&2; exit 2 ;;
    esac
}
# A callgrind file has its total twice (summary: and totals:): count one.
cg_total() { cat "$1".* | awk '/^summary:/ { s += $2 } END { printf "%.0f\n", s }'; }
# Instructions of the traced command (recorder excluded: it is memscribe itself).
cg_run() { # cg_run OUT [memscribe record options --]
    local out=$1
    shift
    rm -f "$out".*
    if [ $# -eq 0 ]; then
        valgrind --tool=callgrind --callgrind-out-file="$out.%p" "${SMALL[@]}" >/dev/null 2>&1
    else
        "$MS" record -q -o "$WORK/cg.mscr" "$@" valgrind --tool=callgrind \
            --callgrind-out-file="$out.%p" "${SMALL[@]}" >/dev/null 2>&1
    fi
    cg_total "$out"
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg); rate $RATE; $(git -C "$BENCH_DIR" describe --always --dirty 2>/dev/null)"
echo
echo "| workload | heap calls | untraced Ir | exact: added Ir/call | sampled: added Ir/call | sampled / untraced Ir |"
echo "|---|---:|---:|---:|---:|---:|"
for w in "${WORKLOADS[@]}"; do
    workload "$w"
    calls=$(count_calls "$BIN" "$WORK/count" "${SMALL[@]}")
    base=$(cg_run "$WORK/u")
    exact=$(cg_run "$WORK/e" --)
    sampled=$(cg_run "$WORK/s" --sample "$RATE" --)
    awk -v w="$w" -v c="$calls" -v b="$base" -v e="$exact" -v s="$sampled" 'BEGIN {
        printf "| %s | %d | %d | %.1f | %.1f | %.4f |\n", w, c, b, (e - b) / c, (s - b) / c, s / b }'
done

echo
echo "Estimates against the exact trace (bytes allocated; top sites of the exact trace):"
for w in "${WORKLOADS[@]}"; do
    workload "$w"
    "$MS" record -q -o "$WORK/exact.mscr" -- "${BIG[@]}" >/dev/null
    "$MS" flamegraph --folded "$WORK/exact.mscr" 2>/dev/null | sort -t' ' -k2 -rn >"$WORK/exact.folded"
    total=$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$WORK/exact.folded")
    for seed in $(seq 1 "$SEEDS"); do
        MEMSCRIBE_SAMPLE_SEED=$seed "$MS" record -q --sample "$RATE" -o "$WORK/s$seed.mscr" -- "${BIG[@]}" >/dev/null
        "$MS" flamegraph --folded "$WORK/s$seed.mscr" 2>/dev/null >"$WORK/s$seed.folded"
    done
    echo
    echo "$w: $(wc -l <"$WORK/exact.folded") sites, $total bytes allocated (exact)"
    echo "| site (leaf < caller) | share | exact bytes | estimate error per seed 1..$SEEDS |"
    echo "|---|---:|---:|---|"
    # The whole trace first, then the 8 largest sites.
    { echo "(all) $total"; head -n 8 "$WORK/exact.folded"; } | while read -r line; do
        site=${line% *}
        want=${line##* }
        errs=""
        for seed in $(seq 1 "$SEEDS"); do
            got=$(awk -v site="$site" '
                { n = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += n; if (s == site) g += n }
                END { print (site == "(all)") ? t : g + 0 }' "$WORK/s$seed.folded")
            errs="$errs $(awk -v w="$want" -v g="$got" 'BEGIN { printf "%+.1f%%", (g - w) / w * 100 }')"
        done
        leaf=${site##*;}
        caller=${site%;*}
        [ "$caller" = "$site" ] || leaf="${leaf:0:30} < ${caller##*;}"
        awk -v l="${leaf:0:64}" -v w="$want" -v t="$total" -v e="$errs" \
            'BEGIN { printf "| %s | %.1f%% | %.0f |%s |\n", l, w / t * 100, w, e }'
    done
done
