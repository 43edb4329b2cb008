/* SPDX-License-Identifier: MIT */
/* The pool's default growth (config.growth = WH_POOL_GROW_DEFAULT) on the
 * CPU backend: it is the one address range (VMM), whose peak reserved stays
 * near peak live on the benchmark's patterns -- Futhark's loop within 1.10
 * (separate arenas: 4.02) and RMM's random_allocations with blocks up to
 * 1 GiB within 1.15 (arenas: up to 1.60) -- at the GPU's 2 MiB granule
 * (the CPU backend places blocks as the GPU does); and where
 * no address range can be reserved the default falls back to arenas, while
 * VMM asked for by name fails. */
#include "warpheap/pool.h"
#include "wh_test.h"
#include "pool_check.h"
#include "../../bench/pool/rmm_pattern.h" /* the benchmark's traces */

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define S(k) ((wh_stream)(uintptr_t)(k))
#define MIB  (1ull << 20)

static wh_pool *make_default(size_t range) {
    return pool_make((wh_pool_config){.backend = WH_POOL_CPU, .vmm_granule = 2 * MIB, .vmm_range = range});
}

/* The range is the only arena and nothing is backed until asked for; a
 * request is backed to the granule, not to an arena step. */
static void default_is_range(void) {
    wh_pool *p = make_default(0);
    wh_pool_stats s = pool_stats(p);
    CHECK_EQ_U64(s.arenas, 1);
    CHECK_EQ_U64(s.reserved, 0);
    void *a = wh_pool_alloc(p, 3 * MIB, S(1)); /* arenas: a 20 MiB medium arena */
    CHECK(a != NULL);
    memset(a, 7, 3 * MIB);
    s = pool_stats(p);
    CHECK(s.reserved >= 4 * MIB && s.reserved < 8 * MIB);
    check_ok(p);
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* Futhark's loop (bench/pool/rmm_pattern.h): 6 buffers of 4 KiB << 2k plus
 * a drift of (i % 7) pages, allocated, then freed, each iteration. */
static void futhark_loop(void) {
    wh_pool *p = make_default(0);
    uint64_t peak = 0;
    void *buf[6];
    for (int i = 0; i < 300; ++i) {
        uint64_t live = 0;
        for (int k = 0; k < 6; ++k) {
            size_t n = ((size_t)4096 << (2 * k)) + (size_t)(i % 7) * 4096;
            buf[k] = wh_pool_alloc(p, n, S(1));
            CHECK(buf[k] != NULL);
            ((char *)buf[k])[n - 1] = (char)k;
            live += n;
        }
        peak = live > peak ? live : peak;
        for (int k = 0; k < 6; ++k) CHECK(wh_pool_free(p, buf[k], S(1)) == WH_OK);
    }
    double r = (double)pool_stats(p).reserved_peak / (double)peak;
    printf("Futhark loop, default growth: peak reserved / peak live = %.3f\n", r);
    CHECK(r <= 1.10);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

static void *rmm_alloc(void *pool, size_t n) {
    void *p = wh_pool_alloc(pool, n, S(1));
    CHECK(p != NULL);
    if (p) ((char *)p)[n - 1] = 1; /* the far end is backed */
    return p;
}
static void rmm_free(void *pool, void *p) { CHECK(wh_pool_free(pool, p, S(1)) == WH_OK); }

/* RMM's random_allocations exactly as the benchmark runs it (same trace,
 * live bytes capped at 16 GiB, a cold pass then 5 / 3 / 1 warm ones): at
 * most 1.15, the pool's footprint goal, for every size.  Up to 1 GiB moves
 * hold reserved at their budget, 1.14 over the peak in use (pool_vmm.c):
 * 1.144 for each N (1.375 without moves). */
static void random_allocations(void) {
    const uint64_t ns[] = {1000, 10000, 100000}, maxs[] = {1, 64, 1024};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            wh_pool *p = make_default(64ull << 30);
            uint64_t pl = 0, peak = 0;
            int reps = i == 0 ? 5 : i == 1 ? 3 : 1;
            for (int pass = 0; pass <= reps; ++pass) {
                rmm_random_allocations(ns[i], maxs[j] * MIB, rmm_alloc, rmm_free, p, &pl);
                peak = pl > peak ? pl : peak;
            }
            check_ok(p);
            wh_pool_stats s = pool_stats(p);
            double r = (double)s.reserved_peak / (double)peak;
            printf("random_allocations N=%llu max=%llu MiB, default growth: peak reserved / peak live = %.3f\n",
                   (unsigned long long)ns[i], (unsigned long long)maxs[j], r);
            CHECK(r <= 1.15);
            CHECK_EQ_U64(s.in_use, 0);
            CHECK(wh_pool_destroy(p) == WH_OK);
        }
}

/* No room for the range (address space limited): the default still makes a
 * pool, of arenas; VMM by name fails.  Last: the limit stays. */
static void fallback_to_arenas(void) {
    struct rlimit lim;
    CHECK(getrlimit(RLIMIT_AS, &lim) == 0);
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    CHECK(f && fscanf(f, "%lu", &pages) == 1);
    if (f) fclose(f);
    lim.rlim_cur = (rlim_t)pages * 4096u + (1ull << 30); /* 1 GiB more than now: no 4 GiB range */
    if (setrlimit(RLIMIT_AS, &lim) != 0) {
        printf("fallback: cannot limit the address space, skipped\n");
        return;
    }
    wh_pool_config c = {.backend = WH_POOL_CPU, .max_blocks = 1024};
    wh_pool *p = NULL;
    CHECK(wh_pool_create(&p, &c) == WH_OK && p != NULL);
    if (!p) return;
    CHECK_EQ_U64(pool_stats(p).arenas, 0); /* no range */
    void *a = wh_pool_alloc(p, 1000, S(1));
    CHECK(a != NULL);
    CHECK_EQ_U64(pool_stats(p).arenas, 1); /* its first arena */
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_OK);
    c.growth = WH_POOL_GROW_VMM;
    CHECK(wh_pool_create(&p, &c) == WH_ERR_OUT_OF_MEMORY && p == NULL);
}

