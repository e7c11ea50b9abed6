#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The golden traces of formats 1.0, 1.1, 1.2 (Windows), 1.3 (a time unit; sampled; Wine's
# folders), 1.4 (packed times; pools), 1.5 (ranked references), 1.6 (reachability classes),
# 1.7 (predicted realloc addresses), 1.8 (aggregated), 1.9 (a --keep-last segment), 1.10 (chunk
# totals), 1.11 (their all-processes part), 1.12 (the programs' parts) and 1.13 (a
# sampled trace's exact counters) dump exactly as
# they always did (old
# traces stay readable, and dump's output is stable for the tests built on it);
# --pid keeps one process; a trace cut short dumps its whole chunks, says
# so on stderr and exits 0.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" dump-golden MEMSCRIBE MS_SOURCE
golden=$MS_SOURCE/tests/golden/v1.mscr
tmp=$WORK
trap 'echo "dump_golden: FAIL at line $LINENO" >&2' ERR

# usage: golden NAME: tests/golden/NAME.mscr dumps as NAME.dump says, with
# nothing on stderr.
golden() {
    "$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/$1.mscr" >"$tmp/$1.out" \
        2>"$tmp/err"
    diff -u "$MS_SOURCE/tests/golden/$1.dump" "$tmp/$1.out"
    [ ! -s "$tmp/err" ] || { echo "$1: unexpected stderr:"; cat "$tmp/err"; exit 1; }
}

golden v1
golden v1_1
golden v1_2_windows  # a Windows program's trace (docs/windows.md)
golden v1_3          # times in microseconds (docs/format.md, "Time unit")
golden v1_3_sampled  # a sampled trace
golden v1_4          # packed times (docs/format.md, "Packed times")
golden v1_5          # recent addresses, references by rank (docs/format-events.md, "References")
golden v1_6_reach    # feature bit REACH: reachability classes at exit (docs/format-blocks.md, "REACH")
golden v1_7          # realloc addresses predicted, class tops (docs/format-encoding.md, "Reallocs")
golden v1_8_aggregate # feature bit AGGREGATE: batches, transient moments (docs/format-events.md, "Aggregated traces")
golden v1_9_segment  # feature bit SEGMENT: a --keep-last segment, blocks carried in (docs/format-events.md, "Segments")
golden v1_10         # feature bit TOTALS: each chunk's totals (docs/format-blocks.md, "TOTALS"; read by test_fmt_totals)
golden v1_11         # feature bit TOTALS_ALL: their all-processes part (the same; read by test_fmt_totals)
golden v1_12         # feature bit TOTALS_PROGS: the programs' parts (the same)
golden v1_13_counters # feature bit COUNTERS: a sampled trace's exact counters (docs/format-events.md, "Counters")
golden v1_4_pools    # feature bit POOLS: the program's own pools (docs/format-events.md, "Pools")
golden v1_3_wine     # META records WINE_PREFIX and WINE_DLL_DIR (docs/format-blocks.md, "META")

# Without --header and --stacks: exactly the event lines, 45 of them.
"$MEMSCRIBE" dump "$golden" >"$tmp/plain"
grep -v -e '^#' -e '^stack ' -e '^  ' "$MS_SOURCE/tests/golden/v1.dump" | diff -u - "$tmp/plain"
[ "$(wc -l <"$tmp/plain")" -eq 45 ]

# --pid: the 5 events of the forked child (pid 200) and nothing else.
"$MEMSCRIBE" dump --pid 200 "$golden" >"$tmp/pid"
[ "$(wc -l <"$tmp/pid")" -eq 5 ]
[ "$(awk '$2 != 200' "$tmp/pid" | wc -l)" -eq 0 ]
"$MEMSCRIBE" dump --pid 4 "$golden" >"$tmp/none"
[ ! -s "$tmp/none" ]

# Truncated: everything up to the last whole chunk (3 events per chunk).
size=$(stat -c %s "$golden")
head -c $((size - 100)) "$golden" >"$tmp/cut.mscr"
"$MEMSCRIBE" dump "$tmp/cut.mscr" >"$tmp/cut" 2>"$tmp/cuterr"
grep -q "cut.mscr: trace is incomplete" "$tmp/cuterr"
[ "$(wc -l <"$tmp/cuterr")" -eq 1 ]
n=$(wc -l <"$tmp/cut")
[ "$n" -gt 0 ] && [ "$n" -lt 45 ] && [ $((n % 3)) -eq 0 ]
head -n "$n" "$tmp/plain" | diff -u - "$tmp/cut"
echo "dump_golden: ok"
