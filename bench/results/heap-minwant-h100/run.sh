#!/usr/bin/env bash
# Calls 1 and 2: want4 against base2 only (call 1 asked for tests named
# ad,acd,prob,linux, which do not exist, and ran one, fill90 and util).
#   B=build-carry/hv OUT=$OUT bench/results/heap-minwant-h100/run.sh
VARIANTS="base2 want4" exec "$(dirname "$0")/run2.sh"
