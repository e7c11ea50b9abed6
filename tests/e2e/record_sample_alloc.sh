#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --sample with the allocators of tests/e2e/record_allocators.sh:
# their own APIs (mallocx, mi_malloc, tc_malloc and their reallocs and
# frees) and their operator new and delete, which do not go through
# malloc, are sampled as malloc is (tests/programs/col_sample3p.cc).
# Before they were, every such block was recorded in a trace that says it
# is sampled, and the reader weighed each by 1/p: the 16 KiB trace's
# estimate was ~8 times the bytes allocated. MEMSCRIBE_SAMPLE_SEED fixes
# which blocks are sampled. Bound: 4 % of the ~206 MB allocated, about
# four standard errors (sqrt(16384 / 206e6) = 0.9 %).
source "$(dirname "$0")/record_lib.sh"

# Heap allocations in a trace, as recorded (dump reads no estimates).
blocks() {
    "$MEMSCRIBE" dump "$1" | awk '$5 ~ /^(malloc|calloc|realloc|aligned_alloc|memalign|posix_memalign)$/ { n++ } END { print n + 0 }'
}
allocated() {
    "$MEMSCRIBE" report --format=json "$1" 2>/dev/null | jq -r '.processes[0].allocated_bytes'
}

for alloc in mimalloc jemalloc tcmalloc; do
    P=$MS_PROGRAMS/col_sample_$alloc
    "$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$P" >"$WORK/out" 2>"$WORK/err" ||
        fail "$alloc: exact record exited with $?: $(cat "$WORK/err")"
    grep -q "^allocated 2" "$WORK/out" || fail "$alloc: the program said $(cat "$WORK/out")"
    MEMSCRIBE_SAMPLE_SEED=1 "$MEMSCRIBE" record -q --sample 16K -o "$WORK/s16.mscr" -- "$P" >/dev/null 2>"$WORK/err" ||
        fail "$alloc: --sample 16K exited with $?: $(cat "$WORK/err")"
    want=$(allocated "$WORK/exact.mscr")
    got=$(allocated "$WORK/s16.mscr")
    awk -v w="$want" -v g="$got" 'BEGIN { d = (g - w) / w * 100; exit !(d <= 4 && d >= -4) }' ||
        fail "$alloc: allocated bytes: estimate $got is not within 4 % of the exact $want"
    # ~206 MB at one point per 16 KiB: ~12,600 of the 100,000 blocks.
    n_exact=$(blocks "$WORK/exact.mscr")
    n_s16=$(blocks "$WORK/s16.mscr")
    [ "$n_exact" -ge 100100 ] || fail "$alloc: $n_exact blocks in the exact trace"
    [ "$n_s16" -gt 9000 ] && [ "$n_s16" -lt 17000 ] ||
        fail "$alloc: $n_s16 of $n_exact blocks recorded under --sample 16K"
    # Every free recorded ends a recorded block.
    n_loose=$("$MEMSCRIBE" dump "$WORK/s16.mscr" | awk '$5 == "free" && !/ ends=#/ { n++ } END { print n + 0 }')
    [ "$n_loose" = 0 ] || fail "$alloc: $n_loose frees of blocks the trace does not hold"
    echo "$alloc: allocated exact $want, estimate $got; blocks $n_exact exact, $n_s16 sampled"
done
echo "ok: other allocators' own calls and operator new are sampled"
