#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeline --from, --to (a zoom; the live view's, docs/serve.md): the rows of a
# range are the whole trace's rows at the same times (every column, every
# process), but the first one's heap_max, which is its heap (the range starts
# there); the range's top sites over time are the whole trace's at those times;
# a range past the end ends with the whole trace's last row; an aggregated
# trace's range starts at a cut; rows one time unit apart at the finest; --to
# before --from is a usage error. On tests/programs/rec_agg recorded exactly
# and aggregated (two processes, threads), and on the golden traces.
# Needs MEMSCRIBE, MS_PROGRAMS, MS_SOURCE.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana_timeline_range MEMSCRIBE MS_PROGRAMS MS_SOURCE
need jq
"$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$MS_PROGRAMS/rec_agg" 30 || fail "record failed"
"$MEMSCRIBE" record -q --aggregate=1ms -o "$WORK/agg.mscr" -- "$MS_PROGRAMS/rec_agg" 30 ||
    fail "record --aggregate failed"

# usage: rows JSON [FROM_NS]: every process's rows as "pid time: columns", sorted;
# with FROM_NS the rows before it left out and heap_max of the rows at it made heap.
rows() {
    jq -r --argjson f "${2:--1}" '.processes[] | .pid as $p | .rows[]
        | select(.time_ns >= $f)
        | (if .time_ns == $f then .heap_max_bytes = .heap_bytes else . end)
        | "\($p) \(.time_ns): \([.heap_bytes, .heap_max_bytes, .allocated_bytes, .allocations,
             .live_blocks, .rss_bytes, .committed_bytes, .reserved_bytes] | map(tostring) | join(" "))"' \
        "$1" | sort
}
# usage: sites JSON [FROM_NS [TO_NS]]: the sites' bytes at each time in the range.
sites() {
    jq -r --argjson f "${2:--1}" --argjson t "${3:-1e30}" '.site_times_ns as $ts | .sites[]
        | (.stack | join("<")) as $s | .bytes as $b
        | [range(0; $ts | length)] | map(select($ts[.] >= $f and $ts[.] <= $t)) | .[] as $i
        | "\($s) \($ts[$i]) \($b[$i])"' "$1" | sort
}

for t in exact agg; do
    f=$WORK/$t.mscr
    iv=1000000 # 1 ms: rec_agg runs for about 100 ms
    "$MEMSCRIBE" timeline --format=json --sites 4 --interval "${iv}ns" "$f" >"$WORK/$t.whole" ||
        fail "$t: timeline failed"
    end=$(jq '[.processes[].rows[-1].time_ns] | max' "$WORK/$t.whole")
    # 20 ms from 20 ms after the program's first row: on a loaded machine
    # the program may start later than 40 ms into the trace.
    first=$(jq '[.processes[].rows[0].time_ns] | min' "$WORK/$t.whole")
    from=$(((first / iv + 20) * iv)) to=$(((first / iv + 40) * iv))
    [ "$end" -ge "$to" ] || fail "$t: rec_agg ran from $first to $end ns, not past $to"
    [ "$t" = agg ] && agg_first=$first
    "$MEMSCRIBE" timeline --format=json --sites 4 --interval "${iv}ns" --from "${from}ns" \
        --to "${to}ns" "$f" >"$WORK/$t.range" || fail "$t: timeline --from --to failed"
    expect "$t: the range" "$(jq -c '[.from_ns, .to_ns, .interval_ns]' "$WORK/$t.range")" \
        "[$from,$to,$iv]"
    rows "$WORK/$t.whole" "$from" | awk -v t="$to" '{ split($2, a, ":"); if (a[1] + 0 <= t) print }' \
        >"$WORK/want"
    rows "$WORK/$t.range" "$from" >"$WORK/got"
    [ -s "$WORK/got" ] || fail "$t: no rows in the range"
    diff "$WORK/want" "$WORK/got" >"$WORK/diff" || fail "$t: the range's rows differ: $(head "$WORK/diff")"
    echo "ok: $t: $(wc -l <"$WORK/got") rows from $from to $to ns, the whole trace's"
    sites "$WORK/$t.range" >"$WORK/got"
    sites "$WORK/$t.whole" "$from" "$to" >"$WORK/want"
    [ "$(wc -l <"$WORK/got")" -ge 21 ] || fail "$t: few site values in the range: $(wc -l <"$WORK/got")"
    diff "$WORK/want" "$WORK/got" >"$WORK/diff" || fail "$t: the range's sites differ: $(head -3 "$WORK/diff")"
    echo "ok: $t: the range's sites over time ($(wc -l <"$WORK/got") values) are the whole trace's"
    # Past the end: the rows from `from` to the last, which is the whole trace's last.
    "$MEMSCRIBE" timeline --format=json --interval "${iv}ns" --from "${from}ns" --to 1h "$f" \
        >"$WORK/$t.tail" 2>/dev/null || fail "$t: timeline --to 1h failed"
    rows "$WORK/$t.whole" "$from" >"$WORK/want"
    rows "$WORK/$t.tail" "$from" >"$WORK/got"
    diff "$WORK/want" "$WORK/got" >"$WORK/diff" || fail "$t: a range past the end: $(head "$WORK/diff")"
    expect "$t: a range past the end ends at the last event" \
        "$(jq '[.processes[].rows[-1].time_ns] | max' "$WORK/$t.tail")" "$end"
