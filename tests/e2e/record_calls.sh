#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every hooked function with known arguments appears exactly once, with
# the right values; allocations in constructors (program and library,
# before main) are there too.
source "$(dirname "$0")/record_lib.sh"

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_calls" >"$WORK/expected" ||
    fail "record exited with $?"
ms_dump_ok "$WORK/t.mscr"
pid=$(awk '$5 == "process_start" { print $2; exit }' "$WORK/dump.txt")
ms_calls "$WORK/t.mscr" "$pid" >"$WORK/calls"
ms_between_marks <"$WORK/calls" >"$WORK/actual"
ms_compare "$WORK/expected" "$WORK/actual"
for size in 1234 4321; do
    n=$(grep -c "^malloc .* size=$size\$" "$WORK/calls" || true)
    [ "$n" = 1 ] || fail "malloc($size) made before main appears $n times, not once"
done
echo "ok: $(wc -l <"$WORK/expected") calls as expected"
