#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run parts' benchmarks on this machine's GPU and write one report per part:
# bench/results/<part>/report.md (a header naming the GPU, driver, CUDA,
# date, commit and command, then the benchmark's tables) with its CSV and PNG
# files, replacing the previous report.  Logs stay in the scratch folder.
#   [WH_COMMIT=REV] scripts/bench.sh [--build DIR] [--baseline DIR] [--keep DIR] PART...
# PART: heap, pool, arena, kdtree, soa, apps, dist (bench/<part>/gpu-bench.sh), or
# all.  Without --build the benchmarks are built in build-bench (CUDA,
# this GPU's architecture, examples and benchmarks on).  --baseline names a
# build of other sources (an earlier commit) whose rows a part's tables add.
# The commit named is the one the build recorded (bin/COMMIT,
# scripts/commit.sh): a build made elsewhere and copied here is named by the
# sources it was built from, not by this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=""
keep=""
parts=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2;;
    --keep) keep=$2; shift 2;;
    --baseline) export WH_BASELINE_BUILD=$(cd "$2" && pwd); shift 2;;
    -h|--help) sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
    -*) echo "bench.sh: unknown option $1 (--help lists them)" >&2; exit 2;;
    all) parts+=(heap pool arena kdtree soa apps dist); shift;;
    *) [ -x "bench/$1/gpu-bench.sh" ] || { echo "bench.sh: no part '$1' (bench/$1/gpu-bench.sh)" >&2; exit 2; }
       parts+=("$1"); shift;;
  esac
done
[ ${#parts[@]} -gt 0 ] || { echo "bench.sh: name at least one part (--help)" >&2; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "bench.sh: no GPU found (nvidia-smi -L failed)" >&2; exit 1; }
export PATH=/usr/local/cuda/bin:$PATH
if [ -z "$build" ]; then
  build=build-bench
  echo "== build ($build)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native \
    -DWH_BUILD_BENCH=ON -DWH_BUILD_EXAMPLES=ON -DWH_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j "$(nproc)"
fi
build=$(cd "$build" && pwd)
# the commit of the binaries (scripts/commit.sh: WH_COMMIT, the build's record, git)
commit=$(scripts/commit.sh "$build")
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
cuda=$(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
scratch=${keep:-$(mktemp -d)}
rc=0
for part in "${parts[@]}"; do
  echo "== $part"
  out="$scratch/$part"
  rm -rf "$out" && mkdir -p "$out"
  t0=$(date +%s)
  status=passed
  BUILD="$build" OUT="$out" WH_COMMIT="$commit" WH_GPU_DRIVER="$driver" "bench/$part/gpu-bench.sh" > "$out/run.log" 2>&1 \
    || { status="FAILED (exit $?; the tables hold what finished)"; rc=1; }
  secs=$(( $(date +%s) - t0 ))
  dest="$root/bench/results/$part"
  rm -rf "$dest" && mkdir -p "$dest"
  {
    echo "# $part benchmark"
    echo
    echo "| | |"
    echo "| --- | --- |"
    echo "| GPU | $gpu |"
    echo "| driver | $driver |"
    echo "| CUDA | $cuda |"
    echo "| date | $(date -u +%F) |"
    echo "| commit | $commit |"
    echo "| command | \`scripts/bench.sh $part\` ($secs s, $status) |"
    echo
    # the benchmark's own tables, then every CSV and PNG beside them
    find "$out" -name '*.md' | sort | while read -r md; do
      echo "## $(basename "$md" .md)"
      echo
      sed 's/^# /### /' "$md"
      echo
    done
  } > "$dest/report.md"
  find "$out" \( -name '*.csv' -o -name '*.png' \) -exec cp {} "$dest/" \;
  # the programs write uncompressed PNG (no dependency); matplotlib compresses it
  for py in python3 /usr/bin/python3; do
    if "$py" -c 'import matplotlib' 2>/dev/null; then
      find "$dest" -name '*.png' -exec "$py" -c 'import sys, matplotlib.image as m; [m.imsave(f, m.imread(f)) for f in sys.argv[1:]]' {} +
      break
    fi
  done
  echo "   $dest/report.md ($secs s, $status)"
done
[ -n "$keep" ] || rm -rf "$scratch"
exit $rc
