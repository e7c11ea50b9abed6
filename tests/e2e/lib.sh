# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The one preamble of the e2e tests, sourced first:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" NAME [VAR...]
# strict mode; each VAR (MEMSCRIBE, MS_PROGRAMS, MS_BUILD, MS_SOURCE: set
# by ctest, tests/CMakeLists.txt) must be set; a scratch directory $WORK
# (ms-NAME.XXXXXX, removed on exit); and the checks every test uses.
set -euo pipefail
ms_lib_name=${1:?usage: source lib.sh NAME [VAR...]}
shift
for ms_lib_var in "$@"; do
    if [ -z "${!ms_lib_var:-}" ]; then
        echo "$0: $ms_lib_var: set by ctest" >&2
        exit 1
    fi
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ms-$ms_lib_name.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# usage: expect WHAT GOT WANT (says ok)
expect() {
    [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
    echo "ok: $1 = $3"
}
# usage: expect_eq WHAT GOT WANT (quietly)
expect_eq() {
    [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}
# The reader a test needs (scripts/setup.sh --test installs them all).
need() {
    command -v "$1" >/dev/null || fail "$1 is not installed: run scripts/setup.sh --test"
}
