# SPDX-License-Identifier: MIT
# The tree's layout, shell scripts and function lengths, checked
# (scripts/check-style.sh).
add_test(NAME style.clang_format COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-style.sh clang-format)
add_test(NAME style.shellcheck COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-style.sh shellcheck)
add_test(NAME style.function_length COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-style.sh function-length)
# Private headers stay private: no *_internal.h included from another
# folder, and the check shown to bite on a planted tree.
add_test(NAME style.internal_headers COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-style.sh internal-headers)
add_test(NAME style.internal_headers_bite COMMAND bash ${PROJECT_SOURCE_DIR}/tests/layers/internal.sh
                                                  ${PROJECT_SOURCE_DIR}/scripts/check-style.sh)
# The length check bites: at 40 lines the tree has functions over.
add_test(NAME style.function_length_bite COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-style.sh function-length)
set_tests_properties(style.function_length_bite PROPERTIES ENVIRONMENT MAX_FUNCTION_LINES=40 WILL_FAIL TRUE)
# Comments cite the docs, not the work log ("session 18", "issue 40").
add_test(NAME style.worklog_refs COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-style.sh worklog-refs)
# No include circle inside src/cli or a room of src/analysis, and the
# check shown to bite on a planted tree.
add_test(NAME style.include_circles COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-style.sh include-circles)
add_test(NAME style.include_circles_bite COMMAND bash ${PROJECT_SOURCE_DIR}/tests/layers/circles.sh
                                                 ${PROJECT_SOURCE_DIR}/scripts/check-style.sh)
