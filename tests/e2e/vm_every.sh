#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --vm-precise: libc's own mmap/munmap of a big malloc, thread stacks,
# ld.so's mappings of a dlopen'd library and direct calls each appear
# exactly once, with the right origin and the program's function in the
# stack (vm_every prints what it expects).
source "$(dirname "$0")/record_lib.sh"

# Argument "32": the -m32 build, traced by the i386 collector.
bits=${1:-}
[ -z "$bits" ] || need_m32
"$MEMSCRIBE" record -q --vm-precise -o "$WORK/t.mscr" -- "$MS_PROGRAMS/vm_every$bits" \
    "$MS_PROGRAMS/libvm_plug$bits.so" > "$WORK/expect" || fail "record exited with $?"
[ "$(wc -l < "$WORK/expect")" -eq 9 ] || fail "vm_every printed $(wc -l < "$WORK/expect") lines"
"$MEMSCRIBE" dump --stacks "$WORK/t.mscr" > "$WORK/dump" || fail "dump failed"
while read -r kind origin addr size fn; do
    a=${addr#addr=}
    # Events of this kind at this address (mremap: its new address), and of
    # this size where it is known: the kernel may hand the address to another
    # mapping in the run (on i386, glibc trimming a thread's arena unmapped
    # part of a reservation at the address a big malloc later got).
    s=$size
    [ "$s" != size=0 ] || s=
    hits=$(awk -v k="$kind" -v a="addr=$a" -v s="$s" '$5 == k {
        hit = 0; sized = (s == "")
        for (i = 6; i <= NF; i++) { if ($i == a) hit = 1; if ($i == s) sized = 1 }
        if (hit && sized) print }' "$WORK/dump")
    n=$(printf '%s\n' "$hits" | grep -c . || true)
    [ "$n" -eq 1 ] || fail "$kind at $a: $n events, expected 1:
$hits"
    o=$(printf '%s\n' "$hits" | grep -o 'origin=[a-z]*' || echo origin=call)
    [ "$o" = "origin=$origin" ] || fail "$kind at $a: $o, expected origin=$origin"
    [ "$size" = size=0 ] || [[ "$hits" == *" $size "* ]] || fail "$kind at $a: not $size: $hits"
    # dump --stacks lists each stack after the events: "stack ID ..." then
    # its frames.
    id=$(printf '%s\n' "$hits" | grep -o 'stack=[0-9]*' | cut -d= -f2)
    frames=$(awk -v id="$id" '$1 == "stack" { on = ($2 == id); next } on' "$WORK/dump")
    [[ "$frames" == *"!$fn+"* ]] || fail "$kind at $a: $fn not in stack $id"
done < "$WORK/expect"
echo "vm_every: 9 mappings once each, origins and stacks right"
