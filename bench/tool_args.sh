# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Sourced by the bench scripts that compare builds side by side (rec_cost.sh,
# rec_ir.sh, unwind_cost.sh, rec_tail.sh, floor.sh, faults.sh): their arguments
# NAME=BINARY... [-r N] [-- REST...], tool_cmd for a command after --, now_us
# to time runs; and by sample_cost.sh too, for count_calls.
#
# shellcheck disable=SC2034 # NAMES, TOOLS, REST, REPS and CMD are the caller's
#
# tool_args WITH_REPS USAGE ARGS...
#   Sets NAMES and TOOLS (a column name and a binary for each NAME=BINARY, at
#   least one), REST (what follows --) and, when WITH_REPS is 1, REPS from -r N
#   (left as it was without -r). On anything else it prints USAGE to stderr and
#   exits with 2.
tool_args() {
    local with_reps=$1 usage=$2
    shift 2
    NAMES=() TOOLS=() REST=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        case $1 in
        -r)
            if [ "$with_reps" = 1 ] && [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]]; then
                REPS=$2
                shift 2
                continue
            fi
            ;;
        ?*=?*)
            NAMES+=("${1%%=*}")
            TOOLS+=("${1#*=}")
            shift
            continue
            ;;
        esac
        echo "$0: unexpected argument '$1'" >&2
        echo "usage: $usage" >&2
        exit 2
    done
    [ "${1:-}" = -- ] && shift
    REST=("$@")
    if [ ${#TOOLS[@]} -eq 0 ]; then
        echo "usage: $usage" >&2
        exit 2
    fi
}

# tool_cmd USAGE: CMD from REST, the command a script runs under each tool;
# without one, USAGE to stderr and exit 2.
tool_cmd() {
    CMD=("${REST[@]}")
    if [ ${#CMD[@]} -eq 0 ]; then
        echo "usage: $1" >&2
        exit 2
    fi
}

# tool_args_cmd USAGE ARGS...: tool_args with -r N, then tool_cmd: the
# scripts that run one command under each tool (rec_tail.sh, floor.sh,
# faults.sh).
tool_args_cmd() {
    local usage=$1
    shift
    tool_args 1 "$usage" "$@"
    tool_cmd "$usage"
}

# count_calls BENCH_BIN COUNT CMD...: the heap calls of CMD (all its processes;
# untimed), counted by BENCH_BIN/libbench_count.so into the file COUNT.
count_calls() {
    local bin=$1 count=$2
    shift 2
    rm -f "$count"
    BENCH_COUNT_FILE=$count LD_PRELOAD=$bin/libbench_count.so "$@" >/dev/null || return
    awk -F'events=' '{ n += $2 } END { print n + 0 }' "$count"
}

# now_us: the wall clock in microseconds, for timing runs from the shell.
now_us() { echo $(($(date +%s%N) / 1000)); }
