#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --sample BYTES (docs/record-sampling.md). With --sample 1 every
# block is sampled with weight 1: the report equals the exact trace's. At
# 16 KiB only sampled blocks and their frees are in the trace (no free of
# an unsampled block: every free ends a recorded block), the trace says
# its rate (format 1.3), every output labels its figures (and leaves out
# temporary allocations, which it does not estimate), and the
# estimates of main's bytes are near the exact trace's: MEMSCRIBE_SAMPLE_SEED
# fixes which blocks are sampled, so the figures below repeat run to run.
# The bounds are about four standard errors of each estimate
# (sqrt(rate / bytes)): 3 % of 412 MB allocated, 8 % of 41 MB leaked.
source "$(dirname "$0")/record_lib.sh"

P=$MS_PROGRAMS/col_sample
"$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$P" >"$WORK/out" || fail "exact record exited with $?"
"$MEMSCRIBE" record -q --sample 1 -o "$WORK/s1.mscr" -- "$P" >/dev/null || fail "--sample 1 exited with $?"
MEMSCRIBE_SAMPLE_SEED=1 "$MEMSCRIBE" record -q --sample 16K -o "$WORK/s16.mscr" -- "$P" >/dev/null ||
    fail "--sample 16K exited with $?"

# The figures of main's one process, as "name value" lines.
figures() {
    "$MEMSCRIBE" report --format=json "$1" 2>/dev/null | jq -r '.processes[0] |
        "allocations \(.allocations)", "allocated_bytes \(.allocated_bytes)", "frees \(.frees)",
        "peak_bytes \(.peak_bytes)", "peak_blocks \(.peak_blocks)", "leaked_bytes \(.leaked_bytes)",
        "leaked_blocks \(.leaked_blocks)", "temporary \(.temporary)",
        "temporary_bytes \(.temporary_bytes)", "unmatched_frees \(.unmatched_frees)"'
}
figures "$WORK/exact.mscr" >"$WORK/exact.txt"
figures "$WORK/s1.mscr" >"$WORK/s1.txt"
diff "$WORK/exact.txt" "$WORK/s1.txt" >&2 || fail "--sample 1 differs from the exact trace (above)"
grep -q "^allocations 2001[0-9][0-9]$" "$WORK/exact.txt" || fail "exact: $(head -1 "$WORK/exact.txt")"

# The sampled trace: format 1.7 with its rate; a sample of the blocks;
# no free that does not end a recorded block.
"$MEMSCRIBE" dump --header "$WORK/s16.mscr" >"$WORK/s16.dump" || fail "dump failed"
# (1.13: its exact counters, tests/e2e/record_sample_exact.sh)
grep -q "^# memscribe trace version 1.13$" "$WORK/s16.dump" || fail "not a 1.13 trace"
grep -q " sample_bytes=16384$" "$WORK/s16.dump" || fail "dump header has no sample_bytes=16384"
n_malloc=$(grep -c " malloc " "$WORK/s16.dump" || true)
n_free=$(grep -c " free " "$WORK/s16.dump" || true)
n_loose=$(grep " free " "$WORK/s16.dump" | grep -vc " ends=#" || true)
[ "$n_loose" = 0 ] || fail "$n_loose frees of blocks the trace does not hold"
# 412 MB at one point per 16 KiB: about 25,000 blocks of main's 200,000.
[ "$n_malloc" -gt 20000 ] && [ "$n_malloc" -lt 32000 ] || fail "$n_malloc mallocs sampled"
[ "$n_free" -gt 18000 ] && [ "$n_free" -lt "$n_malloc" ] || fail "$n_free frees of $n_malloc mallocs"

# Estimates against the exact figures.
figures "$WORK/s16.mscr" >"$WORK/s16.txt"
near() { # near NAME PERCENT
    local want got
    want=$(awk -v k="$1" '$1 == k { print $2 }' "$WORK/exact.txt")
    got=$(awk -v k="$1" '$1 == k { print $2 }' "$WORK/s16.txt")
    awk -v w="$want" -v g="$got" -v p="$2" 'BEGIN { d = (g - w) / w * 100; exit !(d <= p && d >= -p) }' ||
        fail "$1: estimate $got is not within $2 % of the exact $want"
    echo "$1: exact $want, estimate $got"
}
near allocated_bytes 3
near leaked_bytes 8
# Temporary allocations are not estimated (ana_sample.h): a sampled trace
# misses the calls between a block's malloc and free. Left out.
grep -q "^temporary null$" "$WORK/s16.txt" || fail "16K: $(grep '^temporary ' "$WORK/s16.txt")"
# Counts are estimates too (each block stands for 1/p blocks): about four
# standard errors (sqrt(sum (1 - p) / p)) are 4 % of 200,000 allocations,
# 13 % of 20,000 leaked blocks.
near allocations 5
near frees 5
near leaked_blocks 13
grep -q "^unmatched_frees 0$" "$WORK/s16.txt" || fail "unmatched frees in the sampled trace"

