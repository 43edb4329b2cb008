/* SPDX-License-Identifier: MIT */
/* SLAB pages: the page grid of the SLAB and DEFAULT heaps and a page's life in
 * a size class (DynaSOAr's "slow path" of Alg. 6, dynasoar-object-allocator.txt
 * section 4.2; the slabs follow Halloc as summarised in
 * register-efficient-gpu-allocators.txt section 4.5).
 *
 * The arena is a grid of 64 KiB pages.  Class c serves wh__slab_size(c) bytes
 * (heap/classes.h).  One bitmap `pages` says which pages are free; one bitmap
 * per class, over every slot the arena could hold in that class
 * (page << lbpp + slot, lbpp = log2 of spp rounded up), says which slots are
 * free *in pages active for that class*.  A free is one atomic or; a free that
 * finds its bit already set is a double free, detected at no cost.
 *
 * Pages are activated per class from the shared `pages` bitmap and given back
 * when their last slot is freed: the freeing thread collects all slot bits of
 * the page with and-not; if it got them all the page is empty and its own,
 * otherwise it puts them back (a concurrent claim is in flight) and tries
 * once more when the page's count says the page emptied meanwhile.  Nobody
 * waits for anybody.  A page whose second try fails while its count says
 * empty may stay with its class, every slot free (the bit it missed came a
 * moment later: a claim's slot freed at once, or on the GPU a free whose
 * count arrived before its bit); it is marked *stranded*, and the next sweep
 * -- when the page pool runs dry, and in wh_heap_trim -- takes it back if
 * its bits are all there.  The live-slot counter page_used is only a hint
 * for when to try; the bits decide.  It is only ever added to and subtracted from,
 * across a page's lives, so that a late decrement from a previous life still
 * meets its increment, and a stale reclaim it triggers finds the old class's
 * bits gone and does nothing.
 */
#ifndef WARPHEAP_HEAP_SLAB_PAGE_H
#define WARPHEAP_HEAP_SLAB_PAGE_H

#include "warpheap/heap/classes.h"
#include "warpheap/heap/page_whole.h"

/* Add the live slots of claimed bits `got` of word w, class c, to their
 * pages. */
WH_INLINE WH_HOST_DEVICE void wh__slab_used_add(const wh_heap *h, uint32_t c, uint32_t w, uint64_t got) {
    uint32_t l = wh__slab_lbpp_at(h, c);
    if (l >= 6u) {
        (void)wh_atomic_fetch_add(&h->page_used[w >> (l - 6u)], (uint32_t)wh_popc64(got), WH_RELAXED);
        return;
    }
    uint32_t bpp = 1u << l;
    uint64_t pmask = (1ull << bpp) - 1u;
    for (uint32_t k = 0; k < 64u / bpp; ++k) {
        uint64_t m = got & (pmask << (k * bpp));
        if (m) (void)wh_atomic_fetch_add(&h->page_used[(w << (6u - l)) + k], (uint32_t)wh_popc64(m), WH_RELAXED);
    }
}

/* Page p's bits in class c's bitmap: its first word, how many words hold
 * slot bits, and the slot bits of its k-th word (the class's shape from the
 * heap's constants: no division). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_page_word(const wh_heap *h, uint32_t c, uint32_t p) {
    return (uint32_t)(((uint64_t)p << wh__slab_lbpp_at(h, c)) >> 6);
}
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_page_words(const wh_heap *h, uint32_t c) {
    return wh__slab_lbpp_at(h, c) < 6u ? 1u : (wh__slab_spp_of(h, c) + 63u) / 64u;
}
WH_INLINE WH_HOST_DEVICE uint64_t wh__slab_word_mask(const wh_heap *h, uint32_t c, uint32_t p, uint32_t k) {
    uint32_t spp = wh__slab_spp_of(h, c), l = wh__slab_lbpp_at(h, c);
    if (l < 6u) return ((1ull << spp) - 1u) << (((uint64_t)p << l) & 63u);
    uint32_t left = spp - 64u * k;
    return left >= 64u ? ~0ull : (1ull << left) - 1u;
}

/* Where class c's page activations look in the page bitmap: the region
 * under one bit of the top level (4096 pages in heaps of 256 MiB to 16 GiB)
 * chosen by the class, its lowest words first (no rotation between), a page
 * of the word by seed.  Pages taken one at a time then stay together instead
 * of landing one in every aligned run, which the bump segments need whole
 * (wh__seg_claim_run): a thousand pages taken at random left no free run of
 * 1024 pages in a 10 GB heap, and every later segment preparation failed and
 * sent its class here.  The lowest free page for every class made the
 * activators of a mixed-size fill meet on one word (1.2e8 allocations/s
 * against 5.9e8); a region by seed, which changes with every retry, spread
 * one class over all regions again. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__slab_activation_seed(const wh_heap *h, uint32_t c, uint64_t seed) {
    uint32_t top = h->pages.levels - 1u;
    return (seed & 63u) | (top ? (wh_hash64(c + 1u) & 63u) << (6u * top) : 0u);
}

/* Take a free page for class c, keep the first `want` slots (returned in *got,
 * word index returned) and publish the rest.  WH_BITMAP_NONE if no page. */
