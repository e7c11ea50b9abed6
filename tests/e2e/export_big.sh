#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every exporter streams: its peak memory does not grow with the number of
# events. Synthetic traces of 600000 and 1.5 million heap events over the same
# 4096 live slots; each format's maximum resident size on the larger one
# must stay within 6 MiB of the smaller one's (allocator and sanitizer
# noise; a leak of 8 bytes per event would add 7 MiB). Prints the figures.
# A reader holds a chunk at a time, and a trace's first chunks are smaller
# (65,536 events, then 131,072: docs/format.md), so the smaller trace too
# must reach chunks of the full size, 262,144 in these traces
# (test_ana_export_trace.c): with 300000 events its largest was 131,072 and
# the larger trace's chunks alone made up ~6 MiB of difference.
source "$(dirname "$0")/export_lib.sh"
[ -x /usr/bin/time ] || fail "/usr/bin/time is missing (Debian package time)"
# Under AddressSanitizer freed memory sits in a quarantine that grows with
# the number of frees; keep it small so the figures are the exporter's.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1:detect_leaks=0"

small=${EXPORT_BIG_SMALL:-600000}
large=${EXPORT_BIG_LARGE:-1500000}
"$MS_BUILD/tests/unit/test_ana_export" --write-trace "$T/small.mscr" "$small"
"$MS_BUILD/tests/unit/test_ana_export" --write-trace "$T/large.mscr" "$large"

rss() { # format trace -> max RSS in KiB
    local out=$T/out.$1
    [ "$1" = heaptrack ] && out=$out.zst
    rm -f "$out"
    /usr/bin/time -f "%M %e" -o "$T/time" "$M" export --to "$1" "$2" -o "$out" ||
        fail "export --to $1 $2 failed"
    read -r kb secs <"$T/time"
    echo "$1 $(basename "$2") ${kb} KiB ${secs} s" >&2
    echo "$kb"
}

for fmt in massif heaptrack dhat pprof folded sqlite csv; do
    a=$(rss "$fmt" "$T/small.mscr")
    b=$(rss "$fmt" "$T/large.mscr")
    [ "$b" -le $((a + 6144)) ] ||
        fail "$fmt: $b KiB on $large events against $a KiB on $small: memory grows with events"
done
echo "export_big: ok"
