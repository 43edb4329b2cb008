#!/usr/bin/env bash
# Device call 6 (2026-11-25): the arena's own steps inside the one-kernel
# frames (marching_cubes_prof: WH_ARENA_STAMP in arena_reserve.h), profile at
# 32^3 and 16^3, from build-carry/a1.
set -u
. "$(dirname "$0")/common.sh" r6
for n in 32 16; do
  timeout 150 "$A/marching_cubes_prof" --profile=1 --n=$n --k=3 --frames=300 --md="$O/profile.md" > "$O/profile-$n.log" 2>&1
  echo "profile n=$n rc=$?"
  grep -E "stamps|arena steps" "$O/profile-$n.log"
done
