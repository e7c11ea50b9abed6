# SPDX-License-Identifier: MIT
# The collector and `memscribe record`: traced test programs, unit tests of
# the recorder's parts, end-to-end scripts (tests/e2e/record_*.sh).
set(COLP ${PROJECT_SOURCE_DIR}/tests/programs)

# A library whose constructor allocates before the program's main.
add_library(col_ctor SHARED ${COLP}/col_ctor_lib.c)
target_compile_options(col_ctor PRIVATE -O0 -g)
set_target_properties(col_ctor PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs)

add_library(col_plug MODULE ${COLP}/col_plug_lib.c)
target_compile_options(col_plug PRIVATE -O0 -g)
set_target_properties(col_plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs)

ms_test_program(col_calls ${COLP}/col_calls.c LIBS col_ctor)
ms_test_program(col_cxx ${COLP}/col_cxx.cc)
ms_test_program(col_threads ${COLP}/col_threads.c LIBS Threads::Threads)
ms_test_program(col_many ${COLP}/col_many.c LIBS Threads::Threads)
ms_test_program(col_procs ${COLP}/col_procs.c LIBS Threads::Threads)
ms_test_program(col_crash ${COLP}/col_crash.c)
ms_test_program(col_quirks ${COLP}/col_quirks.c LIBS Threads::Threads dl)
ms_test_program(col_reload ${COLP}/col_reload.c LIBS dl)
add_dependencies(col_reload col_plug)
add_dependencies(col_quirks col_plug)
ms_test_program(col_stderr ${COLP}/col_stderr.c LIBS Threads::Threads)
ms_test_program(rec_intruder ${COLP}/rec_intruder.c)
target_include_directories(rec_intruder PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
ms_test_program(col_fds ${COLP}/col_fds.c)
ms_test_program(col_nowrap ${COLP}/col_nowrap.c LIBS Threads::Threads)
ms_test_program(col_notsc ${COLP}/col_notsc.c LIBS Threads::Threads)
ms_test_program(col_seccomp ${COLP}/col_seccomp.c LIBS Threads::Threads)
# The same program linked against each of Debian's other allocators
# (scripts/setup.sh --test installs their -dev packages).
foreach(alloc jemalloc:JEMALLOC:jemalloc mimalloc:MIMALLOC:mimalloc tcmalloc:TCMALLOC:tcmalloc_minimal)
  string(REPLACE ":" ";" parts ${alloc})
  list(GET parts 0 short)
  list(GET parts 1 macro)
  list(GET parts 2 lib)
  find_library(MS_LIB_${macro} ${lib})
  if(NOT MS_LIB_${macro})
    message(FATAL_ERROR "lib${lib}.so not found: run scripts/setup.sh --test (Debian's ${short} -dev package)")
  endif()
  ms_test_program(col_alloc_${short} ${COLP}/col_alloc3p.cc LIBS ${MS_LIB_${macro}})
  target_compile_definitions(col_alloc_${short} PRIVATE COL_${macro})
  ms_test_program(col_sample_${short} ${COLP}/col_sample3p.cc LIBS ${MS_LIB_${macro}})
  target_compile_definitions(col_sample_${short} PRIVATE COL_${macro})
endforeach()
ms_test_program(col_static ${COLP}/col_static.c)
target_link_options(col_static PRIVATE -static)

ms_e2e_test(record_calls record_calls.sh)
ms_e2e_test(record_time_unit record_time_unit.sh)
ms_e2e_test(record_short record_short.sh)
ms_e2e_test(record_deps record_deps.sh)
ms_e2e_test(record_cxx record_cxx.sh)
ms_e2e_test(record_threads record_threads.sh)
ms_e2e_test(record_procs record_procs.sh)
ms_e2e_test(record_only record_only.sh)
ms_e2e_test(record_only_gcc record_only_gcc.sh)
ms_e2e_test(record_crash record_crash.sh)
ms_e2e_test(record_quirks record_quirks.sh)
ms_e2e_test(record_reload record_reload.sh)
ms_e2e_test(record_refuse record_refuse.sh)
ms_e2e_test(record_valgrind record_valgrind.sh)
ms_e2e_test(record_limits record_limits.sh)
ms_e2e_test(record_channel record_channel.sh)
# Another user floods the socket: timed against a spinner, so alone.
ms_e2e_test(record_flood record_flood.sh)
set_tests_properties(e2e.record_flood PROPERTIES RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
# Another user plants the files root's commands write.
ms_e2e_test(record_planted record_planted.sh)
set_tests_properties(e2e.record_planted PROPERTIES SKIP_RETURN_CODE 77)
ms_e2e_test(record_stderr record_stderr.sh)
ms_e2e_test(record_nowrap record_nowrap.sh)
ms_e2e_test(record_allocators record_allocators.sh)
ms_e2e_test(record_fds record_fds.sh)
ms_e2e_test(record_notsc record_notsc.sh)
ms_e2e_test(record_seccomp record_seccomp.sh)
if(MEMSCRIBE_HAVE_M32)
  ms_test_program(col_notsc32 ${COLP}/col_notsc.c FLAGS -m32 LIBS pthread)
  target_link_options(col_notsc32 PRIVATE -m32)
  add_dependencies(col_notsc32 memscribe_collector32)
  ms_e2e_test(record_notsc32 record_notsc.sh 32)
  set_tests_properties(e2e.record_notsc32 PROPERTIES SKIP_RETURN_CODE 77)
endif()

# record --sample (tests/e2e/record_sample.sh).
ms_test_program(col_sample ${COLP}/col_sample.c)
ms_test_program(col_phases ${COLP}/col_phases.c)
ms_e2e_test(record_sample record_sample.sh)
ms_e2e_test(record_sample_alloc record_sample_alloc.sh)
ms_e2e_test(record_sample_labels record_sample_labels.sh)
ms_e2e_test(record_sample_temp record_sample_temp.sh)
ms_test_program(col_sample_sites ${COLP}/col_sample_sites.c)
ms_e2e_test(record_sample_se record_sample_se.sh)
ms_test_program(col_exact ${COLP}/col_exact.c)
ms_test_program(col_exact_threads ${COLP}/col_exact_threads.c LIBS pthread)
# col_exact with jemalloc as its malloc: the counting's general path.
ms_test_program(col_exact_jemalloc ${COLP}/col_exact.c LIBS ${MS_LIB_JEMALLOC})
ms_e2e_test(record_sample_exact record_sample_exact.sh)
ms_e2e_test(record_arm64_trace record_arm64_trace.sh)
# One source, the same own call sites on every CPU (tests/expected/sites-*.txt).
ms_e2e_test(record_same_sites record_same_sites.sh)
ms_e2e_test(record_snapshot record_snapshot.sh)

# Programs with pools of their own (memscribe/annotate.h): C and C++.
ms_test_program(col_pool ${COLP}/col_pool.c)
ms_test_program(col_pool_cxx ${COLP}/col_pool_cxx.cc)
foreach(p col_pool col_pool_cxx)
  target_include_directories(${p} PRIVATE ${PROJECT_SOURCE_DIR}/include)
endforeach()
ms_e2e_test(record_pools record_pools.sh)

# record -p: attach to a running program (tests/e2e/record_attach.sh).
# The same program static (which -p refuses) and (gcc-multilib) 32-bit.
add_library(rec_attach_plug MODULE ${COLP}/rec_attach_plug.c)
target_compile_options(rec_attach_plug PRIVATE -O0 -g)
set_target_properties(rec_attach_plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs)
ms_test_program(rec_attach_target ${COLP}/rec_attach_target.c LIBS Threads::Threads dl)
add_dependencies(rec_attach_target memscribe_collector_attach rec_attach_plug)
add_dependencies(col_seccomp memscribe_collector_attach)
ms_test_program(rec_attach_static ${COLP}/rec_attach_target.c LIBS Threads::Threads dl)
target_link_options(rec_attach_static PRIVATE -static)
target_compile_definitions(rec_attach_static PRIVATE REC_ATTACH_STATIC)
if(MEMSCRIBE_HAVE_M32)
  ms_test_program(rec_attach_target32 ${COLP}/rec_attach_target.c FLAGS -m32 LIBS Threads::Threads dl)
  target_link_options(rec_attach_target32 PRIVATE -m32)
  add_dependencies(rec_attach_target32 memscribe_collector32_attach)
endif()
# A program whose loader lock a constructor holds while we attach.
add_library(rec_attach_block MODULE ${COLP}/rec_attach_block.c)
target_compile_options(rec_attach_block PRIVATE -O0 -g)
set_target_properties(rec_attach_block PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs)
ms_test_program(rec_attach_locked ${COLP}/rec_attach_locked.c LIBS Threads::Threads dl)
add_dependencies(rec_attach_locked rec_attach_block)
ms_e2e_test(record_attach record_attach.sh)

# C programs that load C++ later (tests/e2e/record_late_cxx.sh): a C host
# and its C++ plugin, which brings libstdc++ in only when it is loaded;
# and a C program that reaches operator new and the other allocators'
# names where nothing defines them.
add_library(col_cxx_plug MODULE ${COLP}/col_cxx_plug.cc)
target_compile_options(col_cxx_plug PRIVATE -O0 -g -faligned-new -fsized-deallocation) # clang: sized delete is opt-in
set_target_properties(col_cxx_plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs)
ms_test_program(col_cxx_host ${COLP}/col_cxx_host.c LIBS dl)
add_dependencies(col_cxx_host col_cxx_plug memscribe_collector_attach)
ms_test_program(col_cxx_none ${COLP}/col_cxx_none.c LIBS dl)
ms_e2e_test(record_late_cxx record_late_cxx.sh)
# Real programs traced as untraced (tests/e2e/record_zoo.sh).
ms_e2e_test(record_zoo record_zoo.sh)
# Thread rows: a thread that only frees after its exit hook; one row per
# image's main thread (tests/e2e/record_thread_rows.sh).
ms_test_program(col_thread_rows ${COLP}/col_thread_rows.c LIBS Threads::Threads)
ms_e2e_test(record_thread_rows record_thread_rows.sh)
ms_e2e_test(record_attach_killed record_attach_killed.sh)
ms_e2e_test(record_attach_seccomp record_attach_seccomp.sh)

# record --reach (docs/leaks.md, "Classes at exit"): a block of each of
# memcheck's classes, each class checked against the program's expectation
# and, where valgrind is installed, against memcheck's, block for block.
ms_test_program(rec_reach ${COLP}/rec_reach.c LIBS Threads::Threads)
ms_e2e_test(rec_reach rec_reach.sh)
# The same under record -p: the scan at the detach and at the exit while
# attached (tests/e2e/rec_reach_attach.sh).
add_dependencies(rec_reach memscribe_collector_attach)
ms_e2e_test(rec_reach_attach rec_reach_attach.sh)
# SIGUSR1 to record --reach: a scan on request, shown by leaks --at.
ms_e2e_test(rec_reach_request rec_reach_request.sh)
# A 32-bit build (4-byte words, i386 registers): tests/e2e/rec_reach32.sh.
if(MEMSCRIBE_HAVE_M32)
  ms_test_program(rec_reach32 ${COLP}/rec_reach.c FLAGS -m32 LIBS Threads::Threads)
  target_link_options(rec_reach32 PRIVATE -m32)
  add_dependencies(rec_reach32 memscribe_collector32)
endif()
ms_e2e_test(rec_reach32 rec_reach32.sh)
# Skipped (77) where 32-bit programs do not run (a kernel without IA32 emulation).
set_tests_properties(e2e.rec_reach32 PROPERTIES SKIP_RETURN_CODE 77)
