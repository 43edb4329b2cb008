#!/usr/bin/env bash
# Build the host pool's libFuzzer target (tests/pool/fuzz_pool.c) with clang
# and run it for N seconds (default 60).  CPU backend only; needs clang with
# libFuzzer (Debian: clang-14 or clang).  Exit status is non-zero when the
# fuzzer finds a crash or an oracle failure; the input is left in WORKDIR.
#   tests/pool/fuzz.sh [SECONDS] [WORKDIR]
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-$root/build-fuzz-pool}
cc=${CC_FUZZ:-$(command -v clang-14 || command -v clang)}
mkdir -p "$work/include/warpheap" "$work/corpus"
printf '#ifndef WARPHEAP_CONFIG_H\n#define WARPHEAP_CONFIG_H\n#define WH_HAVE_CUDA 0\n#endif\n' \
  > "$work/include/warpheap/config.h"
"$cc" -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/include" -I"$work/include" \
  "$root/tests/pool/fuzz_pool.c" "$root"/src/pool/*.c "$root/src/core/status.c" "$root/src/core/device.c" \
  -lpthread -o "$work/fuzz_pool"
cd "$work"
./fuzz_pool -max_total_time="$secs" -max_len=4096 -timeout=20 -print_final_stats=1 corpus
