/* SPDX-License-Identifier: MIT */
/* Platform layer on the CPU backend: the shared checks, the one-lane warp, and
 * atomics under real concurrency (no lost update with 8 threads). */
#include "platform_checks.h"
#include "wh_test.h"

static uint64_t counter64;
static uint32_t counter32;
static uint64_t orword;

static void hammer(unsigned i, void *arg) {
    (void)arg;
    for (int k = 0; k < 100000; ++k) {
        wh_atomic_fetch_add(&counter64, 1ull, WH_RELAXED);
        wh_atomic_fetch_add(&counter32, 1u, WH_RELAXED);
    }
    wh_atomic_fetch_or(&orword, 1ull << i, WH_ACQ_REL);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Platform layer on the CPU backend.");
    uint64_t w64[4] = {0};
    uint32_t w32[4] = {0};
    uint32_t fails = wh_platform_checks(w64, w32);
    if (fails) fprintf(stderr, "failed check bits: %08x\n", fails);
    CHECK(fails == 0);

    /* a CPU warp is one lane */
    CHECK(WH_WARP_SIZE == 1);
    CHECK(wh_lane_id() == 0);
    CHECK(wh_active_mask() == 1u);
    CHECK(wh_ballot(1u, true) == 1u && wh_ballot(1u, false) == 0u);
    CHECK(wh_shfl32(1u, 77u, 0) == 77u && wh_shfl64(1u, 1ull << 50, 0) == 1ull << 50);
    CHECK(wh_match_any64(1u, 5) == 1u);
    CHECK(wh_is_leader(1u) && wh_leader(1u) == 0 && wh_rank(1u) == 0);
    wh_backoff(10); /* yields; must return */

    wh_run_threads(8, hammer, NULL);
    CHECK_EQ_U64(counter64, 800000);
    CHECK_EQ_U64(counter32, 800000);
    CHECK_EQ_U64(orword, 0xFF);
    return wh_test_finish("test_platform");
}
