#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The exact counters of record --sample (docs/record-sampling.md, "Exact
# totals"): col_exact, a deterministic program, recorded exact and sampled
# at 64K with three seeds. Each sampled trace's counted totals (report's
# JSON "exact") equal the exact trace's report: calls of each kind,
# allocations, their bytes, frees, temporary allocations and their bytes;
# its heap in usable bytes, peak and end, equal what the program counted
# itself with malloc_usable_size. The text says them without "~", the
# metrics as memscribe_exact_*, check gates on them, the page shows them in
# its cards and summary, and the
# trace is format 1.13 with counter events.
source "$(dirname "$0")/record_lib.sh"

P=$MS_PROGRAMS/col_exact
"$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$P" >"$WORK/own" || fail "exact record exited with $?"
heap_kinds='["malloc","calloc","realloc","reallocarray","free","memalign","posix_memalign","aligned_alloc","valloc","pvalloc"]'
"$MEMSCRIBE" report --format json "$WORK/exact.mscr" 2>/dev/null >"$WORK/exact.json" ||
    fail "report of the exact trace failed"
heap_totals . "$heap_kinds" "$WORK/exact.json" >"$WORK/want"
grep -q '"posix_memalign": 40' "$WORK/want" || fail "exact: no 40 posix_memalign calls: $(cat "$WORK/want")"
grep -q '"temporary": 22000' "$WORK/want" || fail "exact: not 22000 temporary: $(cat "$WORK/want")"
peak=$(awk '$1 == "peak_usable" { print $2 }' "$WORK/own")
left=$(awk '$1 == "heap_usable" { print $2 }' "$WORK/own")
for seed in 1 2 3; do
    MEMSCRIBE_SAMPLE_SEED=$seed "$MEMSCRIBE" record -q --sample 64K -o "$WORK/s$seed.mscr" -- "$P" \
        >"$WORK/own$seed" || fail "record --sample (seed $seed) exited with $?"
    cmp -s "$WORK/own" "$WORK/own$seed" || fail "the program's own count moved under --sample"
    "$MEMSCRIBE" report --format json "$WORK/s$seed.mscr" 2>/dev/null >"$WORK/s$seed.json" ||
        fail "report (seed $seed) failed"
    heap_totals .exact "" "$WORK/s$seed.json" >"$WORK/got"
    diff "$WORK/want" "$WORK/got" >&2 || fail "seed $seed: the counted totals differ from the exact trace's (above)"
    got=$(jq -r '.processes[0].exact | "\(.peak_usable_bytes) \(.heap_usable_bytes)"' "$WORK/s$seed.json")
    [ "$got" = "$peak $left" ] || fail "seed $seed: heap peak and end $got, the program counted $peak $left"
done

# The text: counted figures without "~", the heap's usable bytes; the
# sampled ones still marked.
"$MEMSCRIBE" report --top 1 "$WORK/s1.mscr" >"$WORK/text" 2>/dev/null
grep -q "^  allocations:        52040 (" "$WORK/text" || fail "text: $(grep allocations: "$WORK/text")"
grep -q "^  heap, usable bytes: peak $peak (" "$WORK/text" || fail "text: $(grep 'heap,' "$WORK/text")"
grep -q "^  temporary:          22000 allocations" "$WORK/text" || fail "text: $(grep temporary: "$WORK/text")"
grep -q "^  leaked:             ~" "$WORK/text" || fail "text: leaks not marked as estimates"
grep -q "with exact counts" "$WORK/text" || fail "text: no note of the exact counts"
# The trace: format 1.13, the counters as events.
"$MEMSCRIBE" dump --header "$WORK/s1.mscr" >"$WORK/dump"
grep -q "^# memscribe trace version 1.13$" "$WORK/dump" || fail "not a 1.13 trace: $(head -1 "$WORK/dump")"
grep -q " counter allocations=52040 " "$WORK/dump" || fail "no counter event of the allocations"
# The metrics (Prometheus' text, promtool if it is here) give the same
# counted figures, per process and for the tree.
"$MEMSCRIBE" metrics "$WORK/s1.mscr" >"$WORK/metrics" 2>/dev/null || fail "metrics failed"
for want in 'memscribe_exact_allocations_total{pid="[0-9]*",exe="col_exact"} 52040$' \
    'memscribe_tree_exact_temporary_allocations_total 22000$' \
    "memscribe_exact_heap_usable_peak_bytes{pid=\"[0-9]*\",exe=\"col_exact\"} $peak\$" \
    "memscribe_exact_heap_usable_bytes{pid=\"[0-9]*\",exe=\"col_exact\"} $left\$"; do
    grep -q "^$want" "$WORK/metrics" || fail "metrics: no line like $want"
