#!/usr/bin/env bash
# Second call: how many ways.  The heap's goal workloads (one allocation per
# thread, fill 90%) with 1, 2, 4 and 8 ways per class, the event counters
# with 1 way, and the k-d tree's 2M-triangle builds (heap 200 x the root's
# list: 4 ways by heap size) with 1 and 4 ways -- one binary each, one run.
#   BUILD=build-final OUT=$OUT bench/results/heap-ways-h100/sweep.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
for w in 1 2 4 8 1 8; do
  d=ways$w; [ -d "$R/$d" ] && d=${d}-again
  mkdir -p "$R/$d"
  step "$d" 40 "$B/bin/wh_heap_bench" --tests=one,fill90 --kinds=bump,default --ways=$w --out="$R/$d" --commit="$WH_COMMIT"
done
mkdir -p "$R/prof-ways1"
step prof-ways1 40 "$B/bin/wh_heap_bench_prof" --tests=one,fill90 --kinds=default --ways=1 --out="$R/prof-ways1" --commit="$WH_COMMIT"
for w in 1 4; do
  mkdir -p "$R/kd-ways$w"
  step kd-ways$w 60 "$B/bin/wh_kdtree_bench" --sizes=2000000 --phases=200 --kinds=BUMP,DEFAULT --ways=$w --budget=50 --solo=3000 --out="$R/kd-ways$w" --tag=kd-ways$w
done
for f in "$R"/ways*.log; do echo "-- $f"; grep -E "^(one|fill90) +default" "$f"; done
grep -hE "DEFAULT|BUMP" "$R"/kd-ways*.log | grep -v "^#"
grep prof "$R/prof-ways1.log"
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
