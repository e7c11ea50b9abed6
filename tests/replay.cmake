# SPDX-License-Identifier: MIT
# memscribe replay (docs/replay.md): known sequences under every allocator,
# threads, fork children's frees, exactness under the collector, streaming.
ms_test_program(rpl_known ${PROJECT_SOURCE_DIR}/tests/programs/rpl_known.c LIBS Threads::Threads)
ms_e2e_test(replay_known replay_known.sh)
ms_e2e_test(replay_exact replay_exact.sh)
ms_e2e_test(replay_stream replay_stream.sh)
