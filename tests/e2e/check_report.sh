#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check and report tell one story (docs/architecture.md, "Meanings"): the
# figure of every check option (check's JSON "value", and its base's) is
# the field of report --format=json's "total" that the check's "measure"
# names, on the same trace; and both say the leaks the same way. On the
# demo (examples/memtest_demo) report's leaked is 89,600 bytes and check's
# 12,800: the 76,800 that the built-in suppressions list apart are left
# out, which both now say. With leak classes (record --reach of
# tests/programs/diff_prog.c's two builds): every class check, and
# --max-growth lists the sites that grew for each measure (definitely-lost
# included), a leaked-blocks gate saying that it counts still-reachable
# blocks and pointing to lost-blocks. Needs MEMSCRIBE, MS_BUILD,
# MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" check_report MEMSCRIBE MS_BUILD MS_PROGRAMS
need jq
M=$MEMSCRIBE
D=$WORK/demo.mscr B=$WORK/base.mscr N=$WORK/new.mscr
"$M" record -q -o "$D" -- "$MS_BUILD/examples/memtest_demo" >/dev/null || fail "record the demo"
"$M" record -q --reach -o "$B" -- "$MS_PROGRAMS/diff_base/diff_prog" >/dev/null || fail "record --reach diff_base"
"$M" record -q --reach -o "$N" -- "$MS_PROGRAMS/diff_new/diff_prog" >/dev/null || fail "record --reach diff_new"

# Every check option, each passing or failing: the value is what counts.
PLAIN=(leaked leaked-blocks peak temporary allocations peak-rss)
CLASSES=(definitely-lost lost lost-blocks possibly-lost)
# usage: same TRACE CHECK...: each check's value is report's field.
same() {
    local t=$1 args=() o
    shift
    for o in "$@"; do args+=("--max-$o" 0); done
    local rc=0
    "$M" check --format=json "${args[@]}" "$t" >"$WORK/check.json" 2>/dev/null || rc=$?
    [ "$rc" -le 1 ] || fail "check ${args[*]} $t: exit $rc"
    "$M" report --format=json "$t" >"$WORK/report.json" || fail "report $t"
    expect "$(basename "$t"): checks" "$(jq '.checks | length' "$WORK/check.json")" $#
    jq -r '.checks[] | "\(.check) \(.measure) \(.value)"' "$WORK/check.json" | while read -r name _ key value; do
        want=$(jq --arg k "$key" '.total[$k]' "$WORK/report.json")
        [ "$want" != null ] || fail "$(basename "$t"): $name: report has no total.$key"
        expect "$(basename "$t"): $name is report's total.$key" "$value" "$want"
    done || exit 1
}
# peak-rss is recorded where the run outlasts the first RSS sample: the
# demo runs 2 s.
same "$D" "${PLAIN[@]}"
same "$N" leaked leaked-blocks peak temporary allocations "${CLASSES[@]}"
# The measures are named once: these keys, in this order.
args=()
for o in "${PLAIN[@]}"; do args+=("--max-$o" 0); done
"$M" check --format=json "${args[@]}" "$D" >"$WORK/c.json" 2>/dev/null || true
expect "measures" "$(jq -c '[.checks[].measure]' "$WORK/c.json")" \
    '["unsuppressed_leaked_bytes","unsuppressed_leaked_blocks","peak_bytes","temporary","allocations","peak_rss_bytes"]'
args=()
for o in "${CLASSES[@]}"; do args+=("--max-$o" 0); done
"$M" check --format=json "${args[@]}" "$N" >"$WORK/c.json" 2>/dev/null || true
expect "class measures" "$(jq -c '[.checks[].measure]' "$WORK/c.json")" \
    '["unsuppressed_definitely_lost_bytes","unsuppressed_lost_bytes","unsuppressed_lost_blocks","unsuppressed_possibly_lost_bytes"]'

# A growth check's value and base are each trace's report field.
"$M" check --format=json --base "$B" --max-growth leaked=0,peak=0,allocations=0,definitely-lost=0,lost-blocks=0 \
    "$N" >"$WORK/g.json" 2>/dev/null || true
