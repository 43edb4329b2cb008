#!/usr/bin/env bash
# Device call 4 (2026-11-25): marching cubes' profile with timestamps inside
# the one-kernel frames (--profile=1 ends with the table "One-kernel frames,
# timestamps"), at 32^3 and 16^3, from build-carry/a1.
set -u
. "$(dirname "$0")/common.sh" r4
for n in 32 16; do
  timeout 150 "$A/marching_cubes" --profile=1 --n=$n --k=3 --frames=300 --md="$O/profile.md" > "$O/profile-$n.log" 2>&1
  echo "profile n=$n rc=$?"
done
grep -A5 "timestamps" "$O/profile.md"
