#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --reach of a 32-bit program (docs/leaks.md, "Classes at exit"):
# the i386 collector asks at exit as the x86-64 one does, and the recorder
# reads its words as 4 bytes at 4-byte alignment (memcheck's rule there),
# its registers in the i386 layout PTRACE_GETREGSET gives, its collector's
# table as 4-byte pairs. tests/programs/rec_reach.c built -m32: every block
# has the class the program expects, and memcheck's (valgrind's x86 memcheck,
# where installed), block for block. Skipped where 32-bit programs do not
# run or were not built (gcc-multilib).
# Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rec_reach32 MEMSCRIBE MS_PROGRAMS
# shellcheck source=tests/e2e/reach_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/reach_lib.sh"
need jq
PROG=$MS_PROGRAMS/rec_reach32
if [ ! -x "$PROG" ]; then
    echo "SKIPPED: no $PROG (memscribe built without gcc-multilib)"
    exit 77
fi
need_m32

"$MEMSCRIBE" record --reach -o "$WORK/r.mscr" -- "$PROG" >"$WORK/out" 2>"$WORK/err" ||
    fail "record --reach of the 32-bit program failed: $(cat "$WORK/err")"
grep -q 'leak classes: 1 scan(s)' "$WORK/err" || fail "no scan: $(cat "$WORK/err")"
reach_check "$WORK/out" "$WORK/r.mscr" "the 32-bit program"
"$MEMSCRIBE" leaks --format=json "$WORK/r.mscr" >"$WORK/leaks.json" || fail "leaks"
expect "scan status" "$(jq -r '.processes[0].reach.status' "$WORK/leaks.json")" scanned
expect "definitely lost bytes" "$(jq '.processes[0].reach.definitely_lost_bytes' "$WORK/leaks.json")" 1003
expect "indirectly lost bytes" "$(jq '.processes[0].reach.indirectly_lost_bytes' "$WORK/leaks.json")" 2009
expect "unclassed blocks" "$(jq '.processes[0].reach.unclassed_blocks' "$WORK/leaks.json")" 0

# memcheck's x86 build on the same program, where valgrind has one.
if command -v valgrind >/dev/null && valgrind --tool=memcheck "$MS_PROGRAMS/m32_probe" >/dev/null 2>&1; then
    vg_classes "$PROG" "$WORK/vg_got"
    diff -u "$WORK/vg_got" "$WORK/got" >&2 || fail "memscribe's classes of the 32-bit program differ from memcheck's"
fi

# The output is the program's own.
"$PROG" >"$WORK/plain" || fail "the 32-bit program alone failed"
diff -u "$WORK/plain" "$WORK/out" >&2 || fail "the output changed under record --reach"
