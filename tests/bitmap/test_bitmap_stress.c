/* SPDX-License-Identifier: MIT */
/* Bitmap stress on the CPU backend: >= 16 threads, >= 10^6 mixed legal
 * operations on one bitmap, then the full consistency check and exact count.
 * Two shapes: a small bitmap where containers empty and refill all the time
 * (summary bits churn at every level), and a large one with 4 levels. */
#include "stress.h"
#include "wh_cli.h"
#include "wh_test.h"

int main(int argc, char **argv) {
    uint32_t threads = 16, ops = 200000;
    int small = 0;
    wh_cli_opt cli[] = {WH_CLI_UINT("threads", &threads, "threads"), WH_CLI_UINT("ops", &ops, "operations per thread"),
                        WH_CLI_FLAG("small", &small, "allow fewer than 10^6 operations in all"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Bitmap stress on the CPU backend, then the consistency check and exact count.");
    wh_stress_config cfgs[] = {
        /* 8192 bits, 90% held: containers flip between empty and not constantly */
        {8192, threads, ops, 8192 * 9 / 10 / threads},
        /* 2^20 bits (4 levels), each thread holds up to 4096 */
        {1u << 20, threads, ops, 4096},
    };
    for (unsigned k = 0; k < sizeof cfgs / sizeof *cfgs; ++k) {
        wh_stress_result r;
        CHECK(wh_stress_cpu(&cfgs[k], &r) == 0);
        wh_stress_print("cpu", &cfgs[k], &r);
        CHECK(r.ops >= 1000000 || small);
        CHECK(r.counts.claims > 0 && r.counts.releases > 0 && r.counts.spans > 0);
        CHECK_EQ_U64(r.counts.violations, 0);
        CHECK_EQ_U64(r.inconsistent, 0);
        CHECK_EQ_U64(r.owned_twice, 0);
        CHECK_EQ_U64(r.count, r.expected);
    }
    return wh_test_finish("test_bitmap_stress");
}
