# SPDX-License-Identifier: MIT
# Windows (docs/windows.md): the hook engine's decoder and trampoline builder
# on the host; the cross-built parts under wine64. A missing cross compiler
# or wine is a failing test naming the package, never a silent skip.
ms_unit_test(test_win_hook ${PROJECT_SOURCE_DIR}/tests/windows/test_win_hook.c
             LIBS win_hookcore)
