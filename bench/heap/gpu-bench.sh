#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Device heap benchmarks on the GPU: wh_heap_bench writes heap_bench.csv,
# heap_rounds.csv, heap_churn.csv and heap_bench.md into $OUT; churn_plot.py
# draws heap_churn.png.  With WH_BASELINE_BUILD (scripts/bench.sh
# --baseline), that build's DEFAULT runs too, and heap_baseline.md compares
# the two.  Called by scripts/bench.sh and scripts/gpu-check.sh --bench
# with BUILD and OUT set; by hand:
# BUILD=build OUT=out bench/heap/gpu-bench.sh
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-out}
mkdir -p "$OUT"
commit=$("$(dirname "$0")/../../scripts/commit.sh" "$BUILD")
timeout 600 "$BUILD/bin/wh_heap_bench" --out="$OUT" --commit="$commit" | tee "$OUT/heap_bench.log"
rc=${PIPESTATUS[0]}
if command -v python3 >/dev/null; then
  python3 "$(dirname "$0")/report.py" "$OUT/heap_bench.csv" >> "$OUT/heap_bench.md" || true
  # the churn workload as a picture (matplotlib, where installed)
  if [ -f "$OUT/heap_churn.csv" ] && python3 -c 'import matplotlib' 2>/dev/null; then
    python3 "$(dirname "$0")/churn_plot.py" "$OUT/heap_churn.csv" "$OUT/heap_churn.png" || rc=1
  fi
fi
# the hardened mode's cost: DEFAULT with WH_HEAP_SECURE, beside the run above
sec="$OUT/secure"
mkdir -p "$sec"
timeout 300 "$BUILD/bin/wh_heap_bench" --out="$sec" --commit="$commit" --secure --kinds=default --tests=one,fill90 \
  > "$OUT/heap_secure.log" 2>&1 || rc=1
if command -v python3 >/dev/null && [ -f "$sec/heap_bench.csv" ]; then
  python3 "$(dirname "$0")/report.py" --secure "$OUT/heap_bench.csv" "$sec/heap_bench.csv" > "$OUT/heap_secure.md" || rc=1
  mv "$sec/heap_bench.csv" "$OUT/heap_secure.csv"
fi
rm -rf "$sec"
# before and after: a build of other sources (scripts/bench.sh --baseline)
# runs DEFAULT's goal workloads in the same call; its CSVs come along as
# baseline_*.csv and one table sets the two builds side by side
if [ -n "${WH_BASELINE_BUILD:-}" ]; then
  base=$(mktemp -d)
  timeout 400 "$WH_BASELINE_BUILD/bin/wh_heap_bench" --out="$base" --commit=baseline --kinds=bump,default \
    --tests=one,regs,util,rounds > "$OUT/heap_baseline.log" 2>&1 || rc=1
  for f in heap_bench heap_rounds; do
    [ -f "$base/$f.csv" ] && cp "$base/$f.csv" "$OUT/baseline_$f.csv"
  done
  rm -rf "$base"
  if command -v python3 >/dev/null && [ -f "$OUT/baseline_heap_bench.csv" ]; then
    python3 "$(dirname "$0")/report.py" --compare "$OUT" > "$OUT/heap_baseline.md" || rc=1
  fi
fi
exit "$rc"
