#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What each layer of tracing costs one program, from the bottom up, so that
# a wall-time target (issue 12: a real program at <= 1.25x its untraced
# time) can be set against what the layers under the stacks already take:
#   untraced     the command alone
#   interposed   every heap call through a preloaded shim that only counts
#                it (libbench_count.so: the call's detour through another
#                library, what any tracer of this kind pays at least)
#   depth-1      memscribe record --depth 1: hooks, a time, a ring record and
#                the recorder, with a stack of one frame
#   full         memscribe record, stacks at the default depth
# The layers run alternately, -r times each; medians. Per heap call: the
# wall each layer adds over untraced, divided by the calls the shim counted
# (whole process tree). The budget line is what 1.25x untraced allows a
# call.
#
# usage: bench/floor.sh BENCH_BIN MEMSCRIBE [-r N] -- CMD [ARGS...]
#   BENCH_BIN  directory with libbench_count.so (build/bench)
#   MEMSCRIBE  the memscribe binary (finds its collector in ../lib/memscribe)
#   -r N       runs of each layer (default 7)
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
usage="bench/floor.sh BENCH_BIN MEMSCRIBE [-r N] -- CMD [ARGS...]"
[ $# -ge 2 ] || { echo "usage: $usage" >&2; exit 2; }
BIN=$(cd "$1" && pwd)
MEMSCRIBE=$2
shift 2
REPS=7
# shellcheck source=bench/tool_args.sh
. "$BENCH_DIR/tool_args.sh"
tool_args_cmd "$usage" "memscribe=$MEMSCRIBE" "$@"
[ -x "$MEMSCRIBE" ] || { echo "floor.sh: not an executable: $MEMSCRIBE" >&2; exit 2; }
SHIM=$BIN/libbench_count.so
[ -f "$SHIM" ] || { echo "floor.sh: no $SHIM (build the bench first)" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/floor.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# The heap calls, counted once, untimed.
CALLS=$(count_calls "$BIN" "$WORK/count" "${CMD[@]}")
[ "$CALLS" -gt 0 ] || { echo "floor.sh: the shim counted no heap call of ${CMD[0]}" >&2; exit 1; }

layer() {
    case $1 in
    untraced) "${CMD[@]}" ;;
    interposed) BENCH_COUNT_FILE=$WORK/count.run LD_PRELOAD=$SHIM "${CMD[@]}" ;;
    depth-1) "$MEMSCRIBE" record -q --depth 1 -o "$WORK/t.mscr" -- "${CMD[@]}" ;;
    full) "$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "${CMD[@]}" ;;
    esac
}

LAYERS=(untraced interposed depth-1 full)
printf '%s: %d heap calls, %d runs of each layer (load average %s)\n' "${CMD[0]##*/}" "$CALLS" \
    "$REPS" "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((i = 0; i < REPS; i++)); do
    for l in "${LAYERS[@]}"; do
        s=$(now_us)
        layer "$l" >/dev/null
        echo "$l $(($(now_us) - s))"
    done
    printf '.' >&2
done >"$WORK/runs"
echo >&2

awk -v calls="$CALLS" -v reps="$REPS" -f "$BENCH_DIR/median.awk" -f /dev/stdin "$WORK/runs" <<'EOF'
!($1 in wall) { order[++nr] = $1 }
{ wall[$1] = wall[$1] " " $2 }
END {
    base = median(wall["untraced"])
    printf "%-11s %10s %10s %14s  (medians of %d)\n", "", "wall ms", "x untraced", "+ns/heap call", reps
    for (i = 1; i <= nr; i++) {
        m = median(wall[order[i]])
        printf "%-11s %10.1f %10.2f %14.1f\n", order[i], m / 1000, m / base, (m - base) * 1000 / calls
    }
    printf "%-11s %10.1f %10.2f %14.1f  (the budget of 1.25x)\n", "budget", base * 1.25 / 1000, 1.25,
        base * 0.25 * 1000 / calls
}
EOF
