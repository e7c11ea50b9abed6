#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Symbolizer throughput (docs/symbols.md, issue 3): build bench_symbolize
# (release build in build-bench-sym), generate and build a large C++ program
# with debug info, then resolve every distinct code address of it, libc
# (debug file from libc6-dbg if installed), libstdc++ and cmake.
# Target: at least 50,000 distinct frames per second after each module's
# first load. Usage: bench/bench_symbolize.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
units=16
[ "${1:-}" = "--quick" ] && units=4
build=build-bench-sym
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target bench_symbolize -j2 >/dev/null
prog=$(bash bench/bench_symbolize_gen.sh "$build/bench-symbolize-cxx" "$units" 40)
files=("$prog")
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/bin/cmake; do
  [ -e "$f" ] && files+=("$f")
done
"$build/bench/bench_symbolize" --min-rate 50000 "${files[@]}"
