#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds wh_kdtree_bench variants (the heap's switches, by -D) into DIR
# against a configured and built BUILD (default build: config.h,
# libwarpheap.a, libwh_kd_scene.a).  Each line of the input: NAME FLAGS...
#   bench/kdtree/build-variants.sh DIR < variants.txt
set -euo pipefail
DIR=${1:?usage: build-variants.sh DIR < variants.txt}
BUILD=${BUILD:-build}
CUDA=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$DIR"
while read -r name flags; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  "$CUDA/bin/nvcc" -O3 -DNDEBUG -arch=sm_90 -lineinfo $flags -Iexamples/kdtree -Iinclude -I"$BUILD/include" \
      -Iexamples/common \
      bench/kdtree/kd_bench.cu examples/kdtree/kd_build.cu "$BUILD/lib/libwh_kd_scene.a" "$BUILD/lib/libwarpheap.a" \
      -o "$DIR/wh_kdtree_bench_$name" -lm
  echo "built $DIR/wh_kdtree_bench_$name ($flags)"
done
