# SPDX-License-Identifier: MIT
# Windows (docs/windows.md): the hook engine's decoder and trampoline builder
# on the host; the cross-built collector and launcher under wine64. A missing
# cross compiler or wine is a failing test naming the package, never a
# silent skip.
ms_unit_test(test_win_hook ${PROJECT_SOURCE_DIR}/tests/windows/test_win_hook.c
             LIBS win_hookcore)

set(WIN_TESTS ${PROJECT_SOURCE_DIR}/tests/windows)
set(WIN_WINE64 /usr/lib/wine/wine64)
set(WIN_PREFIX ${CMAKE_BINARY_DIR}/windows/wineprefix)

# The decoder agrees with objdump on the first instructions of every export
# of Wine's own x86-64 DLLs (real compiler output, thousands of prologues).
add_executable(win_declen ${WIN_TESTS}/win_declen.c)
ms_target(win_declen)
target_link_libraries(win_declen PRIVATE win_hookcore)
add_test(NAME windows.decode_vs_objdump
         COMMAND python3 ${WIN_TESTS}/decode_vs_objdump.py $<TARGET_FILE:win_declen>
                 /usr/lib/x86_64-linux-gnu/wine/x86_64-windows)

add_test(NAME windows.dump_bad
         COMMAND bash ${WIN_TESTS}/dump_bad.sh $<TARGET_FILE:win_dump>
                 ${CMAKE_BINARY_DIR}/windows/dump_bad)

if(NOT "x86_64" IN_LIST MEMSCRIBE_WINDOWS_ARCHS OR NOT EXISTS ${WIN_WINE64})
  add_test(NAME windows.toolchain COMMAND sh -c
    "echo 'mingw-w64 (x86_64-w64-mingw32-gcc/g++) or ${WIN_WINE64} missing: run scripts/setup.sh --test'; exit 1")
  return()
endif()

set(WIN_DIR64 ${CMAKE_BINARY_DIR}/windows/x86_64)
add_test(NAME windows.prefix_setup
         COMMAND bash ${WIN_TESTS}/wine_prefix.sh setup ${WIN_PREFIX} ${WIN_WINE64})
add_test(NAME windows.prefix_cleanup
         COMMAND bash ${WIN_TESTS}/wine_prefix.sh cleanup ${WIN_PREFIX} ${WIN_WINE64})
set_tests_properties(windows.prefix_setup PROPERTIES FIXTURES_SETUP winepfx TIMEOUT 300)
set_tests_properties(windows.prefix_cleanup PROPERTIES FIXTURES_CLEANUP winepfx)
add_test(NAME windows.hook_live
         COMMAND sh -c "WINEPREFIX=${WIN_PREFIX} WINEDEBUG=-all ${WIN_WINE64} ${WIN_DIR64}/win_hook_live.exe")
set_tests_properties(windows.hook_live PROPERTIES FIXTURES_REQUIRED winepfx
                     RESOURCE_LOCK winepfx TIMEOUT 300)
add_test(NAME windows.launcher_args
         COMMAND bash ${WIN_TESTS}/launcher_args.sh ${WIN_WINE64} ${WIN_DIR64} ${WIN_PREFIX}
                 ${CMAKE_BINARY_DIR}/windows/out-x86_64)
set_tests_properties(windows.launcher_args PROPERTIES FIXTURES_REQUIRED winepfx
                     RESOURCE_LOCK winepfx TIMEOUT 300)
foreach(mode all crash)
  add_test(NAME windows.known_${mode}
           COMMAND bash ${WIN_TESTS}/run_known.sh ${WIN_WINE64} ${WIN_DIR64}
                   $<TARGET_FILE:win_dump> ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-x86_64
                   ${mode} $<TARGET_FILE:win_trace> $<TARGET_FILE:memscribe>)
  set_tests_properties(windows.known_${mode} PROPERTIES FIXTURES_REQUIRED winepfx
                       RESOURCE_LOCK winepfx TIMEOUT 300)
endforeach()

# memscribe record -- prog.exe on Linux: the same records streamed to the
# Linux recorder while the program runs (docs/windows.md).
foreach(mode all crash demo)
  add_test(NAME windows.record_${mode}
           COMMAND bash ${WIN_TESTS}/run_record.sh ${WIN_WINE64} ${WIN_DIR64}
                   $<TARGET_FILE:win_dump> ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-record
                   ${mode} $<TARGET_FILE:memscribe>)
  set_tests_properties(windows.record_${mode} PROPERTIES FIXTURES_REQUIRED winepfx
                       RESOURCE_LOCK winepfx TIMEOUT 300)
endforeach()

# The demo (WPA's MemoryTestApp) and its numbers, with offline symbols.
add_test(NAME windows.demo
         COMMAND bash ${WIN_TESTS}/run_demo.sh ${WIN_WINE64} ${WIN_DIR64} ${WIN_PREFIX}
                 ${CMAKE_BINARY_DIR}/windows/out-x86_64 $<TARGET_FILE:memscribe>)
set_tests_properties(windows.demo PROPERTIES FIXTURES_REQUIRED winepfx
                     RESOURCE_LOCK winepfx TIMEOUT 300)

