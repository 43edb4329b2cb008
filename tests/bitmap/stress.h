/* SPDX-License-Identifier: MIT */
/* Bitmap stress: many threads run a mix of legal operations on one bitmap,
 * then the whole structure is checked.
 *
 * Legality (paper, Def. A.3) comes from ownership: the bitmap starts full; a
 * zero bit always belongs to exactly one thread -- the one that cleared it by
 * find_and_clear (allocate) or try_clear (steal a random bit) -- and only that
 * thread sets it again (release).  So at the end: set bits == nbits - owned,
 * every owned bit reads 0, no bit is owned twice, and every summary bit agrees
 * with its container.  A release whose try_set fails means someone else set an
 * owned bit: one slot handed to two threads.
 *
 * The per-thread loop is WH_HOST_DEVICE: the same code is a pthread on the CPU
 * backend and a GPU thread in stress_gpu.cu. */
#ifndef WH_BITMAP_STRESS_H
#define WH_BITMAP_STRESS_H

#include "warpheap/bitmap.h"

typedef struct wh_stress_counts {
    unsigned long long claims, releases, steals, finds, empty, violations, spans;
} wh_stress_counts;

/* Spans (wh__bitmap_propagate_span, as wh__seg_claim_run uses it): take
 * every set bit of an aligned run of up to 16 level-0 words with one and-not
 * each, or give back all held bits of such a run with one or each, and
 * re-derive the run's summary bits together. */
WH_INLINE WH_HOST_DEVICE void wh_stress_span(const wh_bitmap *bm, uint64_t r, uint32_t *owned, uint32_t cap,
                                             uint32_t *n, wh_stress_counts *c) {
    uint32_t words = wh_bitmap_level_words(bm, 0), held = *n;
    uint32_t k = 1u << (uint32_t)((r >> 8) % 5u); /* 1 .. 16 words */
    if (k > words) k = 1;
    if (r & 1u) { /* take */
        if (cap - held < 64u * k) return;
        uint32_t w0 = (uint32_t)((r >> 16) % words) & ~(k - 1u);
        if (w0 + k > words) return;
        for (uint32_t j = 0; j < k; ++j) {
            uint64_t got = wh_atomic_fetch_and(wh_bitmap_word(bm, 0, w0 + j), 0ull, WH_ACQ_REL);
            for (; got; got &= got - 1u) owned[held++] = (w0 + j) * 64u + (uint32_t)(wh_ffs64(got) - 1);
        }
        (void)wh__bitmap_propagate_span(bm, 0, w0, k);
    } else { /* give back */
        if (!held) return;
        uint32_t w0 = (owned[(uint32_t)(r >> 16) % held] >> 6) & ~(k - 1u);
        if (w0 + k > words) k = 1;
        uint64_t back[16] = {0};
        for (uint32_t i = 0; i < held;) {
            uint32_t w = owned[i] >> 6;
            if (w >= w0 && w < w0 + k) {
                back[w - w0] |= 1ull << (owned[i] & 63u);
                owned[i] = owned[--held];
            } else {
                ++i;
            }
        }
        for (uint32_t j = 0; j < k; ++j)
            if (back[j] && (wh_atomic_fetch_or(wh_bitmap_word(bm, 0, w0 + j), back[j], WH_ACQ_REL) & back[j]))
                c->violations++; /* someone set a bit we held */
        (void)wh__bitmap_propagate_span(bm, 0, w0, k);
    }
    *n = held;
    c->spans++;
}

/* One thread's work: ops operations; owned[0..*n) are the bits it holds
 * (capacity cap).  Counts are added to *c. */
WH_INLINE WH_HOST_DEVICE void wh_stress_thread(const wh_bitmap *bm, uint64_t tid, uint32_t ops, uint32_t *owned,
                                               uint32_t cap, uint32_t *n, wh_stress_counts *c) {
    uint32_t held = *n;
    for (uint32_t i = 0; i < ops; ++i) {
        uint64_t r = wh_hash64(tid * 0x100000001ull + i);
        uint32_t choice = (uint32_t)(r % 100u);
        if (choice < 45u && held < cap) { /* allocate a bit */
            uint32_t b = wh_bitmap_find_and_clear(bm, wh_hash64(r));
            if (b == WH_BITMAP_NONE) {
                c->empty++;
                continue;
            }
            if (b >= bm->nbits) {
                c->violations++;
                continue;
            }
            owned[held++] = b;
            c->claims++;
        } else if (choice < 85u && held > 0) { /* release one we hold */
            uint32_t k = (uint32_t)((r >> 32) % held);
            if (!wh_bitmap_try_set(bm, owned[k])) c->violations++;
            owned[k] = owned[--held];
            c->releases++;
        } else if (choice < 88u) { /* a span of words */
            wh_stress_span(bm, r, owned, cap, &held, c);
        } else if (choice < 92u && held < cap) { /* steal a random bit */
            uint32_t b = (uint32_t)((r >> 32) % bm->nbits);
            if (wh_bitmap_try_clear(bm, b)) {
                owned[held++] = b;
                c->steals++;
            }
        } else { /* look without taking */
            uint32_t b = wh_bitmap_try_find_set(bm, r);
            if (b != WH_BITMAP_NONE) (void)wh_bitmap_get(bm, b);
            c->finds++;
        }
    }
    *n = held;
}

typedef struct wh_stress_config {
    uint64_t nbits;
    uint32_t threads; /* CPU: pthreads; GPU: 0 = a full grid         */
    uint32_t ops_per_thread;
    uint32_t cap; /* bits a thread may hold                      */
} wh_stress_config;

typedef struct wh_stress_result {
    wh_stress_counts counts;
    uint64_t ops; /* operations done                             */
    uint32_t threads;
    double seconds;           /* the concurrent phase alone                  */
    uint64_t inconsistent;    /* wh_bitmap_check_host                        */
    uint64_t count, expected; /* set bits at the end, and nbits - owned      */
    uint64_t owned_twice;     /* bits held by two threads, or owned yet set  */
} wh_stress_result;

#ifdef __cplusplus
extern "C" {
#endif
/* 0 on success, else the run could not be set up.  The verdict is the result:
 * ok iff violations, inconsistent and owned_twice are 0 and count == expected. */
int wh_stress_cpu(const wh_stress_config *cfg, wh_stress_result *res);
int wh_stress_gpu(const wh_stress_config *cfg, wh_stress_result *res); /* stress_gpu.cu */
int wh_stress_ok(const wh_stress_result *res);
void wh_stress_print(const char *backend, const wh_stress_config *cfg, const wh_stress_result *res);
/* Shared end-of-run verdict: the host image of the bitmap and all owned lists. */
void wh_stress_verify(const wh_bitmap *host_bm, const uint32_t *owned, const uint32_t *nowned, uint32_t threads,
                      uint32_t cap, wh_stress_result *res);
#ifdef __cplusplus
}
#endif

#endif
