/* SPDX-License-Identifier: MIT */
/* SLAB bump segments: the fast path of a size class, ahead of its freed slots
 * (bump allocation inside slabs, as XMalloc and Halloc do:
 * register-efficient-gpu-allocators.txt section 4.5).
 *
 * Publishing a fresh page slot by slot and claiming the slots back costs a
 * warp several atomics, plus a page activation every few warps.  Instead a
 * class hands out consecutive slots of a *segment* -- an aligned run of
 * 2^k pages taken from the page pool at once -- by one atomic add per warp
 * on the class's state word:
 *     r0 (21 bits): current segment, r1 (21 bits): next segment, each as
 *                   its code (wh__seg_code: first page and size; 0 none),
 *     s (22 bits): slots handed out of the current one (positions past its
 *                  capacity lie in the next one).
 * Slots are never published: a slot's bit is set only when it is freed, so
 * frees, double-free detection and reclaim are unchanged.  A segment's pages
 * count all their slots as used from the start (page_used += spp), so a page
 * with slots still to hand out is never reclaimed; the walk counts those
 * untouched slots free (wh__seg_untouched).  The next segment is prepared
 * once an eighth of the current one is handed out (wh__seg_wants_next), by
 * one group of lanes per class at a time (seg_prep: its leader claims the
 * pages, the group sets them up, the leader installs), so a warp that runs
 * past the end goes on in the next segment without waiting.  Moving next to
 * current ("rotation": r0 = r1, r1 = 0, s -= capacity) is one atomic add,
 * done exactly once: by the add that reaches the capacity
 * (s < cap <= s + want) if it saw r1 set.  A preparer that finds the current
 * one used up installs its segment as the current one, fresh, by CAS
 * (wh__seg_install_fresh); only if that CAS keeps failing does it install as
 * next and rotate itself, and then the positions claimed while no next
 * segment was there ("orphans": nobody got those slots) are published free.
 * A warp loads the state first and adds only when a slot is there, so s stays
 * far below 2^22 (capacity < 2^20, heap_layout.c; the adds in flight at once
 * are at most one per resident warp of at most 32 slots, about 2^18 on a
 * 132-SM GPU).  When no aligned run of free pages is left, or the state stays
 * empty for WH__SEG_POLLS looks, the request takes the bitmap path
 * (heap/slab_bitmap.h).  All of this is per way: large heaps give a class up
 * to WH_SEG_WAYS_MAX independent states, one per group of SMs (wh__seg_way);
 * a request whose way has no segment and nobody preparing one (its last
 * preparation found no run) takes slots from the other ways' segments
 * before the bitmap path.  A segment's size is chosen when it is prepared
 * (wh__seg_shift): the class's largest, unless many classes and ways share
 * the pool; a way's current and next segments may differ in size.
 *
 * Reclaim is lazy: a segment's untouched slots stay with its class until the
 * page pool runs dry (a page activation, a segment preparation or a page run
 * of DEFAULT that finds no free page takes back what every class holds
 * untouched: wh__seg_retire_all) or the host asks (wh_heap_trim).  Taking
 * them back as soon as a class goes idle would cost a preparation per
 * allocation where one lane allocates and frees at once.
 */
#ifndef WARPHEAP_HEAP_SLAB_SEGMENT_H
#define WARPHEAP_HEAP_SLAB_SEGMENT_H

#include "warpheap/heap/slab_page.h"

/* Ways: a class has h->seg_ways independent segment states (each one as
 * described in the header), so that the warps of different SMs add to
 * different words.  With one word taking every warp's load and add, a class
 * hands out a warp's 16-B slots every ~4 cycles where BUMP, one add on one
 * word, takes ~1.3 (wh_heap_bench fill90).  A
 * warp uses its SM's way; its segments' pages say which way they belong to
 * (WH_PAGE_SLAB), so a free anywhere finds the state of its slot. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__seg_way(const wh_heap *h) {
#if WH_ON_GPU
    uint32_t sm;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    return sm & (h->seg_ways - 1u);
#else
    int local; /* a thread's stack: which way it uses stays put */
    return (uint32_t)(wh_hash64((uint64_t)(uintptr_t)&local >> 12) & (h->seg_ways - 1u));
