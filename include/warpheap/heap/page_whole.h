/* SPDX-License-Identifier: MIT */
/* Whole page words: a summary of the page bitmap that says which of its
 * words are wholly free, so that a segment's preparation finds an aligned
 * run of 64 or more free pages where one is left (heap/slab_segment.h,
 * wh__seg_scan_run).  The page bitmap's own summary says only that a word
 * has a free page: near the end of a fill, a few wholly free groups of
 * words hide among many partly free ones, and a bounded search of that
 * summary missed them (at 256 B, a refill round with one failed
 * preparation, while 8-10 whole runs were left, ran a third slower).
 *
 * Bit i of whole word k: page word 64k + i was wholly free when last seen.
 * A hint, kept cheaply, on which no correctness rests (a run is taken by
 * and-nots of the page words themselves, which fail over a taken page):
 *   - a thread whose or fills a page word sets its bit (wh__pages_or);
 *   - a thread that took pages clears the bits of their words
 *     (wh__whole_taken): nobody fills those words again before its pages
 *     come back, so no set that the clear could undo is in flight;
 *   - an or that filled a word whose pages are taken again before its bit
 *     is set leaves the bit over a partly used word: a search that follows
 *     it loses a take (and puts back what it took), nothing more, until
 *     the word is taken from again.
 * So, at rest, every wholly free word has its bit (the walk checks it): a
 * clear never undoes a set, because the clearing thread holds a page of the
 * word, and the set comes only after that page is back. */
#ifndef WARPHEAP_HEAP_PAGE_WHOLE_H
#define WARPHEAP_HEAP_PAGE_WHOLE_H

#include "warpheap/heap/core.h"

/* Words of the whole-word summary of a heap of npages pages. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__whole_words(uint32_t npages) {
    return (uint32_t)((((uint64_t)npages + 63u) / 64u + 63u) / 64u);
}

/* Whole word k of an empty heap: every full page word (a last, partial one
 * never fills). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__whole_empty(uint32_t npages, uint32_t k) {
    uint64_t full = npages / 64u, below = 64ull * k;
    if (full <= below) return 0;
    return full - below >= 64u ? ~0ull : (1ull << (full - below)) - 1u;
}

/* Or mask into page word w; returns the word before.  The or that fills
 * the word sets its whole bit. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__pages_or(const wh_heap *h, uint32_t w, uint64_t mask) {
    uint64_t prev = wh_bitmap_or_word(&h->pages, w, mask);
    if (prev != ~0ull && (prev | mask) == ~0ull)
        (void)wh__atomic_or64(&h->page_whole[w >> 6], 1ull << (w & 63u), WH_ACQ_REL);
    return prev;
}
/* Page p, emptied of its class by this thread, back to the pool: its info
 * says free, then its bit.  The store is relaxed: the or's release publishes
 * it to whoever takes the page, and only a holder of the page acts on its
 * info (a free that reads it for a pointer into a free page is a foreign
 * free either way). */
WH_INLINE WH_HOST_DEVICE void wh__page_back(const wh_heap *h, uint32_t p) {
    wh_atomic_store(&h->page_info[p], WH_PAGE_FREE, WH_RELAXED);
    (void)wh__pages_or(h, p >> 6, 1ull << (p & 63u));
}

/* The whole bits of page words [w, w + n), cleared by a thread that holds
 * a page of each: an and-not where a load finds one set (taking a page from
 * a word that was not whole costs the load alone).  Relaxed, its result
 * unused, so that nobody waits for it (a reduction on the GPU): the set it
 * must come before follows it in happens-before anyway, through the pages'
 * hand-out and return. */
WH_INLINE WH_HOST_DEVICE void wh__whole_taken(const wh_heap *h, uint32_t w, uint32_t n) {
    for (uint32_t e = w + n; w < e;) {
        uint32_t k = 64u - (w & 63u) < e - w ? 64u - (w & 63u) : e - w; /* words in this whole word */
        uint64_t m = (k >= 64u ? ~0ull : (1ull << k) - 1u) << (w & 63u), *hw = &h->page_whole[w >> 6];
        if (wh_atomic_load(hw, WH_RELAXED) & m) (void)wh__atomic_and64(hw, ~m, WH_RELAXED);
        w += k;
    }
}

#endif /* WARPHEAP_HEAP_PAGE_WHOLE_H */
