/* SPDX-License-Identifier: MIT */
/* SLAB: size classes on hierarchical bitmaps, with DynaSOAr's request
 * coalescing and bitmap rotation (dynasoar-object-allocator.txt section 4.2);
 * the slabs themselves follow Halloc as summarised in
 * register-efficient-gpu-allocators.txt section 4.5.
 *
 * The arena is a grid of 64 KiB pages.  Class c serves wh__slab_size(c) bytes
 * (heap/core.h: 52 classes from 16 B to 64 KiB, multiples of 16; heaps under
 * 16 MiB use only the 13 powers of two).  One bitmap `pages` says which pages
 * are free; one bitmap per class, over every slot the arena could hold in
 * that class (page << lbpp + slot, lbpp = log2 of spp rounded up), says which
 * slots are free *in pages active for that class*.  So an
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
 * the page pool dry with plenty of room left (as in the k-d tree builder).
 * So at most npages/64 (npages/256 with the 52 classes) leaders per class
 * (at least one) activate at a time; the others back off and look for the slots those publish, and after
 * WH_SLAB_GATE_TRIES looks activate anyway: a bounded wait, never a wait on
 * one thread.  A request that finds no free page looks for published or
 * freed slots up to WH_SLAB_TAKE_TRIES times before it fails.
 *
 * Bump segments: the fast path of a class, ahead of its freed slots
 * (WH_SLAB_REUSE_FIRST; bump allocation inside slabs, as XMalloc and Halloc do; register-efficient-
 * gpu-allocators.txt section 4.5).  Publishing a fresh page slot by slot and
 * claiming the slots back costs a warp several atomics, plus a page
 * activation every few warps.  Instead a class hands out consecutive slots of
 * a *segment* -- 1 << seg_shift[c] aligned pages taken from the page pool
 * at once -- by one atomic add per warp on the class's state word:
 *     r0 (21 bits): current segment + 1, r1 (21 bits): next segment + 1,
 *     s (22 bits): slots handed out of the current one (positions past its
 *                  capacity lie in the next one).
 * Slots are never published: a slot's bit is set only when it is freed, so
 * frees, double-free detection and reclaim are unchanged.  A segment's pages
 * count all their slots as used from the start (page_used += spp), so a page
 * with slots still to hand out is never reclaimed; the walk counts those
 * untouched slots free (wh__seg_untouched).  The next segment is prepared
 * once an eighth of the current one is handed out (wh__seg_wants_next),
 * by one group of lanes per class
 * at a time (seg_prep: its leader claims the pages, the group sets them up,
 * the leader installs), so a warp that runs past the end goes on in the next
 * segment without waiting.  Moving next to current ("rotation": r0 = r1, r1 = 0,
 * s -= capacity) is one atomic add, done exactly once: by the add that
 * reaches the capacity (s < cap <= s + want) if it saw r1 set.  A preparer
 * that finds the current one used up installs its segment as the current
 * one, fresh, by CAS (wh__seg_install_fresh); only if that CAS keeps failing
 * does it install as next and rotate itself, and then the positions claimed
 * while no next segment was there ("orphans": nobody got those slots) are
 * published free.  A warp loads the state first and adds only when a slot
 * is there, so s stays far below 2^22 (capacity < 2^20, heap_layout.c; the
 * adds in flight at once are at most one per resident warp of at most 32
 * slots, about 2^18 on a 132-SM GPU).  When no aligned run of free pages is
 * left, or the state stays empty for WH_SEG_POLLS looks, the request takes
 * the bitmap path.  All of this is per way: large heaps give a class up to
 * WH_SEG_WAYS_MAX independent states, one per group of SMs (wh__seg_way).
 * Lazy reclaim: a segment's untouched slots stay with its class until the
 * page pool runs dry (a page activation, a segment preparation or a page run
 * of DEFAULT that finds no free page takes back what every class holds
 * untouched: wh__seg_retire_all) or the host asks (wh_heap_trim).  Taking
 * them back when a class goes idle (WH_SEG_RETIRE) costs a preparation per
 * allocation where one lane allocates and frees at once.
 */
#ifndef WH_SEG_POLLS
#define WH_SEG_POLLS 1024u
#endif
/* The longest sleep between two looks, 32 ns << WH_SEG_POLL_SLEEP: at a
 * cold start every warp of the grid waits for the first segments, and their
 * looks at the way's state queue up before the preparer's own atomics on it. */
#ifndef WH_SEG_POLL_SLEEP
#define WH_SEG_POLL_SLEEP 4u
#endif
/* Classes of fewer slots per page (over 512 B) take the bitmap path, but
 * for those of WH_SEG_MAX_TILED below.  The preparer's group sets up a
 * segment's pages (wh__seg_setup): one thread alone, at ~240 cycles a page,
 * makes segments lose to parallel page activations at 4 KiB (1M threads:
 * 8.9 ms against 0.62 ms). */
#ifndef WH_SEG_MIN_SPP
#define WH_SEG_MIN_SPP 128u
#endif
/* The segment form of a leader's result (wh__got_seg) holds a page's tail
 * in 5 bits of 16 bytes and adds it once: right where a page holds at least
 * 128 slots (tail under 512 B, a group of 32 crossing one page end at most).
 * Classes whose slots tile the page (powers of two: no tail) may cross any
 * number of page ends, their addresses running on unchanged; those up to
 * WH_SEG_MAX_TILED bytes (1, 2 and 4 KiB) get segments too (0: none).
 * Segments against none: one 4-KiB object per thread, 1M threads, 0.25 ms
 * against 0.62 (1 KiB: 0.10 against 0.95); Alloc-Dealloc every thread at
 * 4 KiB 0.16 ms against 2.44; fill-90% at 4 KiB 4.31e9 allocations/s
 * against 1.75e9; 16-256 B and the mixed-size utilisation unchanged. */
#ifndef WH_SEG_MAX_TILED
#define WH_SEG_MAX_TILED 4096u
#endif
/* ... in heaps of this many pages and up (heap_layout.c: slab_segs 2).
 * Below, where every class is a power of two (slab_fine 0) and segments
 * are one or two pages, the tiled classes' segments would hold up to half
 * of the k-d tree's 24-page heaps (20K triangles, 20x the root list: 668
 * failed allocations with them, none without). */
#ifndef WH_SEG_TILED_MIN_PAGES
#define WH_SEG_TILED_MIN_PAGES 256u
#endif
#if WH_SEG_MIN_SPP < 128u
#error "WH_SEG_MIN_SPP below 128: a page's tail would not fit the segment form (see WH_SEG_MAX_TILED)"
#endif
/* Heaps of fewer pages hand out no bump segments (heap_layout.c).  From 16
 * pages (1 MiB) up they do: the k-d tree's 20K-triangle builds (24 and 244
 * pages) spent 100-330K cycles an allocation of 48-128 B on the bitmap path,
 * where a segment takes one add. */
#ifndef WH_SEG_MIN_PAGES
#define WH_SEG_MIN_PAGES 16u
#endif
#define WH_SEG_S_BITS      22u
#define WH_SEG_R_SHIFT1    22u
#define WH_SEG_R_SHIFT0    43u
#define WH_SLAB_GATE_TRIES 32u
/* Looks for a slot in all before a request fails: past the gate, and after a
 * failed activation, when the page pool was empty for a moment. */
