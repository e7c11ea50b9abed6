#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How much of each allocation's stack the thread's previous allocation
# already had: for consecutive allocations (malloc, calloc, realloc and the
# aligned ones) of one thread, the number of outer frames the two stacks
# share (same addresses from the outermost frame in). The part an unwinder
# could reuse is "shared"; "new" frames are the ones it must walk.
# usage: bench/stack_share.sh TRACE [MEMSCRIBE]  (prints one table row)
set -euo pipefail
trace=$1
ms=${2:-memscribe}
"$ms" dump --stacks --raw "$trace" | awk '
    /^#/ { next }
    /^stack / {
        id = $2; sub(/^image=/, "", $3); img = $3; key = img " " id
        d = substr($4, 7) + 0; depth[key] = d
        for (i = 0; i < d; i++) { getline; frame[key, i] = $2 }
        next
    }
    $5 ~ /^(malloc|calloc|realloc|reallocarray|memalign|posix_memalign|aligned_alloc|valloc|pvalloc)$/ {
        s = ""
        for (i = 6; i <= NF; i++) if ($i ~ /^stack=/) s = substr($i, 7)
        if (s == "" || s == 0) next
        # Stacks come after the events in the dump: keep the order, resolve later.
        n++; ev_thread[n] = $2 " " $3; ev_stack[n] = s; ev_pid[n] = $2
    }
    /process_start/ { image[$2] = nimg++ }
    END {
        # Images are numbered by process start, in dump order.
        for (e = 1; e <= n; e++) {
            key = image[ev_pid[e]] " " ev_stack[e]
            d = depth[key]; t = ev_thread[e]
            total += d; events++
            if (t in last) {
                p = last[t]; pd = depth[p]; k = 0
                while (k < d && k < pd && frame[key, d - 1 - k] == frame[p, pd - 1 - k]) k++
                shared += k; compared += d
                if (k == d && d == pd) same++
                if (d - k <= 2) le2++
                if (d - k <= 5) le5++
                pairs++
            }
            last[t] = key
        }
        if (!events) { print "no allocations with stacks"; exit 1 }
        printf "%d allocations, mean depth %.1f, shared outer frames %.1f (%.0f %%), same stack %.0f %%, <= 2 new frames %.0f %%, <= 5 new frames %.0f %%\n",
            events, total / events, pairs ? shared / pairs : 0, compared ? 100 * shared / compared : 0,
            pairs ? 100 * same / pairs : 0, pairs ? 100 * le2 / pairs : 0, pairs ? 100 * le5 / pairs : 0
    }'
