#!/usr/bin/env bash
# Device call 5: the plan's quote (the reserve answers a count that fits
# the cursor's free block with one comparison; whether the plan is current
# decided while the count is summed), and a row with the commit on an SM
# of its own (all the shared memory a block may have, so no frame block
# shares its SM).  test_arena_gpu with memcheck and racecheck; marching
# cubes at 16-64^3, twice; profiles at 32^3 with every frame's stamps;
# memcheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r5
MC_STAMPS_ALL=1 full_call
pack
