#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: set up, build, record the demo program and show what it did;
# then the same demo as a Windows program, traced under Wine into the same
# kind of trace (MEMSCRIBE_NO_WINDOWS=1: the Linux half only).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
mkdir -p demo-out
./build/bin/memscribe record -o demo-out/demo.mscr -- ./build/examples/memtest_demo
# The summary: peak and when, leaks, temporary allocations, top call sites.
./build/bin/memscribe report --top 5 demo-out/demo.mscr
# The same trace as one offline page, and where to go next.
./build/bin/memscribe html demo-out/demo.mscr -o demo-out/report.html
echo "demo: trace demo-out/demo.mscr, HTML report demo-out/report.html; see README.md for more questions" >&2

[ "${MEMSCRIBE_NO_WINDOWS:-0}" = 1 ] && exit 0
# WPA's MemoryTestApp as Windows builds it (examples/windows): its 10 MB
# buffers come from VirtualAlloc, so `vmem` shows them as WPA's
# VirtualAlloc view does (10 commit transients of 10 MB, 20 MB steady), and
# its 320 leaked 40-byte objects are on the heap, in `report`. Wine makes
# ~/.wine on its first run (about 10 s).
./build/bin/memscribe record -o demo-out/demo-win.mscr -- ./build/windows/x86_64/memtest_demo_win.exe
./build/bin/memscribe report --top 3 demo-out/demo-win.mscr
./build/bin/memscribe vmem demo-out/demo-win.mscr | sed -n '1,12p'
./build/bin/memscribe html demo-out/demo-win.mscr -o demo-out/report-win.html
echo "demo: the Windows demo's trace demo-out/demo-win.mscr, HTML report demo-out/report-win.html" >&2
# The 32-bit build of it, where wine32 could be installed and the kernel runs
# 32-bit programs (scripts/setup.sh, scripts/runs-i386.sh).
if [ -x /usr/lib/wine/wine ] && bash scripts/runs-i386.sh; then
  ./build/bin/memscribe record -o demo-out/demo-win32.mscr -- ./build/windows/i686/memtest_demo_win.exe
  ./build/bin/memscribe report --top 3 demo-out/demo-win32.mscr
else
  echo "demo: no wine32 that runs on this machine (scripts/setup.sh said why): the 32-bit Windows demo is left out" >&2
fi
