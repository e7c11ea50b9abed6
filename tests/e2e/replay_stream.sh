#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe replay streams: its memory and the worker's grow with the
# blocks live at once, not with the number of calls. Five times the calls
# (1 million and 5 million, at most 8 blocks live) must leave the worker's
# peak RSS within 1 MiB and memscribe's own within 4 MiB (a per-call record
# of even 2 bytes would add 7.6 MiB).
# memscribe's buffers are as large as a trace's largest chunk, and the
# recorder cuts chunks both where they fill and each second (its periodic
# flush), so with the writer's own geometry (chunks growing to 2^19 events)
# the largest chunk of each trace depended on the recorder's clock: +7.4 MiB
# in one loaded run. The traces are cut at 2^16 events instead
# (MEMSCRIBE_CHUNK_EVENTS): both have many full chunks, so the largest is
# the same size in both, whatever the clock cut besides.
# ASan's quarantine keeps freed memory by design, so it is turned off for
# the measurement. Needs MEMSCRIBE, MS_PROGRAMS and GNU time.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" replay-stream MEMSCRIBE MS_PROGRAMS

declare -A cli worker
for n in 500000 2500000; do
    MEMSCRIBE_CHUNK_EVENTS=65536 "$MEMSCRIBE" record -o "$WORK/$n.mscr" -- "$MS_PROGRAMS/rpl_known" big "$n" >/dev/null 2>&1 ||
        fail "record big $n"
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 /usr/bin/time -f "%M" -o "$WORK/$n.time" \
        "$MEMSCRIBE" replay --repeat 1 --format=json "$WORK/$n.mscr" >"$WORK/$n.json"
    calls=$(jq .calls "$WORK/$n.json")
    [ "$calls" = $((2 * n + 8)) ] || fail "big $n: $calls calls replayed, want $((2 * n + 8))"
    [ "$(jq '.allocators[0].calls' "$WORK/$n.json")" = "$calls" ] || fail "big $n: the worker made other calls"
    cli[$n]=$(($(tail -1 "$WORK/$n.time") * 1024))
    worker[$n]=$(jq '.allocators[0].peak_rss' "$WORK/$n.json")
    echo "ok: $calls calls: memscribe ${cli[$n]} bytes, worker ${worker[$n]} bytes at most"
done
dw=$((worker[2500000] - worker[500000]))
dc=$((cli[2500000] - cli[500000]))
[ "$dw" -lt $((1 << 20)) ] || fail "the worker grew by $dw bytes for 5x the calls"
[ "$dc" -lt $((4 << 20)) ] || fail "memscribe replay grew by $dc bytes for 5x the calls"
echo "ok: 5x the calls: worker +$dw, memscribe +$dc bytes"
echo "PASS"
