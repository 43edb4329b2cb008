#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU check, on a machine with a GPU: every GPU test, then compute-sanitizer
# (memcheck, racecheck, synccheck ...) on the small configurations listed in
# scripts/sanitize.d/*.txt, then -- with --bench -- every bench/*/gpu-bench.sh.
# Prints a summary and exits non-zero on any failure.
#   scripts/gpu-check.sh BUILD_DIR [--bench] [--no-tests] [--no-sanitize]
# (env SANITIZE_LISTS / BENCH_LIST: only those parts, e.g. "heap pool";
# WH_COMMIT names the commit, else scripts/commit.sh finds it)
# BUILD_DIR may have been built on another machine and copied: its absolute
# source path is recreated as a link to this checkout so ctest finds it.
set -u
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build}; shift || true
bench=0; tests=1; sanitize=1
for a in "$@"; do
  case $a in --bench) bench=1;; --no-tests) tests=0;; --no-sanitize) sanitize=0;; esac
done
out=${OUT:-$root/out}
mkdir -p "$out"
build=$(cd "$build" && pwd)

src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"; fi
bbuild=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$bbuild" ] && [ ! -e "$bbuild" ]; then mkdir -p "$(dirname "$bbuild")" && ln -s "$build" "$bbuild"; fi

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  nvcc --version 2>/dev/null | tail -1; date -u +%FT%TZ
  scripts/commit.sh "$build"; } | tee "$out/gpu-info.txt"

summary=()
fails=0
record() {  # name status
  summary+=("$(printf '%-58s %s' "$1" "$2")")
  [ "$2" = PASS ] || fails=$((fails + 1))
}

if [ $tests = 1 ]; then
  echo "== GPU tests"
  ctest --test-dir "$build" -L gpu --no-tests=error --output-on-failure --timeout 300 2>&1 | tee "$out/gpu-tests.log"
  if [ "${PIPESTATUS[0]}" = 0 ]; then
    record "ctest -L gpu" PASS
  else
    record "ctest -L gpu" FAIL
  fi
  grep -E "Test +#" "$out/gpu-tests.log" | sed 's/^ *//' >> "$out/gpu-summary.txt"
fi

if [ $sanitize = 1 ]; then
  echo "== compute-sanitizer"
  # SANITIZE_LISTS="foundation heap" restricts the run to those lists
  for list in scripts/sanitize.d/*.txt; do
    if [ -n "${SANITIZE_LISTS:-}" ] && ! [[ " $SANITIZE_LISTS " == *" $(basename "$list" .txt) "* ]]; then continue; fi
    while read -r tool bin args; do
      case $tool in ''|'#'*) continue;; esac
      log="$out/sanitize-$(basename "$list" .txt).log"
      echo "-- $tool $bin $args" | tee -a "$log"
      # memcheck-noheap: memcheck without its device-heap (CUDA malloc) tracking;
      # memcheck-expect-oob: memcheck that must report an out-of-bounds access
      # (a test of what the sanitizer sees: it passes when the report is there)
      opts="--tool $tool"; expect=""
      [ "$tool" = memcheck-noheap ] && opts="--tool memcheck --check-device-heap no"
      [ "$tool" = memcheck-expect-oob ] && opts="--tool memcheck" && expect="is out of bounds"
      run="$out/sanitize-run.log"
      timeout 300 compute-sanitizer $opts --error-exitcode 99 "$build/bin/$bin" $args >"$run" 2>&1
      rc=$?
      cat "$run" >>"$log"
      if [ -z "$expect" ] && [ $rc = 0 ]; then
        record "$tool $bin $args" PASS
      elif [ -n "$expect" ] && [ $rc = 99 ] && grep -q "$expect" "$run"; then
        echo "   reported, as expected: $(grep -m1 "$expect" "$run" | sed 's/^=* *//')" | tee -a "$log"
        record "$tool $bin $args" PASS
      elif [ -n "$expect" ]; then
        record "$tool $bin $args" "FAIL (exit $rc, no '$expect' report; see $(basename "$log"))"
        tail -20 "$run"
      else
        record "$tool $bin $args" "FAIL (exit $rc, see $(basename "$log"))"
        tail -20 "$run"
      fi
    done < "$list"
  done
fi

if [ $bench = 1 ]; then
  echo "== benchmarks"
  # BENCH_LIST="heap pool" restricts the run to those parts' gpu-bench.sh
  for b in bench/*/gpu-bench.sh; do
    [ -e "$b" ] || continue
    name=$(basename "$(dirname "$b")")
    if [ -n "${BENCH_LIST:-}" ] && ! [[ " $BENCH_LIST " == *" $name "* ]]; then continue; fi
    mkdir -p "$out/$name"
    BUILD="$build" OUT="$out/$name" timeout 900 bash "$b" 2>&1 | tee "$out/$name/bench.log"
    if [ "${PIPESTATUS[0]}" = 0 ]; then
      record "bench $name" PASS
    else
      record "bench $name" FAIL
    fi
  done
fi

echo
echo "== summary ($(head -1 "$out/gpu-info.txt"))"
printf '%s\n' "${summary[@]}" | tee -a "$out/gpu-summary.txt"
echo "$fails failure(s)"
[ $fails = 0 ]
