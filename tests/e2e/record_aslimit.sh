#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Under RLIMIT_AS the collector takes little address space (docs/record-collector.md,
# "What the collector cannot promise"): the stack table and arena grow on
# demand, and so does the ring segment (one 4 MiB ring for the first thread,
# docs/protocol.md). Under a 64 or a 256 MiB limit the program is traced,
# its trace holds every one of its 1 MiB mallocs, and it gets all but 12 MiB
# of what it gets untraced (measured: 8 MiB before the ring kept 32 memos of
# its last walks, 0.3 MiB, 9 since, and 12 since the rule table and the two
# tables' first tiers are 2 MiB each, for huge pages; one ring, the first
# tiers and arena chunk, the rule table, the collector's own mapping;
# docs/record.md). Before, the collector mapped a 64 MiB segment up front:
# under 64 MiB it turned itself off, under 256 MiB the program got 185 of
# its 252 MiB.
source "$(dirname "$0")/record_lib.sh"

margin=12
for limit in 64 256; do
    run_limited="ulimit -v $((limit * 1024)); exec $MS_PROGRAMS/col_aslimit"
    plain=$(sh -c "$run_limited" | sed -n 's/^mib=//p')
    "$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- sh -c "$run_limited" >"$WORK/out" 2>"$WORK/err" ||
        fail "record exited with $?: $(cat "$WORK/err")"
    traced=$(sed -n 's/^mib=//p' "$WORK/out")
    [ ! -s "$WORK/err" ] || fail "$limit MiB: the collector said: $(cat "$WORK/err")"
    ms_dump_ok "$WORK/t.mscr"
    seen=$(awk '$5 == "malloc" && / size=1048576/ { n++ } END { print n + 0 }' "$WORK/dump.txt")
    [ "$seen" -ge "$traced" ] || fail "$limit MiB: the trace holds $seen of the program's $traced 1 MiB mallocs"
    [ "$traced" -ge $((plain - margin)) ] ||
        fail "$limit MiB: traced, the program got $traced MiB; untraced $plain MiB (allowed: $margin MiB less)"
    echo "ok: under a $limit MiB RLIMIT_AS the program got $traced MiB traced, $plain MiB untraced"
done
