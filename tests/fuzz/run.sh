#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the trace reader's and the PDB reader's libFuzzer targets with clang
# in their own build directory and run each for a bounded time, the two
# built and run at once (each uses one core: one after the other, they left
# the second core idle); exit non-zero if one finds a crash (the input is
# left in BUILD_DIR as crash-* or pdb-crash-*: add it to corpus/ or
# corpus_pdb/).
# Usage: tests/fuzz/run.sh [BUILD_DIR [SECONDS]]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$src/build-fuzz}
secs=${2:-60}
mkdir -p "$out/new" "$out/new_pdb"

reader=(fmt_block.c fmt_buf.c fmt_crc.c fmt_names.c fmt_rchunk.c fmt_rdefs.c fmt_reader.c fmt_rnodes.c
    fmt_rtotals.c fmt_zc.c fmt_wdelta.c)
read -ra zstd_libs < <(pkg-config --libs libzstd zlib)
clang -std=c11 -D_GNU_SOURCE -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -g -O1 \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$src/include" -I"$src/src" "${reader[@]/#/$src/src/format/}" "$src/src/util/util_array.c" \
    "$src/tests/fuzz/fuzz_reader.c" "${zstd_libs[@]}" -lm -o "$out/fuzz_reader" &
build_pid=$!
sym=(ana_sym_msf.c ana_sym_pdb.c ana_sym_pdb_inl.c ana_sym_arena.c)
clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -I"$src/include" -I"$src/src" \
    "${sym[@]/#/$src/src/analysis/sym/}" "$src/tests/fuzz/fuzz_pdb.c" -o "$out/fuzz_pdb"
wait "$build_pid"

# usage: fuzz NAME LOG ARGS...: run a target, report its figures or its crash.
fuzz() {
    local name=$1 log=$2
    shift 2
    "$out/$name" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        "$@" 2>"$log" || { tail -40 "$log" >&2; echo "$name: crashed (above)" >&2; return 1; }
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" >&2 || true
    echo "$name: no crash in ${secs}s" >&2
}

fuzz fuzz_reader "$out/fuzz.log" -max_len=65536 -artifact_prefix="$out/" "$out/new" \
    "$src/tests/fuzz/corpus" &
reader_pid=$!
rc=0
fuzz fuzz_pdb "$out/fuzz_pdb.log" -max_len=131072 -artifact_prefix="$out/pdb-" "$out/new_pdb" \
    "$src/tests/fuzz/corpus_pdb" || rc=1
wait "$reader_pid" || rc=1
exit "$rc"
