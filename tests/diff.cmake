# SPDX-License-Identifier: MIT
# memscribe diff (docs/diff.md): two builds of one program, and a trace
# against itself. Both builds are called diff_prog, as two builds of one
# program are, in folders of their own.
ms_test_program(diff_base ${PROJECT_SOURCE_DIR}/tests/programs/diff_prog.c)
ms_test_program(diff_new ${PROJECT_SOURCE_DIR}/tests/programs/diff_prog.c FLAGS -DDIFF_NEW)
foreach(build base new)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs/diff_${build})
  set_target_properties(diff_${build} PROPERTIES OUTPUT_NAME diff_prog
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs/diff_${build})
endforeach()
ms_e2e_test(diff_builds diff_builds.sh)
ms_e2e_test(diff_flame diff_flame.sh)
ms_e2e_test(diff_html diff_html.sh)
ms_e2e_test(diff_reach diff_reach.sh)
