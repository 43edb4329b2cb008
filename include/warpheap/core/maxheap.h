/* SPDX-License-Identifier: MIT */
/* Max-heap free index: the seed's "Free-Heap" (gpu-executed-heap.txt,
 * sections "Heap" and "Fragmentation"), as a free index of the block core.
 *
 * A binary max-heap on block size in an array of descriptor ids; every free
 * block remembers its heap slot (link_prev) so that a neighbour absorbed by a
 * merge can be removed from the middle: the last entry fills the gap and
 * sinks or swims.  Allocation follows the seed's descent: from the root, step
 * to the smallest child that still fits, and stop where neither does -- a
 * block close to the smallest that fits, found in O(log n).
 *
 * Departure: the seed keeps a sentinel in slot 0 and marks allocated blocks
 * by pointing them at it; here the descriptor's state says free/used and the
 * heap starts at slot 0.  Only included from core/blocks.h.
 */
#ifndef WARPHEAP_BLOCKS_MAXHEAP_H
#define WARPHEAP_BLOCKS_MAXHEAP_H

#ifndef WARPHEAP_BLOCKS_H
#error "include warpheap/core/blocks.h"
#endif

WH_INLINE WH_HOST_DEVICE void wh_maxheap_init(wh_maxheap *h, uint64_t slots_off) {
    h->count = 0;
    h->pad = 0;
    h->slots_off = slots_off;
}
WH_INLINE WH_HOST_DEVICE uint32_t *wh_maxheap_slots(const wh_blocks *c, const wh_maxheap *h) {
    return (uint32_t *)((char *)c + h->slots_off);
}

WH_INLINE WH_HOST_DEVICE void wh__maxheap_put(uint32_t *slot, wh_block *d, uint32_t pos, uint32_t b) {
    slot[pos] = b;
    d[b].link_prev = pos;
}

/* Move the entry at pos up while it is larger than its parent. */
WH_INLINE WH_HOST_DEVICE void wh__maxheap_swim(uint32_t *slot, wh_block *d, uint32_t pos) {
    uint32_t b = slot[pos];
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (d[slot[parent]].size >= d[b].size) break;
        wh__maxheap_put(slot, d, pos, slot[parent]);
        pos = parent;
    }
    wh__maxheap_put(slot, d, pos, b);
}

/* Move the entry at pos down while a child is larger. */
WH_INLINE WH_HOST_DEVICE void wh__maxheap_sink(uint32_t *slot, wh_block *d, uint32_t count, uint32_t pos) {
    uint32_t b = slot[pos];
    for (;;) {
        uint32_t l = 2 * pos + 1, r = l + 1, big = l;
        if (l >= count) break;
        if (r < count && d[slot[r]].size > d[slot[l]].size) big = r;
        if (d[slot[big]].size <= d[b].size) break;
        wh__maxheap_put(slot, d, pos, slot[big]);
        pos = big;
    }
    wh__maxheap_put(slot, d, pos, b);
}

WH_INLINE WH_HOST_DEVICE void wh_maxheap_insert(const wh_blocks *c, wh_maxheap *h, wh_block *d, uint32_t b) {
    uint32_t *slot = wh_maxheap_slots(c, h);
    wh__maxheap_put(slot, d, h->count, b);
    wh__maxheap_swim(slot, d, h->count++);
}

WH_INLINE WH_HOST_DEVICE void wh_maxheap_remove(const wh_blocks *c, wh_maxheap *h, wh_block *d, uint32_t b) {
    uint32_t *slot = wh_maxheap_slots(c, h);
    uint32_t pos = d[b].link_prev, last = --h->count;
    if (pos == last) return;
    uint32_t moved = slot[last];
    wh__maxheap_put(slot, d, pos, moved);
    wh__maxheap_swim(slot, d, pos);
    if (d[moved].link_prev == pos) wh__maxheap_sink(slot, d, h->count, pos); /* did not swim */
}

/* The seed's descent: a fitting block near the smallest, or NONE. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_maxheap_find(const wh_blocks *c, const wh_maxheap *h, const wh_block *d,
                                                  uint64_t size) {
    const uint32_t *slot = wh_maxheap_slots(c, h);
    if (h->count == 0 || d[slot[0]].size < size) return WH_BLOCK_NONE;
    uint32_t pos = 0;
    for (;;) {
        uint32_t l = 2 * pos + 1, r = l + 1, best = WH_BLOCK_NONE;
        if (l < h->count && d[slot[l]].size >= size) best = l;
        if (r < h->count && d[slot[r]].size >= size && (best == WH_BLOCK_NONE || d[slot[r]].size < d[slot[l]].size))
            best = r;
        if (best == WH_BLOCK_NONE) return slot[pos];
        pos = best;
    }
}

#endif /* WARPHEAP_BLOCKS_MAXHEAP_H */