done
if command -v promtool >/dev/null; then
    promtool check metrics <"$WORK/metrics" || fail "promtool refuses the metrics"
fi
# timeline: the last row's counted figures are the totals.
"$MEMSCRIBE" timeline --format json "$WORK/s1.mscr" 2>/dev/null >"$WORK/tl.json" || fail "timeline failed"
got=$(jq -r '.processes[0].rows[-1] | "\(.counted_allocations) \(.counted_temporary) \(.counted_heap_usable_bytes)"' "$WORK/tl.json")
[ "$got" = "52040 22000 $left" ] || fail "timeline's last row: $got, want 52040 22000 $left"

# check gates on the counted figures: exactly at the limit passes, one
# below fails.
"$MEMSCRIBE" check --max-temporary 22000 --max-allocations 52040 "$WORK/s1.mscr" >/dev/null 2>&1 ||
    fail "check: the counted figures at their limits did not pass"
set +e
"$MEMSCRIBE" check --max-temporary 21999 "$WORK/s1.mscr" >"$WORK/check" 2>/dev/null
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "temporary allocations: 22000 (limit 21999)" "$WORK/check" ||
    fail "check --max-temporary 21999: exit $rc, $(cat "$WORK/check")"

# The page (chromium renders it): the counted cards and summary rows hold
# the same numbers.
# shellcheck source=tests/e2e/html_chrome.sh
source "$(dirname "$0")/html_chrome.sh"
"$MEMSCRIBE" html -o "$WORK/s1.html" "$WORK/s1.mscr" 2>/dev/null || fail "html failed"
dump_dom "$WORK" "$WORK/s1.dom" "$WORK/chrome.err" "$READY" "file://$WORK/s1.html" ||
    fail "chromium exited with $?: $(tail -5 "$WORK/chrome.err")"
for want in 'id="sum-exact_allocations" data-v="52040"' 'id="sum-exact_temporary" data-v="22000"' \
    "id=\"sum-exact_peak_usable_bytes\" data-v=\"$peak\"" \
    "id=\"sum-exact_heap_usable_bytes\" data-v=\"$left\"" \
    '<div class="label">Allocations (counted)</div><div class="value">52,040</div>'; do
    grep -q "$want" "$WORK/s1.dom" || fail "the page has no $want"
done
# Threads and a fork: four threads allocate and free at once, then a
# forked child on its own. Each process's counted totals equal the exact
# trace's; the child's usable heap at the end is what it counted; the
# parent's is what its threads counted plus pthread_create's own blocks
# (four callocs of libc, less than 4 KiB), which the program cannot see.
PT=$MS_PROGRAMS/col_exact_threads
"$MEMSCRIBE" record -q -o "$WORK/te.mscr" -- "$PT" >"$WORK/te.own" || fail "threads: exact record failed"
MEMSCRIBE_SAMPLE_SEED=5 "$MEMSCRIBE" record -q --sample 64K -o "$WORK/ts.mscr" -- "$PT" >"$WORK/ts.own" ||
    fail "threads: record --sample failed"
