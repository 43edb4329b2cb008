/* SPDX-License-Identifier: MIT */
/* TLSF free index: two-level segregated fit (Masmano, Ripoll, Crespo, Real,
 * ECRTS 2004), as the free index of the block core (core/blocks.h).  The seed
 * gpu-executed-heap.txt uses a max-heap here; DESIGN.md proposes TLSF as the
 * O(1) alternative, and bench/pool/blocks_bench.c measures the two.
 *
 * Sizes are counted in granules u.  Row f = floor(log2 u) - 4 splits
 * [2^(f+4), 2^(f+5)) into 32 equal classes; row 0 holds u < 32 exactly.  Each
 * class is a doubly linked list of free blocks; sl_map[f] has bit s set iff
 * list (f, s) is non-empty and fl_map bit f iff sl_map[f] != 0, so a search
 * is two find-first-set instructions.
 *
 * Departure: the request is rounded up to the next class boundary (good fit),
 * as in TLSF; when that finds nothing, the request's own class is scanned
 * (a bounded number of entries) before the caller grows the heap, so a block
 * that fits is not missed merely because it shares the request's class.
 * Only included from core/blocks.h.
 */
#ifndef WARPHEAP_TLSF_H
#define WARPHEAP_TLSF_H

#ifndef WARPHEAP_BLOCKS_H
#error "include warpheap/core/blocks.h"
#endif

#define WH_TLSF_SCAN_LIMIT 64u /* entries examined in the request's own class */

WH_INLINE WH_HOST_DEVICE void wh_tlsf_init(wh_tlsf *t) {
    t->fl_map = 0;
    for (uint32_t f = 0; f < WH_TLSF_FL; ++f) {
        t->sl_map[f] = 0;
        for (uint32_t s = 0; s < WH_TLSF_SL; ++s) t->head[f][s] = WH_BLOCK_NONE;
    }
}

/* Class of a size of u granules (u > 0). */
WH_INLINE WH_HOST_DEVICE void wh_tlsf_mapping(uint64_t u, uint32_t *f, uint32_t *s) {
    if (u < WH_TLSF_SL) {
        *f = 0;
        *s = (uint32_t)u;
        return;
    }
    int l = wh_log2_64(u);
    *f = (uint32_t)(l - WH_TLSF_SL_LOG2 + 1);
    *s = (uint32_t)(u >> (l - WH_TLSF_SL_LOG2)) & (WH_TLSF_SL - 1u);
}

WH_INLINE WH_HOST_DEVICE void wh_tlsf_insert(wh_tlsf *t, wh_block *d, uint32_t b, uint32_t glog2) {
    uint32_t f, s;
    wh_tlsf_mapping(d[b].size >> glog2, &f, &s);
    uint32_t h = t->head[f][s];
    d[b].link_prev = WH_BLOCK_NONE;
    d[b].link_next = h;
    if (h != WH_BLOCK_NONE) d[h].link_prev = b;
    t->head[f][s] = b;
    t->sl_map[f] |= 1u << s;
    t->fl_map |= 1ull << f;
}

WH_INLINE WH_HOST_DEVICE void wh_tlsf_remove(wh_tlsf *t, wh_block *d, uint32_t b, uint32_t glog2) {
    uint32_t f, s;
    wh_tlsf_mapping(d[b].size >> glog2, &f, &s);
    uint32_t p = d[b].link_prev, n = d[b].link_next;
    if (n != WH_BLOCK_NONE) d[n].link_prev = p;
    if (p != WH_BLOCK_NONE) {
        d[p].link_next = n;
        return;
    }
    t->head[f][s] = n;
    if (n == WH_BLOCK_NONE) {
        t->sl_map[f] &= ~(1u << s);
        if (t->sl_map[f] == 0) t->fl_map &= ~(1ull << f);
    }
}

/* First non-empty list at class (f, s) or above; NONE if none. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__tlsf_first_from(const wh_tlsf *t, uint32_t f, uint32_t s) {
    if (f >= WH_TLSF_FL) return WH_BLOCK_NONE;
    uint32_t row = s < WH_TLSF_SL ? t->sl_map[f] & (~0u << s) : 0u;
    if (!row) {
        uint64_t rows = f + 1 < WH_TLSF_FL ? t->fl_map & (~0ull << (f + 1)) : 0;
        if (!rows) return WH_BLOCK_NONE;
        f = (uint32_t)(wh_ffs64(rows) - 1);
        row = t->sl_map[f];
    }
    return t->head[f][wh_ffs32(row) - 1];
}

/* A free block of at least size bytes (size a multiple of the granule). */
WH_INLINE WH_HOST_DEVICE uint32_t wh_tlsf_find(const wh_tlsf *t, const wh_block *d, uint64_t size, uint32_t glog2) {
    uint64_t u = size >> glog2;
    uint64_t up = u;
    if (u >= WH_TLSF_SL) up += (1ull << (wh_log2_64(u) - WH_TLSF_SL_LOG2)) - 1u; /* next class edge */
    uint32_t f, s;
    wh_tlsf_mapping(up, &f, &s);
    uint32_t b = wh__tlsf_first_from(t, f, s);
    if (b != WH_BLOCK_NONE || up == u) return b;
    wh_tlsf_mapping(u, &f, &s); /* the request's own class */
    b = t->head[f][s];
    for (uint32_t k = 0; b != WH_BLOCK_NONE && k < WH_TLSF_SCAN_LIMIT; ++k, b = d[b].link_next)
        if (d[b].size >= size) return b;
    return WH_BLOCK_NONE;
}

/* Some free block (the head of the lowest non-empty list). */
WH_INLINE WH_HOST_DEVICE uint32_t wh_tlsf_any(const wh_tlsf *t) { return wh__tlsf_first_from(t, 0, 0); }

/* Largest free size: the highest non-empty class, scanned (bounded). */
WH_INLINE WH_HOST_DEVICE uint64_t wh_tlsf_largest(const wh_tlsf *t, const wh_block *d) {
    if (!t->fl_map) return 0;
    uint32_t f = (uint32_t)wh_log2_64(t->fl_map);
    uint32_t s = (uint32_t)(31 - wh_clz32(t->sl_map[f]));
    uint64_t best = 0;
    uint32_t b = t->head[f][s];
    for (uint32_t k = 0; b != WH_BLOCK_NONE && k < 4096u; ++k, b = d[b].link_next)
        if (d[b].size > best) best = d[b].size;
    return best;
}

#endif /* WARPHEAP_TLSF_H */
