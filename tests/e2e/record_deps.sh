#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the collector brings into a traced process: besides libc only
# libgcc_s (its unwinder's _Unwind_Find_FDE). libunwind serves
# MEMSCRIBE_UNWIND=verify alone and is loaded only then (dlopen,
# col_unwind_verify.c): linked, every traced process would load it and
# liblzma at its start (bench/notes/collector.md, "Paired ratios, and what a walk waits for").
source "$(dirname "$0")/record_lib.sh"

lib=$(dirname "$MEMSCRIBE")/../lib/memscribe
for so in "$lib"/libmemscribe.so "$lib"/x86_64/libmemscribe-attach.so; do
    [ -f "$so" ] || fail "no $so"
    needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
    [ "$needed" = "libc.so.6 libgcc_s.so.1 " ] ||
        fail "$(basename "$so") needs: $needed(want libc.so.6 libgcc_s.so.1)"
done

# The traced process's own mappings, as it sees them.
"$MEMSCRIBE" record -q -o "$WORK/plain.mscr" -- cat /proc/self/maps >"$WORK/plain.maps" ||
    fail "record exited with $?"
grep -q libmemscribe "$WORK/plain.maps" || fail "the collector is not in the traced process"
! grep -E 'libunwind|liblzma' "$WORK/plain.maps" ||
    fail "a traced process loaded libunwind or liblzma (above)"
MEMSCRIBE_UNWIND=verify "$MEMSCRIBE" record -q -o "$WORK/verify.mscr" -- cat /proc/self/maps \
    >"$WORK/verify.maps" || fail "record under verify exited with $?"
grep -q libunwind "$WORK/verify.maps" || fail "verify did not load libunwind"
echo "record_deps: the collector brings libgcc_s only; libunwind comes with verify alone"