#define WH_SLAB_TAKE_TRIES 64u
/* Segment first: a class hands out its bump segment while that has room,
 * and claims freed slots from its bitmap only when it has none (no segment
 * can be prepared: the pool is dry or fragmented, wh__seg_back_off) -- bump
 * allocation with reuse deferred, as Immix and mimalloc defer theirs.  A
 * page whose slots are all freed goes back to the pool at once either way,
 * so nothing is lost; only partly used pages wait.  Freed slots first
 * (WH_SLAB_REUSE_FIRST 1) makes every request after a free a bitmap claim
 * of several dependent round trips: the k-d tree's 2M builds take 1.8-1.9x
 * the time of BUMP against 1.08-1.12x, the one-lane Alloc-Dealloc at 256 B
 * 1.4 ms against 0.05. */
#ifndef WH_SLAB_REUSE_FIRST
#define WH_SLAB_REUSE_FIRST 0
#endif
#ifndef WARPHEAP_HEAP_SLAB_H
#define WARPHEAP_HEAP_SLAB_H

#include "warpheap/heap/core.h"

/* Rare paths (page activation and reclaim, segment preparation, publishing,
 * taking back) are called, not inlined, on the GPU: forced inlining puts all
 * of them into every allocation and free site (heap_bench takes minutes in
 * ptxas, and the fast path's registers grow).  Only the entries from the
 * fast paths are calls (WH__SLAB_COLD, the wh__rare_* wrappers); inside them
 * the rest is inlined (WH__SLAB_RARE), because ptxas adds up the registers
 * of a chain of calls: the caller's live values sit above the callee's (a
 * chain of five calls makes a 1-allocation kernel 130 registers). */
#if WH_ON_GPU || defined(__CUDACC__)
#define WH__SLAB_COLD static inline __noinline__
#else
#define WH__SLAB_COLD WH_INLINE
#endif
#define WH__SLAB_RARE WH_INLINE

/* Add the live slots of claimed bits `got` of word w, class c, to their
 * pages. */
