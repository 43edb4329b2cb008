#!/usr/bin/env bash
# Device call 9: marching cubes compiled for LIST cores only
# (WH_BLOCKS_KINDS: TLSF's and the max-heap's code out of its kernels; the
# commit kernel's PTX from 14.4k to 5.8k lines, with the commit launched
# ahead carrying one copy of the staged path, not two).  test_arena_gpu
# with memcheck; marching cubes at 16-64^3; profiles at 16 and 32^3 and the
# arena's steps at 32^3; memcheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r9
step test_arena_gpu 200 "$A/test_arena_gpu"
step memcheck_arena 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
mc_grids "$O/mc" 16 24 32 64
mc_profiles 16 32
mc_sanitize
mc_summary