WH__SLAB_RARE WH_HOST_DEVICE uint32_t wh__slab_activate(const wh_heap *h, const wh_bitmap *bm, uint32_t c,
                                                        uint64_t seed, unsigned want, uint64_t *got) {
    uint32_t p = wh_bitmap_find_and_clear(&h->pages, wh__slab_activation_seed(h, c, seed));
    *got = 0;
    if (p == WH_BITMAP_NONE) return WH_BITMAP_NONE;
    wh__whole_taken(h, p >> 6, 1u);
    /* a page whose bit was set is free: its info says so */
    WH_ASSERT(p < h->npages && wh_atomic_load(&h->page_info[p], WH_ACQUIRE) == WH_PAGE_FREE);
    uint32_t spp = wh__slab_spp_of(h, c);
    if (want > spp) want = spp;
    if (want > 64u) want = 64u;
    /* add, not store: a free of the page's previous life may still have its
     * decrement in flight (it sets its slot bit first, so the reclaim that
     * freed the page could already see every bit free); a store would lose
     * that decrement's partner and leave the count below the live slots. */
    (void)wh_atomic_fetch_add(&h->page_used[p], (uint32_t)want, WH_RELAXED);
    wh_atomic_store(&h->page_info[p], WH_PAGE_SLAB(c, 0u), WH_RELEASE);
    uint32_t w0 = wh__slab_page_word(h, c, p);
    uint64_t pmask = wh__slab_word_mask(h, c, p, 0);
    unsigned shift = (unsigned)(wh_ffs64(pmask) - 1);
    uint64_t take = (want == 64u ? ~0ull : ((1ull << want) - 1u)) << shift;
    if (pmask & ~take) (void)wh_bitmap_or_word(bm, w0, pmask & ~take);
    for (uint32_t k = 1; k < wh__slab_page_words(h, c); ++k)
        (void)wh_bitmap_or_word(bm, w0 + k, wh__slab_word_mask(h, c, p, k));
    *got = take;
    return w0;
}

/* The compare-and-swaps that take a run of words: relaxed and followed by
 * one fence on the GPU, where each acq_rel atomic waits for the one before;
 * acq_rel on the CPU, where ThreadSanitizer does not model a stand-alone
 * fence.  A page's one and-not (pages that share a word) is followed by an
 * acquire fence on the GPU, the lighter one: it acquires the frees whose
 * bits it took. */
#if WH_ON_GPU
#define WH__RUN_MO         WH_RELAXED
#define WH__RUN_FENCE()    wh_fence()
#define WH__TAKE_ACQUIRE() wh_fence_acquire()
#else
#define WH__RUN_MO         WH_ACQ_REL
#define WH__RUN_FENCE()    ((void)0)
#define WH__TAKE_ACQUIRE() ((void)0)
#endif
#define WH__RUN_CHUNK 4u

/* One try at page p's bits in class c's bitmap, all or none: true when it
 * took them all (the page is empty and the caller's), false when some were
 * missing (a claim in flight) and what it took went back.
 *
 * Pages that share a word (under 64 slots): one and-not of the page's bits,
 * and what it took goes back when some were missing.  A page of 64 slots or
 * more (bits 2^lbpp >= 64) owns its words, and a word's bits past the page's
 * slots are never set, so a word holds all of the page's bits iff it equals
 * their mask: one compare-and-swap to zero takes it, one that fails changes
 * nothing and ends the take, and the words taken before go back.  The swaps
 * go `chunk` (1 .. WH__RUN_CHUNK, a constant) at a time, not waiting for each
 * other: a free takes WH__RUN_CHUNK (one after the other, the 64 words of a
 * 16-B page cost 64 round trips); the allocation's rare paths take 1, so that
 * the chunk's registers stay out of every allocating kernel.  The summary
 * level learns of the emptied words at once (one summary word: a page's
 * words are aligned, at most 64); or_word tells it of each word that goes
 * back. */
WH__SLAB_RARE WH_HOST_DEVICE bool wh__slab_take_page(const wh_heap *h, uint32_t c, uint32_t p, uint32_t chunk) {
    wh_bitmap bm = wh__slab_bitmap(h, c);
    uint32_t w0 = wh__slab_page_word(h, c, p), nw = wh__slab_page_words(h, c);
    uint64_t *words = wh__slab_word(h, c, w0);
    if (nw == 1u) { /* the page's bits share a word with other pages' */
        /* the bits' frees acquired: by an acquire fence after the and-not
         * on the GPU, by the and-not itself on the CPU */
        uint64_t m = wh__slab_word_mask(h, c, p, 0), prev = wh__bitmap_and_not_mo(&bm, w0, m, WH__RUN_MO) & m;
        if (prev == m) {
            WH__TAKE_ACQUIRE();
            return true;
        }
        WH__RECLAIM_LOST(h, c, p);
        if (prev) (void)wh_bitmap_or_word(&bm, w0, prev);
        return false;
    }
    uint64_t taken = 0;
    for (uint32_t k = 0; k < nw; k += chunk) {
        uint32_t n = nw - k < chunk ? nw - k : chunk;
        for (uint32_t j = 0; j < n; ++j) {
            uint64_t m = wh__slab_word_mask(h, c, p, k + j);
            if (wh_atomic_cas(words + k + j, &m, 0ull, WH__RUN_MO, WH_RELAXED)) taken |= 1ull << (k + j);
        }
        if ((uint32_t)wh_popc64(taken) != k + n) { /* give back */
            WH__RECLAIM_LOST(h, c, p);
            for (; taken; taken &= taken - 1u) {
                uint32_t j = (uint32_t)wh_ffs64(taken) - 1u;
                (void)wh_bitmap_or_word(&bm, w0 + j, wh__slab_word_mask(h, c, p, j));
            }
            return false;
        }
    }
    WH__RUN_FENCE();
    (void)wh__bitmap_propagate_span(&bm, 0, w0, nw);
    return true;
}