WH_INLINE WH_HOST_DEVICE void wh__slab_used_add(const wh_heap *h, uint32_t c, uint32_t w, uint64_t got) {
    uint32_t l = wh__slab_lbpp(c);
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
 * slot bits, and the slot bits of its k-th word. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_page_word(uint32_t c, uint32_t p) {
    return (uint32_t)(((uint64_t)p << wh__slab_lbpp(c)) >> 6);
}
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_page_words(uint32_t c) {
    return wh__slab_lbpp(c) < 6u ? 1u : (wh__slab_spp(c) + 63u) / 64u;
}
WH_INLINE WH_HOST_DEVICE uint64_t wh__slab_word_mask(uint32_t c, uint32_t p, uint32_t k) {
    uint32_t spp = wh__slab_spp(c), l = wh__slab_lbpp(c);
    if (l < 6u) return ((1ull << spp) - 1u) << (((uint64_t)p << l) & 63u);
    uint32_t left = spp - 64u * k;
    return left >= 64u ? ~0ull : (1ull << left) - 1u;
}

/* Take a free page for class c, keep the first `want` slots (returned in *got,
 * word index returned) and publish the rest.  WH_BITMAP_NONE if no page. */
WH__SLAB_RARE WH_HOST_DEVICE uint32_t wh__slab_activate(const wh_heap *h, const wh_bitmap *bm, uint32_t c,
                                                        uint64_t seed, unsigned want, uint64_t *got) {
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
    wh_atomic_store(&h->page_info[p], WH_PAGE_SLAB(c, 0u), WH_RELEASE);
    uint32_t w0 = wh__slab_page_word(c, p);
    uint64_t pmask = wh__slab_word_mask(c, p, 0);
    unsigned shift = (unsigned)(wh_ffs64(pmask) - 1);
    uint64_t take = (want == 64u ? ~0ull : ((1ull << want) - 1u)) << shift;
    if (pmask & ~take) (void)wh_bitmap_or_word(bm, w0, pmask & ~take);
    for (uint32_t k = 1; k < wh__slab_page_words(c); ++k)
        (void)wh_bitmap_or_word(bm, w0 + k, wh__slab_word_mask(c, p, k));
    *got = take;
    return w0;
}

/* The page's last slot was freed: try to take the page back (see header). */
WH__SLAB_RARE WH_HOST_DEVICE void wh__slab_reclaim(const wh_heap *h, uint32_t c, uint32_t p) {
    wh_bitmap bm = wh__slab_bitmap(h, c);
    uint32_t w0 = wh__slab_page_word(c, p), nw = wh__slab_page_words(c);
    uint32_t k = 0;
    bool whole = true;
    uint64_t prev = 0;
    for (; k < nw; ++k) {
        uint64_t m = wh__slab_word_mask(c, p, k);
        prev = wh_bitmap_and_not_word(&bm, w0 + k, m) & m;
        if (prev != m) {
            whole = false;
            break;
        }
    }
    if (!whole) { /* a claim is in flight: put back */
        if (prev) (void)wh_bitmap_or_word(&bm, w0 + k, prev);
        for (uint32_t j = 0; j < k; ++j) (void)wh_bitmap_or_word(&bm, w0 + j, wh__slab_word_mask(c, p, j));
        return;
    }
    wh_atomic_store(&h->page_info[p], WH_PAGE_FREE, WH_RELEASE);
    (void)wh_bitmap_try_set(&h->pages, p);
}

/* ---- bump segments (see header) ------------------------------------------ */

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
/* Slots of one segment of class c; its slot bits are [run * cap, run * cap + cap). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_cap(const wh_heap *h, uint32_t c) { return h->seg_cap[c]; }
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_s(uint64_t v) { return v & ((1ull << WH_SEG_S_BITS) - 1u); }
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_r1(uint64_t v) { return (v >> WH_SEG_R_SHIFT1) & ((1ull << 21) - 1u); }
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_r0(uint64_t v) { return v >> WH_SEG_R_SHIFT0; }
/* r0 = r1, r1 = 0, s -= cap0 as one add (exact: no field leaves its range). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_rotation(uint64_t r0, uint64_t r1, uint64_t cap0) {
    return ((r1 - r0) << WH_SEG_R_SHIFT0) - (r1 << WH_SEG_R_SHIFT1) - cap0;
}

/* Positions [q0, q0 + n) of segment `run` of class c, handed to nobody,
 * become free.  A whole page of them goes straight back to the pool when its
 * count is exactly its slots (CAS: nothing else in flight on it); otherwise,
 * and for part of a page, the slot bits are set and taken off the page's
 * count, as a free does. */
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_publish(const wh_heap *h, uint32_t c, uint64_t run, uint64_t q0, uint64_t n) {
    /* positions of a segment: under 2^20 (heap_layout.c), 32-bit arithmetic */
    uint32_t end = (uint32_t)(q0 + n), spp = wh__slab_spp(c);
    uint32_t l = wh__slab_lbpp(c);
    wh_bitmap bm = wh__slab_bitmap(h, c);
    for (uint32_t q = (uint32_t)q0; q < end;) {
        uint32_t j = q / spp, k = ((j + 1u) * spp < end ? (j + 1u) * spp : end) - q;
        uint32_t p = (uint32_t)((run << h->seg_shift[c]) + j), whole = (uint32_t)spp;
        if (k == spp && wh_atomic_cas(&h->page_used[p], &whole, 0u, WH_ACQ_REL, WH_RELAXED)) {
            wh_atomic_store(&h->page_info[p], WH_PAGE_FREE, WH_RELEASE);
            (void)wh_bitmap_try_set(&h->pages, p);
            q += k;
            continue;
        }
        uint64_t b = ((uint64_t)p << l) + (q - j * spp), bend = b + k;
        for (uint64_t x = b; x < bend;) {
            uint64_t lo = x & 63u, m = 64u - lo < bend - x ? 64u - lo : bend - x;
            (void)wh_bitmap_or_word(&bm, (uint32_t)(x >> 6), (m == 64u ? ~0ull : (1ull << m) - 1u) << lo);
            x += m;
        }
        if (wh_atomic_fetch_sub(&h->page_used[p], (uint32_t)k, WH_ACQ_REL) == (uint32_t)k) wh__slab_reclaim(h, c, p);
        q += k;
    }
}

/* The and-nots that take a run's words: relaxed and followed by one fence on
 * the GPU, where each acq_rel atomic waits for the one before; acq_rel on the
 * CPU, where ThreadSanitizer does not model a stand-alone fence. */
#if WH_ON_GPU
#define WH__RUN_MO      WH_RELAXED
#define WH__RUN_FENCE() wh_fence()
#else
#define WH__RUN_MO      WH_ACQ_REL
#define WH__RUN_FENCE() ((void)0)
#endif
#define WH__RUN_CHUNK 4u

/* No free page in the pool (the page bitmap's top word is empty). */
WH_INLINE WH_HOST_DEVICE bool wh__pages_dry(const wh_heap *h) {
    return !wh_atomic_load(wh_bitmap_word(&h->pages, h->pages.levels - 1u, 0), WH_RELAXED);
}

/* An aligned run of 1 << shift free pages taken from the page bitmap: inside
 * one word with one and-not (shift < 6), else 1 << (shift - 6) whole aligned
 * words, each found all free (a word found otherwise: put back what was
 * taken, try elsewhere).  Its index, or WH_BITMAP_NONE. */
WH__SLAB_RARE WH_HOST_DEVICE uint32_t wh__seg_claim_run(const wh_heap *h, uint32_t shift, uint64_t seed) {
    uint32_t npg = 1u << (shift < 6u ? shift : 6u), nw = shift < 6u ? 1u : 1u << (shift - 6u);
    uint64_t unit = npg == 64u ? ~0ull : (1ull << npg) - 1u, starts = ~0ull / unit; /* bits at multiples of npg */
    uint32_t words = wh_bitmap_level_words(&h->pages, 0);
    for (uint32_t tries = 0; tries < 8u; ++tries, seed = wh_hash64(seed + tries)) {
        bool empty = false;
        /* the first try a guess: where most of the pool is free (a cold
         * start, when every warp waits for this run) it holds, without the
         * descent's dependent round trips */
        uint32_t w = tries == 0 && words >= nw ? (uint32_t)(seed % (words / nw)) * nw
                                               : wh__bitmap_descend(&h->pages, seed, &empty);
        if (w == WH_BITMAP_NONE) {
            if (empty) return WH_BITMAP_NONE;
            continue;
        }
        w &= ~(nw - 1u);
        uint64_t m = wh_atomic_load(wh_bitmap_word(&h->pages, 0, w), WH_RELAXED);
        for (uint32_t k = 1; k < npg; k <<= 1) m &= m >> k; /* bit i: pages i .. i+npg-1 free */
        m &= starts;
        if (!m || w + nw > words) continue;
        uint32_t i = nw > 1u ? 0u : wh__bitmap_pick(m, wh__bitmap_rot(seed, 0));
        uint64_t take = unit << i;
        /* Take the words WH__RUN_CHUNK at a time, and check each chunk after
         * its and-nots: they do not wait for each other (one after the other,
         * a 16-word run cost 16 round trips), yet the chunk's previous values
         * stay few (all 16 at once held 32 registers across the allocation
         * kernel: 207 in heap_bench's, one block of 256 threads per SM).
         * Lost a race on any word: put back what was taken. */
        uint64_t got = ~0ull;
        for (uint32_t k = 0; k < nw; k += WH__RUN_CHUNK) {
            uint64_t prev[WH__RUN_CHUNK];
            uint32_t n = nw - k < WH__RUN_CHUNK ? nw - k : WH__RUN_CHUNK;
            for (uint32_t j = 0; j < n; ++j)
                prev[j] = wh_atomic_fetch_and(wh_bitmap_word(&h->pages, 0, w + k + j), ~take, WH__RUN_MO);
            for (uint32_t j = 0; j < n; ++j) got &= prev[j] | ~take;
            if ((got & take) != take) {
                /* or_word tells the levels above of each word it refills */
                for (uint32_t j = 0; j < n; ++j)
                    if (prev[j] & take) (void)wh_bitmap_or_word(&h->pages, w + k + j, prev[j] & take);
                for (uint32_t j = 0; j < k; ++j) (void)wh_bitmap_or_word(&h->pages, w + j, take);
                break;
            }
        }
        if ((got & take) != take) continue;
        WH__RUN_FENCE();
        /* the words we emptied: the levels above learn it after the install
         * (wh__seg_finish), off the waiters' path; until then they only
         * send a search to words it finds empty */
        return (w * 64u + i) >> shift;
    }
    return WH_BITMAP_NONE;
}

/* The positions [from, cap) of page p's segment that the segments of state
 * v still hold untouched (from = cap: none). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_from(const wh_heap *h, uint32_t c, uint32_t p, uint64_t v) {
    uint64_t cap = wh__seg_cap(h, c), r0 = wh__seg_r0(v), r1 = wh__seg_r1(v), s = wh__seg_s(v), cap0 = r0 ? cap : 0;
    uint64_t run = (uint64_t)(p >> h->seg_shift[c]) + 1u;
    if (run == r0 && s < cap0) return s;
    if (run == r1) return s > cap0 ? (s - cap0 < cap ? s - cap0 : cap) : 0;
    return cap;
}
/* Position of page p's first slot in its segment (class c). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__seg_page_lo(const wh_heap *h, uint32_t c, uint32_t p) {
    return (uint64_t)(p & ((1u << h->seg_shift[c]) - 1u)) * wh__slab_spp(c);
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
    return wh__seg_untouched_at(wh__seg_page_lo(h, c, p), wh__slab_spp(c), wh__seg_from(h, c, p, v));
}

/* Take back what class c's segments hold untouched (the rest of the current
 * one, all of the next) and publish it.  Caller holds c's flag.  Only while
 * s < capacity: then no rotation is pending (one is only while the current
 * one is used up and a next one is there).  One CAS: it fails when the class
 * hands out meanwhile, and then it is busy anyway.  p < npages: only if page
 * p (of the current segment) has no live slot left (a class gone idle). */
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_take_back(const wh_heap *h, uint32_t c, uint32_t way, uint32_t p) {
    uint64_t *st = wh__seg_state(h, c, way), cap = wh__seg_cap(h, c), v = wh_atomic_load(st, WH_ACQUIRE);
    uint64_t r0 = wh__seg_r0(v), r1 = wh__seg_r1(v), s = wh__seg_s(v);
    if (!r0 || s >= cap) return;
    if (p < h->npages && (r0 != (uint64_t)(p >> h->seg_shift[c]) + 1u ||
                          wh_atomic_load(&h->page_used[p], WH_ACQUIRE) != wh__seg_untouched(h, c, p, v)))
        return;
    if (!wh_atomic_cas(st, &v, 0ull, WH_ACQ_REL, WH_RELAXED)) return;
    wh__seg_publish(h, c, r0 - 1u, s, cap - s);
    if (r1) wh__seg_publish(h, c, r1 - 1u, 0, cap);
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
 * WH__SEG_BACKING, and the next 2^e such requests take the bitmap path at
 * once (e: consecutive failures, at most WH_SEG_BACKOFF_MAX); the last of
 * them frees the flag, and the request after it tries a preparation again.
 * WH_SEG_BACKOFF_MAX 0: no back-off (every request searches, and a failed
 * search takes every class's segments back). */
#ifndef WH_SEG_BACKOFF_MAX
#define WH_SEG_BACKOFF_MAX 10u
#endif
WH_INLINE WH_HOST_DEVICE uint32_t *wh__seg_skip(const wh_heap *h, uint32_t c, uint32_t way) {
    return &h->ctl->seg_skip[wh__seg_index(c, way)];
}
/* The holder of the flag found no run: give the flag back, backing off. */
WH_INLINE WH_HOST_DEVICE void wh__seg_back_off(const wh_heap *h, uint32_t c, uint32_t way) {
    const uint32_t most = WH_SEG_BACKOFF_MAX; /* a variable: no warning at 0 */
    uint32_t *sk = wh__seg_skip(h, c, way), e = (wh_atomic_load(sk, WH_RELAXED) >> 16) + 1u;
    if (e > most) e = most;
    if (e == 0u) {
        wh__seg_unlock(h, c, way);
        return;
    }
    wh_atomic_store(sk, e << 16 | 1u << e, WH_RELAXED);
    wh_atomic_store(wh__seg_flag(h, c, way), WH__SEG_BACKING, WH_RELEASE);
}
/* A request found class c's way empty: true if it is backing off (the
 * request takes the bitmap path); counts the request, and the last one
 * ends the back-off.  One try at the count: a lost race skips uncounted. */
WH__SLAB_RARE WH_HOST_DEVICE bool wh__seg_backing_off(const wh_heap *h, uint32_t c, uint32_t way) {
    uint32_t *flag = wh__seg_flag(h, c, way), *sk = wh__seg_skip(h, c, way);
    if (wh_atomic_load(flag, WH_RELAXED) != WH__SEG_BACKING) return false;
    WH__PROF(h, WH_PROF_BACKOFF, 1);
    uint32_t k = wh_atomic_load(sk, WH_RELAXED);
    if ((k & 0xFFFFu) && wh_atomic_cas(sk, &k, k - 1u, WH_RELAXED, WH_RELAXED) && (k & 0xFFFFu) == 1u) {
        uint32_t b = WH__SEG_BACKING;
        (void)wh_atomic_cas(flag, &b, 0u, WH_RELEASE, WH_RELAXED);
    }
    return true;
}

/* Take class c's segments back if no one else holds its flag: from the
 * pool-dry paths and wh_heap_trim (p = npages), and, with WH_SEG_RETIRE, from
 * a free that left page p of the current segment with only untouched slots. */
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_retire(const wh_heap *h, uint32_t c, uint32_t way, uint32_t p) {
    uint64_t v = wh_atomic_load(wh__seg_state(h, c, way), WH_RELAXED);
    if (!wh__seg_r0(v) || wh__seg_s(v) >= wh__seg_cap(h, c)) return; /* nothing untouched */
    if (!wh__seg_lock(h, c, way)) return;
    wh__seg_take_back(h, c, way, p);
    wh__seg_unlock(h, c, way);
}

/* The current segment is used up (or there is none): install segment r1 - 1
 * as the current one with nothing handed out, by CAS.  Only adds that saw a
 * slot change the state meanwhile, and they stop once it is used up, so the
 * CAS soon holds.  Installing it as the next one instead would make the
 * positions that those late adds claimed past the end "orphans": published
 * into the class bitmap, they send every later request of the class to the
 * bitmap path (48K orphans, 1.6M bitmap claims in one fill of 256-B
 * objects).  False: the current one has slots, or the CAS kept
 * failing (bounded): the caller installs it as the next one. */
#ifndef WH_SEG_FRESH_TRIES
#define WH_SEG_FRESH_TRIES 64u /* 0: always install as next (test_heap_stress_orphans) */
#endif
WH_INLINE WH_HOST_DEVICE bool wh__seg_install_fresh(uint64_t *st, uint64_t r1, uint64_t cap) {
    uint64_t v = wh_atomic_load(st, WH_RELAXED);
    const uint32_t limit = WH_SEG_FRESH_TRIES; /* a variable: no warning at 0 */
    for (uint32_t tries = 0; tries < limit; ++tries) {
        uint64_t cap0 = wh__seg_r0(v) ? cap : 0;
        if (wh__seg_s(v) < cap0) return false;
        if (wh_atomic_cas(st, &v, r1 << WH_SEG_R_SHIFT0, WH_ACQ_REL, WH_RELAXED)) return true;
    }
    return false;
}

/* Every way of every class but `except` (wh__seg_index; WH__SEG_ALL: none)
 * gives back what its segments hold untouched. */
#define WH__SEG_ALL (WH_SLAB_CLASSES * WH_SEG_WAYS_MAX)
WH__SLAB_RARE WH_HOST_DEVICE void wh__seg_retire_all(const wh_heap *h, uint32_t except) {
    WH__PROF(h, WH_PROF_RETIRE_ALL, 1);
    WH_PRAGMA_UNROLL1
    for (uint32_t o = 0; o < WH_SLAB_CLASSES; ++o) {
        WH_PRAGMA_UNROLL1
        for (uint32_t way = 0; way < h->seg_ways; ++way)
            if (wh__seg_index(o, way) != except) wh__seg_retire(h, o, way, h->npages);
    }
}

/* The calls of the fast paths into the rare ones (see WH__SLAB_RARE). */
WH__SLAB_COLD WH_HOST_DEVICE void wh__rare_reclaim(const wh_heap *h, uint32_t c, uint32_t p) {
    wh__slab_reclaim(h, c, p);
}
WH__SLAB_COLD WH_HOST_DEVICE void wh__rare_retire(const wh_heap *h, uint32_t c, uint32_t way, uint32_t p) {
    wh__seg_retire(h, c, way, p);
}
WH__SLAB_COLD WH_HOST_DEVICE void wh__rare_retire_all(const wh_heap *h) { wh__seg_retire_all(h, WH__SEG_ALL); }

/* Preparing the next segment of class c's way, in three steps, so that the whole
 * group of the leader that finds it missing sets up its pages:
 *   wh__seg_begin  (leader, from wh__slab_begin): class c's flag and an
 *                  aligned run of free pages;
 *   wh__seg_setup  (every lane of the group): the pages' counts and class;
 *   wh__seg_finish (leader, after the group's barrier): install, flag back.
 * begin returns 1 with *run set: the flag is ours, set the run up and finish
 * it; 1 with *run = WH_BITMAP_NONE: a next segment is there already; 0:
 * someone else holds the flag; -1: no aligned run of free pages, even after
 * taking back what the other classes' segments held. */
WH__SLAB_RARE WH_HOST_DEVICE int wh__seg_begin(const wh_heap *h, uint32_t c, uint32_t way, uint64_t seed,
                                               uint32_t *run) {
    *run = WH_BITMAP_NONE;
    WH__PROF_T(t0);
    if (!wh__seg_lock(h, c, way)) return 0;
    WH__PROF(h, WH_PROF_PREP_LOCKED, 1);
    /* only a holder of the flag sets r1, so r1 == 0 here stays so until we do */
    if (wh__seg_r1(wh_atomic_load(wh__seg_state(h, c, way), WH_ACQUIRE)) != 0) {
        wh__seg_unlock(h, c, way);
        return 1;
    }
    uint32_t got = wh__seg_claim_run(h, h->seg_shift[c], seed);
    if (got == WH_BITMAP_NONE && (WH_SEG_BACKOFF_MAX == 0u || wh__pages_dry(h))) {
        /* the pool ran dry: what the other classes hold untouched is worth
         * more to this request than to them.  Not when free pages are left
         * but none in an aligned run: taking every class's segments back
         * would make them all prepare again, each likely to fail the same
         * way (the k-d tree: a storm of take-backs and searches) */
        wh__seg_retire_all(h, wh__seg_index(c, way));
        got = wh__seg_claim_run(h, h->seg_shift[c], wh_hash64(seed));
    }
    if (got == WH_BITMAP_NONE) {
        WH__PROF(h, WH_PROF_PREP_NONE, 1);
        wh__seg_back_off(h, c, way);
        return -1;
    }
    uint32_t *sk = wh__seg_skip(h, c, way);
    if (wh_atomic_load(sk, WH_RELAXED)) wh_atomic_store(sk, 0u, WH_RELAXED); /* failures in a row: none */
    *run = got;
    WH__PROF(h, WH_PROF_BEGIN_CYCLES, WH__PROF_CLOCK() - t0);
    return 1;
}

/* Lane `rank` of `lanes` sets up its share of the pages of segment `run`:
 * consecutive lanes write consecutive pages, so a warp's writes coalesce (one
 * thread alone takes ~240 cycles a page, 130 us for the 1024 pages of a
 * 256 B segment).  Relaxed and not waited for (`red`): the install in
 * wh__seg_finish publishes them.  An add, not a store: see wh__slab_activate. */
WH_INLINE WH_HOST_DEVICE void wh__seg_setup(const wh_heap *h, uint32_t c, uint32_t way, uint32_t run, uint32_t rank,
                                            uint32_t lanes) {
    uint32_t shift = h->seg_shift[c], spp = wh__slab_spp(c);
    WH_PRAGMA_UNROLL1
    for (uint32_t j = rank; j < 1u << shift; j += lanes) {
        uint32_t p = (run << shift) + j;
        wh_atomic_add_relaxed(&h->page_used[p], spp);
        wh_atomic_store(&h->page_info[p], WH_PAGE_SLAB(c, way), WH_RELAXED);
    }
}

/* Install segment `run` of class c, set up by the group (whose barrier
 * ordered its writes before this), as the current one if that is used up,
 * else as the next one; give the flag back. */
WH__SLAB_COLD WH_HOST_DEVICE void wh__seg_finish(const wh_heap *h, uint32_t c, uint32_t way, uint32_t run) {
    uint64_t *st = wh__seg_state(h, c, way), cap = wh__seg_cap(h, c), r1 = (uint64_t)run + 1u;
    WH__PROF_T(t0);
    /* the other lanes' set-up goes out with our install (cumulative) */
    wh_fence();
    if (!wh__seg_install_fresh(st, r1, cap)) {
        uint64_t old = wh_atomic_fetch_add(st, r1 << WH_SEG_R_SHIFT1, WH_ACQ_REL);
        uint64_t r0 = wh__seg_r0(old), s = wh__seg_s(old), cap0 = r0 ? cap : 0;
        if (s >= cap0) {
            /* the current one ran out (or there is none) before we came:
             * nobody rotated, and positions [0, s - cap0) of ours were
             * claimed by adds that found no next segment: orphans */
            (void)wh_atomic_fetch_add(st, wh__seg_rotation(r0, r1, cap0), WH_ACQ_REL);
            uint64_t orphans = s - cap0 < cap ? s - cap0 : cap;
            if (orphans) wh__seg_publish(h, c, run, 0, orphans);
            WH__PROF(h, WH_PROF_ORPHANS, orphans);
        }
    }
    wh__seg_unlock(h, c, way);
    WH__PROF_T(t1);
    WH__PROF(h, WH_PROF_INSTALL_CYCLES, t1 - t0);
    /* the page words the run emptied (wh__seg_claim_run): the levels above
     * learn it now, for all of them at once (one summary word: the run is
     * aligned, at most 16 words) */
    uint32_t shift = h->seg_shift[c], p0 = run << shift;
    (void)wh__bitmap_propagate_span(&h->pages, 0, p0 >> 6, shift < 6u ? 1u : 1u << (shift - 6u));
    WH__PROF(h, WH_PROF_SPAN_CYCLES, WH__PROF_CLOCK() - t1);
}

/* When the next segment is prepared: once the current one has handed out
 * cap >> WH_SEG_NEXT_SHIFT slots (0: as soon as it is installed).  A
 * preparation holds its warp ~20 us; started at install, it runs at a
 * kernel's tail whenever a way crosses into its next segment near the end
 * (the 1M-thread `one` test: each way's share is about one segment), and it
 * holds a second segment for every class that allocates at all.  Started
 * after an eighth, seven eighths of the segment (~30 us at a way's full
 * rate) cover it. */
#ifndef WH_SEG_NEXT_SHIFT
#define WH_SEG_NEXT_SHIFT 3u
#endif
/* State v has no next segment, its current one (if any) is far enough
 * along, and nobody is preparing one for class c's way: the taker that sees
 * it begins preparing it (wh__seg_begin), so that it is ready when the
 * current one runs out. */
WH_INLINE WH_HOST_DEVICE bool wh__seg_wants_next(const wh_heap *h, uint32_t c, uint32_t way, uint64_t v) {
    const uint32_t shift = WH_SEG_NEXT_SHIFT; /* a variable: no warning at 0 */
    uint64_t at = wh__seg_r0(v) && shift != 0u ? wh__seg_cap(h, c) >> shift : 0u;
    return !wh__seg_r1(v) && wh__seg_s(v) >= at && !wh_atomic_load(wh__seg_flag(h, c, way), WH_RELAXED);
}

/* Ablation switches.
 * WH_SEG_MIN_WANT: on the GPU, requests of fewer slots take the bitmap path
 * (0.10 ms for the one-lane Alloc-Dealloc below, but it loses at Probability
 * and Linux scalability).
 * WH_SEG_RETIRE 1: a free that leaves the current page with only untouched
 * slots takes the class's segments back at once (wh__seg_retire).  Where one
 * lane of a warp allocates and frees at once (the paper's Alloc-Dealloc, one
 * thread per warp), every free then finds the class idle and every
 * allocation prepares a segment again: 4.7 ms for 8448 allocations of 256 B,
 * 0.21-1.79 ms without. */
#ifndef WH_SEG_MIN_WANT
#define WH_SEG_MIN_WANT 1u
#endif
#ifndef WH_SEG_RETIRE
#define WH_SEG_RETIRE 0
#endif

/* Does class c hand out bump segments in heaps of segment level segs
 * (wh_heap.slab_segs: 0 none, 1 classes of WH_SEG_MIN_SPP slots a page, 2
 * those and the tiled ones)? */
WH_INLINE WH_HOST_DEVICE bool wh__seg_class(uint32_t c, uint32_t segs) {
    uint32_t size = wh__slab_size(c);
    return segs && (size <= WH_SLAB_PAGE / WH_SEG_MIN_SPP ||                           /* spp >= MIN_SPP */
                    (segs > 1u && size <= WH_SEG_MAX_TILED && !(size & (size - 1u)))); /* no tail */
}
/* Does class c hand out bump segments for want slots (else: the bitmap path)? */
WH_INLINE WH_HOST_DEVICE bool wh__seg_on(const wh_heap *h, uint32_t c, unsigned want) {
#if WH_ON_GPU && WH_SEG_MIN_WANT > 1 /* by default no compare on the fast path */
    if (want < WH_SEG_MIN_WANT) return false;
#endif
    (void)want;
    return wh__seg_class(c, h->slab_segs);
}

/* Leader: up to `want` slots of class c from its bump segments: positions
 * q .. q+n1-1 of segment run, *b1 = run << 32 | q, and, for the add that
 * crosses into the next segment, positions 0 .. n2-1 of segment r2 - 1,
 * *x2 = n2 << 24 | r2.  Returns n1 + n2 (0: take the bitmap path, unless
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
    uint64_t *st = wh__seg_state(h, c, way), cap = wh__seg_cap(h, c);
    *x2 = 0;
    if (!wh__seg_on(h, c, want)) return 0;
    if (!added) WH__PROF(h, WH_PROF_SEG_CALLS, 1);
    for (uint32_t n = 0; n < WH_SEG_POLLS; ++n, v = wh_atomic_load(st, WH_RELAXED), added = false) {
        uint64_t r0 = wh__seg_r0(v), r1 = wh__seg_r1(v), s = wh__seg_s(v), cap0 = r0 ? cap : 0;
        if (!added) {                                    /* (else the add is made: its outcome below) */
            if (!(s < cap0 || (r1 && s - cap0 < cap))) { /* nothing to hand out */
                WH__PROF(h, WH_PROF_SEG_EMPTY, 1);
                if (wh__seg_wants_next(h, c, way, v)) {
                    *begin = true; /* prepare it, then look again */
                    return 0;
                }
                /* nobody prepares one after a failure: the bitmap path */
                if (!r1 && wh__seg_backing_off(h, c, way)) return 0;
                /* an empty pool will not fill by waiting: the bitmap path
                 * (a look now and then: a line every waiter reads) */
                if ((n & 7u) == 0 && wh__pages_dry(h)) {
                    WH__PROF(h, WH_PROF_SEG_FALLBACK, 1);
                    return 0;
                }
                wh_backoff(n < WH_SEG_POLL_SLEEP ? n : WH_SEG_POLL_SLEEP);
                continue;
            }
            /* acquire: the pages' set-up by the preparer whose install
             * (release) this add reads from; a taker publishes nothing */
            v = wh_atomic_fetch_add(st, (uint64_t)want, WH_ACQUIRE);
            r0 = wh__seg_r0(v), r1 = wh__seg_r1(v), s = wh__seg_s(v), cap0 = r0 ? cap : 0;
        }
        uint64_t n1 = 0, n2 = 0;
        if (s < cap0) {
            n1 = want < cap0 - s ? want : cap0 - s;
            *b1 = (r0 - 1u) << 32 | s;
            if (s + want >= cap0 && r1) { /* we reached the end: rotate */
                n2 = want - n1 < cap ? want - n1 : cap;
                if (n2) *x2 = (uint32_t)(n2 << 24 | r1);
                (void)wh_atomic_fetch_add(st, wh__seg_rotation(r0, r1, cap0), WH_ACQ_REL);
            }
        } else if (r1 && s - cap0 < cap) {
            n1 = want < cap - (s - cap0) ? want : cap - (s - cap0);
            *b1 = (r1 - 1u) << 32 | (s - cap0);
        }
        *begin = wh__seg_wants_next(h, c, way, v);
        if (n1 + n2 || *begin) return (unsigned)(n1 + n2);
    }
    WH__PROF(h, WH_PROF_SEG_FALLBACK, 1);
    return 0;
}

