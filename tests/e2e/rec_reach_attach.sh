#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record -p PID --reach (docs/leaks.md, "Other ways of recording"):
# tests/programs/rec_reach.c waits for the attach, makes a block of each
# class and says which it expects. Detached by Ctrl-C while the program
# runs on, the recorder classes its blocks at the detach: every block has
# the class expected, leaks says when the scan was and that its blocks were
# live then (not at exit), the program goes on and ends as it would have.
# Ending while attached, the program asks for the scan at its exit as
# under record. The program's output and exit status are its own.
source "$(dirname "$0")/record_lib.sh"
need jq
PROG=$MS_PROGRAMS/rec_reach

# classes TRACE: "EXPECT SIZE CLASS" of the program's blocks, sorted.
classes() {
    "$MEMSCRIBE" leaks --all --top 0 --format=json "$1" 2>/dev/null |
        jq -r '.blocks[] | select(.size > 1000 and .size < 1013) | "EXPECT \(.size) \(.class)"' | sort
}

# attach DIR TRACE [exit]: start the program, attach, let it make its blocks.
attach() {
    mkdir -p "$1"
    "$PROG" "$1" ${3:+"$3"} >"$1/out" &
    target=$!
    wait_file "$1/ready.0"
    if [ -n "${3:-}" ]; then
        "$MEMSCRIBE" record -p "$target" --reach -o "$2" 2>"$2.err" &
    else
        "$MEMSCRIBE" record -p "$target" --reach -o "$2" 2>"$2.err" &
    fi
    rec=$!
    wait_line "$2.err" "attached to process $target"
    touch "$1/go.1"
    wait_file "$1/done.1"
    # detached once the blocks are made, not after a time they may outlast
    [ -n "${3:-}" ] || kill -INT "$rec"
}

# Detached (Ctrl-C) while the program waits: the scan at the detach.
D=$WORK/detach
attach "$D" "$WORK/d.mscr"
rc=0
wait "$rec" || rc=$?
expect "record -p --reach's exit status" "$rc" 0
grep -q "detached from process $target" "$WORK/d.mscr.err" || fail "no detach: $(cat "$WORK/d.mscr.err")"
grep -q "leak classes: 1 scan(s)" "$WORK/d.mscr.err" || fail "no scan in the summary: $(cat "$WORK/d.mscr.err")"
touch "$D/go.2"
rc=0
wait "$target" || rc=$?
expect "the program's exit status after the detach" "$rc" 0
grep '^EXPECT ' "$D/out" | sort >"$WORK/expect"
[ "$(wc -l <"$WORK/expect")" -eq 10 ] || fail "the program printed $(wc -l <"$WORK/expect") expectations"
diff -u "$WORK/expect" <(classes "$WORK/d.mscr") >&2 || fail "classes at the detach differ from the expectations"
"$MEMSCRIBE" leaks --format=json "$WORK/d.mscr" 2>/dev/null >"$WORK/d.json" || fail "leaks --format=json"
expect "the detach's scan is not at exit" "$(jq '.processes[0].reach.at_exit' "$WORK/d.json")" false
expect "definitely lost at the detach" "$(jq '.processes[0].reach.definitely_lost_bytes' "$WORK/d.json")" 1003
"$MEMSCRIBE" leaks "$WORK/d.mscr" 2>/dev/null >"$WORK/d.txt" || fail "leaks"
grep -Eq '^  scan at [0-9.]+s: definite 1003 bytes in 1 blocks' "$WORK/d.txt" ||
    fail "leaks does not date the scan: $(cat "$WORK/d.txt")"
grep -q '^classes of the last scan at or before the moment shown' "$WORK/d.txt" ||
    fail "leaks' legend says the classes are at exit: $(tail -2 "$WORK/d.txt")"
"$MEMSCRIBE" report "$WORK/d.mscr" 2>/dev/null >"$WORK/d_report.txt" || fail "report"
grep -q '^  live at the end: ' "$WORK/d_report.txt" || fail "report does not say the blocks are live at the end"
grep -q '^  lost at last scan:  3012 bytes in 3 blocks' "$WORK/d_report.txt" ||
    fail "report's lost line: $(grep lost "$WORK/d_report.txt")"

# Ending while attached: the scan at its exit, as under record.
X=$WORK/exit
attach "$X" "$WORK/x.mscr" exit
rc=0
wait "$rec" || rc=$?
expect "record -p --reach's exit status (the program ended)" "$rc" 0
rc=0
wait "$target" || rc=$?
expect "the program's exit status, ending while attached" "$rc" 0
diff -u "$WORK/expect" <(classes "$WORK/x.mscr") >&2 || fail "classes at the exit while attached differ"
"$MEMSCRIBE" leaks --format=json "$WORK/x.mscr" 2>/dev/null >"$WORK/x.json" || fail "leaks --format=json"
expect "the exit's scan is at exit" "$(jq '.processes[0].reach.at_exit' "$WORK/x.json")" true
"$MEMSCRIBE" leaks "$WORK/x.mscr" 2>/dev/null >"$WORK/x.txt" || fail "leaks"
grep -q '^classes at exit: ' "$WORK/x.txt" || fail "no 'classes at exit'"

# The output is the program's own.
mkdir "$WORK/plain"
touch "$WORK/plain/go.1" "$WORK/plain/go.2"
"$PROG" "$WORK/plain" >"$WORK/plain.out" || fail "the program alone failed"
diff -u "$WORK/plain.out" "$D/out" >&2 || fail "the output changed under record -p --reach"
