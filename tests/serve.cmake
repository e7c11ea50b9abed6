# SPDX-License-Identifier: MIT
# memscribe serve and record --live (docs/serve.md): the page in headless
# Chromium driven by Selenium against the commands' JSON, the server's
# rules, and a live recording followed as the program grows its heap.
ms_test_program(serve_steps ${PROJECT_SOURCE_DIR}/tests/programs/serve_steps.c)
# Three parts, each with its own 300 s: five pages in Chromium took up to
# 163 s in the sanitized build, and more than 300 s on a loaded machine.
ms_e2e_test(serve_page serve_page.sh demo)
ms_e2e_test(serve_page.chunks serve_page.sh chunks)
ms_e2e_test(serve_page.traces serve_page.sh traces)
ms_e2e_test(serve_live serve_live.sh plain)
ms_e2e_test(serve_live.spinner serve_live.sh spinner)
ms_e2e_test(serve_live.attach serve_live.sh attach)
ms_e2e_test(serve_views serve_views.sh)
ms_e2e_test(serve_source serve_source.sh)
ms_e2e_test(serve_beside serve_beside.sh)
ms_e2e_test(serve_guard serve_guard.sh)
# The Selenium tests, a Chromium each with the server and often a recording
# beside it, one at a time: started together (ctest runs its costliest
# first) beside two spinners they ran past their bounds (scripts/
# flake-check.sh). serve_views took 92-183 s in earlier runs there: 600 s, as
# serve_guard's, catches a hang.
set_tests_properties(e2e.serve_page e2e.serve_page.chunks e2e.serve_page.traces e2e.serve_live
  e2e.serve_live.spinner e2e.serve_live.attach e2e.serve_views e2e.serve_source e2e.serve_beside
  PROPERTIES RESOURCE_LOCK selenium)
set_tests_properties(e2e.serve_views PROPERTIES TIMEOUT 600)
# 61 s in the -O0 build alone, most of it the extreme queries of a 7.3 M-call
# trace: a timeout catches a hang, not slowness
set_tests_properties(e2e.serve_guard PROPERTIES TIMEOUT 600)
