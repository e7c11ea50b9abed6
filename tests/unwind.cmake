# SPDX-License-Identifier: MIT
# The collector's unwinder (src/collector/col_unwind_*.c): checked against
# libunwind under MEMSCRIBE_UNWIND=verify on every collector test program
# and on real programs (tests/e2e/unwind_verify.sh).
set(UNWP ${PROJECT_SOURCE_DIR}/tests/programs)

ms_test_program(col_unwind ${UNWP}/col_unwind.cc LIBS Threads::Threads)
ms_test_program(col_unwind_o2 ${UNWP}/col_unwind.cc LIBS Threads::Threads
                FLAGS -O2 -fomit-frame-pointer -finline)
# Return addresses signed by pointer authentication, A key (and BTI) and
# B key: held to col_unwind's numbers by e2e.record_same_sites.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  ms_test_program(col_unwind_pac ${UNWP}/col_unwind.cc LIBS Threads::Threads
                  FLAGS -mbranch-protection=standard)
  ms_test_program(col_unwind_pacb ${UNWP}/col_unwind.cc LIBS Threads::Threads
                  FLAGS -mbranch-protection=pac-ret+b-key)
endif()

ms_e2e_test(unwind_verify unwind_verify.sh)
# Under an emulator (scripts/cross-check.sh arm64) a tenth of it.
if(NOT MEMSCRIBE_X86_64)
  ms_e2e_test(unwind_verify.small unwind_verify.sh small)
endif()

# The collector test programs' own scripts, every walk checked. Not
# record_fds: verify starts libunwind, whose pipe that test forbids.
foreach(script record_calls record_cxx record_threads record_procs record_crash record_quirks
        record_limits vm_every vm_signals vm_reserve)
  ms_e2e_test(unwind_verify.${script} ${script}.sh)
  set_tests_properties(e2e.unwind_verify.${script} PROPERTIES
    ENVIRONMENT "${MS_TEST_ENV};MEMSCRIBE_UNWIND=verify")
endforeach()

# The stack table and arena grow on demand (tests/e2e/record_aslimit.sh).
ms_test_program(col_aslimit ${UNWP}/col_aslimit.c)
ms_e2e_test(record_aslimit record_aslimit.sh)
