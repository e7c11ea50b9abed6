#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the trace reader's libFuzzer target with clang in its own build
# directory and run it for a bounded time; exit non-zero if it finds a
# crash (the input is left in BUILD_DIR as crash-*: add it to corpus/).
# Usage: tests/fuzz/run.sh [BUILD_DIR [SECONDS]]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$src/build-fuzz}
secs=${2:-60}
mkdir -p "$out/new"

# Only the reader's sources: the fuzzer needs nothing else.
reader=(fmt_block.c fmt_buf.c fmt_crc.c fmt_names.c fmt_rchunk.c fmt_rdefs.c fmt_reader.c fmt_zc.c)
# pkg-config prints "-lzstd -lz " (a trailing space): split it into words.
# zlib: chunks of Windows traces are zlib-coded (format 1.2); libm: the
# estimates of sampled traces (format 1.3).
read -ra zstd_libs < <(pkg-config --libs libzstd zlib)
clang -std=c11 -D_GNU_SOURCE -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -g -O1 \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$src/include" -I"$src/src" "${reader[@]/#/$src/src/format/}" \
    "$src/tests/fuzz/fuzz_reader.c" "${zstd_libs[@]}" -lm -o "$out/fuzz_reader"

# New inputs go to $out/new; the committed corpus is only read. A crash
# makes libFuzzer exit non-zero, and set -e passes that on.
"$out/fuzz_reader" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$out/" "$out/new" "$src/tests/fuzz/corpus" \
    2> "$out/fuzz.log" || { tail -40 "$out/fuzz.log" >&2; exit 1; }
grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz.log" >&2 || true
echo "fuzz: no crash in ${secs}s" >&2