"$M" report --format=json "$B" >"$WORK/rb.json"
"$M" report --format=json "$N" >"$WORK/rn.json"
jq -r '.checks[] | "\(.check) \(.measure) \(.value) \(.base)"' "$WORK/g.json" | while read -r _ name key value base; do
    expect "growth $name: value" "$value" "$(jq --arg k "$key" '.total[$k]' "$WORK/rn.json")"
    expect "growth $name: base" "$base" "$(jq --arg k "$key" '.total[$k]' "$WORK/rb.json")"
done || exit 1

# The demo's leaks, said the same way: report's leaked splits into
# suppressed and unsuppressed, and check gates the unsuppressed, naming
# both (the emergency pool, 72,704, and stdout's buffer, 4,096, apart).
"$M" report --format=json "$D" >"$WORK/r.json"
expect "report: leaked" "$(jq -c '.total | [.leaked_bytes, .leaked_blocks]' "$WORK/r.json")" '[89600,322]'
expect "report: suppressed" "$(jq -c '.total | [.suppressed_leaked_bytes, .suppressed_leaked_blocks]' "$WORK/r.json")" \
    "[$((72704 + 4096)),2]"
expect "report: unsuppressed" "$(jq -c '.total | [.unsuppressed_leaked_bytes, .unsuppressed_leaked_blocks]' "$WORK/r.json")" \
    '[12800,320]'
"$M" report "$D" >"$WORK/r.txt"
grep -q "^    suppressed: *76800 bytes in 2 blocks, the runtime's one-time allocations" "$WORK/r.txt" ||
    fail "report text: no suppressed line: $(grep -A3 '^  leaked' "$WORK/r.txt")"
grep -q "^    unsuppressed: *12800 bytes in 320 blocks$" "$WORK/r.txt" ||
    fail "report text: no unsuppressed line: $(grep -A3 '^  leaked' "$WORK/r.txt")"
"$M" check --max-leaked 0 "$D" >"$WORK/c.txt" && fail "check --max-leaked 0 passed on the demo"
grep -q "^FAIL  max-leaked 0 *unsuppressed leaked: 12800 bytes (89600 bytes leaked, 76800 bytes suppressed; limit 0 bytes)$" \
    "$WORK/c.txt" || fail "check's line: $(cat "$WORK/c.txt")"

# --max-growth lists the sites that grew for every measure that has sites:
# the new build's leak_more (64 bytes, definitely lost) and its 1,500-byte
# buffer (make_buffer, 1,000 in the base).
"$M" check --base "$B" --max-growth definitely-lost=0,lost=0,lost-blocks=0,leaked-blocks=0,peak=0,allocations=0 \
    "$N" >"$WORK/g.txt" && fail "the growth gate passed"
cat "$WORK/g.txt"
for what in "unsuppressed definitely lost" "unsuppressed lost" "unsuppressed lost blocks" \
    "unsuppressed leaked blocks" "allocations"; do
    awk -v h="the sites that grew in $what against" 'index($0, h) { on = 1; next } on && /leak_more < main/ { ok = 1 }
        on && /^$/ { on = 0 } END { exit !ok }' "$WORK/g.txt" || fail "growth of $what: no leak_more row"
done
awk 'index($0, "the sites that grew in peak heap in use against") { on = 1; next }
    on && /^1000 +1500 +500  make_buffer < main/ { ok = 1 } END { exit !ok }' "$WORK/g.txt" ||
    fail "growth of the peak: no make_buffer row"
grep -q "^ *0 *64 *64  leak_more < main" "$WORK/g.txt" || fail "definitely lost: not 0 -> 64"
# A leaked-blocks gate on a trace with classes says what it counts.
grep -q "^FAIL  max-growth leaked-blocks=0 .*; it counts still-reachable blocks too, lost-blocks the lost ones only$" \
    "$WORK/g.txt" || fail "leaked-blocks on a trace with classes: no pointer to lost-blocks"
"$M" check --format=json --base "$B" --max-growth definitely-lost=0 "$N" >"$WORK/g.json" 2>/dev/null || true
expect "JSON grown, definitely lost" "$(jq -c '.checks[0].grown | map([.definitely_lost_bytes_base,
    .definitely_lost_bytes_new, .definitely_lost_bytes_change, .site[0]])' "$WORK/g.json")" '[[0,64,64,"leak_more"]]'
finish "ok: each check's figure is report's field; growth names its sites for every measure"
