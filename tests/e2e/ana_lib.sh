# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by tests/e2e/ana_*.sh: the shared preamble (lib.sh: $WORK, fail,
# expect) and run, record. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana MEMSCRIBE MS_PROGRAMS
# usage: run WANT_STATUS CMD...: runs memscribe, leaves $WORK/out and $WORK/err.
run() {
    local want=$1 st=0
    shift
    "$MEMSCRIBE" "$@" >"$WORK/out" 2>"$WORK/err" || st=$?
    [ "$st" = "$want" ] || fail "memscribe $*: exit $st, want $want; stderr: $(cat "$WORK/err")"
}
# usage: record PROGRAM [ARGS...]: records tests/programs/PROGRAM into $WORK/t.mscr.
record() {
    "$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/$1" "${@:2}" >/dev/null 2>"$WORK/rec.err" ||
        fail "record $1: $(cat "$WORK/rec.err")"
}
