#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds wh_heap_bench variants (heap/slab.h's switches, by -D) into DIR
# (default build-carry/hv) against a configured and built BUILD (default
# build: its config.h and libwarpheap.a), for a GPU run that compares
# them all.  Each line of the input: NAME FLAGS...  Two at a time
# (ptxas takes minutes for this file).  Copies BUILD's test binaries named in
# $COPY too, and writes DIR/COMMIT (the commit, and "+ dirty" if the tree is).
#   bench/heap/build-variants.sh [DIR] < variants.txt
set -euo pipefail
DIR=${1:-build-carry/hv}
BUILD=${BUILD:-build}
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA/bin/nvcc}
mkdir -p "$DIR"
one() {
  local name=$1; shift
  "$NVCC" -O3 -DNDEBUG -arch=sm_90 -lineinfo "$@" -Iinclude -I"$BUILD/include" -Iexamples/common \
      bench/heap/heap_bench.cu "$BUILD/lib/libwarpheap.a" -o "$DIR/wh_heap_bench_$name" -lm
  echo "built $DIR/wh_heap_bench_$name ($*)"
}
pids=()
while read -r name flags; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  one "$name" $flags & pids+=($!)
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
for t in ${COPY:-}; do cp "$BUILD/bin/$t" "$DIR/"; done
{ git rev-parse --short HEAD; git diff --quiet HEAD -- include src bench tests || echo "+ dirty"; } > "$DIR/COMMIT"
