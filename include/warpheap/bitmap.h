/* SPDX-License-Identifier: MIT */
/* Hierarchical lock-free bitmap.
 *
 * Implements DynaSOAr (Springer & Masuhara, ECOOP 2019) section 4.1 and
 * appendix A.5: 64-bit containers at level 0, and above them a nested bitmap
 * with one bit per container, set iff that container is non-zero, repeated
 * until one word is left.  Searches descend from that top word, so finding a
 * set bit costs one load per level, and enumeration skips empty containers.
 *
 * Departure from the paper, for independent thread scheduling (Volta and
 * later).  The paper keeps upper levels exact by *retrying* set/clear on the
 * summary bit until this thread flips it, which makes a thread wait for a
 * summary update that another thread has yet to do -- possibly a lane of its
 * own warp.  Here a summary bit is *re-derived* instead: the thread that changed
 * a container from zero to non-zero (or back) reads the container, writes the
 * summary bit to match (idempotent or/and), and reads the container again; if
 * it changed meanwhile, it repeats.  The summary writes are acq_rel
 * read-modify-writes, so each one reads from the one before it in the summary
 * word's order and synchronizes with it: the thread of the last one has seen
 * every container change whose thread wrote the summary before, and a change
 * whose thread had not yet written it would be followed by that later write.
 * So the last write is followed by a read (relaxed: after the acquire) that
 * saw the container's final zero-ness, and all levels are consistent once
 * every operation has returned (the paper's A.5 guarantee), while no thread
 * ever waits for another: a repeat happens only because some other thread
 * completed a change.  Each loop is still bounded.  (Sequentially consistent
 * reads and writes, three fences a step on the GPU, cost a 16-B free-all a
 * tenth of its time.)
 *
 * Memory is placed by the caller, host or device memory alike; on the GPU it
 * is global memory, not shared memory (the word atomics are `atom.global`).
 * A wh_bitmap is a small descriptor, passed by value to kernels.  Every
 * operation here is header-only and runs on the GPU and on the CPU backend;
 * bulk operations (fill, count, check, indices) are in bitmap_host.c and
 * bitmap_cuda.cu.
 */
#ifndef WARPHEAP_BITMAP_H
#define WARPHEAP_BITMAP_H

#include "warpheap/warpheap.h"

#define WH_BITMAP_MAX_LEVELS  6           /* 64^6 bits: beyond any uint32 index */
#define WH_BITMAP_MAX_BITS    0xFFFFFFC0u /* indices are uint32_t              */
#define WH_BITMAP_NONE        0xFFFFFFFFu /* "no bit found"                    */
/* Bound on every retry loop in this file.  Reaching it needs that many other
 * operations to complete in between, on the same words: it reports contention
 * far beyond any real workload, never a wait on a stalled thread.  The waits
 * of wh_bitmap_set and wh_bitmap_clear are wh_wait's: on the CPU backend,
 * that many microseconds. */
#define WH_BITMAP_RETRY_LIMIT (1u << 20)

typedef struct wh_bitmap {
    uint64_t *words;                       /* all levels, level 0 first     */
    uint32_t nbits;                        /* bits at level 0               */
    uint32_t levels;                       /* 1 .. WH_BITMAP_MAX_LEVELS     */
    uint32_t offset[WH_BITMAP_MAX_LEVELS]; /* first word of each level      */
} wh_bitmap;

/* ---- layout ---------------------------------------------------------------- */

/* Bits held by level l: nbits at level 0, one per container of level l-1 above. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_bitmap_level_bits(const wh_bitmap *bm, uint32_t l) {
    return l == 0 ? bm->nbits : bm->offset[l] - bm->offset[l - 1];
}
WH_INLINE WH_HOST_DEVICE uint32_t wh_bitmap_level_words(const wh_bitmap *bm, uint32_t l) {
    return (wh_bitmap_level_bits(bm, l) + 63u) / 64u;
}
/* Level 0 starts at the first word (offset[0] is 0): a word of it needs no
 * look into the table. */
WH_INLINE WH_HOST_DEVICE uint64_t *wh_bitmap_word(const wh_bitmap *bm, uint32_t l, uint32_t i) {
    return bm->words + (l ? bm->offset[l] : 0u) + i;
}

/* Describe a bitmap of nbits bits in mem (8-byte aligned, wh_bitmap_bytes()
 * large, contents undefined until a fill).  mem may be NULL to only compute
 * the layout.  Touches no memory. */
