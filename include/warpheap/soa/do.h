/* SPDX-License-Identifier: MIT */
/* Object allocator: enumeration of objects.
 *
 * Implements DynaSOAr (ECOOP 2019) section 3.7: parallel_do snapshots each
 * allocated block's slot bitmap as its iteration bitmap (so objects created
 * during the do-all are not visited), builds the compact array of allocated
 * blocks of the type (Alg. 5, in one pass over the bitmap's two lowest levels
 * together with the snapshot: one launch before the do-all's), and maps threads to
 * objects so that consecutive threads take consecutive slots of one block:
 * thread i serves slot i mod cap of blocks k, k + T/cap, ... with k = i / cap
 * and T the launch's threads rounded down to a multiple of cap (Fig. 7).
 * device_do is a sequential loop in one thread over the allocated blocks'
 * slot bitmaps, skipping empty parts through the bitmap's summary level.  As
 * in the paper it sees a consistent set only when no object of the type is
 * created or destroyed meanwhile (between kernels, or in a do-all of another
 * type); its loads are relaxed.
 *
 * Departures: the kernel reads the number of allocated blocks from device
 * memory and strides over a fixed grid, so the host never waits between the
 * enumeration and the launch; the iteration bitmaps lie beside the compact
 * array instead of in the blocks' headers; parallel_do_again visits the last
 * snapshot once more, without enumerating again.
 */
#ifndef WARPHEAP_SOA_DO_H
#define WARPHEAP_SOA_DO_H

#include "warpheap/soa/alloc.h"

/* An entry of the compact array: a block the running do-all visits and its
 * iteration bitmap (the slots it visits).  The array and the bitmaps beside
 * it are read-only while the do-all runs: one load each, both next to the
 * neighbours' (no block header is read, so a do-all that touches few fields
 * of a block reads no line for its bookkeeping). */
typedef struct wh__soa_do_entry {
    uint64_t iter;  /* the slots the do-all visits */
    uint32_t block; /* the block's index            */
} wh__soa_do_entry;
/* Entry k of the compact array, or an empty one past its n entries. */
WH_INLINE WH_HOST_DEVICE wh__soa_do_entry wh__soa_do_entry_at(const wh_soa *s, uint32_t k, uint32_t n) {
    wh__soa_do_entry e = {0, 0};
    if (k < n) {
        e.iter = s->do_iter[k];
        e.block = s->do_blocks[k];
    }
    return e;
}
/* Whether the do-all visits `slot`, and then its object in *p.  The object
 * still exists: a do-all's function destroys no object of the type but its
 * own, and none is destroyed between a preparation and a parallel_do_again
 * (WH_DEBUG checks it).  A flag, not a null pointer: the caller's branch then
 * sees how *p is made, and its field addresses fold (soa/pointer.h). */
WH_INLINE WH_HOST_DEVICE bool wh__soa_do_entry_object(const wh_soa *s, wh__soa_do_entry e, uint32_t t, uint32_t slot,
                                                      uint64_t *p) {
    if (!((e.iter >> slot) & 1u)) return false;
    WH_ASSERT(((wh_atomic_load(wh__soa_alloc_word(s, e.block), WH_RELAXED) >> slot) & 1u) &&
              wh_atomic_load(wh__soa_type_word(s, e.block), WH_RELAXED) == t);
    *p = wh_soa_ptr_make(wh__soa_block(s, e.block), t, s->cap[t], slot);
    return true;
}
/* Concrete types among `types` (a subtypes mask). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__soa_concrete_types(const wh_soa *s, uint32_t types) {
    uint32_t n = 0;
    for (uint32_t u = 0; types; ++u, types >>= 1) n += (types & 1u) && s->cap[u];
    return n;
}

/* ---- device_do: a sequential iterator -------------------------------------- *
 * It reads the slot and type words of the next block while the caller works on
 * the current one: a loop over all objects (n-body's forces) otherwise waits
 * for two cache misses per block, with few warps to hide them. */
typedef struct wh_soa_iter {
    uint32_t types;   /* types still to visit after t (bit mask)       */
    uint32_t t, word; /* current type, level-0 word of its bitmap       */
    uint64_t blocks;  /* blocks left in that word                       */
    uint32_t nb, nt;  /* the next block and its type; nb ~0u: none left */
    uint64_t na;      /* its slot word, loaded ahead                    */
    uint32_t ntype;   /* its type word, loaded ahead                    */
    uint64_t cur;     /* the current block's slot-0 pointer             */
    uint64_t slots;   /* objects left in the current block              */
} wh_soa_iter;

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

