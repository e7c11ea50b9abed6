#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe diff on two builds of one program (tests/programs/diff_prog.c):
# a grown buffer and an extra leak give exactly those changes, in total
# and per site, though three functions moved 200 lines down; --lines
# pairs the site that did not move and tells the moved ones apart; a trace against itself is all zeros; a
# window of one side; outputs and bad input. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" diff MEMSCRIBE MS_PROGRAMS
B=$WORK/base.mscr N=$WORK/new.mscr

# In nanoseconds: the whole program runs in a few 10 us units (the default
# unit), so its last allocations could share the trace end's time, which
# the window [end, end] below must not include.
"$MEMSCRIBE" record --time-unit ns -o "$B" -- "$MS_PROGRAMS/diff_base/diff_prog" >/dev/null 2>&1 ||
    fail "record diff_base"
"$MEMSCRIBE" record --time-unit ns -o "$N" -- "$MS_PROGRAMS/diff_new/diff_prog" >/dev/null 2>&1 ||
    fail "record diff_new"

"$MEMSCRIBE" diff --format=json --top 0 "$B" "$N" >"$WORK/d.json"
t() { jq ".total.$1" "$WORK/d.json"; }
expect "total allocations change" "$(t allocations_change)" 1
expect "total bytes change" "$(t allocated_bytes_change)" 564
expect "total peak change" "$(t peak_bytes_change)" 500
expect "total leaked change" "$(t leaked_bytes_change)" 64
expect "total temporary change" "$(t temporary_change)" 0
expect "match" "$(jq -r .match "$WORK/d.json")" function
expect "sites" "$(jq .sites "$WORK/d.json")" 4
row() { jq ".rows[] | select(.site[0] == \"$1\") | .$2" "$WORK/d.json"; }
expect "make_buffer bytes" "$(row make_buffer allocated_bytes_base) $(row make_buffer allocated_bytes_new)" "1000 1500"
expect "make_buffer peak change" "$(row make_buffer peak_bytes_change)" 500
expect "make_buffer allocations change" "$(row make_buffer allocations_change)" 0
expect "leak_more: new only" "$(row leak_more allocations_base) $(row leak_more allocations_new)" "0 1"
expect "leak_more leaked change" "$(row leak_more leaked_bytes_change)" 64
for f in leak_some churn; do
    for m in allocations allocated_bytes peak_bytes leaked_bytes temporary; do
        expect "$f $m change" "$(row $f ${m}_change)" 0
    done
done
expect "sorted by peak: first" "$(jq -r '.rows[0].site[0]' "$WORK/d.json")" make_buffer
"$MEMSCRIBE" diff --format=json --sort leaked "$B" "$N" >"$WORK/l.json"
expect "sorted by leaked: first" "$(jq -r '.rows[0].site[0]' "$WORK/l.json")" leak_more

# By line, the moved functions are sites of one side each.
"$MEMSCRIBE" diff --format=json --top 0 --lines "$B" "$N" >"$WORK/lines.json"
expect "--lines: match" "$(jq -r .match "$WORK/lines.json")" line
expect "--lines: sites" "$(jq .sites "$WORK/lines.json")" 6
lrow() { jq -c "[.rows[] | select(.site[0] | startswith(\"$1 \")) | [.allocations_base, .allocations_new]]" "$WORK/lines.json"; }
expect "--lines: make_buffer paired" "$(lrow make_buffer)" "[[1,1]]"
expect "--lines: leak_some moved" "$(lrow leak_some | jq -c sort)" "[[0,1],[1,0]]"
expect "--lines: churn moved" "$(lrow churn | jq -c sort)" "[[0,20],[20,0]]"
expect "--lines: totals unchanged" "$(jq .total.allocated_bytes_change "$WORK/lines.json")" 564

# A trace against itself: every change zero, every site paired.
"$MEMSCRIBE" diff --format=json --top 0 "$N" "$N" >"$WORK/self.json"
expect "self: non-zero changes" \
    "$(jq '[.total, .rows[] | to_entries[] | select(.key | endswith("_change")) | select(.value != 0)] | length' "$WORK/self.json")" 0
expect "self: sites" "$(jq .sites "$WORK/self.json")" 4
expect "self: the new side is counted" "$(jq .total.allocations_new "$WORK/self.json")" 23

