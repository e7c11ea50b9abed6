# SPDX-License-Identifier: MIT
# Shared build settings: warnings (STYLE.md) and the sanitizer switch.

set(MEMSCRIBE_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes
    -Wmissing-prototypes -Wformat=2 -Wno-unused-parameter)
if(MEMSCRIBE_WERROR)
  list(APPEND MEMSCRIBE_WARNINGS -Werror)
endif()
set(MEMSCRIBE_SAN_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined)

# ms_target(<target>): warnings, _GNU_SOURCE, include paths, and (unless the
# target is the collector or a traced test program) the sanitizers.
function(ms_target tgt)
  cmake_parse_arguments(A "NO_SANITIZE" "" "" ${ARGN})
  get_target_property(kind ${tgt} TYPE)
  target_compile_definitions(${tgt} PRIVATE _GNU_SOURCE)
  get_target_property(langs ${tgt} LINKER_LANGUAGE)
  target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:C>:${MEMSCRIBE_WARNINGS}>)
  target_include_directories(${tgt} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  if(MEMSCRIBE_SANITIZE AND NOT A_NO_SANITIZE)
    target_compile_options(${tgt} PRIVATE ${MEMSCRIBE_SAN_FLAGS})
    target_link_options(${tgt} PRIVATE ${MEMSCRIBE_SAN_FLAGS})
  endif()
endfunction()

# ms_test_program(<name> <sources...> [LIBS ...] [FLAGS ...]): a program the
# tests trace. Built -O0 -fno-inline with debug info and no sanitizer, since
# the collector must interpose its malloc (STYLE.md, Tests).
function(ms_test_program name)
  cmake_parse_arguments(A "" "" "LIBS;FLAGS" ${ARGN})
  add_executable(${name} ${A_UNPARSED_ARGUMENTS})
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  target_compile_options(${name} PRIVATE -O0 -g -fno-inline -fno-omit-frame-pointer ${A_FLAGS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/programs)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs)
  if(A_LIBS)
    target_link_libraries(${name} PRIVATE ${A_LIBS})
  endif()
endfunction()
