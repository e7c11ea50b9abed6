#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The collector runs clean under valgrind (memcheck) on a small program,
# and still records its calls.
source "$(dirname "$0")/record_lib.sh"
command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/setup.sh --test installs it)"

rc=0
# nouserintercepts: valgrind replaces malloc in libc only, not ours.
"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- valgrind -q --error-exitcode=99 \
    --soname-synonyms=somalloc=nouserintercepts --suppressions="$(dirname "$0")/record_valgrind.supp" \
    "$MS_PROGRAMS/col_procs" leaf 1000 2>"$WORK/vg.err" || rc=$?
[ "$rc" = 0 ] || fail "valgrind reports errors (exit $rc): $(cat "$WORK/vg.err")"
ms_dump_ok "$WORK/t.mscr"
n=$(grep -c " malloc .* size=1000 " "$WORK/dump.txt" || true)
[ "$n" = 3 ] || fail "under valgrind, malloc(1000) appears $n times, not 3"
echo "ok: clean under valgrind"
