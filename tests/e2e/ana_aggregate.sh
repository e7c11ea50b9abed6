#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Aggregated traces read by every analysis (docs/aggregate.md): one program,
# tests/programs/ana_aggregate.c, recorded exactly, with --aggregate (1 s)
# and with --aggregate=1ms, gives the numbers it makes in all three, and the
# same outputs: report and leaks (JSON), histogram, tree, flamegraph (folded,
# every cost), the window of the whole trace, diff (every change zero),
# pprof (go tool pprof's totals), DHAT's totals and massif's peak. What only
# an aggregated trace does: its note and JSON keys, a timeline at its cuts,
# leaks --at and a window rounded to cuts; a trace that switched at
# --max-size against the exact one of a longer run, in one pass and in
# parallel ranges; replay, --temporary-threshold and the exports of one
# row per call refuse it, naming the file and why. And programs nobody here
# wrote, sqlite3 and perl: the same totals and leaks both ways.
# Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-aggregate MEMSCRIBE MS_PROGRAMS
M=$MEMSCRIBE
MS=1000000

# usage: rec NAME [RECORD OPTIONS]: $WORK/NAME.mscr
rec() {
    "$M" record -q "${@:2}" -o "$WORK/$1.mscr" -- "$MS_PROGRAMS/ana_aggregate" >/dev/null \
        2>"$WORK/$1.rec" || fail "record $1: $(cat "$WORK/$1.rec")"
}
rec ex
rec ag --aggregate
rec ag1 --aggregate=1ms

# The 1 ms trace really is both kinds: blocks written one by one (kept
# across cuts), batch rows and transient moments.
"$M" dump "$WORK/ag1.mscr" >"$WORK/ag1.dump"
[ "$(grep -c ' heap_batch ' "$WORK/ag1.dump")" -ge 10 ] || fail "ag1: few batch rows"
[ "$(grep -c ' heap_transient ' "$WORK/ag1.dump")" -ge 2 ] || fail "ag1: no transient moments"
[ "$(grep -c ' #[0-9]* \(malloc\|realloc\) ' "$WORK/ag1.dump")" -ge 20 ] || fail "ag1: few kept blocks"
[ "$("$M" dump "$WORK/ex.mscr" | grep -c ' #[0-9]* malloc ')" -ge 1000 ] || fail "ex: not exact"

# usage: norm CMD...: memscribe CMD's JSON without what differs between two
# runs or names the file (pids, times, the file, the aggregation's keys and
# notes, the calls per function: an aggregated trace's batch rows count apart).
norm() {
    "$M" "$@" 2>/dev/null | jq -S 'walk(if type == "object" then del(.file, .aggregate_ns, .trace_notes,
        .aggregate_from_ns, .at_ns, .to_ns, .events_read, .pid, .calls, .run_time_ns, .first_ns,
        .last_ns, .peak_ns, .peak_rss_bytes, .peak_rss_ns) else . end)'
}
# usage: text CMD...: memscribe CMD's text without its first line (the file).
text() {
    "$M" "$@" 2>/dev/null | tail -n +2
}
# usage: same WHAT: $WORK/WHAT.{ex,ag,ag1} are identical.
same() {
    for t in ag ag1; do
        cmp -s "$WORK/$1.ex" "$WORK/$1.$t" ||
            fail "$1: $t differs from the exact trace: $(diff "$WORK/$1.ex" "$WORK/$1.$t" | head -20)"
    done
    [ -s "$WORK/$1.ex" ] || fail "$1: empty"
    echo "ok: $1 the same"
}
for t in ex ag ag1; do
    T=$WORK/$t.mscr
    norm report --format=json --top 0 "$T" >"$WORK/report.$t"
    norm leaks --format=json "$T" >"$WORK/leaks.$t"
    norm histogram --format=json "$T" >"$WORK/histogram.$t"
    norm window --format=json "$T" >"$WORK/window.$t"
    text tree "$T" >"$WORK/tree.$t"
    for c in allocations bytes leaked peak temporary; do
        "$M" flamegraph --folded --cost "$c" "$T" -o - 2>/dev/null | grep -v '^#' >"$WORK/flame-$c.$t"
    done
done
for w in report leaks histogram window tree flame-allocations flame-bytes flame-leaked flame-peak \
    flame-temporary; do
    same "$w"
done

