#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The k-d tree measurements in one GPU run (about 190 s): the Tables 3-4 run of gpu-bench.sh at
# 20K-2M triangles (every tree checked), the free-batch ablation and the
# per-size-class profile of BUMP vs DEFAULT at 20K and 200K, and as much of
# 10M (BUMP, DEFAULT) as the rest of the time allows.  Everything
# goes to $OUT/kd.tgz (the md and logs also to $OUT).
#   BUILD=build-kd OUT=out WH_COMMIT=$(git rev-parse --short HEAD) bench/kdtree/gpu-issue4.sh
# KD_STEPS: which of "main ablation profile 10m" (default all); KD_MAIN_S and
# KD_MAIN_BUDGET: the table's timeout and budget; KD_10M_SCENES: in order.
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-out}
R="$OUT/r"
mkdir -p "$R"
B="$BUILD/bin/wh_kdtree_bench"
export WH_COMMIT=${WH_COMMIT:-$(cat "$BUILD/COMMIT" 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/gpu.txt" 2>&1
export WH_GPU_DRIVER=$(cut -d, -f2 "$R/gpu.txt" | tr -d ' ' | head -1)
STEPS=${KD_STEPS:-main ablation profile 10m}
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
t0=$(date +%s)
# 1. the table (gpu-bench.sh: the default builder)
if has main; then
  OUT="$R" KD_TIMEOUT=${KD_MAIN_S:-120} KD_BUDGET=${KD_MAIN_BUDGET:-100} bash "$(dirname "$0")/gpu-bench.sh" > /dev/null 2>&1
  echo "main: rc $? after $(( $(date +%s) - t0 )) s" >> "$R/steps.txt"
fi
# 2. ablation: --free-batch=1 (each parent's list at once), no profile; compare with a
#    table of another --free-batch
if has ablation; then
  timeout 20 "$B" --out="$R" --tag=ablation-fb1 --scenes=soup,torus,clustered --sizes=20000,200000 \
    --kinds=BUMP,DEFAULT --free-batch=1 --reps=5 --solo=3000 > "$R/ablation-fb1.log" 2>&1
  echo "ablation: rc $? after $(( $(date +%s) - t0 )) s" >> "$R/steps.txt"
fi
# 3. profile: calls and cycles per size class, each list freed at once
if has profile; then
  timeout 10 "$B" --out="$R" --tag=profile-fb1 --scenes=soup --sizes=20000,200000 --phases=200,20 \
    --kinds=BUMP,DEFAULT --free-batch=1 --profile=1 --reps=1 > "$R/profile-fb1.log" 2>&1
  echo "profile: rc $? after $(( $(date +%s) - t0 )) s" >> "$R/steps.txt"
fi
# 4. 10M: what is left of ~185 s
left=$(( 183 - ( $(date +%s) - t0 ) ))
if has 10m && [ "$left" -gt 15 ]; then
  timeout "$left" "$B" --out="$R" --tag=kdtree-10M --scenes=${KD_10M_SCENES:-clustered,soup,torus} --sizes=10000000 \
    --kinds=BUMP,DEFAULT --phases=200,20 --reps=3 --solo=3000 > "$R/kdtree-10M.log" 2>&1
  echo "10M: rc $? in $left s after $(( $(date +%s) - t0 )) s" >> "$R/steps.txt"
fi
cp "$R/kdtree.md" "$R/steps.txt" "$OUT/" 2>/dev/null
tar -czf "$OUT/kd.tgz" -C "$R" . && rm -rf "$R"
