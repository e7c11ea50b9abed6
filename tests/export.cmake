# SPDX-License-Identifier: MIT
# memscribe export (docs/export.md): exact outputs on a synthetic trace, the
# SQLite queries of the docs against the analysis core, and the real readers
# (ms_print, massif-visualizer, heaptrack_print, dh_view.html in Chromium,
# go tool pprof, sqlite3) on that trace and on recordings; the viewers
# (heaptrack_gui, massif-visualizer, dh_view.html, pprof's web UI,
# speedscope) on screen.
ms_unit_test(test_ana_export ${PROJECT_SOURCE_DIR}/tests/unit/test_ana_export.c
             ${PROJECT_SOURCE_DIR}/tests/unit/test_ana_export_trace.c
             LIBS ms_analysis)
target_compile_definitions(test_ana_export PRIVATE MS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

foreach(t massif heaptrack dhat pprof folded sqlite csv cli big several reach tree)
  ms_e2e_test(export_${t} export_${t}.sh)
endforeach()

# Each export opened in the viewer its users run, on a screen (Xvfb or
# headless Chromium), its screenshot kept in tests/artifacts/
# (tests/e2e/view_lib.sh): skipped where a viewer is missing, failed then
# with MEMSCRIBE_REQUIRE_VIEWERS=1 (scripts/fresh-check.sh, so CI).
foreach(v heaptrack massif dhat pprof speedscope)
  ms_e2e_test(export_view_${v} export_view_${v}.sh)
  set_tests_properties(e2e.export_view_${v} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()

# Deterministic programs the e2e tests record: export_spikes's ten 8 MiB
# temporary buffers live across ticks (heaptrack_gui's Consumed chart).
ms_test_program(export_prog ${PROJECT_SOURCE_DIR}/tests/programs/export_prog.c LIBS Threads::Threads)
ms_test_program(export_spikes ${PROJECT_SOURCE_DIR}/tests/programs/export_spikes.c)
