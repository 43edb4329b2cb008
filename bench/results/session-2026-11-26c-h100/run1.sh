#!/usr/bin/env bash
# Device call 1 (issue 6): the pool's new placement and move budget
# (d0310b9) on the GPU: test_pool_gpu and its memcheck, the whole pool
# bench (every baseline in the same binary and run), the plug-ins, then
# random_allocations at max 1 GiB by the head before (0945ac1, built
# here as wh_pool_bench_base) and by the new one, twice each, alternating.
set -u
. "$(dirname "$0")/common.sh" r1
step test_pool_gpu 60 "$A/test_pool_gpu"
tail -2 "$O/test_pool_gpu.log"
step memcheck_pool 90 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_pool_gpu" --small
tail -2 "$O/memcheck_pool.log"
mkdir -p "$O/pool"
step pool_default 180 "$A/wh_pool_bench" --out="$O/pool"
grep -E "1024 MiB|pair" "$O/pool/pool_bench.md" | head -30
step plugins 90 python3 plugins/test_plugins.py --lib build-carry/a1/lib/libwarpheap_plugin.so --json "$O/pool/plugins.json"
tail -3 "$O/plugins.log"
for k in 1 2; do
  pool_1g "$A/wh_pool_bench_base" pool_base$k --no-baselines
  pool_1g "$A/wh_pool_bench" pool_new$k --no-baselines
done
cat "$O/steps.txt"
pack
