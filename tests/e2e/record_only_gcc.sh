#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --only cc1 -- gcc -O2 -c: only gcc's compiler proper is traced
# (the driver and the assembler run untraced), with exactly the calls the
# cc1 image of an unfiltered trace has, and the object file is unchanged.
# cc1's calloc and mmap counts move by one or two with the address layout,
# so every run is without ASLR (setarch -R): then they are exact.
source "$(dirname "$0")/record_lib.sh"

# dumph TRACE: its dump with the header's '#' lines, in $WORK/dump.txt.
dumph() { "$MEMSCRIBE" dump --header "$1" >"$WORK/dump.txt" 2>"$WORK/dump.err" || fail "dump of $1 failed: $(cat "$WORK/dump.err")"; }

# kinds TRACE: "COUNT KIND" per event kind of the cc1 image of TRACE.
kinds() {
    "$MEMSCRIBE" dump --header "$1" | awk '
        /^# image .* exe="[^"]*\/cc1"/ { sub("pid=", "", $4); pid[$4] = 1; next }
        /^#/ { next }
        ($2 in pid) && $5 !~ /^(rss|thread_start|thread_exit|process_start|process_exit|module_load|module_unload)$/ { n[$5]++ }
        END { for (k in n) print n[k], k }' | sort -k2
}

src=$(dirname "$0")/../programs/col_procs.c
norand() { setarch "$(uname -m)" -R "$@"; }
mkdir "$WORK/plain" "$WORK/all" "$WORK/only"
(cd "$WORK/plain" && norand gcc -O2 -c "$src" -o x.o) || fail "gcc alone failed"
(cd "$WORK/all" && norand "$MEMSCRIBE" record -q -o t.mscr -- gcc -O2 -c "$src" -o x.o) ||
    fail "record gcc exited with $?"
(cd "$WORK/only" && norand "$MEMSCRIBE" record -q --only cc1 -o t.mscr -- gcc -O2 -c "$src" -o x.o) ||
    fail "record --only cc1 gcc exited with $?"
cmp -s "$WORK/plain/x.o" "$WORK/only/x.o" || fail "--only cc1: the object file differs from gcc's alone"
dumph "$WORK/only/t.mscr"
n=$(grep -c '^# image ' "$WORK/dump.txt" || true)
c=$(grep -c '^# image .* exe="[^"]*/cc1"' "$WORK/dump.txt" || true)
[ "$n" = 1 ] && [ "$c" = 1 ] || fail "--only cc1: $n images, $c of them cc1"
grep -qx '# only "cc1"' "$WORK/dump.txt" || fail "--only cc1: the trace does not say which --only"
[ "$(grep -c '^# image ' <("$MEMSCRIBE" dump --header "$WORK/all/t.mscr"))" -ge 3 ] ||
    fail "the unfiltered trace has fewer than gcc, cc1 and as"
kinds "$WORK/all/t.mscr" >"$WORK/all.kinds"
kinds "$WORK/only/t.mscr" >"$WORK/only.kinds"
grep -q ' malloc$' "$WORK/only.kinds" || fail "--only cc1: no malloc in cc1's image"
diff "$WORK/all.kinds" "$WORK/only.kinds" >&2 || fail "--only cc1: cc1's calls differ from the unfiltered trace's"
echo "ok: --only cc1 -- gcc -O2 -c: cc1 alone, the same calls as unfiltered: $(tr '\n' ' ' <"$WORK/only.kinds")"