# Blocks far above the rate (64 KiB and more at 1 KiB: p = 1 - e^-64, 1 in
# a double) are each sampled and stand for one block: every count and byte
# figure of the sampled trace is the exact trace's.
PH=$MS_PROGRAMS/col_phases
"$MEMSCRIBE" record -q -o "$WORK/ph.mscr" -- "$PH" || fail "col_phases: exact record exited with $?"
"$MEMSCRIBE" record -q --sample 1K -o "$WORK/ph1k.mscr" -- "$PH" || fail "col_phases: --sample 1K exited with $?"
# (Temporary allocations aside: a sampled trace leaves them out.)
figures "$WORK/ph.mscr" | grep -v "^temporary" >"$WORK/ph.txt"
figures "$WORK/ph1k.mscr" | grep -v "^temporary" >"$WORK/ph1k.txt"
grep -q "^allocations 28$" "$WORK/ph.txt" || fail "col_phases: $(head -1 "$WORK/ph.txt")"
diff "$WORK/ph.txt" "$WORK/ph1k.txt" >&2 || fail "col_phases at 1K differs from the exact trace (above)"
# Per site too (report's tables of top sites, every column but temporary),
# and each estimate's standard error is 0.
for t in ph ph1k; do
    "$MEMSCRIBE" report --format=json "$WORK/$t.mscr" 2>/dev/null |
        jq -S '.processes[0].top | del(.temporary) | map_values(map(del(.temporary)))' >"$WORK/$t.all"
    jq -S 'map_values(map(with_entries(select(.key | endswith("_se") | not))))' "$WORK/$t.all" >"$WORK/$t.top"
done
grep -q '"allocations": 16' "$WORK/ph.top" || fail "col_phases: no site of 16 allocations"
diff "$WORK/ph.top" "$WORK/ph1k.top" >&2 || fail "col_phases at 1K: per-site figures differ (above)"
jq -e '[.[][] | to_entries[] | select(.key | endswith("_se")) | .value] |
    length > 0 and all(. == 0)' "$WORK/ph1k.all" >/dev/null ||
    fail "col_phases at 1K: a standard error that is not 0, or none: $(head -c 600 "$WORK/ph1k.all")"

# Labels: report text and JSON, and a note on stderr for every analysis.
"$MEMSCRIBE" report "$WORK/s16.mscr" >"$WORK/report.txt" 2>"$WORK/report.err" || fail "report failed"
grep -q "^note: sampled trace (record --sample 16384) with exact counts: calls, allocations, frees" "$WORK/report.txt" ||
    fail "report text has no sampling note"
"$MEMSCRIBE" report --format=json "$WORK/s16.mscr" 2>/dev/null |
    jq -e '.sampled == {"sample_bytes": 16384, "bytes": "estimate", "counts": "estimate", "peak_unbiased": false, "temporary": "not estimated"}' >/dev/null ||
    fail "report JSON has no sampled member"
"$MEMSCRIBE" report --format=json "$WORK/exact.mscr" | jq -e 'has("sampled") | not' >/dev/null ||
    fail "an exact trace's JSON says sampled"
for cmd in leaks timeline window; do
    "$MEMSCRIBE" "$cmd" --format=json "$WORK/s16.mscr" 2>/dev/null | jq -e '.sampled.sample_bytes == 16384' >/dev/null ||
        fail "$cmd JSON has no sampled member"
done
for cmd in leaks timeline histogram; do
    "$MEMSCRIBE" "$cmd" "$WORK/s16.mscr" >/dev/null 2>"$WORK/err" || fail "$cmd failed: $(cat "$WORK/err")"
    grep -q "sampled trace (record --sample 16384)" "$WORK/err" || fail "$cmd: no sampling note on stderr"
done

# Size classes are those of the recorded sizes (16 to 4,111 bytes in main),
# not of the estimates (a 16-byte block stands for about 16 KiB).
"$MEMSCRIBE" histogram --format=csv "$WORK/s16.mscr" 2>/dev/null >"$WORK/hist.csv"
awk -F, 'NR > 1 && $2 >= 8192 { bad = 1 } END { exit bad }' "$WORK/hist.csv" ||
    fail "histogram: a class of 8 KiB or more: $(cat "$WORK/hist.csv")"

# A rate that is not a byte count is a usage error.
set +e
"$MEMSCRIBE" record --sample 12X -- "$P" >/dev/null 2>"$WORK/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "sample wants a byte count" "$WORK/err" || fail "--sample 12X: exit $rc"
# The HTML page says so too, where a reader looks first; an exact trace's
# page does not (chromium renders the page: the note is the script's).
# shellcheck source=tests/e2e/html_chrome.sh
source "$(dirname "$0")/html_chrome.sh"
for t in s16 exact; do
    "$MEMSCRIBE" html -o "$WORK/$t.html" "$WORK/$t.mscr" 2>/dev/null || fail "html of $t.mscr failed"
    dump_dom "$WORK" "$WORK/$t.dom" "$WORK/chrome.err" "$READY" "file://$WORK/$t.html" ||
        fail "chromium exited with $?: $(tail -5 "$WORK/chrome.err")"
done
grep -q '<p class="warn" id="sampled">Sampled trace (record --sample 16,384 bytes): calls, allocations, frees, their bytes, temporary allocations and the heap.s usable bytes are counted' \
    "$WORK/s16.dom" || fail "the sampled trace's page has no sampling note: $(grep -o '<p class="warn" id="sampled"[^<]*' "$WORK/s16.dom")"
grep -q '<p class="warn" id="sampled" hidden=""></p>' "$WORK/exact.dom" ||
    fail "the exact trace's page shows a sampling note: $(grep -o '<p class="warn" id="sampled"[^<]*' "$WORK/exact.dom")"
echo "ok: --sample 1 is exact; 16K: $n_malloc mallocs, $n_free frees, estimates within bounds"
