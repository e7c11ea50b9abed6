#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the trace reader's and the PDB reader's libFuzzer targets with clang
# in their own build directory and run each for a bounded time; exit
# non-zero if one finds a crash (the input is left in BUILD_DIR as crash-*
# or pdb-crash-*: add it to corpus/ or corpus_pdb/).
# Usage: tests/fuzz/run.sh [BUILD_DIR [SECONDS]]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$src/build-fuzz}
secs=${2:-60}
mkdir -p "$out/new"

# Only the reader's sources: the fuzzer needs nothing else (fmt_wdelta.c,
# the writer's per-stack map, and util_array.c, which it grows with, check
# the chunk summaries: --verify).
reader=(fmt_block.c fmt_buf.c fmt_crc.c fmt_names.c fmt_rchunk.c fmt_rdefs.c fmt_reader.c fmt_rnodes.c
    fmt_rtotals.c fmt_zc.c fmt_wdelta.c)
# pkg-config prints "-lzstd -lz " (a trailing space): split it into words.
# zlib: chunks of Windows traces are zlib-coded (format 1.2); libm: the
# estimates of sampled traces (format 1.3).
read -ra zstd_libs < <(pkg-config --libs libzstd zlib)
clang -std=c11 -D_GNU_SOURCE -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -g -O1 \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$src/include" -I"$src/src" "${reader[@]/#/$src/src/format/}" "$src/src/util/util_array.c" \
    "$src/tests/fuzz/fuzz_reader.c" "${zstd_libs[@]}" -lm -o "$out/fuzz_reader"

# New inputs go to $out/new; the committed corpus is only read. A crash
# makes libFuzzer exit non-zero, and set -e passes that on.
"$out/fuzz_reader" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$out/" "$out/new" "$src/tests/fuzz/corpus" \
    2> "$out/fuzz.log" || { tail -40 "$out/fuzz.log" >&2; exit 1; }
grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz.log" >&2 || true
echo "fuzz: no crash in ${secs}s" >&2

# The PDB reader (Windows symbols): its sources and the arena it copies
# names into; seeded with a PDB lld wrote (corpus_pdb/tiny.pdb, 72 KiB).
sym=(ana_sym_msf.c ana_sym_pdb.c ana_sym_pdb_inl.c ana_sym_arena.c)
clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -I"$src/include" -I"$src/src" \
    "${sym[@]/#/$src/src/analysis/sym/}" "$src/tests/fuzz/fuzz_pdb.c" -o "$out/fuzz_pdb"
mkdir -p "$out/new_pdb"
"$out/fuzz_pdb" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=131072 \
    -print_final_stats=1 -artifact_prefix="$out/pdb-" "$out/new_pdb" "$src/tests/fuzz/corpus_pdb" \
    2> "$out/fuzz_pdb.log" || { tail -40 "$out/fuzz_pdb.log" >&2; exit 1; }
grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz_pdb.log" >&2 || true
echo "fuzz_pdb: no crash in ${secs}s" >&2
