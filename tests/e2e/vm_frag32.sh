#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A 32-bit program fills its address space with 1 MiB + 4 KiB mappings and
# unmaps every other one until a 64 MiB malloc fails: record picks the i386
# collector; frag shows the largest free gap collapsing and names the
# function that made the misaligned mappings; the SVG map is written.
source "$(dirname "$0")/record_lib.sh"
need_m32
command -v jq > /dev/null || fail "jq is needed (scripts/setup.sh --test)"

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/vm_frag32" > "$WORK/out" ||
    fail "record exited with $?"
grep -q "large allocation failed" "$WORK/out" || fail "the address space did not fill: $(cat "$WORK/out")"
"$MEMSCRIBE" frag --top 0 --svg "$WORK/map.svg" --format json "$WORK/t.mscr" > "$WORK/f.json" ||
    fail "frag failed"
jq -e '.processes[0].is_32bit' "$WORK/f.json" > /dev/null || fail "not seen as a 32-bit space"
first=$(jq '.processes[0].over_time[0].largest_gap_bytes' "$WORK/f.json")
last=$(jq '.processes[0].largest_gap_bytes' "$WORK/f.json")
[ "$first" -gt 1073741824 ] || fail "largest gap at the start only $first bytes"
[ "$last" -lt $((first / 10)) ] || fail "largest gap did not collapse: $first -> $last"
jq -e '.processes[0].misaligned[0].stack[0] | startswith("fill_address_space")' "$WORK/f.json" \
    > /dev/null || fail "the top misaligned site is not fill_address_space"
jq -e '.processes[0].initial_gap_occupants[0].stack[0] | startswith("fill_address_space")' \
    "$WORK/f.json" > /dev/null || fail "fill_address_space does not fill the initial gap"
grep -q '<svg' "$WORK/map.svg" && grep -q 'class="fr-big"' "$WORK/map.svg" || fail "no map in the SVG"
echo "vm_frag32: largest gap $first -> $last bytes, fill_address_space named"
