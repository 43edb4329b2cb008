/* SLAB: size classes on hierarchical bitmaps, with DynaSOAr's request
 * coalescing and bitmap rotation (dynasoar-object-allocator.txt section 4.2);
 * the slabs themselves follow Halloc as summarised in
 * register-efficient-gpu-allocators.txt section 4.5.
 *
 * The arena is a grid of 64 KiB pages.  Class c serves 16 << c bytes
 * (16 B .. 64 KiB).  One bitmap `pages` says which pages are free; one bitmap
 * per class, over every slot the arena could hold in that class (page * spp +
 * slot), says which slots are free *in pages active for that class*.  So an
 * allocation is a bitmap claim -- one atomic for a whole warp group -- and a
 * free is one atomic or.  A free that finds its bit already set is a double
 * free, detected at no cost.
 *
 * Departures from the seeds: pages are activated per class from the shared
 * `pages` bitmap (DynaSOAr's "slow path" of Alg. 6) and given back when their
 * last slot is freed: the freeing thread collects all slot bits of the page
 * with and-not; if it got them all the page is empty and its own, otherwise it
 * puts them back (a concurrent claim is in flight).  Nobody waits for anybody:
 * a thread that finds its class empty activates another page.  The live-slot
 * counter page_used is only a hint for when to try; the bits decide.  It is
 * only ever added to and subtracted from, across a page's lives, so that a
 * late decrement from a previous life still meets its increment, and a stale
 * reclaim it triggers finds the old class's bits gone and does nothing.
 *
 * Activation gate: when a burst of warps finds a class empty at once, letting
 * each activate a page takes one page per warp for a few slots each and runs
 * the page pool dry with plenty of room left (seen by the k-d tree builder).
 * So at most npages/64 leaders per class (at least one) activate at a time; the
 * others back off and look for the slots those publish, and after
 * WH_SLAB_GATE_TRIES looks activate anyway: a bounded wait, never a wait on
 * one thread.  A request that finds no free page looks for published or
 * freed slots up to WH_SLAB_TAKE_TRIES times before it fails.
 */
#define WH_SLAB_GATE_TRIES 32u
/* Looks for a slot in all before a request fails: past the gate, and after a
 * failed activation, when the page pool was empty for a moment. */
#define WH_SLAB_TAKE_TRIES 64u
#ifndef WARPHEAP_HEAP_SLAB_H
#define WARPHEAP_HEAP_SLAB_H

#include "warpheap/heap_core.h"

/* Add (or subtract) the live slots of claimed bits `got` of word w, class c,
 * to their pages.  Returns the page whose count reached zero on a subtract of
 * a single page's slots, else WH_BITMAP_NONE. */
WH_INLINE WH_HOST_DEVICE void wh__slab_used_add(const wh_heap *h, uint32_t c, uint32_t w, uint64_t got) {
    uint32_t spp = wh__slab_spp(c);
    if (spp >= 64u) {
        (void)wh_atomic_fetch_add(&h->page_used[w / (spp / 64u)], (uint32_t)wh_popc64(got), WH_RELAXED);
        return;
    }
    uint64_t pmask = (1ull << spp) - 1u;
    for (uint32_t k = 0; k < 64u / spp; ++k) {
        uint64_t m = got & (pmask << (k * spp));
        if (m) (void)wh_atomic_fetch_add(&h->page_used[w * (64u / spp) + k], (uint32_t)wh_popc64(m), WH_RELAXED);
    }
}

/* Bits of page p in class c's bitmap: first word and the mask within it
 * (whole words when spp >= 64). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_page_word(uint32_t c, uint32_t p) {
    return (uint32_t)(((uint64_t)p * wh__slab_spp(c)) >> 6);
}
WH_INLINE WH_HOST_DEVICE uint64_t wh__slab_page_mask(uint32_t c, uint32_t p) {
    uint32_t spp = wh__slab_spp(c);
    if (spp >= 64u) return ~0ull;
    return ((1ull << spp) - 1u) << (((uint64_t)p * spp) & 63u);
}

/* Take a free page for class c, keep the first `want` slots (returned in *got,
 * word index returned) and publish the rest.  WH_BITMAP_NONE if no page. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_activate(const wh_heap *h, uint32_t c, uint64_t seed,
                                                   unsigned want, uint64_t *got) {
    uint32_t p = wh_bitmap_find_and_clear(&h->pages, seed);
    *got = 0;
    if (p == WH_BITMAP_NONE) return WH_BITMAP_NONE;
    uint32_t spp = wh__slab_spp(c);
    if (want > spp) want = spp;
    if (want > 64u) want = 64u;
    /* add, not store: a free of the page's previous life may still have its
     * decrement in flight (it sets its slot bit first, so the reclaim that
     * freed the page could already see every bit free); a store would lose
     * that decrement's partner and leave the count below the live slots. */
    (void)wh_atomic_fetch_add(&h->page_used[p], (uint32_t)want, WH_RELAXED);
    wh_atomic_store(&h->page_info[p], c + 1u, WH_RELEASE);
    uint32_t w0 = wh__slab_page_word(c, p);
    uint64_t pmask = wh__slab_page_mask(c, p);
    unsigned shift = (unsigned)(wh_ffs64(pmask) - 1);
    uint64_t take = (want == 64u ? ~0ull : ((1ull << want) - 1u)) << shift;
    if (pmask & ~take) (void)wh_bitmap_or_word(&h->slots[c], w0, pmask & ~take);
    for (uint32_t k = 1; k < spp / 64u; ++k) (void)wh_bitmap_or_word(&h->slots[c], w0 + k, ~0ull);
    *got = take;
    return w0;
}