# vmem's lifetime row of a Windows program names its own function
# (commit_big), not Wine's VirtualAllocEx; no row holds the entry chain
# (issue 59, item 2).
add_test(NAME windows.rows
         COMMAND bash ${WIN_TESTS}/run_rows.sh ${WIN_WINE64} ${WIN_DIR64} ${WIN_PREFIX}
                 ${CMAKE_BINARY_DIR}/windows/out-rows $<TARGET_FILE:memscribe>)
set_tests_properties(windows.rows PROPERTIES FIXTURES_REQUIRED winepfx
                     RESOURCE_LOCK winepfx TIMEOUT 300)

# The HTML report of a Windows program: its VirtualAlloc commit lifetimes
# on screen in Chromium against vmem, window by window (issue 42, item 4).
add_test(NAME windows.html_vmem
         COMMAND bash ${WIN_TESTS}/run_html.sh ${WIN_WINE64} ${WIN_DIR64} ${WIN_PREFIX}
                 ${CMAKE_BINARY_DIR}/windows/out-html $<TARGET_FILE:memscribe>
                 ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(windows.html_vmem PROPERTIES FIXTURES_REQUIRED winepfx
                     RESOURCE_LOCK winepfx TIMEOUT 300)

# The address space at start: regions made before the collector loaded.
add_test(NAME windows.snapshot
         COMMAND bash ${WIN_TESTS}/run_snap.sh ${WIN_WINE64} ${WIN_DIR64} $<TARGET_FILE:win_dump>
                 ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-snap $<TARGET_FILE:memscribe>)
set_tests_properties(windows.snapshot PROPERTIES FIXTURES_REQUIRED winepfx
                     RESOURCE_LOCK winepfx TIMEOUT 300)

# Symbols from a PDB: a program built by clang with lld writing a PDB, its
# leaks named from the PDB found in each place the symbolizer looks.
add_test(NAME windows.pdb_symbols
         COMMAND bash ${WIN_TESTS}/run_pdb.sh ${WIN_WINE64} ${WIN_DIR64} ${WIN_PREFIX}
                 ${CMAKE_BINARY_DIR}/windows/out-pdb $<TARGET_FILE:memscribe>)
set_tests_properties(windows.pdb_symbols PROPERTIES FIXTURES_REQUIRED winepfx
                     RESOURCE_LOCK winepfx TIMEOUT 300)

# Wine's own DLLs named without options, in every output, from the prefix
# the trace recorded; without debug information, by their exports.
add_test(NAME windows.wine_names
         COMMAND bash ${WIN_TESTS}/run_wine_names.sh ${WIN_WINE64} ${WIN_DIR64} ${WIN_PREFIX}
                 ${CMAKE_BINARY_DIR}/windows/out-names $<TARGET_FILE:memscribe>)
set_tests_properties(windows.wine_names PROPERTIES FIXTURES_REQUIRED winepfx
                     RESOURCE_LOCK winepfx TIMEOUT 300)

# 32-bit: the i686 collector and launcher on the i686 program under wine32.
# Without wine32 (scripts/setup.sh says why it may be missing) the test is
# reported as skipped with the reason, never passed.
set(WIN_WINE32 /usr/lib/wine/wine)
if("i686" IN_LIST MEMSCRIBE_WINDOWS_ARCHS)
  add_test(NAME windows.known_i686
           COMMAND bash ${WIN_TESTS}/run_known.sh ${WIN_WINE32} ${CMAKE_BINARY_DIR}/windows/i686
                   $<TARGET_FILE:win_dump> ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-i686 all
                   $<TARGET_FILE:win_trace> $<TARGET_FILE:memscribe>)
  set_tests_properties(windows.known_i686 PROPERTIES FIXTURES_REQUIRED winepfx
                       RESOURCE_LOCK winepfx TIMEOUT 300 SKIP_RETURN_CODE 77)
  add_test(NAME windows.frag_i686
           COMMAND bash ${WIN_TESTS}/run_frag.sh ${WIN_WINE32} ${CMAKE_BINARY_DIR}/windows/i686
                   ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-frag $<TARGET_FILE:memscribe>)
  set_tests_properties(windows.frag_i686 PROPERTIES FIXTURES_REQUIRED winepfx
                       RESOURCE_LOCK winepfx TIMEOUT 300 SKIP_RETURN_CODE 77)
  add_test(NAME windows.wine_names_i686
           COMMAND bash ${WIN_TESTS}/run_wine_names.sh ${WIN_WINE32} ${CMAKE_BINARY_DIR}/windows/i686
                   ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-names-i686 $<TARGET_FILE:memscribe>)
  set_tests_properties(windows.wine_names_i686 PROPERTIES FIXTURES_REQUIRED winepfx
                       RESOURCE_LOCK winepfx TIMEOUT 300 SKIP_RETURN_CODE 77)
else()
  add_test(NAME windows.toolchain_i686 COMMAND sh -c
    "echo 'mingw-w64 i686 (i686-w64-mingw32-gcc/g++) missing: run scripts/setup.sh --test'; exit 1")
endif()
