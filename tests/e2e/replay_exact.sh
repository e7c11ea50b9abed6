#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe replay is exact: recording the replay worker with memscribe's
# own collector gives back, thread by thread, the same sequence of calls
# with the same sizes, element counts and alignments as the trace it
# replays (tests/programs/rpl_known.c: every call of the family, and four
# threads freeing each other's blocks). The worker's main thread only
# dispatches and is left out. Needs MEMSCRIBE, MS_PROGRAMS, MS_BUILD.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" replay-exact MEMSCRIBE MS_PROGRAMS MS_BUILD
WORKER=$MS_BUILD/lib/memscribe/memscribe-replay

# One line per thread (sorted): its heap calls with sizes and arguments,
# addresses left out. Threads whose tid is the pid (the worker's
# dispatcher) are skipped when $2 is "skip-main". The free(NULL)s a thread
# ends with are left out: glibc's thread teardown makes two after the
# thread's last call, in the traced program and in each worker thread
# alike (and the collector records them as a thread of their own).
sequences() {
    "$MEMSCRIBE" dump "$1" | awk -v skip="$2" '
        $5 ~ /^(malloc|calloc|realloc|reallocarray|free|memalign|posix_memalign|aligned_alloc|valloc|pvalloc)$/ {
            if (skip == "skip-main" && $2 == $3) next
            s = $5
            for (i = 6; i <= NF; i++)
                if ($i ~ /^(size|nmemb|elem|align)=/) s = s " " $i
            if (!($3 in seq)) order[n++] = $3
            seq[$3] = seq[$3] "|" s
        }
        END {
            for (i = 0; i < n; i++) {
                s = seq[order[i]]
                while (s ~ /\|free$/) sub(/\|free$/, "", s)
                if (s != "") print s
            }
        }' | sort
}

for mode in seq threads; do
    "$MEMSCRIBE" record -o "$WORK/$mode.mscr" -- "$MS_PROGRAMS/rpl_known" "$mode" >/dev/null 2>&1 ||
        fail "record $mode"
    "$MEMSCRIBE" replay --script "$WORK/$mode.ops" "$WORK/$mode.mscr"
    "$MEMSCRIBE" record -o "$WORK/$mode-replay.mscr" -- "$WORKER" <"$WORK/$mode.ops" \
        >"$WORK/$mode.out" 2>"$WORK/$mode.err" || fail "record the worker ($mode): $(cat "$WORK/$mode.err")"
    grep -q "^A .*libmemscribe.so" "$WORK/$mode.out" || fail "$mode: the worker's malloc was not the collector's"
    grep -q "^F " "$WORK/$mode.out" && fail "$mode: the collector lacks a call: $(grep '^F ' "$WORK/$mode.out")"
    sequences "$WORK/$mode.mscr" all >"$WORK/$mode.want"
    sequences "$WORK/$mode-replay.mscr" skip-main >"$WORK/$mode.got"
    [ -s "$WORK/$mode.want" ] || fail "$mode: no heap calls in the trace"
    diff "$WORK/$mode.want" "$WORK/$mode.got" >"$WORK/$mode.diff" ||
        fail "$mode: the replay's calls differ: $(head -c 2000 "$WORK/$mode.diff")"
    echo "ok: $mode: $(wc -l <"$WORK/$mode.want") threads, $(tr '|' '\n' <"$WORK/$mode.want" | grep -c .) calls, the same"
done
echo "PASS"