/* Leader: claim up to `want` slots of class c, activating a page (through the
 * gate) when the class has none.  Word index and *got, or WH_BITMAP_NONE.
 * Inlined into its one caller, wh__slab_take_got, the call that the leader
 * makes from wh__slab_malloc: the kernel's registers follow the heaviest
 * chain of calls, so no rare path calls another (nested in
 * wh__slab_get_rare with the segment preparation, they take a 1-allocation
 * kernel to 207 registers). */
WH__SLAB_RARE WH_HOST_DEVICE uint32_t wh__slab_take(const wh_heap *h, uint32_t c, uint64_t seed, unsigned want,
                                                    uint64_t *got) {
    wh_bitmap bmv = wh__slab_bitmap(h, c);
    const wh_bitmap *bm = &bmv;
    /* Activators per class, scaled to the heap (one per 64 pages, per 256
     * with the 52 classes): a burst of all classes then takes at most a fifth
     * of the pages, so a heap of a few dozen pages is not drained by it, while
     * a large heap lets every warp of a fresh burst activate its own page (a
     * fixed small gate serialised the 1M-thread burst: 0.5 ms -> 3.5 ms). */
    uint32_t gate = h->npages / (h->slab_fine ? 256u : 64u);
    if (gate < 1u) gate = 1u;
    WH__PROF(h, WH_PROF_TAKE_CALLS, 1);
    uint32_t w = wh_bitmap_claim(bm, seed, want, got);
    for (uint32_t tries = 0; w == WH_BITMAP_NONE && tries < WH_SLAB_TAKE_TRIES; ++tries) {
        uint32_t busy = wh_atomic_fetch_add(&h->ctl->activating[c], 1u, WH_RELAXED);
        if (busy < gate || tries >= WH_SLAB_GATE_TRIES) {
            w = wh__slab_activate(h, bm, c, seed, want, got);
            (void)wh_atomic_fetch_sub(&h->ctl->activating[c], 1u, WH_RELAXED);
            if (w != WH_BITMAP_NONE) { /* its slots are counted there */
                WH__PROF(h, WH_PROF_ACTIVATIONS, 1);
                return w;
            }
            /* no free page: the first time, the classes' segments give back
             * what they hold untouched (a small heap runs dry with most of
             * it there); then slots may still be published by other
             * activators or freed by other threads -- look again, boundedly */
            if (tries == 0 && h->slab_segs) wh__seg_retire_all(h, WH__SEG_ALL);
        } else {
            (void)wh_atomic_fetch_sub(&h->ctl->activating[c], 1u, WH_RELAXED);
        }
        wh_backoff(tries);
        seed = wh_hash64(seed + tries);
        w = wh_bitmap_claim(bm, seed, want, got);
    }
    if (w == WH_BITMAP_NONE) return w;
    wh__slab_used_add(h, c, w, *got);
    return w;
}