# The numbers the program makes, in each trace: per function allocations,
# bytes, temporary, peak share, leaked (tests/programs/ana_aggregate.c).
site() { # site TRACE FUNCTION FIELD
    jq "[.processes[0].top.allocations[] | select(.stack[0] | test(\"^$2\")) | .$3] | add" \
        "$WORK/report.$1"
}
for t in ex ag ag1; do
    for want in "storm 1000 140500 1000 0 0" "kept 20 1280 1 0 0" "peak 50 50000 1 50000 0" \
        "grow 31 4960 30 310 0" "zero 5 0 5 0 0" "leak 3 999 0 999 999" "worker 100 4800 100 0 0"; do
        read -r fn a b tmp pk lk <<<"$want"
        got="$(site "$t" "$fn" allocations) $(site "$t" "$fn" allocated_bytes)"
        got="$got $(site "$t" "$fn" temporary) $(site "$t" "$fn" peak_bytes)"
        got="$got $(site "$t" "$fn" leaked_bytes)"
        expect_eq "$t: $fn" "$got" "$a $b $tmp $pk $lk"
    done
done
echo "ok: each function's numbers in every trace"
total() { jq ".total.$2" "$WORK/report.$1"; }
# The peak: peak()'s 50 blocks, grow()'s last, the leaks and the block
# pthread_create keeps, each site's share adding up to it.
expect "peak" "$(total ag1 peak_bytes)" \
    "$(jq '[.processes[0].top.allocations[].peak_bytes] | add' "$WORK/report.ag1")"
expect "peak blocks" "$(total ag1 peak_blocks)" 55

# diff of the exact trace and each aggregated one: every change is zero.
for t in ag ag1; do
    "$M" diff --format=json --top 0 "$WORK/ex.mscr" "$WORK/$t.mscr" 2>/dev/null >"$WORK/diff.$t"
    expect "diff ex $t: changes" "$(jq '[.. | objects | to_entries[] |
        select(.key | endswith("_change")) | .value] | map(select(. != 0)) | length' \
        "$WORK/diff.$t")" 0
    expect "diff ex $t: allocations" "$(jq .total.allocations_new "$WORK/diff.$t")" \
        "$(total ex allocations)"
done

# Exports from the model: DHAT's and pprof's totals, massif's peak.
for t in ex ag1; do
    "$M" export --to dhat -o "$WORK/$t.dhat" "$WORK/$t.mscr" 2>/dev/null || fail "dhat $t"
    expect "dhat $t: tb" "$(jq '[.pps[].tb] | add' "$WORK/$t.dhat")" "$(total ex allocated_bytes)"
    expect "dhat $t: tbk" "$(jq '[.pps[].tbk] | add' "$WORK/$t.dhat")" "$(total ex allocations)"
    expect "dhat $t: gb" "$(jq '[.pps[].gb] | add' "$WORK/$t.dhat")" "$(total ex peak_bytes)"
    "$M" export --to massif -o "$WORK/$t.massif" "$WORK/$t.mscr" 2>/dev/null || fail "massif $t"
    expect "massif $t: peak" "$(grep -B3 '^heap_tree=peak' "$WORK/$t.massif" |
        sed -n 's/^mem_heap_B=//p')" "$(total ex peak_bytes)"
done
if command -v go >/dev/null; then
    export HOME=$WORK GOCACHE=$WORK/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
    pp() { # pp TRACE SAMPLE_INDEX: go tool pprof's total
        go tool pprof -top -unit=B -sample_index="$2" "$WORK/$1.pb.gz" 2>/dev/null |
            sed -n 's/.*Total samples = \([0-9]*\)B* *$/\1/p'
    }
    for t in ex ag1; do
        "$M" export --to pprof -o "$WORK/$t.pb.gz" "$WORK/$t.mscr" 2>/dev/null || fail "pprof $t"
        expect "pprof $t: alloc_objects" "$(pp "$t" alloc_objects)" "$(total ex allocations)"
        expect "pprof $t: alloc_space" "$(pp "$t" alloc_space)" "$(total ex allocated_bytes)"
        expect "pprof $t: inuse_space" "$(pp "$t" inuse_space)" "$(total ex leaked_bytes)"
    done
else
    fail "go is not installed: run scripts/setup.sh --test"
fi

# What says the trace is aggregated: report's note and JSON keys.
"$M" report "$WORK/ag1.mscr" >"$WORK/ag1.txt" 2>/dev/null
grep -q '^note: aggregated trace (record --aggregate=1ms)' "$WORK/ag1.txt" || fail "report: no note"
"$M" report "$WORK/ex.mscr" >"$WORK/ex-report.txt" 2>/dev/null
grep -q aggregated "$WORK/ex-report.txt" && fail "report of ex: a note"
"$M" report --format=json "$WORK/ag.mscr" 2>/dev/null >"$WORK/ag.json"
expect "aggregate_ns" "$(jq .aggregate_ns "$WORK/ag.json")" 1000000000
expect "leaks: aggregate_ns" "$(jq .aggregate_ns <<<"$("$M" leaks --format=json \
    "$WORK/ag1.mscr" 2>/dev/null)")" "$MS"
