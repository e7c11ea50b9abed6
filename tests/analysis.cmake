# SPDX-License-Identifier: MIT
# Analysis: unit tests of the model, windows, timeline, histogram,
# tree, JSON writer and time parsing on synthetic traces; end-to-end tests
# on recordings of the demo and of heaptrack comparison programs.
set(ANA_UNIT ${PROJECT_SOURCE_DIR}/tests/unit)
# test_ana_sym_* belong to the symbolizer (tests/symbolize.cmake).
# A test named here that is missing fails the configure step.
foreach(name test_ana_json test_ana_model test_ana_heap_replay test_ana_window test_ana_pmodel test_ana_plan
             test_ana_names test_ana_aggregate test_ana_argv test_ana_supp)
  ms_unit_test(${name} ${ANA_UNIT}/${name}.c LIBS ms_analysis ms_format)
endforeach()

ms_e2e_test(ana_demo ana_demo.sh)

# A test program and the e2e test of the same name that records it.
foreach(name ana_procs ana_rows ana_exits ana_deep ana_escape)
  ms_test_program(${name} ${PROJECT_SOURCE_DIR}/tests/programs/${name}.c)
  ms_e2e_test(${name} ${name}.sh)
endforeach()
foreach(name ana_threads ana_temporary ana_aggregate)
  ms_test_program(${name} ${PROJECT_SOURCE_DIR}/tests/programs/${name}.c LIBS Threads::Threads)
  ms_e2e_test(${name} ${name}.sh)
endforeach()
# every command on exact, aggregated and --keep-last traces: 291 s in a
# fresh check beside the flake check, past 300 s in the flake check at a
# load of 9 (a timeout catches a hang, not slowness)
set_tests_properties(e2e.ana_aggregate PROPERTIES TIMEOUT 600)

ms_test_program(ana_heapcheck ${PROJECT_SOURCE_DIR}/tests/programs/ana_heapcheck.c)
ms_e2e_test(ana_heaptrack ana_heaptrack.sh)
# report --index and timeline --index from format 1.10's chunk totals, on
# eleven workloads (260 s in the flake check's first run at load 6, past 300
# s in its second at load 4-7: a timeout catches a hang, not slowness)
ms_e2e_test(ana_index_totals ana_index_totals.sh)
set_tests_properties(e2e.ana_index_totals PROPERTIES TIMEOUT 600)
ms_e2e_test(ana_cli ana_cli.sh)
ms_e2e_test(ana_select ana_select.sh)
# Blocks a part of the trace did not see allocated: a fork child's frees of
# its parent's, a window's realloc of a block from before it.
ms_test_program(ana_unseen ${PROJECT_SOURCE_DIR}/tests/programs/ana_unseen.c)
ms_e2e_test(ana_notes ana_notes.sh)
ms_e2e_test(ana_labels ana_labels.sh)
ms_e2e_test(ana_notfile ana_notfile.sh)
ms_e2e_test(ana_timeline_procs ana_timeline_procs.sh)
ms_e2e_test(ana_timeline_range ana_timeline_range.sh)
ms_e2e_test(ana_timeline_bound ana_timeline_bound.sh)
ms_e2e_test(ana_timeline_sites ana_timeline_sites.sh)
# About 500 queries of the sanitized build in all (257 s in a fresh root, past
# 600 s beside two busy loops and builds): four tests, each of one part.
# The tree's part, 16 processes replayed at a dozen moments five ways, took
# 279 s in 300 beside another suite, and the windows' part 277 s in 300 in
# the flake check (two busy loops and builds beside it; 81 s quiet): twice
# the usual limit, as pic_truth.
foreach(part leaks tree windows golden)
  ms_e2e_test(ana_index.${part} ana_index.sh ${part})
endforeach()
set_tests_properties(e2e.ana_index.tree e2e.ana_index.windows PROPERTIES TIMEOUT 600)
ms_e2e_test(ana_tree_focus ana_tree_focus.sh)
ms_test_program(ana_hog ${PROJECT_SOURCE_DIR}/tests/programs/ana_hog.c)
ms_e2e_test(ana_tree_peak ana_tree_peak.sh)
# 63-153 s beside two spinners (scripts/flake-check.sh), past 300 s with the
# browser tests started beside it: a timeout catches a hang, not slowness.
set_tests_properties(e2e.ana_tree_peak PROPERTIES TIMEOUT 600)
ms_e2e_test(ana_mutants ana_mutants.sh)
set_tests_properties(e2e.ana_mutants PROPERTIES TIMEOUT 900)
ms_e2e_test(ana_corrupt ana_corrupt.sh)
# 91 runs of ASan-built commands: well over 300 s on a loaded machine.
set_tests_properties(e2e.ana_corrupt PROPERTIES TIMEOUT 900)
# Compiles a generated program of 12,000 functions: about 70 s on a loaded machine.
ms_e2e_test(ana_lump ana_lump.sh)
set_tests_properties(e2e.ana_lump PROPERTIES TIMEOUT 900)

# Row keys (ana_stacks_key) against their definition, on a synthetic trace
# and the golden ones; e2e.ana_keys on recordings of deep recursion,
# allocations in a signal handler and unrolled loops.
ms_unit_test(test_ana_stacks ${ANA_UNIT}/test_ana_stacks.c ${ANA_UNIT}/test_fmt_util.c
             LIBS ms_analysis ms_format)
target_compile_definitions(test_ana_stacks PRIVATE
  MS_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/golden")
ms_e2e_test(ana_keys ana_keys.sh)

# Which leak scan is an image's exit's (ana_reach_at_exit).
ms_unit_test(test_ana_reach ${ANA_UNIT}/test_ana_reach.c ${ANA_UNIT}/test_fmt_util.c
             LIBS ms_analysis ms_format)

# Rows that reach the user's code (issue 59, item 2): a C++ program's
# container rows name its functions, no row shows libc's start-up, a make
# of a C project's rows differ early, its compile commands keep their files.
ms_test_program(ana_interest ${PROJECT_SOURCE_DIR}/tests/programs/ana_interest.cc)
ms_e2e_test(ana_interest ana_interest.sh)
set_tests_properties(e2e.ana_interest PROPERTIES TIMEOUT 600)