/* A block freed on a busy stream cannot go to another stream; the other
 * stream's allocation grows the range instead, even past the footprint
 * budget (peak in use + 1/10), without waiting for the busy stream's work
 * (config.footprint TIGHT waits only for the requesting stream's own).  The
 * stream_busy hook counts its calls; a wait polls it again and again (in
 * test_pool_gpu a wait would return the allocation only after the other
 * stream's 0.1-s kernel). */
static unsigned busy_calls;
static bool busy_one(wh_stream s, void *u) {
    (void)u;
    busy_calls++;
    return s == S(1);
}
static void growth_does_not_wait(void) {
    wh_pool *p = pool_make(
        (wh_pool_config){.backend = WH_POOL_CPU, .vmm_granule = 2 * MIB, .max_streams = 2, .stream_busy = busy_one});
    void *a = wh_pool_alloc(p, 8 * MIB, S(1));
    CHECK(a != NULL);
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK); /* stream 1 stays busy */
    busy_calls = 0;
    void *b = wh_pool_alloc(p, 8 * MIB, S(2)); /* 16 MiB reserved for 8 live */
    CHECK(b != NULL && b != a);
    CHECK(busy_calls <= 4);
    printf("growth past the budget: %u polls of the busy stream\n", busy_calls);
    check_ok(p);
    CHECK(wh_pool_free(p, b, S(2)) == WH_OK);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* One stream whose work stays queued until the pool waits for it, as on a
 * GPU the host runs ahead of: busy for BUSY_MS after the test's last call
 * (a query made in the pool's call says busy; a wait sleeps until it is
 * idle).  BUSY_MS is far longer than any pool call. */
