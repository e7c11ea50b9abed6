# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# usage: need_wine NAME WINE: go on if WINE (the 32-bit /usr/lib/wine/wine)
# runs; else end the test as skipped (exit 77, ctest's SKIP_RETURN_CODE),
# or as failed where the run requires 32-bit Windows
# (MEMSCRIBE_REQUIRE_WINE32=1: scripts/fresh-check.sh, CI).
need_wine() {
    [ -x "$2" ] && return 0
    if [ "${MEMSCRIBE_REQUIRE_WINE32:-0}" = 1 ]; then
        echo "$1: $2 is missing, and this run requires 32-bit Windows (MEMSCRIBE_REQUIRE_WINE32=1)"
        exit 1
    fi
    echo "$1: SKIPPED: $2 is missing (wine32:i386 not installed: see scripts/setup.sh)"
    exit 77
}