/* The seed of a leader's bitmap searches for class c in its group's round n. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__slab_seed(uint32_t c, uint32_t n) { return wh__heap_seed((uint64_t)n << 8 | c); }

/* What a leader got for its group, in one of two forms (info):
 *   bitmap bits (WH__GOT_SEG clear): the slots of bits x + the set bits of y;
 *   segment positions (WH__GOT_SEG): n1 = info & 63 slots from address x on,
 *     the first `left` = info >> 12 & 0x1FFF of them in x's page and the
 *     rest in the next page, past this one's unused tail of
 *     (info >> 25 & 31) * 16 bytes; then n2 = info >> 6 & 63 slots from
 *     address y on (the start of the next segment).
 * WH__GOT_PREP: prep names a segment for the group to set up.  For the
 * leader alone, prep == WH__PREP_BEGIN: the next segment wants a preparer
 * (wh__slab_begin); WH__PREP_BITMAP: no slot, take the bitmap path
 * (wh__slab_take_got).  WH__GOT_AGAIN (no slot, bitmap form): look again.
 * A lane's address is a multiply and an add (wh__got_slot): the leader did
 * the one division, by a reciprocal. */
typedef struct wh__slab_got {
    uint64_t x, y;
    uint32_t info, prep;
} wh__slab_got;
#define WH__GOT_SEG     0x80000000u
#define WH__GOT_PREP    0x40000000u
#define WH__GOT_AGAIN   0x20000000u
#define WH__PREP_BEGIN  0xFFFFFFFEu
#define WH__PREP_BITMAP 0xFFFFFFFDu

