/* SPDX-License-Identifier: MIT */
/* Stream arena, ring policy: next-fit from the end of the last
 * allocation, and spans of at most two extents.  Seed gpu-executed-heap.txt,
 * "Fragmentation" and "Heap": the seed's buffers live for a few frames and die
 * in the order they were made (first in, first out), which best fit serves
 * badly -- TLSF in a ring of K variable-size meshes leaves holes that need a
 * region 1.35 x the live bytes.
 *
 * Next fit places each block right after the previous one, so FIFO lifetimes
 * keep the live blocks in one circular run and the free space in at most two
 * blocks (after the newest, before the oldest).  A single block still needs
 * room for itself in one of those two pieces: about (K+1)/K x the live bytes.
 * A span lets one allocation take the end of the region and continue at its
 * start (the seed's ring buffer that wraps), so a region a few granules above
 * the live bytes serves every FIFO sequence.  The consumer finds element i in
 * part[0] for i < count0, else in part[1] at i - count0 (wh_arena_span_at).
 *
 * Everything here runs under the arena lock, on the block core of arena.h:
 * the same descriptors, index and heap walk as best fit; only the choice of
 * the free block differs.  Included by arena.h after wh__arena_state. */
#ifndef WARPHEAP_ARENA_RING_H
#define WARPHEAP_ARENA_RING_H

/* The block after b in address order, wrapping from the region's end to its
 * first block (whose descriptor never changes: merges keep the lower one). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__ring_succ(const wh__arena_state *s, const wh_block *d, uint32_t b) {
    return d[b].next != WH_BLOCK_NONE ? d[b].next : s->ring_head;
}

/* The block that starts at (or contains) the cursor: the successor of the
 * last allocation while that is still live, else found by a bounded walk. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__ring_start(wh__arena_state *s) {
    wh_blocks *c = wh__arena_core(s);
    const wh_block *d = wh_blocks_desc(c);
    uint32_t h = s->ring_hint;
    if (h < c->capacity && d[h].state == WH_BLOCK_USED && d[h].addr + d[h].size == s->ring_cursor)
        return wh__ring_succ(s, d, h);
    uint32_t b = s->ring_head;
    for (uint32_t k = 0; k < c->capacity && b != WH_BLOCK_NONE; ++k) {
        if (s->ring_cursor < d[b].addr + d[b].size) return b;
        b = d[b].next;
    }
    return s->ring_head; /* cursor at the region's end */
}

/* First free block of at least size bytes in address order from `from`,
 * once around the region; NONE if there is none. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__ring_find(const wh__arena_state *s, uint32_t from, uint64_t size) {
    wh_blocks *c = wh__arena_core((wh__arena_state *)s);
    const wh_block *d = wh_blocks_desc(c);
    uint32_t b = from;
    for (uint32_t k = 0; k < c->capacity; ++k) {
        if (d[b].state == WH_BLOCK_FREE && d[b].size >= size) return b;
        b = wh__ring_succ(s, d, b);
        if (b == from) break;
    }
    return WH_BLOCK_NONE;
}

/* Take free block b, cut to size (a granule multiple <= its size), as the
 * core's wh_blocks_alloc does with the block its index found; the cursor
 * moves to its end. */
WH_INLINE WH_HOST_DEVICE void wh__ring_take(wh__arena_state *s, uint32_t b, uint64_t size) {
    wh_blocks *c = wh__arena_core(s);
    wh_block *d = wh_blocks_desc(c);
    wh__index_remove(c, b);
    d[b].state = WH_BLOCK_USED;
    wh__blocks_split(c, b, size, 0);
    c->nused++;
    c->used_bytes += d[b].size;
    s->ring_hint = b;
    s->ring_cursor = d[b].addr + d[b].size;
}

/* Next fit for `need` bytes: a USED block id, or NONE. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__ring_alloc(wh__arena_state *s, uint64_t need) {
    wh_blocks *c = wh__arena_core(s);
    uint64_t size = wh_blocks_round(c, need);
    if (size == 0) return WH_BLOCK_NONE;
    uint32_t b = wh__ring_find(s, wh__ring_start(s), size);
    if (b != WH_BLOCK_NONE) wh__ring_take(s, b, size);
    return b;
}

#endif /* WARPHEAP_ARENA_RING_H */
