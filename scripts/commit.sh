#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The commit a benchmark report names, for binaries in BUILD_DIR: WH_COMMIT
# where set; else what the build recorded (BUILD_DIR/bin/COMMIT, written at
# every build by cmake/commit.cmake: binaries copied to another machine
# keep it); else this checkout's HEAD, with "(with uncommitted changes)"
# where tracked files differ; else "unknown".  --sources: only the last two,
# the checkout's (what cmake/commit.cmake records).
#   scripts/commit.sh BUILD_DIR | --sources
set -u
if [ "${1:-}" != --sources ]; then
  if [ -n "${WH_COMMIT:-}" ]; then echo "$WH_COMMIT"; exit 0; fi
  if [ -s "${1:-build}/bin/COMMIT" ]; then head -1 "${1:-build}/bin/COMMIT"; exit 0; fi
fi
cd "$(dirname "$0")/.." || exit 1
if c=$(git rev-parse --short HEAD 2>/dev/null); then
  git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && c="$c (with uncommitted changes)"
  echo "$c"
else
  echo unknown
fi
