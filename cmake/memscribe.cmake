# SPDX-License-Identifier: MIT
# Shared build settings: the C standard, the build type, warnings and the
# sanitizer switch (the project's, and bench/'s built on its own).

set(CMAKE_C_STANDARD 11)
set(CMAKE_C_STANDARD_REQUIRED ON)
set(CMAKE_C_EXTENSIONS OFF)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo)
endif()

set(MEMSCRIBE_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes
    -Wmissing-prototypes -Wformat=2 -Wno-unused-parameter)
if(MEMSCRIBE_WERROR)
  list(APPEND MEMSCRIBE_WARNINGS -Werror)
endif()
set(MEMSCRIBE_SAN_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined)

# The layer rule (docs/architecture.md), checked by the compiler: a target
# built with LAYERS sees, under src/, only the folders it names, through a
# folder of links of its own (<build>/layers/<target>/). An #include of a
# layer it may not use fails the build: "No such file or directory". A
# layer may be a sub-folder (analysis/core: the rooms inside analysis each
# see the rooms below them, ms_analysis_room in src/analysis/).
function(ms_layer_dir out tgt)
  set(dir ${CMAKE_BINARY_DIR}/layers/${tgt})
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  foreach(layer ${ARGN})
    get_filename_component(parent ${dir}/${layer} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${layer} ${dir}/${layer} SYMBOLIC)
  endforeach()
  set(${out} ${dir} PARENT_SCOPE)
endfunction()

# ms_embed_assets(<target> <table> <folder>): every *.js, *.css and *.html
# of folder compiled into target as the table `const struct ana_asset
# <table>[]` (analysis/core/ana_asset.h; cmake/embed.cmake writes it).
function(ms_embed_assets tgt table dir)
  file(GLOB assets CONFIGURE_DEPENDS ${dir}/*.js ${dir}/*.css ${dir}/*.html)
  set(c ${CMAKE_CURRENT_BINARY_DIR}/${table}_data.c)
  add_custom_command(
    OUTPUT ${c}
    COMMAND ${CMAKE_COMMAND} -DDIR=${dir} -DOUT=${c} -DTABLE=${table}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    DEPENDS ${assets} ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    COMMENT "Embedding ${table}")
  target_sources(${tgt} PRIVATE ${c})
endfunction()

# ms_target(<target> [NO_SANITIZE] [LAYERS <src folders>...]): warnings,
# _GNU_SOURCE, include paths, and (unless the target is the collector or a
# traced test program) the sanitizers. Without LAYERS (tests, bench) the
# target sees all of src/.
function(ms_target tgt)
  cmake_parse_arguments(A "NO_SANITIZE" "" "LAYERS" ${ARGN})
  target_compile_definitions(${tgt} PRIVATE _GNU_SOURCE)
  target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:C>:${MEMSCRIBE_WARNINGS}>)
  if(A_LAYERS)
    ms_layer_dir(src ${tgt} ${A_LAYERS})
  else()
    set(src ${PROJECT_SOURCE_DIR}/src)
  endif()
  target_include_directories(${tgt} PRIVATE ${PROJECT_SOURCE_DIR}/include ${src})
  if(MEMSCRIBE_SANITIZE AND NOT A_NO_SANITIZE)
    target_compile_options(${tgt} PRIVATE ${MEMSCRIBE_SAN_FLAGS})
    target_link_options(${tgt} PRIVATE ${MEMSCRIBE_SAN_FLAGS})
  endif()
endfunction()

# ms_test_program(<name> <sources...> [LIBS ...] [FLAGS ...]): a program the
# tests trace. Built -O0 -fno-inline with debug info and no sanitizer, since
# the collector must interpose its malloc.
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