# Windows: an empty window of the base ([end, end]) against the whole of
# the same trace: the changes are the whole trace's numbers.
"$MEMSCRIBE" diff --format=json --base-from end --base-to end "$N" "$N" >"$WORK/w.json"
expect "window: base allocations" "$(jq .total.allocations_base "$WORK/w.json")" 0
expect "window: change is the whole" "$(jq .total.allocations_change "$WORK/w.json")" 23
expect "window: leaked change" "$(jq .total.leaked_bytes_change "$WORK/w.json")" 104
[ "$(jq .base.from_ns "$WORK/w.json")" = "$(jq .new.to_ns "$WORK/w.json")" ] || fail "window: base does not start at the end"

# Text and CSV: the total first, then the sites.
"$MEMSCRIBE" diff "$B" "$N" >"$WORK/d.txt"
grep -q "sites matched by function chain" "$WORK/d.txt" || fail "text: no heading"
awk '/\(total\)/ { found = 1 } END { exit !found }' "$WORK/d.txt" || fail "text: no total row"
"$MEMSCRIBE" diff --format=csv "$B" "$N" >"$WORK/d.csv"
expect "CSV rows" "$(wc -l <"$WORK/d.csv")" 6
expect "CSV total bytes change" "$(awk -F, 'NR == 2 { print $6 }' "$WORK/d.csv")" 564
grep -q "usage: memscribe diff" <("$MEMSCRIBE" diff --help) || fail "--help"

# --frames N, as in every command that prints stacks: at most N frames per
# site (leaf first), a cut site ending in "... K more"; sites are still
# matched on all their frames, so the numbers do not change.
"$MEMSCRIBE" diff --format=json --top 0 --frames 1 "$B" "$N" >"$WORK/f1.json"
expect "--frames 1: sites" "$(jq -c '[.rows[].site]' "$WORK/f1.json")" \
    '[["make_buffer","... 4 more"],["churn","... 4 more"],["leak_more","... 4 more"],["leak_some","... 4 more"]]'
expect "--frames 1: totals unchanged" "$(jq -c .total "$WORK/f1.json")" "$(jq -c .total "$WORK/d.json")"
"$MEMSCRIBE" diff --format=json --top 0 --frames 0 "$B" "$N" >"$WORK/f0.json"
expect "--frames 0: every frame" "$(jq -c '[.rows[].site]' "$WORK/f0.json")" \
    "$(jq -c '[.rows[].site]' "$WORK/d.json")"
# Rows leave out the entry chain (__libc_start_call_main < __libc_start_main
# < _start: docs/symbols.md, "The frame of interest"); a cut row counts the
# frames it cut before it; --all-frames shows every frame.
"$MEMSCRIBE" diff --frames 1 "$B" "$N" >"$WORK/f2.txt"
grep -q " make_buffer < \.\.\. 1 more$" "$WORK/f2.txt" || fail "--frames 1: text: $(cat "$WORK/f2.txt")"
echo "ok: --frames 1: make_buffer < ... 1 more"
"$MEMSCRIBE" diff --frames 2 "$B" "$N" >"$WORK/f2.txt"
grep -q " make_buffer < main$" "$WORK/f2.txt" || fail "--frames 2: text: $(cat "$WORK/f2.txt")"
"$MEMSCRIBE" diff --all-frames "$B" "$N" >"$WORK/f2.txt"
grep -q " make_buffer < main < __libc_start_call_main < __libc_start_main < _start$" "$WORK/f2.txt" ||
    fail "--all-frames: text: $(cat "$WORK/f2.txt")"
echo "ok: --frames 2: make_buffer < main; --all-frames: ... < _start"
grep -q -- "--frames N" <("$MEMSCRIBE" diff --help) || fail "--help does not list --frames"

# Bad input.
echo "not a trace" >"$WORK/bad.mscr"
set +e
"$MEMSCRIBE" diff "$B" "$WORK/bad.mscr" 2>"$WORK/e1"
expect "bad trace: exit" $? 1
"$MEMSCRIBE" diff "$B" 2>"$WORK/e2"
expect "one trace: exit" $? 2
"$MEMSCRIBE" diff --sort nosuch "$B" "$N" 2>"$WORK/e3"
expect "bad --sort: exit" $? 2
"$MEMSCRIBE" diff --from soon "$B" "$N" 2>"$WORK/e4"
expect "bad --from: exit" $? 2
"$MEMSCRIBE" diff --frames many "$B" "$N" 2>"$WORK/e5"
expect "bad --frames: exit" $? 2
set -e
grep -q "bad.mscr" "$WORK/e1" || fail "bad trace: message: $(cat "$WORK/e1")"
echo "PASS"