/* Page p stays with its class after a failed reclaim: its mark for the
 * next sweep (wh__slab_sweep), the bit before the flag that sends a sweep
 * to look. */
WH_INLINE WH_HOST_DEVICE void wh__page_strand(const wh_heap *h, uint32_t p) {
    (void)wh_atomic_fetch_or(&h->page_strand[p >> 6], 1ull << (p & 63u), WH_RELAXED);
    wh_atomic_store(&h->ctl->strands, 1ull, WH_RELEASE);
}

/* The page's last slot was freed: take the page back (see header) -- its
 * bits out of the class bitmap, then the page into the pool.  True when the
 * page went back.
 *
 * A try that finds a bit missing may race the free of that very slot: the
 * claim that held it counts it after this free's count reached zero, and
 * its free then finds the bits this try holds gone and leaves the page, so
 * the page would stay in its class with every slot free.  So after a failed
 * try the page's count is read with a read-modify-write: either it orders
 * after that free's subtraction (release) and says zero -- the page is empty
 * again, one more try -- or that subtraction reads this one (acq_rel) and
 * that free's own take finds every bit given back.  One more try, no
 * more: a claim still in flight keeps the count at zero and the bit
 * missing, and its free reclaims the page.  Two such second tries at once
 * can still both fail, and on the GPU a free's or may reach its word after
 * its subtraction reached the count (heap/slab.h: WH__FREE_SUB_MO): a second
 * try that fails with the count at zero strands the page, and a sweep
 * takes it back. */
WH__SLAB_RARE WH_HOST_DEVICE bool wh__slab_reclaim(const wh_heap *h, uint32_t c, uint32_t p, uint32_t chunk) {
    if (!wh__slab_take_page(h, c, p, chunk)) {
        if (wh_atomic_fetch_add(&h->page_used[p], 0u, WH_ACQ_REL) != 0u) return false;
        if (!wh__slab_take_page(h, c, p, chunk)) {
            wh__page_strand(h, p);
            return false;
        }
    }
    wh__page_back(h, p);
    return true;
}

/* The sweep: every stranded page whose slots are all free in its class
 * bitmap goes back to the pool (the page pool ran dry: wh__seg_retire_all;
 * wh_heap_trim).  A mark outlives its cause harmlessly: a page given back,
 * made active again or holding a live slot keeps some bit clear, and its
 * take fails; the bits decide, as in a reclaim.  Nothing when no page was
 * marked since the last sweep. */
WH__SLAB_RARE WH_HOST_DEVICE void wh__slab_sweep(const wh_heap *h) {
    if (!wh_atomic_load(&h->ctl->strands, WH_RELAXED) || !wh_atomic_exchange(&h->ctl->strands, 0ull, WH_ACQ_REL))
        return;
    uint32_t n = 0;
    WH_PRAGMA_UNROLL1
    for (uint32_t w = 0; w < wh_bitmap_level_words(&h->pages, 0); ++w) {
        if (!wh_atomic_load(&h->page_strand[w], WH_RELAXED)) continue;
        for (uint64_t m = wh_atomic_exchange(&h->page_strand[w], 0ull, WH_ACQ_REL); m; m &= m - 1u) {
            uint32_t p = w * 64u + (uint32_t)wh_ffs64(m) - 1u, info = wh_atomic_load(&h->page_info[p], WH_ACQUIRE);
            uint32_t c = WH_PAGE_CLASS(info);
            if (info & (WH_PAGE_RUN_HEAD | WH_PAGE_RUN_TAIL) || c >= WH_SLAB_CLASSES) continue;
            if (wh__slab_take_page(h, c, p, 1u)) wh__page_back(h, p), ++n;
        }
    }
    if (n) wh__pages_back(h, n);
}

/* No free page in the pool (the page bitmap's top word is empty). */
WH_INLINE WH_HOST_DEVICE bool wh__pages_dry(const wh_heap *h) {
    return !wh_atomic_load(wh_bitmap_word(&h->pages, h->pages.levels - 1u, 0), WH_RELAXED);
}

#endif /* WARPHEAP_HEAP_SLAB_PAGE_H */