WH_INLINE WH_HOST_DEVICE wh__slab_got wh__got_none(void) {
    wh__slab_got g = {0, 0, 0, WH_BITMAP_NONE};
    return g;
}
/* Bitmap form: bits `got` of word w (WH_BITMAP_NONE: none). */
WH_INLINE WH_HOST_DEVICE wh__slab_got wh__got_bits(uint32_t w, uint64_t got) {
    wh__slab_got g = wh__got_none();
    if (w != WH_BITMAP_NONE) g.x = (uint64_t)w * 64u, g.y = got;
    return g;
}
/* Segment form: positions q .. q+n1-1 of segment run, then 0 .. n2-1 of
 * segment run2 (n1 + n2 <= 32 < spp: a page boundary is crossed at most once). */
WH_INLINE WH_HOST_DEVICE wh__slab_got wh__got_seg(const wh_heap *h, uint32_t c, uint32_t run, uint32_t q, uint32_t n1,
                                                  uint32_t run2, uint32_t n2) {
    uint32_t shift = h->seg_shift[c], spp = h->seg_cap[c] >> shift, size = wh__slab_size(c);
    uint32_t j = wh__slab_spp_div(h, c, q), slot = q - j * spp;
    wh__slab_got g = wh__got_none();
    g.x = (uint64_t)(uintptr_t)(h->base + (((uint64_t)run << shift) + j) * WH_SLAB_PAGE + (uint64_t)slot * size);
    if (n2) g.y = (uint64_t)(uintptr_t)(h->base + ((uint64_t)run2 << shift) * WH_SLAB_PAGE);
    g.info = WH__GOT_SEG | n1 | n2 << 6 | (spp - slot) << 12 | (WH_SLAB_PAGE - spp * size) >> 4 << 25;
    return g;
}
WH_INLINE WH_HOST_DEVICE unsigned wh__got_count(const wh__slab_got *g) {
    return g->info & WH__GOT_SEG ? (g->info & 63u) + (g->info >> 6 & 63u) : (unsigned)wh_popc64(g->y);
}
/* The r-th slot of g (r < wh__got_count). */
WH_INLINE WH_HOST_DEVICE void *wh__got_slot(const wh_heap *h, uint32_t c, const wh__slab_got *g, unsigned r) {
    uint64_t size = wh__slab_size(c);
    if (!(g->info & WH__GOT_SEG)) {
        uint64_t b = g->x + (uint64_t)wh_nth_set_bit64(g->y, r);
        uint32_t l = wh__slab_lbpp(c);
        return h->base + (b >> l) * WH_SLAB_PAGE + (b & ((1ull << l) - 1u)) * size;
    }
    unsigned n1 = g->info & 63u;
    if (r >= n1) return (uint8_t *)(uintptr_t)g->y + (r - n1) * size;
    uint64_t tail = r >= (g->info >> 12 & 0x1FFFu) ? (uint64_t)(g->info >> 25 & 31u) << 4 : 0u;
    return (uint8_t *)(uintptr_t)g->x + r * size + tail;
}

