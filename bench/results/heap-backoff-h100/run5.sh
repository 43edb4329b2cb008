#!/usr/bin/env bash
# Fifth call: the review commit (751ba99, the fast path's top-word test):
# test_heap_gpu and test_kd_gpu, compute-sanitizer memcheck, racecheck and
# synccheck of test_heap_gpu --small, memcheck of test_kd_gpu.  One tarball.
#   B=build-carry/hr OUT=$OUT bench/results/heap-backoff-h100/run5.sh
set -u
B=${B:-build-carry/hr}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run5.tar.gz" .' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$B/COMMIT"; date -u +%FT%TZ; } > "$R/gpu.txt" 2>&1
for t in test_heap_gpu test_kd_gpu; do
  timeout 120 "$B/$t" > "$R/$t.log" 2>&1
  echo "== $t rc=$?"; tail -1 "$R/$t.log"
done
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --error-exitcode 9 --tool $tool "$B/test_heap_gpu" --small > "$R/san-heap-$tool.log" 2>&1
  echo "== $tool test_heap_gpu --small rc=$?"; grep -E "SUMMARY|passed|FAILED" "$R/san-heap-$tool.log" | tail -2
done
timeout 200 compute-sanitizer --error-exitcode 9 --tool memcheck "$B/test_kd_gpu" > "$R/san-kd-memcheck.log" 2>&1
echo "== memcheck test_kd_gpu rc=$?"; grep -E "SUMMARY|passed|FAILED" "$R/san-kd-memcheck.log" | tail -2
