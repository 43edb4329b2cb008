#!/usr/bin/env bash
# The first GPU call of 2026-11-23 (fourth session): what PENDING.md lists as unmeasured --
# every GPU test and the sanitizer lists of the heap, arena and k-d tree (racecheck and synccheck
# of the builder added), the k-d tree table at KD_MIN_BLOCKS=2 -- and why the space-efficiency
# searches stopped where they did (issue 5): one probe of each app at the first size that failed
# at 409c075, with the reason now kept in space-log.txt.
#   BUILD=build-final OUT=$OUT bench/results/session-s4-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; R=$OUT/r; mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ; echo "commit $WH_COMMIT"; } > "$R/info.txt" 2>&1
t0=$(date +%s)
step() { local name=$1 t=$2; shift 2; local s=$(date +%s)
  timeout "$t" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)" | tee -a "$R/steps.txt"; }
step gpu-check 200 env SANITIZE_LISTS="heap arena kdtree" OUT="$R/check" scripts/gpu-check.sh "$B"
step kdtree 80 env BUILD="$B" OUT="$R/kdtree" KD_TIMEOUT=75 KD_BUDGET=65 bench/kdtree/gpu-bench.sh --kinds=BUMP,DEFAULT,cuda-malloc
step space-probe 100 env BUILD="$B" OUT="$R/space" HEAP=64 VARIANTS=warpheap STEPS=0 \
  START_SUGARSCAPE=832 START_TRAFFIC=36000 START_BARNESHUT=375000 START_COLLISION=1400000 START_STRUCTURE=640 bench/apps/space.sh
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
