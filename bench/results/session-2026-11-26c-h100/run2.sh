#!/usr/bin/env bash
# Device call 2 (issue 6): the pool at 347b355 (the placement and move
# budget of r1, plus the address map that grows from 1024 entries):
# test_pool_gpu and its memcheck, the whole pool bench twice (every
# baseline in the same binary and run; the second run shows the spread),
# and the plug-ins.
set -u
. "$(dirname "$0")/common.sh" r2
step test_pool_gpu 60 "$A/test_pool_gpu"
tail -2 "$O/test_pool_gpu.log"
step memcheck_pool 90 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_pool_gpu" --small
tail -2 "$O/memcheck_pool.log"
for k in 1 2; do
  mkdir -p "$O/pool$k"
  step pool_default$k 180 "$A/wh_pool_bench" --out="$O/pool$k"
  grep -E "^\| [0-9]+ \| [0-9]+ MiB \| [0-9-]+ \||^\| [0-9]+ \| [0-9]+ \| [0-9]|^\| warpheap |^\| cudaMallocAsync " "$O/pool$k/pool_bench.md"
done
step plugins 90 python3 plugins/test_plugins.py --lib build-carry/a1/lib/libwarpheap_plugin.so --json "$O/pool1/plugins.json"
tail -3 "$O/plugins.log"
cat "$O/steps.txt"
pack
