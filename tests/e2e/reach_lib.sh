# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Shared by the rec_reach*.sh tests (after lib.sh): memcheck's classes of
# tests/programs/rec_reach.c's blocks, to hold memscribe's against.

# usage: vg_classes PROG OUT: run valgrind's memcheck on PROG and write
# "EXPECT SIZE CLASS" for each of its blocks of 1001..1012 bytes (one loss
# record per size), sorted, to OUT.
vg_classes() {
    valgrind --leak-check=full --show-leak-kinds=all "$1" >/dev/null 2>"$WORK/vg" ||
        fail "valgrind failed: $(tail -3 "$WORK/vg")"
    sed -E -n 's/^==[0-9]+== ([0-9,]+) (\([0-9,]+ direct, [0-9,]+ indirect\) )?bytes in 1 blocks are (definitely lost|indirectly lost|possibly lost|still reachable) in loss record.*/\1 \2\3/p' \
        "$WORK/vg" | sed -E 's/^([0-9,]+) \(([0-9,]+) direct.*\)/\2/' | tr -d , |
        awk '{
            c = "reachable"
            if ($2 == "definitely") c = "definite"
            if ($2 == "indirectly") c = "indirect"
            if ($2 == "possibly") c = "possible"
            if ($1 > 1000 && $1 < 1013) print "EXPECT " $1 " " c
        }' | sort >"$2"
}

# usage: reach_check OUT TRACE WHAT: the program's "EXPECT SIZE CLASS" lines
# (10 of them, in OUT, its output) against memscribe's classes in TRACE
# (written to $WORK/got, sorted; the expectations to $WORK/expect); WHAT
# names the run in the failure.
reach_check() {
    grep '^EXPECT ' "$1" | sort >"$WORK/expect"
    [ "$(wc -l <"$WORK/expect")" -eq 10 ] || fail "the program printed $(wc -l <"$WORK/expect") expectations, not 10"
    "$MEMSCRIBE" leaks --all --top 0 --format=json "$2" >"$WORK/all.json" || fail "leaks --all of $2"
    jq -r '.blocks[] | select(.size > 1000 and .size < 1013) | "EXPECT \(.size) \(.class)"' \
        "$WORK/all.json" | sort >"$WORK/got"
    diff -u "$WORK/expect" "$WORK/got" >&2 || fail "memscribe's classes ($3) differ from the program's expectations"
}
