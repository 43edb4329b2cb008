/* SPDX-License-Identifier: MIT */
/* Host pool on the CPU backend: the API's promises one by one -- alignment,
 * stats, bad input (each leaves the pool usable), exhaustion with numbers,
 * trim, Futhark's tag rule, and stream order checked through the CPU
 * backend's stream_busy hook: a block freed on a busy stream is reused on it
 * at once and by no other stream until it is idle. */
#include "warpheap/pool.h"
#include "wh_test.h"
#include "pool_check.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

static _Atomic bool busy[8]; /* set by the test, read by the pool on other threads */
static bool stream_busy(wh_stream s, void *user) {
    (void)user;
    return busy[(uintptr_t)s & 7u];
}
#define S(k) ((wh_stream)(uintptr_t)(k))

/* Arenas, named: these checks count arenas and their sizes (the default
 * range is tested in test_pool_vmm.c and test_pool_default.c). */
static wh_pool *make(size_t max_bytes, size_t arena, wh_blocks_kind kind) {
    wh_pool_config c = {.backend = WH_POOL_CPU,
                        .max_bytes = max_bytes,
                        .small_arena = arena,
                        .medium_arena = arena,
                        .index = kind,
                        .stream_busy = stream_busy,
                        .growth = WH_POOL_GROW_ARENAS};
    wh_pool *p = NULL;
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    return p;
}

static void basic(wh_blocks_kind kind) {
    wh_pool *p = make(0, 0, kind);
    void *ptr[64];
    uint64_t want = 0;
    for (int i = 0; i < 64; ++i) {
        size_t n = 1 + (size_t)i * 777;
        ptr[i] = wh_pool_alloc(p, n, S(0));
        CHECK(ptr[i] && ((uintptr_t)ptr[i] & 255u) == 0);
        memset(ptr[i], i, n);
        CHECK(wh_pool_usable_size(p, ptr[i]) >= n);
        want += wh_pool_usable_size(p, ptr[i]);
    }
    wh_pool_stats s;
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.in_use, want);
    CHECK_EQ_U64(s.allocs, 64);
    CHECK(s.reserved >= s.in_use && s.cached == s.reserved - s.in_use);
    check_ok(p);
    for (int i = 0; i < 64; ++i) {
        const unsigned char *b = ptr[i];
        CHECK(b[0] == (unsigned char)i && b[(size_t)i * 777] == (unsigned char)i);
        CHECK(wh_pool_free(p, ptr[i], S(0)) == WH_OK);
    }
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.in_use, 0);
    CHECK_EQ_U64(s.frees, 64);
    CHECK(s.in_use_peak == want && s.largest_free > 0);
    check_ok(p);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.reserved, 0);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

static void alignment_parameter(void) {
    wh_pool_config c = {.backend = WH_POOL_CPU, .alignment = 4096};
    wh_pool *p;
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    for (int i = 1; i < 20; ++i) {
        void *x = wh_pool_alloc(p, (size_t)i * 100, S(0));
        CHECK(x && ((uintptr_t)x & 4095u) == 0);
    }
    check_ok(p);
    wh_pool_destroy(p); /* with live blocks: returns everything */
    c.alignment = 3;
    CHECK(wh_pool_create(&p, &c) == WH_ERR_INVALID_ARGUMENT && p == NULL);
    c.alignment = 256;
    c.max_bytes = 100;
    CHECK(wh_pool_create(&p, &c) == WH_ERR_TOO_SMALL);
    c.max_bytes = 0;
    c.max_streams = 1000;
    CHECK(wh_pool_create(&p, &c) == WH_ERR_INVALID_ARGUMENT);
}

/* Alignment per allocation, above the pool's: every power of two up to 4 MiB,
 * in both ways of growing, with blocks of the pool's alignment in between. */
static void aligned_alloc_each(wh_pool_growth growth) {
    wh_pool_config c = {.backend = WH_POOL_CPU, .growth = growth};
    wh_pool *p;
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    void *x[46];
    for (int i = 0; i < 46; ++i) {
        size_t align = (size_t)1 << (i % 23), n = 1 + wh_hash64((uint64_t)i) % 100000;
        x[i] = i % 2 ? wh_pool_alloc_aligned(p, n, align, S(i % 3)) : wh_pool_alloc(p, n, S(i % 3));
        CHECK(x[i] && ((uintptr_t)x[i] & ((i % 2 ? align : 256) - 1)) == 0);
        CHECK(wh_pool_usable_size(p, x[i]) >= n);
        memset(x[i], i, n);
        check_ok(p);
    }
    CHECK(wh_pool_alloc_aligned(p, 100, 3000, S(0)) == NULL); /* not a power of two */
    CHECK(strstr(wh_last_error(), "power of two") != NULL);
    for (int i = 0; i < 46; ++i) {
        CHECK(((unsigned char *)x[i])[0] == (unsigned char)i);
        CHECK(wh_pool_free(p, x[i], S(i % 3)) == WH_OK);
    }
    check_ok(p);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    wh_pool_stats s;
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.reserved, 0);
    wh_pool_destroy(p);
}

