#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: set up, build, record the demo program and show what it did.
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
