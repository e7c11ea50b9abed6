#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rows by what they show (tests/programs/ana_rows.c): three malloc calls on
# one source line are one call site of Count 3 in report, leaks and window,
# not three rows that read the same; other sites stay apart. Needs
# MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/ana_lib.sh
source "$(dirname "$0")/ana_lib.sh"
record ana_rows
T=$WORK/t.mscr
# The three calls are three recorded stacks (their return addresses differ).
n=$("$MEMSCRIBE" dump "$T" | awk '/ malloc / && / size=24 / { print $NF }' | sort -u | wc -l)
expect "recorded stacks of the three calls" "$n" 3

"$MEMSCRIBE" report --top 0 --format=json "$T" >"$WORK/r.json"
three='.processes[0].top.allocations[] | select(.stack[0] | test("^three "))'
expect "report: rows of three()" "$(jq "[$three] | length" "$WORK/r.json")" 1
expect "report: its allocations" "$(jq "$three | .allocations" "$WORK/r.json")" 3
expect "report: its leaked bytes" "$(jq "$three | .leaked_bytes" "$WORK/r.json")" 72
other='.processes[0].top.allocations[] | select(.stack[0] | test("^other "))'
expect "report: other() apart" "$(jq "$other | .allocations" "$WORK/r.json")" 5
expect "report: temporary of other()" "$(jq "$other | .temporary" "$WORK/r.json")" 5

"$MEMSCRIBE" leaks --format=json "$T" >"$WORK/l.json"
expect "leaks: rows of three()" "$(jq '[.stacks[] | select(.stack[0] | test("^three "))] | length' "$WORK/l.json")" 1
expect "leaks: its blocks" "$(jq '.stacks[] | select(.stack[0] | test("^three ")) | .leaked_blocks' "$WORK/l.json")" 3
expect "leaks: its bytes" "$(jq '.stacks[] | select(.stack[0] | test("^three ")) | .leaked_bytes' "$WORK/l.json")" 72

"$MEMSCRIBE" window --top 0 --format=json "$T" >"$WORK/w.json"
w='.rows[] | select(.stack[0] | test("^three "))'
expect "window: rows of three()" "$(jq "[$w] | length" "$WORK/w.json")" 1
expect "window: its Count" "$(jq "$w | .count" "$WORK/w.json")" 3
expect "window: its Impacting Size" "$(jq "$w | .impacting_size" "$WORK/w.json")" 72
echo "PASS"
