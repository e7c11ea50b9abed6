# SPDX-License-Identifier: MIT
# The whole address space: precise capture of every mapping,
# signals under Syscall User Dispatch, commit lifetimes, 32-bit
# fragmentation (tests/e2e/vm_*.sh).
set(VMP ${PROJECT_SOURCE_DIR}/tests/programs)

add_library(vm_plug MODULE ${VMP}/vm_plug_lib.c)
target_compile_options(vm_plug PRIVATE -O0 -g)
set_target_properties(vm_plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs)

ms_test_program(vm_every ${VMP}/vm_every.c LIBS Threads::Threads dl)
add_dependencies(vm_every vm_plug)
ms_test_program(vm_signals ${VMP}/vm_signals.c)
ms_test_program(vm_reserve ${VMP}/vm_reserve.c)
ms_test_program(vm_harm ${VMP}/vm_harm.c LIBS Threads::Threads)

ms_e2e_test(vm_reserve vm_reserve.sh)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  # --vm-precise (Syscall User Dispatch): x86's alone (docs/platforms.md).
  ms_e2e_test(vm_every vm_every.sh)
  ms_e2e_test(vm_signals vm_signals.sh)
  ms_e2e_test(vm_harm vm_harm.sh)
else()
  ms_e2e_test(vm_precise_refused vm_precise_refused.sh)
endif()

if(MEMSCRIBE_HAVE_M32)
  # Whether this machine runs 32-bit programs at all: the tests below (and
  # record_attach's 32-bit part) ask it first and are skipped where not.
  ms_test_program(m32_probe ${VMP}/m32_probe.c FLAGS -m32)
  target_link_options(m32_probe PRIVATE -m32)
  ms_test_program(vm_frag32 ${VMP}/vm_frag32.c FLAGS -m32)
  target_link_options(vm_frag32 PRIVATE -m32)
  add_dependencies(vm_frag32 memscribe_collector32)
  ms_e2e_test(vm_frag32 vm_frag32.sh)
  # The same precise-capture tests on the i386 collector.
  add_library(vm_plug32 MODULE ${VMP}/vm_plug_lib.c)
  target_compile_options(vm_plug32 PRIVATE -m32 -O0 -g)
  target_link_options(vm_plug32 PRIVATE -m32)
  set_target_properties(vm_plug32 PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs)
  ms_test_program(vm_every32 ${VMP}/vm_every.c FLAGS -m32 LIBS pthread dl)
  target_link_options(vm_every32 PRIVATE -m32)
  add_dependencies(vm_every32 vm_plug32 memscribe_collector32)
  ms_test_program(vm_signals32 ${VMP}/vm_signals.c FLAGS -m32)
  target_link_options(vm_signals32 PRIVATE -m32)
  add_dependencies(vm_signals32 memscribe_collector32)
  ms_e2e_test(vm_every32 vm_every.sh 32)
  ms_e2e_test(vm_signals32 vm_signals.sh 32)
  ms_test_program(vm_harm32 ${VMP}/vm_harm.c FLAGS -m32 LIBS pthread)
  target_link_options(vm_harm32 PRIVATE -m32)
  add_dependencies(vm_harm32 memscribe_collector32)
  ms_e2e_test(vm_harm32 vm_harm.sh 32)
  ms_e2e_test(record_exec_class record_exec_class.sh)
  set_tests_properties(e2e.vm_frag32 e2e.vm_every32 e2e.vm_signals32 e2e.vm_harm32
                       e2e.record_exec_class PROPERTIES SKIP_RETURN_CODE 77)
endif()

ms_unit_test(test_ana_vm ${PROJECT_SOURCE_DIR}/tests/unit/test_ana_vm.c LIBS ms_analysis ms_format)
ms_e2e_test(vm_cli vm_cli.sh)