done
# An aggregated trace: a range from inside an interval starts at the cut before it
# (20 ms after its first row's millisecond, as above).
cut=$(((agg_first / 1000000 + 20) * 1000000))
"$MEMSCRIBE" timeline --format=json --interval 1ms --from "$((cut + 500000))ns" --to "$((cut + 10000000))ns" \
    "$WORK/agg.mscr" >"$WORK/cut" 2>/dev/null || fail "timeline of the aggregated trace from $((cut + 500000)) ns failed"
expect "an aggregated trace's range starts at a cut" "$(jq .from_ns "$WORK/cut")" "$cut"
# The finest rows: a time unit (10 us here) apart, each a moment's heap,
# 200 us from 20 ms after the first process's first row (on a loaded
# machine the program may start later than 20 ms into the trace).
first=$(jq '.processes[0].rows[0].time_ns' "$WORK/exact.whole")
fine=$(((first / 1000000 + 20) * 1000000))
"$MEMSCRIBE" timeline --format=json --interval 10us --from "${fine}ns" --to "$((fine + 200000))ns" \
    "$WORK/exact.mscr" >"$WORK/fine" || fail "timeline at 10 us failed"
expect "rows 10 us apart over 200 us (one process)" \
    "$(jq '[.processes[0].rows[].time_ns] | length' "$WORK/fine")" 21
# The golden traces, ranged over their middle at a hundredth of their run.
for g in "$MS_SOURCE"/tests/golden/v1_*.mscr; do
    "$MEMSCRIBE" timeline --format=json "$g" >"$WORK/g.whole" 2>/dev/null || continue
    iv=$(jq .interval_ns "$WORK/g.whole")
    from=$((iv * 30)) to=$((iv * 60))
    "$MEMSCRIBE" timeline --format=json --interval "${iv}ns" --from "${from}ns" --to "${to}ns" "$g" \
        >"$WORK/g.range" 2>/dev/null || fail "$(basename "$g"): timeline --from --to failed"
    rows "$WORK/g.whole" "$from" | awk -v t="$to" '{ split($2, a, ":"); if (a[1] + 0 <= t) print }' \
        >"$WORK/want"
    rows "$WORK/g.range" "$from" >"$WORK/got"
    diff "$WORK/want" "$WORK/got" >"$WORK/diff" || fail "$(basename "$g"): $(head -3 "$WORK/diff")"
done
echo "ok: the golden traces' ranges are their whole timelines' rows"
code=0
"$MEMSCRIBE" timeline --from 30ms --to 20ms "$WORK/exact.mscr" >/dev/null 2>&1 || code=$?
expect "exit of --to before --from" "$code" 2
echo "ok: timeline --from --to"
# An aggregated trace's process (rec_agg's fork child) has its shares of
# its peak in rows after its end: its sites are not folded at its end
# (ana_plan_fold_trace), so the report's tables by process read as the whole
# model's (the child's peak rows were missing once).
"$MEMSCRIBE" report --format=json "$WORK/agg.mscr" >"$WORK/fold.json" 2>/dev/null
MEMSCRIBE_FOLD=0 "$MEMSCRIBE" report --format=json "$WORK/agg.mscr" >"$WORK/whole.json" 2>/dev/null
cmp -s "$WORK/fold.json" "$WORK/whole.json" || fail "agg: report's JSON differs from the whole model's"
echo "ok: an aggregated trace's report is not folded"