#endif
}
WH_INLINE WH_HOST_DEVICE uint32_t wh__seg_index(uint32_t c, uint32_t way) { return c * WH_SEG_WAYS_MAX + way; }
WH_INLINE WH_HOST_DEVICE uint64_t *wh__seg_state(const wh_heap *h, uint32_t c, uint32_t way) {
    return &h->ctl->seg[(size_t)wh__seg_index(c, way) * WH_CURSOR_STRIDE];
}
/* A segment's code: 2 p0 + 2^k for the aligned run of 2^k pages from page
 * p0 -- its first page and its size in one field, 0 for none.  The lowest
 * set bit is 2^k, the pages; the rest, shifted down, is p0. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_code(uint32_t p0, uint32_t k) { return 2ull * p0 + (1ull << k); }
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_pages(uint64_t code) { return code & (0u - code); }
WH_INLINE WH_HOST_DEVICE uint32_t wh__seg_p0(uint64_t code) { return (uint32_t)((code ^ wh__seg_pages(code)) >> 1); }
/* Slots of segment `code` of class c (0: none). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_cap(const wh_heap *h, uint32_t c, uint64_t code) {
    return (uint64_t)wh__slab_spp_of(h, c) * wh__seg_pages(code);
}
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_s(uint64_t v) { return v & ((1ull << WH__SEG_S_BITS) - 1u); }
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_r1(uint64_t v) { return (v >> WH__SEG_R_SHIFT1) & ((1ull << 21) - 1u); }
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_r0(uint64_t v) { return v >> WH__SEG_R_SHIFT0; }
/* r0 = r1, r1 = 0, s -= cap0 as one add (exact: no field leaves its range). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_rotation(uint64_t r0, uint64_t r1, uint64_t cap0) {
    return ((r1 - r0) << WH__SEG_R_SHIFT0) - (r1 << WH__SEG_R_SHIFT1) - cap0;
}

/* Positions [q0, q0 + n) of segment `code` of class c, handed to nobody,
 * become free.  A whole page of them goes straight back to the pool when its
 * count is exactly its slots (CAS: nothing else in flight on it); otherwise,
 * and for part of a page, the slot bits are set and taken off the page's
 * count, as a free does, and a page that this empties is stranded (the
 * sweep gives it back, heap/slab_page.h). */
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_publish(const wh_heap *h, uint32_t c, uint64_t code, uint64_t q0,
                                                  uint64_t n) {
    /* positions of a segment: under 2^20 (heap_layout.c), 32-bit arithmetic */
    uint32_t end = (uint32_t)(q0 + n), spp = wh__slab_spp_of(h, c);
    uint32_t l = wh__slab_lbpp_at(h, c);
    wh_bitmap bm = wh__slab_bitmap(h, c);
    for (uint32_t q = (uint32_t)q0; q < end;) {
        uint32_t j = q / spp, k = ((j + 1u) * spp < end ? (j + 1u) * spp : end) - q;
        uint32_t p = wh__seg_p0(code) + j, whole = (uint32_t)spp;
        if (k == spp && wh_atomic_cas(&h->page_used[p], &whole, 0u, WH_ACQ_REL, WH_RELAXED)) {
            wh__page_back(h, p);
            q += k;
            continue;
        }
        uint64_t b = ((uint64_t)p << l) + (q - j * spp), bend = b + k;
        for (uint64_t x = b; x < bend;) {
            uint64_t lo = x & 63u, m = 64u - lo < bend - x ? 64u - lo : bend - x;
            (void)wh_bitmap_or_word(&bm, (uint32_t)(x >> 6), (m == 64u ? ~0ull : (1ull << m) - 1u) << lo);
            x += m;
        }
        /* the page emptied (its other slots were freed meanwhile): it is
         * marked stranded, and the sweep gives it back -- the one that ends
         * wh__seg_retire_all, or the next.  A take of its bits here, inlined
         * in the allocation's rare paths, cost every allocating kernel
         * registers (heap_bench's DEFAULT kernel of one allocation and one
         * free: 91 against 72). */
        if (wh_atomic_fetch_sub(&h->page_used[p], (uint32_t)k, WH_ACQ_REL) == (uint32_t)k) wh__page_strand(h, p);
        q += k;
    }
}

/* The bits i of m, i a multiple of n (a power of two, at most 64), at which
 * a field of n set bits begins: aligned runs of free pages in a page word,
 * or aligned groups of page words with free pages in a summary word. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__aligned_fields(uint64_t m, uint32_t n) {
    for (uint32_t k = 1; k < n; k <<= 1) m &= m >> k;
    return m & ~0ull / (n == 64u ? ~0ull : (1ull << n) - 1u); /* bits at multiples of n */
}

/* Page words [w, w + nw) (w a multiple of nw) as an aligned run of 1 << shift
 * free pages: inside word w with one and-not (shift < 6: put back what was
 * taken if the run was not all there), else the nw words each taken whole
 * by a compare-and-swap from all free to none (one that fails takes
 * nothing; the words taken before it go back).  The run's index, or
 * WH_BITMAP_NONE. */
WH__SLAB_RARE WH_HOST_DEVICE uint32_t wh__seg_take_run(const wh_heap *h, uint32_t w, uint32_t shift, uint64_t seed) {
    uint32_t npg = 1u << (shift < 6u ? shift : 6u), nw = shift < 6u ? 1u : 1u << (shift - 6u);
    uint64_t unit = npg == 64u ? ~0ull : (1ull << npg) - 1u;
    uint64_t m = wh__aligned_fields(wh_atomic_load(wh_bitmap_word(&h->pages, 0, w), WH_RELAXED), npg);
    if (!m || w + nw > wh_bitmap_level_words(&h->pages, 0)) return WH_BITMAP_NONE;
    uint32_t i = nw > 1u ? 0u : wh__bitmap_pick(m, wh__bitmap_rot(seed, 0));
    uint64_t take = unit << i;
    if (nw == 1u) {
        uint64_t prev = wh__atomic_and64(wh_bitmap_word(&h->pages, 0, w), ~take, WH__RUN_MO) & take;
        if (prev != take) {
            if (prev) (void)wh__pages_or(h, w, prev); /* or_word tells the levels above */
            return WH_BITMAP_NONE;
        }
    }
    /* Whole words WH__SEG_RUN_CHUNK at a time, the chunk checked after
     * its swaps: they do not wait for each other (one after the other, a
     * 16-word run cost 16 round trips), and what each leaves live is one
     * bit (an and-not's previous values, a chunk of them, cost every
     * allocating kernel registers: 80 against 72 in heap_bench's). */
    for (uint32_t k = 0; nw > 1u && k < nw; k += WH__SEG_RUN_CHUNK) {
        uint32_t n = nw - k < WH__SEG_RUN_CHUNK ? nw - k : WH__SEG_RUN_CHUNK, ok = 0;
        for (uint32_t j = 0; j < n; ++j) {
            uint64_t all = ~0ull;
            if (wh_atomic_cas(wh_bitmap_word(&h->pages, 0, w + k + j), &all, 0ull, WH__RUN_MO, WH_RELAXED))
                ok |= 1u << j;
        }
        if (ok != (1u << n) - 1u) {
            for (uint32_t j = 0; j < k + n; ++j)
                if (j < k || ok >> (j - k) & 1u) (void)wh__pages_or(h, w + j, ~0ull);
            return WH_BITMAP_NONE;
        }
    }
    WH__RUN_FENCE();
    /* the words we emptied: the levels above learn it after the install
     * (wh__seg_finish), off the waiters' path; until then they only send a
     * search to words it finds empty.  Their whole bits now. */
    wh__whole_taken(h, w, nw);
    return (w * 64u + i) >> shift;
}

