#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where --vm-precise is not built (AArch64: its SIGSYS handler reads x86's
# registers, and Debian 12's arm64 kernel has no Syscall User Dispatch),
# record --vm-precise is a usage error: exit 2, one line that says why,
# the program not run, no trace left.
source "$(dirname "$0")/record_lib.sh"

rc=0
"$MEMSCRIBE" record --vm-precise -o "$WORK/t.mscr" -- touch "$WORK/ran" >"$WORK/out" 2>"$WORK/err" ||
    rc=$?
expect "exit status of record --vm-precise" "$rc" 2
grep -q "vm-precise is built for x86-64 only" "$WORK/err" || fail "no reason given: $(cat "$WORK/err")"
[ ! -e "$WORK/ran" ] || fail "the program ran"
[ ! -e "$WORK/t.mscr" ] || fail "a trace was left behind"
echo "ok: --vm-precise refused: $(head -1 "$WORK/err")"
