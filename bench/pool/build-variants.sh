#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds wh_pool_bench variants of the VMM growth policy (pool_vmm.c's
# WH__* macros) into DIR (default build-carry/vmm), for a GPU run that
# compares them all.  Each line of VARIANTS: NAME FLAGS...
#   bench/pool/build-variants.sh [DIR] < variants.txt
# REPLAY=1: the CPU replay instead (wh_pool_replay_NAME, no CUDA; CONF a
# CPU build's include dir, e.g. CONF=build-cpu/include), for
#   DIR/wh_pool_replay_NAME --seeds=8
set -euo pipefail
DIR=${1:-build-carry/vmm}
CUDA=${CUDA_HOME:-/usr/local/cuda}
CONF=${CONF:-build/include}      # a configured build's warpheap/config.h
mkdir -p "$DIR"
while read -r name flags; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  if [[ "${REPLAY:-0}" == 1 ]]; then
    gcc -O2 -std=gnu11 $flags -Iinclude -I"$CONF" -Isrc -Ibench/pool -Iexamples/common \
        bench/pool/replay_cpu.c src/pool/*.c src/core/*.c -o "$DIR/wh_pool_replay_$name" -lpthread -lm
    echo "built $DIR/wh_pool_replay_$name ($flags)"
    continue
  fi
  gcc -O2 -std=gnu11 $flags -Iinclude -I"$CONF" -Isrc -Ibench/pool -Iexamples/common -I"$CUDA/include" \
      bench/pool/pool_bench.c src/pool/*.c src/core/*.c -o "$DIR/wh_pool_bench_$name" \
      -L"$CUDA/lib64" -lcudart -lpthread -lm
  echo "built $DIR/wh_pool_bench_$name ($flags)"
done
