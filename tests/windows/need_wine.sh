# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# usage: need_wine NAME WINE: go on if WINE (wine64, or the 32-bit
# /usr/lib/wine/wine) runs; else end the test as skipped (exit 77, ctest's SKIP_RETURN_CODE).
# Where the run requires 32-bit Windows (MEMSCRIBE_REQUIRE_WINE32=1:
# scripts/fresh-check.sh, CI), a missing wine32 fails the test; a kernel that
# runs no 32-bit program (scripts/runs-i386.sh) is still a skip: no install
# can change it.
need_wine() {
    local rc=0
    # Only a 32-bit wine (its ELF class byte 1) needs the kernel's i386 side.
    if [ -x "$2" ] && [ "$(od -An -tx1 -j4 -N1 "$2" | tr -d ' ')" = 01 ]; then
        bash "$(dirname "${BASH_SOURCE[0]}")/../../scripts/runs-i386.sh" || rc=$?
    fi
    case $rc in
    0) ;;
    1) echo "$1: SKIPPED: this machine does not run 32-bit x86 programs (the exec of an i386 program: Exec format error)"
       exit 77 ;;
    *) echo "$1: scripts/runs-i386.sh exited with $rc"; exit 1 ;;
    esac
    [ -x "$2" ] && return 0
    if [ "${MEMSCRIBE_REQUIRE_WINE32:-0}" = 1 ]; then
        echo "$1: $2 is missing, and this run requires 32-bit Windows (MEMSCRIBE_REQUIRE_WINE32=1)"
        exit 1
    fi
    echo "$1: SKIPPED: $2 is missing (wine32:i386 not installed: see scripts/setup.sh)"
    exit 77
}