#define BUSY_MS 200
static struct timespec launched;
static void launch(void) { clock_gettime(CLOCK_MONOTONIC, &launched); }
static bool busy_queued(wh_stream s, void *u) {
    (void)s, (void)u;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return 1e3 * (double)(now.tv_sec - launched.tv_sec) + 1e-6 * (double)(now.tv_nsec - launched.tv_nsec) < BUSY_MS;
}

/* A 32 MiB block freed on the stream, a live one after it, then a 48 MiB
 * request: mapping 48 MiB more would take reserved to 82 MiB against a
 * budget of 55 (the peak in use, 50, + 1/10).  TIGHT maps the freed
 * block's pieces under the request as well, without a wait, and keeps
 * their old addresses mapped (stats.retired) for the stream's queued work:
 * reserved stays within the budget, and the live data stays.  Once the
 * stream's work is done, the next growth unmaps the old addresses.  LOOSE
 * never waits and maps the 48 MiB. */
static void growth_on_own_stream(wh_pool_footprint fp) {
    wh_pool *p = pool_make((wh_pool_config){.backend = WH_POOL_CPU,
                                            .vmm_granule = 2 * MIB,
                                            .stream_busy = busy_queued,
                                            .stream_wait_ms = 10 * BUSY_MS,
                                            .footprint = fp});
    launch();
    char *a = wh_pool_alloc(p, 32 * MIB, S(1)), *c = wh_pool_alloc(p, 2 * MIB, S(1));
    CHECK(a && c);
    if (!a || !c) return;
    memset(c, 0x5c, 2 * MIB);
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    launch(); /* the kernels that used a are still queued */
    char *b = wh_pool_alloc(p, 48 * MIB, S(1));
    CHECK(b != NULL);
    if (b) memset(b, 0xb0, 48 * MIB);
    wh_pool_stats s = pool_stats(p);
    printf("footprint %s: reserved peak %llu MiB for 50 MiB in use, %llu wait(s), %llu move(s)\n",
           fp == WH_POOL_FOOTPRINT_TIGHT ? "tight" : "loose", (unsigned long long)(s.reserved_peak / MIB),
           (unsigned long long)s.waits, (unsigned long long)s.moves);
    CHECK_EQ_U64(s.waits, 0);
    if (fp == WH_POOL_FOOTPRINT_TIGHT) {
        CHECK(s.moves >= 1);
        CHECK(s.retired >= 2 * MIB && s.retired <= 32 * MIB); /* the moved pieces' old addresses */
        CHECK(s.reserved_peak <= 56 * MIB);                   /* the budget, in whole granules */
    } else {
        CHECK_EQ_U64(s.retired, 0);
        CHECK(s.reserved_peak >= 80 * MIB);
    }
    bool same = true;
    for (size_t i = 0; i < 2 * MIB; ++i) same = same && c[i] == 0x5c;
    CHECK(same);
    check_ok(p);
    if (fp == WH_POOL_FOOTPRINT_TIGHT) { /* the stream's work done, a growth ends the old addresses */
        for (int i = 0; i < 4 * BUSY_MS && busy_queued(S(1), NULL); ++i)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        uint64_t reserved = pool_stats(p).reserved;
        void *d = wh_pool_alloc(p, 16 * MIB, S(1));
        CHECK(d != NULL);
        s = pool_stats(p);
        CHECK_EQ_U64(s.retired, 0);
        CHECK_EQ_U64(s.waits, 0);
        printf("after the stream's work: %llu B retired, reserved %llu -> %llu MiB\n", (unsigned long long)s.retired,
               (unsigned long long)(reserved / MIB), (unsigned long long)(s.reserved / MIB));
        check_ok(p);
        CHECK(wh_pool_free(p, d, S(1)) == WH_OK);
    }
    CHECK(wh_pool_free(p, b, S(1)) == WH_OK);
    CHECK(wh_pool_free(p, c, S(1)) == WH_OK);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* One request that moves a piece from READY and then one from its own busy
 * stream: the first move fills part of the hole the growth chose, so the
 * second must choose again (placed where the first went, the piece would
 * land on mapped memory).  Stream 2's 8 MiB block goes to READY (stream 2
 * is idle); stream 1's 32 MiB block stays in its lane (stream 1 is busy). */
