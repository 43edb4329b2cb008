/* SPDX-License-Identifier: MIT */
/* libFuzzer target: random operation sequences on a small CPU-backend pool,
 * against an oracle that knows what every live allocation holds.
 *
 * Input bytes drive: alloc / alloc_tagged / alloc_aligned on one of 4 streams, free (on any
 * stream), record_stream, double free, foreign free, trim, and flipping a
 * stream between busy and idle (the CPU backend's stream_busy hook).  After
 * every operation: the new block overlaps no live one and no block that
 * stream order still forbids (freed on a busy stream and asked for on another,
 * or recorded on a busy stream); every live block still holds its pattern;
 * the stats equal the oracle's sums; the pool's heap walk passes.  Both ways
 * of growing: arenas, and the one range with holes (config.growth VMM, which
 * the CPU backend does with mmap, so a block in an unmapped hole faults),
 * with and without the hardened mode (config.secure: its guards and patterns
 * must never report a corruption here, where nothing writes out of bounds).
 *
 * Built two ways: with clang -fsanitize=fuzzer (scripts/fuzz.sh pool), and
 * as a ctest of fixed random inputs (tests/support/fuzz_main.c).
 */
#include "warpheap/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSTREAMS 4u
#define MAXLIVE  128u
#define MAXQ     256u

typedef struct {
    unsigned char *p;
    size_t n, usable;
    uint8_t fillc;
} live_t;
typedef struct {
    uintptr_t lo, hi;
    uint8_t free_stream, wait_all, wait_others;
} quarantine_t;

static bool busy[NSTREAMS];
static bool stream_busy(wh_stream s, void *u) {
    (void)u;
    return busy[(uintptr_t)s % NSTREAMS];
}

typedef struct {
    wh_pool *pool;
    live_t live[MAXLIVE];
    uint32_t nlive;
    quarantine_t q[MAXQ];
    uint32_t nq;
    uint64_t in_use, requested;
    uint8_t uses[MAXLIVE]; /* busy-at-record streams per live slot (mask) */
    uint8_t alloc_stream[MAXLIVE];
    bool secure; /* config.secure: usable bytes are the request, blocks larger */
} world;

static void die(const char *what) {
    fprintf(stderr, "fuzz_pool oracle: %s (%s)\n", what, wh_last_error());
    abort();
}

static bool overlaps(uintptr_t a, uintptr_t an, uintptr_t b, uintptr_t bn) { return a < b + bn && b < a + an; }

static void on_alloc(world *w, void *p, size_t n, uint8_t s, size_t align) {
    uintptr_t a = (uintptr_t)p;
    size_t usable = wh_pool_usable_size(w->pool, p);
    if (usable < n || (a & 63u) || (a & (align - 1u))) die("short or misaligned block");
    for (uint32_t i = 0; i < w->nlive; ++i)
        if (overlaps(a, usable, (uintptr_t)w->live[i].p, w->live[i].usable)) die("overlap with a live block");
    for (uint32_t i = 0; i < w->nq; ++i) {
        const quarantine_t *q = &w->q[i];
        if (!overlaps(a, usable, q->lo, q->hi - q->lo)) continue;
        if (q->wait_all || (s != q->free_stream && q->wait_others)) {
#ifdef WH_FUZZ_TRACE
            fprintf(stderr, "alloc on %u of [%lx,+%zu) hits q [%lx,%lx) freed on %u wait_all %x wait_others %x\n", s,
                    (unsigned long)a, usable, (unsigned long)q->lo, (unsigned long)q->hi, q->free_stream, q->wait_all,
                    q->wait_others);
#endif
            die("block reused before its streams finished");
        }
    }
    live_t *l = &w->live[w->nlive];
    *l = (live_t){p, n, usable, (uint8_t)(0x11 + 7 * w->nlive + n)};
    memset(p, l->fillc, n);
    w->uses[w->nlive] = 0;
    w->alloc_stream[w->nlive] = s;
    w->nlive++;
    w->in_use += usable;
    w->requested += n;
}

