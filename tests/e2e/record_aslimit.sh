#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Under RLIMIT_AS the collector takes little address space (issue 18 item
# 5, the stack tables' part): the stack table and arena grow on demand, so
# a program limited to 256 MiB is traced and can still allocate all but
# the ring segment (64 MiB, docs/record.md) and a few MiB of what it could
# allocate untraced. Before, the collector reserved 272 MiB up front and
# turned itself off.
source "$(dirname "$0")/record_lib.sh"

limit_kib=$((256 * 1024))
run_limited="ulimit -v $limit_kib; exec $MS_PROGRAMS/col_aslimit"
plain=$(sh -c "$run_limited" | sed -n 's/^mib=//p')
"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- sh -c "$run_limited" >"$WORK/out" 2>"$WORK/err" ||
    fail "record exited with $?: $(cat "$WORK/err")"
traced=$(sed -n 's/^mib=//p' "$WORK/out")
! grep -q "not tracing" "$WORK/err" || fail "the collector turned itself off: $(cat "$WORK/err")"
ms_dump_ok "$WORK/t.mscr"
seen=$(awk '$5 == "malloc" && / size=1048576/ { n++ } END { print n + 0 }' "$WORK/dump.txt")
[ "$seen" -ge "$traced" ] || fail "the trace holds $seen of the program's $traced 1 MiB mallocs"
[ "$traced" -ge $((plain - 64 - 4)) ] ||
    fail "traced, the program got $traced MiB; untraced $plain MiB (allowed: 64 MiB ring segment + 4 MiB)"
echo "ok: under a 256 MiB RLIMIT_AS the program got $traced MiB traced, $plain MiB untraced"
