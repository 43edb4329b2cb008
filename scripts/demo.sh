#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: on a fresh machine, installs what it needs (Debian packages),
# builds the library and the tour only, runs the tour of the four parts (on
# the GPU when one is found, else on the CPU backend), and plots the
# speed-ups (matplotlib).
#   scripts/demo.sh [BUILD_DIR] [wh_tour options, e.g. --quick; --help lists them]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-demo
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then build=$1; shift; fi
jobs=$(nproc 2>/dev/null || echo 2)
sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
need=""
for tool in cmake:cmake gcc:gcc g++:g++ make:make; do command -v "${tool%%:*}" >/dev/null || need="$need ${tool#*:}"; done
plot_python() {                        # a python3 that has matplotlib (Debian's, if another comes first)
  for py in python3 /usr/bin/python3; do
    command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null && { echo "$py"; return; }
  done
}
[ -n "$(plot_python)" ] || need="$need python3-matplotlib"
if [ -n "$need" ] && command -v apt-get >/dev/null; then
  echo "== installing:$need"
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null \
    || echo "could not install$need (the plot needs python3-matplotlib)"
fi
export PATH=/usr/local/cuda/bin:$PATH
if command -v nvcc >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  backend=(-DCMAKE_CUDA_ARCHITECTURES=native); echo "== GPU found: CUDA backend for $(nvidia-smi -L | head -1)"
else
  backend=(-DWH_ENABLE_CUDA=OFF); echo "== no GPU found: CPU backend"
fi
echo "== configure ($build)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DWH_BUILD_TESTS=OFF "${backend[@]}" >/dev/null
echo "== build wh_tour"
cmake --build "$build" --target wh_tour -j "$jobs"
echo "== tour"
"$build/bin/wh_tour" --out="$build/tour" "$@"
py=$(plot_python)
if [ -n "$py" ]; then
  "$py" examples/tour/plot.py "$build/tour/tour.csv" "$build/tour/speedups.png"
else
  echo "no matplotlib: the speed-ups stay in $build/tour/tour.csv"
fi
