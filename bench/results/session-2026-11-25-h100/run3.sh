#!/usr/bin/env bash
# Device call 3 (2026-11-25), binaries built here and carried (build-carry/a1
# at the commit in build-carry/a1/COMMIT; build-carry/vmm2 as in run2.sh).
# Issue 3: marching cubes with the one-kernel (c) whose RING commit runs on a
#   side stream -- a short smoke run first, then the grids 16-64^3, the
#   profile at 32^3, and compute-sanitizer memcheck on a small run.
# Issue 6: the pool's new default (p112h6) -- the whole pool bench with every
#   baseline in the same binary and run, the plug-in test, and a second pass of
#   base / p112h6 at max 1 GiB (the run-to-run spread).
set -u
. "$(dirname "$0")/common.sh" r3
V=build-carry/vmm2
mkdir -p "$O/mc" "$O/pool"
# -- issue 3
mc_all "$O/mc"
# -- issue 6
step pool_default 240 "$A/wh_pool_bench" --out="$O/pool"
step plugins 120 python3 plugins/test_plugins.py --lib build-carry/a1/lib/libwarpheap_plugin.so --json "$O/pool/plugins.json"
for v in base p112h6; do
  mkdir -p "$O/pool/$v"
  extra=--no-baselines
  [ "$v" = base ] && extra=
  step "pool_$v" 200 "$V/wh_pool_bench_$v" --out="$O/pool/$v" --random-max=1024 $extra
done
cat "$O/steps.txt"
