#!/usr/bin/env bash
# Fourth call: is the class bitmap's top word (loaded by every leader to
# look for freed slots before the bump segments) what limits a fill at
# 16 B?  wh_heap_bench_notop: the bench built from a tree with
# no-top-load.patch applied (classes with segments skip that load), an
# experiment only; against the default build, alternating, 4 ways.
#   BUILD=build-final OUT=$OUT bench/results/heap-ways-h100/notop.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
for v in "" _notop "" _notop; do
  d=bench${v:-_default}; [ -d "$R/$d" ] && d=${d}-again
  mkdir -p "$R/$d"
  step "$d" 60 "$B/bin/wh_heap_bench$v" --tests=regs,one,fill90 --kinds=bump,default --ways=4 --out="$R/$d" --commit="$WH_COMMIT"
done
for f in "$R"/bench*.log; do echo "-- $f"; grep -E "^(one|fill90) +default" "$f"; done
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
