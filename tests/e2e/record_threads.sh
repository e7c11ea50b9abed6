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
# One thread, one start, one exit: glibc frees a thread's buffers after
# the collector's exit hook ran, and those frees once started the thread
# a second time.
awk '$5 == "thread_start" { s[$3]++ } $5 == "thread_exit" { e[$3]++ }
     END {
        for (t in s) { n++; if (s[t] != 1) { printf "thread %s started %d times\n", t, s[t]; bad = 1 } }
        for (t in e) if (e[t] != 1 || !(t in s)) { printf "thread %s exited %d times\n", t, e[t]; bad = 1 }
        if (n != '$threads' + 1) { printf "%d threads, expected %d\n", n, '$threads' + 1; bad = 1 }
        exit bad
     }' "$WORK/dump.txt" || fail "thread starts and exits are wrong (above)"
# 1100 threads at once, 1024 rings (64 segments of 16): the main thread and
# 1023 workers are traced, the other 77 workers run untraced and counted.
"$MEMSCRIBE" record -q -o "$WORK/many.mscr" -- "$MS_PROGRAMS/col_many" 2>"$WORK/many.err" ||
    fail "record of 1100 threads exited with $?: $(cat "$WORK/many.err")"
ms_dump_ok "$WORK/many.mscr"
n=$(grep -c " malloc .* size=777 " "$WORK/dump.txt" || true)
[ "$n" = 1023 ] || fail "1100 threads: $n traced mallocs of 777, expected 1023"
dropped=$(awk '$5 == "dropped" { for (i = 6; i <= NF; i++) if ($i ~ /^count=/) print substr($i, 7) }' "$WORK/dump.txt")
[ "${dropped:-0}" -ge 154 ] || fail "1100 threads: dropped count '${dropped}', expected at least 2 x 77"
[ "$(grep -c "more threads than rings" "$WORK/many.err")" = 1 ] || fail "1100 threads: the collector should say once that it ran out of rings"
echo "ok: $threads threads x $per malloc/free pairs, all in order; 1100 threads beyond the rings"
