#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The registers of the kernels in regs_heap.cu, from ptxas (sm_90, release
# build: no WH_ASSERT), against their budgets; no kernel may spill.  Twice:
# compiled whole (the headers' way), and with -rdc=true, where every rare
# entry is compiled on its own and a kernel takes the heaviest (nvlink's
# count).  The budgets are nvcc 13.0's counts: with another nvcc the check
# is skipped (exit 77), as ptxas's choices change between versions.
#   check_regs.sh NVCC SOURCE INCLUDE_DIR...
set -euo pipefail
nvcc=$1 src=$2
shift 2
budgets="regs_default=72 regs_slab=72 regs_any=80 regs_free=40 regs_default_malloc=72 regs_any_malloc=80
  regs_bump=21 regs_wrap=26 regs_circular=32 regs_circular_fused=34 regs_circular_multi=32
  regs_circular_fused_multi=34"
budgets_rdc="regs_default=123 regs_slab=115 regs_any=123 regs_free=84 regs_default_malloc=123
  regs_any_malloc=123 regs_bump=24 regs_wrap=28 regs_circular=35 regs_circular_fused=36 regs_circular_multi=35
  regs_circular_fused_multi=36"
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
# check REPORT HOW BUDGETS...: each kernel K=budget against REPORT, whose
# lines from "Function properties for K" on give "R registers" and "S bytes
# spill stores" (ptxas) or "L bytes lmem" (nvlink)
check() {
  local report=$1 how=$2 b k budget line regs spills verdict
  shift 2
  for b in "$@"; do
    k=${b%=*} budget=${b#*=}
    line=$(grep -A2 -E "Function properties for '?$k'?:?\$" "$report" | tr '\n' ' ')
    regs=$(sed -n 's/.*[Uu]sed \([0-9]*\) registers.*/\1/p' <<<"$line")
    spills=$(sed -n 's/.* \([0-9]*\) bytes \(spill stores\|lmem\).*/\1/p' <<<"$line")
    if [ -z "$regs" ] || [ -z "$spills" ]; then
      echo "$k ($how): not in the report"; fail=1; continue
    fi
    verdict=ok
    if [ "$regs" -gt "$budget" ] || [ "$spills" -ne 0 ]; then verdict=OVER; fail=1; fi
    printf '%-26s %-10s %3d registers (budget %d), %d bytes spilled: %s\n' "$k" "$how" "$regs" "$budget" "$spills" \
      "$verdict"
  done
}
check "$out/ptxas.txt" whole $budgets
"$nvcc" -arch=sm_90 -rdc=true -c -O3 -DNDEBUG -DWH_DEBUG=0 "${incs[@]}" -o "$out/regs.o" "$src"
"$nvcc" -arch=sm_90 -dlink -Xnvlink -v -o "$out/dlink.o" "$out/regs.o" >"$out/nvlink.txt" 2>&1 ||
  { cat "$out/nvlink.txt"; exit 1; }
check "$out/nvlink.txt" -rdc=true $budgets_rdc
exit $fail
