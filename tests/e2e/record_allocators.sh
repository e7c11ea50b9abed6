#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Programs linked against jemalloc, mimalloc and tcmalloc as their malloc:
# their malloc family, their operator new and delete (which do not go
# through malloc) and their own APIs (mallocx/rallocx/dallocx/sdallocx,
# mi_*, tc_*) are each in the trace exactly once (tests/programs/col_alloc3p.cc).
source "$(dirname "$0")/record_lib.sh"

# "KIND SIZE" for the program's sized events of 5000-5299 bytes, counted.
counts() {
    awk '{ for (i = 6; i <= NF; i++) if ($i ~ /^size=5[0-2][0-9][0-9]$/) print $5, substr($i, 6) }' "$WORK/dump.txt" |
        sort | uniq -c | awk '{ print $2, $3, $1 }'
}

for alloc in jemalloc mimalloc tcmalloc; do
    rc=0
    "$MEMSCRIBE" record -q -o "$WORK/$alloc.mscr" -- "$MS_PROGRAMS/col_alloc_$alloc" >"$WORK/out" 2>"$WORK/err" || rc=$?
    [ "$rc" = 0 ] || fail "$alloc: record exited with $rc: $(cat "$WORK/err")"
    [ "$(cat "$WORK/out")" = "done" ] || fail "$alloc: the program said $(cat "$WORK/out")"
    ms_dump_ok "$WORK/$alloc.mscr"
    # The same for each: through malloc, and operator new.
    cat >"$WORK/want" <<END
malloc 5001 3
free 5001 3
calloc 5002 2
free 5002 2
realloc 5003 1
free 5003 1
malloc 5004 4
free 5004 4
malloc 5005 2
free 5005 2
aligned_alloc 5056 1
free 5056 1
malloc 5101 3
free 5101 3
free 5102 2
realloc 5103 1
free 5103 1
free 5104 1
malloc 5201 1
free 5201 1
END
    # Their own API's kinds: a zeroed mallocx is a malloc, mi_zalloc and
    # tc_calloc are callocs; an aligned one an aligned_alloc or memalign.
    case $alloc in
    jemalloc) printf 'malloc 5102 2\naligned_alloc 5104 1\n' ;;
    mimalloc) printf 'calloc 5102 2\naligned_alloc 5104 1\nmalloc 5105 1\nfree 5105 1\ncalloc 5106 1\nrealloc 5107 1\nfree 5107 1\n' ;;
    tcmalloc) printf 'calloc 5102 2\nmemalign 5104 1\n' ;;
    esac >>"$WORK/want"
    sort "$WORK/want" >"$WORK/want.sorted"
    counts | sort >"$WORK/have"
    diff "$WORK/want.sorted" "$WORK/have" >"$WORK/diff" ||
        fail "$alloc: the trace's calls differ (< expected, > in the trace): $(cat "$WORK/diff")"
    # The allocator is the one the program links, not glibc's.
    grep -q "module_load .*path=\"[^\"]*lib${alloc/tcmalloc/tcmalloc_minimal}\.so" "$WORK/dump.txt" ||
        fail "$alloc: the library is not in the trace"
done
echo "ok: jemalloc, mimalloc, tcmalloc: malloc family, new/delete, own API"
