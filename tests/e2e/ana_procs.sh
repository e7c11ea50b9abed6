#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Per-process reports (WPA's Process column) on a forking program: report,
# leaks, tree and window give one section (or node, or pid column) per
# process (--by-process: one executable, two processes), --pid keeps one,
# and the all-processes total adds them up.
# tests/programs/ana_procs.c states the numbers. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana-procs MEMSCRIBE MS_PROGRAMS
T=$WORK/p.mscr

"$MEMSCRIBE" record -o "$T" -- "$MS_PROGRAMS/ana_procs" >"$WORK/out" 2>"$WORK/err" ||
    fail "record exited with $?: $(cat "$WORK/err")"
"$MEMSCRIBE" report --format=json --top 0 "$T" >"$WORK/r.json"
expect "processes" "$(jq '.processes | length' "$WORK/r.json")" 2
# The process whose leaks come from child_work is the child.
"$MEMSCRIBE" leaks --format=json --top 0 --by-process "$T" >"$WORK/l.json"
child=$(jq '.stacks[] | select(.stack[0] | test("child_work")) | .pid' "$WORK/l.json")
parent=$(jq '.stacks[] | select(.stack[0] | test("parent_work")) | .pid' "$WORK/l.json")
[ -n "$child" ] && [ -n "$parent" ] && [ "$child" != "$parent" ] || fail "no child/parent leak rows"
expect "child's leak" "$(jq '.stacks[] | select(.stack[0] | test("child_work")) | .leaked_bytes' "$WORK/l.json")" 2000
expect "parent's leak" "$(jq '.stacks[] | select(.stack[0] | test("parent_work")) | .leaked_bytes' "$WORK/l.json")" 1000
p() { jq ".processes[] | select(.pid == $1) | .$2" "$WORK/r.json"; }
expect "child temporary" "$(p "$child" temporary)" 1
expect "child temporary bytes" "$(p "$child" temporary_bytes)" 30
expect "parent temporary" "$(p "$parent" temporary)" 0
expect "child top leaked site" \
    "$(jq -r ".processes[] | select(.pid == $child) | .top.leaked[0].stack[0] | test(\"child_work\")" "$WORK/r.json")" true
# The total adds the processes' leaks and peaks (they never shrink here).
expect "total leaked" "$(jq '.total.leaked_bytes' "$WORK/r.json")" \
    "$(jq '[.processes[].leaked_bytes] | add' "$WORK/r.json")"
# --pid keeps one process.
"$MEMSCRIBE" report --format=json --pid "$child" "$T" >"$WORK/c.json"
expect "--pid: processes" "$(jq '.processes | length' "$WORK/c.json")" 1
expect "--pid: the child" "$(jq '.processes[0].pid' "$WORK/c.json")" "$child"
expect "--pid: total is the child's" "$(jq '.total.allocations' "$WORK/c.json")" "$(p "$child" allocations)"
# The tree has one first-level node per program (parent and child run one
# executable), and with --by-process one per process.
"$MEMSCRIBE" tree --format=json --top 0 "$T" >"$WORK/t.json"
expect "tree: first-level nodes" "$(jq '[.children[].function | test("[(]2 processes[)]$")] | map(select(.)) | length' "$WORK/t.json")" 1
expect "tree: the program's allocations" "$(jq '.children[0].inclusive.allocations' "$WORK/t.json")" \
    "$(jq '.total.allocations' "$WORK/r.json")"
"$MEMSCRIBE" tree --by-process --format=json --top 0 "$T" >"$WORK/t.json"
expect "tree --by-process: first-level nodes" "$(jq '[.children[].function | test("^pid [0-9]+")] | map(select(.)) | length' "$WORK/t.json")" 2
# Window rows carry the process.
"$MEMSCRIBE" window --format=json --top 0 --by function "$T" >"$WORK/w.json"
expect "window: child_work's row is the child's" \
    "$(jq ".rows[] | select(.function | test(\"child_work\")) | select(.impacting_type == \"Impacting\") | .pid" "$WORK/w.json")" "$child"
# The HTML report takes the same selection: its summary is the selection's.
page_summary() {
    python3 -c 'import json, re, sys
page = open(sys.argv[1]).read()
m = re.search(r"<script type=\"application/json\" id=\"ms-data\">(.*?)</script>", page, re.S)
s = json.loads(m.group(1))["summary"]
print(s["leaked_bytes"], s["allocations"], s["process_count"])' "$1"
}
"$MEMSCRIBE" html --pid "$child" -o "$WORK/c.html" "$T"
expect "html --pid child: leaked, allocations, processes" "$(page_summary "$WORK/c.html")" \
    "2000 $(p "$child" allocations) 1"
"$MEMSCRIBE" html --pid "$parent" -o "$WORK/p.html" "$T"
expect "html --pid parent: leaked, allocations, processes" "$(page_summary "$WORK/p.html")" \
    "1000 $(p "$parent" allocations) 1"
"$MEMSCRIBE" html --exe 'ana_pro*' -o "$WORK/e.html" "$T"
expect "html --exe: both processes" "$(page_summary "$WORK/e.html")" \
    "3000 $(jq '.total.allocations' "$WORK/r.json") 2"
"$MEMSCRIBE" html --pid "$child" --base "$T" -o "$WORK/b.html" "$T" 2>"$WORK/err" && rc=0 || rc=$?
expect "html --pid with --base: usage error" "$rc" 2
echo "PASS"
