#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe against heaptrack: record the same deterministic programs with
# both, and compare calls to allocation functions, peak heap, leaked bytes
# and temporary allocations. heaptrack's numbers are read exactly from
# heaptrack_print's flame-graph output (one integer per stack, summed; its
# summary rounds bytes). Every difference is explained below and asserted
# as that exact difference. Needs MEMSCRIBE, MS_BUILD, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana-ht MEMSCRIBE MS_BUILD MS_PROGRAMS
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null ||
    { echo "FAIL: heaptrack is not installed (bash scripts/setup.sh --test)" >&2; exit 1; }

# usage: heaptrack_costs NAME PROG: runs heaptrack, leaves $WORK/NAME.<cost>
# (flame-graph lines) for allocations, temporary, leaked and peak.
heaptrack_costs() {
    local name=$1 prog=$2 file
    heaptrack -o "$WORK/$name.ht" "$prog" >"$WORK/$name.ht.out" 2>&1 ||
        fail "heaptrack $prog: $(tail -n 5 "$WORK/$name.ht.out")"
    file=$(compgen -G "$WORK/$name.ht.*" | grep -v '\.out$' | head -n 1)
    [ -n "$file" ] || fail "heaptrack wrote no trace for $prog"
    for cost in allocations temporary leaked peak; do
        # Built-in suppressions would hide leaks of system libraries;
        # memscribe hides nothing, so neither may heaptrack.
        heaptrack_print -f "$file" --disable-builtin-suppressions --flamegraph-cost-type "$cost" \
            -F "$WORK/$name.$cost" >"$WORK/$name.print" 2>"$WORK/$name.print.err" ||
            fail "heaptrack_print failed: $(cat "$WORK/$name.print.err")"
        # heaptrack_print exits 0 even on malformed input: stderr must be empty.
        [ ! -s "$WORK/$name.print.err" ] || fail "heaptrack_print: $(cat "$WORK/$name.print.err")"
    done
}
# usage: ht_sum NAME COST [awk-regex]: the summed cost of lines matching.
ht_sum() {
    awk -v re="${3:-.}" '$0 ~ re { s += $NF } END { print s + 0 }' "$WORK/$1.$2"
}
# usage: ms_numbers NAME PROG: records with memscribe, leaves the report.
ms_numbers() {
    "$MEMSCRIBE" record -o "$WORK/$1.mscr" -- "$2" >"$WORK/$1.out" 2>"$WORK/$1.err" ||
        fail "memscribe record $2: $(cat "$WORK/$1.err")"
    "$MEMSCRIBE" report --format=json --top 0 "$WORK/$1.mscr" >"$WORK/$1.json"
}
ms() {
    jq ".processes[0].$2" "$WORK/$1.json"
}

# Allocations made under ld.so's _dl_init before main: libstdc++'s
# emergency exception pool (libstdc++'s initializer mallocs it).
PRE='_dl_init'

# ---- 1. ana_heapcheck (C): exact numbers from the program. -------------------
ms_numbers hc "$MS_PROGRAMS/ana_heapcheck"
heaptrack_costs hc "$MS_PROGRAMS/ana_heapcheck"
expect "memscribe allocations" "$(ms hc allocations)" 1021
HEAP_FNS='["malloc","calloc","realloc","reallocarray","memalign","posix_memalign","aligned_alloc","valloc","pvalloc"]'
expect "memscribe calls: sum of heap allocation functions" \
    "$(jq "$HEAP_FNS as \$f | .processes[0].calls | to_entries | map(select(.key as \$k | \$f | index(\$k))) | map(.value) | add" "$WORK/hc.json")" 1021
expect "memscribe calls: memalign and pvalloc once each" \
    "$(jq '.processes[0].calls | [.memalign, .pvalloc] | join(",")' -r "$WORK/hc.json")" "1,1"
# map_nodes' five nodes are not temporary (a free comes between each
# node's allocation and its free); the loose rule would count them.
expect "memscribe temporary" "$(ms hc temporary)" 1003
expect "memscribe temporary, loose rule (--temporary-threshold 0)" \
    "$("$MEMSCRIBE" report --format=json --temporary-threshold 0 "$WORK/hc.mscr" | jq '.processes[0].temporary')" 1008
expect "memscribe leaked" "$(ms hc leaked_bytes)" 664
expect "memscribe peak" "$(ms hc peak_bytes)" 1000664
# heaptrack's preload library is C++, so under heaptrack this C program
# also loads libstdc++, whose initializer allocates its emergency pool
# before main: one allocation, live at the peak, freed at exit (and then
# counted temporary by heaptrack_print, which judges by record order).
pre_allocs=$(ht_sum hc allocations "$PRE")
pre_peak=$(ht_sum hc peak "$PRE")
expect "heaptrack: allocations before main (libstdc++ pool)" "$pre_allocs" 1
expect "heaptrack: pool leaked" "$(ht_sum hc leaked "$PRE")" 0
expect "heaptrack: pool temporary" "$(ht_sum hc temporary "$PRE")" 1
[ "$pre_peak" -gt 0 ] || fail "heaptrack: the pool is not live at the peak"
# heaptrack hooks neither memalign nor pvalloc (it interposes malloc,
# calloc, realloc, free, posix_memalign, aligned_alloc and valloc):
# memalign(64, 256) and pvalloc(100) are memscribe's alone, both leaked,
# so both live at the peak.
UNSEEN_N=2
UNSEEN_B=$((256 + 100))
expect "allocations: memscribe = heaptrack - pool + memalign + pvalloc" \
    "$(ms hc allocations)" $(($(ht_sum hc allocations) - pre_allocs + UNSEEN_N))
expect "temporary: memscribe = heaptrack - pool's" \
    "$(ms hc temporary)" $(($(ht_sum hc temporary) - 1))
expect "leaked: memscribe = heaptrack + memalign + pvalloc bytes" \
    "$(ms hc leaked_bytes)" $(($(ht_sum hc leaked) + UNSEEN_B))
expect "peak: memscribe = heaptrack - pool + memalign + pvalloc bytes" \
    "$(ms hc peak_bytes)" $(($(ht_sum hc peak) - pre_peak + UNSEEN_B))

# ---- 2. memtest_demo (C++): the same pool exists under both tools. --------
ms_numbers demo "$MS_BUILD/examples/memtest_demo"
heaptrack_costs demo "$MS_BUILD/examples/memtest_demo"
expect "demo allocations: equal" "$(ms demo allocations)" "$(ht_sum demo allocations)"
expect "demo peak: equal" "$(ms demo peak_bytes)" "$(ht_sum demo peak)"
# libstdc++ frees its pool in a destructor at exit. memscribe's trace holds
# no such free (its collector has stopped recording by then), so memscribe reports the pool
# leaked and heaptrack (still hooked then) sees the free, which
# heaptrack_print counts as temporary. (report's top leaked list leaves the
# pool out, as the runtime's one-time allocation: the peak list has it.)
pool=$(ht_sum demo peak "$PRE")
expect "demo pool: one block live at the peak in both" \
    "$(jq "[.processes[0].top.peak[] | select(any(.stack[]; test(\"$PRE\"))) | .leaked_bytes] | add" \
        "$WORK/demo.json")" "$pool"
expect "demo leaked: memscribe = heaptrack + pool" \
    "$(ms demo leaked_bytes)" $(($(ht_sum demo leaked) + pool))
expect "demo temporary: memscribe = heaptrack - pool's free" \
    "$(ms demo temporary)" $(($(ht_sum demo temporary) - 1))
echo "PASS"
