# SPDX-License-Identifier: MIT
# Pictures: the SVG writer, plots, flame graphs and the HTML
# report. Unit tests on hand-made inputs and synthetic traces; end-to-end
# tests that check the SVGs with a real XML parser (xmllint) and open the
# report of the demo in headless Chromium (screenshots under
# tests/artifacts/ of the build directory).
set(PIC_UNIT ${PROJECT_SOURCE_DIR}/tests/unit)
ms_unit_test(test_ana_svg ${PIC_UNIT}/test_ana_svg.c LIBS ms_analysis ms_format)
ms_unit_test(test_ana_html ${PIC_UNIT}/test_ana_html.c LIBS ms_analysis ms_format)

# pic_synth writes synthetic traces with fmt_writer: one whose strings are
# markup (module path, thread name, command line) for the escaping tests.
add_executable(pic_synth ${PIC_UNIT}/pic_synth.c)
ms_target(pic_synth)
target_link_libraries(pic_synth PRIVATE ms_format)
set_target_properties(pic_synth PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/unit)

ms_e2e_test(pic_demo pic_demo.sh)
ms_e2e_test(pic_escape pic_escape.sh)
ms_e2e_test(html_demo html_demo.sh)
ms_e2e_test(pic_truth pic_truth.sh)
# Every picture against its text command (108 s in a fresh root, past 300 s
# beside two busy loops and builds): a timeout catches a hang, not slowness.
set_tests_properties(e2e.pic_truth PROPERTIES TIMEOUT 600)
ms_e2e_test(html_screen html_screen.sh)
