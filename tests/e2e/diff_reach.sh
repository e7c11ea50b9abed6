#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe diff with leak classes (record --reach, docs/diff.md): the
# bytes lost at exit (definitely and indirectly) of each side that has
# classes, per site as `memscribe leaks` gives them, null and empty where a
# side has none; no lost column where neither has; --sort lost refused
# without classes on both sides.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" diff_reach MEMSCRIBE MS_PROGRAMS
need jq
M=$MEMSCRIBE
PROG=$MS_PROGRAMS/rec_reach

"$M" record -q -o "$WORK/plain.mscr" -- "$PROG" >/dev/null || fail "record"
"$M" record -q --reach -o "$WORK/reach.mscr" -- "$PROG" >/dev/null || fail "record --reach"
"$M" leaks --format=json --top 0 --no-default-suppressions "$WORK/reach.mscr" >"$WORK/leaks.json" ||
    fail "leaks"
LOST=$(jq '[.stacks[] | .definitely_lost_bytes + .indirectly_lost_bytes] | add' "$WORK/leaks.json")
expect "lost bytes in leaks" "$LOST" 3012

# A side without classes: its lost bytes null, the change null.
"$M" diff --format=json --top 0 "$WORK/plain.mscr" "$WORK/reach.mscr" >"$WORK/d1.json" || fail "diff"
expect "lost base" "$(jq '.total.lost_bytes_base' "$WORK/d1.json")" null
expect "lost new" "$(jq '.total.lost_bytes_new' "$WORK/d1.json")" "$LOST"
expect "lost change" "$(jq '.total.lost_bytes_change' "$WORK/d1.json")" null

# Both with classes: each site's lost bytes are leaks' of the stacks with
# its function chain (leaks names frames "function (file:line)").
"$M" diff --format=json --top 0 --sort lost "$WORK/reach.mscr" "$WORK/reach.mscr" >"$WORK/d2.json" ||
    fail "diff --sort lost"
jq -r '.rows[] | select(.lost_bytes_new > 0) | "\(.site | join(" < ")) \(.lost_bytes_new)"' \
    "$WORK/d2.json" | sort >"$WORK/got"
jq -r '.stacks[] | select(.definitely_lost_bytes + .indirectly_lost_bytes > 0) |
       "\([.stack[] | sub(" \\(.*\\)$"; "")] | join(" < ")) \(.definitely_lost_bytes + .indirectly_lost_bytes)"' \
    "$WORK/leaks.json" | awk '{ n = $NF; $NF = ""; s[$0] += n } END { for (k in s) print k s[k] }' |
    sort >"$WORK/want"
[ -s "$WORK/want" ] || fail "no lost site in leaks"
diff -u "$WORK/want" "$WORK/got" >&2 || fail "diff's lost bytes per site differ from leaks'"
expect "lost change, a trace against itself" "$(jq '.total.lost_bytes_change' "$WORK/d2.json")" 0

# Neither side with classes: no lost column; --sort lost refused (usage).
"$M" diff --top 1 "$WORK/plain.mscr" "$WORK/plain.mscr" >"$WORK/d3.txt" || fail "diff, no classes"
grep -q "lost" "$WORK/d3.txt" && fail "a lost column without classes: $(head -4 "$WORK/d3.txt")"
rc=0
"$M" diff --sort lost "$WORK/plain.mscr" "$WORK/reach.mscr" >/dev/null 2>"$WORK/err" || rc=$?
expect "--sort lost without classes on both sides: exit" "$rc" 2
grep -q "needs leak classes" "$WORK/err" || fail "no reason: $(cat "$WORK/err")"
finish "ok: diff's lost bytes are leaks', null where a side has no classes"
