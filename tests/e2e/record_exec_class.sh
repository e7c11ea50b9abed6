#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A 64-bit program that execs a 32-bit one, and the reverse: both images
# are traced, each by its own collector, and the loader says nothing
# (once: "wrong ELF class" on the program's stderr, the child untraced).
source "$(dirname "$0")/record_lib.sh"
P=$MS_PROGRAMS
need_m32

for pair in "vm_harm vm_harm32" "vm_harm32 vm_harm"; do
    set -- "${pair% *}" "${pair#* }"
    "$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$P/$1" exec "$P/$2" mask >"$WORK/out" 2>"$WORK/err" ||
        fail "$1 exec $2: record exited with $?: $(cat "$WORK/err")"
    [ ! -s "$WORK/err" ] || fail "$1 exec $2: something was said on stderr: $(cat "$WORK/err")"
    ms_dump_ok "$WORK/t.mscr"
    [ "$(awk '$5 == "process_start"' "$WORK/dump.txt" | wc -l)" = 2 ] ||
        fail "$1 exec $2: expected two images: $(awk '$5 == "process_start"' "$WORK/dump.txt")"
    grep -q " malloc .*size=31337" "$WORK/dump.txt" || fail "$1 exec $2: the first image's malloc is missing"
    awk '$5 == "module_load"' "$WORK/dump.txt" | grep -q "path=\"$P/$2\"" ||
        fail "$1 exec $2: the exec'd image was not traced"
done
echo "ok: 64-bit and 32-bit programs exec each other, both traced, nothing said"
