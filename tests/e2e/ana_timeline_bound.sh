#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bounded answers (issue 60, item 3; docs/timeline.md): timeline --max-points N
# asked at 1 ns makes at most N rows per process, at the smallest multiple of
# the interval asked that fits, with a note on stderr; those rows are the
# rows asked at that interval, byte for byte; without the bound the same
# question is refused. On tests/programs/rec_agg recorded exactly and
# aggregated, and the live page's query (points=) through serve's options.
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
# Unbounded, 1 ns over rec_agg's ~100 ms is more rows than a timeline makes.
if "$MEMSCRIBE" timeline --interval 1ns "$WORK/exact.mscr" >/dev/null 2>"$WORK/err"; then
    fail "--interval 1ns without a bound was answered"
fi
grep -q 'too small' "$WORK/err" || fail "--interval 1ns: $(cat "$WORK/err")"
echo "ok: without --max-points, 1 ns is refused"
finish "timeline answers are bounded by --max-points"