static void bad_input(void) {
    wh_pool *p = make(0, 0, WH_BLOCKS_TLSF);
    void *out = (void *)1;
    CHECK(wh_pool_try_alloc(p, 0, NULL, S(0), &out) == WH_ERR_INVALID_ARGUMENT && out == NULL);
    CHECK(strstr(wh_last_error(), "size 0") != NULL);
    CHECK(wh_pool_alloc(p, SIZE_MAX, S(0)) == NULL);
    CHECK(wh_pool_try_alloc(p, SIZE_MAX - 10, NULL, S(0), &out) == WH_ERR_TOO_LARGE);
    void *a = wh_pool_alloc(p, 1000, S(0));
    CHECK(a != NULL);
    int local;
    CHECK(wh_pool_free(p, &local, S(0)) == WH_ERR_FOREIGN_POINTER);
    CHECK(wh_pool_free(p, (char *)a + 256, S(0)) == WH_ERR_FOREIGN_POINTER); /* interior */
    CHECK(wh_pool_free(p, NULL, S(0)) == WH_OK);
    CHECK(wh_pool_free(p, a, S(0)) == WH_OK);
    CHECK(wh_pool_free(p, a, S(0)) == WH_ERR_DOUBLE_FREE);
    CHECK(strstr(wh_last_error(), "already freed") != NULL);
    CHECK(wh_pool_record_stream(p, a, S(1)) == WH_ERR_DOUBLE_FREE);
    /* never handed out, in an arena's free space: foreign, not a double free */
    CHECK(wh_pool_free(p, (char *)a + (64u << 10), S(0)) == WH_ERR_FOREIGN_POINTER);
    CHECK(strstr(wh_last_error(), "not an allocation") != NULL);
    void *t = wh_pool_alloc_tagged(p, 500, "site", S(0));
    CHECK(wh_pool_free(p, t, S(0)) == WH_OK);
    CHECK(wh_pool_free(p, t, S(0)) == WH_ERR_DOUBLE_FREE); /* kept for its tag */
    wh_pool_stats s;
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.failures, 3);
    CHECK_EQ_U64(s.tag_cached, 2); /* "site" and a's size class */
    check_ok(p);
    void *b = wh_pool_alloc(p, 1000, S(0)); /* still usable */
    CHECK(b != NULL && wh_pool_free(p, b, S(0)) == WH_OK);
    CHECK(wh_pool_destroy(NULL) == WH_ERR_INVALID_ARGUMENT);
    wh_pool_destroy(p);
}

/* Two lanes, a third stream served all the same; forget waits for a stream's work. */
static void streams_past_lanes(void) {
    wh_pool_config c = {.backend = WH_POOL_CPU, .max_streams = 2, .stream_busy = stream_busy};
    wh_pool *p;
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    void *a = wh_pool_alloc(p, 10, S(1)), *b = wh_pool_alloc(p, 10, S(2)), *x = wh_pool_alloc(p, 10, S(3));
    CHECK(a && b && x);
    busy[3] = true; /* no lane: a free waits for the stream's own work */
    CHECK(wh_pool_free(p, x, S(3)) == WH_OK);
    void *y = wh_pool_alloc(p, 10, S(3));
    CHECK(y && y != x);
    busy[3] = false;
    CHECK(wh_pool_free(p, y, S(3)) == WH_OK);
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK && wh_pool_free(p, b, S(2)) == WH_OK);
    check_ok(p);
    busy[1] = true; /* forget waits for the stream's work */
    CHECK(wh_pool_forget_stream(p, S(1)) == WH_ERR_RETRY_LIMIT);
    busy[1] = false;
    CHECK(wh_pool_forget_stream(p, S(1)) == WH_OK);
    CHECK(wh_pool_forget_stream(p, S(7)) == WH_OK); /* never seen: nothing to do */
    void *d = wh_pool_alloc(p, 10, S(1));           /* stream 1 again: a new stream */
    CHECK(d != NULL);
    CHECK(wh_pool_free(p, d, S(1)) == WH_OK);
    check_ok(p);
    wh_pool_destroy(p);
}

