# SPDX-License-Identifier: MIT
# Included from src/analysis/CMakeLists.txt: embed the report's JS, CSS and
# HTML (this folder) into ms_analysis as C arrays (embed.cmake).
file(GLOB MS_HTML_ASSETS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.js
     ${CMAKE_CURRENT_LIST_DIR}/*.css ${CMAKE_CURRENT_LIST_DIR}/*.html)
set(MS_HTML_ASSETS_C ${CMAKE_CURRENT_BINARY_DIR}/ana_html_assets_data.c)
add_custom_command(
  OUTPUT ${MS_HTML_ASSETS_C}
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_CURRENT_LIST_DIR} -DOUT=${MS_HTML_ASSETS_C}
          -P ${CMAKE_CURRENT_LIST_DIR}/embed.cmake
  DEPENDS ${MS_HTML_ASSETS} ${CMAKE_CURRENT_LIST_DIR}/embed.cmake
  COMMENT "Embedding the HTML report's assets")
target_sources(ms_analysis PRIVATE ${MS_HTML_ASSETS_C})
