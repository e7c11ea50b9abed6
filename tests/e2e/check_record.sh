#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --check (docs/check.md, "In one step"): the program's exit status
# when every check passes, 1 when one fails, 2 for a check option that
# does not parse (before the program runs); the check's report on stderr,
# the program's stdout left alone; --check junit=FILE. Needs MEMSCRIBE,
# MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" check-record MEMSCRIBE MS_PROGRAMS
PROG=$MS_PROGRAMS/diff_base/diff_prog # leaks 40 bytes in one block

# usage: status ARGS...: the exit status of memscribe record ARGS... (stdout
# to $WORK/out, stderr to $WORK/err)
status() {
    local rc=0
    "$MEMSCRIBE" record "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
    echo "$rc"
}

expect "passing" "$(status -o "$WORK/t1.mscr" --check max-leaked-blocks=1 --check max-leaked=40 -- "$PROG")" 0
grep -q "^PASS  max-leaked-blocks 1 " "$WORK/err" || fail "passing: no PASS line on stderr"
grep -q "^check: all 2 checks passed" "$WORK/err" || fail "passing: no summary"
[ -s "$WORK/out" ] && fail "passing: the check wrote on stdout"
[ -s "$WORK/t1.mscr" ] || fail "passing: no trace"

expect "failing" "$(status -o "$WORK/t2.mscr" --check max-leaked-blocks=0 --check "junit=$WORK/j.xml" -- "$PROG")" 1
grep -q "^FAIL  max-leaked-blocks 0 *unsuppressed leaked blocks: 1 (1 leaked, 0 suppressed; limit 0)$" "$WORK/err" ||
    fail "failing: no FAIL line"
grep -q 'failures="1"' "$WORK/j.xml" || fail "failing: the JUnit file"
# The same trace read again by check gives the same answer.
expect "check on record's trace" "$("$MEMSCRIBE" check --max-leaked-blocks 0 "$WORK/t2.mscr" >/dev/null 2>&1 || echo $?)" 1

# The program's own status is kept when the checks pass, and replaced by 1
# when one fails.
expect "program's status kept" "$(status -o "$WORK/t3.mscr" --check max-allocations=100000000 -- bash -c 'echo hi; exit 3')" 3
expect "program's stdout" "$(cat "$WORK/out")" hi
expect "failing check over program's status" "$(status -o "$WORK/t4.mscr" --check max-allocations=0 -- bash -c 'exit 3')" 1

# A check option that does not parse is a usage error before the program runs.
expect "bad check option" "$(status -o "$WORK/t5.mscr" --check max-leaked=lots -- "$PROG")" 2
[ -e "$WORK/t5.mscr" ] && fail "bad check option: the program ran"
expect "unknown check option" "$(status -o "$WORK/t6.mscr" --check no-such=1 -- "$PROG")" 2
expect "dashes" "$(status -o "$WORK/t7.mscr" --check --max-leaked=0 -- "$PROG")" 2
expect "no checks but options" "$(status -o "$WORK/t8.mscr" --check format=json -- "$PROG")" 2
expect "json" "$(status -o "$WORK/t9.mscr" --check format=json --check max-peak=1M -- "$PROG")" 0
expect "json: passed" "$(sed -n '/^{/,/^}/p' "$WORK/err" | jq .passed)" true
echo "record --check: statuses, stderr and JUnit as documented"