static void exhaustion(void) {
    const size_t cap = 4u << 20, arena = 1u << 20;
    wh_pool *p = make(cap, arena, WH_BLOCKS_TLSF);
    void *live[64];
    int n = 0;
    while (n < 64 && (live[n] = wh_pool_alloc(p, 300000, S(0))) != NULL) ++n;
    CHECK(n == 12); /* 3 per 1 MiB arena, 4 arenas */
    CHECK(strstr(wh_last_error(), "pool exhausted") && strstr(wh_last_error(), "reserved 4194304 B"));
    wh_pool_stats s;
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.reserved, cap);
    CHECK_EQ_U64(s.failures, 1);
    CHECK(s.retries >= 1);                          /* the caches were flushed before it failed */
    CHECK(wh_pool_alloc(p, cap + 1, S(0)) == NULL); /* beyond the cap at all */
    CHECK(wh_pool_free(p, live[5], S(0)) == WH_OK);
    live[5] = wh_pool_alloc(p, 300000, S(0));
    CHECK(live[5] != NULL); /* usable again */
    /* fragmented: free 2 of 3 in every arena -- still no whole arena for 1 MiB */
    for (int i = 0; i < n; ++i)
        if (i % 3) {
            CHECK(wh_pool_free(p, live[i], S(0)) == WH_OK);
            live[i] = NULL;
        }
    CHECK(wh_pool_alloc(p, arena, S(0)) == NULL);
    CHECK(wh_pool_free(p, live[0], S(0)) == WH_OK); /* arena 0 whole again ... */
    live[0] = NULL;
    void *big = wh_pool_alloc(p, arena, S(0)); /* ... and found */
    CHECK(big != NULL);
    check_ok(p);
    wh_pool_destroy(p);
}

static void trim(void) {
    wh_pool *p = make(0, 1u << 20, WH_BLOCKS_TLSF);
    void *keep = wh_pool_alloc(p, 1000, S(0));
    void *x[8];
    for (int i = 0; i < 8; ++i) x[i] = wh_pool_alloc(p, 900000, S(0));
    for (int i = 0; i < 8; ++i) wh_pool_free(p, x[i], S(0));
    wh_pool_stats s;
    wh_pool_get_stats(p, &s);
    CHECK(s.arenas >= 8 && s.cached >= 8u * 900000u);
    CHECK(wh_pool_trim(p, 2u << 20) == WH_OK);
    wh_pool_get_stats(p, &s);
    CHECK(s.cached <= (2u << 20) && s.arenas >= 2);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.arenas, 1); /* the one holding `keep` */
    CHECK_EQ_U64(s.reserved, 1u << 20);
    check_ok(p);
    wh_pool_free(p, keep, S(0));
    wh_pool_destroy(p);
}

static void tags(void) {
    static const char site_a[] = "a", site_b[] = "b";
    wh_pool *p = make(0, 0, WH_BLOCKS_TLSF);
    void *a = wh_pool_alloc_tagged(p, 1000, site_a, S(0));
    CHECK(wh_pool_free(p, a, S(0)) == WH_OK);
    CHECK(wh_pool_alloc_tagged(p, 1000, site_a, S(0)) == a); /* same site: same block */
    wh_pool_stats s;
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.tag_hits, 1);
    wh_pool_free(p, a, S(0));                             /* kept: 1024 B */
    void *b = wh_pool_alloc_tagged(p, 500, site_a, S(0)); /* 512: 1024 is 2x, refused */
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.tag_hits, 1);
    CHECK_EQ_U64(s.tag_cached, 0);                        /* and given back */
    wh_pool_free(p, b, S(0));                             /* kept: 512 B */
    void *c = wh_pool_alloc_tagged(p, 600, site_a, S(0)); /* 768 > 512: too small */
    wh_pool_get_stats(p, &s);
    CHECK(c != NULL && s.tag_hits == 1 && s.tag_cached == 0); /* b went back to the core */
    wh_pool_free(p, c, S(0));                                 /* kept: 768 B, b gone back */
    CHECK(wh_pool_alloc_tagged(p, 600, site_b, S(0)) != c);   /* another site */
    CHECK(wh_pool_alloc_tagged(p, 700, site_a, S(1)) != c);   /* another stream */
    CHECK(wh_pool_alloc_tagged(p, 700, site_a, S(0)) == c);   /* 768 < 1400 */
    check_ok(p);
    wh_pool_destroy(p);
}

