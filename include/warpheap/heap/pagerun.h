/* SPDX-License-Identifier: MIT */
/* Page runs: the large-request path of the DEFAULT heap (requests above
 * WH_DEFAULT_SLAB_MAX, 32 KiB: one page or more).  Not in the seeds' list of
 * kinds: the register-efficient paper's section 9 asks for hybrid
 * strategies, and the requirements name slabs + the circular list.  Departure,
 * and why: a circular list beside the slabs needs its own region, and a
 * fixed split caps small-object utilisation at the slab share (the goal is
 * 97% for 64-B objects).  Taking runs of consecutive free pages out of the
 * same page bitmap the slabs use lets both sizes share all of the arena.
 *
 * A run of n <= 64 pages is first looked for inside a few random 64-page words
 * of the page bitmap and claimed with one and-not; a partial claim (someone
 * took a page meanwhile) is put back and the search repeats, boundedly.  Then,
 * and for larger runs, a first-fit scan from the low end finds runs that
 * cross word boundaries (exactly n pages, one and-not per word, rolled back
 * on a partial claim).  Runs that took whole words above 64 pages and
 * stayed inside one word below would give a 68-page list 128 pages, and
 * slab pages scattered over every word would leave no room for a large list
 * in a heap with plenty of free pages (as in the k-d tree's Table 4 at 2M
 * triangles).
 */
#ifndef WARPHEAP_HEAP_PAGERUN_H
#define WARPHEAP_HEAP_PAGERUN_H

#include "warpheap/heap/page_whole.h"
#include "warpheap/heap/secure.h"

/* Positions i where bits i..i+n-1 of v are all set (1 <= n <= 64). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__run_starts(uint64_t v, uint32_t n) {
    for (uint32_t k = 1; k < n && v; k <<= 1) { /* doubling: log2(n) steps */
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
        if (prev == mask) {
            *first = w * 64u + i;
            wh__whole_taken(h, w, 1u);
            return true;
        }
        if (prev) (void)wh__pages_or(h, w, prev); /* put back */
    }
    return false;
}

/* Bits of level-0 word w that pages [first, first + n) cover (0 if none). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__run_word_mask(uint32_t first, uint32_t n, uint32_t w) {
    uint64_t lo = (uint64_t)w * 64u, a = first > lo ? first : lo;
    uint64_t e = (uint64_t)first + n < lo + 64u ? (uint64_t)first + n : lo + 64u;
    if (e <= a) return 0;
    uint64_t len = e - a;
    return (len == 64u ? ~0ull : ((1ull << len) - 1u)) << (a - lo);
}

/* Claim pages [first, first + n), all or nothing: a word found partly taken
 * puts back what this call took and fails. */
WH_INLINE WH_HOST_DEVICE bool wh__run_try_range(const wh_heap *h, uint32_t first, uint32_t n) {
    uint32_t w0 = first >> 6, w1 = (uint32_t)(((uint64_t)first + n - 1u) >> 6);
    for (uint32_t w = w0; w <= w1; ++w) {
        uint64_t m = wh__run_word_mask(first, n, w);
        uint64_t prev = wh_bitmap_and_not_word(&h->pages, w, m) & m;
        if (prev != m) {
            if (prev) (void)wh__pages_or(h, w, prev);
            for (uint32_t j = w0; j < w; ++j) (void)wh__pages_or(h, j, wh__run_word_mask(first, n, j));
            return false;
        }
    }
    wh__whole_taken(h, w0, w1 - w0 + 1u);
    return true;
}

/* First fit over the level-0 words, low addresses first: a run may cross
 * word boundaries (free pages at the top of a word, whole free words, free
 * pages at the bottom of the next).  A run that was taken under us is
 * skipped; one pass, so bounded.  WH_BITMAP_NONE if none. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__run_scan(const wh_heap *h, uint32_t n) {
    uint32_t words = (h->npages + 63u) / 64u, run = 0; /* free pages before word w */
    for (uint32_t w = 0; w < words; ++w) {
        uint64_t v = wh_atomic_load(wh_bitmap_word(&h->pages, 0, w), WH_RELAXED);
        uint32_t low = v == ~0ull ? 64u : (uint32_t)wh_ffs64(~v) - 1u; /* free pages at its bottom */
        uint32_t first = WH_BITMAP_NONE;
        if (run + low >= n)
            first = w * 64u - run;
        else if (n <= 64u) {
            uint64_t starts = wh__run_starts(v, n);
            if (starts) first = w * 64u + (uint32_t)wh_ffs64(starts) - 1u;
        }
        if (first != WH_BITMAP_NONE) {
            if (wh__run_try_range(h, first, n)) return first;
            run = 0; /* changed under us: go on */
            continue;
        }
        run = v == ~0ull ? run + 64u : (uint32_t)wh_clz64(~v); /* free pages at its top */
    }
    return WH_BITMAP_NONE;
}

/* First page of a claimed run of n pages, or WH_BITMAP_NONE. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__run_claim(const wh_heap *h, uint32_t n, uint64_t seed) {
    uint32_t first = WH_BITMAP_NONE;
    if (n > h->npages) return WH_BITMAP_NONE;
    if (n <= 64u)
        for (uint32_t t = 0; t < 8u; ++t) { /* random words first  */
            uint32_t b = wh_bitmap_try_find_set(&h->pages, wh_hash64(seed + t));
            if (b == WH_BITMAP_NONE) return WH_BITMAP_NONE;
            if (wh__run_try_word(h, b >> 6, n, &first)) return first;
        }
    return wh__run_scan(h, n); /* then first fit      */
}

/* Pages a run of `bytes` takes. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__run_pages(uint64_t bytes) {
    return (uint32_t)((bytes + WH_SLAB_PAGE - 1u) >> WH_SLAB_PAGE_SHIFT);
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
        wh__heap_count(&h->ctl->double_frees); /* a concurrent free won */
        return true;
    }
    uint64_t req = wh_atomic_load(&h->page_req[p], WH_RELAXED);
    wh__heap_track(h, -(int64_t)req);
    if (h->flags & WH_HEAP_SECURE) wh__secure_fill(h->base + (uint64_t)p * WH_SLAB_PAGE, req);
    for (uint32_t k = 1; k < n; ++k) wh_atomic_store(&h->page_info[p + k], WH_PAGE_FREE, WH_RELAXED);
    for (uint32_t w = p >> 6; w <= (uint32_t)(((uint64_t)p + n - 1u) >> 6); ++w)
        (void)wh__pages_or(h, w, wh__run_word_mask(p, n, w));
    wh__pages_back(h, n);
    return true;
}

#endif /* WARPHEAP_HEAP_PAGERUN_H */
