#!/usr/bin/env bash
# First call: where the `one` kernel's time goes (1M threads, one allocation
# each, 16 and 256 B).  `one` against `onewarm` (the same after an untimed
# kernel has started every way's first segment: the cold start's share),
# twice each; then Nsight Compute on DEFAULT's `one` and `onewarm` kernels
# and BUMP's at 16 B (stall reasons, issue rate, occupancy, instructions).
#   BUILD=build-final OUT=$OUT bench/results/heap-cold-h100/probe.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
for run in a b; do
  mkdir -p "$R/bench-$run"
  step "bench-$run" 60 "$B/bin/wh_heap_bench" --tests=regs,one,onewarm --kinds=bump,default --out="$R/bench-$run" --commit="$WH_COMMIT"
done
S="--clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats"
mkdir -p "$R/tmp"
# the second timed round's allocation kernel (onewarm: warm, timed per round)
step ncu-dflt-one16 120 ncu $S -k regex:dflt_many -s 1 -c 1 "$B/bin/wh_heap_bench" --tests=one --kinds=default --out="$R/tmp"
step ncu-dflt-warm16 120 ncu $S -k regex:dflt_many -s 3 -c 1 "$B/bin/wh_heap_bench" --tests=onewarm --kinds=default --out="$R/tmp"
step ncu-dflt-one256 120 ncu $S -k regex:dflt_many -s 6 -c 1 "$B/bin/wh_heap_bench" --tests=one --kinds=default --out="$R/tmp"
step ncu-stalls-dflt-one16 120 ncu --clock-control none --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" -k regex:dflt_many -s 1 -c 1 "$B/bin/wh_heap_bench" --tests=one --kinds=default --out="$R/tmp"
step ncu-bump-one16 120 ncu $S -k regex:bump_many -s 1 -c 1 "$B/bin/wh_heap_bench" --tests=one --kinds=bump --out="$R/tmp"
rm -rf "$R/tmp"
grep -hE "^(one|onewarm) +(default|bump)" "$R"/bench-*.log
grep -E "stalled" "$R/ncu-stalls-dflt-one16.log" | sort -k3 -n -r | head -12
for f in "$R"/ncu-*.log; do echo "-- $f"; grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Executed Instructions  |Stall|dflt_many|bump_many" "$f" | head -30; done
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
