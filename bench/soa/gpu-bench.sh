#!/bin/sh
# SPDX-License-Identifier: MIT
# Object allocator benchmarks on the GPU (run by scripts/gpu-check.sh --bench,
# or by hand: BUILD=build-soa OUT=/tmp/out bench/soa/gpu-bench.sh [main|malloc|all]).
# Writes into $OUT/soa: log.txt (every program's output), apps.csv (time per
# iteration of each application and variant), breakdown.csv and breakdown.md
# (bench/soa/breakdown.py: kernels, time and DRAM traffic of an iteration of
# every application, against its static version), wator_fragmentation.csv
# (Fig. 12d), soa_bench.csv (parallel_do vs heap size, Fig. 14b; Linux
# scalability), summary.md, and pictures (PPM).  Every program runs under
# `timeout`: a hang costs seconds, not the whole run's budget.  The device-malloc
# variants ("malloc" part) come last: they may be slow.
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-out}
PART=${1:-all}
D="$OUT/soa"
T=$(mktemp -d)
mkdir -p "$D"
B="$BUILD/bin"
COMMIT=$("$(dirname "$0")/../../scripts/commit.sh" "$BUILD")
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
APPS="$D/apps.csv"
[ -f "$APPS" ] || echo "app,variant,size,iterations,seconds,ms_per_iteration,gpu,driver,cuda" > "$APPS"
run() {   # name timeout command...
    name=$1; t=$2; shift 2
    timeout "$t" "$@" > "$T/$name.txt" 2>&1 < /dev/null
    echo "rc=$?" >> "$T/$name.txt"
    { echo "== $name ($COMMIT, $DATE): $*"; cat "$T/$name.txt"; } >> "$D/log.txt"
}
if [ "$PART" != malloc ]; then
    # correctness at bench sizes: bit-identical results against the baselines
    run nbody_check0  10 "$B/wh_nbody" --n=2048 --iters=0 --check
    run nbody_check1  10 "$B/wh_nbody" --n=2048 --iters=1 --check
    run nbody_check   10 "$B/wh_nbody" --n=2048 --iters=3 --check
    run nbody         40 "$B/wh_nbody" --iters=${NBODY_ITERS:-3000} --mode=warpheap --csv="$APPS"
    run nbody_all     30 "$B/wh_nbody" --iters=${NBODY_ALL_ITERS:-500} --check --csv="$APPS"
    run wator         30 "$B/wh_wator" --mode=pair --check --csv="$APPS" --ppm="$D/wator.ppm"
    run wator_frag    20 "$B/wh_wator" --mode=warpheap --frag="$D/wator_fragmentation.csv"
    run gameoflife    25 "$B/wh_gameoflife" --mode=pair --check --csv="$APPS" --ppm="$D/gameoflife.ppm"
    # structure at the paper's size (the breakdown profiles shorter steps)
    echo "app,variant,size,iterations,seconds,ms_per_iteration,peak_bytes,gpu,driver,cuda" > "$D/structure.csv"
    run structure     30 "$B/wh_structure" --mode=warpheap --steps=10 --csv="$D/structure.csv"
    run structure_st  30 "$B/wh_structure" --mode=static --steps=10 --csv="$D/structure.csv"
    echo "kind,a,b,c,d,e,f,gpu,driver,cuda" > "$D/soa_bench.csv"
    run soa_bench     25 "$B/wh_soa_bench" --csv="$D/soa_bench.csv"
    # where each application's iteration goes, against its static version
    # (and the same build of other sources: WH_BASELINE_BUILD)
    run breakdown    900 python3 bench/soa/breakdown.py --bin "$B" --csv "$D/breakdown.csv" --md "$D/breakdown.md" \
        ${WH_BASELINE_BUILD:+--baseline "$WH_BASELINE_BUILD/bin"}
fi
if [ "$PART" != main ]; then
    # device malloc is slow here: each variant stops after MALLOC_SECS of its
    # timed loop; warpheap and static then run the same number of iterations
    # (the populations change over a run, so only equal spans compare).
    S=${MALLOC_SECS:-10}
    # the device-malloc variants must give the static baseline's result too
    run wator_check_all 60 "$B/wh_wator" --w=256 --h=256 --iters=60 --check
    run gol_check_all   60 "$B/wh_gameoflife" --w=256 --h=256 --iters=60 --check
    run wator_malloc  $((S + 60)) "$B/wh_wator" --mode=malloc --max-seconds="$S" --csv="$APPS"
    k=$(awk -F, '$1 == "wator" && $2 == "malloc" { k = $4 } END { print k }' "$APPS")
    [ -n "$k" ] && [ "$k" -gt 0 ] && run wator_same 30 "$B/wh_wator" --mode=pair --iters="$k" --csv="$APPS"
    run gol_malloc    $((S + 150)) "$B/wh_gameoflife" --mode=malloc --max-seconds="$S" --csv="$APPS"
    k=$(awk -F, '$1 == "gameoflife" && $2 == "malloc" { k = $4 } END { print k }' "$APPS")
    [ -n "$k" ] && [ "$k" -gt 0 ] && run gol_same 30 "$B/wh_gameoflife" --mode=pair --iters="$k" --csv="$APPS"
fi
{
    echo "# Object allocator (soa) on the GPU"
    echo
    echo "commit $COMMIT, $DATE, $(grep -h -m1 '^nbody:' "$D/log.txt" | sed 's/.*, //')"
    echo
    echo "| app | variant | size | iterations | ms / iteration |"
    echo "| --- | --- | --- | --- | --- |"
    tail -n +2 "$APPS" | awk -F, '{printf "| %s | %s | %s | %s | %.3f |\n", $1, $2, $3, $4, $6}'
    echo
    if [ -f "$D/structure.csv" ]; then
        echo "structure at the paper's size, ms a step (40 compute iterations and the search):"
        echo
        awk -F, '$1 == "structure" {printf "    %-9s %s steps  %.3f ms\n", $2, $4, $6}' "$D/structure.csv"
        echo
    fi
    echo "Checks:"
    echo
    grep -h "check:" "$D/log.txt" | sed 's/^ */- /'
    echo
    echo "parallel_do over a fixed set of objects as the heap grows (Fig. 14b):"
    echo
    grep -h "^ *heap .*MiB" "$D/log.txt" | sed 's/^ */    /'
    echo
    echo "Linux scalability:"
    echo
    grep -h "k= " "$D/log.txt" | sed 's/^ */    /'
    echo
    echo "Device-malloc progress lines (shown when a run was cut off):"
    echo
    grep -h "progress" "$D/log.txt" | tail -n 4 | sed 's/^ */    /'
    echo
    echo "Exit codes: $(grep -h '^rc=' "$D/log.txt" | tr '\n' ' ')"
} > "$D/summary.md"
rm -rf "$T"
