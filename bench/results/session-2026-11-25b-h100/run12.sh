#!/usr/bin/env bash
# Device call 12: the session's final code -- marching cubes as in r9 (the
# early lock of r10 and the warp's read of r11 gained nothing and were
# taken out), the arena's begin in its two public halves (lock, read).
# test_arena_gpu with memcheck and racecheck, test_pool_gpu; marching cubes
# at 16-64^3 and its memcheck.
set -u
. "$(dirname "$0")/common.sh" r12
arena_checks
step test_pool_gpu 120 "$A/test_pool_gpu"
mc_grids "$O/mc" 16 24 32 64
mc_sanitize
mc_summary
