/* SPDX-License-Identifier: MIT */
/* Heap walk of the block core (core/blocks.h): visits every arena block by block
 * through the boundary tags and checks every invariant the core promises, so
 * tests and fuzzers can account for every byte.  Not from a seed: the seed's
 * success criterion ("no two adjacent free blocks") is one of the checks.
 *
 * Checked: descriptors are spare, free or used; arenas start at descriptors
 * with prev == NONE; within an arena blocks are contiguous, non-empty,
 * granule-aligned, doubly linked; no two neighbours are free in one index;
 * the free indices hold exactly the free blocks (TLSF: each in the list of
 * its class, maps agree with lists; max-heap: heap order, slot back-links);
 * and the counters agree: sum of arenas, of used and of free bytes.
 * Bounded: every loop runs at most capacity steps.
 */
#ifndef WARPHEAP_BLOCKS_WALK_H
#define WARPHEAP_BLOCKS_WALK_H

#include "warpheap/core/blocks.h"

typedef struct wh_blocks_report {
    uint64_t arena_bytes, used_bytes, free_bytes, largest_free;
    uint32_t arenas, used, free, spare;
    uint32_t error;     /* 0 if consistent, else the first failed check (line) */
    uint32_t bad_block; /* descriptor where it failed, or NONE                 */
} wh_blocks_report;

#define WH__WALK_FAIL(r, b)        \
    do {                           \
        if (!(r)->error) {         \
            (r)->error = __LINE__; \
            (r)->bad_block = (b);  \
        }                          \
    } while (0)

/* Walk one arena starting at head; adds to r. */
WH_INLINE WH_HOST_DEVICE void wh__blocks_walk_arena(const wh_blocks *c, uint32_t head, wh_blocks_report *r) {
    const wh_block *d = wh_blocks_desc(c);
    uint32_t prev = WH_BLOCK_NONE;
    uint32_t b = head;
    for (uint32_t k = 0; b != WH_BLOCK_NONE; ++k, prev = b, b = d[b].next) {
        if (k >= c->capacity || b >= c->capacity) {
            WH__WALK_FAIL(r, b);
            return;
        }
        const wh_block *x = &d[b];
        if (x->state == WH_BLOCK_SPARE || x->prev != prev || x->size == 0 || ((x->addr | x->size) & (c->granule - 1u)))
            WH__WALK_FAIL(r, b);
        if (prev != WH_BLOCK_NONE && d[prev].addr + d[prev].size != x->addr) WH__WALK_FAIL(r, b);
        if (prev != WH_BLOCK_NONE && x->state == WH_BLOCK_FREE && d[prev].state == WH_BLOCK_FREE &&
            d[prev].index == x->index)
            WH__WALK_FAIL(r, b); /* the seed's criterion */
        r->arena_bytes += x->size;
        if (x->state == WH_BLOCK_USED) {
            r->used++;
            r->used_bytes += x->size;
        } else {
            r->free++;
            r->free_bytes += x->size;
            if (x->size > r->largest_free) r->largest_free = x->size;
            if (x->index >= c->nindex) WH__WALK_FAIL(r, b);
        }
    }
}

