#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# C++ new, delete, new[], delete[] show up as malloc and free with the
# right sizes; a static initializer's allocation (before main) too.
source "$(dirname "$0")/record_lib.sh"

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_cxx" >"$WORK/expected" ||
    fail "record exited with $?"
ms_dump_ok "$WORK/t.mscr"
pid=$(awk '$5 == "process_start" { print $2; exit }' "$WORK/dump.txt")
ms_calls "$WORK/t.mscr" "$pid" >"$WORK/calls"
ms_between_marks <"$WORK/calls" >"$WORK/actual"
ms_compare "$WORK/expected" "$WORK/actual"
n=$(grep -c "^malloc .* size=2345\$" "$WORK/calls" || true)
[ "$n" = 1 ] || fail "the static initializer's new char[2345] appears $n times, not once"
echo "ok: $(wc -l <"$WORK/expected") calls as expected"