/* A group of page words worth a take, for an aligned run of 1 << shift
 * pages, from a summary walked from a random word.  Near the end of a fill
 * a few whole runs hide among many partly free words, and a miss costs much
 * more than a look: the back-off that follows sends requests to the bitmap
 * path, whose single pages break the runs left (4-KiB refills at a third of
 * the first fill's rate, after preparations that missed six whole runs).
 * Runs of whole words (shift >= 6): the whole-word summary
 * (heap/page_whole.h), at most WH__SEG_SCAN_WHOLE of its words, where an
 * aligned field of nw set bits is a group whose words were all free when
 * last seen; one of them picked by the seed, so that preparers at once take
 * different ones.  Runs inside a word: the page bitmap's summary (bit i of
 * level 1: page word i has a free page), at most WH__SEG_SCAN_WORDS words.
 * The group's first word, or WH_BITMAP_NONE, and *all when the walk saw
 * the whole summary (so no run is left).  It only looks; the caller takes (a
 * scan that took as well held 16 more registers in a kernel with one
 * allocation, even as a call: a kernel's count follows its heaviest rare
 * entry). */
WH__SLAB_RARE WH_HOST_DEVICE uint32_t wh__seg_scan_run(const wh_heap *h, uint32_t shift, uint64_t seed, bool *all) {
    const wh_bitmap *pg = &h->pages;
    bool whole = shift >= 6u;
    uint32_t nw = whole ? 1u << (shift - 6u) : 1u;
    uint32_t l1 = whole ? wh__whole_words(h->npages) : wh_bitmap_level_words(pg, 1);
    uint32_t most = whole ? WH__SEG_SCAN_WHOLE : WH__SEG_SCAN_WORDS;
    *all = l1 <= most;
    if (!whole && pg->levels < 2u) return WH_BITMAP_NONE; /* one word: the guess saw it */
    uint64_t *sum = whole ? h->page_whole : wh_bitmap_word(pg, 1, 0);
    uint32_t s = wh__below(seed, l1);
    for (uint32_t k = 0; k < l1 && k < most; ++k, s = s + 1u == l1 ? 0u : s + 1u) {
        /* bit i: words i .. i+nw-1 are whole (have a free page) */
        uint64_t m = wh__aligned_fields(wh_atomic_load(sum + s, WH_RELAXED), nw);
        if (m) return s * 64u + wh__bitmap_pick(m, wh__bitmap_rot(seed, 1));
    }
    return WH_BITMAP_NONE;
}

/* An aligned run of 1 << shift free pages taken from the page bitmap: a
 * guess first, run `next` (the one after the way's current segment) or, with
 * none (WH_BITMAP_NONE or past the heap), one at random; then up to
 * WH__SEG_SCAN_TAKES groups the summaries name (wh__seg_scan_run), then
 * random descents of the page bitmap, 8 in all; none when the walk of the
 * summary saw all of it and found no group.  A way that takes its segments
 * one after the other finds the next one free wherever the pool is fresh or
 * came back whole: a random guess misses once a fill has half the pool, and
 * each miss costs a preparation a scan and a take, the round trips that
 * every warp of the way waits for when segments run out faster than they
 * are prepared (one 4-KiB allocation a thread, 1M threads: 1.5 tries a
 * preparation).  One take for all (wh__seg_take_run inlined twice: 4 more
 * registers in a kernel).  Its index, or WH_BITMAP_NONE. */
WH__SLAB_RARE WH_HOST_DEVICE uint32_t wh__seg_claim_run(const wh_heap *h, uint32_t shift, uint64_t seed,
                                                        uint32_t next) {
    uint32_t nw = shift < 6u ? 1u : 1u << (shift - 6u), words = wh_bitmap_level_words(&h->pages, 0);
    uint64_t at = ((uint64_t)next << shift) >> 6; /* the page word of run `next` */
    uint32_t guess = at + nw <= words ? (uint32_t)at : wh__below(seed, words / nw) * nw;
    for (uint32_t tries = 0; tries < 8u + WH__SEG_SCAN_TAKES; ++tries, seed = wh_hash64(seed + tries)) {
        bool empty = false, all = false, scan = tries >= 1u && tries <= WH__SEG_SCAN_TAKES;
        uint32_t w = scan                        ? wh__seg_scan_run(h, shift, seed, &all)
                     : tries == 0 && words >= nw ? guess
                                                 : wh__bitmap_descend(&h->pages, seed, &empty);
        if (w == WH_BITMAP_NONE) {
            if (empty || all) return WH_BITMAP_NONE; /* no page, or the summary has no group */
            continue;
        }
        w &= ~(nw - 1u);
        uint32_t got = wh__seg_take_run(h, w, shift, seed);
        if (got != WH_BITMAP_NONE) return got;
    }
    return WH_BITMAP_NONE;
}