expect "exact: aggregate_ns" "$(jq .aggregate_ns <<<"$("$M" report --format=json \
    "$WORK/ex.mscr" 2>/dev/null)")" null

# The timeline at cuts: an interval not a multiple of 1 ms goes up to one,
# every row at a cut but the last, which holds every allocation.
"$M" timeline --format=json --interval 1500us "$WORK/ag1.mscr" >"$WORK/tl.json" 2>"$WORK/tl.err"
grep -q 'not a multiple' "$WORK/tl.err" || fail "timeline: no warning: $(cat "$WORK/tl.err")"
expect "timeline interval" "$(jq .interval_ns "$WORK/tl.json")" $((2 * MS))
expect "timeline rows off cuts" "$(jq "[.processes[0].rows[:-1][] | .time_ns % $((2 * MS))] |
    map(select(. != 0)) | length" "$WORK/tl.json")" 0
expect "timeline allocations" "$(jq '.processes[0].rows[-1].allocations' "$WORK/tl.json")" \
    "$(total ex allocations)"
# Into a file first: grep -q ends at its match, and under pipefail the
# command writing on into the closed pipe would fail the test.
"$M" timeline "$WORK/ag1.mscr" >"$WORK/tl.txt" 2>/dev/null
grep -q 'interval granularity' "$WORK/tl.txt" || fail "timeline: no note"

# leaks --at inside an interval: the cut after it; window: out to the cuts.
"$M" leaks --format=json --at 5500us "$WORK/ag1.mscr" >"$WORK/at.json" 2>"$WORK/at.err"
expect "leaks --at" "$(jq .at_ns "$WORK/at.json")" $((6 * MS))
grep -q 'falls inside an interval' "$WORK/at.err" || fail "leaks --at: no warning"
"$M" window --format=json --from 2500us --to 7500us "$WORK/ag1.mscr" >"$WORK/w.json" 2>/dev/null
expect "window bounds" "$(jq -c '[.from_ns, .to_ns, .asked_from_ns, .asked_to_ns]' "$WORK/w.json")" \
    "[$((2 * MS)),$((8 * MS)),2500000,7500000]"

# A trace that switches to aggregated (record --max-size) against the exact
# trace of the same longer run (100 rounds of the phases): the same numbers,
# in one pass and in parallel ranges that start after the switch.
"$M" record -q -o "$WORK/ex100.mscr" -- "$MS_PROGRAMS/ana_aggregate" 100 >/dev/null 2>&1 ||
    fail "record ex100"
"$M" record -q --max-size 4K --aggregate=1ms -o "$WORK/ms.mscr" -- \
    "$MS_PROGRAMS/ana_aggregate" 100 >/dev/null 2>&1 || fail "record --max-size"
from=$("$M" report --format=json "$WORK/ms.mscr" 2>/dev/null | jq .aggregate_from_ns)
[ "${from:-0}" -gt 0 ] 2>/dev/null || fail "--max-size: no switch ($from)"
for t in ex100 ms; do
    norm report --format=json --top 0 "$WORK/$t.mscr" >"$WORK/switch.$t"
    MEMSCRIBE_JOBS=2 MEMSCRIBE_RANGE_EVENTS=1000 norm report --format=json --top 0 \
        "$WORK/$t.mscr" >"$WORK/ranges.$t"
    norm leaks --format=json "$WORK/$t.mscr" >"$WORK/leaks100.$t"
done
for w in switch ranges leaks100; do
    cmp -s "$WORK/$w.ex100" "$WORK/$w.ms" ||
        fail "$w: the switched trace differs: $(diff "$WORK/$w.ex100" "$WORK/$w.ms" | head -20)"
done
expect "switched: allocations" "$(jq .total.allocations "$WORK/ranges.ms")" $((100 * 1109 + 100 + 1))
expect "switched: temporary" "$(jq .total.temporary "$WORK/ranges.ms")" $((100 * 1037 + 100))

# Refusals: exit 1, the file and the reason named, no output left.
refuse() { # refuse WHAT PATTERN CMD...
    local rc=0
    "$M" "${@:3}" >/dev/null 2>"$WORK/refuse.err" || rc=$?
    expect_eq "$1: exit" "$rc" 1
    grep -q "ag1.mscr: .*$2" "$WORK/refuse.err" || fail "$1: $(cat "$WORK/refuse.err")"
}
for f in heaptrack csv sqlite; do
    refuse "export $f" "--to $f refuses an aggregated trace" export --to "$f" \
        -o "$WORK/out.$f" "$WORK/ag1.mscr"
    [ -e "$WORK/out.$f" ] && fail "export $f: an output was left"
