#!/usr/bin/env bash
# Device call 1: the one-pass frame (onepass_kernel: decoupled look-back,
# the arena's window opened before the count, arena_window.h) -- marching
# cubes at 16^3, 64^3 and 128^3 (and 128^3 in 8x8x8 bricks), memcheck and
# racecheck of small runs, memcheck where the bricks are not all resident.
set -u
. "$(dirname "$0")/common.sh" r1
mc_grids "$O/mc" 16 64
mc_grids "$O/mc128" 128
MC_ARGS=--bz=8 MC_TAG=_bz8 mc_grids "$O/mc128_bz8" 128
MC_RACE=1 mc_sanitize
mc_sanitize_onepass
onepass_summary
pack
