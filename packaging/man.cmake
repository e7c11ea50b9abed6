# SPDX-License-Identifier: MIT
# Runs at build time (cmake -P, packaging/CMakeLists.txt): the man pages
# memscribe(1) and memscribe-COMMAND(1), each made by help2man from
# `memscribe --help` or `memscribe COMMAND --help`, as OUT/PAGE.1 (what
# `man -l` reads in a build tree) and OUT/PAGE.1.gz (what is installed).
# Needs MEMSCRIBE, HELP2MAN, GZIP, OUT, VERSION and COMMANDS (':'-separated).
string(REPLACE ":" ";" COMMANDS "${COMMANDS}")
execute_process(COMMAND ${MEMSCRIBE} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MEMSCRIBE} --help failed (${rc})")
endif()
file(MAKE_DIRECTORY ${OUT}/bin ${OUT}/tmp)

# help2man names a page after the program it runs: a script per command,
# memscribe-COMMAND, runs `memscribe COMMAND`.
function(ms_man page run summary include)
  # help2man makes a SYNOPSIS of a first line "Usage: ..."; memscribe's
  # help says "usage:".
  file(WRITE ${OUT}/tmp/${page}
       "#!/bin/sh\n'${MEMSCRIBE}' ${run} \"$@\" | sed '1s/^usage:/Usage:/'\n")
  file(COPY ${OUT}/tmp/${page} DESTINATION ${OUT}/bin
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                        WORLD_READ WORLD_EXECUTE)
  execute_process(
    COMMAND ${HELP2MAN} --no-info --section=1 "--name=${summary}"
            --version-string=${VERSION} --source=memscribe --manual=memscribe
            --include=${include} --output=${OUT}/${page}.1 ${OUT}/bin/${page}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man ${page} failed (${rc})")
  endif()
  execute_process(COMMAND ${GZIP} -9n -c ${OUT}/${page}.1 OUTPUT_FILE ${OUT}/${page}.1.gz
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${page}.1 failed (${rc})")
  endif()
endfunction()

set(see "")
foreach(c ${COMMANDS})
  string(APPEND see ".BR memscribe-${c} (1),\n")
endforeach()
file(WRITE ${OUT}/tmp/memscribe.h2m
     "[SEE ALSO]\n${see}and memscribe's docs, a page per command (docs/ in its source, share/doc/memscribe/ where installed).\n")
ms_man(memscribe "" "record every allocation a program makes, and ask the trace" ${OUT}/tmp/memscribe.h2m)

foreach(c ${COMMANDS})
  # The command's line of `memscribe --help`: "  NAME  SUMMARY".
  string(REGEX MATCH "\n  ${c} +[^\n]+" line "${help}")
  string(REGEX REPLACE "^\n  ${c} +" "" summary "${line}")
  if(summary STREQUAL "")
    message(FATAL_ERROR "'memscribe --help' lists no command ${c}")
  endif()
  set(doc ${c})
  if(c STREQUAL "top")
    set(doc serve) # top, serve and record --live share a page
  endif()
  file(WRITE ${OUT}/tmp/${c}.h2m
       "[SEE ALSO]\n.BR memscribe (1);\n${doc}.md among memscribe's docs (docs/ in its source, share/doc/memscribe/ where installed).\n")
  ms_man(memscribe-${c} ${c} "${summary}" ${OUT}/tmp/${c}.h2m)
endforeach()
