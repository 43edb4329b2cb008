/* SPDX-License-Identifier: MIT */
/* CIRCULAR_FUSED: Circular Fused Malloc (CFMalloc), register-efficient-gpu-
 * allocators.txt section 5.3 -- CMalloc (section 5.2, Algorithm 3) with the
 * used flag fused into the next-offset word, so that a walk step reads one
 * word and a lock, a split, a merge and a free each write one.
 * CIRCULAR_FUSED_MULTI (CFMMalloc, section 5.4): the same with one cursor and
 * one pre-split sub-heap per SM.
 *
 * The list, its pre-split (equation 1, per sub-heap for MULTI), MAX_FRAG, the
 * cursors and the sub-heap rules are those of heap/circular.h, whose helpers
 * this file uses; only the header word and the steps that touch it differ.
 *
 * Departures:
 * - The paper fuses a 1-bit flag with a 31-bit offset in 4-byte words: 8 GB at
 *   most.  Here the fused word is 64 bits: the next chunk's 16-byte unit in
 *   the high half (arenas up to 64 GiB, WH_HEAP_MAX_BYTES) and a 32-bit tag in
 *   the low half.  Read as bytes it is exactly the CIRCULAR header's flag and
 *   next (little-endian), so the pre-split, the sentinel and the heap walk are
 *   shared; the request size stays in the header's second word for the
 *   walk's equation 2.
 * - The tag is a magic value, not one bit, for the reasons heap/circular.h
 *   gives (a stale walker must be able to tell a header from user data), and
 *   a chunk absorbed by a merge is tagged GONE: a second free of a chunk that
 *   a neighbour has since absorbed is then counted as a double free instead
 *   of splicing a chunk into the middle of another.  Walkers treat GONE as
 *   used (they step over it to its next, which was a header when it went).
 * - Because flag and next are one word, the lock is a CAS of the whole word:
 *   it succeeds only if the chunk is still free *and* still ends where the
 *   walker read, so a walker never acts on a next that changed under it (the
 *   separate CMalloc words need a re-read after the lock).
 * - A walker that loses the lock race reads the word once more before it
 *   steps on (see wh__circf_malloc): the paper's single-word step would take
 *   the next of the moment of the lock, before the winner's split.
 * - Everything else as CIRCULAR: bounded walks (one turn of the ring in units
 *   and WH_HEAP_RETRY_LIMIT chunks, then NULL, counted), bounded absorption of
 *   free followers by a walker whose chunk is too small, cursors moved off
 *   absorbed headers, free points the cursor at the chunk it frees, chunks of
 *   different sub-heaps never merge.
 */
#ifndef WARPHEAP_HEAP_FUSED_H
#define WARPHEAP_HEAP_FUSED_H

#include "warpheap/heap/circular.h"

WH_INLINE WH_HOST_DEVICE uint64_t *wh__circf_word(const wh_heap *h, uint32_t unit) {
    return (uint64_t *)(h->base + (uint64_t)unit * 16u);
}
WH_INLINE WH_HOST_DEVICE uint64_t wh__circf_pack(uint32_t tag, uint32_t next) { return (uint64_t)next << 32 | tag; }
WH_INLINE WH_HOST_DEVICE uint32_t wh__circf_tag(uint64_t w) { return (uint32_t)w; }
WH_INLINE WH_HOST_DEVICE uint32_t wh__circf_next(uint64_t w) { return (uint32_t)(w >> 32); }

/* Lock the free chunk at unit `at` (word w as read, ending at next) as the
 * GONE part of a merge; false if it is not free or changed since. */
WH_INLINE WH_HOST_DEVICE bool wh__circf_take(const wh_heap *h, uint32_t at, uint64_t w) {
    uint32_t next = wh__circf_next(w);
    if (wh__circf_tag(w) != WH_CIRC_FREE || next <= at || next > h->end) return false;
    return wh_atomic_cas(wh__circf_word(h, at), &w, wh__circf_pack(WH_CIRC_GONE, next), WH_ACQ_REL, WH_RELAXED);
}

