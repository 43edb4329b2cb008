/* SPDX-License-Identifier: MIT */
/* WRAP: AtomicWrapMalloc (AWMalloc), register-efficient-gpu-allocators.txt
 * section 5.1 (Algorithm 2): BUMP in a circular pool.  A reservation that
 * runs past the end wraps the offset to the start with a CAS; memory is reused
 * without regard to what is still live there -- by design, for data that
 * lives briefly (the paper calls it not a full allocator).  No free.
 *
 * Departures: sizes are rounded to 16 bytes and same-size lanes of a warp are
 * coalesced like BUMP (the leader reserves count * size); the retry loop is
 * bounded (NULL, counted, after WH_HEAP_RETRY_LIMIT lost races); a request
 * larger than the pool fails instead of looping.
 */
#ifndef WARPHEAP_HEAP_WRAP_H
#define WARPHEAP_HEAP_WRAP_H

#include "warpheap/heap/core.h"

/* Reserve total bytes; returns the offset or UINT64_MAX. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__wrap_reserve(const wh_heap *h, uint64_t total) {
    if (total > h->bytes) return UINT64_MAX;
    uint64_t off = wh__atomic_add64(&h->ctl->cursor, total, WH_RELAXED);
    if (off + total <= h->bytes) return off; /* it fits: done        */
    uint64_t cur = off + total;              /* the cursor we left   */
    for (uint32_t n = 0; n < WH_HEAP_RETRY_LIMIT; ++n) {
        if (wh_atomic_cas(&h->ctl->cursor, &cur, total, WH_RELAXED, WH_RELAXED)) return 0; /* wrapped */
        if (cur + total <= h->bytes) {                                                     /* someone else wrapped */
            off = wh__atomic_add64(&h->ctl->cursor, total, WH_RELAXED);
            if (off + total <= h->bytes) return off;
            cur = off + total;
        } /* else wrap at its value */
    }
    return UINT64_MAX;
}

/* group: lanes with the same rounded size (mine included). */
WH_INLINE WH_HOST_DEVICE void *wh__wrap_malloc(const wh_heap *h, uint64_t bytes, uint32_t group) {
    unsigned leader = wh_leader(group);
    uint64_t off = 0;
    if (wh_lane_id() == leader) off = wh__wrap_reserve(h, bytes * (uint64_t)wh_popc32(group));
    off = wh_shfl64(group, off, leader);
    if (off == UINT64_MAX) return (void *)0;
    return h->base + off + (uint64_t)wh_rank(group) * bytes;
}

/* Nothing to release; a pointer outside the pool is foreign. */
WH_INLINE WH_HOST_DEVICE void wh__wrap_free(const wh_heap *h, void *p) {
    uint64_t off = (uint64_t)((uint8_t *)p - h->base);
    if ((uint8_t *)p < h->base || off % WH_HEAP_ALIGN || off >= h->bytes) wh__heap_count(&h->ctl->foreign_frees);
}

#endif /* WARPHEAP_HEAP_WRAP_H */
