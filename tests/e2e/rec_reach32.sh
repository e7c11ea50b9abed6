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
grep '^EXPECT ' "$WORK/out" | sort >"$WORK/expect"
[ "$(wc -l <"$WORK/expect")" -eq 10 ] || fail "the program printed $(wc -l <"$WORK/expect") expectations, not 10"
"$MEMSCRIBE" leaks --all --top 0 --format=json "$WORK/r.mscr" >"$WORK/all.json" || fail "leaks --all"
jq -r '.blocks[] | select(.size > 1000 and .size < 1013) | "EXPECT \(.size) \(.class)"' \
    "$WORK/all.json" | sort >"$WORK/got"
diff -u "$WORK/expect" "$WORK/got" >&2 || fail "memscribe's classes of the 32-bit program differ from its expectations"
"$MEMSCRIBE" leaks --format=json "$WORK/r.mscr" >"$WORK/leaks.json" || fail "leaks"
expect "scan status" "$(jq -r '.processes[0].reach.status' "$WORK/leaks.json")" scanned
expect "definitely lost bytes" "$(jq '.processes[0].reach.definitely_lost_bytes' "$WORK/leaks.json")" 1003
expect "indirectly lost bytes" "$(jq '.processes[0].reach.indirectly_lost_bytes' "$WORK/leaks.json")" 2009
expect "unclassed blocks" "$(jq '.processes[0].reach.unclassed_blocks' "$WORK/leaks.json")" 0

# memcheck's x86 build on the same program, where valgrind has one.
if command -v valgrind >/dev/null && valgrind --tool=memcheck "$MS_PROGRAMS/m32_probe" >/dev/null 2>&1; then
    valgrind --leak-check=full --show-leak-kinds=all "$PROG" >/dev/null 2>"$WORK/vg" ||
        fail "valgrind failed: $(tail -3 "$WORK/vg")"
    sed -E -n 's/^==[0-9]+== ([0-9,]+) (\([0-9,]+ direct, [0-9,]+ indirect\) )?bytes in 1 blocks are (definitely lost|indirectly lost|possibly lost|still reachable) in loss record.*/\1 \2\3/p' \
        "$WORK/vg" | sed -E 's/^([0-9,]+) \(([0-9,]+) direct.*\)/\2/' | tr -d , |
        awk '{
            c = "reachable"
            if ($2 == "definitely") c = "definite"
            if ($2 == "indirectly") c = "indirect"
            if ($2 == "possibly") c = "possible"
            if ($1 > 1000 && $1 < 1013) print "EXPECT " $1 " " c
        }' | sort >"$WORK/vg_got"
    diff -u "$WORK/vg_got" "$WORK/got" >&2 || fail "memscribe's classes of the 32-bit program differ from memcheck's"
fi

# The output is the program's own.
"$PROG" >"$WORK/plain" || fail "the 32-bit program alone failed"
diff -u "$WORK/plain" "$WORK/out" >&2 || fail "the output changed under record --reach"
