#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Symbolizer throughput (docs/symbols.md). Builds bench_symbolize
# (release build in build-bench-sym) and a large generated C++ program with
# debug info, then measures, after each module's first load:
#   1. every distinct code address of that program (each line-table row),
#      of libc (its debug file from libc6-dbg, if installed), libstdc++ and
#      cmake;
#   2. every distinct frame of the stacks of a recorded run of that program
#      (`memscribe record`), if recording works.
# Target: at least 50,000 distinct frames per (CPU) second.
# Usage: bench/bench_symbolize.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
units=16
[ "${1:-}" = "--quick" ] && units=4
build="build-bench-sym"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target bench_symbolize -j2 >/dev/null
prog=$(bash bench/bench_symbolize_gen.sh "$build/bench-symbolize-cxx" "$units" 40)
files=("$prog")
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/bin/cmake; do
  [ -e "$f" ] && files+=("$f")
done
status=0
echo "== every address of the binaries"
"$build/bench/bench_symbolize" --min-rate 50000 "${files[@]}" || status=1

echo "== the stacks of a recorded run"
trace="$build/bench-symbolize-cxx/run.mscr"
log="$build/bench-symbolize-cxx/record.log"
if cmake --build "$build" --target memscribe memscribe_collector -j2 >"$log" 2>&1 &&
   "$build/bin/memscribe" record -q -o "$trace" -- "$prog" $(seq 1 20) >/dev/null 2>>"$log"; then
  "$build/bench/bench_symbolize" --min-rate 50000 --trace "$trace" || status=1
else
  echo "bench_symbolize: building or running memscribe record failed; skipped ($log):"
  tail -3 "$log"
fi
exit $status