WH_INLINE WH_HOST_DEVICE wh_status wh_bitmap_layout(wh_bitmap *bm, void *mem, uint64_t nbits) {
    if (!bm || nbits == 0 || nbits > WH_BITMAP_MAX_BITS) return WH_ERR_INVALID_ARGUMENT;
    if ((uintptr_t)mem % 8u) return WH_ERR_INVALID_ARGUMENT;
    bm->words = (uint64_t *)mem;
    bm->nbits = (uint32_t)nbits;
    uint32_t words = (uint32_t)((nbits + 63u) / 64u), off = 0, l = 0;
    for (;;) {
        bm->offset[l++] = off;
        off += words;
        if (words == 1) break;
        words = (words + 63u) / 64u;
    }
    bm->levels = l;
    for (; l < WH_BITMAP_MAX_LEVELS; ++l) bm->offset[l] = off; /* end marker */
    return WH_OK;
}
/* Total words / bytes for nbits bits, all levels. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_bitmap_words_for(uint64_t nbits) {
    wh_bitmap bm;
    if (wh_bitmap_layout(&bm, (void *)0, nbits) != WH_OK) return 0;
    return bm.offset[WH_BITMAP_MAX_LEVELS - 1];
}
WH_INLINE WH_HOST_DEVICE size_t wh_bitmap_bytes(uint64_t nbits) {
    return (size_t)wh_bitmap_words_for(nbits) * sizeof(uint64_t);
}
/* The value word i of level l holds when the bitmap is all zeros or all ones:
 * bits past the end of a level are always zero. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_bitmap_fill_word(const wh_bitmap *bm, uint32_t l, uint32_t i, bool ones) {
    if (!ones) return 0;
    uint32_t bits = wh_bitmap_level_bits(bm, l);
    uint32_t first = i * 64u;
    if (first + 64u <= bits) return ~0ull;
    return (1ull << (bits - first)) - 1ull; /* bits - first in 1..63 */
}

/* ---- summary maintenance ----------------------------------------------------- */

/* The summary walk's way up, from level 0's bit count alone: level l's first
 * word (returned) and its words (*words; 1 at the top).  The walk reads no
 * table, so a descriptor made on the fly (the heap's class bitmaps) is, to
 * the compiler, its words and nbits: no table in local memory. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__bitmap_up(uint32_t off, uint32_t *words) {
    off += *words;
    *words = (*words + 63u) / 64u;
    return off;
}
WH_INLINE WH_HOST_DEVICE uint32_t wh__bitmap_level_at(const wh_bitmap *bm, uint32_t l, uint32_t *words) {
    uint32_t off = 0;
    *words = (uint32_t)(((uint64_t)bm->nbits + 63u) / 64u);
    for (; l > 0; --l) off = wh__bitmap_up(off, words);
    return off;
}

/* Container c of level l just changed between zero and non-zero (by this
 * thread).  Re-derive its summary bit, and go up while that changes a summary
 * word between zero and non-zero.  See the header comment for why this is
 * enough and never waits for another thread. */
WH_INLINE WH_HOST_DEVICE wh_status wh__bitmap_propagate(const wh_bitmap *bm, uint32_t l, uint32_t c) {
    uint32_t words, off = wh__bitmap_level_at(bm, l, &words);
    for (; words > 1u; c >>= 6) { /* level l is below the top */
        uint64_t *below = bm->words + off + c;
        off = wh__bitmap_up(off, &words);
        uint64_t *above = bm->words + off + (c >> 6);
        uint64_t bit = 1ull << (c & 63u);
        bool flipped = false; /* did we change above's zero-ness? */
        for (uint32_t n = 0;; ++n) {
            if (n == WH_BITMAP_RETRY_LIMIT) return WH_ERR_RETRY_LIMIT;
            bool nz = wh_atomic_load(below, WH_RELAXED) != 0;
            uint64_t prev = nz ? wh__atomic_or64(above, bit, WH_ACQ_REL) : wh__atomic_and64(above, ~bit, WH_ACQ_REL);
            uint64_t now = nz ? (prev | bit) : (prev & ~bit);
            flipped |= (prev == 0) != (now == 0);
            if ((wh_atomic_load(below, WH_RELAXED) != 0) == nz) break;
        }
        if (!flipped) break;
    }
    return WH_OK;
}

