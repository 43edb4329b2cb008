/* Page runs: the large-request path of the DEFAULT heap (requests above the
 * largest slab class, 64 KiB).  Not in the seeds' list of kinds: the register-
 * efficient paper's section 9 asks for hybrid strategies, and the issue names
 * slabs + the circular list.  Departure, and why: a circular list beside the
 * slabs needs its own region, and a fixed split caps small-object utilisation
 * at the slab share (the goal is 97% for 64-B objects).  Taking runs of
 * consecutive free pages out of the same page bitmap the slabs use lets both
 * sizes share all of the arena.
 *
 * A run of n <= 64 pages lies within one 64-page word of the page bitmap and is
 * claimed with one and-not; a partial claim (someone took a page meanwhile) is
 * put back and the search repeats, boundedly.  Larger runs take whole words,
 * scanning from a random start, and roll back on a partial claim.
 */
#ifndef WARPHEAP_HEAP_PAGERUN_H
#define WARPHEAP_HEAP_PAGERUN_H

#include "warpheap/heap_core.h"

/* Positions i where bits i..i+n-1 of v are all set (1 <= n <= 64). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__run_starts(uint64_t v, uint32_t n) {
    for (uint32_t k = 1; k < n && v; k <<= 1) {          /* doubling: log2(n) steps */
        uint32_t s = (k <= n - k) ? k : n - k;
        v &= v >> s;
        if (s < k) break;
    }
    return v;
}

/* Try to claim n (<= 64) consecutive pages inside level-0 word w. */
WH_INLINE WH_HOST_DEVICE bool wh__run_try_word(const wh_heap *h, uint32_t w, uint32_t n, uint32_t *first) {
    for (uint32_t tries = 0; tries < 4u; ++tries) {
        uint64_t v = wh_atomic_load(wh_bitmap_word(&h->pages, 0, w), WH_RELAXED);
        uint64_t starts = wh__run_starts(v, n);
        if (!starts) return false;
        unsigned i = (unsigned)(wh_ffs64(starts) - 1);
        uint64_t mask = (n == 64u ? ~0ull : ((1ull << n) - 1u)) << i;
        uint64_t prev = wh_bitmap_and_not_word(&h->pages, w, mask) & mask;
        if (prev == mask) { *first = w * 64u + i; return true; }
        if (prev) (void)wh_bitmap_or_word(&h->pages, w, prev);   /* put back */
    }
    return false;
}

/* Claim m whole words starting at w; roll back if any was not full. */
WH_INLINE WH_HOST_DEVICE bool wh__run_try_words(const wh_heap *h, uint32_t w, uint32_t m) {
    for (uint32_t k = 0; k < m; ++k) {
        uint64_t prev = wh_bitmap_and_not_word(&h->pages, w + k, ~0ull);
        if (prev != ~0ull) {
            if (prev) (void)wh_bitmap_or_word(&h->pages, w + k, prev);
            for (uint32_t j = 0; j < k; ++j) (void)wh_bitmap_or_word(&h->pages, w + j, ~0ull);
            return false;
        }
    }
    return true;
}

/* First page of a claimed run of n pages, or WH_BITMAP_NONE. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__run_claim(const wh_heap *h, uint32_t n, uint64_t seed) {
    uint32_t words = (h->npages + 63u) / 64u, first = WH_BITMAP_NONE;
    if (n <= 64u) {
        for (uint32_t t = 0; t < 8u; ++t) {               /* random words first  */
            uint32_t b = wh_bitmap_try_find_set(&h->pages, wh_hash64(seed + t));
            if (b == WH_BITMAP_NONE) return WH_BITMAP_NONE;
            if (wh__run_try_word(h, b >> 6, n, &first)) return first;
        }
        uint32_t start = (uint32_t)(seed % words);        /* then every word once */
        for (uint32_t k = 0; k < words; ++k)
            if (wh__run_try_word(h, (start + k) % words, n, &first)) return first;
        return WH_BITMAP_NONE;
    }
    uint32_t m = (n + 63u) / 64u;
    if (m > h->npages / 64u) return WH_BITMAP_NONE;   /* only whole words */
    uint32_t span = h->npages / 64u - m + 1u, start = (uint32_t)(seed % span);
    for (uint32_t k = 0; k < span; ++k) {
        uint32_t w = (start + k) % span;
        if (wh_atomic_load(wh_bitmap_word(&h->pages, 0, w), WH_RELAXED) == ~0ull && wh__run_try_words(h, w, m))
            return w * 64u;
    }
    return WH_BITMAP_NONE;
}

/* Pages a run of `bytes` takes (runs above 64 pages are whole words). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__run_pages(uint64_t bytes) {
    uint64_t n = (bytes + WH_SLAB_PAGE - 1u) >> WH_SLAB_PAGE_SHIFT;
    return (uint32_t)(n <= 64u ? n : (n + 63u) & ~63ull);
}

WH_INLINE WH_HOST_DEVICE void *wh__run_malloc(const wh_heap *h, uint64_t bytes) {
    if (bytes > (uint64_t)h->npages * WH_SLAB_PAGE) return (void *)0;
    uint32_t n = wh__run_pages(bytes);
    uint32_t p = wh__run_claim(h, n, wh__heap_seed(bytes));
    if (p == WH_BITMAP_NONE) return (void *)0;
    wh_atomic_store(&h->page_req[p], bytes, WH_RELAXED);
    for (uint32_t k = 1; k < n; ++k) wh_atomic_store(&h->page_info[p + k], WH_PAGE_RUN_TAIL, WH_RELAXED);
    wh_atomic_store(&h->page_info[p], WH_PAGE_RUN_HEAD | n, WH_RELEASE);
    return h->base + (uint64_t)p * WH_SLAB_PAGE;
}

/* Free a run whose head page p read info; false if p is no run head. */
WH_INLINE WH_HOST_DEVICE bool wh__run_free(const wh_heap *h, uint32_t info, uint32_t p, uint64_t in_page) {
    if (!(info & WH_PAGE_RUN_HEAD) || in_page) return false;
    uint32_t n = info & ~WH_PAGE_RUN_HEAD, expected = info;
    if (!wh_atomic_cas(&h->page_info[p], &expected, WH_PAGE_FREE, WH_ACQ_REL, WH_RELAXED)) {
        wh__heap_count(&h->ctl->double_frees);            /* a concurrent free won */
        return true;
    }
    wh__heap_track(h, -(int64_t)wh_atomic_load(&h->page_req[p], WH_RELAXED));
    for (uint32_t k = 1; k < n; ++k) wh_atomic_store(&h->page_info[p + k], WH_PAGE_FREE, WH_RELAXED);
    if (n <= 64u) {
        (void)wh_bitmap_or_word(&h->pages, p >> 6, (n == 64u ? ~0ull : ((1ull << n) - 1u)) << (p & 63u));
    } else {
        for (uint32_t k = 0; k < n / 64u; ++k) (void)wh_bitmap_or_word(&h->pages, (p >> 6) + k, ~0ull);
    }
    return true;
}

#endif /* WARPHEAP_HEAP_PAGERUN_H */
