# SPDX-License-Identifier: MIT
# The symbolizer's tests (docs/symbols.md): sym_chain, a program with known
# call chains built optimised with debug info; the library it dlopens; a
# capture library standing in for the collector; unit tests on what they
# record; an e2e test through memscribe record and dump.

set(SYM_PROGRAMS ${CMAKE_BINARY_DIR}/tests/programs)
set(SYM_FLAGS -O2 -g -fno-optimize-sibling-calls)

add_executable(sym_chain ${PROJECT_SOURCE_DIR}/tests/programs/sym_chain.cc)
target_compile_definitions(sym_chain PRIVATE _GNU_SOURCE)
target_compile_options(sym_chain PRIVATE ${SYM_FLAGS})
target_include_directories(sym_chain PRIVATE ${PROJECT_SOURCE_DIR}/tests/programs)
target_link_libraries(sym_chain PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(sym_chain PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SYM_PROGRAMS})

add_library(sym_plugin SHARED ${PROJECT_SOURCE_DIR}/tests/programs/sym_plugin.c)
target_compile_options(sym_plugin PRIVATE ${SYM_FLAGS})
target_include_directories(sym_plugin PRIVATE ${PROJECT_SOURCE_DIR}/tests/programs)
set_target_properties(sym_plugin PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${SYM_PROGRAMS})
# sym_chain finds the library beside itself at run time.
add_dependencies(sym_chain sym_plugin)

add_library(sym_capture SHARED ${PROJECT_SOURCE_DIR}/tests/programs/sym_capture.c)
target_compile_definitions(sym_capture PRIVATE _GNU_SOURCE)
target_compile_options(sym_capture PRIVATE -O2 -g)
target_include_directories(sym_capture PRIVATE ${PROJECT_SOURCE_DIR}/tests/programs)
target_link_libraries(sym_capture PRIVATE PkgConfig::UNWIND)
set_target_properties(sym_capture PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${SYM_PROGRAMS})

foreach(t test_ana_sym_chain test_ana_sym_files test_ana_sym_table test_ana_sym_lines)
  ms_unit_test(${t} ${PROJECT_SOURCE_DIR}/tests/unit/${t}.c
               ${PROJECT_SOURCE_DIR}/tests/unit/test_ana_sym_fixture.c LIBS ms_analysis)
  target_compile_definitions(${t} PRIVATE SYM_PROGRAMS_DIR="${SYM_PROGRAMS}"
                             SYM_SOURCE_DIR="${PROJECT_SOURCE_DIR}/tests/programs")
  target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/tests/programs)
  add_dependencies(${t} sym_chain sym_plugin sym_capture)
endforeach()

ms_e2e_test(sym_stacks sym_stacks.sh)

# The PDB reader (Windows modules, docs/windows.md "Symbols") on a PDB lld
# wrote and on damaged copies, through the fuzz target's code.
ms_unit_test(test_sym_pdb ${PROJECT_SOURCE_DIR}/tests/unit/test_sym_pdb.c
             ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_pdb.c LIBS ms_analysis)
target_compile_definitions(test_sym_pdb PRIVATE
  MS_PDB_CORPUS="${PROJECT_SOURCE_DIR}/tests/fuzz/corpus_pdb")

# Windows modules without debug information (their export tables) and the
# files behind Wine's C:\ paths: a PE made by the test, a real DLL checked
# against objdump, and the golden trace that recorded a Wine prefix.
ms_unit_test(test_sym_pe ${PROJECT_SOURCE_DIR}/tests/unit/test_sym_pe.c LIBS ms_analysis)
target_compile_definitions(test_sym_pe PRIVATE MS_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/golden")

# The frame of interest (ana_interest.h): classes of frames, the entry
# chain, the frame of interest and a row's layout on made-up stacks.
ms_unit_test(test_ana_interest ${PROJECT_SOURCE_DIR}/tests/unit/test_ana_interest.c
             LIBS ms_analysis)

# The symbol cache on disk (ana_sym_cache.c): read back as written, a
# damaged tail cut, other options' cache emptied, other files refused.
ms_unit_test(test_ana_sym_cache ${PROJECT_SOURCE_DIR}/tests/unit/test_ana_sym_cache.c
             LIBS ms_analysis)
# ... and its users: every output the same with it, names from it when the
# files are gone, serve's in memory (needs the programs of analysis.cmake).
ms_e2e_test(sym_cache sym_cache.sh)
