#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The end-of-session GPU measurement in two calls of the lent H100 (each well
# under the 10-minute limit of one call), on a carried build of one commit:
#   part 1: every GPU test, compute-sanitizer on the lists of the parts that
#           changed (SANITIZE_LISTS), the device heap's goal workloads, the
#           host pool bench and its PyTorch/CuPy plug-in test, the k-d tree table;
#   part 2: the marching-cubes profile and bench, the device-malloc timings of
#           wa-tor and game-of-life, the SMMO apps table, space efficiency.
# Every step runs under `timeout`; results go to $OUT/<part>/ and are tarred
# into $OUT/session-<n>.tgz (few files come back from the device).
#   BUILD=build-final OUT=out scripts/gpu-session.sh 1|2
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build}
OUT=${OUT:-out}
PART=${1:-1}
R="$OUT/r$PART"
mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version 2>/dev/null | tail -1
  date -u +%FT%TZ; echo "commit $WH_COMMIT"; } > "$R/info.txt" 2>&1
t0=$(date +%s)
step() {   # name seconds command...: log its exit status and wall time
  local name=$1 t=$2; shift 2
  local s=$(date +%s)
  timeout "$t" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)" | tee -a "$R/steps.txt"
}
if [ "$PART" = 1 ]; then
  step gpu-check 220 env SANITIZE_LISTS="${SANITIZE_LISTS:-heap pool arena kdtree}" OUT="$R/check" \
    scripts/gpu-check.sh "$B"
  mkdir -p "$R/heap"
  step heap 100 "$B/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds=bump,default,slab,cuda-malloc \
    --out="$R/heap" --commit="$WH_COMMIT"
  python3 bench/heap/report.py "$R/heap/heap_bench.csv" >> "$R/heap/heap_bench.md" 2>/dev/null
  step pool 110 env BUILD="$B" OUT="$R/pool" bench/pool/gpu-bench.sh
  step plugins 60 python3 plugins/test_plugins.py --lib "$B/lib/libwarpheap_plugin.so"
  step kdtree 80 env BUILD="$B" OUT="$R/kdtree" KD_TIMEOUT=75 KD_BUDGET=65 bench/kdtree/gpu-bench.sh
else
  step arena-profile 45 env BUILD="$B" OUT="$R/arena" bench/arena/gpu-profile.sh
  step arena 150 env BUILD="$B" OUT="$R/arena" bench/arena/gpu-bench.sh
  step soa-malloc 150 env BUILD="$B" OUT="$R" MALLOC_SECS=8 bench/soa/gpu-bench.sh malloc
  step apps 100 env BUILD="$B" OUT="$R" SECS=3 bench/apps/gpu-bench.sh
  step space 330 env BUILD="$B" OUT="$R" HEAP=64 STEPS=4 bench/apps/space.sh
fi
tar -czf "$OUT/session-$PART.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps-$PART.txt"
