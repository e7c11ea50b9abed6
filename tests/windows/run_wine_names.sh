#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Wine's own DLLs named without options (docs/windows.md, "Symbols"): the
# demo recorded by `memscribe record` under Wine, then read with no option
# and no help from the environment (no WINEPREFIX, an empty HOME): every
# frame in ntdll, kernel32, kernelbase and msvcrt is named in every output,
# from the files of the prefix the trace recorded; and the same DLLs without
# debug information (stripped copies under --sysroot) name each frame by the
# nearest export at or below it, exactly as objdump's export table says
# (check_wine_names.py).
# Usage: run_wine_names.sh WINE WINDIR PREFIX OUTDIR MEMSCRIBE
#   WINDIR .../x86_64 (wine64) or .../i686 (wine32: skipped where it is
#   missing, a failure with MEMSCRIBE_REQUIRE_WINE32=1)
set -euo pipefail
wine=$1 windir=$2 prefix=$3 out=$4 memscribe=$5
here=$(cd "$(dirname "$0")" && pwd)
arch=$(basename "$windir")
if [ "$arch" = i686 ]; then
    # shellcheck source=tests/windows/need_wine.sh
    source "$here/need_wine.sh"
    need_wine run_wine_names "$wine"
fi
rm -rf "$out"
mkdir -p "$out/home"
MEMSCRIBE_WINE=$wine MEMSCRIBE_WINDOWS_DIR=$windir WINEPREFIX=$prefix WINEDEBUG=-all \
    "$memscribe" record -q -o "$out/demo.mscr" -- "$windir/memtest_demo_win.exe" \
    >"$out/demo.out" 2>"$out/record.err" || {
    echo "run_wine_names: record exited with $?: $(cat "$out/record.err")"
    exit 1
}
grep -q 'memtest_demo_win: 10 spikes of 10 MB' "$out/demo.out"
python3 "$here/check_wine_names.py" "$out" "$memscribe" "$arch-w64-mingw32-"
