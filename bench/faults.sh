#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Page faults of `memscribe record`, split between the recorder and the
# traced program's processes, for memscribe binaries run alternately on one
# command; medians, with the untraced program's own as the yardstick. On a
# virtual machine where a fault costs 10-20 us (bench/notes/collector.md,
# "Where the stacks' cost is" and "Huge pages for the stack tables") a few thousand faults are a visible share of a short program's
# time; this says whose they are.
#
# usage: bench/faults.sh NAME=MEMSCRIBE... [-r N] -- CMD [ARGS...]
#   MEMSCRIBE  memscribe binaries to compare, each with a column name
#   -r N       runs of each binary (default 3), alternating
# Needs perf (software event page-faults: no hardware counters). Counted
# by thread (`perf report --sort pid`; `--comm` would mix a forked child's
# samples with its parent's): the recorder's threads, named memscribe, and
# the rest, the program's.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
REPS=3
# shellcheck source=bench/tool_args.sh
. "$BENCH_DIR/tool_args.sh"
tool_args_cmd "bench/faults.sh NAME=MEMSCRIBE... [-r N] -- CMD [ARGS...]" "$@"
command -v perf >/dev/null || { echo "faults.sh: perf is not installed" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/faults.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Faults per thread of one perf.data: "PID:COMM COUNT" lines. The
# recorder's threads are named memscribe; a forked child keeps the name only
# until it execs, and perf names each thread by its last comm.
per_thread() {
    perf report -i "$1" --no-children --sort pid --stdio -n -g none 2>/dev/null |
        awk '$1 ~ /%$/ { print $3, $2 }'
}

for ((i = 0; i < REPS; i++)); do
    perf record -q -e page-faults -c 1 -o "$WORK/perf.data" -- "${CMD[@]}" >/dev/null 2>&1
    echo "untraced 0 $(per_thread "$WORK/perf.data" | awk '{ n += $2 } END { print n + 0 }')"
    for k in "${!TOOLS[@]}"; do
        perf record -q -e page-faults -c 1 -o "$WORK/perf.data" -- \
            "${TOOLS[$k]}" record -q -o "$WORK/t.mscr" -- "${CMD[@]}" >/dev/null 2>&1
        per_thread "$WORK/perf.data" |
            awk -v name="${NAMES[$k]}" '$1 ~ /:memscribe$/ { rec += $2; next } { prog += $2 }
                END { print name, rec + 0, prog + 0 }'
    done
done >"$WORK/runs"

awk -v reps="$REPS" -f "$BENCH_DIR/median.awk" -f /dev/stdin "$WORK/runs" <<'EOF'
!($1 in rec) { order[++nr] = $1 }
{ rec[$1] = rec[$1] " " $2; prog[$1] = prog[$1] " " $3 }
END {
    base = median(prog["untraced"])
    printf "%-10s %10s %10s %14s  (page faults, medians of %d)\n", "", "recorder", "program", "program added", reps
    for (i = 1; i <= nr; i++) {
        k = order[i]
        if (k == "untraced")
            printf "%-10s %10s %10d %14s\n", k, "-", base, "-"
        else
            printf "%-10s %10d %10d %14d\n", k, median(rec[k]), median(prog[k]), median(prog[k]) - base
    }
}
EOF
