#!/usr/bin/env bash
# WH_SOA_OPEN_MAX (the bound on a type's concurrent slow paths, 4f565a4) against speed and space:
# game-of-life and wa-tor at the paper's sizes (ms per iteration, fragmentation) and the
# space-efficiency search of sugarscape and barnes-hut (warpheap only), for the bound at
# 0 (none, as in the paper), 32 (the default), 128 and 1024.  The variants are the apps
# compiled with -DWH_SOA_OPEN_MAX=N (VAR/wh_<app>_omN; BUILD/bin/wh_<app> where there is none).
#   BUILD=build-final VAR=build-final/var OUT=$OUT [LIST="0 32 128 1024"] bench/results/soa/openmax-h100/run.sh
# call3/: the bound as in 4f565a4; call4/: after the read before the add (LIST="32 128");
# call5/: PREFIX=rule LIST="1 2", two ways around the bound (WH_SOA_OPEN_RULE in soa_alloc.h).
set -u
cd "$(dirname "$0")/../../../.."
B=${BUILD:-build}; V=${VAR:-$B/var}; OUT=${OUT:-out}; R=$OUT/om; mkdir -p "$R"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ; cat "$B/COMMIT"; } > "$R/info.txt" 2>&1
LIST=${LIST:-0 32 128 1024}
P=${PREFIX:-om}   # rule: VAR/wh_<app>_ruleN, built with -DWH_SOA_OPEN_RULE=N (call5/)
bin() { [ -x "$V/wh_$1_$P$2" ] && echo "$V/wh_$1_$P$2" || echo "$B/bin/wh_$1"; }
for n in $LIST; do
  echo "== $P $n" >> "$R/speed.log"
  timeout 60 "$(bin gameoflife $n)" --mode=warpheap >> "$R/speed.log" 2>&1; echo "rc=$?" >> "$R/speed.log"
  timeout 40 "$(bin wator $n)" --mode=warpheap --frag="$R/wator_frag_om$n.csv" >> "$R/speed.log" 2>&1; echo "rc=$?" >> "$R/speed.log"
done
# space: sugarscape and barnes-hut in 64 MiB, warpheap only, each bound in its own process tree
for n in $LIST; do
  mkdir -p "$R/space$n/bin"
  for a in sugarscape barneshut; do ln -sf "$(realpath "$(bin $a $n)")" "$R/space$n/bin/wh_$a"; done
  ( BUILD="$R/space$n" OUT="$R/space$n" HEAP=64 STEPS=6 VARIANTS=warpheap APPS="sugarscape barneshut" \
    START_SUGARSCAPE=640 START_BARNESHUT=250000 timeout 300 bench/apps/space.sh > "$R/space$n.log" 2>&1 ) &
done
wait
for n in $LIST; do echo "== $P $n"; grep -E "^\| (sugarscape|barneshut)" "$R/space$n/apps/space.md"; done > "$R/space-summary.txt"
grep -E "^== |ms/iteration|fragmentation" "$R/speed.log" > "$R/speed-summary.txt"
cat "$R/speed-summary.txt" "$R/space-summary.txt"
tar -czf "$OUT/openmax.tgz" -C "$R" .
