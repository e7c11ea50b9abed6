# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by tests/e2e/ana_*.sh: a scratch directory $WORK (removed on exit)
# and the checks fail, expect and run. Needs MEMSCRIBE, MS_PROGRAMS.
set -euo pipefail
: "${MEMSCRIBE:?set by ctest}" "${MS_PROGRAMS:?set by ctest}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ms-ana.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# usage: expect WHAT GOT WANT
expect() {
    [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
    echo "ok: $1 = $3"
}
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
