# SPDX-License-Identifier: MIT
# ThreadSanitizer on the memory the collector shares with the recorder
# (docs/protocol.md, "Memory order"): an emulator on an x86 host cannot show
# a missing barrier, but TSan flags a non-atomic or unsynchronised access on
# any CPU. It sees one process only, so the collector's ring writer, stack
# table and counters and the recorder's copy, merge and sums are compiled
# into one test program with threads on both sides. -fsanitize=thread does
# not mix with ASan: the sources are compiled again here, not linked from
# the sanitized libraries; rings of 4 KiB make every thread wait for room.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=thread)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=thread)
check_c_source_compiles("int main(void) { return 0; }" MEMSCRIBE_HAVE_TSAN)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(MEMSCRIBE_HAVE_TSAN)
  set(S ${PROJECT_SOURCE_DIR}/src)
  ms_unit_test(test_tsan_rings ${PROJECT_SOURCE_DIR}/tests/unit/test_tsan_rings.c
    ${S}/collector/col_ring.c ${S}/collector/col_stack.c ${S}/collector/col_count.c
    ${S}/recorder/rec_stream.c ${S}/recorder/rec_merge.c ${S}/recorder/rec_counters.c
    ${S}/recorder/rec_clock.c ${S}/recorder/rec_stackmap.c ${S}/util/util_array.c
    NO_SANITIZE LIBS Threads::Threads)
  target_compile_definitions(test_tsan_rings PRIVATE COL_RING_SIZE=4096u)
  target_compile_options(test_tsan_rings PRIVATE -fsanitize=thread -O1 -fno-omit-frame-pointer)
  target_link_options(test_tsan_rings PRIVATE -fsanitize=thread)
  # A report fails the test at once, not only in its exit status.
  set_tests_properties(unit.test_tsan_rings PROPERTIES
    ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1" TIMEOUT 300)
else()
  message(WARNING "no ThreadSanitizer with ${CMAKE_C_COMPILER}: unit.test_tsan_rings not built")
endif()
