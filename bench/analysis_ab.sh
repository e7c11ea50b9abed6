#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The analysis commands of two memscribe binaries on the same traces, run
# alternately (base, new, base, new, ...) so that the machine's load falls on
# both alike: median CPU seconds (user + system) and peak RSS of each command,
# and new / base. For changes that must not slow the analysis down (a move,
# a split, one pass shared by several outputs).
#
#   bash bench/analysis_ab.sh [-r N] [-c LABEL,...] BASE_MEMSCRIBE NEW_MEMSCRIBE TRACE...
#
# -c runs only the commands so labelled (a second look at a few with more
# pairs); each ratio's pairs' own ratios give its spread: the lowest and
# highest of them.
#
# Both binaries must read every TRACE (record them with the older one).
set -euo pipefail

usage() { sed -n '9,15p' "$0" | sed 's/^# \{0,1\}//'; }
case ${1:-} in
-h | --help) usage; exit 0 ;;
esac
REPEAT=5
ONLY=''
while [ "${1:-}" = -r ] || [ "${1:-}" = -c ]; do
    case $1 in
    -r) REPEAT=${2:?} ;;
    -c) ONLY=,${2:?}, ;;
    esac
    shift 2
done
[ $# -ge 3 ] || { usage >&2; exit 2; }
base=$(realpath "$1")
new=$(realpath "$2")
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One line per command: a label and its arguments (@T the trace, @O an
# output file).
COMMANDS=(
    "report|report @T"
    "leaks|leaks @T"
    "window|window --tree @T"
    "timeline|timeline @T"
    "vmem|vmem @T"
    "frag|frag @T"
    "html|html @T -o @O"
    "export-heaptrack|export --to heaptrack @T -o @O"
    "export-massif|export --to massif @T -o @O"
)

# measure BINARY ARGS...: "cpu_seconds peak_kib" of one run.
measure() {
    /usr/bin/time -f '%U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
        { echo "analysis_ab.sh: $* failed: $(cat "$work/err")" >&2; exit 1; }
    awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$work/time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-14s %-18s %9s %9s %7s %11s %10s %10s\n' trace command base_cpu new_cpu ratio pair_spread base_kib new_kib
for trace in "$@"; do
    t=$(basename "$trace" .mscr)
    for c in "${COMMANDS[@]}"; do
        label=${c%%|*}
        [ -z "$ONLY" ] || [[ $ONLY == *",$label,"* ]] || continue
        args=${c#*|}
        args=${args//@T/$trace}
        args=${args//@O/$work/out}
        : >"$work/base"
        : >"$work/new"
        for _ in $(seq "$REPEAT"); do
            # shellcheck disable=SC2086 # the arguments are split on purpose
            measure "$base" $args >>"$work/base"
            # shellcheck disable=SC2086
            measure "$new" $args >>"$work/new"
        done
        bc=$(cut -d' ' -f1 "$work/base" | median)
        nc=$(cut -d' ' -f1 "$work/new" | median)
        bm=$(cut -d' ' -f2 "$work/base" | median)
        nm=$(cut -d' ' -f2 "$work/new" | median)
        spread=$(paste -d' ' "$work/base" "$work/new" |
            awk '$1 > 0 { r = $3 / $1; if (!n++ || r < lo) lo = r; if (r > hi) hi = r }
                 END { if (n) printf "%.2f-%.2f", lo, hi; else print "-" }')
        awk -v t="$t" -v l="$label" -v bc="$bc" -v nc="$nc" -v bm="$bm" -v nm="$nm" -v sp="$spread" 'BEGIN {
            printf "%-14s %-18s %9.3f %9.3f %7.2f %11s %10d %10d\n", t, l, bc, nc, (bc > 0 ? nc / bc : 1), sp, bm, nm }'
    done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
