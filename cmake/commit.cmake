# SPDX-License-Identifier: MIT
# Writes OUT: the commit the build's sources come from (scripts/commit.sh
# --sources: git's short hash, "(with uncommitted changes)" after it where
# tracked files differ from it, "unknown" without git), for the reports of
# scripts/bench.sh and scripts/gpu-check.sh, which run binaries that may
# have been built elsewhere.  Run at every build (CMakeLists.txt:
# wh_commit); OUT changes only when its text does.
#   cmake -DSRC=SOURCE_DIR -DOUT=FILE -P cmake/commit.cmake
execute_process(COMMAND bash "${SRC}/scripts/commit.sh" --sources RESULT_VARIABLE rc OUTPUT_VARIABLE commit
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rc STREQUAL "0" OR commit STREQUAL "")
  set(commit unknown)
endif()
file(WRITE "${OUT}.new" "${commit}\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${OUT}.new" "${OUT}")
file(REMOVE "${OUT}.new")
