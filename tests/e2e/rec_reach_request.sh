#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Leak classes on request (docs/leaks.md, "On request"): SIGUSR1 to
# `memscribe record --reach` classes the live blocks of every traced
# process then, without the program ending; the signal goes to the
# recorder, never to the program, whose output and exit status are its own.
# tests/programs/rec_reach.c makes its blocks, waits; the test asks for a
# scan, then lets it free 1002 and lose a new 1013 before it exits. leaks
# --at a moment after the scan shows that scan's classes (1002 reachable,
# dated), leaks at the end the exit's (1002 gone, 1013 definite).
source "$(dirname "$0")/record_lib.sh"
need jq
PROG=$MS_PROGRAMS/rec_reach

# blocks TRACE [leaks options]: "SIZE CLASS" of the program's blocks, sorted.
blocks() {
    local t=$1
    shift
    "$MEMSCRIBE" leaks --all --top 0 --format=json "$@" "$t" 2>/dev/null |
        jq -r '.blocks[] | select(.size > 1000 and .size < 1014) | "\(.size) \(.class)"' | sort -n
}

# usage: scan_on_request DIR TRACE ERR: record the program (its files in
# DIR) into TRACE, and once it made its first blocks, ask the recorder
# (pid in rec) for a scan and wait until it says it made it.
scan_on_request() {
    mkdir "$1"
    touch "$1/go.1"
    "$MEMSCRIBE" record --reach -o "$2" -- "$PROG" "$1" change >"$1/out" 2>"$3" &
    rec=$!
    wait_file "$1/done.1"
    kill -USR1 "$rec"
    wait_line "$3" 'leak classes on request: 1 process\(es\) scanned at [0-9.]+s'
}

D=$WORK/run
scan_on_request "$D" "$WORK/r.mscr" "$WORK/err"
at=$(sed -En 's/.*leak classes on request: 1 process\(es\) scanned at ([0-9.]+)s.*/\1/p' "$WORK/err")
touch "$D/go.2"
rc=0
wait "$rec" || rc=$?
expect "record's exit status (the program's)" "$rc" 0
grep -q 'leak classes: 2 scan(s)' "$WORK/err" || fail "not two scans: $(cat "$WORK/err")"

expect "classes at the scan on request" "$(blocks "$WORK/r.mscr" --at "${at}s" | tr '\n' ';')" \
    "1001 reachable;1002 reachable;1003 definite;1004 indirect;1005 indirect;1006 possible;1007 possible;1008 reachable;1010 reachable;1011 reachable;"
expect "classes at exit" "$(blocks "$WORK/r.mscr" | tr '\n' ';')" \
    "1001 reachable;1003 definite;1004 indirect;1005 indirect;1006 possible;1007 possible;1008 reachable;1010 reachable;1011 reachable;1013 definite;"
"$MEMSCRIBE" leaks --at "${at}s" --format=json "$WORK/r.mscr" 2>/dev/null >"$WORK/at.json" || fail "leaks --at"
expect "the scan shown is not at exit" "$(jq '.processes[0].reach.at_exit' "$WORK/at.json")" false
"$MEMSCRIBE" leaks --at "${at}s" "$WORK/r.mscr" 2>/dev/null >"$WORK/at.txt" || fail "leaks --at (text)"
grep -Eq '^  scan at [0-9.]+s: definite 1003 bytes in 1 blocks' "$WORK/at.txt" ||
    fail "leaks --at does not date the scan: $(cat "$WORK/at.txt")"
# Before any scan (half way to it from the program's start, the trace's first
# event: on a loaded machine the program can start after half the scan's time):
# none to show.
start=$("$MEMSCRIBE" dump "$WORK/r.mscr" 2>/dev/null | awk 'NR == 1 { print $1 }')
half=$(awk -v s="$start" -v t="$at" 'BEGIN { printf "%.6f", (s + t) / 2 }')
"$MEMSCRIBE" leaks --at "${half}s" "$WORK/r.mscr" 2>/dev/null >"$WORK/early.txt" || fail "leaks --at $half"
grep -q 'leak classes: no scan at or before this moment' "$WORK/early.txt" ||
    fail "leaks before any scan: $(cat "$WORK/early.txt")"

# The program saw no signal: its output is that of a run alone.
mkdir "$WORK/plain"
touch "$WORK/plain/go.1" "$WORK/plain/go.2"
"$PROG" "$WORK/plain" change >"$WORK/plain.out" || fail "the program alone failed"
diff -u "$WORK/plain.out" "$D/out" >&2 || fail "the output changed under record --reach and SIGUSR1"

# Scanned on request, then killed before its exit: no scan at exit, so
# report's lost bytes are those of the scan while it ran, not "at exit".
D2=$WORK/killed
scan_on_request "$D2" "$WORK/k.mscr" "$WORK/err2"
pkill -KILL -f -- "^$PROG $D2" || fail "no program to kill"
wait "$rec" || true
"$MEMSCRIBE" report "$WORK/k.mscr" >"$WORK/k.txt" 2>/dev/null || fail "report of the killed run"
grep -q '^  lost at last scan: ' "$WORK/k.txt" ||
    fail "report of a run scanned on request, then killed: $(grep -E 'lost at' "$WORK/k.txt")"
