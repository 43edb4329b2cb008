#!/usr/bin/env bash
# Fourth call: is the class bitmap's top word (loaded by every leader to
# look for freed slots before the bump segments) what limits a fill at
# 16 B?  wh_heap_bench_notop: the bench built from a tree with
# no-top-load.patch applied (classes with segments skip that load), an
# experiment only; against the default build, alternating, 4 ways.
#   BUILD=build-final OUT=$OUT bench/results/heap-ways-h100/notop.sh
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; R=$OUT/r; mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ; echo "commit $WH_COMMIT"; } > "$R/info.txt" 2>&1
t0=$(date +%s)
step() { local name=$1 t=$2; shift 2; local s=$(date +%s)
  echo "== $name (limit $t s)"
  timeout "$t" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)" | tee -a "$R/steps.txt"; }
for v in "" _notop "" _notop; do
  d=bench${v:-_default}; [ -d "$R/$d" ] && d=${d}-again
  mkdir -p "$R/$d"
  step "$d" 60 "$B/bin/wh_heap_bench$v" --tests=regs,one,fill90 --kinds=bump,default --ways=4 --out="$R/$d" --commit="$WH_COMMIT"
done
for f in "$R"/bench*.log; do echo "-- $f"; grep -E "^(one|fill90) +default" "$f"; done
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