/* The page's last slot was freed: try to take the page back (see header). */
WH_INLINE WH_HOST_DEVICE void wh__slab_reclaim(const wh_heap *h, uint32_t c, uint32_t p) {
    uint32_t w0 = wh__slab_page_word(c, p), nw = wh__slab_spp(c) >= 64u ? wh__slab_spp(c) / 64u : 1u;
    uint64_t pmask = wh__slab_page_mask(c, p);
    uint32_t k = 0;
    bool whole = true;
    uint64_t prev = 0;
    for (; k < nw; ++k) {
        prev = wh_bitmap_and_not_word(&h->slots[c], w0 + k, pmask) & pmask;
        if (prev != pmask) { whole = false; break; }
    }
    if (!whole) {                          /* a claim is in flight: put back */
        if (prev) (void)wh_bitmap_or_word(&h->slots[c], w0 + k, prev);
        for (uint32_t j = 0; j < k; ++j) (void)wh_bitmap_or_word(&h->slots[c], w0 + j, pmask);
        return;
    }
    wh_atomic_store(&h->page_info[p], WH_PAGE_FREE, WH_RELEASE);
    (void)wh_bitmap_try_set(&h->pages, p);
}

/* Leader: claim up to `want` slots of class c, activating a page (through the
 * gate) when the class has none.  Word index and *got, or WH_BITMAP_NONE. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_take(const wh_heap *h, uint32_t c, uint64_t seed, unsigned want, uint64_t *got) {
    /* Activators per class, scaled to the heap (one per 64 pages): a burst of
     * all 13 classes then takes at most a fifth of the pages, so a heap of a
     * few dozen pages is not drained by it, while a large heap lets every warp
     * of a fresh burst activate its own page (a fixed small gate serialised
     * the 1M-thread burst: 0.5 ms -> 3.5 ms). */
    uint32_t gate = h->npages / 64u;
    if (gate < 1u) gate = 1u;
    uint32_t w = wh_bitmap_claim(&h->slots[c], seed, want, got);
    for (uint32_t tries = 0; w == WH_BITMAP_NONE && tries < WH_SLAB_TAKE_TRIES; ++tries) {
        uint32_t busy = wh_atomic_fetch_add(&h->ctl->activating[c], 1u, WH_RELAXED);
        if (busy < gate || tries >= WH_SLAB_GATE_TRIES) {
            w = wh__slab_activate(h, c, seed, want, got);
            (void)wh_atomic_fetch_sub(&h->ctl->activating[c], 1u, WH_RELAXED);
            if (w != WH_BITMAP_NONE) return w;      /* its slots are counted there */
            /* no free page: slots may still be published by other activators
             * or freed by other threads -- look again, boundedly */
        } else {
            (void)wh_atomic_fetch_sub(&h->ctl->activating[c], 1u, WH_RELAXED);
        }
        wh_backoff(tries);
        seed = wh_hash64(seed + tries);
        w = wh_bitmap_claim(&h->slots[c], seed, want, got);
    }
    if (w == WH_BITMAP_NONE) return w;
    wh__slab_used_add(h, c, w, *got);
    return w;
}

/* Allocate one slot of class c for every lane of group (same class). */
WH_INLINE WH_HOST_DEVICE void *wh__slab_malloc(const wh_heap *h, uint32_t c, uint32_t group) {
    unsigned leader = wh_leader(group), rank = wh_rank(group), count = (unsigned)wh_popc32(group), done = 0;
    bool is_leader = wh_lane_id() == leader;
    uint64_t seed = wh__heap_seed(c);
    uint32_t spp = wh__slab_spp(c);
    void *mine = (void *)0;
    for (uint32_t n = 0; n < WH_HEAP_RETRY_LIMIT && done < count; ++n) {   /* uniform in group */
        uint32_t w = WH_BITMAP_NONE;
        uint64_t got = 0;
        if (is_leader) w = wh__slab_take(h, c, seed, count - done, &got);
        w = wh_shfl32(group, w, leader);
        got = wh_shfl64(group, got, leader);
        if (w == WH_BITMAP_NONE) break;                 /* no slot and no page */
        unsigned took = (unsigned)wh_popc64(got);
        if (rank >= done && rank < done + took) {
            uint64_t b = (uint64_t)w * 64u + (uint64_t)wh_nth_set_bit64(got, rank - done);
            mine = h->base + (b / spp) * WH_SLAB_PAGE + (b % spp) * (16ull << c);
        }
        done += took;
        seed = wh_hash64(seed + n);
    }
    return mine;
}

/* Free a slot; returns false when p is no slab slot (caller decides). */
WH_INLINE WH_HOST_DEVICE bool wh__slab_free(const wh_heap *h, uint32_t info, uint32_t page, uint64_t in_page) {
    uint32_t c = info - 1u;
    if (c >= WH_SLAB_CLASSES || in_page & ((16ull << c) - 1u)) return false;
    uint64_t b = (uint64_t)page * wh__slab_spp(c) + (in_page >> (4u + c));
    uint64_t bit = 1ull << (b & 63u);
    if (wh_bitmap_or_word(&h->slots[c], (uint32_t)(b >> 6), bit) & bit) {
        wh__heap_count(&h->ctl->double_frees);
        return true;
    }
    wh__heap_track(h, -(int64_t)(16ull << c));
    if (wh_atomic_fetch_sub(&h->page_used[page], 1u, WH_ACQ_REL) == 1u) wh__slab_reclaim(h, c, page);
    return true;
}

#endif /* WARPHEAP_HEAP_SLAB_H */
