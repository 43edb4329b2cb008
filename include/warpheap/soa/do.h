/* SPDX-License-Identifier: MIT */
/* Object allocator: enumeration of objects.
 *
 * Implements DynaSOAr (ECOOP 2019) section 3.7: parallel_do snapshots each
 * allocated block's slot bitmap into its iteration bitmap (so objects created
 * during the do-all are not visited), builds the compact array of allocated
 * blocks of the type with Alg. 5 (warpheap/bitmap_cuda.h), and maps threads to
 * objects so that consecutive threads take consecutive slots of one block:
 * thread i serves slot i mod cap of blocks k, k + T/cap, ... with k = i / cap
 * and T the launch's threads rounded down to a multiple of cap (Fig. 7).
 * device_do is a sequential loop in one thread over the allocated blocks'
 * slot bitmaps, skipping empty parts through the bitmap's summary level.  As
 * in the paper it sees a consistent set only when no object of the type is
 * created or destroyed meanwhile (between kernels, or in a do-all of another
 * type); its loads are relaxed.
 *
 * Departure: the kernel reads the number of allocated blocks from device
 * memory and strides over a fixed grid, so the host never waits between the
 * enumeration and the launch.
 */
#ifndef WARPHEAP_SOA_DO_H
#define WARPHEAP_SOA_DO_H

#include "warpheap/soa/alloc.h"

/* The object of thread-slot `slot` in block b if the running do-all visits it. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__soa_do_object(const wh_soa *s, uint32_t b, uint32_t t, uint32_t slot) {
    uint64_t it = wh_atomic_load(wh__soa_iter_word(s, b), WH_RELAXED);
    if (!((it >> slot) & 1u)) return 0;
    return wh_soa_ptr_make(wh__soa_block(s, b), t, s->cap[t], slot);
}

/* ---- device_do: a sequential iterator -------------------------------------- */
typedef struct wh_soa_iter {
    uint32_t types;   /* types still to visit (bit mask)         */
    uint32_t t, word; /* current type, level-0 word of its bitmap */
    uint64_t blocks;  /* blocks left in that word                 */
    uint32_t b;
    uint64_t slots; /* objects left in block b                  */
} wh_soa_iter;

/* Visit the objects of type t and its subtypes. */
WH_INLINE WH_HOST_DEVICE void wh_soa_iter_begin(wh_soa_iter *it, const wh_soa *s, uint32_t t) {
    it->types = t < s->ntypes ? s->subtypes[t] : 0u;
    it->t = 0;
    it->word = ~0u;
    it->blocks = it->slots = 0;
    it->b = 0;
}

/* Next level-0 word >= w of bitmap bm whose summary bit is set, or its end. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__soa_next_word(const wh_bitmap *bm, uint32_t w) {
    uint32_t nw = wh_bitmap_level_words(bm, 0);
    if (bm->levels < 2) return w;
    while (w < nw) {
        uint64_t l1 = wh_atomic_load(wh_bitmap_word(bm, 1, w >> 6), WH_RELAXED) >> (w & 63u);
        if (l1) return w + (uint32_t)(wh_ffs64(l1) - 1);
        w = (w | 63u) + 1u;
    }
    return nw;
}

/* The next object, or 0 when done. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_soa_iter_next(wh_soa_iter *it, const wh_soa *s) {
    for (;;) {
        if (it->slots) {
            uint32_t slot = (uint32_t)(wh_ffs64(it->slots) - 1);
            it->slots &= it->slots - 1u;
            return wh_soa_ptr_make(wh__soa_block(s, it->b), it->t, s->cap[it->t], slot);
        }
        if (it->blocks) {
            it->b = it->word * 64u + (uint32_t)(wh_ffs64(it->blocks) - 1);
            it->blocks &= it->blocks - 1u;
            uint64_t a = wh_atomic_load(wh__soa_alloc_word(s, it->b), WH_RELAXED);
            bool mine = wh_atomic_load(wh__soa_type_word(s, it->b), WH_RELAXED) == it->t;
            it->slots = mine ? a & wh__soa_usable(s->cap[it->t]) : 0u;
            continue;
        }
        const wh_bitmap *bm = &s->alloc_blocks[it->t];
        if (it->word != ~0u && it->word + 1u < wh_bitmap_level_words(bm, 0)) {
            it->word = wh__soa_next_word(bm, it->word + 1u);
            if (it->word < wh_bitmap_level_words(bm, 0)) {
                it->blocks = wh_atomic_load(wh_bitmap_word(bm, 0, it->word), WH_RELAXED);
                continue;
            }
        }
        if (!it->types) return 0; /* next type */
        it->t = (uint32_t)(wh_ffs32(it->types) - 1);
        it->types &= it->types - 1u;
        bm = &s->alloc_blocks[it->t];
        it->word = wh__soa_next_word(bm, 0);
        it->blocks =
            it->word < wh_bitmap_level_words(bm, 0) ? wh_atomic_load(wh_bitmap_word(bm, 0, it->word), WH_RELAXED) : 0u;
    }
}

/* Block-wise form for hot loops: the pointer of slot 0 of the next block of
 * the type (field arrays: WH_FIELD(Class, Class_from(p0), field)[slot]) and
 * its objects as a bit mask in *slots; 0 when done. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_soa_iter_next_block(wh_soa_iter *it, const wh_soa *s, uint64_t *slots) {
    it->slots = 0;
    uint64_t p = wh_soa_iter_next(it, s); /* first object of a block */
    if (!p) return 0;
    *slots = it->slots | (1ull << wh_soa_ptr_slot(p));
    it->slots = 0;
    return p & ~(uint64_t)63u;
}

#endif /* WARPHEAP_SOA_DO_H */
