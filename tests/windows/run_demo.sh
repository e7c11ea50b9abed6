#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Windows demo (examples/windows/memtest_demo_win.cc, WPA's
# MemoryTestApp) traced under wine64, turned into a trace, and WPA's
# numbers checked with symbols read offline from the PE's DWARF
# (check_demo.py). Wine's WINEDEBUG=+heap log is the oracle for the heap.
# Usage: run_demo.sh WINE WINDIR PREFIX OUTDIR MEMSCRIBE
set -euo pipefail
wine=$1 windir=$2 prefix=$3 out=$4 memscribe=$5
here=$(cd "$(dirname "$0")" && pwd)
export WINEPREFIX=$prefix
mkdir -p "$out"
# The launcher writes the trace itself (-t, zlib-coded chunks)
WINEDEBUG=+pid,+heap "$wine" "$windir/memscribe.exe" record -o "$out/demo.mswin" \
    -t "$out/demo.mscr" -- "$windir/memtest_demo_win.exe" >"$out/demo.out" 2>"$out/demo.log"
grep -q 'memtest_demo_win: 10 spikes of 10 MB, 20 MB steady, 320 leaked 40-byte nodes' "$out/demo.out"
"$memscribe" dump "$out/demo.mscr" >"$out/demo.dump"
"$memscribe" vmem --format json "$out/demo.mscr" >"$out/vmem.json" 2>/dev/null
"$memscribe" window --format json --top 0 "$out/demo.mscr" >"$out/window.json" 2>/dev/null
python3 "$here/check_demo.py" "$out" "$memscribe"
