# SPDX-License-Identifier: MIT
# cmake -DDIR=<folder> -DMAX=25 [-DREADME=<file>] -P lines.cmake: fails when a
# quick start in DIR (*.c, *.cu, *.py) has more than MAX lines, every line
# counted, or when README is given and does not contain it word for word.
file(GLOB sources ${DIR}/*.c ${DIR}/*.cu ${DIR}/*.py)
foreach(f ${sources})
  file(READ ${f} text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines n)
  if(NOT text MATCHES "\n$" AND NOT text STREQUAL "")
    math(EXPR n "${n} + 1")                      # a last line without its newline
  endif()
  get_filename_component(name ${f} NAME)
  message(STATUS "${name}: ${n} lines")
  if(n GREATER MAX)
    message(SEND_ERROR "${name}: ${n} lines, more than ${MAX}")
  endif()
  if(README)
    file(READ ${README} readme)
    string(FIND "${readme}" "${text}" at)
    if(at EQUAL -1)
      message(SEND_ERROR "${name}: not in ${README} as it is in ${DIR}")
    endif()
  endif()
endforeach()
if(NOT sources)
  message(FATAL_ERROR "no quick starts in ${DIR}")
endif()
