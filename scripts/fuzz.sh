#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build one part's libFuzzer target (tests/PART/fuzz_PART.c) with clang on the
# CPU backend (the library's C sources, as CMake takes them: without the NCCL
# transport), with AddressSanitizer and UndefinedBehaviorSanitizer, and run it
# for SECONDS (default 60).  Exits non-zero when the fuzzer finds a crash or
# an oracle failure; the input is left in the work folder (crash-*).
#   scripts/fuzz.sh PART [SECONDS] [WORKDIR]      PART: heap, soa, arena or pool
set -euo pipefail
usage() { echo "usage: $0 heap|soa|arena|pool [SECONDS] [WORKDIR]"; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; heap|soa|arena|pool) ;; *) usage >&2; exit 2 ;; esac
part=$1
secs=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
work=${3:-$root/build-fuzz-$part}
cc=${CC_FUZZ:-$(command -v clang-14 || command -v clang)}
mkdir -p "$work/include/warpheap" "$work/corpus"
printf '#ifndef WARPHEAP_CONFIG_H\n#define WARPHEAP_CONFIG_H\n#define WH_HAVE_CUDA 0\n#endif\n' \
  > "$work/include/warpheap/config.h"
echo "building $work/fuzz_$part"
# shellcheck disable=SC2046
"$cc" -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/include" -I"$work/include" -I"$root/src" -I"$root/tests/support" \
  "$root/tests/$part/fuzz_$part.c" $(find "$root/tests/$part" -name '*_oracle.c') \
  $(find "$root/src" -name '*.c' -not -path '*/src/soa/nccl/*' | sort) \
  -lpthread -lm -o "$work/fuzz_$part"
cd "$work"
# -len_control=0: long inputs from the first run, not after minutes of short ones
./"fuzz_$part" -max_total_time="$secs" -max_len=4096 -len_control=0 -timeout=20 -print_final_stats=1 corpus
