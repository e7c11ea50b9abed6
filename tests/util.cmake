# SPDX-License-Identifier: MIT
# util's primitives: growing arrays and binary search (docs/architecture.md).
ms_unit_test(test_util ${PROJECT_SOURCE_DIR}/tests/unit/test_util.c LIBS ms_util)