/* Which of the words c0 .. c0+n-1 of a level (its first word: level) are
 * non-zero (bit (c0 + i) % 64 for word c0 + i).  On the GPU the loads are
 * relaxed after one sequentially consistent fence, so that they are in
 * flight together; on the CPU each is seq_cst (ThreadSanitizer does not
 * model stand-alone fences).  Either way each load is ordered after
 * everything this thread did before, as a seq_cst load is. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__bitmap_nonzero(uint64_t *level, uint32_t c0, uint32_t n) {
    uint64_t nz = 0;
#if WH_ON_GPU
    wh_fence();
#define WH__SPAN_LOAD_MO WH_RELAXED
#else
#define WH__SPAN_LOAD_MO WH_SEQ_CST
#endif
    for (uint32_t i = 0; i < n; ++i)
        nz |= (uint64_t)(wh_atomic_load(level + c0 + i, WH__SPAN_LOAD_MO) != 0) << ((c0 + i) & 63u);
#undef WH__SPAN_LOAD_MO
    return nz;
}

/* wh__bitmap_propagate for containers c0 .. c0+n-1 of level l at once (all
 * under one summary word: c0 % 64 + n <= 64), each of which this thread may
 * have changed between zero and non-zero: each round reads them all, sets the
 * summary bits of the non-zero ones with one or and clears the others' with
 * one and-not, and reads them all again -- the header's argument, bit by bit.
 * One after the other, the 16 page words of a 1024-page bump segment cost
 * 16 x 3 dependent round trips (heap/slab_segment.h: wh__seg_claim_run). */
WH_INLINE WH_HOST_DEVICE wh_status wh__bitmap_propagate_span(const wh_bitmap *bm, uint32_t l, uint32_t c0, uint32_t n) {
    uint32_t words, off = wh__bitmap_level_at(bm, l, &words);
    if (words <= 1u || n == 0) return WH_OK; /* level l is the top */
    uint64_t *level = bm->words + off, *above = bm->words + off + words + (c0 >> 6);
    uint64_t span = (n >= 64u ? ~0ull : (1ull << n) - 1u) << (c0 & 63u);
    uint64_t nz = wh__bitmap_nonzero(level, c0, n);
    bool flipped = false;
    for (uint32_t k = 0;; ++k) {
        if (k == WH_BITMAP_RETRY_LIMIT) return WH_ERR_RETRY_LIMIT;
        if (nz) {
            uint64_t prev = wh__atomic_or64(above, nz, WH_SEQ_CST);
            flipped |= prev == 0; /* now non-zero */
        }
        if (span & ~nz) {
            uint64_t prev = wh__atomic_and64(above, ~(span & ~nz), WH_SEQ_CST);
            flipped |= prev != 0 && (prev & ~(span & ~nz)) == 0;
        }
        uint64_t again = wh__bitmap_nonzero(level, c0, n);
        if (again == nz) break;
        nz = again;
    }
    return flipped ? wh__bitmap_propagate(bm, l + 1, c0 >> 6) : WH_OK;
}

/* ---- word operations (the building blocks; also used for coalesced claims) ---- */

/* Set the bits of mask in level-0 word w; returns the word before.  Release:
 * a set bit hands something out (a free slot, a free page), and the claim
 * that clears it (wh_bitmap_and_not_word, acq_rel) acquires it; the setter
 * reads nothing through the bit, so it needs no acquire (on the GPU an
 * acquire empties the SM's L1). */
WH_INLINE WH_HOST_DEVICE uint64_t wh_bitmap_or_word(const wh_bitmap *bm, uint32_t w, uint64_t mask) {
    /* a word of the bitmap, and never a bit past nbits in the last one */
    WH_ASSERT(w < wh_bitmap_level_words(bm, 0));
    WH_ASSERT(w + 1u < wh_bitmap_level_words(bm, 0) || !(bm->nbits & 63u) || !(mask >> (bm->nbits & 63u)));
    uint64_t prev = wh__atomic_or64(wh_bitmap_word(bm, 0, w), mask, WH_RELEASE);
    if (prev == 0 && mask != 0) (void)wh__bitmap_propagate(bm, 0, w);
    return prev;
}
/* Clear the bits of mask in level-0 word w; returns the word before.  The bits
 * this thread actually cleared are prev & mask.  Acq_rel: the claim acquires
 * what the setters released with the bits (wh__bitmap_and_not_mo: relaxed,
 * for a caller that acquired them already). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__bitmap_and_not_mo(const wh_bitmap *bm, uint32_t w, uint64_t mask, int mo) {
    WH_ASSERT(w < wh_bitmap_level_words(bm, 0));
    uint64_t prev = wh__atomic_and64(wh_bitmap_word(bm, 0, w), ~mask, mo);
    if (prev != 0 && (prev & ~mask) == 0) (void)wh__bitmap_propagate(bm, 0, w);
    return prev;
}
WH_INLINE WH_HOST_DEVICE uint64_t wh_bitmap_and_not_word(const wh_bitmap *bm, uint32_t w, uint64_t mask) {
    return wh__bitmap_and_not_mo(bm, w, mask, WH_ACQ_REL);
}

/* ---- single bits --------------------------------------------------------------- */

