#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bounded answers (issue 60, item 3; docs/timeline.md): timeline --max-points N
# asked at 1 ns makes at most N rows per process, at the smallest multiple of
# the interval asked that fits, with a note on stderr; those rows are the
# rows asked at that interval, byte for byte; without the bound the same
# question is refused. On tests/programs/rec_agg recorded exactly and
# aggregated, and the live page's query (points=) through serve's options.
# --index's rows (one per chunk's end, from the chunks' totals) are bounded
# too: at every k-th chunk's end and the last, each row the unbounded
# answer's row at that end but heap_max, the highest since the row before.
# --index with --interval, --from and --to (the planner's totals route for a
# timeline, ana_plan_timeline): the chunk ends of the range, none closer than
# the interval to the row before, each the unbounded row at that end.
# Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana_timeline_bound MEMSCRIBE MS_PROGRAMS
need jq
"$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$MS_PROGRAMS/rec_agg" 30 || fail "record failed"
"$MEMSCRIBE" record -q --aggregate=1ms -o "$WORK/agg.mscr" -- "$MS_PROGRAMS/rec_agg" 30 ||
    fail "record --aggregate failed"

for t in exact agg; do
    f=$WORK/$t.mscr
    for n in 3 50 1000; do
        "$MEMSCRIBE" timeline --format=json --interval 1ns --max-points "$n" "$f" \
            >"$WORK/bound.json" 2>"$WORK/bound.err" || fail "$t: --max-points $n failed"
        most=$(jq '[.processes[].rows | length] | max' "$WORK/bound.json")
        [ "$most" -le "$n" ] || fail "$t: --max-points $n: $most rows in a process"
        grep -q 'would make more than' "$WORK/bound.err" ||
            fail "$t: --max-points $n: no note on stderr: $(cat "$WORK/bound.err")"
        iv=$(jq .interval_ns "$WORK/bound.json")
        "$MEMSCRIBE" timeline --format=json --interval "${iv}ns" "$f" >"$WORK/asked.json" ||
            fail "$t: --interval ${iv}ns failed"
        cmp -s "$WORK/bound.json" "$WORK/asked.json" ||
            fail "$t: --max-points $n's rows are not those of --interval ${iv}ns"
        echo "ok: $t: --interval 1ns --max-points $n: every ${iv} ns, at most $most rows a process"
    done
    # an interval that fits is kept, and nothing is said
    "$MEMSCRIBE" timeline --format=json --interval 10ms --max-points 1000 "$f" \
        >"$WORK/fit.json" 2>"$WORK/fit.err" || fail "$t: 10ms failed"
    expect "$t: 10ms kept" "$(jq .interval_ns "$WORK/fit.json")" 10000000
    [ -s "$WORK/fit.err" ] && fail "$t: a note for an interval that fits: $(cat "$WORK/fit.err")"
done
# --index: rows at chunk ends (chunks of 2,048 events: some 60 of them).
MEMSCRIBE_CHUNK_EVENTS=2048 "$MEMSCRIBE" record -q --totals -o "$WORK/tot.mscr" -- \
    "$MS_PROGRAMS/rec_agg" 30 || fail "record --totals failed"
"$MEMSCRIBE" timeline --index --format=json "$WORK/tot.mscr" >"$WORK/all.json" ||
    fail "timeline --index failed"
