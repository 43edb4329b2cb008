#!/usr/bin/env bash
# Second call: freed slots first (new, the default) or the bump segment first
# (last: -DWH_SLAB_REUSE_FIRST=0), on the k-d tree (two rounds, alternating)
# and the heap bench (one round each); the k-d tree's per-class profile
# (--profile=1) of BUMP and DEFAULT at 2M.  Everything into one tarball.
#   B=build-carry/hb OUT=$OUT bench/results/heap-backoff-h100/run2.sh
set -u
B=${B:-build-carry/hb}
OUT=${OUT:-out}
R=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/gpu.txt" 2>&1
cat "$B/COMMIT" >> "$R/gpu.txt" 2>/dev/null
date -u +%FT%TZ >> "$R/gpu.txt"
for i in 1 2; do
  for v in new last; do
    mkdir -p "$R/kd-$v-$i"
    timeout 80 "$B/wh_kdtree_bench_$v" --out="$R/kd-$v-$i" --sizes=20000,200000,2000000 --phases=200,20 \
      --kinds=BUMP,DEFAULT --budget=70 --solo=3000 --reps=3 > "$R/kd-$v-$i.log" 2>&1
    echo "== kd $v $i rc=$?"
    grep -E "^(soup|torus|clustered)" "$R/kd-$v-$i.log" | awk '{print $1,$2,$3,$4,$5}' | paste - - - - - - - - -
  done
done
mkdir -p "$R/kd-profile"
timeout 60 "$B/wh_kdtree_bench_new" --out="$R/kd-profile" --sizes=2000000 --scenes=soup --phases=200,20 \
  --kinds=BUMP,DEFAULT --budget=50 --solo=1 --reps=1 --profile=1 > "$R/kd-profile.log" 2>&1
echo "== kd profile rc=$?"; grep "profile:" "$R/kd-profile.log"
for v in new last; do
  mkdir -p "$R/hb-$v"
  timeout 75 "$B/wh_heap_bench_$v" --tests=paper,one,fill90,util --kinds=bump,default \
    --out="$R/hb-$v" > "$R/hb-$v.log" 2>&1
  echo "== heap $v rc=$?"
  grep -E "^(ad|acd|prob|linux|one |fill90|util)" "$R/hb-$v.log" | grep default | awk '{print $1,$3,$5,$12}' | paste - - - - - - - -
done
tar -C "$R" -czf "$OUT/run2.tar.gz" .
