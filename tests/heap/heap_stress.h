/* SPDX-License-Identifier: MIT */
/* Heap stress: the per-thread loop shared by the CPU test (pthreads) and the
 * GPU test (a full grid).  Each thread allocates random sizes -- different
 * lanes of a warp different sizes in different iterations, so a warp's lanes
 * diverge all the time -- fills every allocation with a pattern only it
 * writes (its thread id hashed, plus the word index), and checks the whole
 * pattern before it frees.  Two live allocations that overlap corrupt one of
 * the patterns: any overlap fails the test. */
#ifndef WH_HEAP_STRESS_H
#define WH_HEAP_STRESS_H

#include "warpheap/heap.h"

typedef struct wh_hs_counts {
    unsigned long long allocs, frees, failed, corrupt, misaligned;
} wh_hs_counts;

typedef struct wh_hs_shape {
    uint32_t ops;       /* operations per thread                       */
    uint32_t cap;       /* allocations a thread may hold               */
    uint32_t small_max; /* most sizes: 1 .. small_max                  */
    uint32_t large_max; /* one in 16: up to large_max                  */
} wh_hs_shape;

WH_INLINE WH_HOST_DEVICE uint64_t wh_hs_pattern(uint64_t tid, const void *p) {
    return wh_hash64(tid) ^ (uint64_t)(uintptr_t)p;
}
WH_INLINE WH_HOST_DEVICE void wh_hs_fill(uint64_t tid, void *p, uint32_t size) {
    uint64_t v = wh_hs_pattern(tid, p);
    uint64_t *w = (uint64_t *)p;
    for (uint32_t k = 0; k < size / 8u; ++k) w[k] = v + k;
    for (uint32_t k = size & ~7u; k < size; ++k) ((uint8_t *)p)[k] = (uint8_t)(v >> (k & 7u));
}
WH_INLINE WH_HOST_DEVICE bool wh_hs_check(uint64_t tid, const void *p, uint32_t size) {
    uint64_t v = wh_hs_pattern(tid, p);
    const uint64_t *w = (const uint64_t *)p;
    bool ok = true;
    for (uint32_t k = 0; k < size / 8u; ++k) ok &= w[k] == v + k;
    for (uint32_t k = size & ~7u; k < size; ++k) ok &= ((const uint8_t *)p)[k] == (uint8_t)(v >> (k & 7u));
    return ok;
}

WH_INLINE WH_HOST_DEVICE void wh_hs_release(const wh_heap *h, uint64_t tid, void *p, uint32_t size, wh_hs_counts *c) {
    if (!wh_hs_check(tid, p, size)) c->corrupt++;
    wh_free(h, p);
    c->frees++;
}

/* One thread: shape->ops random allocations and frees, then free all. */
WH_INLINE WH_HOST_DEVICE void wh_hs_thread(const wh_heap *h, uint64_t tid, const wh_hs_shape *s, void **held,
                                           uint32_t *sizes, wh_hs_counts *c) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->ops; ++i) {
        uint64_t r = wh_hash64(tid * 0x9E3779B97F4A7C15ull + i);
        if (n < s->cap && (n == 0 || r % 100u < 55u)) {
            uint32_t max = (r >> 8) % 16u == 0 ? s->large_max : s->small_max;
            uint32_t size = 1u + (uint32_t)((r >> 16) % max);
            void *p = wh_malloc(h, size);
            if (!p) {
                c->failed++;
                continue;
            }
            if ((uintptr_t)p % WH_HEAP_ALIGN) c->misaligned++;
            wh_hs_fill(tid, p, size);
            held[n] = p;
            sizes[n++] = size;
            c->allocs++;
        } else if (n > 0) {
            uint32_t k = (uint32_t)((r >> 32) % n);
            wh_hs_release(h, tid, held[k], sizes[k], c);
            held[k] = held[n - 1u];
            sizes[k] = sizes[--n];
        }
    }
    while (n > 0) {
        --n;
        wh_hs_release(h, tid, held[n], sizes[n], c);
    }
}

#endif