/* Page p of class c and the segments of state v: the position from which
 * the segment that holds p hands out nothing yet (~0: p lies in neither,
 * every slot of it was handed out), and in *lo the position of p's first
 * slot in that segment. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_from(const wh_heap *h, uint32_t c, uint32_t p, uint64_t v, uint64_t *lo) {
    uint64_t r0 = wh__seg_r0(v), r1 = wh__seg_r1(v), s = wh__seg_s(v), spp = wh__slab_spp_of(h, c);
    uint64_t n0 = wh__seg_pages(r0), n1 = wh__seg_pages(r1), cap0 = spp * n0, cap1 = spp * n1;
    uint64_t j0 = (uint64_t)p - wh__seg_p0(r0), j1 = (uint64_t)p - wh__seg_p0(r1); /* past the end: wraps */
    *lo = 0;
    if (j0 < n0) {
        *lo = j0 * spp;
        return s < cap0 ? s : cap0;
    }
    if (j1 < n1) {
        *lo = j1 * spp;
        return s > cap0 ? (s - cap0 < cap1 ? s - cap0 : cap1) : 0;
    }
    return ~0ull;
}
/* Of the positions [lo, lo + spp) of one page, those at or past `from`
 * (wh__seg_from): untouched. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_untouched_at(uint64_t lo, uint64_t spp, uint64_t from) {
    if (from >= lo + spp) return 0;
    return lo + spp - (from > lo ? from : lo);
}
/* Slots of page p, class c, that the segments of state v still hold
 * untouched: neither handed out nor free (the walk counts them free). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_untouched(const wh_heap *h, uint32_t c, uint32_t p, uint64_t v) {
    uint64_t lo, from = wh__seg_from(h, c, p, v, &lo);
    return wh__seg_untouched_at(lo, wh__slab_spp_of(h, c), from);
}

/* Take back what class c's segments hold untouched (the rest of the current
 * one, all of the next) and publish it.  Caller holds c's flag.  Only while
 * s < capacity: then no rotation is pending (one is only while the current
 * one is used up and a next one is there).  One CAS: it fails when the class
 * hands out meanwhile, and then it is busy anyway. */
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_take_back(const wh_heap *h, uint32_t c, uint32_t way) {
    uint64_t *st = wh__seg_state(h, c, way), v = wh_atomic_load(st, WH_ACQUIRE);
    uint64_t r0 = wh__seg_r0(v), r1 = wh__seg_r1(v), s = wh__seg_s(v), cap0 = wh__seg_cap(h, c, r0);
    if (!r0 || s >= cap0) return;
    if (!wh_atomic_cas(st, &v, 0ull, WH_ACQ_REL, WH_RELAXED)) return;
    wh__seg_publish(h, c, r0, s, cap0 - s);
    if (r1) wh__seg_publish(h, c, r1, 0, wh__seg_cap(h, c, r1));
}

/* The flag of class c's way (seg_prep): one holder at a time prepares or
 * takes back its segments.  A load first, so that a held flag costs no CAS. */
WH_INLINE WH_HOST_DEVICE uint32_t *wh__seg_flag(const wh_heap *h, uint32_t c, uint32_t way) {
    return &h->ctl->seg_prep[wh__seg_index(c, way)];
}
/* Flag values: free, held, or free but backing off (wh__seg_back_off: nobody
 * begins a preparation; a take-back may still lock it, and ends the back-off). */
