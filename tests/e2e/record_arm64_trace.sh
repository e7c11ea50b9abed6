#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A trace is a trace on every CPU (docs/platforms.md): tests/traces/
# arm64_col_exact.mscr is col_exact recorded with --sample 64K on AArch64
# (an arm64 Debian 12 root under qemu-user, scripts/cross-check.sh; seed 1),
# read here. Its counted totals are the numbers of col_exact recorded here
# on x86-64, exactly: calls of each kind (free() apart: AArch64's glibc
# makes 40 more free(NULL) calls of its own), allocations, their bytes,
# frees, temporaries, and the heap's usable peak and end as the program
# measured them here.
source "$(dirname "$0")/record_lib.sh"
[ -n "${MS_SOURCE:-}" ] || fail "MS_SOURCE is not set (tests/CMakeLists.txt)"
A64=$MS_SOURCE/tests/traces/arm64_col_exact.mscr

"$MEMSCRIBE" record -q -o "$WORK/x86.mscr" -- "$MS_PROGRAMS/col_exact" >"$WORK/own" ||
    fail "record exited with $?"
kinds='["malloc","calloc","realloc","reallocarray","memalign","posix_memalign","aligned_alloc","valloc","pvalloc"]'
"$MEMSCRIBE" report --format json "$WORK/x86.mscr" 2>/dev/null >"$WORK/x86.json" ||
    fail "report of the x86-64 trace failed"
heap_totals . "$kinds" "$WORK/x86.json" >"$WORK/want"
"$MEMSCRIBE" report --format json "$A64" 2>"$WORK/err" >"$WORK/a64.json" ||
    fail "report of the arm64 trace failed: $(cat "$WORK/err")"
heap_totals .exact "$kinds" "$WORK/a64.json" >"$WORK/got"
diff "$WORK/want" "$WORK/got" >&2 || fail "the arm64 trace's counted totals differ from x86-64's (above)"
own=$(awk '$1 == "peak_usable" { p = $2 } $1 == "heap_usable" { h = $2 } END { print p, h }' "$WORK/own")
got=$(jq -r '.processes[0].exact | "\(.peak_usable_bytes) \(.heap_usable_bytes)"' "$WORK/a64.json")
[ "$got" = "$own" ] || fail "arm64's usable heap, peak and end: $got; here the program measured $own"
grep -q '"allocations": 52040' "$WORK/got" || fail "not col_exact's 52040 allocations: $(cat "$WORK/got")"
echo "ok: the arm64 trace's counted totals and usable heap equal x86-64's ($got)"
