# SPDX-License-Identifier: MIT
# memscribe replay (docs/replay.md): known sequences under every allocator,
# threads, fork children's frees, exactness under the collector, streaming.
ms_test_program(rpl_known ${PROJECT_SOURCE_DIR}/tests/programs/rpl_known.c LIBS Threads::Threads)
# The same linked against librpl_huge.so, whose malloc of 2^40 bytes or
# more succeeds (the collector, preloaded, comes before it and calls it).
add_library(rpl_huge SHARED ${PROJECT_SOURCE_DIR}/tests/programs/rpl_huge_lib.c)
target_compile_options(rpl_huge PRIVATE -O0 -g)
set_target_properties(rpl_huge PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs)
ms_test_program(rpl_known_huge ${PROJECT_SOURCE_DIR}/tests/programs/rpl_known.c LIBS Threads::Threads rpl_huge)
ms_e2e_test(replay_known replay_known.sh)
ms_e2e_test(replay_exact replay_exact.sh)
ms_e2e_test(replay_stream replay_stream.sh)
