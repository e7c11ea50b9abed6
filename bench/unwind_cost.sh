#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where the collector's time goes, in instructions (callgrind, so the
# figures do not depend on the machine's load): for each workload, the
# instructions memscribe adds per heap call (traced minus untraced, whole
# process tree), the part spent in the unwinder (col_unwind_backtrace, or
# libunwind's unw_backtrace in builds before it) and in interning the
# stacks it walked (col_stack_finish_walk, where the build has it), and how
# many outer frames consecutive allocations of one thread share
# (bench/stack_share.sh).
# Workloads are small (callgrind runs programs ~50x slower).
#
# usage: bench/unwind_cost.sh BENCH_BIN NAME=MEMSCRIBE... [-- WORKLOAD...]
#   BENCH_BIN  directory with bench_storm, bench_deep, libbench_count.so
#   MEMSCRIBE  memscribe binaries to compare, each with a column name
#              (e.g. before=old/bin/memscribe after=build/bin/memscribe)
#   WORKLOAD   storm deep sqlite cc1 python (default: all)
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$1" && pwd)
shift
# shellcheck source=bench/tool_args.sh
. "$BENCH_DIR/tool_args.sh"
tool_args 0 "bench/unwind_cost.sh BENCH_BIN NAME=MEMSCRIBE... [-- WORKLOAD...]" "$@"
WORKLOADS=("${REST[@]}")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(storm deep sqlite cc1 python)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/unwind-cost.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

awk -v rows=5000 -f "$BENCH_DIR/gen_sql.awk" >"$WORK/script.sql"
# libpng-dev's example, 2,158 lines plus png.h and zlib.h: a C file of real size.
PNGTEST_C=/usr/share/doc/libpng-dev/examples/pngtest.c
workload() {
    case $1 in
    storm) CMD=("$BIN/bench_storm" 1 200000) ;;
    deep) CMD=("$BIN/bench_deep" 200 300) ;;
    sqlite) CMD=(sqlite3 -batch :memory: ".read $WORK/script.sql") ;;
    cc1) CMD=(gcc -O2 -c "$PNGTEST_C" -o "$WORK/pngtest.o") ;;
    python) CMD=(env PYTHONMALLOC=malloc /usr/bin/python3 "$BENCH_DIR/json_roundtrip.py" 20000) ;;
    *) echo "unwind_cost.sh: unknown workload $1" >&2; exit 2 ;;
    esac
}

# Instructions of every callgrind output in $1 (files $1.*), and of the
# functions whose name matches $2 (inclusive: every cost line inside their
# fn= blocks, their own and their calls'; callgrind_annotate's inclusive
# list stops where its running total passes 100 % and left some out).
# Each callgrind file states its total twice (summary: and totals:); count it once.
cg_total() { cat "$1".* | awk '/^totals:/ { s += $2 } END { printf "%.0f\n", s }'; }
cg_incl() {
    local f sum=0 n
    for f in "$1".*; do
        n=$(awk -v pat="$2" '
            /^fn=/ {
                id = $0; sub(/^fn=/, "", id); name = id; sub(/\).*/, ")", id)
                if (name ~ /^\([0-9]+\) /) { sub(/^\([0-9]+\) /, "", name); names[id] = name }
                in_fn = (names[id] ~ pat); next
            }
            /^cfn=\([0-9]+\) / {
                id = $0; sub(/^cfn=/, "", id); name = id; sub(/\).*/, ")", id)
                sub(/^\([0-9]+\) /, "", name); names[id] = name; next
            }
            /^[a-z]+=/ { next }
            in_fn && /^[0-9+*-]/ { s += $2 }
            END { printf "%.0f\n", s }' "$f")
        sum=$((sum + ${n:-0}))
    done
    echo "$sum"
}
cg() { valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$1.%p" "${@:2}" >/dev/null 2>&1; }

printf '| workload | heap calls | allocation stacks: depth, shared outer frames |'
for t in "${NAMES[@]}"; do printf ' %s: added Ir/call (unwinder + interning) |' "$t"; done
printf '\n'
for w in "${WORKLOADS[@]}"; do
    workload "$w"
    calls=$(count_calls "$BIN" "$WORK/count" "${CMD[@]}")
    "${TOOLS[-1]}" record -q -o "$WORK/share.mscr" -- "${CMD[@]}" >/dev/null
    share=$(bash "$BENCH_DIR/stack_share.sh" "$WORK/share.mscr" "${TOOLS[-1]}" |
        sed -E 's/^[0-9]+ allocations, mean //; s/, same stack.*//')
    rm -f "$WORK"/u.*
    cg "$WORK/u" "${CMD[@]}"
    base=$(cg_total "$WORK/u")
    printf '| %s | %s | %s |' "$w" "$calls" "$share"
    for t in "${TOOLS[@]}"; do
        rm -f "$WORK"/t.* "$WORK"/trace.mscr
        "$t" record -q -o "$WORK/trace.mscr" -- valgrind --tool=callgrind --trace-children=yes \
            --callgrind-out-file="$WORK/t.%p" "${CMD[@]}" >/dev/null 2>&1
        total=$(cg_total "$WORK/t")
        unw=$(cg_incl "$WORK/t" '^(col_unwind_backtrace|unw_backtrace|backtrace)$')
        intern=$(cg_incl "$WORK/t" '^col_stack_finish_walk$')
        printf ' %d (%d + %d) |' $(((total - base) / calls)) $((unw / calls)) $((intern / calls))
    done
    printf '\n'
done
