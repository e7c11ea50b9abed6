#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# 8 threads x 200,000 malloc/free pairs: every call is in the trace, in
# each thread's own order, every free finds its block, nothing deadlocks.
source "$(dirname "$0")/record_lib.sh"
threads=8 per=200000

timeout 240 "$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_threads" $threads $per ||
    fail "record exited with $? (124: it hung)"
ms_dump_ok "$WORK/t.mscr"
# Per worker thread (sizes 1000 + 100 t + k % 64): the k-th malloc has the
# k-th size, the free after it frees that address and ends that block.
awk -v per=$per -v threads=$threads '
    $1 ~ /^#/ { next }
    $5 == "malloc" || $5 == "free" {
        tid = $3
        if ($5 == "malloc") {
            size = ""; addr = ""
            for (i = 6; i <= NF; i++) {
                if ($i ~ /^size=/) size = substr($i, 6) + 0
                if ($i ~ /^addr=/) addr = substr($i, 6)
            }
            if (size < 1000 || size >= 1000 + 100 * threads) next
            if (!(tid in t)) { t[tid] = int((size - 1000) / 100); nt++ }
            want = 1000 + 100 * t[tid] + (k[tid] % 64)
            if (size != want) { printf "thread %s call %d: size %d, expected %d\n", tid, k[tid], size, want; bad = 1; exit 1 }
            k[tid]++; last[tid] = addr; open[tid] = 1
        } else if (open[tid]) {
            addr = ""; ends = 0
            for (i = 6; i <= NF; i++) {
                if ($i ~ /^addr=/) addr = substr($i, 6)
                if ($i ~ /^ends=#/) ends = 1
            }
            if (addr != last[tid] || !ends) { printf "thread %s free %d: addr %s ends=%d after malloc of %s\n", tid, k[tid], addr, ends, last[tid]; bad = 1; exit 1 }
            open[tid] = 0; frees[tid]++
        }
    }
    END {
        if (bad) exit 1
        if (nt != threads) { printf "%d worker threads in the trace, expected %d\n", nt, threads; exit 1 }
        for (tid in k)
            if (k[tid] != per || frees[tid] != per) { printf "thread %s: %d mallocs, %d frees, expected %d each\n", tid, k[tid], frees[tid], per; exit 1 }
    }' "$WORK/dump.txt" || fail "per-thread calls are wrong (above)"
echo "ok: $threads threads x $per malloc/free pairs, all in order"
