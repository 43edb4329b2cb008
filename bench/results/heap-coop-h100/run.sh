#!/usr/bin/env bash
# Device heap, third session of 2026-11-23: the whole group sets up a bump
# segment's pages (wh__seg_begin/setup/finish), rare paths flattened, the
# kind a constant in the bench kernels.  Every GPU test, the heap and k-d
# tree sanitizer lists, the heap goal workloads (and their event counters),
# heap variants built apart (bin/wh_heap_bench_<v>), the k-d tree table.
#   BUILD=build-final OUT=$OUT bench/results/heap-coop-h100/run.sh [variant ...]
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; R=$OUT/r; mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ; echo "commit $WH_COMMIT"; } > "$R/info.txt" 2>&1
t0=$(date +%s)
step() { local name=$1 t=$2; shift 2; local s=$(date +%s)
  timeout "$t" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)" | tee -a "$R/steps.txt"; }
mkdir -p "$R/heap" "$R/heap-prof"
step heap 100 "$B/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds=bump,default,slab,cuda-malloc --out="$R/heap" --commit="$WH_COMMIT"
python3 bench/heap/report.py "$R/heap/heap_bench.csv" >> "$R/heap/heap_bench.md" 2>/dev/null
step heap-prof 60 "$B/bin/wh_heap_bench_prof" --tests=one,fill90 --kinds=default --out="$R/heap-prof" --commit="$WH_COMMIT"
for v in "$@"; do
  mkdir -p "$R/heap-$v"
  step "heap-$v" 60 "$B/bin/wh_heap_bench_$v" --tests=regs,one,fill90 --kinds=default --out="$R/heap-$v" --commit="$WH_COMMIT+$v"
done
step kdtree 80 env BUILD="$B" OUT="$R/kdtree" KD_TIMEOUT=75 KD_BUDGET=65 bench/kdtree/gpu-bench.sh --kinds=BUMP,DEFAULT,cuda-malloc
step gpu-check 200 env SANITIZE_LISTS="heap kdtree" OUT="$R/check" scripts/gpu-check.sh "$B"
grep -hE "^(one|fill90) +default" "$R"/heap*/../heap*.log 2>/dev/null | head -40
cat "$R/check/gpu-summary.txt" 2>/dev/null
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