static uint8_t busy_mask(uint8_t m) {
    uint8_t r = 0;
    for (unsigned k = 0; k < NSTREAMS; ++k) r |= (uint8_t)((busy[k] && (m >> k & 1u)) << k);
    return r;
}

static void on_free(world *w, uint32_t k, uint8_t s) {
    live_t *l = &w->live[k];
    for (size_t i = 0; i < l->n; ++i)
        if (l->p[i] != l->fillc) die("live block overwritten");
#ifdef WH_FUZZ_TRACE
    fprintf(stderr, "  free [%lx,+%zu) on %u alloc on %u uses %x\n", (unsigned long)(uintptr_t)l->p, l->usable, s,
            w->alloc_stream[k], w->uses[k]);
#endif
    if (w->nq < MAXQ) { /* the oracle forgets the oldest rules only when full */
        uint8_t others = (uint8_t)((w->uses[k] | 1u << w->alloc_stream[k]) & ~(1u << s));
        w->q[w->nq++] = (quarantine_t){(uintptr_t)l->p, (uintptr_t)l->p + l->usable, s, busy_mask(others),
                                       busy_mask((uint8_t)(1u << s))};
    }
    w->in_use -= l->usable;
    w->requested -= l->n;
    w->live[k] = w->live[w->nlive - 1];
    w->uses[k] = w->uses[w->nlive - 1];
    w->alloc_stream[k] = w->alloc_stream[w->nlive - 1];
    w->nlive--;
}

static void set_idle(world *w, uint8_t s) {
    busy[s] = false;
    for (uint32_t i = 0; i < w->nq;) {
        w->q[i].wait_all &= (uint8_t) ~(1u << s);
        w->q[i].wait_others &= (uint8_t) ~(1u << s);
        if (!w->q[i].wait_all && !w->q[i].wait_others)
            w->q[i] = w->q[--w->nq];
        else
            ++i;
    }
}

static void check_world(world *w) {
    wh_pool_stats st;
    if (wh_pool_get_stats(w->pool, &st) != WH_OK) die("stats");
    if ((w->secure ? st.in_use < w->in_use : st.in_use != w->in_use) || st.requested != w->requested ||
        st.allocs - st.frees != w->nlive)
        die("stats disagree with the oracle");
    if (st.reserved != st.in_use + st.cached || st.reserved > (1u << 20)) die("reserved");
    if (wh_pool_check(w->pool) != WH_OK) die("heap walk");
}

static const char *const tags[3] = {"t0", "t1", "t2"};

