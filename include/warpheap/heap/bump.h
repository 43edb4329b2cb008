/* SPDX-License-Identifier: MIT */
/* BUMP: AtomicMalloc, register-efficient-gpu-allocators.txt section 4.1
 * (Algorithm 1): one atomic add on a shared offset; no free.
 *
 * Departures: requests are rounded to 16 bytes (alignment), and same-size
 * requests of a warp are coalesced -- the group leader adds count * size once
 * and each lane takes its rank's share, so a warp costs one atomic (the speed
 * limit every other kind is measured against).  A reservation past the end
 * fails (NULL, counted); the offset is never moved back, because a later
 * reservation may already lie beyond ours: after the first failure, the tail
 * smaller than that request is lost until wh_heap_reset.
 */
#ifndef WARPHEAP_HEAP_BUMP_H
#define WARPHEAP_HEAP_BUMP_H

#include "warpheap/heap/core.h"

/* group: lanes with the same rounded size (mine included). */
WH_INLINE WH_HOST_DEVICE void *wh__bump_malloc(const wh_heap *h, uint64_t bytes, uint32_t group) {
    unsigned leader = wh_leader(group);
    uint64_t off = 0;
    if (wh_lane_id() == leader) off = wh__atomic_add64(&h->ctl->cursor, bytes * (uint64_t)wh_popc32(group), WH_RELAXED);
    off = wh_shfl64(group, off, leader) + (uint64_t)wh_rank(group) * bytes;
    if (off + bytes > h->bytes || off + bytes < off) return (void *)0; /* counted by the caller */
    return h->base + off;
}

/* Nothing to release; a pointer outside what was handed out is foreign. */
WH_INLINE WH_HOST_DEVICE void wh__bump_free(const wh_heap *h, void *p) {
    uint64_t off = (uint64_t)((uint8_t *)p - h->base);
    if ((uint8_t *)p < h->base || off % WH_HEAP_ALIGN || off >= wh_atomic_load(&h->ctl->cursor, WH_RELAXED))
        wh__heap_count(&h->ctl->foreign_frees);
}

#endif /* WARPHEAP_HEAP_BUMP_H */
