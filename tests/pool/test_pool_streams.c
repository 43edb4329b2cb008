/* SPDX-License-Identifier: MIT */
/* Host pool with many streams on the CPU backend: 200 streams hold blocks at
 * once on a pool of 4 lanes (streams with a free index of their own); stream
 * order holds past the lanes and for uses recorded on slots past 64; a
 * stream's slot comes back once its blocks are gone, and after
 * wh_pool_forget_stream; the heap walk holds while an allocation waits for
 * streams with the pool unlocked. */
#include "warpheap/pool.h"
#include "wh_test.h"
#include "pool_check.h"

#include <string.h>

#define NS 200
static bool busy[NS + 1];
/* walk_while_waiting: stream 1 stays busy until the walker has walked the
 * pool WAIT_WALKS times while an allocation was asking for it */
#define WAIT_WALKS 3
static int hold_1, asked_1, walks_in_wait;
static bool stream_busy(wh_stream s, void *user) {
    (void)user;
    if ((uintptr_t)s == 1 && __atomic_load_n(&hold_1, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&asked_1, 1, __ATOMIC_RELEASE);
        if (__atomic_load_n(&walks_in_wait, __ATOMIC_ACQUIRE) < WAIT_WALKS) return true;
    }
    return busy[(uintptr_t)s % (NS + 1)];
}
#define S(k) ((wh_stream)(uintptr_t)(k))

static wh_pool *make(void) {
    return pool_make((wh_pool_config){.backend = WH_POOL_CPU, .max_streams = 4, .stream_busy = stream_busy});
}

/* A block freed on busy stream s: whether the next request of its size on
 * stream t gets it back. */
static bool reused_on(wh_pool *p, void *x, size_t n, wh_stream s, wh_stream t) {
    busy[(uintptr_t)s] = true;
    CHECK(wh_pool_free(p, x, s) == WH_OK);
    void *y = wh_pool_alloc(p, n, t);
    busy[(uintptr_t)s] = false;
    CHECK(y != NULL);
    CHECK(wh_pool_free(p, y, t) == WH_OK);
    return y == x;
}

/* 200 streams with a live block each, then stream order on each of them. */
static void two_hundred_streams(void) {
    wh_pool *p = make();
    void *x[NS + 1];
    for (int k = 1; k <= NS; ++k) {
        x[k] = wh_pool_alloc(p, 1000 + (size_t)k, S(k));
        CHECK(x[k] != NULL);
        memset(x[k], k, 1000);
    }
    check_ok(p);
    for (int k = 1; k <= NS; ++k) {
        unsigned char *c = x[k];
        CHECK(c[0] == (unsigned char)k && c[999] == (unsigned char)k);
    }
    /* stream 150 has no lane: its free waits for its own work, even for itself */
    CHECK(!reused_on(p, x[150], 1150, S(150), S(150)));
    CHECK(!reused_on(p, x[151], 1151, S(151), S(3)));
    /* stream 2 has a lane: reuse at once on it, after its work elsewhere */
    void *y = x[2];
    CHECK(reused_on(p, y, 1002, S(2), S(2)));
    CHECK(!reused_on(p, wh_pool_alloc(p, 1002, S(2)), 1002, S(2), S(4)));
    for (int k = 1; k <= NS; ++k)
        if (k != 2 && k != 150 && k != 151) CHECK(wh_pool_free(p, x[k], S(k)) == WH_OK);
    check_ok(p);
    CHECK(wh_pool_trim(p, SIZE_MAX) == WH_OK); /* the frees past the lanes wait on events: polled */
    wh_pool_stats st = pool_stats(p);
    CHECK_EQ_U64(st.in_use, 0);
    CHECK_EQ_U64(st.pending, 0);
    /* every block gone: a new stream gets a lane again (reuse at once) */
    CHECK(reused_on(p, wh_pool_alloc(p, 5000, S(199)), 5000, S(199), S(199)));
    check_ok(p);
    wh_pool_destroy(p);
}

/* One block used on all 200 streams: freed, it is anyone's only once every
 * one of them is idle, the streams past slot 64 too. */
