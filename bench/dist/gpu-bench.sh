#!/bin/sh
# SPDX-License-Identifier: MIT
# Object heaps across ranks (soa/dist.h) on this machine's GPUs, for 1, 2, 4
# and 8 GPUs (as many as nvidia-smi lists): wa-tor across ranks at 16x the
# paper's grid (strong scaling) and at the paper's grid per GPU (weak
# scaling), n-body across ranks (strong), each GPU count first checked at a
# small size against the one-domain static version; with 4 GPUs or more, a
# wa-tor run whose heaps (about 100 GB) do not fit in one 80 GB GPU.  One
# process drives the GPUs, one rank each, over NCCL where the build has it
# (--nccl), else over the in-process transport.  Run by scripts/bench.sh
# dist, or by hand:  BUILD=build-bench OUT=/tmp/out bench/dist/gpu-bench.sh
# Writes $OUT/dist/summary.md, dist.csv, domains.png, one log per run and
# runs.log (all of them).
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-out}
ITERS=${ITERS:-100}
D="$OUT/dist"
mkdir -p "$D"
B="$BUILD/bin"
G=$(nvidia-smi -L | wc -l)
T=""
"$B/wh_wator_dist" --help | grep -q -- "--nccl" && T="--nccl"
transport=${T:+NCCL}
transport=${transport:-in-process (cudaMemcpy between GPUs)}
run() {   # name timeout command...
    name=$1; t=$2; shift 2
    echo "== $name: $*" >> "$D/runs.log"
    timeout "$t" "$@" > "$D/$name.txt" 2>&1 < /dev/null
    echo "rc=$?" >> "$D/$name.txt"
    cat "$D/$name.txt" >> "$D/runs.log"
}
# run name -> "ms moved MB halo-MB" from its "warpheap, N ranks: ..." line
figures() {
    sed -n 's/.*ranks: \([0-9.]*\) ms an iteration; \([0-9]*\) [a-z]* migrated\( (\([0-9.]*\) MB), halos \([0-9.]*\) MB\)\{0,1\}.*/\1 \2 \4 \5/p' "$D/$1.txt" | head -1
}
echo "run,gpus,ms_per_iteration,migrated,migrated_mb,halo_mb" > "$D/dist.csv"
counts=""
for g in 1 2 4 8; do [ "$g" -le "$G" ] && counts="$counts $g"; done
for g in $counts; do
    run check_wator_$g 180 "$B/wh_wator_dist" $T --ranks=$g --w=512 --h=512 --iters=100 --check --quiet
    run check_nbody_$g 180 "$B/wh_nbody_dist" $T --ranks=$g --n=4096 --iters=50 --dt=0.5 --check
    run strong_wator_$g 400 "$B/wh_wator_dist" $T --ranks=$g --w=8192 --h=10240 --iters="$ITERS" --mode=warpheap --quiet
    run weak_wator_$g 400 "$B/wh_wator_dist" $T --ranks=$g --w=2048 --h=$((2560 * g)) --iters="$ITERS" --mode=warpheap --quiet
    run strong_nbody_$g 400 "$B/wh_nbody_dist" $T --ranks=$g --n=65536 --iters=20 --dt=0.5 --mode=warpheap
    for r in strong_wator weak_wator strong_nbody; do
        set -- $(figures ${r}_$g)
        echo "$r,$g,${1:-},${2:-},${3:-},${4:-}" >> "$D/dist.csv"
    done
done
if [ "$G" -ge 4 ]; then
    run big_wator_4 900 "$B/wh_wator_dist" $T --ranks=4 --w=32768 --h=32768 --iters=20 --mode=warpheap --quiet
    set -- $(figures big_wator_4)
    echo "big_wator,4,${1:-},${2:-},${3:-},${4:-}" >> "$D/dist.csv"
fi
last=$(echo $counts | awk '{print $NF}')
run picture 180 "$B/wh_wator_dist" $T --ranks="$last" --w=1024 --h=1024 --iters=100 --mode=warpheap --quiet --ppm="$D/domains.ppm"
python3 - "$D/domains.ppm" "$D/domains.png" <<'PY' >> "$D/runs.log" 2>&1
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
raw = open(sys.argv[1], "rb").read()
magic, size, depth, pixels = raw.split(b"\n", 3)
w, h = map(int, size.split())
plt.imsave(sys.argv[2], np.frombuffer(pixels, dtype=np.uint8)[: w * h * 3].reshape(h, w, 3))
PY
rm -f "$D/domains.ppm"
{
    echo "# Object heaps across ranks"
    echo
    echo "$G GPU(s); transport: $transport; $ITERS iterations of wa-tor, 20 of n-body."
    echo "Speed-up: time per iteration on 1 GPU over time on g GPUs (strong);"
    echo "efficiency: 1-GPU time over g-GPU time with g times the grid (weak)."
    echo
    echo "| run | GPUs | ms / iteration | speed-up or efficiency | migrated (objects, whole run) | migrated MB | halo MB |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    awk -F, 'NR > 1 { if ($2 == 1) base[$1] = $3; r = ($3 > 0 && base[$1] > 0) ? sprintf("%.2f", base[$1] / $3) : "-";
                      printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, r, $4, $5, $6 }' "$D/dist.csv"
    echo
    echo "strong_wator: 8192x10240 cells; weak_wator: 2048x(2560 g); strong_nbody: 65536 bodies;"
    echo "big_wator: 32768x32768 cells (about 100 GB of heaps, more than one 80 GB GPU holds)."
    echo
    echo "Checks (one-domain static version, same binary):"
    echo
    grep -H "check:" "$D"/check_*.txt | sed 's|.*/check_||; s/\.txt:/: /; s/^/- /'
    echo
    echo "Exit codes:"
    echo
    grep -H "^rc=" "$D"/*.txt | sed 's|.*/||; s/^/    /'
    echo
    [ -f "$D/domains.png" ] && echo "![the domains of $last GPUs, each band tinted by its rank](domains.png)"
} > "$D/summary.md"
cat "$D/summary.md"
