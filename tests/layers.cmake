# SPDX-License-Identifier: MIT
# The layer rule (docs/architecture.md): each library sees only its own
# folder and those below it. These tests show the rule bites: a header of a
# layer above is refused by the compiler, one below is found.
function(ms_layer_test name tgt header want)
  add_test(NAME layers.${name}
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/layers/check.sh ${CMAKE_C_COMPILER}
                   ${PROJECT_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/layers/${tgt} ${header} ${want})
endfunction()
ms_layer_test(util_no_format ms_util format/fmt_writer.h refused)
ms_layer_test(util_own ms_util util/util_array.h allowed)
ms_layer_test(format_util ms_format util/util_search.h allowed)
ms_layer_test(analysis_util ms_analysis util/util_array.h allowed)
ms_layer_test(format_no_analysis ms_format analysis/core/ana_json.h refused)
ms_layer_test(format_no_recorder ms_format recorder/rec_internal.h refused)
ms_layer_test(format_own ms_format format/fmt_writer.h allowed)
ms_layer_test(analysis_no_cli ms_analysis cli/cli.h refused)
ms_layer_test(analysis_no_format_internals ms_analysis format/fmt_reader_internal.h refused)
ms_layer_test(analysis_own ms_analysis analysis/model/ana_model.h allowed)
ms_layer_test(recorder_no_analysis ms_recorder analysis/core/ana_json.h refused)
ms_layer_test(recorder_format ms_recorder format/fmt_writer.h allowed)
ms_layer_test(cli_all memscribe analysis/model/ana_model.h allowed)
if(TARGET memscribe_collector)
  ms_layer_test(collector_no_analysis memscribe_collector analysis/core/ana_json.h refused)
  ms_layer_test(collector_no_recorder memscribe_collector recorder/rec_internal.h refused)
  ms_layer_test(collector_format memscribe_collector format/fmt_shm.h allowed)
endif()
