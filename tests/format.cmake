# SPDX-License-Identifier: MIT
# The trace format's tests (docs/format.md): round trips, corrupt and
# truncated files, the golden trace, the size and speed of the encoding,
# and the dump command's errors.

set(FMT_TEST_UTIL ${PROJECT_SOURCE_DIR}/tests/unit/test_fmt_util.c)
foreach(t roundtrip size)
  ms_unit_test(test_fmt_${t} ${PROJECT_SOURCE_DIR}/tests/unit/test_fmt_${t}.c ${FMT_TEST_UTIL}
               LIBS ms_format)
endforeach()
