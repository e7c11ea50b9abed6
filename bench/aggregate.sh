#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --aggregate against an exact recording of bench_storm (bench/notes/aggregate.md,
# "Aggregated traces"; docs/aggregate.md): the trace's size, and the CPU time of
# the recorder and the program together (user + sys of `memscribe record`, whose
# children are the traced tree) per heap call, as medians of RUNS runs of each mode
# in turns, and the aggregated figures over the exact ones. Each run waits for a
# load average under MAX_LOAD (the machine is shared) and prints /proc/loadavg
# with its figures. A mode's trace is removed after its run (an exact trace of a
# billion calls takes ~600 MB).
#
# usage: bench/aggregate.sh MEMSCRIBE BENCH_STORM [PAIRS [RUNS [THREADS [PERIOD]]]]
#   MEMSCRIBE    the memscribe binary (build/bin/memscribe)
#   BENCH_STORM  bench_storm (build/bench/bench_storm)
#   PAIRS        malloc/free pairs (default 25000000: 50 M heap calls)
#   RUNS         runs of each mode (default 5)
#   THREADS      bench_storm's threads (default 4)
#   PERIOD       --aggregate's period (default 1s)
# environment: MODES="exact aggregate" (default both; "aggregate" alone for the
#   billion-call run), POOL (bench_storm's third argument: each thread keeps
#   POOL blocks live and frees one at random), MAX_LOAD (1.5), MAX_WAIT seconds
#   to wait for it (1800; then the run goes ahead and its line says so), TMPDIR
#   for the traces.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
MS=$1
STORM=$2
PAIRS=${3:-25000000}
RUNS=${4:-5}
THREADS=${5:-4}
PERIOD=${6:-1s}
read -r -a MODES <<<"${MODES:-exact aggregate}"
POOL_ARG=()
[ -n "${POOL:-}" ] && POOL_ARG=("$POOL")
MAX_LOAD=${MAX_LOAD:-1.5}
MAX_WAIT=${MAX_WAIT:-1800}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/aggregate-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

load1() { cut -d' ' -f1 /proc/loadavg; }
# Wait until the 1-minute load is under MAX_LOAD (at most MAX_WAIT s); "waited"
# or "busy" (it never was) for the run's line.
wait_quiet() {
    local t=0
    while awk -v l="$(load1)" -v m="$MAX_LOAD" 'BEGIN { exit !(l >= m) }'; do
        if [ "$t" -ge "$MAX_WAIT" ]; then
            quiet=busy
            return
        fi
        sleep 10
        t=$((t + 10))
    done
    quiet=quiet
}

declare -A size cpu wall
for m in "${MODES[@]}"; do size[$m]="" cpu[$m]="" wall[$m]=""; done
printf '| run | mode | heap calls | trace bytes | bytes/call | CPU s | CPU ns/call | wall s | loadavg before | after |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|---|---|\n'
for ((i = 1; i <= RUNS; i++)); do
    for m in "${MODES[@]}"; do
        opt=()
        [ "$m" = aggregate ] && opt=(--aggregate="$PERIOD")
        wait_quiet
        before=$(cut -d' ' -f1-3 /proc/loadavg)
        /usr/bin/time -f '%U %S %e' -o "$WORK/time" \
            "$MS" record -q "${opt[@]}" -o "$WORK/t.mscr" -- "$STORM" "$THREADS" "$PAIRS" \
            "${POOL_ARG[@]}" >"$WORK/out"
        after=$(cut -d' ' -f1-3 /proc/loadavg)
        calls=$(sed -n 's/^bench-events: //p' "$WORK/out")
        bytes=$(stat -c %s "$WORK/t.mscr")
        rm -f "$WORK/t.mscr"
        read -r u s w <"$WORK/time"
        c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
        ns=$(awk -v c="$c" -v n="$calls" 'BEGIN { printf "%.2f", c * 1e9 / n }')
        size[$m]+=" $bytes" cpu[$m]+=" $ns" wall[$m]+=" $w"
        printf '| %d | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s |\n' "$i" "$m" "$calls" \
            "$bytes" "$(awk -v b="$bytes" -v n="$calls" 'BEGIN { printf "%.6f", b / n }')" "$c" "$ns" \
            "$w" "$before" "$quiet" "$after"
    done
done
echo
echo "bench_storm $THREADS threads, $PAIRS pairs${POOL:+, pool $POOL}; --aggregate=$PERIOD; $RUNS runs; $(git -C "$BENCH_DIR" describe --always --dirty 2>/dev/null)"
awk -f "$BENCH_DIR/median.awk" -f /dev/stdin <<EOF
BEGIN {
    printf "| mode | median trace bytes | median CPU ns/call | median wall s |\n|---|---:|---:|---:|\n"
    split("${MODES[*]}", m, " ")
    s["exact"] = "${size[exact]:-}"; c["exact"] = "${cpu[exact]:-}"; w["exact"] = "${wall[exact]:-}"
    s["aggregate"] = "${size[aggregate]:-}"; c["aggregate"] = "${cpu[aggregate]:-}"
    w["aggregate"] = "${wall[aggregate]:-}"
    for (i = 1; i in m; i++)
        printf "| %s | %d | %.2f | %.2f |\n", m[i], median(s[m[i]]), median(c[m[i]]), median(w[m[i]])
    if (s["exact"] != "" && s["aggregate"] != "")
        printf "| aggregate / exact | %.6f | %.3f | %.3f |\n", median(s["aggregate"]) / median(s["exact"]),
            median(c["aggregate"]) / median(c["exact"]), median(w["aggregate"]) / median(w["exact"])
}
EOF
