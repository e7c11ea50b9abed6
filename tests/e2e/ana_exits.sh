#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A process's exit is dated when it ended, not when the recorder noticed
# (docs/report.md): tests/programs/ana_exits.c forks five children one
# after another, each leaving by exit() or _exit(), and allocates right
# after each waitpid. Each child's end (report's process table) must come
# before that allocation and after the child's own; main dated exits at
# the recorder's next poll round, a millisecond or more later, after the
# parent's allocation. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/ana_lib.sh
source "$(dirname "$0")/ana_lib.sh"
record ana_exits
"$MEMSCRIBE" report --format=json "$WORK/t.mscr" >"$WORK/r.json"
"$MEMSCRIBE" leaks --all --top 0 --format=json "$WORK/t.mscr" >"$WORK/l.json"
expect "processes" "$(jq '.process_table | length' "$WORK/r.json")" 6
# The time of the live block of SIZE bytes, and its process.
block() {
    jq -r ".blocks[] | select(.size == $1) | \"\(.pid) \(.time_ns)\"" "$WORK/l.json"
}
for i in 0 1 2 3 4; do
    read -r child child_ns < <(block $((100 + i)))
    read -r parent after_ns < <(block $((1000 + i)))
    [ -n "$child" ] && [ -n "$parent" ] && [ "$child" != "$parent" ] ||
        fail "child $i: no blocks of 10$i and 100$i bytes in two processes"
    end=$(jq ".process_table[] | select(.pid == $child) | .end_ns" "$WORK/r.json")
    expect "child $i's parent" "$(jq ".process_table[] | select(.pid == $child) | .ppid" \
        "$WORK/r.json")" "$parent"
    [ "$end" != null ] && [ "$child_ns" -le "$end" ] && [ "$end" -le "$after_ns" ] ||
        fail "child $i (pid $child, $([ $((i % 2)) = 0 ] && echo 'exit()' || echo '_exit()')):" \
            "ended at $end ns, its block at $child_ns ns, the parent's next at $after_ns ns"
    echo "ok: child $i: its block at $child_ns <= its end at $end <= the parent's next block at $after_ns"
done
# Nothing of a process after its exit: a free from a destructor that ran
# after the collector's stamp was once written after the exit event, both
# at the same time. Programs exiting through libc's exit handlers: ls.
"$MEMSCRIBE" record -q --time-unit ns -o "$WORK/ls.mscr" -- ls / >/dev/null ||
    fail "record of ls exited with $?"
for t in t ls; do
    "$MEMSCRIBE" dump "$WORK/$t.mscr" >"$WORK/$t.dump" || fail "dump of $t.mscr failed"
    after=$(awk '$5 == "process_exit" { gone[$2] = 1; next } ($2 in gone) { n++ } END { print n + 0 }' "$WORK/$t.dump")
    expect "$t: events after their process's exit" "$after" 0
done
echo "ok: no event of a process after its process_exit"
echo "PASS"