/* The walker holds [off, next) locked and needs `need` units: absorb free
 * chunks after it (bounded, own sub-heap only); returns its new next. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circf_absorb(const wh_heap *h, uint32_t off, uint32_t next, uint32_t need) {
    uint32_t seg = wh__circ_subheap(h, off);
    for (uint32_t k = 0; k < WH_CIRC_MERGES && next < h->end && next - off < need; ++k) {
        if (wh__circ_subheap(h, next) != seg) break;
        uint64_t w = wh_atomic_load(wh__circf_word(h, next), WH_ACQUIRE);
        if (!wh__circf_take(h, next, w)) break;
        wh_atomic_store(wh__circf_word(h, off), wh__circf_pack(WH_CIRC_USED, wh__circf_next(w)), WH_RELEASE);
        wh__circ_absorbed(h, off, next);
        next = wh__circf_next(w);
    }
    return next;
}

WH_INLINE WH_HOST_DEVICE void *wh__circf_malloc(const wh_heap *h, uint64_t bytes) {
    wh_circ_walk wk;
    if (!wh__circ_walk_begin(h, bytes, &wk)) return (void *)0;
    while (wh__circ_walk_on(h, &wk)) {
        uint32_t off = wk.off, need = wk.need;
        uint64_t *word = wh__circf_word(h, off);
        uint64_t w = wh_atomic_load(word, WH_ACQUIRE);
        uint32_t next = wh__circf_next(w), tag = wh__circf_tag(w);
        /* one CAS locks the chunk and pins its end (Algorithm 3, line 5) */
        if (tag == WH_CIRC_FREE && next > off && next <= h->end &&
            wh_atomic_cas(word, &w, wh__circf_pack(WH_CIRC_USED, next), WH_ACQ_REL, WH_ACQUIRE)) {
            next = wh__circf_absorb(h, off, next, need);
            if (next - off >= need) {
                uint32_t cut = wh__circ_cut(off, next, need);
                if (cut != next) { /* lines 14-20 */
                    wh_atomic_store(&wh__circ_hdr(h, cut)->req, 0ull, WH_RELAXED);
                    wh_atomic_store(wh__circf_word(h, cut), wh__circf_pack(WH_CIRC_FREE, next), WH_RELEASE);
                    wh_atomic_store(word, wh__circf_pack(WH_CIRC_USED, cut), WH_RELEASE); /* publish */
                }
                wh_atomic_store(&wh__circ_hdr(h, off)->req, bytes, WH_RELAXED);
                wh__circ_advance(h, wk.cursor, wk.seg, cut);
                return (uint8_t *)word + 16;
            }
            wh_atomic_store(word, wh__circf_pack(WH_CIRC_FREE, next), WH_RELEASE); /* too small */
        } else {
            /* A lost CAS returns the word at the winner's lock, before its
             * split is published: stepping to that next would skip the whole
             * remainder, so walkers that lose races scatter ahead of the
             * cursor.  One more read finds the split point, as CMalloc's
             * separate read of next does (64-B utilisation 0.14 without
             * it, 0.29 with it, CIRCULAR 0.38). */
            if (tag == WH_CIRC_FREE && wh__circf_next(w) == next) w = wh_atomic_load(word, WH_ACQUIRE);
            next = wh__circf_next(w);
            tag = wh__circf_tag(w);
        }
        wh__circ_step(h, &wk, next, tag == WH_CIRC_FREE || tag == WH_CIRC_USED || tag == WH_CIRC_GONE);
    }
    return (void *)0;
}

/* Free (Algorithm 3, lines 23-33): merge with the next chunk if it is free,
 * then one CAS writes the free tag and the (merged) next together.  A pointer
 * that is not a used chunk is counted as foreign, a free or absorbed one as a
 * double free. */
WH_INLINE WH_HOST_DEVICE void wh__circf_free(const wh_heap *h, void *p) {
    uint32_t off = wh__circ_unit_of(h, p);
    if (off == UINT32_MAX) return;
    uint64_t *word = wh__circf_word(h, off);
    uint64_t w = wh_atomic_load(word, WH_ACQUIRE);
    uint32_t tag = wh__circf_tag(w), next = wh__circf_next(w), merged = next;
    if (tag != WH_CIRC_USED || next <= off || next > h->end) {
        bool freed = tag == WH_CIRC_FREE || tag == WH_CIRC_GONE;
        wh__heap_count(freed ? &h->ctl->double_frees : &h->ctl->foreign_frees);
        return;
    }
    if (next < h->end && wh__circ_subheap(h, next) == wh__circ_subheap(h, off)) { /* merge with next */
        uint64_t nw = wh_atomic_load(wh__circf_word(h, next), WH_ACQUIRE);
        if (wh__circf_take(h, next, nw)) merged = wh__circf_next(nw);
    }
    /* the cursor points here while the chunk is still ours: whoever absorbs
     * it later finds the cursor and moves it (and no cursor is left on the
     * header just absorbed: it is of this sub-heap, whose cursor this is) */
    wh_atomic_store(wh__circ_cursor_of(h, wh__circ_subheap(h, off)), (uint64_t)off, WH_RELAXED);
    uint64_t req = wh_atomic_load(&wh__circ_hdr(h, off)->req, WH_RELAXED);
    wh_atomic_store(&wh__circ_hdr(h, off)->req, 0ull, WH_RELAXED);
    if (!wh_atomic_cas(word, &w, wh__circf_pack(WH_CIRC_FREE, merged), WH_ACQ_REL, WH_RELAXED)) {
        /* a concurrent free of the same pointer won: give back the neighbour */
        if (merged != next) wh_atomic_store(wh__circf_word(h, next), wh__circf_pack(WH_CIRC_FREE, merged), WH_RELEASE);
        wh__heap_count(&h->ctl->double_frees);
        return;
    }
    wh__heap_track(h, -(int64_t)req);
}

#endif /* WARPHEAP_HEAP_FUSED_H */
