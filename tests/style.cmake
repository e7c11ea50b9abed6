# SPDX-License-Identifier: MIT
# The tree's layout and shell scripts, checked (scripts/check-style.sh).
add_test(NAME style.clang_format COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-style.sh clang-format)
add_test(NAME style.shellcheck COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-style.sh shellcheck)
