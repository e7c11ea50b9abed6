#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --aggregate (docs/aggregate.md): tests/programs/rec_agg recorded
# exactly, then aggregated at periods of 10 us (nearly every block kept),
# 1 ms and an hour (every short-lived block transient), with the wrapper
# and without it (MEMSCRIBE_AGGREGATE): per process and call site the
# allocations, their bytes, the temporary ones, the leaks and each site's
# bytes at the peak that the aggregated trace's dump adds up to
# (rec_aggregate_sum.py: kept allocations and batch rows, the heap replayed
# with the transient groups) are exactly what `memscribe report` says of
# the exact trace. Then: record -p aggregated (blocks from before the
# attach: their frees and realloc pass through); --reach with --aggregate
# (the scan at exit sees every live block: the cut before it); a program
# killed mid-run (every block it made is in the trace, kept); a killed
# recorder (the trace reads up to its last chunk); record --max-size (exact,
# then aggregated: the sums still the exact trace's); the refusals (exit 2).
# Needs MEMSCRIBE, MS_PROGRAMS, MS_BUILD, MS_SOURCE.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rec_aggregate MEMSCRIBE MS_PROGRAMS MS_BUILD MS_SOURCE
need jq
PROG=$MS_PROGRAMS/rec_agg
SUM=$MS_SOURCE/tests/e2e/rec_aggregate_sum.py

"$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$PROG" || fail "exact record failed"
"$MEMSCRIBE" report --format=json --top 0 "$WORK/exact.mscr" >"$WORK/exact.json" || fail "report"
expect "processes of the exact trace" "$(jq '.processes | length' "$WORK/exact.json")" 2

# usage: same_as_exact NAME TRACE PERIOD_NS [FROM_NS [REPORT]]: TRACE adds up to the
# exact trace's report (exact.json), aggregated from FROM_NS (a pattern; 0).
same_as_exact() {
    "$MEMSCRIBE" dump --header --stacks "$2" >"$WORK/$1.txt" 2>"$WORK/$1.err" ||
        fail "$1: dump failed: $(cat "$WORK/$1.err")"
    [ ! -s "$WORK/$1.err" ] || fail "$1: dump says: $(cat "$WORK/$1.err")"
    grep -q '^# memscribe trace version 1\.8$' "$WORK/$1.txt" || fail "$1: not a format 1.8 trace"
    grep -Eq "^# aggregate period_ns=$3 from_ns=${4:-0}\$" "$WORK/$1.txt" || fail "$1: no aggregate line"
    python3 "$SUM" "$WORK/${5:-exact.json}" "$WORK/$1.txt" >"$WORK/$1.sum" ||
        fail "$1 differs from the exact trace: $(cat "$WORK/$1.sum")"
    echo "ok: $1: $(cat "$WORK/$1.sum")"
}

for p in 10us:10000 1ms:1000000 1h:3600000000000; do
    "$MEMSCRIBE" record -q --aggregate="${p%:*}" -o "$WORK/a${p%:*}.mscr" -- "$PROG" ||
        fail "record --aggregate=${p%:*} failed"
    same_as_exact "aggregate=${p%:*}" "$WORK/a${p%:*}.mscr" "${p#*:}"
done
# An hour: every block the program frees was born and died in one interval.
expect "frees written at a period of an hour" "$(grep -c ' free ' "$WORK/aggregate=1h.txt")" 0
# 10 us: most blocks outlive a cut and are written as they were made.
[ "$(grep -cE ' #[0-9]+ malloc ' "$WORK/aggregate=10us.txt")" -gt 1000 ] ||
    fail "few kept blocks at 10 us: $(grep -cE ' #[0-9]+ malloc ' "$WORK/aggregate=10us.txt")"
# The default period: a second.
"$MEMSCRIBE" record -q --aggregate -o "$WORK/a1s.mscr" -- "$PROG" || fail "record --aggregate failed"
same_as_exact "aggregate" "$WORK/a1s.mscr" 1000000000

# record --max-size: exact until the trace (30 rounds of the threads' calls, 17-28 KB
# exact, its first chunk of 65,536 events ~10 KB) reaches 8 KB, then aggregated at 1 ms
# from then on (a cut at once); the exact stretch's temporaries are the reader's to decide, the
# aggregated one's are in the batch rows.
"$MEMSCRIBE" record -q -o "$WORK/exact30.mscr" -- "$PROG" 30 || fail "exact record of 30 rounds failed"
"$MEMSCRIBE" report --format=json --top 0 "$WORK/exact30.mscr" >"$WORK/exact30.json" || fail "report"
"$MEMSCRIBE" record --max-size 8K --aggregate=1ms -o "$WORK/max.mscr" -- "$PROG" 30 \
    2>"$WORK/max.err" || fail "record --max-size failed: $(cat "$WORK/max.err")"
