#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every stress test (ctest label `stress`) RUNS times with two CPU-bound loops
# beside it, against its time on the idle machine: failures, and run times as
# a multiple of the idle one.  Exits non-zero on any failure, or when a loaded
# run's median takes more than 3x the idle time.
#   scripts/stress-load.sh [RUNS] [BUILD_DIR]      defaults: 50, build
set -euo pipefail
runs=${1:-50}
build=${2:-build}
case "$runs" in -h|--help) sed -n 2,6p "$0"; exit 0 ;; esac
[ -d "$build" ] || { echo "no build folder $build (scripts/test.sh $build first)" >&2; exit 2; }
tests=$(ctest --test-dir "$build" -L stress -N | sed -n 's/^ *Test *#[0-9]*: //p')
[ -n "$tests" ] || { echo "no stress tests in $build" >&2; exit 2; }

one() {   # prints the wall seconds of one run of test $1, or FAIL
  local t0 t1
  t0=$(date +%s.%N)
  if ctest --test-dir "$build" -R "^$1\$" --timeout 600 >/dev/null 2>&1; then
    t1=$(date +%s.%N); echo "$t1 - $t0" | bc
  else echo FAIL; fi
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A idle
for t in $tests; do idle[$t]=$(one "$t"); echo "idle: $t ${idle[$t]} s"; done

loops=()
for _ in 1 2; do (while :; do :; done) & loops+=($!); done
trap 'kill "${loops[@]}" 2>/dev/null || true' EXIT

bad=0
printf '\n| test | idle s | loaded median s | loaded max s | median / idle | failures of %s |\n| --- | ---: | ---: | ---: | ---: | ---: |\n' "$runs"
for t in $tests; do
  times=() fails=0
  for ((i = 1; i <= runs; ++i)); do
    r=$(one "$t")
    if [ "$r" = FAIL ]; then fails=$((fails + 1)); else times+=("$r"); fi
    [ $((i % 10)) = 0 ] && echo "  $t: $i / $runs runs, $fails failed" >&2
  done
  med=$(printf '%s\n' "${times[@]:-0}" | median)
  max=$(printf '%s\n' "${times[@]:-0}" | sort -n | tail -1)
  ratio=$(echo "scale=2; $med / ${idle[$t]}" | bc)
  printf '| %s | %.2f | %.2f | %.2f | %s | %d |\n' "$t" "${idle[$t]}" "$med" "$max" "$ratio" "$fails"
  [ "$fails" = 0 ] || bad=1
  [ "$(echo "$ratio > 3" | bc)" = 0 ] || bad=1
done
exit $bad