/* Untagged blocks up to 64 KiB are kept by size class; of larger ones only
 * the last one freed (the hot block), until the next allocation, which
 * takes it at its exact size on its stream and otherwise gives it back. */
static void size_classes(void) {
    wh_pool *p = make(0, 0, WH_BLOCKS_TLSF);
    wh_pool_stats s;
    void *a = wh_pool_alloc(p, 1000, S(0));
    wh_pool_free(p, a, S(0));
    CHECK(wh_pool_alloc(p, 800, S(0)) == a); /* 1024 B class: kept block */
    wh_pool_get_stats(p, &s);
    CHECK(s.tag_hits == 1 && s.tag_cached == 0);
    wh_pool_free(p, a, S(0));
    void *b = wh_pool_alloc(p, 800, S(1));
    CHECK(b != a); /* not for another stream */
    const size_t mb2 = 2u << 20, other_n = mb2 - 4096;
    void *big = wh_pool_alloc(p, mb2, S(0));
    wh_pool_free(p, big, S(0));
    wh_pool_get_stats(p, &s);
    uint64_t hits = s.tag_hits;
    CHECK_EQ_U64(s.tag_cached, 2); /* a and the hot block */
    check_ok(p);
    CHECK(wh_pool_alloc(p, mb2, S(0)) == big); /* exact size, same stream */
    wh_pool_get_stats(p, &s);
    CHECK(s.tag_hits == hits + 1 && s.tag_cached == 1);
    wh_pool_free(p, big, S(0));
    char *other = wh_pool_alloc(p, other_n, S(0)); /* another size: big goes back first */
    wh_pool_get_stats(p, &s);
    CHECK(other != NULL && s.tag_hits == hits + 1 && s.tag_cached == 1); /* only a */
    check_ok(p);
    wh_pool_free(p, other, S(0));
    busy[0] = true;                            /* other's stream still has work */
    char *x = wh_pool_alloc(p, other_n, S(1)); /* same size, another stream */
    CHECK(x != NULL && (x + other_n <= other || x >= other + other_n));
    busy[0] = false;
    wh_pool_get_stats(p, &s);
    CHECK(s.tag_hits == hits + 1 && s.tag_cached == 1); /* other went back to S(0)'s blocks */
    wh_pool_free(p, x, S(1));
    wh_pool_free(p, b, S(1));
    CHECK(wh_pool_trim(p, 0) == WH_OK); /* trim gives kept blocks back too */
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.tag_cached, 0);
    CHECK_EQ_U64(s.reserved, 0);
    check_ok(p);
    wh_pool_destroy(p);
}

/* Few descriptors: blocks stop splitting, then no arena can be added; the
 * failure names the descriptors and the pool recovers when blocks are freed. */
static void few_descriptors(void) {
    wh_pool_config c = {.backend = WH_POOL_CPU, .max_blocks = 4, .small_arena = 4096, .growth = WH_POOL_GROW_ARENAS};
    wh_pool *p;
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    void *x[8];
    int n = 0;
    while (n < 8 && (x[n] = wh_pool_alloc(p, 100000, S(0))) != NULL) ++n; /* > 64 KiB: no size class */
    CHECK(n == 4);                                                        /* one arena each, then no descriptor left */
    CHECK(strstr(wh_last_error(), "blocks 4/4") != NULL);
    check_ok(p);
    CHECK(wh_pool_free(p, x[0], S(0)) == WH_OK);
    void *y = wh_pool_alloc(p, 100000, S(0));
    CHECK(y == x[0]);
    for (int i = 1; i < n; ++i) CHECK(wh_pool_free(p, x[i], S(0)) == WH_OK);
    CHECK(wh_pool_free(p, y, S(0)) == WH_OK);
    check_ok(p);
    wh_pool_destroy(p);
    c.max_blocks = 1;
    CHECK(wh_pool_create(&p, &c) == WH_ERR_INVALID_ARGUMENT && p == NULL);
}

