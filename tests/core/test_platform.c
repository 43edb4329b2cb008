/* SPDX-License-Identifier: MIT */
/* Platform layer on the CPU backend: the shared checks, the one-lane warp,
 * atomics under real concurrency (no lost update with 8 threads), and waits
 * that leave the CPU and end on time. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "platform_checks.h"
#include "wh_test.h"

#include <sys/resource.h>
#include <time.h>

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

/* The calling thread's CPU time (what it ran, however long it waited for a
 * core) and its voluntary context switches (the times it blocked: a sleep
 * does, a spin or a yield never does). */
static double thread_cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static long thread_blocks(void) {
#ifdef RUSAGE_THREAD
    struct rusage u;
    if (getrusage(RUSAGE_THREAD, &u) == 0) return u.ru_nvcsw;
#endif
    return -1;
}

/* Thread 1 holds a flag for 200 ms, thread 0 waits for it (wh_wait). */
typedef struct hold {
    uint32_t flag;
    bool seen;
    double wall, cpu;
    long blocks;
} hold;
static void hold_or_wait(unsigned i, void *arg) {
    hold *h = (hold *)arg;
    if (i == 1) {
        struct timespec d = {0, 200000000};
        nanosleep(&d, NULL);
        wh_atomic_store(&h->flag, 1u, WH_RELEASE);
        return;
    }
    double t0 = wh_now_seconds(), c0 = thread_cpu_seconds();
    long b0 = thread_blocks();
    for (wh_wait w = wh_wait_begin(1u << 24); wh_wait_more(&w); wh_wait_backoff(&w, ~0u))
        if ((h->seen = wh_atomic_load(&h->flag, WH_ACQUIRE) != 0u)) break;
    h->wall = wh_now_seconds() - t0;
    h->cpu = thread_cpu_seconds() - c0;
    h->blocks = b0 < 0 ? -1 : thread_blocks() - b0;
}

/* A thread that holds what others wait for may be preempted, and then runs
 * only while its waiters sleep (platform.h, waiting): a waiter blocks, again
 * and again, and spends a small part of its wait on the CPU.  One that spins
 * or yields never blocks, whatever else the machine runs.  And a wait gives
 * up on time: tries microseconds, however long its sleeps (a count of looks
 * that sleep up to 1 ms would take a thousand times longer). */
static void test_waits(void) {
    hold h = {0, false, 0, 0, 0};
    wh_run_threads(2, hold_or_wait, &h);
    printf("waited %.3f s for a flag: %.4f s on the CPU, blocked %ld times\n", h.wall, h.cpu, h.blocks);
    CHECK(h.seen);
    CHECK(h.cpu < h.wall / 2);
    CHECK(h.blocks < 0 || h.blocks >= 10);

    double t0 = wh_now_seconds(), c0 = thread_cpu_seconds();
    long b0 = thread_blocks();
    for (int k = 0; k < 100; ++k) wh_backoff(WH__CPU_SPINS + 10u);
    double wall = wh_now_seconds() - t0, cpu = thread_cpu_seconds() - c0;
    long blocks = b0 < 0 ? -1 : thread_blocks() - b0;
    printf("100 backoffs past the spins: %.4f s, %.4f s on the CPU, blocked %ld times\n", wall, cpu, blocks);
    CHECK(cpu < wall / 2);
    CHECK(blocks < 0 || blocks >= 50);

    unsigned looks = 0;
    t0 = wh_now_seconds();
    for (wh_wait w = wh_wait_begin(50000u); wh_wait_more(&w); wh_wait_backoff(&w, ~0u)) ++looks;
    wall = wh_now_seconds() - t0;
    printf("a wait of 50000 tries gave up after %.3f s and %u looks\n", wall, looks);
    CHECK(wall >= 0.05 && wall < 5.0);
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
    wh_backoff(10); /* sleeps; must return */

    wh_run_threads(8, hammer, NULL);
    CHECK_EQ_U64(counter64, 800000);
    CHECK_EQ_U64(counter32, 800000);
    CHECK_EQ_U64(orword, 0xFF);
    test_waits();
    return wh_test_finish("test_platform");
}
