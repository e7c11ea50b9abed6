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

# A test in the Wine prefix: it needs the prefix set up, has it to itself
# and may take five minutes. SKIP77: its exit 77 is a skip (no wine32).
function(win_test name)
  cmake_parse_arguments(WT "SKIP77" "" "COMMAND" ${ARGN})
  add_test(NAME windows.${name} COMMAND ${WT_COMMAND})
  set_tests_properties(windows.${name} PROPERTIES FIXTURES_REQUIRED winepfx
                       RESOURCE_LOCK winepfx TIMEOUT 300)
  if(WT_SKIP77)
    set_tests_properties(windows.${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()

# The x86-64 SCRIPT given wine64, the programs, the prefix, its output
# directory OUT and memscribe.
function(win_run name script out)
  win_test(${name}
           COMMAND bash ${WIN_TESTS}/${script} ${WIN_WINE64} ${WIN_DIR64} ${WIN_PREFIX}
                   ${CMAKE_BINARY_DIR}/windows/${out} $<TARGET_FILE:memscribe>)
endfunction()

add_test(NAME windows.prefix_setup
         COMMAND bash ${WIN_TESTS}/wine_prefix.sh setup ${WIN_PREFIX} ${WIN_WINE64})
add_test(NAME windows.prefix_cleanup
         COMMAND bash ${WIN_TESTS}/wine_prefix.sh cleanup ${WIN_PREFIX} ${WIN_WINE64})
set_tests_properties(windows.prefix_setup PROPERTIES FIXTURES_SETUP winepfx TIMEOUT 300)
set_tests_properties(windows.prefix_cleanup PROPERTIES FIXTURES_CLEANUP winepfx)
win_test(hook_live
         COMMAND sh -c "WINEPREFIX=${WIN_PREFIX} WINEDEBUG=-all ${WIN_WINE64} ${WIN_DIR64}/win_hook_live.exe")
win_test(launcher_args
         COMMAND bash ${WIN_TESTS}/launcher_args.sh ${WIN_WINE64} ${WIN_DIR64} ${WIN_PREFIX}
                 ${CMAKE_BINARY_DIR}/windows/out-x86_64)
foreach(mode all crash)
  win_test(known_${mode}
           COMMAND bash ${WIN_TESTS}/run_known.sh ${WIN_WINE64} ${WIN_DIR64}
                   $<TARGET_FILE:win_dump> ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-x86_64
                   ${mode} $<TARGET_FILE:win_trace> $<TARGET_FILE:memscribe>)
endforeach()

# memscribe record -- prog.exe on Linux: the same records streamed to the
# Linux recorder while the program runs (docs/windows.md).
foreach(mode all crash demo)
  win_test(record_${mode}
           COMMAND bash ${WIN_TESTS}/run_record.sh ${WIN_WINE64} ${WIN_DIR64}
                   $<TARGET_FILE:win_dump> ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-record
                   ${mode} $<TARGET_FILE:memscribe>)
endforeach()

# The demo (WPA's MemoryTestApp) and its numbers, with offline symbols.
win_run(demo run_demo.sh out-x86_64)

# vmem's lifetime row of a Windows program names its own function
# (commit_big), not Wine's VirtualAllocEx; no row holds the entry chain
# (issue 59, item 2).
win_run(rows run_rows.sh out-rows)

# The HTML report of a Windows program: its VirtualAlloc commit lifetimes
# on screen in Chromium against vmem, window by window (issue 42, item 4).
win_test(html_vmem
         COMMAND bash ${WIN_TESTS}/run_html.sh ${WIN_WINE64} ${WIN_DIR64} ${WIN_PREFIX}
                 ${CMAKE_BINARY_DIR}/windows/out-html $<TARGET_FILE:memscribe>
                 ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR})

# The address space at start: regions made before the collector loaded.
win_test(snapshot
         COMMAND bash ${WIN_TESTS}/run_snap.sh ${WIN_WINE64} ${WIN_DIR64} $<TARGET_FILE:win_dump>
                 ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-snap $<TARGET_FILE:memscribe>)

# Symbols from a PDB: a program built by clang with lld writing a PDB, its
# leaks named from the PDB found in each place the symbolizer looks.
win_run(pdb_symbols run_pdb.sh out-pdb)

# Wine's own DLLs named without options, in every output, from the prefix
# the trace recorded; without debug information, by their exports.
win_run(wine_names run_wine_names.sh out-names)

# 32-bit: the i686 collector and launcher on the i686 program under wine32.
# Without wine32 (scripts/setup.sh says why it may be missing) the test is
# reported as skipped with the reason, never passed.
set(WIN_WINE32 /usr/lib/wine/wine)
if("i686" IN_LIST MEMSCRIBE_WINDOWS_ARCHS)
  win_test(known_i686 SKIP77
           COMMAND bash ${WIN_TESTS}/run_known.sh ${WIN_WINE32} ${CMAKE_BINARY_DIR}/windows/i686
                   $<TARGET_FILE:win_dump> ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-i686 all
                   $<TARGET_FILE:win_trace> $<TARGET_FILE:memscribe>)
  win_test(frag_i686 SKIP77
           COMMAND bash ${WIN_TESTS}/run_frag.sh ${WIN_WINE32} ${CMAKE_BINARY_DIR}/windows/i686
                   ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-frag $<TARGET_FILE:memscribe>)
  win_test(wine_names_i686 SKIP77
           COMMAND bash ${WIN_TESTS}/run_wine_names.sh ${WIN_WINE32} ${CMAKE_BINARY_DIR}/windows/i686
                   ${WIN_PREFIX} ${CMAKE_BINARY_DIR}/windows/out-names-i686 $<TARGET_FILE:memscribe>)
else()
  add_test(NAME windows.toolchain_i686 COMMAND sh -c
    "echo 'mingw-w64 i686 (i686-w64-mingw32-gcc/g++) missing: run scripts/setup.sh --test'; exit 1")
endif()
