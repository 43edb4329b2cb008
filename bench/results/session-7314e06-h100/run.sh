#!/usr/bin/env bash
# The GPU call of 2026-11-23 (second session): every GPU test and the sanitizer lists of the heap,
# pool, arena and k-d tree; the device heap's goal workloads with and without event counters; the
# pool bench (the VMM range as default since 6f9e192) and the PyTorch/CuPy plug-in test; the k-d
# tree table; the marching-cubes profile and bench of the arena's commit-in-next-frame variant
# (bench/results/arena/reserve-h100/next-commit-block.patch, built apart in $ARENA_NEXT).
#   BUILD=build-final ARENA_NEXT=carry-main/arena-next OUT=$OUT bench/results/session-7314e06-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; A=${ARENA_NEXT:-}; OUT=${OUT:-out}; R=$OUT/r; mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ; echo "commit $WH_COMMIT"; } > "$R/info.txt" 2>&1
t0=$(date +%s)
step() { local name=$1 t=$2; shift 2; local s=$(date +%s)
  timeout "$t" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)" | tee -a "$R/steps.txt"; }
step gpu-check 220 env SANITIZE_LISTS="heap pool arena kdtree" OUT="$R/check" scripts/gpu-check.sh "$B"
mkdir -p "$R/heap" "$R/heap-prof"
step heap 100 "$B/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds=bump,default,slab,cuda-malloc --out="$R/heap" --commit="$WH_COMMIT"
python3 bench/heap/report.py "$R/heap/heap_bench.csv" >> "$R/heap/heap_bench.md" 2>/dev/null
step heap-prof 60 "$B/bin/wh_heap_bench_prof" --tests=one,fill90 --kinds=default --out="$R/heap-prof" --commit="$WH_COMMIT"
step pool 110 env BUILD="$B" OUT="$R/pool" bench/pool/gpu-bench.sh
step plugins 60 python3 plugins/test_plugins.py --lib "$B/lib/libwarpheap_plugin.so"
step kdtree 80 env BUILD="$B" OUT="$R/kdtree" KD_TIMEOUT=75 KD_BUDGET=65 bench/kdtree/gpu-bench.sh --kinds=BUMP,DEFAULT,cuda-malloc
if [ -n "$A" ]; then
  step arena-next-test 60 "$A/bin/test_arena_gpu"
  step arena-next-memcheck 60 compute-sanitizer --tool memcheck --error-exitcode 99 "$A/bin/test_arena_gpu" --small
  step arena-next-profile 45 env BUILD="$A" OUT="$R/arena-next" bench/arena/gpu-profile.sh
  step arena-next-bench 150 env BUILD="$A" OUT="$R/arena-next" WH_COMMIT="$WH_COMMIT+next-commit-block.patch" bench/arena/gpu-bench.sh
fi
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
