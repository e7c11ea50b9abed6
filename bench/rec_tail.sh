#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What `memscribe record` adds outside the traced program's own life: its
# start (before the program runs) and its tail (after the program's last
# process ends: draining, the last chunk, the stacks, the index), for
# memscribe binaries run alternately on one command; medians. On a short
# program (cc1 on one file, a test) these are a share of the run that the
# per-event costs of run.sh do not show.
#
# usage: bench/rec_tail.sh NAME=MEMSCRIBE... [-r N] -- CMD [ARGS...]
#   MEMSCRIBE  memscribe binaries to compare, each with a column name (each
#              finds its own collector, <its dir>/../lib/memscribe)
#   -r N       runs of each binary (default 7), alternating
# For each run: record's wall time, the program's own (from its first
# process's start to its last one's exit, as the trace has them: `memscribe
# report`'s "run time", of all processes when there are more) and the
# difference. The untraced command is timed the same number of times,
# alternating with the others, as the yardstick. "x untraced" is the ratio
# of the medians; "paired" the median of each run's ratio to the untraced
# run of its own round, which a host whose speed drifts from one minute to
# the next (a shared virtual machine: +-40 % seen) moves far less.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
REPS=7
# shellcheck source=bench/tool_args.sh
. "$BENCH_DIR/tool_args.sh"
tool_args_cmd "bench/rec_tail.sh NAME=MEMSCRIBE... [-r N] -- CMD [ARGS...]" "$@"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rec-tail.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

for ((i = 0; i < REPS; i++)); do
    s=$(now_us)
    "${CMD[@]}" >/dev/null
    echo "untraced $(($(now_us) - s)) $(($(now_us) - s)) $i"
    for k in "${!TOOLS[@]}"; do
        s=$(now_us)
        "${TOOLS[$k]}" record -q -o "$WORK/t.mscr" -- "${CMD[@]}" >/dev/null
        wall=$(($(now_us) - s))
        # the program's run time, in us: its process's, or from the first
        # process's start to the last one's end when there are more (env
        # exec'ing python3: "all processes"); the whole report read (no SIGPIPE)
        own=$("${TOOLS[$k]}" report "$WORK/t.mscr" |
            awk '/^all processes$/ { all = 1 }
                 /^  run time:/ && (!seen || all) { sub(/s$/, "", $3); t = $3; seen = 1; if (all) all = 0 }
                 END { if (seen) printf "%d", t * 1000000 }')
        [ -n "$own" ] || { echo "rec_tail.sh: no run time in ${NAMES[$k]}'s report" >&2; exit 1; }
        echo "${NAMES[$k]} $wall $own $i"
    done
done >"$WORK/runs"

awk -v reps="$REPS" -f "$BENCH_DIR/median.awk" -f /dev/stdin "$WORK/runs" <<'EOF'
!($1 in wall) { order[++nr] = $1 }
{ wall[$1] = wall[$1] " " $2; own[$1] = own[$1] " " $3; out[$1] = out[$1] " " ($2 - $3) }
$1 == "untraced" { round[$4] = $2 }
$1 != "untraced" { ratio[$1] = ratio[$1] " " ($2 / round[$4]) }
END {
    base = median(wall["untraced"])
    printf "%-10s %10s %10s %12s %10s %8s  (medians of %d, ms)\n", "", "wall", "program", "outside it", "x untraced", "paired", reps
    for (i = 1; i <= nr; i++) {
        k = order[i]
        if (k == "untraced")
            printf "%-10s %10.1f %10s %12s %10s %8s\n", k, base / 1000, "-", "-", "1.00", "1.00"
        else
            printf "%-10s %10.1f %10.1f %12.1f %10.2f %8.2f\n", k, median(wall[k]) / 1000,
                median(own[k]) / 1000, median(out[k]) / 1000, median(wall[k]) / base, median(ratio[k])
    }
}
EOF
