#!/usr/bin/env bash
# Device call 1 (2026-11-25): CUDA device malloc's heap bytes per object by
# object size (issue 5: what barnes-hut's space ratio is made of), and the
# marching-cubes comparison at the small grids (issue 3), from build-carry/a1.
#   bench/results/session-2026-11-25-h100/run1.sh   (OUT set by the device tool)
set -u
. "$(dirname "$0")/common.sh" r1
timeout 120 "$A/wh_malloc_overhead" --heap-mb=64 --mix=32:80:0.72 > "$O/malloc_overhead.md" 2>&1; echo "malloc_overhead rc=$?"
timeout 60 "$A/wh_malloc_overhead" --heap-mb=64 --sizes=56,88,64,104 --mix=64:104:0.72 >> "$O/malloc_overhead.md" 2>&1; echo "malloc_overhead 2 rc=$?"
for n in 16 24 32; do
  timeout 120 "$A/marching_cubes" --n=$n --k=3 --frames=300 --reps=5 --csv="$O/mc.csv" --md="$O/mc.md" > "$O/mc-$n.log" 2>&1
  echo "marching_cubes n=$n rc=$?"
done
tail -40 "$O/mc.md"
cat "$O/malloc_overhead.md"