grep -Eq '^memscribe: record: the trace reached --max-size \([0-9]+ bytes written\) at [0-9.]+ s: aggregated from then on$' \
    "$WORK/max.err" || fail "record does not say where it switched: $(cat "$WORK/max.err")"
same_as_exact "max-size" "$WORK/max.mscr" 1000000 '[1-9][0-9]*' exact30.json
expect "the switch's event" "$(grep -c ' aggregate period_ns=1000000 why=max-size ' "$WORK/max-size.txt")" 1
[ "$(awk '/ - aggregate period_ns=/ { exit } / #[0-9]+ malloc / { n++ } END { print n + 0 }' \
    "$WORK/max-size.txt")" -gt 2000 ] || fail "few exact mallocs before the switch"
# It switches near 8 KB (the chunk being built counted, written to know near SIZE), not a
# chunk or a period late (the whole file was 17-23 KB), nor far early.
exact_bytes=$(sed -n 's/.*reached --max-size (\([0-9]*\) bytes written).*/\1/p' "$WORK/max.err")
[ "$exact_bytes" -ge 2048 ] && [ "$exact_bytes" -le 16384 ] ||
    fail "the exact stretch took $exact_bytes bytes at --max-size 8K"
"$MEMSCRIBE" record --max-size 1G -o "$WORK/under.mscr" -- "$PROG" 2>"$WORK/under.err" ||
    fail "record --max-size 1G failed"
grep -q 'stayed under --max-size: exact' "$WORK/under.err" || fail "no word of a limit not reached"
"$MEMSCRIBE" dump --header "$WORK/under.mscr" >"$WORK/under.txt" || fail "dump of the trace under its limit"
! grep -q 'aggregate' "$WORK/under.txt" || fail "a trace under its --max-size is aggregated"

# Without the wrapper: the collector passes MEMSCRIBE_AGGREGATE to the recorder it starts.
env LD_PRELOAD="$MS_BUILD/lib/memscribe/libmemscribe.so" MEMSCRIBE_OUTPUT="$WORK/nw.mscr" \
    MEMSCRIBE_AGGREGATE=1ms "$PROG" || fail "the program without the wrapper failed"
for _ in $(seq 1 600); do
    "$MEMSCRIBE" dump "$WORK/nw.mscr" >/dev/null 2>"$WORK/nw.err" && [ ! -s "$WORK/nw.err" ] && break
    sleep 0.1
done
same_as_exact "without the wrapper" "$WORK/nw.mscr" 1000000

# record -p: the round's heap calls of rec_attach_target (record_attach.sh),
# aggregated over an hour: its 3 thread blocks freed in the round are a batch
# row; the frees of 2 blocks from before the attach and the realloc of a third
# pass through, the realloc as a free and a realloc of NULL (docs/aggregate.md).
D=$WORK/att
mkdir -p "$D"
"$MS_PROGRAMS/rec_attach_target" "$D" 2 >"$D/out" 2>&1 & # round 2 after the detach
target=$!
for _ in $(seq 1 3000); do [ -e "$D/ready.0" ] && break; sleep 0.02; done
"$MEMSCRIBE" record -p "$target" --aggregate=1h -o "$WORK/att.mscr" 2>"$WORK/att.err" &
rec=$!
for _ in $(seq 1 1500); do grep -q "attached to process $target" "$WORK/att.err" 2>/dev/null && break; sleep 0.02; done
touch "$D/go.1"
for _ in $(seq 1 3000); do [ -e "$D/done.1" ] && break; sleep 0.02; done
kill -INT "$rec"
rc=0
wait "$rec" || rc=$?
expect "record -p --aggregate's exit status" "$rc" 0
touch "$D/go.2"
wait "$target" || fail "the attached program failed"
"$MEMSCRIBE" dump "$WORK/att.mscr" >"$WORK/att.txt" || fail "dump of the attached trace"
expect "record -p --aggregate's heap calls" "$(awk '
    $5 == "free" { print "free " ($0 ~ / size=/ ? "known" : "unknown"); next }
    $5 == "realloc" { print "realloc " $6 " " $8; next }
    $5 ~ /^(malloc|calloc)$/ { for (i = 6; i <= NF; i++) if ($i ~ /^size=/) print $5 " " $i }' \
    "$WORK/att.txt" | sort | uniq -c | awk '{ $1 = $1; print }' | tr '\n' ';')" \
    "1 calloc size=300;3 free unknown;5 malloc size=5001;1 realloc old=0x0 size=6001;"
