#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The golden traces of formats 1.0, 1.1, 1.2 (Windows), 1.3 (a time unit; sampled; Wine's
# folders), 1.4 (packed times; pools), 1.5 (ranked references) and 1.6 (reachability classes) dump
# exactly as they always did (old traces stay readable, and dump's output is stable for the tests built
# on it);
# --pid keeps one process; a trace cut short dumps its whole chunks, says
# so on stderr and exits 0.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" dump-golden MEMSCRIBE MS_SOURCE
golden=$MS_SOURCE/tests/golden/v1.mscr
tmp=$WORK
trap 'echo "dump_golden: FAIL at line $LINENO" >&2' ERR

"$MEMSCRIBE" dump --header --stacks --raw "$golden" >"$tmp/out" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1.dump" "$tmp/out"
[ ! -s "$tmp/err" ] || { echo "unexpected stderr:"; cat "$tmp/err"; exit 1; }
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_1.mscr" >"$tmp/out11" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_1.dump" "$tmp/out11"
[ ! -s "$tmp/err" ] || { echo "unexpected stderr:"; cat "$tmp/err"; exit 1; }
# Format 1.2, a Windows program's trace (docs/windows.md)
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_2_windows.mscr" \
    >"$tmp/out12" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_2_windows.dump" "$tmp/out12"
[ ! -s "$tmp/err" ] || { echo "unexpected stderr:"; cat "$tmp/err"; exit 1; }
# Format 1.3: times in microseconds (docs/format.md, "Time unit")
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_3.mscr" \
    >"$tmp/out13" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_3.dump" "$tmp/out13"
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_3_sampled.mscr" \
    >"$tmp/out13s" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_3_sampled.dump" "$tmp/out13s"
[ ! -s "$tmp/err" ] || { echo "unexpected stderr:"; cat "$tmp/err"; exit 1; }
# Format 1.4: packed times (docs/format.md, "Packed times")
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_4.mscr" \
    >"$tmp/out14" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_4.dump" "$tmp/out14"
# Format 1.5: recent addresses, references by rank (docs/format.md, "References")
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_5.mscr" \
    >"$tmp/out15" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_5.dump" "$tmp/out15"
[ ! -s "$tmp/err" ] || { echo "unexpected stderr:"; cat "$tmp/err"; exit 1; }
# Format 1.6, feature bit REACH: reachability classes at exit (docs/format.md, "REACH")
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_6_reach.mscr" \
    >"$tmp/out16" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_6_reach.dump" "$tmp/out16"
[ ! -s "$tmp/err" ] || { echo "unexpected stderr:"; cat "$tmp/err"; exit 1; }
# Format 1.7: realloc addresses predicted, class tops (docs/format.md, "Reallocs")
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_7.mscr" \
    >"$tmp/out17" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_7.dump" "$tmp/out17"
[ ! -s "$tmp/err" ] || { echo "unexpected stderr:"; cat "$tmp/err"; exit 1; }
# Format 1.4, feature bit POOLS: the program's own pools (docs/format.md, "Pools")
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_4_pools.mscr" \
    >"$tmp/out14p" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_4_pools.dump" "$tmp/out14p"
[ ! -s "$tmp/err" ] || { echo "unexpected stderr:"; cat "$tmp/err"; exit 1; }
# Format 1.3 with the META records WINE_PREFIX and WINE_DLL_DIR (docs/format.md, "META")
"$MEMSCRIBE" dump --header --stacks --raw "$MS_SOURCE/tests/golden/v1_3_wine.mscr" \
    >"$tmp/out13w" 2>"$tmp/err"
diff -u "$MS_SOURCE/tests/golden/v1_3_wine.dump" "$tmp/out13w"
[ ! -s "$tmp/err" ] || { echo "unexpected stderr:"; cat "$tmp/err"; exit 1; }

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
