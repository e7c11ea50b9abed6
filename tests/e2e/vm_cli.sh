#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vmem, frag and the address-space parts of timeline and html on one
# recording: exit codes (help 0, usage 2, bad files 1), JSON shapes, the
# committed column, the HTML section.
source "$(dirname "$0")/record_lib.sh"
command -v jq > /dev/null || fail "jq is needed (scripts/setup.sh --test)"

T="$WORK/t.mscr"
"$MEMSCRIBE" record -q -o "$T" -- "$MS_PROGRAMS/vm_reserve" > /dev/null || fail "record exited with $?"

expect_rc() {
    local want=$1
    shift
    set +e
    "$@" > "$WORK/out" 2> "$WORK/err"
    local rc=$?
    set -e
    [ "$rc" -eq "$want" ] || fail "$* exited with $rc, expected $want: $(cat "$WORK/err")"
}
expect_rc 0 "$MEMSCRIBE" vmem --help
expect_rc 0 "$MEMSCRIBE" frag --help
expect_rc 2 "$MEMSCRIBE" vmem --by nothing "$T"
expect_rc 2 "$MEMSCRIBE" vmem --origin nowhere "$T"
expect_rc 0 "$MEMSCRIBE" vmem --from peak "$T" # peak: when heap in use peaked (ana_select.sh)
expect_rc 2 "$MEMSCRIBE" vmem --from nowish "$T"
expect_rc 2 "$MEMSCRIBE" frag --granularity 0 "$T"
expect_rc 2 "$MEMSCRIBE" frag --at soon "$T"
expect_rc 1 "$MEMSCRIBE" vmem "$WORK/missing.mscr"
grep -q "missing.mscr" "$WORK/err" || fail "the error does not name the file"
expect_rc 1 "$MEMSCRIBE" frag --svg "$WORK/no/such/dir/map.svg" "$T"
printf 'not a trace' > "$WORK/junk.mscr"
expect_rc 1 "$MEMSCRIBE" frag "$WORK/junk.mscr"

# JSON shapes.
"$MEMSCRIBE" vmem --format json --by origin "$T" > "$WORK/v.json"
jq -e '.groups[0].group and (.lifetimes | length) > 0 and (.totals | length) > 0' "$WORK/v.json" \
    > /dev/null || fail "vmem JSON lacks groups, lifetimes or totals"
"$MEMSCRIBE" frag --format json "$T" > "$WORK/f.json"
jq -e '.processes[0] | (.is_32bit == false) and .largest_gap_bytes > 0 and .collector_bytes > 0' \
    "$WORK/f.json" > /dev/null || fail "frag JSON: $(head -c 400 "$WORK/f.json")"
# Committed memory next to heap and RSS: the program's libraries at least.
"$MEMSCRIBE" timeline --format json "$T" > "$WORK/t.json"
jq -e '[.processes[0].rows[].committed_bytes] | max > 0' "$WORK/t.json" > /dev/null ||
    fail "timeline has no committed memory"
# The HTML report's address-space section.
"$MEMSCRIBE" html -o "$WORK/r.html" "$T" 2> /dev/null || fail "html failed"
grep -q 'id="addrspace"' "$WORK/r.html" && grep -q 'class="fr-map"' "$WORK/r.html" ||
    fail "the HTML report has no address-space map"
echo "vm_cli: exit codes, JSON, timeline and HTML right"