WH_INLINE WH_HOST_DEVICE bool wh_bitmap_get(const wh_bitmap *bm, uint32_t i) {
    WH_ASSERT(i < bm->nbits);
    return (wh_atomic_load(wh_bitmap_word(bm, 0, i >> 6), WH_ACQUIRE) >> (i & 63u)) & 1u;
}
/* 0 -> 1; true if this call flipped it. */
WH_INLINE WH_HOST_DEVICE bool wh_bitmap_try_set(const wh_bitmap *bm, uint32_t i) {
    uint64_t bit = 1ull << (i & 63u);
    return !(wh_bitmap_or_word(bm, i >> 6, bit) & bit);
}
/* 1 -> 0; true if this call flipped it. */
WH_INLINE WH_HOST_DEVICE bool wh_bitmap_try_clear(const wh_bitmap *bm, uint32_t i) {
    uint64_t bit = 1ull << (i & 63u);
    return (wh_bitmap_and_not_word(bm, i >> 6, bit) & bit) != 0;
}
/* Retrying forms (the paper's set/clear): flip the bit, waiting -- boundedly,
 * with back-off -- while it is in the target state because another thread has
 * not yet done its opposite operation.  WH_ERR_RETRY_LIMIT if it never came. */
WH_INLINE WH_HOST_DEVICE wh_status wh_bitmap_set(const wh_bitmap *bm, uint32_t i) {
    for (wh_wait w = wh_wait_begin(WH_BITMAP_RETRY_LIMIT); wh_wait_more(&w); wh_wait_backoff(&w, ~0u))
        if (wh_bitmap_try_set(bm, i)) return WH_OK;
    return WH_ERR_RETRY_LIMIT;
}
WH_INLINE WH_HOST_DEVICE wh_status wh_bitmap_clear(const wh_bitmap *bm, uint32_t i) {
    for (wh_wait w = wh_wait_begin(WH_BITMAP_RETRY_LIMIT); wh_wait_more(&w); wh_wait_backoff(&w, ~0u))
        if (wh_bitmap_try_clear(bm, i)) return WH_OK;
    return WH_ERR_RETRY_LIMIT;
}

/* ---- search ---------------------------------------------------------------------- */

/* Bit of w chosen by rotation: the first set bit at or after position rot,
 * wrapping.  w must be non-zero. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__bitmap_pick(uint64_t w, unsigned rot) {
    rot &= 63u;
    return ((uint32_t)wh_ffs64(wh_rotr64(w, rot)) - 1u + rot) & 63u;
}
/* Rotation for level l out of a 64-bit seed: 6 fresh bits per level. */
WH_INLINE WH_HOST_DEVICE unsigned wh__bitmap_rot(uint64_t seed, uint32_t l) {
    return (unsigned)(seed >> (6u * l)) & 63u;
}

/* Descend from the top word to a level-0 word that looked non-zero.  Returns
 * its index, or WH_BITMAP_NONE with *empty set when the top word is zero (the
 * bitmap is empty, up to summaries still in flight) and clear when a lower word
 * was found empty (a transient inconsistency: worth another try). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__bitmap_descend(const wh_bitmap *bm, uint64_t seed, bool *empty) {
    if (bm->levels == 1) { /* the top word is the only container */
        *empty = wh_atomic_load(wh_bitmap_word(bm, 0, 0), WH_RELAXED) == 0;
        return *empty ? WH_BITMAP_NONE : 0u;
    }
    uint32_t c = 0;
    for (uint32_t l = bm->levels - 1; l > 0; --l) {
        uint64_t w = wh_atomic_load(wh_bitmap_word(bm, l, c), WH_RELAXED);
        if (!w) {
            *empty = (l == bm->levels - 1);
            return WH_BITMAP_NONE;
        }
        c = c * 64u + wh__bitmap_pick(w, wh__bitmap_rot(seed, l));
    }
    return c;
}

