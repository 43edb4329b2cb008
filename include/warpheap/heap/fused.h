/* SPDX-License-Identifier: MIT */
/* CIRCULAR_FUSED: Circular Fused Malloc (CFMalloc), register-efficient-gpu-
 * allocators.txt section 5.3 -- CMalloc (section 5.2, Algorithm 3) with the
 * used flag fused into the next-offset word, so that a walk step reads one
 * word.  CIRCULAR_FUSED_MULTI (CFMMalloc, section 5.4): the same with one
 * cursor and one pre-split sub-heap per SM.
 *
 * The list, its pre-split (equation 1, per sub-heap for MULTI), MAX_FRAG, the
 * out-of-band states, the cursors and the sub-heap rules are those of
 * heap/circular.h, whose helpers this file uses; only the walk step differs.
 *
 * Departures:
 * - The flag that decides is the out-of-band state of heap/circular.h: the
 *   lock, a merge and a free are CASes on it, never on the arena, for the
 *   reason given there (a stale walker may reach user data).  What is fused
 *   is a copy: the header's first 64-bit word holds a tag (WH_CIRC_TAG of the
 *   state, a magic value) in the low half and the next chunk's 16-byte unit
 *   in the high half (arenas up to 64 GiB, where the paper's 1-bit flag and
 *   31-bit offset reach 8 GB).  A walk step reads that one word, and goes to
 *   the states only for a chunk whose tag says free.  The chunk's owner keeps
 *   the tag: USED once it holds the lock, FREE before it gives the chunk back
 *   (before the state, which publishes it).  A tag read from a header that
 *   changed since, or from user data, only costs a CAS that fails.
 * - Read as bytes the word is exactly the CIRCULAR header's tag and next
 *   (little-endian), so the pre-split, the sentinel and the heap walk are
 *   shared; the request size stays in the header's second word for the
 *   walk's equation 2.
 * - A walker whose CAS fails reads the word once more before it steps on
 *   (see wh__circf_malloc): the tag said free, so the word it read may be the
 *   one of the moment of the winner's lock, before the winner's split.
 * - Everything else as CIRCULAR: bounded walks (one turn of the ring in units
 *   and WH_HEAP_RETRY_LIMIT chunks, then NULL, counted), bounded absorption of
 *   free followers by a walker whose chunk is too small, absorbed headers
 *   GONE (a second free of one is a double free), cursors moved off absorbed
 *   headers, free points the cursor at the chunk it frees, chunks of
 *   different sub-heaps never merge.
 */
#ifndef WARPHEAP_HEAP_FUSED_H
#define WARPHEAP_HEAP_FUSED_H

#include "warpheap/heap/circular.h"

WH_INLINE WH_HOST_DEVICE uint32_t wh__circf_tag(uint64_t w) { return (uint32_t)w; }
WH_INLINE WH_HOST_DEVICE uint32_t wh__circf_next(uint64_t w) { return (uint32_t)(w >> 32); }
/* Whether a tag is a header's (not user data that a stale walker reached). */
WH_INLINE WH_HOST_DEVICE bool wh__circf_header(uint32_t tag) {
    return (tag & ~3u) == WH_CIRC_TAG(0u) && (tag & 3u) != WH_CIRC_NONE;
}

WH_INLINE WH_HOST_DEVICE void *wh__circf_malloc(const wh_heap *h, uint64_t bytes) {
    wh_circ_walk wk;
    if (!wh__circ_walk_begin(h, bytes, &wk)) return (void *)0;
    while (wh__circ_walk_on(h, &wk)) {
        uint32_t off = wk.off, state;
        uint64_t w = wh__circ_peek(h, off); /* tag and next in one read */
        uint32_t next = wh__circf_next(w), tag = wh__circf_tag(w);
        if (tag == WH_CIRC_TAG(WH_CIRC_FREE)) {
            if (wh__circ_state_cas(h, off, WH_CIRC_FREE, WH_CIRC_USED, &state)) {
                void *p = wh__circ_take(h, &wk, bytes, &next, true);
                if (p) return p;
            } else {
                /* The word may be the one of the winner's lock, before its
                 * split is published: stepping to that next would skip the
                 * whole remainder, so walkers that lose races scatter ahead
                 * of the cursor.  One more read finds the split point, as
                 * CMalloc's read of next after its CAS does (64-B
                 * utilisation 0.14 without it, 0.29 with it, CIRCULAR 0.38). */
                w = wh__circ_peek(h, off);
                next = wh__circf_next(w);
                tag = wh__circf_tag(w);
            }
        }
        wh__circ_step(h, &wk, next, wh__circf_header(tag));
    }
    return (void *)0;
}

/* Free (Algorithm 3, lines 23-33): merge with the next chunk if it is free,
 * tag the chunk free, then its state.  A pointer that is not a used chunk's
 * is counted as foreign, a free or absorbed one's as a double free. */
WH_INLINE WH_HOST_DEVICE void wh__circf_free(const wh_heap *h, void *p) { wh__circ_free_as(h, p, true); }

#endif /* WARPHEAP_HEAP_FUSED_H */
