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
add_dependencies(col_quirks col_plug)
ms_test_program(col_stderr ${COLP}/col_stderr.c LIBS Threads::Threads)
ms_test_program(rec_intruder ${COLP}/rec_intruder.c)
target_include_directories(rec_intruder PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
ms_test_program(col_fds ${COLP}/col_fds.c)
ms_test_program(col_nowrap ${COLP}/col_nowrap.c LIBS Threads::Threads)
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
endforeach()
ms_test_program(col_static ${COLP}/col_static.c)
target_link_options(col_static PRIVATE -static)

ms_e2e_test(record_calls record_calls.sh)
ms_e2e_test(record_time_unit record_time_unit.sh)
ms_e2e_test(record_cxx record_cxx.sh)
ms_e2e_test(record_threads record_threads.sh)
ms_e2e_test(record_procs record_procs.sh)
ms_e2e_test(record_only record_only.sh)
ms_e2e_test(record_only_gcc record_only_gcc.sh)
ms_e2e_test(record_crash record_crash.sh)
ms_e2e_test(record_quirks record_quirks.sh)
ms_e2e_test(record_refuse record_refuse.sh)
ms_e2e_test(record_valgrind record_valgrind.sh)
ms_e2e_test(record_limits record_limits.sh)
ms_e2e_test(record_channel record_channel.sh)
ms_e2e_test(record_stderr record_stderr.sh)
ms_e2e_test(record_nowrap record_nowrap.sh)
ms_e2e_test(record_allocators record_allocators.sh)
ms_e2e_test(record_fds record_fds.sh)

# record --sample (tests/e2e/record_sample.sh).
ms_test_program(col_sample ${COLP}/col_sample.c)
ms_e2e_test(record_sample record_sample.sh)

# record -p: attach to a running program (tests/e2e/record_attach.sh).
# The same program static and (gcc-multilib) 32-bit, which -p refuses.
ms_test_program(rec_attach_target ${COLP}/rec_attach_target.c)
add_dependencies(rec_attach_target memscribe_collector_attach)
ms_test_program(rec_attach_static ${COLP}/rec_attach_target.c)
target_link_options(rec_attach_static PRIVATE -static)
if(MEMSCRIBE_HAVE_M32)
  ms_test_program(rec_attach_target32 ${COLP}/rec_attach_target.c FLAGS -m32)
  target_link_options(rec_attach_target32 PRIVATE -m32)
endif()
ms_e2e_test(record_attach record_attach.sh)