/* One 1 MiB arena, cap 1 MiB: whoever holds the freed block is visible. */
static void stream_order(void) {
    const size_t m = 1u << 20;
    wh_pool *p = make(m, m, WH_BLOCKS_TLSF);
    busy[1] = true;
    void *a = wh_pool_alloc(p, m, S(1));
    CHECK(a != NULL);
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    CHECK(wh_pool_alloc(p, m, S(1)) == a); /* same stream: at once */
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    CHECK(wh_pool_alloc(p, m, S(2)) == NULL); /* stream 1 still busy */
    CHECK(strstr(wh_last_error(), "pool exhausted") != NULL);
    busy[1] = false;
    void *b = wh_pool_alloc(p, m, S(2)); /* its work is done */
    CHECK(b == a);
    check_ok(p);
    /* record_stream: used on 3 (busy) as well: not even stream 2 may reuse it */
    busy[3] = true;
    CHECK(wh_pool_record_stream(p, b, S(3)) == WH_OK);
    CHECK(wh_pool_free(p, b, S(2)) == WH_OK);
    wh_pool_stats s;
    wh_pool_get_stats(p, &s);
    CHECK_EQ_U64(s.pending, 1);
    CHECK(wh_pool_alloc(p, 4096, S(2)) == NULL);
    check_ok(p);
    busy[3] = false;
    CHECK(wh_pool_alloc(p, m, S(2)) == a);
    /* freed on another stream than allocated: both must be done */
    CHECK(wh_pool_free(p, a, S(2)) == WH_OK);
    void *c = wh_pool_alloc(p, m, S(4)); /* all idle: moves over */
    CHECK(c == a);
    busy[4] = true;
    CHECK(wh_pool_free(p, c, S(5)) == WH_OK); /* allocated on 4 (busy) */
    CHECK(wh_pool_alloc(p, m, S(5)) == NULL); /* waits for 4 too */
    busy[4] = false;
    CHECK(wh_pool_alloc(p, m, S(5)) == a);
    check_ok(p);
    wh_pool_destroy(p);
}

/* The address map grows from 1024 entries while blocks are live: every
 * pointer is still found after each doubling (a free of each, in an order
 * unlike the allocations'), the walk counts its keys, and a foreign pointer
 * is still refused. */
static void address_map_grows(void) {
    wh_pool *p = pool_make((wh_pool_config){.backend = WH_POOL_CPU});
    enum { N = 5000 };
    static void *x[N];
    for (int i = 0; i < N; ++i) {
        x[i] = wh_pool_alloc(p, 200000 + (size_t)(i % 7) * 4096, S(i % 3)); /* > 64 KiB: no size class */
        CHECK(x[i] != NULL);
        if (i == 511 || i == 512 || i == 2047 || i == 4095) check_ok(p);
    }
    check_ok(p);
    int x0 = 0;
    CHECK(wh_pool_free(p, &x0, S(0)) == WH_ERR_FOREIGN_POINTER);
    for (int i = 0; i < N; ++i) {
        int k = (int)((uint64_t)i * 2654435761u % N); /* a permutation: the multiplier is prime to N */
        CHECK(wh_pool_free(p, x[k], S(k % 3)) == WH_OK);
        CHECK(wh_pool_free(p, x[k], S(k % 3)) == WH_ERR_DOUBLE_FREE);
    }
    check_ok(p);
    CHECK_EQ_U64(pool_stats(p).in_use, 0);
    wh_pool_destroy(p);
}

/* A call that must wait for a busy stream waits with the pool's lock
 * released: while the waiter is blocked, another thread takes the pool's
 * statistics (the lock) and then finishes the stream's work; the waiter
 * then gets the memory the stream freed.  With the lock held across the
 * wait, the other thread could not finish the work before the waiter gave
 * up, and the allocation would fail for a reason no user could see. */