done
refuse replay "cannot be replayed" replay "$WORK/ag1.mscr"
refuse "report --temporary-threshold" "strict rule" report --temporary-threshold 1 \
    "$WORK/ag1.mscr"
echo "ok: refusals"
# Programs nobody here wrote: sqlite3 on a script, perl building and
# deleting a hash (its hash seed fixed, or two runs differ), recorded
# exactly, with --aggregate=10ms and with --keep-last 20ms give report's same
# totals and leaks; --keep-last's latest segment ends with the whole run's
# leaks, and each kept segment's blocks live at its start are the whole run's
# then (docs/aggregate.md, "Flight recorder"). A process with none live then
# is left out of both: a segment that began before the process's first call
# (a loaded machine rotates early) has not seen it yet, where the whole run
# lists it with 0.
need sqlite3
need perl
printf '%s\n' 'create table t(a, b);' \
    'with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000)' \
    '  insert into t select x, hex(randomblob(20)) from c;' \
    'select count(*), sum(length(b)) from t;' >"$WORK/z.sql"
# usage: real NAME CMD...: NAME's report totals, exact and aggregated, the same.
real() {
    local name=$1 mode
    shift
    for mode in ex ag kl; do
        local opt=()
        [ "$mode" = ag ] && opt=(--aggregate=10ms)
        [ "$mode" = kl ] && opt=(--keep-last 20ms --aggregate=10ms)
        "$M" record -q "${opt[@]}" -o "$WORK/$name.$mode.mscr" -- "$@" >/dev/null \
            2>"$WORK/$name.$mode.rec" || fail "record $name ($mode): $(cat "$WORK/$name.$mode.rec")"
        "$M" report --format=json --top 0 "$WORK/$name.$mode.mscr" 2>/dev/null |
            jq -c '.total | [.allocations, .allocated_bytes, .frees, .peak_bytes, .peak_blocks,
                .leaked_bytes, .leaked_blocks, .temporary, .temporary_bytes]' >"$WORK/$name.$mode.tot"
        "$M" leaks --format=json --top 0 "$WORK/$name.$mode.mscr" 2>/dev/null |
            jq -c '[.stacks[] | [.leaked_bytes, .leaked_blocks, .stack]]' >"$WORK/$name.$mode.leaks"
    done
    expect "$name: totals, aggregated" "$(cat "$WORK/$name.ag.tot")" "$(cat "$WORK/$name.ex.tot")"
    cmp -s "$WORK/$name.ex.leaks" "$WORK/$name.ag.leaks" || fail "$name: leaks differ"
    expect "$name: totals, --keep-last" "$(cat "$WORK/$name.kl.tot")" "$(cat "$WORK/$name.ex.tot")"
    cmp -s "$WORK/$name.ex.leaks" "$WORK/$name.kl.leaks" || fail "$name: leaks differ (--keep-last)"
    [ "$(jq '.[0]' "$WORK/$name.ex.tot")" -gt 10000 ] || fail "$name: few allocations"
    local segs seg from
    mapfile -t segs < <(find "$WORK/$name.kl.mscr.last" -name 'seg-*.mscr' | sort)
    [ "${#segs[@]}" -ge 1 ] && [ "${#segs[@]}" -le 3 ] || fail "$name: ${#segs[@]} segments"
    "$M" leaks --format=json --top 0 "${segs[-1]}" 2>/dev/null |
        jq -c '[.stacks[] | [.leaked_bytes, .leaked_blocks, .stack]]' >"$WORK/$name.seg.leaks"
    cmp -s "$WORK/$name.kl.leaks" "$WORK/$name.seg.leaks" || fail "$name: the latest segment's leaks"
    for seg in "${segs[@]}"; do
        from=$("$M" report --format=json "$seg" 2>/dev/null | jq .keep_last.from_ns)
        [ "$from" -gt 0 ] || continue
        for f in "$WORK/$name.kl.mscr" "$seg"; do
            "$M" leaks --format=json --top 0 --at "${from}ns" "$f" 2>/dev/null |
                jq -c '[.processes[] | select(.leaked_blocks > 0) | [.pid, .leaked_bytes, .leaked_blocks]]' \
                    >"$WORK/$name.at.$(basename "$f")"
        done
        expect "$name: $(basename "$seg"): blocks live at its start" \
            "$(cat "$WORK/$name.at.$(basename "$seg")")" "$(cat "$WORK/$name.at.$name.kl.mscr")"
    done
}
real sqlite3 sqlite3 :memory: ".read $WORK/z.sql"
# shellcheck disable=SC2016 # perl's own $ in perl's code
PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 real perl perl -e \
    'my %h; $h{$_} = [$_ x 3] for 1 .. 50000; delete $h{$_} for 1 .. 25000; print scalar(keys %h), "\n"'
finish "PASS"