/* Leader, all but the fast path of wh__slab_get (a call on the GPU): the
 * bump segments (v: the way's state as loaded, or as the fast path's add
 * returned it when `added`); failing them, the bitmap path -- freed slots,
 * then page activation (WH__PREP_BITMAP).  top: the class bitmap's top word
 * where freed slots come first (classes without segments, and all with
 * WH_SLAB_REUSE_FIRST; wh__slab_get loads it only there), else 0: when
 * nonzero, freed slots are claimed first.  n: the group's round, for the
 * seed of the bitmap searches. */
WH__SLAB_COLD WH_HOST_DEVICE wh__slab_got wh__slab_get_rare(const wh_heap *h, uint32_t c, uint32_t way, uint32_t n,
                                                            unsigned want, uint64_t top, uint64_t v, bool added) {
    if (top && !added) {
        uint64_t got = 0;
        wh_bitmap bm = wh__slab_bitmap(h, c);
        uint32_t w = wh_bitmap_claim(&bm, wh__slab_seed(c, n), want, &got);
        if (w != WH_BITMAP_NONE) {
            wh__slab_used_add(h, c, w, got);
            WH__PROF(h, WH_PROF_FREED_CLAIMS, 1);
            return wh__got_bits(w, got);
        }
    }
    uint64_t b1 = 0;
    uint32_t x2 = 0;
    bool begin = false;
    unsigned k = wh__seg_take(h, c, way, want, v, added, &b1, &x2, &begin), n2 = x2 >> 24 & 127u;
    wh__slab_got g = wh__got_none();
    if (k) g = wh__got_seg(h, c, (uint32_t)(b1 >> 32), (uint32_t)b1, k - n2, (x2 & 0xFFFFFFu) - 1u, n2);
    if (begin)
        g.prep = WH__PREP_BEGIN;
    else if (!k)
        g.prep = WH__PREP_BITMAP;
    return g;
}

/* Leader, when g asks for it (WH__PREP_BITMAP): the bitmap path.  Called
 * from wh__slab_malloc, not from the other rare paths: nested in them, its
 * registers would come on top of theirs. */
WH__SLAB_COLD WH_HOST_DEVICE wh__slab_got wh__slab_take_got(const wh_heap *h, uint32_t c, uint32_t n, unsigned want) {
    uint64_t got = 0;
    uint32_t w = wh__slab_take(h, c, wh__slab_seed(c, n), want, &got);
    return wh__got_bits(w, got);
}

