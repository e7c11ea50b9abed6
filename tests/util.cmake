# SPDX-License-Identifier: MIT
# util's primitives: growing arrays and binary search (docs/architecture.md).
ms_unit_test(test_util ${PROJECT_SOURCE_DIR}/tests/unit/test_util.c LIBS ms_util)
# The one way memscribe makes the files it writes (util_outfile.h).
ms_unit_test(test_util_outfile ${PROJECT_SOURCE_DIR}/tests/unit/test_util_outfile.c LIBS ms_util)
