#!/bin/sh
# SPDX-License-Identifier: MIT
# Space efficiency (DynaSOAr section 6.2): the largest problem of each
# application that runs in a fixed budget of device memory, for warpheap and
# for the CUDA device-malloc version.  Both allocate every object with the
# allocator under test (cells too, as the paper's comparison does).
# --heap-mb=$HEAP gives each variant that budget for its heap plus the arrays
# it keeps beside it (cell-to-object pointers, street topology); the malloc
# versions' do-all pointer lists are not counted.  A size "runs" when the program exits 0:
# the --check runs (sugarscape, traffic, collision, structure) must match the static
# baseline, barnes-hut (--fit) must lose no body and no allocation.
# Search: double the size from a start until a run fails, then bisect
# $STEPS times.  The variants search at the same time (one process each: only
# whether a size fits counts, not its time).  Writes $OUT/apps/space.csv and
# $OUT/apps/space.md.
#   BUILD=build-apps OUT=/tmp/out bench/apps/space.sh
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-out}
HEAP=${HEAP:-64}
STEPS=${STEPS:-5}
D="$OUT/apps"
mkdir -p "$D"
B="$BUILD/bin"
CSV="$D/space.csv"
LOG="$D/space-log.txt"
probe() {   # app variant size -> exit status (uses $CSV, $LOG, $LAST of its variant)
    app=$1; var=$2; s=$3
    case $app in
        collision)  set -- "$B/wh_collision" --n="$s" --iters=0 --check --mode="$var" ;;
        sugarscape) set -- "$B/wh_sugarscape" --w="$s" --h="$s" --iters=100 --check --mode="$var" ;;
        traffic)    set -- "$B/wh_traffic" --isects="$s" --iters=200 --check --mode="$var" ;;
        barneshut)  set -- "$B/wh_barneshut" --n="$s" --iters=3 --fit --mode="$var" ;;
        structure)  set -- "$B/wh_structure" --w="$s" --h="$s" --steps=3 --iters=5 --check --mode="$var" ;;
    esac
    timeout 20 "$@" --heap-mb="$HEAP" > "$LAST" 2>&1 < /dev/null
    rc=$?
    echo "$app $var $s rc=$rc" >> "$LOG"
    # why a size failed: the heap line and the error, not only the status
    [ $rc -ne 0 ] && grep -i -E "heap|fail|error|out of|differ" "$LAST" | tail -4 | sed 's/^/    /' >> "$LOG"
    return $rc
}
search() {  # app variant start parameter-name
    app=$1; var=$2; lo=0; hi=$3
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
        if probe "$app" "$var" "$hi"; then lo=$hi; hi=$((hi * 2)); else break; fi
    done
    if [ "$lo" -eq 0 ]; then echo "$app,$var,$HEAP,$4,0,$hi" >> "$CSV"; return; fi
    for i in $(seq 1 "$STEPS"); do
        mid=$(( (lo + hi) / 2 ))
        [ "$mid" -le "$lo" ] && break
        if probe "$app" "$var" "$mid"; then lo=$mid; else hi=$mid; fi
    done
    echo "$app,$var,$HEAP,$4,$lo,$hi" >> "$CSV"
}
search_all() {  # variant: every app, into $CSV.$variant, $LOG.$variant
    v=$1; CSV="$D/space.csv.$v"; LOG="$D/space-log.txt.$v"; LAST="$D/space-last.txt.$v"
    : > "$CSV"; : > "$LOG"
    for a in ${APPS:-sugarscape traffic barneshut collision structure}; do
        case $a in
            sugarscape) search sugarscape "$v" ${START_SUGARSCAPE:-256} "grid side" ;;
            traffic)    search traffic "$v" ${START_TRAFFIC:-2000} "intersections" ;;
            barneshut)  search barneshut "$v" ${START_BARNESHUT:-50000} "bodies" ;;
            collision)  search collision "$v" ${START_COLLISION:-100000} "bodies" ;;
            structure)  search structure "$v" ${START_STRUCTURE:-64} "grid side" ;;
        esac
    done
}
for v in ${VARIANTS:-warpheap malloc}; do search_all "$v" & done
wait
echo "app,variant,heap_mib,size_parameter,largest_size,first_failing_size" > "$CSV"
: > "$LOG"
for v in ${VARIANTS:-warpheap malloc}; do
    cat "$D/space.csv.$v" >> "$CSV"; cat "$D/space-log.txt.$v" >> "$LOG"
    rm -f "$D/space.csv.$v" "$D/space-log.txt.$v" "$D/space-last.txt.$v"
done
{
    echo "# Space efficiency: largest problem in a budget of $HEAP MiB"
    echo
    echo "| app | size parameter | warpheap | device malloc | ratio | ratio's bounds |"
    echo "| --- | --- | --- | --- | --- | --- |"
    for a in sugarscape traffic barneshut collision structure; do
        w=$(grep "^$a,warpheap," "$CSV" | cut -d, -f5); m=$(grep "^$a,malloc," "$CSV" | cut -d, -f5)
        wf=$(grep "^$a,warpheap," "$CSV" | cut -d, -f6); mf=$(grep "^$a,malloc," "$CSV" | cut -d, -f6)
        p=$(grep "^$a,warpheap," "$CSV" | cut -d, -f4)
        # grids: the ratio of cells (side squared); bounds: largest that ran against first that failed
        r=$(awk -v w="$w" -v m="$m" -v wf="$wf" -v mf="$mf" -v a="$a" 'BEGIN {
            if (!(m > 0) || !(w > 0)) { print "- | -"; exit }
            e = (a == "sugarscape" || a == "structure") ? 2 : 1
            printf "%.2f%s | %.2f - %.2f", (w/m)^e, e == 2 ? " (cells)" : "", (w/mf)^e, (wf/m)^e }')
        echo "| $a | $p | $w | $m | $r |"
    done
    echo
    echo "Sizes are bisected to within 1/2^$STEPS of the first failing size (space.csv has both bounds);"
    echo "the ratio's bounds pair the largest size that ran of one variant with the first that failed of the other."
} > "$D/space.md"
cat "$D/space.md"