/* Leader: up to `want` slots of class c for its group.  The fast path, taken
 * by nearly every request: room for all of them in the current segment
 * before its end (segment first: WH_SLAB_REUSE_FIRST), so one add and no
 * rotation.  A load, an add and the segment form: no bitmap descriptor, no division,
 * no loop (the general path issues ~865 warp-instructions per 16-B
 * allocation, BUMP ~130).  Everything else:
 * wh__slab_get_rare. */
WH_INLINE WH_HOST_DEVICE wh__slab_got wh__slab_get(const wh_heap *h, uint32_t c, uint32_t way, uint32_t n,
                                                   unsigned want) {
    uint64_t *st = wh__seg_state(h, c, way), cap = h->seg_cap[c];
    /* both loads issued before either is waited for: one round trip (the
     * class bitmap's top word only where freed slots come first) */
    bool seg = wh__seg_on(h, c, want);
    uint64_t top = WH_SLAB_REUSE_FIRST || !seg ? wh_atomic_load(h->slot_words + h->slot_top[c], WH_RELAXED) : 0;
    uint64_t v = seg ? wh_atomic_load(st, WH_RELAXED) : 0;
    if (top || !wh__seg_r0(v) || wh__seg_s(v) + want >= cap)
        return wh__slab_get_rare(WH__RARE(h), c, way, n, want, top, v, false);
    WH__PROF(h, WH_PROF_SEG_CALLS, 1);
    /* acquire: as in wh__seg_take */
    uint64_t old = wh_atomic_fetch_add(st, (uint64_t)want, WH_ACQUIRE), s = wh__seg_s(old);
    if (!wh__seg_r0(old) || s + want >= cap) /* it ran out meanwhile */
        return wh__slab_get_rare(WH__RARE(h), c, way, n, want, 0, old, true);
    wh__slab_got g = wh__got_seg(h, c, (uint32_t)wh__seg_r0(old) - 1u, (uint32_t)s, want, 0, 0);
    if (wh__seg_wants_next(h, c, way, old)) g.prep = WH__PREP_BEGIN;
    return g;
}

/* Leader, when g asks for it (WH__PREP_BEGIN): begin preparing the next
 * segment of class c's way.  A segment to set up: g.prep, WH__GOT_PREP.  If
 * g holds no slot: the bitmap path when no aligned run of pages is left,
 * else look again (WH__GOT_AGAIN: another preparer came first, or its
 * segment is there by now). */
WH__SLAB_COLD WH_HOST_DEVICE wh__slab_got wh__slab_begin(const wh_heap *h, uint32_t c, uint32_t way, uint32_t n,
                                                         wh__slab_got g) {
    int began = wh__seg_begin(h, c, way, wh__slab_seed(c, n), &g.prep);
    if (g.prep != WH_BITMAP_NONE) {
        g.info |= WH__GOT_PREP;
    } else if (wh__got_count(&g) == 0) {
        if (began >= 0) {
            g.info |= WH__GOT_AGAIN;
        } else {
            WH__PROF(h, WH_PROF_SEG_FALLBACK, 1);
            g.prep = WH__PREP_BITMAP;
        }
    }
    return g;
}

/* Allocate one slot of class c for every lane of group (same class). */
WH_INLINE WH_HOST_DEVICE void *wh__slab_malloc(const wh_heap *h, uint32_t c, uint32_t group) {
    unsigned leader = wh_leader(group), rank = wh_rank(group), count = (unsigned)wh_popc32(group), done = 0;
    bool is_leader = wh_lane_id() == leader;
    uint32_t way = wh__seg_way(h); /* the same in every lane: one SM */
    void *mine = (void *)0;
    for (uint32_t n = 0; n < WH_HEAP_RETRY_LIMIT && done < count; ++n) { /* uniform in group */
        wh__slab_got g = wh__got_none();
        if (is_leader) {
            WH__PROF_T(t);
            g = wh__slab_get(h, c, way, n, count - done);
            if (g.prep == WH__PREP_BEGIN) g = wh__slab_begin(WH__RARE(h), c, way, n, g);
            if (g.prep == WH__PREP_BITMAP) g = wh__slab_take_got(WH__RARE(h), c, n, count - done);
            WH__PROF(h, WH_PROF_LEADER_CYCLES, WH__PROF_CLOCK() - t);
        }
        g.x = wh_shfl64(group, g.x, leader);
        g.info = wh_shfl32(group, g.info, leader);
        /* the rest only where the form has it (info is the same in all the group) */
        if (!(g.info & WH__GOT_SEG) || g.info >> 6 & 63u) g.y = wh_shfl64(group, g.y, leader);
        unsigned took = wh__got_count(&g);
        if (took == 0 && !(g.info & (WH__GOT_PREP | WH__GOT_AGAIN))) break; /* no slot and no page */
        if (g.info & WH__GOT_PREP) {                                        /* the next segment: all of us */
            WH__PROF_T(t0);
            g.prep = wh_shfl32(group, g.prep, leader);
            wh__seg_setup(h, c, way, g.prep, rank, count);
            wh_syncwarp(group);
            if (is_leader) {
                WH__PROF(h, WH_PROF_SETUP_CYCLES, WH__PROF_CLOCK() - t0);
                wh__seg_finish(WH__RARE(h), c, way, g.prep);
                WH__PROF(h, WH_PROF_PREP_CYCLES, WH__PROF_CLOCK() - t0);
            }
        }
        if (rank >= done && rank < done + took) mine = wh__got_slot(h, c, &g, rank - done);
        done += took;
    }
    return mine;
}

/* Free a slot; returns false when p is no slab slot (caller decides). */
WH_INLINE WH_HOST_DEVICE bool wh__slab_free(const wh_heap *h, uint32_t info, uint32_t page, uint64_t in_page) {
    uint32_t c = WH_PAGE_CLASS(info), way = WH_PAGE_WAY(info);
    if (c >= WH_SLAB_CLASSES || way >= h->seg_ways) return false;
    uint32_t size = wh__slab_size(c), slot = (uint32_t)in_page / size;
    if (slot * size != in_page || slot >= wh__slab_spp(c)) return false;
    /* a slot a segment has not handed out yet has its bit clear like a live
     * one: only the state tells it apart (a free of it is foreign) */
    uint64_t v = wh_atomic_load(wh__seg_state(h, c, way), WH_RELAXED);
    uint64_t lo = wh__seg_page_lo(h, c, page), from = wh__seg_from(h, c, page, v);
    if (lo + slot >= from) return false;
    uint64_t b = ((uint64_t)page << wh__slab_lbpp(c)) + slot;
    uint64_t bit = 1ull << (b & 63u);
    wh_bitmap bm = wh__slab_bitmap(h, c);
    if (wh_bitmap_or_word(&bm, (uint32_t)(b >> 6), bit) & bit) {
        wh__heap_count(&h->ctl->double_frees);
        return true;
    }
    wh__heap_track(h, -(int64_t)size);
    uint32_t left = wh_atomic_fetch_sub(&h->page_used[page], 1u, WH_ACQ_REL) - 1u;
    if (left == 0)
        wh__rare_reclaim(WH__RARE(h), c, page);
    else if (WH_SEG_RETIRE && wh__seg_r0(v) == (uint64_t)(page >> h->seg_shift[c]) + 1u &&
             left == wh__seg_untouched_at(lo, wh__slab_spp(c), from))
        wh__rare_retire(WH__RARE(h), c, way, page);
    return true;
}

#endif /* WARPHEAP_HEAP_SLAB_H */