typedef struct waiter {
    wh_pool *p;
    void *got;
    double t_done;
} waiter;
static void *wait_for_memory(void *arg) {
    waiter *w = (waiter *)arg;
    w->got = wh_pool_alloc(w->p, 3u << 20, S(2)); /* needs what stream 1 freed */
    w->t_done = wh_now_seconds();
    return NULL;
}
static wh_pool *one_arena(uint32_t wait_ms) {
    wh_pool_config c = {.backend = WH_POOL_CPU,
                        .max_bytes = 4u << 20,
                        .small_arena = 4u << 20,
                        .medium_arena = 4u << 20,
                        .stream_busy = stream_busy,
                        .stream_wait_ms = wait_ms,
                        .growth = WH_POOL_GROW_ARENAS};
    wh_pool *p = NULL;
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    return p;
}
static void waits_without_lock(void) {
    wh_pool *p = one_arena(5000);
    void *a = wh_pool_alloc(p, 3u << 20, S(1));
    CHECK(a != NULL);
    busy[1] = true; /* work queued on stream 1 uses a */
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    waiter w = {p, NULL, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, wait_for_memory, &w) == 0);
    struct timespec nap = {0, 100000000}; /* the waiter is waiting by now */
    nanosleep(&nap, NULL);
    wh_pool_stats st;
    CHECK(wh_pool_get_stats(p, &st) == WH_OK); /* the lock is free meanwhile */
    double t_stats = wh_now_seconds();
    busy[1] = false; /* the stream's work finishes */
    pthread_join(t, NULL);
    CHECK(w.got == a);         /* the block stream 1 freed */
    CHECK(t_stats < w.t_done); /* the stats did not wait for the waiter */
    CHECK(wh_pool_free(p, w.got, S(2)) == WH_OK);
    check_ok(p);
    wh_pool_destroy(p);
    /* a stream that stays busy: the wait ends after stream_wait_ms with the cause named */
    p = one_arena(200);
    void *b = wh_pool_alloc(p, 3u << 20, S(1));
    CHECK(b != NULL);
    busy[1] = true;
    CHECK(wh_pool_free(p, b, S(1)) == WH_OK);
    double t0 = wh_now_seconds();
    CHECK(wh_pool_alloc(p, 3u << 20, S(2)) == NULL);
    double waited = wh_now_seconds() - t0;
    CHECK(waited >= 0.2 && waited < 3.0);
    CHECK(strstr(wh_last_error(), "streams still busy 1") != NULL);
    printf("  busy stream: %s (after %.2f s)\n", wh_last_error(), waited);
    busy[1] = false;
    check_ok(p);
    wh_pool_destroy(p);
}

/* wh_pool_live_blocks lists each live allocation with its size, stream and
 * tag (NULL for an untagged one); wh_pool_reset_peak starts the peaks again. */
static void live_blocks_and_peaks(void) {
    static const char site;
    wh_pool *p = make(0, 0, WH_BLOCKS_TLSF);
    void *a = wh_pool_alloc(p, 1000, S(1)), *b = wh_pool_alloc_tagged(p, 5000, &site, S(2));
    void *c = wh_pool_alloc(p, 3u << 20, S(1));
    CHECK(a && b && c && wh_pool_free(p, c, S(1)) == WH_OK);
    size_t n = 99;
    CHECK(wh_pool_live_blocks(p, NULL, 0, &n) == WH_OK && n == 2);
    wh_pool_block l[3];
    CHECK(wh_pool_live_blocks(p, l, 1, &n) == WH_OK && n == 2); /* cap 1: one listed, two counted */
    CHECK(wh_pool_live_blocks(p, l, 3, &n) == WH_OK && n == 2);
    if (l[0].ptr != a) l[2] = l[0], l[0] = l[1], l[1] = l[2];
    CHECK(l[0].ptr == a && l[0].requested == 1000 && l[0].size == 1024 && l[0].stream == S(1) && !l[0].tag);
    CHECK(l[1].ptr == b && l[1].requested == 5000 && l[1].size == 5120 && l[1].stream == S(2) && l[1].tag == &site);
    CHECK(wh_pool_live_blocks(p, NULL, 1, &n) == WH_ERR_INVALID_ARGUMENT);
    wh_pool_stats s = pool_stats(p);
    CHECK(s.in_use_peak > s.in_use);
    CHECK(wh_pool_trim(p, 0) == WH_OK && wh_pool_reset_peak(p) == WH_OK);
    s = pool_stats(p);
    CHECK_EQ_U64(s.in_use_peak, s.in_use);
    CHECK_EQ_U64(s.reserved_peak, s.reserved);
    CHECK(wh_pool_reset_peak(NULL) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK && wh_pool_free(p, b, S(2)) == WH_OK);
    CHECK(wh_pool_live_blocks(p, l, 3, &n) == WH_OK && n == 0);
    check_ok(p);
    wh_pool_destroy(p);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Host pool on the CPU backend.");
    basic(WH_BLOCKS_TLSF);
    basic(WH_BLOCKS_MAXHEAP);
    alignment_parameter();
    aligned_alloc_each(WH_POOL_GROW_ARENAS);
    aligned_alloc_each(WH_POOL_GROW_VMM);
    bad_input();
    streams_past_lanes();
    exhaustion();
    trim();
    tags();
    size_classes();
    few_descriptors();
    stream_order();
    address_map_grows();
    waits_without_lock();
    live_blocks_and_peaks();
    return wh_test_finish("test_pool");
}