/* Check that index i holds exactly its free blocks, in the right places. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__blocks_check_index(const wh_blocks *c, uint32_t i, wh_blocks_report *r) {
    const wh_block *d = wh_blocks_desc(c);
    const wh_free_index *fi = wh_blocks_index(c, i);
    uint32_t seen = 0;
    uint64_t bytes = 0;
    if (WH__KIND(c, WH_BLOCKS_TLSF)) {
        const wh_tlsf *t = &fi->u.tlsf;
        for (uint32_t f = 0; f < WH_TLSF_FL; ++f) {
            if (((t->fl_map >> f) & 1u) != (t->sl_map[f] != 0)) WH__WALK_FAIL(r, WH_BLOCK_NONE);
            for (uint32_t s = 0; s < WH_TLSF_SL; ++s) {
                uint32_t b = t->head[f][s], prev = WH_BLOCK_NONE;
                if (((t->sl_map[f] >> s) & 1u) != (b != WH_BLOCK_NONE)) WH__WALK_FAIL(r, b);
                for (; b != WH_BLOCK_NONE; prev = b, b = d[b].link_next) {
                    uint32_t ff, ss;
                    if (b >= c->capacity || seen > c->capacity) {
                        WH__WALK_FAIL(r, b);
                        return seen;
                    }
                    wh_tlsf_mapping(d[b].size >> c->granule_log2, &ff, &ss);
                    if (d[b].state != WH_BLOCK_FREE || d[b].index != i || ff != f || ss != s || d[b].link_prev != prev)
                        WH__WALK_FAIL(r, b);
                    seen++;
                    bytes += d[b].size;
                }
            }
        }
    } else if (WH__KIND(c, WH_BLOCKS_LIST)) { /* no structure: the counts must match the descriptors */
        for (uint32_t b = 0; b < c->capacity; ++b)
            if (d[b].state == WH_BLOCK_FREE && d[b].index == i) {
                seen++;
                bytes += d[b].size;
            }
    } else if (WH__KIND(c, WH_BLOCKS_MAXHEAP)) {
        const uint32_t *slot = wh_maxheap_slots(c, &fi->u.heap);
        for (uint32_t p = 0; p < fi->u.heap.count && p < c->capacity; ++p) {
            uint32_t b = slot[p];
            if (b >= c->capacity) {
                WH__WALK_FAIL(r, b);
                return seen;
            }
            if (d[b].state != WH_BLOCK_FREE || d[b].index != i || d[b].link_prev != p ||
                (p > 0 && d[slot[(p - 1) / 2]].size < d[b].size))
                WH__WALK_FAIL(r, b);
            seen++;
            bytes += d[b].size;
        }
    } else {
        WH__WALK_FAIL(r, WH_BLOCK_NONE); /* a kind this code was built without */
    }
    if (seen != fi->nfree || bytes != fi->free_bytes) WH__WALK_FAIL(r, WH_BLOCK_NONE);
    return seen;
}

/* Walk everything.  Returns true if consistent; *r gets the totals. */
WH_INLINE WH_HOST_DEVICE bool wh_blocks_check(const wh_blocks *c, wh_blocks_report *r) {
    memset(r, 0, sizeof *r);
    r->bad_block = WH_BLOCK_NONE;
    const wh_block *d = wh_blocks_desc(c);
    uint32_t spare = 0;
    for (uint32_t b = c->spare; b != WH_BLOCK_NONE; b = d[b].link_next) {
        if (b >= c->capacity || spare > c->capacity || d[b].state != WH_BLOCK_SPARE) {
            WH__WALK_FAIL(r, b);
            break;
        }
        spare++;
    }
    r->spare = spare;
    for (uint32_t b = 0; b < c->capacity; ++b) {
        if (d[b].state != WH_BLOCK_SPARE && d[b].state != WH_BLOCK_FREE && d[b].state != WH_BLOCK_USED)
            WH__WALK_FAIL(r, b);
        if (d[b].state != WH_BLOCK_SPARE && d[b].prev == WH_BLOCK_NONE) {
            r->arenas++;
            wh__blocks_walk_arena(c, b, r);
        }
    }
    uint32_t indexed = 0;
    for (uint32_t i = 0; i < c->nindex; ++i) indexed += wh__blocks_check_index(c, i, r);
    if (indexed != r->free || r->free + r->used + r->spare != c->capacity || r->arenas != c->narenas ||
        r->arena_bytes != c->arena_bytes || r->used_bytes != c->used_bytes || r->used != c->nused)
        WH__WALK_FAIL(r, WH_BLOCK_NONE);
    return r->error == 0;
}

#endif /* WARPHEAP_BLOCKS_WALK_H */