every=$(jq '.processes[0].rows | length' "$WORK/all.json")
[ "$every" -gt 20 ] || fail "--index: only $every rows; the test wants more chunks"
expect "--index without a bound: a row at every chunk's end" "$(jq .chunk_stride "$WORK/all.json")" 1
for n in 3 10 1000; do
    "$MEMSCRIBE" timeline --index --max-points "$n" --format=json "$WORK/tot.mscr" \
        >"$WORK/ib.json" 2>"$WORK/ib.err" || fail "--index --max-points $n failed"
    k=$(jq .chunk_stride "$WORK/ib.json")
    got=$(jq '.processes[0].rows | length' "$WORK/ib.json")
    [ "$got" -le "$n" ] || fail "--index --max-points $n: $got rows"
    if [ "$n" -ge "$every" ]; then
        expect "--index --max-points $n: every chunk" "$k" 1
        [ -s "$WORK/ib.err" ] && fail "--index --max-points $n: a note: $(cat "$WORK/ib.err")"
    else
        grep -q "rows at every $k chunks' end" "$WORK/ib.err" ||
            fail "--index --max-points $n: no note: $(cat "$WORK/ib.err")"
    fi
    # the unbounded rows at every k-th end and the last, heap_max the
    # highest of the rows since the one before
    want=$(jq -c --argjson k "$k" '.processes[0].rows as $r | ($r | length) as $n
        | [range(0; $n) | select((. + 1) % $k == 0 or . == $n - 1)] as $at
        | [range(0; $at | length) | . as $i
           | ($r[$at[$i]] | del(.heap_max_bytes)) + {heap_max_bytes:
               ([$r[(if $i == 0 then 0 else $at[$i - 1] + 1 end):($at[$i] + 1)][]
                 .heap_max_bytes] | max)}]' "$WORK/all.json")
    have=$(jq -c '[.processes[0].rows[] | (del(.heap_max_bytes)) + {heap_max_bytes}]' "$WORK/ib.json")
    [ "$want" = "$have" ] || fail "--index --max-points $n: rows differ from every ${k}th of the unbounded"
    echo "ok: --index --max-points $n: $got rows, every $k chunks' end"
done

# --index with an interval: the unbounded rows whose ends are at least the
# interval after the row kept before (the last always), each the unbounded
# row but heap_max, the highest of the rows since the one kept before.
# KEEP is jq: from the unbounded rows $r (and $iv, the interval), the
# places of the rows kept, the first row's place, $r.
held() { # usage: held NAME KEEP ARGS...: timeline --index ARGS against KEEP
    local name=$1 keep=$2
    shift 2
    "$MEMSCRIBE" timeline --index --format=json "$@" "$WORK/tot.mscr" >"$WORK/h.json" \
        2>"$WORK/h.err" || fail "$name: timeline --index $* failed: $(cat "$WORK/h.err")"
    want=$(jq -c --argjson iv "${iv:-0}" "[.processes[0].rows as \$r | $keep] | .[0] as \$at | .[1] as \$from
        | .[2] as \$r | [range(0; \$at | length) | . as \$i
        | (\$r[\$at[\$i]] | del(.heap_max_bytes)) + {heap_max_bytes:
            ([\$r[(if \$i == 0 then \$from else \$at[\$i - 1] + 1 end):(\$at[\$i] + 1)][]
              .heap_max_bytes] | max)}]" "$WORK/all.json")
    have=$(jq -c '[.processes[0].rows[] | (del(.heap_max_bytes)) + {heap_max_bytes}]' "$WORK/h.json")
    [ "$want" = "$have" ] || fail "$name: rows differ from the unbounded ones kept: $have"
    echo "ok: $name: $(jq '.processes[0].rows | length' "$WORK/h.json") rows"
}
# the unbounded rows' places at least $iv apart (the first, the last always)
# shellcheck disable=SC2016 # jq's variables, not the shell's
spaced='reduce range(0; $r | length) as $k ([];
    if length == 0 or $k == ($r | length) - 1
       or $r[$k].time_ns - $r[.[-1]].time_ns >= $iv then . + [$k] else . end)'
span=$(jq '.processes[0].rows | .[-1].time_ns - .[0].time_ns' "$WORK/all.json")
for iv in 1 $((span / 10)) $((span / 3)); do
    held "--index --interval ${iv}ns" "($spaced), 0, \$r" --interval "${iv}ns"
    grep -q 'none closer than --interval' "$WORK/h.err" || fail "--interval ${iv}ns: no note"
    [ "$iv" -gt 1 ] && [ "$(jq '.processes[0].rows | length' "$WORK/h.json")" -ge "$every" ] &&
        fail "--interval ${iv}ns kept every row"
done
# a range: the chunks that hold it, from the first ending at or after
# --from to the first ending at or after --to; the first row's heap_max its
# own chunk's
t1=$(jq '.processes[0].rows[5].time_ns - 1' "$WORK/all.json")
t2=$(jq '.processes[0].rows[12].time_ns + 1' "$WORK/all.json")
held "--index --from --to" "[range(5; 14)], 5, \$r" --from "${t1}ns" --to "${t2}ns"
# both, then bounded: at most 3 rows, every k-th of the spaced ones and the last
"$MEMSCRIBE" timeline --index --format=json --interval "$((span / 10))ns" --max-points 3 \
    "$WORK/tot.mscr" >"$WORK/b.json" 2>"$WORK/b.err" || fail "--interval --max-points failed"
[ "$(jq '.processes[0].rows | length' "$WORK/b.json")" -le 3 ] || fail "--interval --max-points 3: more rows"
grep -q 'rows at every [0-9]* of them' "$WORK/b.err" || fail "--max-points 3: no note: $(cat "$WORK/b.err")"
echo "ok: --index --interval --max-points 3: $(jq '.processes[0].rows | length' "$WORK/b.json") rows"

# Unbounded, 1 ns over rec_agg's ~100 ms is more rows than a timeline makes.
if "$MEMSCRIBE" timeline --interval 1ns "$WORK/exact.mscr" >/dev/null 2>"$WORK/err"; then
    fail "--interval 1ns without a bound was answered"
fi
grep -q 'too small' "$WORK/err" || fail "--interval 1ns: $(cat "$WORK/err")"
echo "ok: without --max-points, 1 ns is refused"
finish "timeline answers are bounded by --max-points"