"$MEMSCRIBE" report --format json "$WORK/te.mscr" 2>/dev/null >"$WORK/te.json"
heap_totals . "$heap_kinds" "$WORK/te.json" >"$WORK/twant"
"$MEMSCRIBE" report --format json "$WORK/ts.mscr" 2>/dev/null >"$WORK/ts.json"
heap_totals .exact "" "$WORK/ts.json" >"$WORK/tgot"
diff "$WORK/twant" "$WORK/tgot" >&2 || fail "threads: the counted totals differ from the exact trace's (above)"
[ "$(jq length "$WORK/tgot")" = 2 ] || fail "threads: not two processes"
child=$(awk '$1 == "child_usable" { print $2 }' "$WORK/ts.own")
parent=$(awk '$1 == "parent_usable" { print $2 }' "$WORK/ts.own")
got=$(jq -r '.processes[1].exact.heap_usable_bytes' "$WORK/ts.json")
[ "$got" = "$child" ] || fail "threads: the child's usable heap $got, it counted $child"
got=$(jq -r '.processes[0].exact.heap_usable_bytes' "$WORK/ts.json")
[ "$got" -ge "$parent" ] && [ $((got - parent)) -lt 4096 ] ||
    fail "threads: the parent's usable heap $got, its threads counted $parent"

# Another allocator as the program's malloc (col_exact linked with
# jemalloc): the counting takes its general path, usable sizes from
# jemalloc's malloc_usable_size. The totals still equal the exact trace's;
# the heap's rise from its end to its peak is what the program counted
# (jemalloc's start-up adds one block, there all along, that the program
# cannot see).
PJ=$MS_PROGRAMS/col_exact_jemalloc
"$MEMSCRIBE" record -q -o "$WORK/je.mscr" -- "$PJ" >"$WORK/je.own" || fail "jemalloc: exact record failed"
MEMSCRIBE_SAMPLE_SEED=2 "$MEMSCRIBE" record -q --sample 64K -o "$WORK/jes.mscr" -- "$PJ" >"$WORK/jes.own" ||
    fail "jemalloc: record --sample failed"
"$MEMSCRIBE" dump "$WORK/jes.mscr" >"$WORK/jes.dump"
grep -q 'module_load .*libjemalloc\.so\.2' "$WORK/jes.dump" ||
    fail "jemalloc: not the program's allocator in the trace"
# (jemalloc's own entry points are sampled but not counted: no calls.)
"$MEMSCRIBE" report --format json "$WORK/je.mscr" 2>/dev/null >"$WORK/je.json"
heap_totals . "[]" "$WORK/je.json" >"$WORK/jewant"
"$MEMSCRIBE" report --format json "$WORK/jes.mscr" 2>/dev/null >"$WORK/jes.json"
heap_totals .exact "[]" "$WORK/jes.json" >"$WORK/jegot"
diff "$WORK/jewant" "$WORK/jegot" >&2 || fail "jemalloc: the counted totals differ from the exact trace's (above)"
own=$(awk '$1 == "peak_usable" { p = $2 } $1 == "heap_usable" { h = $2 } END { print p - h }' "$WORK/jes.own")
got=$(jq -r '.processes[0].exact | .peak_usable_bytes - .heap_usable_bytes' "$WORK/jes.json")
[ "$got" = "$own" ] || fail "jemalloc: the heap's fall from its peak to its end $got usable bytes, the program counted $own"

# An exact trace has no counters, and its JSON no "exact".
"$MEMSCRIBE" dump "$WORK/exact.mscr" >"$WORK/exact.dump"
grep -q " counter " "$WORK/exact.dump" && fail "an exact trace has counter events"
"$MEMSCRIBE" report --format json "$WORK/exact.mscr" 2>/dev/null | jq -e '.processes[0] | has("exact") | not' >/dev/null ||
    fail "an exact trace's JSON has \"exact\""
echo "ok: three seeds' counted totals equal the exact trace's; heap peak $peak usable bytes, as counted by the program"