static void uses_past_64(void) {
    wh_pool *p = make();
    void *x = wh_pool_alloc(p, 4096, S(1));
    CHECK(x != NULL);
    for (int k = 2; k <= NS; ++k) CHECK(wh_pool_record_stream(p, x, S(k)) == WH_OK);
    CHECK(wh_pool_record_stream(p, x, S(NS)) == WH_OK); /* twice: one mark */
    check_ok(p);
    busy[180] = true;
    CHECK(wh_pool_free(p, x, S(1)) == WH_OK);
    CHECK_EQ_U64(pool_stats(p).pending, 1);
    void *y = wh_pool_alloc(p, 4096, S(3));
    CHECK(y != NULL && y != x);
    CHECK(wh_pool_free(p, y, S(3)) == WH_OK);
    busy[180] = false;
    check_ok(p);
    void *z = wh_pool_alloc(p, 1u << 20, S(5)); /* the slow path polls the pending block */
    CHECK(z != NULL);
    CHECK_EQ_U64(pool_stats(p).pending, 0);
    CHECK(wh_pool_free(p, z, S(5)) == WH_OK);
    check_ok(p);
    wh_pool_destroy(p);
}

/* Forgotten streams: their slots come back, the lanes first; a stream used
 * again after it was forgotten is a new stream. */
static void forget_and_reuse(void) {
    wh_pool *p = make();
    for (int round = 0; round < 3; ++round) {
        void *x[NS + 1];
        for (int k = 1; k <= NS; ++k) CHECK((x[k] = wh_pool_alloc(p, 64, S(k))) != NULL);
        for (int k = 1; k <= NS; ++k) CHECK(wh_pool_free(p, x[k], S(k)) == WH_OK);
        for (int k = 1; k <= NS; ++k) CHECK(wh_pool_forget_stream(p, S(k)) == WH_OK);
        check_ok(p);
    }
    busy[7] = true;
    void *x = wh_pool_alloc(p, 64, S(7));
    CHECK(x != NULL && wh_pool_free(p, x, S(7)) == WH_OK);
    CHECK(wh_pool_forget_stream(p, S(7)) == WH_ERR_RETRY_LIMIT);
    busy[7] = false;
    CHECK(wh_pool_forget_stream(p, S(7)) == WH_OK);
    check_ok(p);
    wh_pool_destroy(p);
}

/* An allocation that finds the pool full waits for the streams with the
 * pool unlocked, its stream's slot pinned; another thread's walks meanwhile
 * still find every slot's refs accounted for.  Stream 1 stays busy until
 * WAIT_WALKS walks began after the allocation asked for it (bounded by
 * stream_wait_ms: past it the allocation fails), so walks happen during the
 * wait however the threads are scheduled. */
static wh_pool *walked;
static int walking, walks, walk_fails;
static void walker(unsigned t, void *arg) {
    (void)t, (void)arg;
    while (__atomic_load_n(&walking, __ATOMIC_ACQUIRE)) {
        bool in_wait = __atomic_load_n(&asked_1, __ATOMIC_ACQUIRE);
        if (wh_pool_check(walked) != WH_OK) {
            if (!walk_fails) fprintf(stderr, "walk during the wait: %s\n", wh_last_error());
            walk_fails++;
        }
        walks++;
        if (in_wait) __atomic_fetch_add(&walks_in_wait, 1, __ATOMIC_RELEASE);
    }
}
static void waiter(unsigned t, void *arg) {
    (void)t;
    void **y = arg;
    *y = wh_pool_alloc(walked, 1u << 20, S(2)); /* waits for stream 1, then takes its block */
    __atomic_store_n(&walking, 0, __ATOMIC_RELEASE);
}
static void one_of_two(unsigned t, void *arg) { (t ? waiter : walker)(t, arg); }

static void walk_while_waiting(void) {
    wh_pool *p = walked = pool_make((wh_pool_config){.backend = WH_POOL_CPU,
                                                     .max_streams = 4,
                                                     .max_bytes = 8u << 20,
                                                     .stream_busy = stream_busy,
                                                     .stream_wait_ms = 5000});
    void *x[64], *y = NULL;
    int n = 0;
    while (n < 64 && (x[n] = wh_pool_alloc(p, 1u << 20, S(1))) != NULL) n++;
    CHECK(n > 1 && n < 64);
    CHECK(wh_pool_free(p, x[--n], S(1)) == WH_OK);
    hold_1 = walking = 1;
    wh_run_threads(2, one_of_two, &y);
    hold_1 = 0;
    CHECK(y != NULL && y == x[n]);
    CHECK(walks > 0);
    CHECK_EQ_U64(walk_fails, 0);
    CHECK(wh_pool_free(p, y, S(2)) == WH_OK);
    while (n) CHECK(wh_pool_free(p, x[--n], S(1)) == WH_OK);
    check_ok(p);
    wh_pool_destroy(p);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Host pool with 200 streams on the CPU backend.");
    two_hundred_streams();
    uses_past_64();
    forget_and_reuse();
    walk_while_waiting();
    return wh_test_finish("test_pool_streams");
}
