#!/bin/sh
# Object allocator benchmarks on the GPU (run by scripts/gpu-check.sh --bench,
# or by hand: BUILD=build-soa OUT=/tmp/out bench/soa/gpu-bench.sh).
# Writes $OUT/soa/*.csv, the logs, and $OUT/soa/summary.md.  Every program runs
# under `timeout`: a hang costs minutes, not the whole device budget.
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-out}
D="$OUT/soa"
mkdir -p "$D"
B="$BUILD/bin"
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
APPS="$D/apps.csv"
echo "app,variant,size,iterations,seconds,ms_per_iteration,gpu,driver,cuda" > "$APPS"
run() {   # name timeout command...
    name=$1; t=$2; shift 2
    echo "== $name: $*" >> "$D/log.txt"
    timeout "$t" "$@" > "$D/$name.txt" 2>&1 < /dev/null
    rc=$?
    echo "rc=$rc" >> "$D/$name.txt"
    cat "$D/$name.txt" >> "$D/log.txt"
}
# correctness at bench sizes first: bit-identical results against the baselines
run nbody_check   15 "$B/wh_nbody" --n=2048 --iters=3 --check
run nbody         40 "$B/wh_nbody" --iters=${NBODY_ITERS:-3000} --mode=warpheap --csv="$APPS"
run nbody_all     30 "$B/wh_nbody" --iters=${NBODY_ALL_ITERS:-500} --check --csv="$APPS"
run wator         30 "$B/wh_wator" --check --csv="$APPS" --ppm="$D/wator.ppm"
run wator_frag    20 "$B/wh_wator" --mode=warpheap --frag="$D/wator_fragmentation.csv"
run gameoflife    30 "$B/wh_gameoflife" --check --csv="$APPS" --ppm="$D/gameoflife.ppm"
echo "kind,a,b,c,d,e,f,gpu,driver,cuda" > "$D/soa_bench.csv"
run soa_bench     30 "$B/wh_soa_bench" --csv="$D/soa_bench.csv"
# the device-malloc variants last: they may be slow (progress lines show how far they got)
run wator_malloc  35 "$B/wh_wator" --mode=malloc --csv="$APPS"
run gol_malloc    30 "$B/wh_gameoflife" --mode=malloc --csv="$APPS"
{
    echo "# Object allocator (soa) on the GPU"
    echo
    echo "commit $COMMIT, $DATE, $(sed -n 1p "$D/nbody.txt" | sed 's/.*, //')"
    echo
    echo "| app | variant | size | iterations | ms / iteration |"
    echo "| --- | --- | --- | --- | --- |"
    tail -n +2 "$APPS" | awk -F, '{printf "| %s | %s | %s | %s | %.3f |\n", $1, $2, $3, $4, $6}'
    echo
    echo "Checks:"
    grep -h "check:" "$D"/*.txt | sed 's/^ */- /'
    echo
    echo "Device-malloc progress (when a run did not finish):"
    echo
    grep -h "progress" "$D"/*malloc*.txt | tail -n 4 | sed 's/^ */    /'
    echo
    echo "parallel_do vs heap size (Fig. 14b):"
    echo
    grep -h "heap .*MiB" "$D/soa_bench.txt" | sed 's/^ */    /'
    echo
    echo "Linux scalability:"
    echo
    grep -h "k= " "$D/soa_bench.txt" | sed 's/^ */    /'
} > "$D/summary.md"
echo "commit=$COMMIT date=$DATE" > "$D/meta.txt"
