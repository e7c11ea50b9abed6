# SPDX-License-Identifier: MIT
# The recorder library (src/recorder) on its own: the stream checks, the
# time-ordered merge and the clock, without the CLI.
ms_unit_test(test_rec_stream ${PROJECT_SOURCE_DIR}/tests/unit/test_rec_stream.c LIBS ms_recorder)
# The recording session's loop, driven by a fake mode (no program, no
# socket): the order of the mode's and a tap's calls, signals, the trace.
ms_unit_test(test_rec_session ${PROJECT_SOURCE_DIR}/tests/unit/test_rec_session.c LIBS ms_recorder)
# The "#!" resolver shared by the checks and the choice of collector, on a
# 32-bit and a 64-bit test program (gcc-multilib).
if(MEMSCRIBE_HAVE_M32)
  ms_unit_test(test_rec_shebang ${PROJECT_SOURCE_DIR}/tests/unit/test_rec_shebang.c LIBS ms_recorder)
  target_compile_definitions(test_rec_shebang PRIVATE PROG32="$<TARGET_FILE:vm_frag32>"
                             PROG64="$<TARGET_FILE:vm_reserve>"
                             COLLECTOR_DIR="${MEMSCRIBE_COLLECTOR_DIR}")
  add_dependencies(test_rec_shebang vm_frag32 vm_reserve memscribe_collector32)
endif()
# record -p's seccomp check: the filter evaluator and the calls it judges,
# and filters read back from real processes (tests/unit/test_rec_seccomp.c).
ms_unit_test(test_rec_seccomp ${PROJECT_SOURCE_DIR}/tests/unit/test_rec_seccomp.c LIBS ms_recorder)
# The scan at exit's leak search (rec_reach_mark.c, docs/leaks.md) on a
# made-up address space: memcheck's rules case by case.
ms_unit_test(test_rec_reach ${PROJECT_SOURCE_DIR}/tests/unit/test_rec_reach.c LIBS ms_recorder)
# record --aggregate (docs/aggregate.md): the aggregator's decisions on
# hand-made events (tests/unit/test_rec_agg.c), and a program recorded
# exactly and aggregated at several periods, whose sites, temporaries, peak
# and leaks must add up to the same (tests/e2e/rec_aggregate.sh).
ms_test_program(rec_agg ${PROJECT_SOURCE_DIR}/tests/programs/rec_agg.c LIBS Threads::Threads)
ms_unit_test(test_rec_agg ${PROJECT_SOURCE_DIR}/tests/unit/test_rec_agg.c LIBS ms_recorder)
ms_e2e_test(rec_aggregate rec_aggregate.sh)
# record --keep-last: segments that stand alone, each the whole run's blocks from its
# start (tests/e2e/rec_keep_last.sh).
ms_e2e_test(rec_keep_last rec_keep_last.sh)
# Traces survive a SIGKILL of the program or of the recorder in every
# recording mode: a program that keeps a ledger of its heap calls in a
# shared file mapping, killed at random moments, and each trace held to
# the ledger's counts (tests/e2e/rec_killed_ledger.sh).
ms_test_program(rec_ledger ${PROJECT_SOURCE_DIR}/tests/programs/rec_ledger.c LIBS Threads::Threads)
ms_e2e_test(rec_killed_ledger rec_killed_ledger.sh)
# A recorder behind its program (one CPU for both) still flushes each
# second: an aggregated trace gets a chunk while the program runs
# (rec_flush_behind.sh; test_rec_stream counts the flushes inside a merge).
ms_e2e_test(rec_flush_behind rec_flush_behind.sh)
