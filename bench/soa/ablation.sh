#!/bin/sh
# SPDX-License-Identifier: MIT
# Allocator ablations on wa-tor (DynaSOAr 6.3, Fig. 12c and Fig. 13): the
# default wh_wator and the switched builds of examples/wator/CMakeLists.txt
# (include/warpheap/soa/config.h: request coalescing off, bitmap rotation off,
# slow paths not bounded per type (WH_SOA_OPEN_MAX=0), 0/1/4/16 active-block
# lookups before the slow path), each at the paper size
# (the defaults, 2048x2560, 500 iterations) with --mode=warpheap.
#
#   BUILD=build OUT=/tmp/out bench/soa/ablation.sh
#
# Writes $OUT/ablation.csv (variant, ms per iteration, mean fragmentation over
# iterations 300-499, max fragmentation over all iterations, failed
# allocations, rc),
# $OUT/ablation.md (the same as a table with GPU, driver, CUDA, date, commit),
# $OUT/ablation_log.txt (every program's output) and $OUT/ablation_frag_<variant>.csv
# (fragmentation per iteration, Fig. 12d/13).  The time excludes the
# per-iteration fragmentation query (wator pauses its clock for it).
# Each run is under `timeout 60`, and the whole script under a budget of
# ABL_BUDGET seconds (default 230): a variant that hangs (rotation off can be
# an order of magnitude slower) costs at most that, not the whole run.
# About 8 x (1-3 s) when nothing hangs.
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-out}
BUDGET=${ABL_BUDGET:-230}
B="$BUILD/bin"
mkdir -p "$OUT"
COMMIT=$("$(dirname "$0")/../../scripts/commit.sh" "$BUILD")
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
CSV="$OUT/ablation.csv"
LOG="$OUT/ablation_log.txt"
: > "$LOG"
echo "variant,ms_per_iteration,frag_mean_300_499,frag_max,failed_allocs,rc" > "$CSV"
START=$(date +%s)
ENV=""
SIZE=""
for v in default nocoalesce norotate openmax0 lookups0 lookups1 lookups4 lookups16; do
    exe="$B/wh_wator"; [ "$v" = default ] || exe="$B/wh_wator_$v"
    frag="$OUT/ablation_frag_$v.csv"
    left=$((BUDGET - ($(date +%s) - START)))
    [ "$left" -gt 60 ] && left=60
    if [ ! -x "$exe" ]; then rc=missing
    elif [ "$left" -lt 5 ]; then rc=skipped
    else
        rm -f "$frag"
        timeout "$left" "$exe" --mode=warpheap --frag="$frag" > "$OUT/ablation_$v.txt" 2>&1 < /dev/null
        rc=$?
        { echo "== $v ($COMMIT, $DATE, timeout ${left}s): $exe --mode=warpheap --frag=$frag"; cat "$OUT/ablation_$v.txt"; echo "rc=$rc"; } >> "$LOG"
        [ -n "$ENV" ] || ENV=$(sed -n 's/^wator: .* MiB, //p' "$OUT/ablation_$v.txt" | head -n 1)
        [ -n "$SIZE" ] || SIZE=$(sed -n 's/^wator: \([0-9]*x[0-9]* cells, [0-9]* iterations\).*/\1/p' "$OUT/ablation_$v.txt" | head -n 1)
    fi
    # "  warpheap  T s  DONE iterations  MS ms/iteration" from app_print_times
    ms=$(awk '$1 == "warpheap" && $7 == "ms/iteration" {print $6}' "$OUT/ablation_$v.txt" 2>/dev/null | head -n 1)
    fr=$( [ -f "$frag" ] && awk -F, 'NR > 1 { if ($4 > mx) mx = $4; if ($1 >= 300 && $1 <= 499) { s += $4; n++ } }
        END { a = n ? sprintf("%.4f", s / n) : ""; b = (NR > 1) ? sprintf("%.4f", mx) : ""; print a "," b }' "$frag")
    # allocations that gave up (heap exhausted or retry bound): the run is then not comparable
    fa=$(sed -n 's/.* \([0-9]*\) failed allocations.*/\1/p' "$OUT/ablation_$v.txt" 2>/dev/null | head -n 1)
    [ -n "$fa" ] || { grep -q "warpheap heap:" "$OUT/ablation_$v.txt" 2>/dev/null && fa=0; }
    echo "$v,${ms:-},${fr:-,},${fa:-},$rc" >> "$CSV"
    rm -f "$OUT/ablation_$v.txt"
done
GPU=$(echo "$ENV" | cut -d, -f1); DRV=$(echo "$ENV" | cut -d, -f2); CUDA=$(echo "$ENV" | cut -d, -f3)
{
    echo "# Allocator ablations on wa-tor (DynaSOAr 6.3, Fig. 12c/13)"
    echo
    echo "GPU ${GPU:-?}, driver ${DRV:-?}, CUDA ${CUDA:-?}, $DATE, commit $COMMIT;"
    echo "wa-tor ${SIZE:-?}, --mode=warpheap; fragmentation = unused slots / slots of allocated blocks."
    echo
    echo "| variant | ms / iteration | fragmentation, mean of it. 300-499 | fragmentation, max | failed allocations | rc |"
    echo "| --- | --- | --- | --- | --- | --- |"
    tail -n +2 "$CSV" | awk -F, '{printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6}'
    echo
    echo "default: coalescing on, rotation on, 9 active-block lookups (include/warpheap/soa/config.h);"
    echo "nocoalesce: WH_SOA_COALESCE=0; norotate: WH_SOA_ROTATE=0; lookupsN: WH_SOA_ACTIVE_LOOKUPS=N."
} > "$OUT/ablation.md"
cat "$OUT/ablation.md"
