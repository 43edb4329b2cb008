#!/bin/sh
# SPDX-License-Identifier: MIT
# The five SMMO applications of DynaSOAr's Table 1
# (collision, sugarscape, traffic, structure, barnes-hut) on the GPU: first
# a check of each at a small size (warpheap against its static baseline, or
# barnes-hut against the CPU backend), then the benchmark table at the paper's
# problem sizes, each variant stopped after $SECS seconds (--max-seconds; the
# iterations done are in the CSV).  Run by scripts/gpu-check.sh --bench, or by
# hand:  BUILD=build-apps OUT=/tmp/out bench/apps/gpu-bench.sh
# Writes $OUT/apps/apps.csv, one log per program, $OUT/apps/summary.md and the
# pictures (PPM, of the small check runs).  Every program runs under `timeout`.
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-out}
SECS=${SECS:-6}
D="$OUT/apps"
mkdir -p "$D"
B="$BUILD/bin"
COMMIT=$("$(dirname "$0")/../../scripts/commit.sh" "$BUILD")
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
CSV="$D/apps.csv"
echo "app,variant,size,iterations,seconds,ms_per_iteration,peak_bytes,gpu,driver,cuda" > "$CSV"
run() {   # name timeout command...
    name=$1; t=$2; shift 2
    echo "== $name: $*" >> "$D/log.txt"
    timeout "$t" "$@" > "$D/$name.txt" 2>&1 < /dev/null
    rc=$?
    echo "rc=$rc" >> "$D/$name.txt"
    cat "$D/$name.txt" >> "$D/log.txt"
}
# 1. checks at small sizes (bit-identical results required)
run check_collision  20 "$B/wh_collision" --n=4000 --iters=40 --check --ppm="$D/collision.ppm"
run check_sugarscape 20 "$B/wh_sugarscape" --w=300 --h=300 --iters=300 --check --ppm="$D/sugarscape.ppm"
run check_traffic    20 "$B/wh_traffic" --isects=2000 --iters=600 --check --ppm="$D/traffic.ppm"
run check_structure  20 "$B/wh_structure" --w=200 --h=120 --steps=10 --iters=40 --check --ppm="$D/structure.ppm"
run check_barneshut  40 "$B/wh_barneshut" --n=20000 --iters=10 --check --ppm="$D/barneshut.ppm"
# 2. benchmarks: paper sizes, time-capped
run collision   40 "$B/wh_collision" --max-seconds="$SECS" --csv="$CSV"
run sugarscape  35 "$B/wh_sugarscape" --max-seconds="$SECS" --csv="$CSV"
run traffic     40 "$B/wh_traffic" --max-seconds="$SECS" --csv="$CSV"
run structure   60 "$B/wh_structure" --max-seconds="$SECS" --csv="$CSV"
run barneshut   30 "$B/wh_barneshut" --max-seconds="$SECS" --csv="$CSV"
{
    echo "# SMMO applications on the GPU"
    echo
    echo "commit $COMMIT, $DATE, $(sed -n 2p "$CSV" | cut -d, -f8-10)"
    echo
    echo "Paper problem sizes; each variant ran until about $SECS s had passed (iterations done shown)."
    echo
    echo "| app | variant | size | iterations | ms / iteration | peak memory (MiB) |"
    echo "| --- | --- | --- | --- | --- | --- |"
    tail -n +2 "$CSV" | awk -F, '{printf "| %s | %s | %s | %s | %.3f | %.1f |\n", $1, $2, $3, $4, $6, $7 / 1048576}'
    echo
    echo "Checks:"
    echo
    grep -h "check:" "$D"/check_*.txt | sed 's/^ */- /'
    echo
    echo "Exit codes:"
    echo
    grep -H "^rc=" "$D"/*.txt | sed 's|.*/||; s/^/    /'
} > "$D/summary.md"
cat "$D/summary.md"
