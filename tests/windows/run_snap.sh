#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The address space at start (docs/windows.md): win_prog_snap.exe reserves
# regions in a TLS callback, before the collector is loaded; recorded under
# wine64, they and the main thread's stack must be in the trace as snapshot
# events, and vmem and frag must count them (check_snap.py).
# Usage: run_snap.sh WINE WINDIR WIN_DUMP PREFIX OUTDIR MEMSCRIBE
set -euo pipefail
wine=$1 windir=$2 dump=$3 prefix=$4 out=$5 memscribe=$6
here=$(cd "$(dirname "$0")" && pwd)
export WINEPREFIX=$prefix
mkdir -p "$out"
WINEDEBUG=-all "$wine" "$windir/memscribe.exe" record -o "$out/snap.mswin" -t "$out/snap.mscr" -- \
    "$windir/win_prog_snap.exe" >"$out/snap.out" 2>"$out/snap.log"
"$dump" "$out/snap.mswin" >"$out/snap.records"
"$memscribe" dump "$out/snap.mscr" >"$out/snap.dump"
python3 "$here/check_snap.py" "$out" "$memscribe"
