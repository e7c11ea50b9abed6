# SPDX-License-Identifier: MIT
# The trace format's tests (docs/format.md): round trips, corrupt and
# truncated files, the golden trace, the fuzz corpus replayed, the size and
# speed of the encoding, and the dump command (docs/dump.md). The fuzzer
# itself runs from scripts/test.sh (tests/fuzz/run.sh: it needs clang).

set(FMT_UNIT ${PROJECT_SOURCE_DIR}/tests/unit)
foreach(t prims roundtrip corrupt size golden golden_win sample pools reach agg segment totals later)
  ms_unit_test(test_fmt_${t} ${FMT_UNIT}/test_fmt_${t}.c ${FMT_UNIT}/test_fmt_util.c
               LIBS ms_format)
endforeach()
foreach(t golden golden_win sample pools reach agg segment totals later)
  target_compile_definitions(test_fmt_${t} PRIVATE
    MS_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/golden")
endforeach()

ms_unit_test(test_fmt_wlive ${FMT_UNIT}/test_fmt_wlive.c LIBS ms_format)

ms_unit_test(test_fmt_corpus ${FMT_UNIT}/test_fmt_corpus.c
             ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_reader.c LIBS ms_format)
target_compile_definitions(test_fmt_corpus PRIVATE
  MS_CORPUS_DIR="${PROJECT_SOURCE_DIR}/tests/fuzz/corpus")

ms_e2e_test(dump_golden dump_golden.sh)
ms_e2e_test(dump_errors dump_errors.sh)
ms_e2e_test(windows_golden windows_golden.sh)
