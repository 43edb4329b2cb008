#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The registers of the kernels in regs_heap.cu, from ptxas (sm_90, release
# build: no WH_ASSERT), against their budgets; no kernel may spill.  The
# budgets are nvcc 13.0's counts: with another nvcc the check is skipped
# (exit 77), as ptxas's choices change between versions.
#   check_regs.sh NVCC SOURCE INCLUDE_DIR...
set -euo pipefail
nvcc=$1 src=$2
shift 2
budgets="regs_default=72 regs_slab=72 regs_any=80 regs_free=40"
version=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
if [ "$version" != "13.0" ]; then
  echo "nvcc $version: the budgets are nvcc 13.0's; skipped"
  exit 77
fi
incs=()
for d in "$@"; do incs+=(-I "$d"); done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$nvcc" -arch=sm_90 -cubin -O3 -DNDEBUG -DWH_DEBUG=0 -Xptxas -v "${incs[@]}" -o "$out/regs.cubin" "$src" \
  >"$out/ptxas.txt" 2>&1 || { cat "$out/ptxas.txt"; exit 1; }
fail=0
for b in $budgets; do
  k=${b%=*} budget=${b#*=}
  # ptxas: "Function properties for K", "N bytes stack frame, S bytes spill
  # stores, L bytes spill loads", then "Used R registers"
  line=$(grep -A2 "Function properties for $k\$" "$out/ptxas.txt" | tr '\n' ' ')
  regs=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' <<<"$line")
  spills=$(sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' <<<"$line")
  if [ -z "$regs" ] || [ -z "$spills" ]; then
    echo "$k: not in ptxas's report"; fail=1; continue
  fi
  verdict=ok
  if [ "$regs" -gt "$budget" ] || [ "$spills" -ne 0 ]; then verdict=OVER; fail=1; fi
  printf '%-13s %3d registers (budget %d), %d bytes spilled: %s\n' "$k" "$regs" "$budget" "$spills" "$verdict"
done
exit $fail
