# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034 # REPORT_*: read by the tests that source this
# Sourced by tests/e2e/export_*.sh: a scratch directory, the synthetic trace
# of tests/unit/test_ana_export_trace.c (exact numbers), a recording of
# tests/programs/export_prog, and the numbers `memscribe report` gives.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" export MEMSCRIBE MS_BUILD MS_PROGRAMS
M=$MEMSCRIBE
T=$WORK

# The synthetic trace: 9 allocations, 2296 bytes, peak 1500 bytes at 9 ms,
# 182 bytes leaked in 2 blocks, 5 temporary (test_ana_export_trace.h).
synth() {
    "$MS_BUILD/tests/unit/test_ana_export" --write-trace "$T/syn.mscr"
    echo "$T/syn.mscr"
}

# Record export_prog into $T/prog.mscr and set REPORT_* from `memscribe
# report` (call it directly, not in $(...)).
recorded() {
    (cd "$T" && "$M" record -o "$T/prog.mscr" -- "$MS_PROGRAMS/export_prog" >/dev/null 2>"$T/record.err") ||
        fail "record failed: $(cat "$T/record.err")"
    "$M" report --format=json "$T/prog.mscr" >"$T/report.json"
    REPORT_ALLOCS=$(report_num allocations)
    REPORT_BYTES=$(report_num allocated_bytes)
    REPORT_PEAK=$(report_num peak_bytes)
    REPORT_LEAKED=$(report_num leaked_bytes)
    REPORT_LEAKED_BLOCKS=$(report_num leaked_blocks)
    REPORT_TEMPORARY=$(report_num temporary)
}

# The first "KEY": N of the report (the process's own, before its top lists).
report_num() {
    sed -n "s/^ *\"$1\": \([0-9][0-9]*\),*$/\1/p;T;q" "$T/report.json"
}

# "1,500": a number as dh_view and heaptrack_gui print it.
commas() {
    echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'
}

# Run a command that must fail: its exit code, and a line of its stderr
# matching pattern. expect_exit CODE PATTERN COMMAND...
expect_exit() {
    local want=$1 pat=$2 rc=0
    shift 2
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    expect_eq "exit of $*" "$rc" "$want"
    grep -q -- "$pat" "$T/err" || fail "$*: stderr lacks '$pat': $(cat "$T/err")"
}
