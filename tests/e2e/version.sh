#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `memscribe --version` names the trace format versions it reads and
# writes (docs/format.md, "Versions and compatibility"): 1.0 up to the
# newest golden trace's version (every format bump comes with its golden
# file, tests/golden/v1_N*.mscr), and writes from 1.1.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" version MEMSCRIBE MS_SOURCE
newest=$(find "$MS_SOURCE/tests/golden" -name 'v1_*.mscr' | sed -E 's|.*/v1_([0-9]+).*|\1|' | sort -n | tail -1)
"$MEMSCRIBE" --version >"$WORK/out"
expect "lines" "$(wc -l <"$WORK/out")" 2
expect "line 1" "$(sed -n 1p "$WORK/out" | sed -E 's/[0-9]+\.[0-9]+\.[0-9]+$/X.Y.Z/')" "memscribe X.Y.Z"
expect "line 2" "$(sed -n 2p "$WORK/out")" "trace format: reads 1.0 to 1.$newest, writes 1.1 to 1.$newest"
# And the newest golden trace says that version in its header.
grep -q "^# memscribe trace version 1\.$newest\b" <("$MEMSCRIBE" dump --header "$MS_SOURCE"/tests/golden/v1_"$newest"*.mscr) ||
    { echo "FAIL: tests/golden/v1_$newest*.mscr is not version 1.$newest" >&2; exit 1; }
echo "version: reads 1.0 to 1.$newest, writes 1.1 to 1.$newest"