static bool s1_busy;
static bool busy_s1(wh_stream s, void *u) {
    (void)u;
    return s == S(1) && s1_busy;
}
static void growth_moves_ready_then_own(void) {
    wh_pool *p = pool_make(
        (wh_pool_config){.backend = WH_POOL_CPU, .vmm_granule = 2 * MIB, .stream_busy = busy_s1, .stream_wait_ms = 10});
    s1_busy = true;
    char *x = wh_pool_alloc(p, 8 * MIB, S(2)), *l = wh_pool_alloc(p, 2 * MIB, S(2));
    char *a = wh_pool_alloc(p, 32 * MIB, S(1)), *c = wh_pool_alloc(p, 2 * MIB, S(1));
    CHECK(x && l && a && c);
    if (!x || !l || !a || !c) return;
    memset(l, 0x11, 2 * MIB);
    memset(c, 0x5c, 2 * MIB);
    CHECK(wh_pool_free(p, x, S(2)) == WH_OK);
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    char *b = wh_pool_alloc(p, 48 * MIB, S(1));
    CHECK(b != NULL);
    if (b) memset(b, 0xb0, 48 * MIB);
    wh_pool_stats s = pool_stats(p);
    printf("moves from READY and from the busy stream: reserved peak %llu MiB for 52 MiB in use, %llu wait(s), "
           "%llu move(s), %llu MiB retired\n",
           (unsigned long long)(s.reserved_peak / MIB), (unsigned long long)s.waits, (unsigned long long)s.moves,
           (unsigned long long)(s.retired / MIB));
    CHECK_EQ_U64(s.waits, 0);
    CHECK(s.moves >= 2);
    CHECK_EQ_U64(s.retired, 32 * MIB);
    CHECK(s.reserved_peak <= 60 * MIB); /* the moves' budget: 52 MiB + 14/100 */
    bool same = true;
    for (size_t i = 0; i < 2 * MIB; ++i) same = same && c[i] == 0x5c && l[i] == 0x11;
    CHECK(same);
    check_ok(p);
    s1_busy = false;
    CHECK(wh_pool_free(p, b, S(1)) == WH_OK);
    CHECK(wh_pool_free(p, c, S(1)) == WH_OK);
    CHECK(wh_pool_free(p, l, S(2)) == WH_OK);
    CHECK(wh_pool_trim(p, 0) == WH_OK); /* the old addresses end, then every free piece goes */
    s = pool_stats(p);
    CHECK_EQ_U64(s.retired, 0);
    CHECK_EQ_U64(s.reserved, 0);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* A wait for the streams releases the pool's lock, so another thread's
 * growth may retire an old address meanwhile, on a stream still busy: the
 * release walk after the wait must not unmap it.  T1 asks for more than the
 * cap on stream 2 and waits for every stream (stream 1 idle by then, stream
 * 2 held busy); meanwhile the main thread's growth on stream 1, busy again,
 * moves stream 1's freed 32 MiB under its request; stream 2 goes idle.
 * Once T1 waits for stream 1 again (past its walk), the old address must
 * still be retired. */
static _Atomic bool r_s1_busy, r_s2_busy;
static _Atomic unsigned r_t1_s1, r_t1_s2; /* T1's queries of streams 1 and 2 */
static pthread_t r_t1;
static bool race_busy(wh_stream s, void *u) {
    (void)u;
    bool t1 = pthread_equal(pthread_self(), r_t1);
    if (s == S(1)) {
        if (t1) r_t1_s1++;
        return r_s1_busy;
    }
    if (s == S(2) && t1) r_t1_s2++;
    return s == S(2) && r_s2_busy;
}
static void *race_t1(void *pool) { return wh_pool_alloc(pool, 40 * MIB, S(2)); }
static bool await_count(_Atomic unsigned *n, unsigned at_least) { /* bounded: 10 s */
    for (int i = 0; i < 10000 && *n < at_least; ++i) nanosleep(&(struct timespec){0, 1000000}, NULL);
    return *n >= at_least;
}
static void retire_during_wait(void) {
    wh_pool *p = pool_make((wh_pool_config){.backend = WH_POOL_CPU,
                                            .vmm_granule = 2 * MIB,
                                            .vmm_slack_pm = 1,
                                            .max_bytes = 64 * MIB,
                                            .stream_busy = race_busy,
                                            .stream_wait_ms = 2000});
    r_s1_busy = r_s2_busy = false;
    r_t1_s1 = r_t1_s2 = 0;
    char *a = wh_pool_alloc(p, 32 * MIB, S(1)), *c = wh_pool_alloc(p, 2 * MIB, S(1)),
         *y = wh_pool_alloc(p, 2 * MIB, S(1));
    CHECK(a && c && y);
    if (!a || !c || !y) return;
    r_s1_busy = r_s2_busy = true;
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    CHECK(wh_pool_free(p, y, S(1)) == WH_OK);
    bool started = pthread_create(&r_t1, NULL, race_t1, p) == 0;
    CHECK(started);
    if (!started) return;            /* no thread to join */
    CHECK(await_count(&r_t1_s1, 2)); /* T1 waits for stream 1 */
    r_s1_busy = false;
    CHECK(await_count(&r_t1_s2, 1)); /* T1 waits for stream 2, the lock released */
    r_s1_busy = true;
    char *b = wh_pool_alloc(p, 34 * MIB, S(1));
    CHECK(b != NULL);
    wh_pool_stats s = pool_stats(p);
    CHECK_EQ_U64(s.retired, 32 * MIB);
    unsigned s1 = r_t1_s1;
    r_s2_busy = false;
    CHECK(await_count(&r_t1_s1, s1 + 1)); /* T1 is past its walk */
    s = pool_stats(p);
    printf("a growth during another thread's wait: %llu MiB still retired after that thread's walk\n",
           (unsigned long long)(s.retired / MIB));
    CHECK_EQ_U64(s.retired, 32 * MIB); /* stream 1 is still busy */
    r_s1_busy = false;
    void *t1 = NULL;
    CHECK(pthread_join(r_t1, &t1) == 0);
    if (t1) CHECK(wh_pool_free(p, t1, S(2)) == WH_OK);
    if (b) CHECK(wh_pool_free(p, b, S(1)) == WH_OK);
    CHECK(wh_pool_free(p, c, S(1)) == WH_OK);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* config.footprint and config.vmm_slack_pm: bad values are named. */
static void footprint_config(void) {
    wh_pool *p = NULL;
    wh_pool_config c = {.backend = WH_POOL_CPU, .footprint = (wh_pool_footprint)2};
    CHECK(wh_pool_create(&p, &c) == WH_ERR_INVALID_ARGUMENT && p == NULL);
    CHECK(strstr(wh_last_error(), "footprint 2") != NULL);
    c = (wh_pool_config){.backend = WH_POOL_CPU, .vmm_slack_pm = 1001};
    CHECK(wh_pool_create(&p, &c) == WH_ERR_INVALID_ARGUMENT && p == NULL);
    CHECK(strstr(wh_last_error(), "vmm_slack_pm 1001") != NULL);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv,
                       "The pool's default growth (config.growth = WH_POOL_GROW_DEFAULT) on the CPU backend.");
    growth_does_not_wait();
    growth_on_own_stream(WH_POOL_FOOTPRINT_TIGHT);
    growth_on_own_stream(WH_POOL_FOOTPRINT_LOOSE);
    growth_moves_ready_then_own();
    retire_during_wait();
    footprint_config();
    default_is_range();
    futhark_loop();
    random_allocations();
    fallback_to_arenas();
    return wh_test_finish("test_pool_default");
}
