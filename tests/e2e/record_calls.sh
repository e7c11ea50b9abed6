#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every hooked function with known arguments appears exactly once, with
# the right values; allocations in constructors (program and library,
# before main) are there too.
source "$(dirname "$0")/record_lib.sh"

ms_record_marked col_calls
for size in 1234 4321; do
    n=$(grep -c "^malloc .* size=$size\$" "$WORK/calls" || true)
    [ "$n" = 1 ] || fail "malloc($size) made before main appears $n times, not once"
done
# The frame-pointer unwinder (lossy, opt-in) sees the same calls, and the
# program (built with frame pointers) as the caller of its mallocs.
MEMSCRIBE_UNWIND=fp "$MEMSCRIBE" record -q -o "$WORK/fp.mscr" -- "$MS_PROGRAMS/col_calls" >"$WORK/expected" ||
    fail "record with MEMSCRIBE_UNWIND=fp exited with $?"
ms_calls "$WORK/fp.mscr" "$(awk '$5 == "process_start" { print $2; exit }' <("$MEMSCRIBE" dump "$WORK/fp.mscr"))" |
    ms_between_marks >"$WORK/actual"
ms_compare "$WORK/expected" "$WORK/actual"
"$MEMSCRIBE" dump --stacks --raw "$WORK/fp.mscr" >"$WORK/fp.txt"
id=$(awk '$5 == "malloc" && / size=100 / { for (i = 6; i <= NF; i++) if ($i ~ /^stack=/) print substr($i, 7); exit }' "$WORK/fp.txt")
awk -v id="$id" '$1 == "stack" && $2 == id { getline; print; exit }' "$WORK/fp.txt" | grep -q " col_calls+0x" ||
    fail "fp unwinding: the malloc(100) stack $id does not start in col_calls"
echo "ok: $(wc -l <"$WORK/expected") calls as expected, with either unwinder"
