# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The one preamble of the e2e tests, sourced first:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" [--go-on] NAME [VAR...]
# strict mode; each VAR (MEMSCRIBE, MS_PROGRAMS, MS_BUILD, MS_SOURCE: set
# by ctest, tests/CMakeLists.txt) must be set; a scratch directory $WORK
# (ms-NAME.XXXXXX, removed on exit); and the checks every test uses.
# --go-on: a test that counts its failures and goes on to its next check
# (a table of commands or files, where one failure should not hide the
# others): no `set -e`; `fail` says FAIL and counts it in $fails instead of
# exiting; `finish MSG` ends the test, saying MSG if nothing failed, with
# exit status 1 if anything did.
ms_lib_go_on=0
if [ "${1:-}" = --go-on ]; then
    ms_lib_go_on=1
    shift
    set -uo pipefail
else
    set -euo pipefail
fi
ms_lib_name=${1:?usage: source lib.sh [--go-on] NAME [VAR...]}
shift
for ms_lib_var in "$@"; do
    if [ -z "${!ms_lib_var:-}" ]; then
        echo "$0: $ms_lib_var: set by ctest" >&2
        exit 1
    fi
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ms-$ms_lib_name.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fails=0

fail() {
    echo "FAIL: $*" >&2
    [ "$ms_lib_go_on" = 1 ] || exit 1
    fails=$((fails + 1))
}
# usage: finish MSG (--go-on: the last line)
finish() {
    [ "$fails" -eq 0 ] && echo "$*"
    exit $((fails > 0))
}
# usage: expect WHAT GOT WANT (says ok)
expect() {
    if [ "$2" = "$3" ]; then
        echo "ok: $1 = $3"
    else
        fail "$1: got '$2', want '$3'"
    fi
}
# usage: expect_eq WHAT GOT WANT (quietly)
expect_eq() {
    [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}
# The reader a test needs (scripts/setup.sh --test installs them all).
need() {
    command -v "$1" >/dev/null || fail "$1 is not installed: run scripts/setup.sh --test"
}
# usage: m32_runs: does this machine run 32-bit x86 programs
# (scripts/runs-i386.sh, the one probe)? 1 where the kernel refuses their
# exec; a probe that fails any other way is the test's failure, not a
# reason to skip.
m32_runs() {
    local rc=0
    bash "$(dirname "${BASH_SOURCE[0]}")/../../scripts/runs-i386.sh" || rc=$?
    case $rc in
    0) return 0 ;;
    1) return 1 ;;
    *) fail "scripts/runs-i386.sh exited with $rc" ;;
    esac
}
# usage: need_nobody: a test that acts as another local user ends as
# skipped (exit 77) unless it runs as root with setpriv; then "${NOBODY[@]}"
# CMD runs CMD as user nobody, and $WORK is open to it.
need_nobody() {
    if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
        echo "SKIPPED: acting as user nobody needs root and setpriv"
        exit 77
    fi
    # shellcheck disable=SC2034 # for the tests that source this
    NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    chmod 755 "$WORK"
}
# usage: need_m32: a test of 32-bit programs ends as skipped (exit 77,
# ctest's SKIP_RETURN_CODE) where they cannot run.
need_m32() {
    m32_runs && return 0
    echo "SKIPPED: this machine does not run 32-bit x86 programs (the exec of an i386 program: Exec format error)"
    exit 77
}
