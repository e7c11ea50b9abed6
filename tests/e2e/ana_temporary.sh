#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Temporary allocations, strict and loose: tests/programs/ana_temporary.c
# states the numbers (a std::map-like node freed after other frees is not
# temporary by default; --temporary-threshold N brings the loose rule back).
# Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana-temp MEMSCRIBE MS_PROGRAMS
T=$WORK/t.mscr

"$MEMSCRIBE" record -o "$T" -- "$MS_PROGRAMS/ana_temporary" >"$WORK/out" 2>"$WORK/err" ||
    fail "record exited with $?: $(cat "$WORK/err")"
# usage: temp ARGS...: report --format=json ARGS, leaves $WORK/r.json.
temp() {
    "$MEMSCRIBE" report --format=json --top 0 "$@" "$T" >"$WORK/r.json"
}
site() { # site FUNCTION FIELD: a per-site number of the allocating function
    jq "[.processes[0].top.allocations[] | select(.stack[0] | test(\"$1\")) | .$2] | add" \
        "$WORK/r.json"
}

temp
expect "strict: temporary" "$(jq '.total.temporary' "$WORK/r.json")" 15
expect "strict: temporary bytes" "$(jq '.total.temporary_bytes' "$WORK/r.json")" \
    $((10 * 100 + 60 + 70 + 3 * 40))
expect "strict: map nodes" "$(site map_nodes temporary)" 0
expect "strict: pair" "$(site pair temporary)" 1
expect "strict: across threads" "$(site across_threads temporary)" 1
expect "strict: worker" "$(site worker temporary)" 3

temp --temporary-threshold 0
expect "loose 0: temporary" "$(jq '.total.temporary' "$WORK/r.json")" 20
expect "loose 0: map nodes" "$(site map_nodes temporary)" 5
temp --temporary-threshold 1
expect "loose 1: temporary" "$(jq '.total.temporary' "$WORK/r.json")" 21
expect "loose 1: pair" "$(site pair temporary)" 2
echo "PASS"