static void step(world *w, const uint8_t *d) {
    uint8_t op = d[0] % 16, s = d[1] % NSTREAMS;
    wh_stream st = (wh_stream)(uintptr_t)(s + NSTREAMS); /* never NULL-ish; maps back by % */
    size_t n = (size_t)d[2] | (size_t)d[3] << 8;
#ifdef WH_FUZZ_TRACE
    fprintf(stderr, "op %u stream %u n %zu nlive %u busy %d%d%d%d\n", op, s, n, w->nlive, busy[0], busy[1], busy[2],
            busy[3]);
#endif
    n = (d[1] & 0x80) ? n * 16 : n; /* up to 1 MiB */
    if (op < 6) {                   /* alloc */
        if (w->nlive == MAXLIVE) return;
        const void *tag = op >= 4 ? tags[d[1] >> 4 & 1 ? 0 : (d[3] % 3)] : NULL;
        size_t align = op == 3 ? (size_t)64 << (d[3] % 12) : 1; /* 64 B .. 128 KiB */
        void *p = NULL;
        wh_status r = op == 3 ? ((p = wh_pool_alloc_aligned(w->pool, n, align, st)) ? WH_OK
                                 : n == 0                                           ? WH_ERR_INVALID_ARGUMENT
                                                                                    : WH_ERR_OUT_OF_MEMORY)
                              : wh_pool_try_alloc(w->pool, n, tag, st, &p);
        if (n == 0 && r != WH_ERR_INVALID_ARGUMENT) die("size 0 accepted");
        if (r == WH_OK)
            on_alloc(w, p, n, s, align);
        else if (p || (n && r != WH_ERR_OUT_OF_MEMORY && r != WH_ERR_TOO_LARGE))
            die("unexpected status");
    } else if (op < 10 && w->nlive) { /* free */
        uint32_t k = d[2] % w->nlive;
        void *p = w->live[k].p;
        on_free(w, k, s);
        if (wh_pool_free(w->pool, p, st) != WH_OK) die("free failed");
        if (op == 9 && wh_pool_free(w->pool, p, st) != WH_ERR_DOUBLE_FREE) die("double free not caught");
    } else if (op == 10 && w->nlive) { /* record_stream */
        uint32_t k = d[2] % w->nlive;
        if (wh_pool_record_stream(w->pool, w->live[k].p, st) != WH_OK) die("record_stream");
        w->uses[k] |= (uint8_t)(1u << s);
    } else if (op == 11) { /* foreign pointers */
        int local;
        if (wh_pool_free(w->pool, &local, st) != WH_ERR_FOREIGN_POINTER) die("foreign pointer not caught");
        if (w->nlive && w->live[0].usable > 64 &&
            wh_pool_free(w->pool, w->live[0].p + 64, st) != WH_ERR_FOREIGN_POINTER)
            die("interior pointer not caught");
    } else if (op == 12) {
        wh_pool_trim(w->pool, (size_t)d[2] << 12);
    } else if (op == 13) {
        busy[s] = true;
    } else if (op == 14) {
        set_idle(w, s);
    } else if (op == 15) { /* forget (destroy) a stream */
        wh_status r = wh_pool_forget_stream(w->pool, st);
        /* a busy stream cannot be forgotten -- unless the pool never saw it */
        if (r != WH_OK && !(busy[s] && r == WH_ERR_RETRY_LIMIT)) die("forget_stream");
        if (r == WH_OK) { /* the stream is gone: its live blocks belong to none */
            for (uint32_t k = 0; k < w->nlive; ++k) {
                if (w->alloc_stream[k] == s) w->alloc_stream[k] = NSTREAMS;
                w->uses[k] &= (uint8_t) ~(1u << s);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    static world w;
    memset(&w, 0, sizeof w);
    memset(busy, 0, sizeof busy);
    wh_pool_config c = {.backend = WH_POOL_CPU,
                        .alignment = (size_t)64 << (data[0] & 3),
                        .max_bytes = 1u << 20,
                        .small_arena = (size_t)64 << 10 << (data[0] >> 2 & 3),
                        .medium_arena = 256u << 10,
                        .max_blocks = 64u << (data[1] & 3),
                        .max_streams = (data[1] >> 4) & 1 ? 1 : NSTREAMS, /* 1: the other streams have no lane */
                        .index = (data[1] >> 2) & 1 ? WH_BLOCKS_MAXHEAP : WH_BLOCKS_TLSF,
                        .stream_busy = stream_busy,
                        .growth = (data[1] >> 3) & 1 ? WH_POOL_GROW_VMM : WH_POOL_GROW_ARENAS,
                        .secure = (data[1] >> 5) & 1};
    if (wh_pool_create(&w.pool, &c) != WH_OK) die("create");
    w.secure = c.secure;
    for (size_t i = 2; i + 4 <= size; i += 4) {
        step(&w, data + i);
        check_world(&w);
    }
    while (w.nlive) {
        void *p = w.live[0].p;
        on_free(&w, 0, 0);
        if (wh_pool_free(w.pool, p, (wh_stream)(uintptr_t)NSTREAMS) != WH_OK) die("final free");
    }
    for (uint8_t s = 0; s < NSTREAMS; ++s) set_idle(&w, s);
    wh_pool_trim(w.pool, 0);
    check_world(&w);
    wh_pool_stats st;
    wh_pool_get_stats(w.pool, &st);
    if (st.reserved != 0 || st.pending != 0) die("memory left after free all + trim");
    wh_pool_destroy(w.pool);
    return 0;
}
