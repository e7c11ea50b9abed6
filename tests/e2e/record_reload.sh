#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A plugin loaded and unloaded 300 times, its constructor allocating each
# time: every malloc is recorded with the plugin's frame, the stacks are
# libunwind's (MEMSCRIBE_UNWIND=verify), and the collector's forgotten
# unwind rules do not grow the address space (a new 1 MiB table per unload
# did: ~300 MiB here).
source "$(dirname "$0")/record_lib.sh"

MEMSCRIBE_UNWIND=verify "$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- \
    "$MS_PROGRAMS/col_reload" "$MS_PROGRAMS/libcol_plug.so" >"$WORK/out.txt" ||
    fail "record exited with $?"
growth=$(sed -n 's/^vm-growth-kib: //p' "$WORK/out.txt")
[ -n "$growth" ] || fail "col_reload printed no growth: $(cat "$WORK/out.txt")"
[ "$growth" -lt 32768 ] || fail "the address space grew by $growth KiB over 299 reloads"
ms_dump_ok "$WORK/t.mscr"
n=$(grep -c " malloc .* size=6543 " "$WORK/dump.txt" || true)
[ "$n" = 300 ] || fail "the plugin constructor's malloc(6543) appears $n times, not 300"
echo "ok: 300 reloads, growth $growth KiB, every constructor malloc recorded"