/* Position of some set bit (which one depends on seed: threads with different
 * seeds spread over different containers -- the paper's bitmap rotation), or
 * WH_BITMAP_NONE.  As in the paper, the answer may be stale by the time it is
 * used, and may be NONE under contention although bits are set. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_bitmap_try_find_set(const wh_bitmap *bm, uint64_t seed) {
    bool empty = false;
    uint32_t w = wh__bitmap_descend(bm, seed, &empty);
    if (w == WH_BITMAP_NONE) return WH_BITMAP_NONE;
    uint64_t v = wh_atomic_load(wh_bitmap_word(bm, 0, w), WH_RELAXED);
    if (!v) return WH_BITMAP_NONE;
    return w * 64u + wh__bitmap_pick(v, wh__bitmap_rot(seed, 0));
}

/* Claim up to want (1..64) set bits of one level-0 word, clearing them.
 * Returns the word index and stores the claimed bits in *got (0 if none).
 * This is the coalesced form: a warp leader claims for the whole warp with one
 * atomic.  want == 0 claims nothing (NONE); want > 64 is taken as 64.  When the chosen word is taken away under us we try the bits still
 * left in it before descending again; the search gives up (NONE, *got = 0)
 * when the bitmap looks empty from the top or after the retry bound. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_bitmap_claim(const wh_bitmap *bm, uint64_t seed, unsigned want, uint64_t *got) {
    *got = 0;
    if (want == 0) return WH_BITMAP_NONE;
    for (uint32_t n = 0; n < WH_BITMAP_RETRY_LIMIT; ++n) {
        bool empty = false;
        uint32_t w = wh__bitmap_descend(bm, seed, &empty);
        if (w == WH_BITMAP_NONE) {
            if (empty) return WH_BITMAP_NONE;
        } else {
            uint64_t v = wh_atomic_load(wh_bitmap_word(bm, 0, w), WH_RELAXED);
            unsigned rot = wh__bitmap_rot(seed, 0);
            for (unsigned tries = 0; v && tries < 64u; ++tries) {
                /* the first want set bits from the rotation point on, wrapping */
                uint64_t r = wh_rotr64(v, rot), rest = r;
                for (unsigned k = 0; k < want && rest; ++k) rest &= rest - 1;
                uint64_t take = wh_rotl64(r ^ rest, rot);
                uint64_t prev = wh_bitmap_and_not_word(bm, w, take);
                if (prev & take) {
                    *got = prev & take;
                    return w;
                }
                v = prev; /* someone took them: what is left */
            }
        }
        if (n >= 2) wh_backoff(n - 2); /* contended: let the winners move on */
        seed = wh_hash64(seed + n);
    }
    return WH_BITMAP_NONE;
}

/* Clear and return some set bit: "allocate a bit".  WH_BITMAP_NONE when the
 * bitmap looks empty. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_bitmap_find_and_clear(const wh_bitmap *bm, uint64_t seed) {
    uint64_t got;
    uint32_t w = wh_bitmap_claim(bm, seed, 1u, &got);
    return w == WH_BITMAP_NONE ? WH_BITMAP_NONE : w * 64u + (uint32_t)(wh_ffs64(got) - 1);
}

/* Set bits among level-0 words [w0, w1). */
WH_INLINE WH_HOST_DEVICE uint64_t wh_bitmap_count_words(const wh_bitmap *bm, uint32_t w0, uint32_t w1) {
    uint64_t n = 0;
    for (uint32_t w = w0; w < w1; ++w) n += (uint64_t)wh_popc64(wh_atomic_load(wh_bitmap_word(bm, 0, w), WH_RELAXED));
    return n;
}

/* ---- host functions (bitmap_host.c) ------------------------------------------------ */
WH_EXTERN_C_BEGIN

/* Lay out and fill a bitmap in host memory (all zeros or all ones). */
WH_API wh_status wh_bitmap_init_host(wh_bitmap *bm, void *mem, uint64_t nbits, bool ones);
/* Number of set bits; bitmap in host memory, no operation in flight. */
WH_API uint64_t wh_bitmap_count_host(const wh_bitmap *bm);
/* Number of broken invariants: summary bits that disagree with their container,
 * and bits set past the end of a level.  0 means consistent (paper, Def. A.1). */
WH_API uint64_t wh_bitmap_check_host(const wh_bitmap *bm);
/* Indices of all set bits, ascending, into out (room for count bits); visits
 * only containers whose summary bits are set.  Returns how many. */
WH_API uint32_t wh_bitmap_indices_host(const wh_bitmap *bm, uint32_t *out);
/* Same layout over other memory (e.g. a host copy of a device bitmap). */
WH_API wh_bitmap wh_bitmap_rebase(const wh_bitmap *bm, void *mem);

WH_EXTERN_C_END

#endif /* WARPHEAP_BITMAP_H */
