#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The collector's unwinder against libunwind on real programs: under
# MEMSCRIBE_UNWIND=verify every walk is compared with a full unw_backtrace
# from the same place and a difference aborts the program with both stacks
# printed. sqlite3 on a generated script, python3 with PYTHONMALLOC=malloc,
# gcc's cc1 -O2 on libpng's pngtest.c (2,158 lines, png.h and zlib.h
# included), and col_unwind (C++ exceptions, longjmp and siglongjmp out of
# allocating frames, allocations in signal handlers on an alternate stack,
# recursion past the walks' maximum, 8 threads) at -O0 with frame pointers
# and at -O2 without; col_unwind and sqlite3 also with 6 frames a stack.
source "$(dirname "$0")/record_lib.sh"
export MEMSCRIBE_UNWIND=verify

# usage: verified NAME MIN_ALLOCS COMMAND...: the program exits 0, nothing
# differed, and its trace holds at least MIN_ALLOCS allocations with stacks.
# RECORD_OPTS: more options of memscribe record.
verified() {
    local name=$1 min=$2 n
    shift 2
    # shellcheck disable=SC2086 # RECORD_OPTS is a list of options
    "$MEMSCRIBE" record -q ${RECORD_OPTS:-} -o "$WORK/$name.mscr" -- "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
        fail "$name under MEMSCRIBE_UNWIND=verify exited with $?: $(grep -A2 'walk differs' "$WORK/$name.err" || tail -3 "$WORK/$name.err")"
    ! grep -q "walk differs" "$WORK/$name.err" || fail "$name: $(cat "$WORK/$name.err")"
    n=$("$MEMSCRIBE" dump "$WORK/$name.mscr" | awk '$5 ~ /^(malloc|calloc|realloc)$/ && / stack=[1-9]/ { n++ } END { print n + 0 }')
    [ "$n" -ge "$min" ] || fail "$name: only $n allocations with a stack, expected at least $min; stdout: $(head -c 300 "$WORK/$name.out"); stderr: $(tail -5 "$WORK/$name.err")"
    echo "ok: $name, $n allocations with stacks, every walk the same as libunwind's"
}

verified col_unwind 30000 "$MS_PROGRAMS/col_unwind"
verified col_unwind_o2 30000 "$MS_PROGRAMS/col_unwind_o2"
awk -v rows=5000 -f "$MS_SOURCE/bench/gen_sql.awk" >"$WORK/script.sql"
verified sqlite 50000 sqlite3 -batch :memory: ".read $WORK/script.sql"
# A walk of 10 frames at most: most walks stop at their maximum, take the
# last one's frames past it, or fall short of it and step on.
RECORD_OPTS="--depth 6" verified col_unwind_depth6 30000 "$MS_PROGRAMS/col_unwind_o2"
RECORD_OPTS="--depth 6" verified sqlite_depth6 50000 sqlite3 -batch :memory: ".read $WORK/script.sql"
PYTHONMALLOC=malloc verified python3 50000 python3 -c '
import json, re
rows = [{"id": i, "name": "n%d" % i, "tags": [str(j) for j in range(i % 7)]} for i in range(20000)]
text = json.dumps(rows)
print(len(json.loads(text)), len(re.findall(r"n[0-9]+", text)))'
verified cc1 20000 gcc -O2 -c /usr/share/doc/libpng-dev/examples/pngtest.c -o "$WORK/pngtest.o"
