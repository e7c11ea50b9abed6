#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeline --sites by each cost (--site-cost: in-use, allocations,
# temporary; the page's three charts of the top sites over time, as
# heaptrack_gui's Consumed, Allocations and Temporary Allocations): every
# site followed, at the last moment the sites' values sum to report's
# totals (leaked bytes, allocations, temporary allocations: another code
# path, the model's), the counted series never fall, and the sites come
# in the order of their cost; --index with a counted cost replays, saying
# why, and answers the same. On tests/programs/rec_agg (two processes,
# threads).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-timeline-sites MEMSCRIBE MS_PROGRAMS MS_SOURCE
need jq
"$MEMSCRIBE" record -q --totals -o "$WORK/agg.mscr" -- "$MS_PROGRAMS/rec_agg" 30 >/dev/null 2>"$WORK/err" ||
    fail "record rec_agg: $(cat "$WORK/err")"

# usage: totals TRACE: report's leaked bytes, allocations, temporary
# allocations, summed over its processes.
totals() {
    "$MEMSCRIBE" report --format=json "$1" |
        jq -r '[.processes | map(.leaked_bytes), map(.allocations), map(.temporary) | add] | @tsv'
}

# usage: ends JSON KEY: each site's last value, in the sites' order.
ends() {
    jq -r --arg k "$2" '[.sites[] | .[$k][-1]] | @tsv' "$1"
}

t=agg
f=$WORK/$t.mscr
read -r leaked allocs temp < <(totals "$f")
sums=()
for cost in in-use allocations temporary; do
    out=$WORK/$t.$cost.json
    "$MEMSCRIBE" timeline --format=json --sites 1000 --site-cost "$cost" "$f" >"$out" 2>"$WORK/err" ||
        fail "$t: timeline --site-cost $cost: $(cat "$WORK/err")"
    key=$(jq -r '.site_cost as $c | {"in-use": "bytes", "allocations": "allocations", "temporary": "temporary"}[$c]' "$out")
    sums+=("$(ends "$out" "$key" | tr '\t' '\n' | awk '{ s += $1 } END { print s + 0 }')")
    # A count so far never falls, and the sites come largest first.
    if [ "$cost" != in-use ]; then
        falls=$(jq --arg k "$key" '[.sites[] | .[$k] as $v | range(1; $v | length) | select($v[.] < $v[. - 1])] | length' "$out")
        expect "$t: $cost: values that fall" "$falls" 0
        order=$(ends "$out" "$key" | tr '\t' '\n' | sort -c -n -r 2>&1 && echo ordered)
        expect "$t: $cost: the sites by their count" "$order" ordered
    fi
done
expect "$t: the sites' last values (in use, allocations, temporary) against report's leaked, allocations, temporary" \
    "${sums[*]}" "$leaked $allocs $temp"
[ "$allocs" -gt 100 ] || fail "$t: only $allocs allocations"
# --index: the totals hold no per-site allocations: the pass answers.
"$MEMSCRIBE" timeline --format=json --index --sites 4 --site-cost allocations "$f" >"$WORK/index.json" 2>"$WORK/err" ||
    fail "$t: timeline --index --site-cost allocations: $(cat "$WORK/err")"
grep -qF "the chunks' totals hold each site's bytes in use, not its allocations; replaying the trace" "$WORK/err" ||
    fail "$t: --index with a counted cost did not say why it replays: $(cat "$WORK/err")"
"$MEMSCRIBE" timeline --format=json --sites 4 --site-cost allocations "$f" >"$WORK/pass.json" 2>/dev/null
cmp -s "$WORK/index.json" "$WORK/pass.json" || fail "$t: --index answered otherwise than the pass"
"$MEMSCRIBE" timeline --sites 2 --site-cost nope "$WORK/agg.mscr" >/dev/null 2>"$WORK/err"
expect "an unknown cost: exit status" "$?" 2
finish "timeline --site-cost: the sites' values end at report's totals, counts never fall, sites by their cost"
