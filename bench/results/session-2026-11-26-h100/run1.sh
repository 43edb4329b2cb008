#!/usr/bin/env bash
# Device call 1 (issue 6): does the driver run cuMemUnmap on one thread
# beside cuMemMap + cuMemSetAccess on another, or serialise them?  The
# driver's costs (wh_vmm_cost, with its new last table: moves with the
# unmap after the map, on the same thread or a second one), and the pool's
# random_allocations at 1 GiB at the head as the baseline.
set -u
. "$(dirname "$0")/common.sh" r1
step vmm_cost 120 "$A/wh_vmm_cost" --csv="$O/vmm_cost.csv"
mkdir -p "$O/pool"
step pool_base 300 "$A/wh_pool_bench" --out="$O/pool" --random-max=1024
cat "$O/vmm_cost.log"
grep -E "random|1024" "$O/pool/pool_bench.md" | head -20
cat "$O/steps.txt"
pack
