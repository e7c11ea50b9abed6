# SPDX-License-Identifier: MIT
# The recorder library (src/recorder) on its own: the stream checks, the
# time-ordered merge and the clock, without the CLI.
ms_unit_test(test_rec_stream ${PROJECT_SOURCE_DIR}/tests/unit/test_rec_stream.c LIBS ms_recorder)