expect "record -p --aggregate's batch rows (blocks bytes)" \
    "$(awk '$5 == "heap_batch" { split($6, b, "="); split($7, y, "="); n += b[2]; s += y[2] } END { print n, s }' \
        "$WORK/att.txt")" "3 21003"

# --reach: the scan at exit sees the blocks of the interval, written before it.
"$MEMSCRIBE" record --reach --aggregate=1h -q -o "$WORK/reach.mscr" -- "$MS_PROGRAMS/rec_reach" \
    >/dev/null || fail "record --reach --aggregate failed"
"$MEMSCRIBE" leaks --format=json "$WORK/reach.mscr" >"$WORK/reach.json" || fail "leaks"
expect "definitely lost bytes, aggregated" "$(jq '.processes[0].reach.definitely_lost_bytes' "$WORK/reach.json")" 1003
expect "indirectly lost bytes, aggregated" "$(jq '.processes[0].reach.indirectly_lost_bytes' "$WORK/reach.json")" 2009

# A program killed mid-run: every block it announced is in the trace (kept:
# live at the end), and its exit.
rc=0
"$MEMSCRIBE" record -q --aggregate=1ms -o "$WORK/kill.mscr" -- "$MS_PROGRAMS/col_crash" kill 5000 \
    >"$WORK/kill.announced" || rc=$?
expect "a killed program's status" "$rc" 137
"$MEMSCRIBE" dump "$WORK/kill.mscr" >"$WORK/kill.txt" || fail "dump of the killed program's trace"
awk '$5 == "malloc" { for (i = 6; i <= NF; i++) if ($i ~ /^addr=/) print substr($i, 6) }' "$WORK/kill.txt" |
    sort >"$WORK/kill.kept"
expect "announced blocks missing from the trace" \
    "$(sort "$WORK/kill.announced" | comm -23 - "$WORK/kill.kept" | wc -l)" 0
grep -q ' process_exit status=' "$WORK/kill.txt" || fail "no process_exit in the killed program's trace"

# The recorder killed: the program runs on; the trace reads up to its last
# chunk, with the batch rows of the intervals cut before.
"$MEMSCRIBE" record -q --aggregate=100ms -o "$WORK/cut.mscr" -- "$MS_PROGRAMS/col_crash" slow 6 \
    >"$WORK/slow.out" 2>/dev/null &
rec=$!
deadline=$((SECONDS + 5))
while [ "$SECONDS" -lt "$deadline" ]; do
    grep -q heap_batch <("$MEMSCRIBE" dump "$WORK/cut.mscr" 2>/dev/null) && break
    sleep 0.2
done
kill -KILL $rec || fail "the recorder ended before it could be killed"
wait $rec 2>/dev/null || true
for _ in $(seq 1 100); do [ -s "$WORK/slow.out" ] && break; sleep 0.2; done
[ -s "$WORK/slow.out" ] || fail "the program did not finish after its recorder was killed"
"$MEMSCRIBE" dump --header "$WORK/cut.mscr" >"$WORK/cut.txt" 2>"$WORK/cut.err" ||
    fail "dump of the cut trace failed: $(cat "$WORK/cut.err")"
grep -q incomplete "$WORK/cut.err" || fail "dump does not call the cut trace incomplete"
grep -q '^# aggregate period_ns=100000000 from_ns=0$' "$WORK/cut.txt" || fail "the cut trace is not aggregated"
grep -q ' heap_batch ' "$WORK/cut.txt" || fail "no batch row in the cut trace"

# Refusals: exit 2, the reason.
for args in "--aggregate --sample 4K" "--aggregate=0" "--aggregate=fast" "--max-size 1M --sample 4K" \
    "--max-size big" "--aggregate=15us"; do
    rc=0
    # shellcheck disable=SC2086 # the words are the options
    "$MEMSCRIBE" record $args -o "$WORK/no.mscr" -- true 2>"$WORK/no.err" || rc=$?
    expect "record $args" "$rc" 2
    [ ! -e "$WORK/no.mscr" ] || fail "record $args made a trace"
done
grep -q 'multiple of the time unit' "$WORK/no.err" || fail "no reason for 15us: $(cat "$WORK/no.err")"
echo "ok: record --aggregate"
