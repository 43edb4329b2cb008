#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every stress test (ctest label `stress`) RUNS times with two CPU-bound loops
# beside it, against its time on the machine without them: failures, and run
# times as a multiple of the idle one.  The idle runs are interleaved with the
# loaded ones (one before every IDLE_EVERY-th loaded run), so that load from
# elsewhere that comes and goes during the run weighs on both.  Exits non-zero
# on any failure, or when a test's loaded median takes more than 3x its idle
# median.  A failed run's output is kept in $LOGS (default: a temporary folder).
#   scripts/stress-load.sh [RUNS] [BUILD_DIR]      defaults: 50, build
#   environment: IDLE_EVERY (default 5), LOGS
set -euo pipefail
runs=${1:-50}
build=${2:-build}
case "$runs" in -h | --help)
  sed -n 3,11p "$0"
  exit 0
  ;;
esac
every=${IDLE_EVERY:-5}
[ -d "$build" ] || {
  echo "no build folder $build (scripts/test.sh $build first)" >&2
  exit 2
}
tests=$(ctest --test-dir "$build" -L stress -N | sed -n 's/^ *Test *#[0-9]*: //p')
[ -n "$tests" ] || {
  echo "no stress tests in $build" >&2
  exit 2
}
logs=${LOGS:-$(mktemp -d -t stress-load.XXXXXX)}
mkdir -p "$logs"

one() { # prints the wall seconds of one run of test $1, or FAIL (its output kept)
  local t0 t1 out
  out="$logs/$1.$2.log"
  t0=$(date +%s.%N)
  if ctest --test-dir "$build" -R "^$1\$" --timeout 600 --output-on-failure >"$out" 2>&1; then
    t1=$(date +%s.%N)
    rm -f "$out"
    echo "$t1 - $t0" | bc
  else echo FAIL; fi
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

loops=()
loops_start() { for _ in 1 2; do (while :; do :; done) & loops+=($!); done; }
loops_stop() {
  [ ${#loops[@]} = 0 ] || kill "${loops[@]}" 2>/dev/null || true
  [ ${#loops[@]} = 0 ] || wait "${loops[@]}" 2>/dev/null || true
  loops=()
}
trap loops_stop EXIT

echo "stress tests of $build, $runs loaded runs each, an idle run before every ${every}th; failed runs' output in $logs" >&2
bad=0
table="| test | idle median s | loaded median s | loaded max s | median / idle | max / idle | failures (idle, loaded) |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for t in $tests; do
  idle=() loaded=() ifails=0 lfails=0
  for ((i = 0; i < runs; ++i)); do
    if ((i % every == 0)); then
      r=$(one "$t" "idle$i")
      if [ "$r" = FAIL ]; then ifails=$((ifails + 1)); else idle+=("$r"); fi
    fi
    loops_start
    r=$(one "$t" "loaded$i")
    loops_stop
    if [ "$r" = FAIL ]; then lfails=$((lfails + 1)); else loaded+=("$r"); fi
    (((i + 1) % 10 == 0)) && echo "  $t: $((i + 1)) / $runs runs, $lfails failed" >&2
  done
  imed=$(printf '%s\n' "${idle[@]:-0}" | median)
  lmed=$(printf '%s\n' "${loaded[@]:-0}" | median)
  lmax=$(printf '%s\n' "${loaded[@]:-0}" | sort -n | tail -1)
  ratio=$(echo "scale=2; $lmed / $imed" | bc)
  mratio=$(echo "scale=2; $lmax / $imed" | bc)
  row=$(printf '| %s | %.2f | %.2f | %.2f | %s | %s | %d, %d |' "$t" "$imed" "$lmed" "$lmax" "$ratio" "$mratio" \
    "$ifails" "$lfails")
  echo "$row" >&2
  table+=$'\n'"$row"
  [ "$ifails" = 0 ] && [ "$lfails" = 0 ] || bad=1
  [ "$(echo "$ratio > 3" | bc)" = 0 ] || bad=1
done
printf '\n%s\n\n%s\n' "$table" "$([ $bad = 0 ] && echo "PASS: no failure, every loaded median within 3x of idle" ||
  echo "FAIL: a failure, or a loaded median over 3x idle")"
exit $bad