/* Find the next allocated block and start loading its words.  `word` is the
 * level-0 word of type t that `blocks` came from: ~0u before the type's first
 * word, ~1u past type 0's last one (wh_soa_iter_begin: no type taken yet). */
WH_INLINE WH_HOST_DEVICE void wh__soa_iter_advance(wh_soa_iter *it, const wh_soa *s) {
    for (;;) {
        if (it->blocks) {
            uint32_t b = it->word * 64u + (uint32_t)(wh_ffs64(it->blocks) - 1);
            it->blocks &= it->blocks - 1u;
            it->nb = b;
            it->nt = it->t;
            it->na = wh_atomic_load(wh__soa_alloc_word(s, b), WH_RELAXED);
            it->ntype = wh_atomic_load(wh__soa_type_word(s, b), WH_RELAXED);
            return;
        }
        const wh_bitmap *bm = &s->alloc_blocks[it->t];
        uint32_t nw = wh_bitmap_level_words(bm, 0), w = it->word + 1u;
        if (w < nw && (w = wh__soa_next_word(bm, w)) < nw) {
            it->word = w;
            it->blocks = wh_atomic_load(wh_bitmap_word(bm, 0, w), WH_RELAXED);
            continue;
        }
        if (!it->types) { /* done */
            it->nb = ~0u;
            return;
        }
        it->t = (uint32_t)(wh_ffs32(it->types) - 1); /* next type */
        it->types &= it->types - 1u;
        it->word = ~0u;
    }
}

/* Visit the objects of type t and its subtypes. */
WH_INLINE WH_HOST_DEVICE void wh_soa_iter_begin(wh_soa_iter *it, const wh_soa *s, uint32_t t) {
    it->types = t < s->ntypes ? s->subtypes[t] : 0u;
    it->t = 0;
    it->word = ~1u;
    it->blocks = it->slots = 0;
    it->cur = 0;
    wh__soa_iter_advance(it, s);
}

/* Block-wise form for hot loops: the pointer of slot 0 of the next block of
 * the type (field arrays: WH_FIELD(Class, Class_from(p0), field)[slot]) and
 * its objects as a bit mask in *slots; 0 when done. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_soa_iter_next_block(wh_soa_iter *it, const wh_soa *s, uint64_t *slots) {
    it->slots = 0;
    while (it->nb != ~0u) {
        uint32_t b = it->nb, t = it->nt;
        uint64_t a = it->ntype == t ? it->na & wh__soa_usable(s->cap[t]) : 0u; /* a block of another type: none */
        wh__soa_iter_advance(it, s);
        if (a) {
            *slots = a;
            return it->cur = wh_soa_ptr_make(wh__soa_block(s, b), t, s->cap[t], 0);
        }
    }
    return 0;
}

/* Each slot k of a block's objects (`slots` from wh_soa_iter_next_block, of a
 * type with capacity `cap`) in increasing order: the statements after the
 * arguments, with k a uint32_t.  A full block is a counted loop, which the
 * compiler unrolls and pipelines as it does a loop over an array (a bit scan
 * per object weighs on a short loop body); other blocks go bit by bit.
 * `break` and `continue` act on the slots of the block.
 *     WH_SOA_FOR_SLOTS(k, slots, wh_soa_ptr_cap(p0), sum += x[k];)          */
#define WH_SOA_FOR_SLOTS(k, slots, cap, ...)                      \
    do {                                                          \
        uint64_t k##__m = (slots);                                \
        uint32_t k##__c = (cap);                                  \
        if (k##__m == wh__soa_usable(k##__c)) {                   \
            for (uint32_t k = 0; k < k##__c; ++k) { __VA_ARGS__ } \
        } else {                                                  \
            for (; k##__m; k##__m &= k##__m - 1u) {               \
                uint32_t k = (uint32_t)(wh_ffs64(k##__m) - 1);    \
                __VA_ARGS__                                       \
            }                                                     \
        }                                                         \
    } while (0)

/* The next object, or 0 when done. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_soa_iter_next(wh_soa_iter *it, const wh_soa *s) {
    if (!it->slots) {
        uint64_t a;
        if (!wh_soa_iter_next_block(it, s, &a)) return 0;
        it->slots = a;
    }
    uint32_t slot = (uint32_t)(wh_ffs64(it->slots) - 1);
    it->slots &= it->slots - 1u;
    return it->cur | slot;
}

#endif /* WARPHEAP_SOA_DO_H */
