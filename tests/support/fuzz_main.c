/* SPDX-License-Identifier: MIT */
/* The plain-test form of a libFuzzer target: linked instead of libFuzzer's
 * main, it feeds the target --runs=N pseudo-random inputs of 2 .. --max-len
 * bytes (a fixed sequence, so a failure repeats), with a line of progress
 * every tenth of the runs.  Every tests/<part>/fuzz_<part>.c is built both
 * ways: this one by ctest, libFuzzer's by scripts/fuzz.sh. */
#include "warpheap/platform.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    long runs = 300, max_len = 4096, seed = 0;
    static const struct option opts[] = {{"runs", required_argument, NULL, 'r'},
                                         {"max-len", required_argument, NULL, 'l'},
                                         {"seed", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (c == 'r')
            runs = atol(optarg);
        else if (c == 'l')
            max_len = atol(optarg);
        else if (c == 's')
            seed = atol(optarg);
        else {
            fprintf(c == 'h' ? stdout : stderr, "usage: %s [--runs=N] [--max-len=BYTES] [--seed=S]\n", argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    if (runs < 1 || max_len < 2) {
        fprintf(stderr, "%s: --runs must be >= 1 and --max-len >= 2\n", argv[0]);
        return 2;
    }
    uint8_t *buf = (uint8_t *)malloc((size_t)max_len);
    if (!buf) return 1;
    for (long r = 0; r < runs; ++r) {
        uint64_t x = wh_hash64((uint64_t)(r + seed * 1000003));
        size_t n = 2 + (size_t)(x % (uint64_t)(max_len - 1));
        for (size_t i = 0; i < n; ++i) buf[i] = (uint8_t)wh_hash64(x + i);
        LLVMFuzzerTestOneInput(buf, n);
        if (runs >= 10 && (r + 1) % (runs / 10) == 0) fprintf(stderr, "  %ld / %ld inputs\n", r + 1, runs);
    }
    free(buf);
    printf("%s: %ld random inputs passed\n", argv[0], runs);
    return 0;
}
