#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Row keys (ana_stacks_key) against their definition on recorded traces:
# test_ana_stacks compares every stack's keys with the frames it reads, on
# deep recursion cut at the depth limit (windows), allocations in a signal
# handler (the address after the trampoline is read as precise) and three
# calls on one line (one key for three stacks).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana-keys MEMSCRIBE MS_PROGRAMS MS_BUILD
rec() { # name program args...
    "$MEMSCRIBE" record -q -o "$WORK/$1.mscr" -- "$MS_PROGRAMS/$2" "${@:3}" >/dev/null 2>"$WORK/rec.err" ||
        fail "record $2: $(cat "$WORK/rec.err")"
}
rec deep ana_deep 300
rec quirks col_quirks "$MS_PROGRAMS/libcol_plug.so"
rec rows ana_rows
"$MS_BUILD/tests/unit/test_ana_stacks" "$WORK/deep.mscr" "$WORK/quirks.mscr" "$WORK/rows.mscr" ||
    fail "keys differ from the frames they stand for"
echo "row keys match their frames on deep, quirks and rows"