#define WH__SEG_HELD    1u
#define WH__SEG_BACKING 2u
WH_INLINE WH_HOST_DEVICE bool wh__seg_lock(const wh_heap *h, uint32_t c, uint32_t way) {
    uint32_t *flag = wh__seg_flag(h, c, way), v = wh_atomic_load(flag, WH_RELAXED);
    return (v == 0u || v == WH__SEG_BACKING) && wh_atomic_cas(flag, &v, WH__SEG_HELD, WH_ACQUIRE, WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE void wh__seg_unlock(const wh_heap *h, uint32_t c, uint32_t way) {
    wh_atomic_store(wh__seg_flag(h, c, way), 0u, WH_RELEASE);
}

/* Back-off.  A preparation fails when the page pool has free pages but no
 * aligned run of the segment's size: page runs and single-page activations
 * take pages anywhere, so in a long run of mixed sizes (the k-d tree's
 * builds) every aligned run holds some.  Searching again on every request
 * that finds the segments empty costs the search each time (8 tries, each a
 * descent of the page bitmap).  So the preparer that failed leaves the flag
 * WH__SEG_BACKING, and the next 2^e requests that find the way empty take
 * the bitmap path at once (e: consecutive failures, at most
 * WH__SEG_BACKOFF_MAX); the last of them frees the flag, and the request
 * after it tries a preparation again.  Every skip is counted (a fetch-add:
 * a count by CAS let each request that lost the race skip uncounted, and
 * two failures in a 4-KiB refill sent a thousand requests to the bitmap
 * path, whose single pages broke the runs left).  The back-off ends at once when frees
 * have given a segment's worth of pages back to the pool since the failure
 * (wh__pages_back; not take-backs, which every preparation that finds the
 * pool dry makes: counted, they ended the other ways' back-offs and sent
 * them searching again, a fresh 16-B fill at 2.0e10/s against 3.4e10): a
 * fill that ran the pool dry at its end left its ways
 * backing off, and after everything was freed the next fill's first
 * requests still took the bitmap path, whose single pages broke the free
 * runs its later preparations needed (256-B refills at a fortieth of the
 * first fill's rate).  A back-off timed instead ended too soon in a
 * mixed-size fill, whose classes then searched and took each other's
 * segments back (a quarter slower).
 * The skip word: pages given back at the failure << WH__SKIP_BACK_SHIFT |
 * e << WH__SKIP_E_SHIFT | requests counted since. */
#define WH__SKIP_BACK_SHIFT 28u
#define WH__SKIP_E_SHIFT    24u
WH_INLINE WH_HOST_DEVICE uint64_t *wh__seg_skip(const wh_heap *h, uint32_t c, uint32_t way) {
    return &h->ctl->seg_skip[wh__seg_index(c, way)];
}
/* The requests a skip word lets skip: 2^e. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__skip_limit(uint64_t k) { return 1ull << (k >> WH__SKIP_E_SHIFT & 15u); }
/* The holder of the flag found no run: give the flag back, backing off. */
WH_INLINE WH_HOST_DEVICE void wh__seg_back_off(const wh_heap *h, uint32_t c, uint32_t way) {
    uint64_t *sk = wh__seg_skip(h, c, way), e = (wh_atomic_load(sk, WH_RELAXED) >> WH__SKIP_E_SHIFT & 15u) + 1u;
    if (e > WH__SEG_BACKOFF_MAX) e = WH__SEG_BACKOFF_MAX;
    uint64_t back = wh__pages_back_count(h);
    wh_atomic_store(sk, back << WH__SKIP_BACK_SHIFT | e << WH__SKIP_E_SHIFT, WH_RELAXED);
    wh_atomic_store(wh__seg_flag(h, c, way), WH__SEG_BACKING, WH_RELEASE);
}
/* A request found class c's way empty: true if it is backing off (the
 * request takes the bitmap path).  The request is counted, and the one that
 * spends the count ends the back-off; one that finds it spent neither skips
 * nor adds (the count passes 2^e only by the adds in flight, far below
 * 2^WH__SKIP_E_SHIFT).  False, and the back-off ended, when a segment's
 * worth of pages came back since the failure (the request may prepare). */
WH__SLAB_RARE WH_HOST_DEVICE bool wh__seg_backing_off(const wh_heap *h, uint32_t c, uint32_t way) {
    uint32_t *flag = wh__seg_flag(h, c, way), b = WH__SEG_BACKING;
    uint64_t *sk = wh__seg_skip(h, c, way), counted = (1ull << WH__SKIP_E_SHIFT) - 1u;
    if (wh_atomic_load(flag, WH_ACQUIRE) != WH__SEG_BACKING) return false;
    uint64_t k = wh_atomic_load(sk, WH_RELAXED), back = wh__pages_back_count(h);
    uint64_t grew = (back - (k >> WH__SKIP_BACK_SHIFT)) & ((1ull << (64u - WH__SKIP_BACK_SHIFT)) - 1u);
    if (grew >= (1ull << h->seg_shift[c])) {
        (void)wh_atomic_cas(flag, &b, 0u, WH_RELEASE, WH_RELAXED);
        return false;
    }
    if ((k & counted) >= wh__skip_limit(k)) return false; /* spent: its last skip ends it */
    k = wh__atomic_add64(sk, 1ull, WH_RELAXED);
    if ((k & counted) >= wh__skip_limit(k)) return false;
    if ((k & counted) + 1u == wh__skip_limit(k)) (void)wh_atomic_cas(flag, &b, 0u, WH_RELEASE, WH_RELAXED);
    WH__PROF(h, WH_PROF_BACKOFF, 1);
    return true;
}

/* Take class c's segments back if no one else holds its flag: from the
 * pool-dry paths and wh_heap_trim. */
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_retire(const wh_heap *h, uint32_t c, uint32_t way) {
    uint64_t v = wh_atomic_load(wh__seg_state(h, c, way), WH_RELAXED);
    if (!wh__seg_r0(v) || wh__seg_s(v) >= wh__seg_cap(h, c, wh__seg_r0(v))) return; /* nothing untouched */
    if (!wh__seg_lock(h, c, way)) return;
    wh__seg_take_back(h, c, way);
    wh__seg_unlock(h, c, way);
}

/* The current segment is used up (or there is none): install segment r1
 * (a code) of class c as the current one with nothing handed out, by CAS.
 * Only adds that saw a slot change the state meanwhile, and they stop once
 * it is used up, so the CAS soon holds.  Installing it as the next one instead would make the
 * positions that those late adds claimed past the end "orphans": published
 * into the class bitmap, they send every later request of the class to the
 * bitmap path (48K orphans, 1.6M bitmap claims in one fill of 256-B
 * objects).  False: the current one has slots, or the CAS kept
 * failing (bounded): the caller installs it as the next one. */
WH_INLINE WH_HOST_DEVICE bool wh__seg_install_fresh(const wh_heap *h, uint32_t c, uint64_t *st, uint64_t r1) {
    uint64_t v = wh_atomic_load(st, WH_RELAXED);
    const uint32_t limit = WH__SEG_FRESH_TRIES; /* a variable: no warning at 0 */
    for (uint32_t tries = 0; tries < limit; ++tries) {
        if (wh__seg_s(v) < wh__seg_cap(h, c, wh__seg_r0(v))) return false;
        if (wh_atomic_cas(st, &v, r1 << WH__SEG_R_SHIFT0, WH_ACQ_REL, WH_RELAXED)) return true;
    }
    return false;
}

/* Every way of every class but `except` (wh__seg_index; WH__SEG_ALL: none)
 * gives back what its segments hold untouched, and then the stranded pages
 * go back (wh__slab_sweep), those that the take-backs emptied among them. */
#define WH__SEG_ALL (WH_SLAB_CLASSES * WH_SEG_WAYS_MAX)
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_retire_all(const wh_heap *h, uint32_t except) {
    WH__PROF(h, WH_PROF_RETIRE_ALL, 1);
    WH_PRAGMA_UNROLL1
    for (uint32_t o = 0; o < WH_SLAB_CLASSES; ++o) {
        WH_PRAGMA_UNROLL1
        for (uint32_t way = 0; way < h->seg_ways; ++way)
            if (wh__seg_index(o, way) != except) wh__seg_retire(h, o, way);
    }
    wh__slab_sweep(h);
}

/* wh_heap_trim: every class gives back what its segments hold untouched,
 * and counts as a user of the pool (wh__seg_shift) again only once it
 * prepares a segment. */
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_trim(const wh_heap *h) {
    wh__seg_retire_all(h, WH__SEG_ALL);
    for (uint32_t k = 0; k < WH__SEG_USED_WORDS; ++k) wh_atomic_store(&h->ctl->seg_used[k], 0ull, WH_RELAXED);
}

#ifdef WH_HEAP_PROFILE
/* Profile builds: the whole aligned runs of 1 << shift free pages in page
 * words [0, nwords) -- the page bitmap's level 0, or a copy of it on the host
 * (bench/heap: the pool census) -- and, in *pages, the free pages. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__prof_free_runs(uint64_t *words, uint32_t nwords, uint32_t shift,
                                                     uint64_t *pages) {
    uint32_t nw = shift < 6u ? 1u : 1u << (shift - 6u);
    uint64_t runs = 0;
    *pages = 0;
    for (uint32_t w = 0; w < nwords; w += nw) {
        bool whole = w + nw <= nwords;
        for (uint32_t k = 0; k < nw && w + k < nwords; ++k) {
            uint64_t m = wh_atomic_load(&words[w + k], WH_RELAXED);
            *pages += (uint64_t)wh_popc64(m);
            whole &= m == ~0ull;
            if (shift < 6u) runs += (uint64_t)wh_popc64(wh__aligned_fields(m, 1u << shift));
        }
        runs += shift >= 6u && whole;
    }
    return runs;
}
/* What a failed preparation missed: counted into the profile. */
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_prof_runs(const wh_heap *h, uint32_t shift) {
    uint64_t pages,
        runs = wh__prof_free_runs(wh_bitmap_word(&h->pages, 0, 0), wh_bitmap_level_words(&h->pages, 0), shift, &pages);
    WH__PROF(h, WH_PROF_NONE_RUNS, runs);
    WH__PROF(h, WH_PROF_NONE_PAGES, pages);
}
#endif

/* The size of the next segment of class c's way, 2^shift pages: the class's
 * largest (h->seg_shift[c], at most 1/WH__SEG_HEAP_DIV of the heap), unless
 * the class ways that have prepared segments (this one now among them) are
 * so many that WH__SEG_SHARE segments each would pass the heap.  One class
 * on every way gets the largest; a mixed-size workload gets segments that
 * its classes can all hold at once. */
WH__SLAB_RARE WH_HOST_DEVICE uint32_t wh__seg_shift(const wh_heap *h, uint32_t c, uint32_t way) {
    uint32_t i = wh__seg_index(c, way), n = 0;
    uint64_t *mine = &h->ctl->seg_used[i >> 6], bit = 1ull << (i & 63u);
    if (!(wh_atomic_load(mine, WH_RELAXED) & bit)) (void)wh__atomic_or64(mine, bit, WH_RELAXED);
    /* the words WH__SEG_USED_BATCH at a time, their loads in flight
     * together: one after the other, they held every preparation for 11
     * dependent round trips */
    WH_PRAGMA_UNROLL1
    for (uint32_t k = 0; k < WH__SEG_USED_WORDS; k += WH__SEG_USED_BATCH) {
        uint64_t m[WH__SEG_USED_BATCH];
        for (uint32_t j = 0; j < WH__SEG_USED_BATCH; ++j)
            m[j] = k + j < WH__SEG_USED_WORDS ? wh_atomic_load(&h->ctl->seg_used[k + j], WH_RELAXED) : 0u;
        for (uint32_t j = 0; j < WH__SEG_USED_BATCH; ++j) n += (uint32_t)wh_popc64(m[j]);
    }
    uint64_t share = h->npages / ((uint64_t)WH__SEG_SHARE * (n ? n : 1u));
    uint32_t shift = share ? (uint32_t)wh_log2_64(share) : 0u, most = h->seg_shift[c];
    if (shift < WH__SEG_SHARE_MIN) shift = WH__SEG_SHARE_MIN;
    return shift < most ? shift : most;
}

/* Preparing the next segment of class c's way, in three steps, so that the whole
 * group of the leader that finds it missing sets up its pages:
 *   wh__seg_begin  (leader, from wh__slab_begin): class c's flag and an
 *                  aligned run of free pages;
 *   wh__seg_setup  (every lane of the group): the pages' counts and class;
 *   wh__seg_finish (leader, after the group's barrier): install, flag back.
 * begin returns 1 with *code set: the flag is ours, set the segment up and
 * finish it; 1 with *code = WH_BITMAP_NONE: a next segment is there already; 0:
 * someone else holds the flag; -1: no aligned run of free pages, even after
 * taking back what the other classes' segments held; WH__SEG_DRY: no run and
 * no free page, the flag still ours -- the caller takes back what every
 * other class way holds untouched (wh__seg_retire_all, a call of its own:
 * inlined here, its registers came on top of the search's, 91 against 72
 * in heap_bench's DEFAULT kernel of one allocation and one free) and calls
 * again with `retired`, which searches once more, the flag held
 * throughout. */
#define WH__SEG_DRY (-2)
WH__SLAB_RARE WH_HOST_DEVICE int wh__seg_begin(const wh_heap *h, uint32_t c, uint32_t way, uint64_t seed,
                                               uint32_t *code, bool retired) {
    *code = WH_BITMAP_NONE;
    WH__PROF_T(t0);
    if (!retired) {
        if (!wh__seg_lock(h, c, way)) return 0;
        WH__PROF(h, WH_PROF_PREP_LOCKED, 1);
    }
    /* only a holder of the flag sets r1, so r1 == 0 here stays so until we do */
    uint64_t v = wh_atomic_load(wh__seg_state(h, c, way), WH_ACQUIRE);
    if (wh__seg_r1(v) != 0) {
        wh__seg_unlock(h, c, way);
        return 1;
    }
    /* the first run of this size past the current one, if there is one
     * (after a take-back: any) */
    uint32_t shift = wh__seg_shift(h, c, way), r0 = (uint32_t)wh__seg_r0(v);
    uint32_t next =
        r0 && !retired ? (wh__seg_p0(r0) + (uint32_t)wh__seg_pages(r0) + (1u << shift) - 1u) >> shift : WH_BITMAP_NONE;
    uint32_t got = wh__seg_claim_run(h, shift, retired ? wh_hash64(seed) : seed, next);
    /* the pool ran dry: what the other classes hold untouched is worth
     * more to this request than to them.  Not when free pages are left but
     * none in an aligned run: taking every class's segments back would make
     * them all prepare again, each likely to fail the same way (the k-d
     * tree: a storm of take-backs and searches) */
    if (got == WH_BITMAP_NONE && !retired && wh__pages_dry(h)) return WH__SEG_DRY;
    if (got == WH_BITMAP_NONE) {
        WH__PROF(h, WH_PROF_PREP_NONE, 1);
#ifdef WH_HEAP_PROFILE
        wh__seg_prof_runs(h, shift);
#endif
        wh__seg_back_off(h, c, way);
        return -1;
    }
    uint64_t *sk = wh__seg_skip(h, c, way);
    if (wh_atomic_load(sk, WH_RELAXED)) wh_atomic_store(sk, 0ull, WH_RELAXED); /* failures in a row: none */
    *code = (uint32_t)wh__seg_code(got << shift, shift);
    WH__PROF(h, WH_PROF_BEGIN_CYCLES, WH__PROF_CLOCK() - t0);
    return 1;
}

/* Lane `rank` of `lanes` sets up its share of the pages of segment `code`:
 * consecutive lanes write consecutive pages, so a warp's writes coalesce (one
 * thread alone takes ~240 cycles a page, 130 us for the 1024 pages of a
 * 256 B segment).  Relaxed and not waited for (`red`): the install in
 * wh__seg_finish publishes them.  An add, not a store: see wh__slab_activate. */
WH_INLINE WH_HOST_DEVICE void wh__seg_setup(const wh_heap *h, uint32_t c, uint32_t way, uint32_t code, uint32_t rank,
                                            uint32_t lanes) {
    uint32_t n = (uint32_t)wh__seg_pages(code), p0 = wh__seg_p0(code), spp = wh__slab_spp(c);
    WH_PRAGMA_UNROLL1
    for (uint32_t j = rank; j < n; j += lanes) {
        uint32_t p = p0 + j;
        wh_atomic_add_relaxed(&h->page_used[p], spp);
        wh_atomic_store(&h->page_info[p], WH_PAGE_SLAB(c, way), WH_RELAXED);
    }
}

/* Install segment `code` of class c, set up by the group (whose barrier
 * ordered its writes before this), as the current one if that is used up,
 * else as the next one; give the flag back. */
WH__SLAB_COLD WH_HOST_DEVICE void wh__seg_finish(const wh_heap *h, uint32_t c, uint32_t way, uint32_t code) {
    uint64_t *st = wh__seg_state(h, c, way), cap = wh__seg_cap(h, c, code), r1 = code;
    WH__PROF_T(t0);
    /* the other lanes' set-up goes out with our install (cumulative) */
    wh_fence();
    if (!wh__seg_install_fresh(h, c, st, r1)) {
        uint64_t old = wh__atomic_add64(st, r1 << WH__SEG_R_SHIFT1, WH_ACQ_REL);
        uint64_t r0 = wh__seg_r0(old), s = wh__seg_s(old), cap0 = wh__seg_cap(h, c, r0);
        if (s >= cap0) {
            /* the current one ran out (or there is none) before we came:
             * nobody rotated, and positions [0, s - cap0) of ours were
             * claimed by adds that found no next segment: orphans */
            (void)wh__atomic_add64(st, wh__seg_rotation(r0, r1, cap0), WH_ACQ_REL);
            uint64_t orphans = s - cap0 < cap ? s - cap0 : cap;
            if (orphans) wh__seg_publish(h, c, code, 0, orphans);
            WH__PROF(h, WH_PROF_ORPHANS, orphans);
        }
    }
    wh__seg_unlock(h, c, way);
    WH__PROF_T(t1);
    WH__PROF(h, WH_PROF_INSTALL_CYCLES, t1 - t0);
    /* the page words the run emptied (wh__seg_claim_run): the levels above
     * learn it now, for all of them at once (one summary word: the run is
     * aligned, at most 16 words) */
    uint32_t n = (uint32_t)wh__seg_pages(code);
    (void)wh__bitmap_propagate_span(&h->pages, 0, wh__seg_p0(code) >> 6, n < 64u ? 1u : n >> 6);
    WH__PROF(h, WH_PROF_SPAN_CYCLES, WH__PROF_CLOCK() - t1);
}

/* State v has no next segment, its current one (if any) is far enough
 * along, and nobody is preparing one for class c's way: the taker that sees
 * it begins preparing it (wh__seg_begin), so that it is ready when the
 * current one runs out. */
WH_INLINE WH_HOST_DEVICE bool wh__seg_wants_next(const wh_heap *h, uint32_t c, uint32_t way, uint64_t v) {
    uint64_t at = wh__seg_cap(h, c, wh__seg_r0(v)) >> WH__SEG_NEXT_SHIFT;
    return !wh__seg_r1(v) && wh__seg_s(v) >= at && !wh_atomic_load(wh__seg_flag(h, c, way), WH_RELAXED);
}

/* Does class c hand out bump segments in heaps of segment level segs
 * (wh_heap.slab_segs: 0 none, 1 classes of WH__SEG_MIN_SPP slots a page, 2
 * those and the tiled ones)? */
WH_INLINE WH_HOST_DEVICE bool wh__seg_class(uint32_t c, uint32_t segs) {
    if (c >= WH__SLAB_SPP_C0 && c < WH__SLAB_PAGE_C0) { /* 1 to 4 KiB: m slots a page, m < MIN_SPP */
        uint32_t m = WH__SLAB_SPP_END - c;              /* they tile the page where m is a power of two */
        return segs > 1u && !(m & (m - 1u)) && m * WH__SEG_MAX_TILED >= WH_SLAB_PAGE;
    }
    uint32_t size = wh__slab_size(c);                         /* no division here: every allocation asks */
    return segs && (size <= WH_SLAB_PAGE / WH__SEG_MIN_SPP || /* spp >= MIN_SPP */
                    (segs > 1u && size <= WH__SEG_MAX_TILED && !(size & (size - 1u)))); /* no tail */
}
/* Does class c of heap h hand out bump segments (else: the bitmap path)? */
WH_INLINE WH_HOST_DEVICE bool wh__seg_on(const wh_heap *h, uint32_t c) { return wh__seg_class(c, h->slab_segs); }

/* Leader: up to `want` slots of class c from its bump segments: positions
 * q .. q+n1-1 of segment `code`, *b1 = code << 32 | q, and, for the add
 * that crosses into the next segment, positions 0 .. n2-1 of segment r2,
 * *x2 = n2 << 24 | r2 (codes).  Returns n1 + n2 (0: take the bitmap path, unless
 * *begin is set).  The next segment is prepared while the current one
 * still has most of its slots, so that it is ready when the current runs
 * out (wh__seg_wants_next): *begin says
 * that nobody prepares it; the leader then does (wh__slab_begin), after
 * this call has returned -- not from in here, where the caller's values
 * would sit above the preparation's registers (a 1-allocation kernel 207
 * registers in heap_bench, one block of 256 per SM).  v: the state word of
 * class c's way as the caller loaded it, or, if `added`, as an add of `want`
 * that the caller made returned it (wh__slab_get's fast path). */
WH_INLINE WH_HOST_DEVICE unsigned wh__seg_take(const wh_heap *h, uint32_t c, uint32_t way, unsigned want, uint64_t v,
                                               bool added, uint64_t *b1, uint32_t *x2, bool *begin) {
    uint64_t *st = wh__seg_state(h, c, way);
    uint32_t hops = 0; /* ways looked at past the caller's */
    *x2 = 0;
    if (!wh__seg_on(h, c)) return 0;
    if (!added) WH__PROF(h, WH_PROF_SEG_CALLS, 1);
    for (uint32_t n = 0; n < WH__SEG_POLLS; ++n, v = wh_atomic_load(st, WH_RELAXED), added = false) {
        uint64_t r0 = wh__seg_r0(v), r1 = wh__seg_r1(v), s = wh__seg_s(v);
        uint64_t cap0 = wh__seg_cap(h, c, r0), cap1 = wh__seg_cap(h, c, r1);
        if (!added) {                                     /* (else the add is made: its outcome below) */
            if (!(s < cap0 || (r1 && s - cap0 < cap1))) { /* nothing to hand out */
                WH__PROF(h, WH_PROF_SEG_EMPTY, 1);
                if (!hops && wh__seg_wants_next(h, c, way, v)) {
                    *begin = true; /* prepare it, then look again */
                    return 0;
                }
                /* nobody prepares one after a failure: one look at each
                 * other way's segments (no wait, no preparation: those are
                 * their own requests'), then the bitmap path */
                if (hops || (!r1 && wh__seg_backing_off(h, c, way))) {
                    if (++hops >= h->seg_ways) return 0;
                    way = (way + 1u) & (h->seg_ways - 1u), st = wh__seg_state(h, c, way);
                    continue;
                }
                /* an empty pool will not fill by waiting: the bitmap path
                 * (a look now and then: a line every waiter reads) */
                if ((n & 7u) == 0 && wh__pages_dry(h)) {
                    WH__PROF(h, WH_PROF_SEG_FALLBACK, 1);
                    return 0;
                }
                wh_backoff(n < WH__SEG_POLL_SLEEP ? n : WH__SEG_POLL_SLEEP);
                continue;
            }
            /* acquire: the pages' set-up by the preparer whose install
             * (release) this add reads from; a taker publishes nothing */
            v = wh__atomic_add64(st, (uint64_t)want, WH_ACQUIRE);
            r0 = wh__seg_r0(v), r1 = wh__seg_r1(v), s = wh__seg_s(v);
            cap0 = wh__seg_cap(h, c, r0), cap1 = wh__seg_cap(h, c, r1);
        }
        uint64_t n1 = 0, n2 = 0;
        if (s < cap0) {
            n1 = want < cap0 - s ? want : cap0 - s;
            *b1 = r0 << 32 | s;
            if (s + want >= cap0 && r1) { /* we reached the end: rotate */
                n2 = want - n1 < cap1 ? want - n1 : cap1;
                if (n2) *x2 = (uint32_t)(n2 << 24 | r1);
                (void)wh__atomic_add64(st, wh__seg_rotation(r0, r1, cap0), WH_ACQ_REL);
            }
        } else if (r1 && s - cap0 < cap1) {
            n1 = want < cap1 - (s - cap0) ? want : cap1 - (s - cap0);
            *b1 = r1 << 32 | (s - cap0);
        }
        *begin = !hops && wh__seg_wants_next(h, c, way, v); /* the caller prepares its own way's */
        if (n1 + n2 || *begin) return (unsigned)(n1 + n2);
    }
    WH__PROF(h, WH_PROF_SEG_FALLBACK, 1);
    return 0;
}

#endif /* WARPHEAP_HEAP_SLAB_SEGMENT_H */
