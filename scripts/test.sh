#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Set up and run the whole test suite: ASan+UBSan on everything but the
# collector, warnings as errors, then the fuzzer for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
bash scripts/build.sh build-test -DCMAKE_BUILD_TYPE=Debug -DMEMSCRIBE_SANITIZE=ON -DMEMSCRIBE_WERROR=ON -DMEMSCRIBE_TESTS=ON
cd build-test
ctest --output-on-failure -j2 --timeout 600
cd ..
# The trace reader's libFuzzer target, built with clang in its own build
# directory, for a bounded time; a crash fails the suite (docs/format.md).
bash tests/fuzz/run.sh build-fuzz "${MEMSCRIBE_FUZZ_SECONDS:-60}"
