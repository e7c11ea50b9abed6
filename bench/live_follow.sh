#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How soon record --live's page shows what the program did (docs/serve.md,
# "Live"; bench/notes/serve.md, "Following a program"): tests/e2e/
# serve_live.py, the page opened before the program's first allocation in
# headless Chromium, RUNS times in each mode (plain; spinner: a CPU-bound
# process beside it; attach: record -p PID --live), each run four steps of
# the heap; prints each mode's delays from a step to the page showing it:
# median and highest, with the load average. Needs chromium, chromedriver
# and python3-selenium (scripts/setup.sh --test).
#
#   bash bench/live_follow.sh BUILD [RUNS]
#
# BUILD is a build with tests (its bin/memscribe and tests/programs/serve_steps).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in
'' | -h | --help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; [ -n "${1:-}" ]; exit $? ;;
esac
build=$(realpath "$1")
runs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %5s %9s %9s  %s\n' mode steps median_s max_s delays
for mode in plain spinner attach; do
    all=()
    for r in $(seq "$runs"); do
        mkdir -p "$work/$mode-$r"
        out=$(/usr/bin/python3 "$root/tests/e2e/serve_live.py" "$build/bin/memscribe" \
            "$build/tests/programs/serve_steps" "$work/$mode-$r" "$work/$mode-$r/shot.png" "$mode") ||
            { echo "live_follow.sh: $mode run $r failed:" >&2; echo "$out" >&2; exit 1; }
        read -ra d <<<"$(sed -n 's/^delays: //p' <<<"$out")"
        all+=("${d[@]}")
    done
    sorted=$(printf '%s\n' "${all[@]}" | sort -g)
    n=${#all[@]}
    median=$(awk -v n="$n" 'NR == int((n + 1) / 2) { print }' <<<"$sorted")
    printf '%-8s %5d %9s %9s  %s\n' "$mode" "$n" "$median" "$(tail -1 <<<"$sorted")" "${all[*]}"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
