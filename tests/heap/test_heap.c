/* SPDX-License-Identifier: MIT */
/* Device heap, one thread on the CPU backend: bad input gives a clear status
 * or NULL and leaves the heap usable (size 0, too large, double free, foreign
 * and misaligned pointers, exhaustion, a heap too small or too large, unknown
 * kinds and flags); alignment; exhaustion and recovery; the heap walk and the
 * fragmentation equations on known layouts. */
#include <stdint.h>

/* The other side of a reclaim's lost race (test_reclaim_lost_free), run
 * where the reclaim holds some of the page's bits. */
static void reclaim_lost(const void *h, uint32_t c, uint32_t p);
#define WH__RECLAIM_LOST(h, c, p) reclaim_lost(h, c, p)

#include "../../src/heap/heap_internal.h" /* wh__heap_plan: layouts without memory */
#include "warpheap/heap.h"
#include "wh_test.h"

#include <math.h>
#include <stdio.h>

static const wh_heap_kind kinds[] = {WH_HEAP_DEFAULT,
                                     WH_HEAP_SLAB,
                                     WH_HEAP_CIRCULAR,
                                     WH_HEAP_CIRCULAR_MULTI,
                                     WH_HEAP_CIRCULAR_FUSED,
                                     WH_HEAP_CIRCULAR_FUSED_MULTI,
                                     WH_HEAP_BUMP};
/* WRAP: test_wrap and the stress (it reuses live memory by design) */

static wh_heap make(wh_heap_kind kind, uint64_t bytes) {
    wh_heap h;
    wh_heap_config cfg = {.bytes = bytes, .kind = kind, .flags = WH_HEAP_HOST | WH_HEAP_TRACK};
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    return h;
}

/* Pages of page word w taken and given back as the heap's own paths take
 * and give them: the page bitmap and its whole-word summary
 * (heap/page_whole.h). */
static uint64_t take_pages(const wh_heap *h, uint32_t w, uint64_t mask) {
    uint64_t prev = wh_bitmap_and_not_word(&h->pages, w, mask);
    if (prev & mask) wh__whole_taken(h, w, 1u);
    return prev;
}
static uint64_t give_pages(const wh_heap *h, uint32_t w, uint64_t mask) { return wh__pages_or(h, w, mask); }

static void check_walk(const wh_heap *h, uint64_t live) {
    wh_heap_usage s;
    CHECK(wh_heap_stats(h, &s) == WH_OK);
    CHECK_EQ_U64(s.inconsistencies, 0);
    CHECK_EQ_U64(s.used_bytes + s.free_bytes + s.overhead_bytes, s.heap_bytes);
    if (h->kind != WH_HEAP_BUMP) CHECK_EQ_U64(s.allocations, live);
}

static void test_create_errors(void) {
    wh_heap h, gone;
    memset(&gone, 0, sizeof gone); /* zeroed, or destroyed: no heap */
    CHECK(wh_malloc(&gone, 64) == NULL);
    wh_free(&gone, &gone);
    CHECK(wh_malloc_as(&gone, WH_HEAP_CIRCULAR, 64) == NULL);
    gone = make(WH_HEAP_SLAB, 1u << 20);
    CHECK(wh_heap_destroy(&gone) == WH_OK);
    CHECK(wh_malloc(&gone, 64) == NULL);
    wh_heap_config cfg = {.bytes = 1u << 20, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST};
    CHECK(wh_heap_create(NULL, &cfg) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_heap_create(&h, NULL) == WH_ERR_INVALID_ARGUMENT);
    cfg.bytes = 0;
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_TOO_SMALL);
    cfg.bytes = 60000; /* below one page */
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_TOO_SMALL);
    cfg.kind = WH_HEAP_CIRCULAR;
    cfg.bytes = 100;
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_TOO_SMALL);
    cfg.bytes = WH_HEAP_MAX_BYTES + 1;
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_TOO_LARGE);
    cfg.bytes = 1u << 20;
    cfg.kind = (wh_heap_kind)99;
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_INVALID_ARGUMENT);
    cfg.kind = WH_HEAP_DEFAULT;
    cfg.flags = 0x80;
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_INVALID_ARGUMENT);
    cfg.flags = WH_HEAP_HOST;
    cfg.kind = WH_HEAP_CIRCULAR_FUSED_MULTI;
    cfg.subheaps = 5000; /* > 4096 */
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_TOO_SMALL);
    cfg.subheaps = 0;
    cfg.kind = WH_HEAP_CIRCULAR_FUSED;
    cfg.bytes = WH_HEAP_MAX_BYTES + 16;
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_TOO_LARGE);
    /* slab ways: a power of two up to WH_SEG_WAYS_MAX; 0 = by heap size */
    cfg.bytes = 1u << 20;
    cfg.kind = WH_HEAP_DEFAULT;
    cfg.ways = 3;
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_INVALID_ARGUMENT);
    cfg.ways = 2u * WH_SEG_WAYS_MAX;
    CHECK(wh_heap_create(&h, &cfg) == WH_ERR_INVALID_ARGUMENT);
    cfg.ways = WH_SEG_WAYS_MAX;
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    CHECK_EQ_U64(h.seg_ways, WH_SEG_WAYS_MAX);
    CHECK(wh_heap_destroy(&h) == WH_OK);
    cfg.ways = 0;
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    CHECK_EQ_U64(h.seg_ways, 1);
    CHECK(wh_heap_destroy(&h) == WH_OK);
    CHECK(wh_heap_destroy(NULL) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_heap_stats(NULL, NULL) == WH_ERR_INVALID_ARGUMENT);
}

/* The ways a slab heap gets by its size (ways = 0): 1 below 4 GiB, 2 from
 * 4 GiB, 8 from 8 GiB; planned, not allocated. */
static void test_default_ways(void) {
    static const struct {
        uint64_t bytes;
        uint32_t ways;
    } want[] = {{1ull << 20, 1}, {(4ull << 30) - WH_SLAB_PAGE, 1},
                {4ull << 30, 2}, {(8ull << 30) - WH_SLAB_PAGE, 2},
                {8ull << 30, 8}, {32ull << 30, 8}};
    for (unsigned i = 0; i < sizeof want / sizeof *want; ++i) {
        for (unsigned k = 0; k < 2; ++k) {
            wh_heap_config cfg = {
                .bytes = want[i].bytes, .kind = k ? WH_HEAP_SLAB : WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST};
            wh_heap h = {0};
            size_t arena = 0;
            CHECK(wh__heap_plan(&h, &cfg, &arena) == WH_OK);
            CHECK_EQ_U64(h.seg_ways, want[i].ways);
        }
    }
}

static void test_bad_calls(wh_heap_kind kind) {
    wh_heap h = make(kind, 1u << 20);
    int local = 0;
    CHECK(wh_malloc(&h, 0) == NULL);
    CHECK(wh_malloc(&h, (size_t)h.bytes + 1u) == NULL);
    CHECK(wh_malloc(&h, (size_t)-1) == NULL);
    wh_free(&h, NULL);
    wh_free(&h, &local); /* foreign */
    uint8_t *p = (uint8_t *)wh_malloc(&h, 100);
    CHECK(p != NULL && (uintptr_t)p % 16 == 0);
    wh_free(&h, p + 8); /* misaligned: foreign */
    {
        wh_heap_usage s;
        CHECK(wh_heap_stats(&h, &s) == WH_OK);
        CHECK_EQ_U64(s.failed_allocs, 2);
        CHECK_EQ_U64(s.foreign_frees, 2);
    }
    if (kind != WH_HEAP_BUMP) {
        wh_free(&h, p);
        wh_free(&h, p); /* double free */
        wh_heap_usage s;
        CHECK(wh_heap_stats(&h, &s) == WH_OK);
        CHECK_EQ_U64(s.double_frees, 1);
        CHECK_EQ_U64(s.allocations, 0);
    }
    check_walk(&h, 0);
    void *q = wh_malloc(&h, 64); /* still usable */
    CHECK(q != NULL);
    wh_free(&h, q);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* Fill with one size until NULL, free all, fill again: the same count. */
static void test_exhaustion(wh_heap_kind kind, size_t size) {
    enum { MAX = 1 << 16 };
    static void *ptrs[MAX];
    wh_heap h = make(kind, 1u << 20);
    uint32_t rounds[2] = {0, 0};
    for (int r = 0; r < 2; ++r) {
        uint32_t n = 0;
        while (n < MAX && (ptrs[n] = wh_malloc(&h, size)) != NULL) {
            CHECK((uintptr_t)ptrs[n] % 16 == 0);
            ++n;
        }
        rounds[r] = n;
        CHECK(n < MAX && n > 0);
        check_walk(&h, n);
        CHECK(wh_malloc(&h, size) == NULL); /* still exhausted */
        if (kind == WH_HEAP_BUMP) {
            CHECK(wh_heap_reset(&h) == WH_OK);
            continue;
        }
        for (uint32_t k = 0; k < n; ++k) wh_free(&h, ptrs[k]);
        check_walk(&h, 0);
    }
    printf("%-9s size %6zu: %u then %u allocations fill 1 MiB\n", wh_heap_kind_name(kind), size, rounds[0], rounds[1]);
    if (kind == WH_HEAP_SLAB || kind == WH_HEAP_DEFAULT || kind == WH_HEAP_BUMP)
        CHECK_EQ_U64(rounds[0], rounds[1]);
    else
        CHECK(rounds[1] >= rounds[0] * 9 / 10);
    if (size == 64 && !wh__circ_kind(kind)) CHECK_EQ_U64(rounds[0], (1u << 20) / 64); /* 100% */
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* No failure while room remains, mixed sizes: requests of 16 B to 4 KiB
 * fill a 256 MiB heap until the first one fails.  By then the heap is full
 * but for class rounding (about 2.2%: eight classes per power of two up to
 * 1 KiB, then one per number of slots a page holds), page tails (about
 * 0.3%) and the partly used pages of the 80 classes served (about 1%: half
 * a page each); what the classes' segments held untouched came back before
 * the failure.  Freed, the heap fills as far again. */
static void test_mixed_fill(wh_heap_kind kind) {
    enum { MAX = 1 << 18 };
    void **ptrs = malloc(MAX * sizeof *ptrs);
    CHECK(ptrs != NULL);
    if (!ptrs) return;
    wh_heap h = make(kind, 256ull << 20);
    double H = (double)h.bytes;
    for (int r = 0; r < 2; ++r) {
        uint64_t ok = 0;
        uint32_t n = 0;
        for (; n < MAX; ++n) {
            uint32_t size = 16u + (uint32_t)(wh_hash64((uint64_t)r << 32 | n) % 4081u);
            if (!(ptrs[n] = wh_malloc(&h, size))) break;
            ok += size;
        }
        CHECK(n < MAX);
        wh_heap_usage s;
        CHECK(wh_heap_stats(&h, &s) == WH_OK);
        double fill = (double)ok / H;
        printf("%-9s mixed 16 B - 4 KiB, round %d: %.4f of 256 MiB requested at the first failure, %.4f in class "
               "rounding, %.4f tails, %.4f free\n",
               wh_heap_kind_name(kind), r, fill, ((double)s.used_bytes - (double)ok) / H, (double)s.overhead_bytes / H,
               (double)s.free_bytes / H);
        CHECK((double)s.free_bytes / H < 80 * 0.75 * WH_SLAB_PAGE / H);
        CHECK(((double)s.used_bytes - (double)ok) / H < 0.025 && (double)s.overhead_bytes / H < 0.004);
        CHECK(fill > 0.96);
        check_walk(&h, n);
        for (uint32_t k = 0; k < n; ++k) wh_free(&h, ptrs[k]);
        check_walk(&h, 0);
    }
    CHECK(wh_heap_destroy(&h) == WH_OK);
    free(ptrs);
}

/* Segment first, reuse deferred (heap/slab.h): once the
 * pool is dry, every freed slot is found again.  Fill, free every other
 * slot (no page empties), fill again: exactly the freed ones come back. */
static void test_reuse_when_dry(wh_heap_kind kind, size_t size) {
    enum { MAX = 1 << 16 };
    static void *ptrs[MAX];
    wh_heap h = make(kind, 1u << 20);
    uint32_t n = 0, again = 0;
    while (n < MAX && (ptrs[n] = wh_malloc(&h, size)) != NULL) ++n;
    CHECK(n > 0 && n < MAX);
    for (uint32_t k = 0; k < n; k += 2) wh_free(&h, ptrs[k]);
    while (again < MAX && wh_malloc(&h, size) != NULL) ++again;
    CHECK_EQ_U64(again, (n + 1u) / 2u);
    check_walk(&h, n);
    CHECK(wh_heap_destroy(&h) == WH_ERR_IN_USE); /* live blocks left: named, released */
}

/* No failure while room remains (wh__slab_malloc_up): every page holds 1-KiB
 * slots, one of them freed in each; a 16-B request, whose class has neither a
 * slot nor a page, is served by a freed 1-KiB slot, as many times as there
 * are such slots, and the next one fails.  The counted bytes follow the slot
 * served, and everything frees back to an empty heap. */
static void test_up_class(wh_heap_kind kind) {
    enum { MAX = 1 << 12 };
    static void *big[MAX], *small[MAX];
    wh_heap h = make(kind, 1u << 20);
    uint32_t n = 0, freed = 0, got = 0, spp = WH_SLAB_PAGE / 1024u;
    while (n < MAX && (big[n] = wh_malloc(&h, 1024)) != NULL) ++n;
    CHECK(n > 0 && n < MAX);
    for (uint32_t k = 0; k < n; k += spp, ++freed) {
        wh_free(&h, big[k]); /* the page keeps its other slots */
        big[k] = NULL;
    }
    wh_heap_usage before, after;
    CHECK(wh_heap_stats(&h, &before) == WH_OK);
    while (got < MAX && (small[got] = wh_malloc(&h, 16)) != NULL) {
        memset(small[got], 0xA5, 16);
        ++got;
    }
    CHECK_EQ_U64(got, freed);
    CHECK(wh_heap_stats(&h, &after) == WH_OK);
    CHECK_EQ_U64(after.used_bytes - before.used_bytes, (uint64_t)got * 1024u);
    check_walk(&h, n);
    for (uint32_t k = 0; k < got; ++k) wh_free(&h, small[k]);
    for (uint32_t k = 0; k < n; ++k) wh_free(&h, big[k]);
    check_walk(&h, 0);
    CHECK(wh_malloc(&h, 16) != NULL); /* its own class again */
    CHECK_EQ_U64(h.ctl->in_use, 16);  /* WH_HEAP_TRACK: the slots served, added and taken off alike */
    CHECK(wh_heap_destroy(&h) == WH_ERR_IN_USE);
}

/* No failure while room remains, across classes: one 16-B allocation gives
 * its class a bump segment of several pages, all but one slot untouched; a
 * larger class then fills the heap.  When the pool runs dry, the larger
 * class's preparation or page activation takes the 16-B segment's untouched
 * pages back (wh__seg_retire_all), so it gets every page but the one that
 * holds the 16-B slot, full; a smaller class's pages are out of reach of
 * the hand-on to larger classes, so nothing else serves it. */
static void test_dry_takes_back(wh_heap_kind kind, size_t size) {
    enum { MAX = 1 << 17 };
    static void *ptrs[MAX];
    wh_heap h = make(kind, 16u << 20); /* 256 pages: 16-B segments of 4 */
    uint32_t c16 = wh__slab_class_of(&h, 16), n = 0;
    void *tiny = wh_malloc(&h, 16);
    CHECK(tiny != NULL);
    CHECK(h.seg_shift[c16] >= 1); /* a segment of more than one page: untouched pages to take back */
    while (n < MAX && (ptrs[n] = wh_malloc(&h, size)) != NULL) ++n;
    uint32_t spp = wh__slab_spp(wh__slab_class_of(&h, size));
    printf("%-9s size %6zu beside a 16-B segment: %u allocations (%u pages of %u slots)\n", wh_heap_kind_name(kind),
           size, n, h.npages - 1u, spp);
    CHECK_EQ_U64(n, (uint64_t)(h.npages - 1u) * spp);
    check_walk(&h, n + 1u);
    for (uint32_t k = 0; k < n; ++k) wh_free(&h, ptrs[k]);
    wh_free(&h, tiny);
    check_walk(&h, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* A way's preparations guess the run after its current segment first
 * (wh__seg_claim_run's `next`): in a fresh heap one thread's 4-KiB
 * allocations take segment after segment, each the run after the one
 * before, until the heap's last run or a run that an earlier segment took
 * (the first one lands at random, and so does the one after such a stop);
 * the walk is sound after all of it and after the frees.  A random guess
 * instead lands anywhere. */
static void test_seg_next_run(void) {
    enum { MAX = 1 << 16 };
    static void *ptrs[MAX];
    wh_heap h = make(WH_HEAP_DEFAULT, 1ull << 30); /* 16384 pages */
    uint32_t c = wh__slab_class_of(&h, 4096), shift = h.seg_shift[c], runs = h.npages >> shift;
    uint64_t cap = (uint64_t)wh__slab_spp(c) << shift, seg_bytes = (uint64_t)WH_SLAB_PAGE << shift;
    CHECK(wh__seg_on(&h, c) && shift >= 6u && runs >= 16u);
    CHECK(cap * 8u <= MAX);
    uint32_t n = (uint32_t)(cap * 8u), follows = 0, jumps = 0, prev = WH_BITMAP_NONE;
    bool *taken = (bool *)calloc(runs, sizeof *taken);
    CHECK(taken != NULL);
    for (uint32_t k = 0; k < n; ++k) {
        ptrs[k] = wh_malloc(&h, 4096);
        CHECK(ptrs[k] != NULL);
        if (k % cap) continue;
        uint32_t run = (uint32_t)(((uint8_t *)ptrs[k] - h.base) / seg_bytes); /* a segment's first slot */
        if (prev != WH_BITMAP_NONE) {
            if (run == prev + 1u)
                ++follows;
            else if (prev + 1u < runs && !taken[prev + 1u])
                ++jumps; /* only past the last run, or before a taken one, may it jump */
        }
        taken[run] = true;
        prev = run;
    }
    free(taken);
    printf("4-KiB segments of %u pages: %u followed the one before, %u jumped\n", 1u << shift, follows, jumps);
    CHECK_EQ_U64(jumps, 0); /* random guesses: nearly every one */
    check_walk(&h, n);
    for (uint32_t k = 0; k < n; ++k) wh_free(&h, ptrs[k]);
    check_walk(&h, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* Segment sizes follow the classes that share the pool (wh__seg_shift): a
 * class alone gets its largest segment; once every class with segments has
 * prepared one, each new segment is at most 1/(WH__SEG_SHARE n) of the heap,
 * so a 16-B class whose current segment is of the largest size goes on in a
 * smaller next one (a rotation between segments of two sizes), the walk
 * sound throughout; a trim forgets the classes, and the next class alone
 * gets its largest segment again. */
static void test_seg_share(void) {
    wh_heap h = make(WH_HEAP_DEFAULT, 1ull << 30); /* 16384 pages, one way */
    uint32_t c16 = wh__slab_class_of(&h, 16), n = 1, got = 0;
    uint64_t *st16 = wh__seg_state(&h, c16, 0);
    void *one[WH_SLAB_CLASSES] = {0};
    one[c16] = wh_malloc(&h, 16);
    CHECK(one[c16] != NULL);
    uint64_t first = wh__seg_r0(*st16);
    CHECK_EQ_U64(wh__seg_pages(first), 1ull << h.seg_shift[c16]); /* alone: the largest */
    for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) {
        if (c == c16 || !wh__seg_on(&h, c) || c != wh__slab_class_of(&h, wh__slab_size(c))) continue;
        CHECK((one[c] = wh_malloc(&h, wh__slab_size(c))) != NULL);
        ++n;
        uint32_t share = (uint32_t)wh_log2_64(h.npages / (WH__SEG_SHARE * (uint64_t)n));
        uint32_t want = share < h.seg_shift[c] ? share : h.seg_shift[c];
        got += wh__seg_pages(wh__seg_r0(*wh__seg_state(&h, c, 0))) == 1ull << want;
    }
    printf("segment sizes as %u classes join: %u of %u as the share says\n", n, got, n - 1u);
    CHECK(n >= 20u);
    CHECK_EQ_U64(got, n - 1u);
    /* the 16-B class through its largest segment into a smaller one */
    uint32_t spp = wh__slab_spp(c16), small = (uint32_t)wh_log2_64(h.npages / (WH__SEG_SHARE * (uint64_t)n));
    CHECK(small < h.seg_shift[c16]);
    uint64_t count = ((uint64_t)spp << h.seg_shift[c16]) + ((uint64_t)spp << small) / 2u;
    void **p = (void **)malloc(count * sizeof *p);
    CHECK(p != NULL);
    for (uint64_t k = 1; k < count; ++k) CHECK((p[k] = wh_malloc(&h, 16)) != NULL);
    uint64_t now = wh__seg_r0(*st16);
    CHECK(now != first && wh__seg_pages(now) == 1ull << small);
    CHECK_EQ_U64(wh__seg_s(*st16), count - ((uint64_t)spp << h.seg_shift[c16]));
    check_walk(&h, count - 1u + n);
    for (uint64_t k = 1; k < count; ++k) wh_free(&h, p[k]);
    for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c)
        if (one[c]) wh_free(&h, one[c]);
    check_walk(&h, 0);
    CHECK(wh_heap_trim(&h) == WH_OK);
    for (uint32_t k = 0; k < WH__SEG_USED_WORDS; ++k) CHECK_EQ_U64(h.ctl->seg_used[k], 0);
    uint32_t c4k = wh__slab_class_of(&h, 4096);
    void *q = wh_malloc(&h, 4096);
    CHECK(q != NULL);
    CHECK_EQ_U64(wh__seg_pages(wh__seg_r0(*wh__seg_state(&h, c4k, 0))), 1ull << h.seg_shift[c4k]);
    wh_free(&h, q);
    check_walk(&h, 0);
    free(p);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* Many classes on many ways at once (wh__seg_shift): 8 threads fill a 1 GiB
 * heap of 8 ways with log-uniform 16 B - 4 KiB requests until one fails.
 * The heap is used as well as with one thread, and (profile build,
 * test_heap_options) under a fifth of the requests take the bitmap path:
 * with the classes' largest segments alone (up to 128 pages, 27 classes on
 * 8 ways) most preparations found no run and 64% of them did. */
typedef struct share_job {
    wh_heap *h;
    uint32_t stop;
    uint64_t req[8], n[8];
} share_job;
static void share_worker(unsigned t, void *arg) {
    share_job *j = (share_job *)arg;
    for (uint64_t k = 0; !wh_atomic_load(&j->stop, WH_RELAXED); ++k) {
        uint64_t x = wh_hash64((uint64_t)t << 40 | k);
        uint32_t n = (uint32_t)(16.0 * exp2(8.0 * (double)(x >> 11) / 9007199254740992.0));
        if (!wh_malloc(j->h, n)) {
            wh_atomic_store(&j->stop, 1u, WH_RELAXED);
            break;
        }
        j->req[t] += n, j->n[t]++;
    }
}
static void test_seg_share_mixed(void) {
    wh_heap h;
    wh_heap_config cfg = {
        .bytes = 1ull << 30, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST | WH_HEAP_TRACK, .ways = 8};
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    share_job j = {&h, 0, {0}, {0}};
    wh_run_threads(8, share_worker, &j);
    uint64_t req = 0, n = 0;
    for (int t = 0; t < 8; ++t) req += j.req[t], n += j.n[t];
    wh_heap_usage s;
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    CHECK_EQ_U64(s.inconsistencies, 0);
    CHECK_EQ_U64(s.allocations, n);
    double fill = (double)req / (double)h.bytes, free = (double)s.free_bytes / (double)h.bytes;
    printf("8 threads, 8 ways, mixed 16 B - 4 KiB: %.4f of 1 GiB requested at the first failure, %.4f free, %llu "
           "requests\n",
           fill, free, (unsigned long long)n);
    CHECK(fill > 0.955 && free < 0.01);
#ifdef WH_HEAP_PROFILE /* the bitmap-path calls are counted in profile builds only */
    uint64_t takes = h.ctl->prof[WH_PROF_TAKE_CALLS];
    printf("  of them %llu through the bitmap path\n", (unsigned long long)takes);
    CHECK(takes * 5u < n);
#endif
    CHECK(wh_heap_destroy(&h) == WH_ERR_IN_USE); /* live blocks left: named, released */
}

/* The back-off (heap/slab_segment.h, wh__seg_back_off): free pages everywhere
 * but no aligned run of a 16-B segment's 128 pages.  A request is served by
 * the bitmap path, the class's flag says it backs off for the next 2 requests that
 * find no segment, then one tries again (and backs off 4); once a run is
 * there, a preparation succeeds and the failures are forgotten. */
static void test_seg_backoff(void) {
    wh_heap h = make(WH_HEAP_DEFAULT, 1ull << 30); /* 16384 pages, 256 words */
    uint32_t c = wh__slab_class_of(&h, 16), k = wh__seg_index(c, 0), words = h.npages / 64u;
    CHECK_EQ_U64(h.seg_shift[c], 7); /* runs of 2 words */
    for (uint32_t w = 1; w < words; w += 2) CHECK(take_pages(&h, w, 1ull << 5) & (1ull << 5));
    void *p[8];
    p[0] = wh_malloc(&h, 16);
    CHECK(p[0] != NULL);
    CHECK_EQ_U64(h.ctl->seg_prep[k], WH__SEG_BACKING);
    CHECK_EQ_U64(h.ctl->seg_skip[k], 1ull << WH__SKIP_E_SHIFT); /* one failure: skip 2 (wh__skip_limit) */
    CHECK_EQ_U64(wh__seg_r0(*wh__seg_state(&h, c, 0)), 0);
    for (int i = 1; i <= 2; ++i) CHECK((p[i] = wh_malloc(&h, 16)) != NULL);
    CHECK_EQ_U64(h.ctl->seg_prep[k], 0);       /* the second ended it */
    CHECK((p[3] = wh_malloc(&h, 16)) != NULL); /* tries again, fails again */
    CHECK_EQ_U64(h.ctl->seg_prep[k], WH__SEG_BACKING);
    CHECK_EQ_U64(h.ctl->seg_skip[k], 2ull << WH__SKIP_E_SHIFT); /* two: skip 4 */
    for (uint32_t w = 1; w < words; w += 2) (void)give_pages(&h, w, 1ull << 5);
    for (int i = 4; i < 8; ++i) CHECK((p[i] = wh_malloc(&h, 16)) != NULL); /* 4 skipped ... */
    CHECK(wh_malloc(&h, 16) != NULL);                                      /* ... then a segment */
    CHECK(wh__seg_r0(*wh__seg_state(&h, c, 0)) != 0);
    CHECK_EQ_U64(h.ctl->seg_skip[k], 0);
    check_walk(&h, 9);
    CHECK(wh_heap_destroy(&h) == WH_ERR_IN_USE); /* live blocks left: named, released */
}

/* On the CPU a thread's way comes from a stack address inside wh_malloc.
 * Called out of line from one frame, every call has the same frame and so
 * the same way, which a first allocation from a fresh heap shows (its slot
 * lies in a page of that way). */
static __attribute__((noinline)) void *malloc_one_frame(wh_heap *h, size_t n) { return wh_malloc(h, n); }

/* A request whose way backs off (its last preparation found no run) takes
 * a slot from another way's segment, not from the bitmap path: at the end
 * of a fill that runs the pool out of aligned runs, the ways that still
 * hold segments serve the ways that cannot prepare one. */
static void test_seg_hop(void) {
    wh_heap h;
    wh_heap_config cfg = {.bytes = 1ull << 30, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST, .ways = 2};
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    void *probe = malloc_one_frame(&h, 16);
    CHECK(probe != NULL);
    uint32_t own = WH_PAGE_WAY(h.page_info[((uint8_t *)probe - h.base) >> WH_SLAB_PAGE_SHIFT]);
    wh_free(&h, probe);
    CHECK(wh_heap_destroy(&h) == WH_OK);
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    uint32_t c = wh__slab_class_of(&h, 16), other = own ^ 1u, code = 0;
    /* the other way's segment, as a leader's group prepares it */
    CHECK(wh__seg_begin(&h, c, other, 1u, &code, false) == 1 && code != WH_BITMAP_NONE);
    wh__seg_setup(&h, c, other, code, 0, 1);
    wh__seg_finish(&h, c, other, code);
    /* this thread's way: no segment, backing off after a failure */
    *wh__seg_skip(&h, c, own) = wh__pages_back_count(&h) << WH__SKIP_BACK_SHIFT | 5ull << WH__SKIP_E_SHIFT;
    *wh__seg_flag(&h, c, own) = WH__SEG_BACKING;
    void *p = malloc_one_frame(&h, 16);
    CHECK(p != NULL);
    /* the request went through this way's back-off (counted there): the way
     * the test derived is the one the allocation used, so the slot below
     * comes from the look at the other way, not from a request of its own */
    CHECK_EQ_U64(*wh__seg_skip(&h, c, own) & ((1ull << WH__SKIP_E_SHIFT) - 1u), 1);
    CHECK_EQ_U64(wh__seg_s(*wh__seg_state(&h, c, other)), 1); /* the other way's first slot */
    CHECK_EQ_U64(wh__seg_r0(*wh__seg_state(&h, c, own)), 0);  /* nothing prepared here */
    CHECK_EQ_U64(h.ctl->activating[c], 0);
    uint32_t page = (uint32_t)(((uint8_t *)p - h.base) >> WH_SLAB_PAGE_SHIFT);
    CHECK_EQ_U64(WH_PAGE_WAY(h.page_info[page]), other);
    check_walk(&h, 1);
    wh_free(&h, p);
    check_walk(&h, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* A back-off ends once a segment's worth of pages has come back to the pool:
 * a heap filled with one size until an allocation fails (the class's way
 * backs off, its segments taken back), then emptied, serves the next request
 * from a fresh segment, not from the bitmap path.  Ended only by a count of
 * requests, it kept the first requests of a fill after a free-all on the
 * bitmap path, whose pages broke the free runs of the later preparations. */
static void test_seg_backoff_pool_grew(void) {
    wh_heap h = make(WH_HEAP_DEFAULT, 16ull << 20); /* 256 pages */
    uint32_t c = wh__slab_class_of(&h, 16), k = wh__seg_index(c, 0);
    uint64_t n = 0, cap = (uint64_t)wh__slab_spp(c) << h.seg_shift[c];
    void **ptrs = (void **)malloc((size_t)(h.bytes / 16u) * sizeof *ptrs);
    CHECK(ptrs != NULL);
    while (n < h.bytes / 16u && (ptrs[n] = wh_malloc(&h, 16)) != NULL) ++n;
    CHECK(n > h.bytes / 32u);
    CHECK_EQ_U64(h.ctl->seg_prep[k], WH__SEG_BACKING); /* the pool ran dry: backing off */
    for (uint64_t i = 0; i < n; ++i) wh_free(&h, ptrs[i]);
    CHECK(wh__pages_back_count(&h) >= (1ull << h.seg_shift[c]));
    void *p = wh_malloc(&h, 16);
    CHECK(p != NULL);
    uint64_t v = *wh__seg_state(&h, c, 0);
    CHECK(wh__seg_r0(v) != 0 && wh__seg_s(v) < cap); /* from a fresh segment */
    CHECK(h.ctl->seg_prep[k] != WH__SEG_BACKING);
    check_walk(&h, 1);
    free(ptrs);
    CHECK(wh_heap_destroy(&h) == WH_ERR_IN_USE);
}

/* Equations 2 and 3 on layouts whose answer is known. */
static void test_fragmentation(void) {
    wh_heap h = make(WH_HEAP_CIRCULAR, 1u << 20);
    void *p = wh_malloc(&h, 100); /* 7 units: 112 data bytes */
    wh_heap_usage s;
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    CHECK_EQ_U64(s.requested_bytes, 100);
    CHECK(s.allocations == 1 && s.used_bytes >= 112);
    CHECK(fabs(s.internal_frag - (double)(s.used_bytes - 100) / (double)s.used_bytes) < 1e-9);
    CHECK(s.external_frag > 0.0 && s.external_frag < 1.0);
    CHECK_EQ_U64(s.peak_bytes, 100);
    wh_free(&h, p);
    CHECK(wh_heap_destroy(&h) == WH_OK);

    h = make(WH_HEAP_DEFAULT, 1u << 20); /* 16 pages */
    void *big = wh_malloc(&h, 100000);   /* a run of 2 pages */
    CHECK(big != NULL);
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    CHECK_EQ_U64(s.used_bytes, 2u * WH_SLAB_PAGE);
    CHECK(fabs(s.internal_frag - (131072.0 - 100000.0) / 131072.0) < 1e-9);
    CHECK_EQ_U64(s.free_bytes, 14u * WH_SLAB_PAGE);
    CHECK(s.external_frag == 0.0 || s.largest_free < s.free_bytes);
    void *small = wh_malloc(&h, 20); /* class 32: one page active */
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    CHECK_EQ_U64(s.allocations, 2);
    CHECK(s.internal_frag < 0); /* slab requests unknown */
    wh_free(&h, small);
    wh_free(&h, big);
    /* class 32's segments keep their pages (lazy reclaim), yet a run of the
     * whole heap finds them: the pool ran dry and took them back */
    void *all = wh_malloc(&h, 16u * WH_SLAB_PAGE);
    CHECK(all != NULL);
    wh_free(&h, all);
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    CHECK_EQ_U64(s.free_bytes, 16u * WH_SLAB_PAGE);
    CHECK(s.external_frag == 0.0);
    /* and wh_heap_trim gives them back ahead of time */
    small = wh_malloc(&h, 20);
    CHECK(small != NULL);
    wh_free(&h, small);
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    CHECK(s.largest_free < 16u * WH_SLAB_PAGE); /* held by the class */
    CHECK(wh_heap_trim(&h) == WH_OK);
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    CHECK_EQ_U64(s.free_bytes, 16u * WH_SLAB_PAGE); /* the pages came back */
    CHECK(s.external_frag == 0.0);
    CHECK_EQ_U64(s.inconsistencies, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* The circular kinds tag a header absorbed by a merge GONE: freeing it again
 * is a double free, not a chunk spliced into the middle of another
 * (heap/circular.h).  Afterwards the ring is whole and hands out no
 * overlapping chunks. */
static void test_circ_gone(wh_heap_kind kind) {
    wh_heap h = make(kind, 1u << 20);
    uint8_t *a = (uint8_t *)wh_malloc(&h, 100), *b = (uint8_t *)wh_malloc(&h, 100);
    CHECK(a == h.base + 16 && b == a + 128); /* split off the root chunk in turn */
    wh_free(&h, b);
    wh_free(&h, a); /* absorbs b's header */
    wh_free(&h, b);
    wh_free(&h, a);
    wh_heap_usage s;
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    CHECK_EQ_U64(s.double_frees, 2);
    CHECK_EQ_U64(s.foreign_frees, 0);
    CHECK_EQ_U64(s.largest_free, ((uint64_t)h.split_root - 1u) * 16u); /* the root chunk is whole again */
    check_walk(&h, 0);
    /* two chunks that cover b's old place must not overlap */
    uint8_t *c = (uint8_t *)wh_malloc(&h, 200), *d = (uint8_t *)wh_malloc(&h, 200);
    CHECK(c != NULL && d != NULL && (c + 200 <= d || d + 200 <= c));
    check_walk(&h, 2);
    wh_free(&h, d);
    wh_free(&h, c);
    CHECK(wh_malloc(&h, ((size_t)h.split_root - 1u) * 16u) == a);
    check_walk(&h, 1);
    CHECK(wh_heap_destroy(&h) == WH_ERR_IN_USE); /* live blocks left: named, released */
}

/* A walker that read `next` of a chunk it does not own may reach that header
 * after a neighbour absorbed the chunk and a user wrote there (heap/circular.h).
 * Here the user data at the absorbed header equals a free chunk's header
 * exactly (its bytes copied from one), and the cursor rests on it as a stale
 * walker's position would: the allocation must not take it, so it overlaps
 * no live chunk, and the user data stays as written.  MULTI kinds with one
 * sub-heap, so that the walker starts from the cursor set here. */
static void test_circ_stale_walker(wh_heap_kind kind) {
    wh_heap h;
    wh_heap_config cfg = {.bytes = 1u << 20, .kind = kind, .flags = WH_HEAP_HOST | WH_HEAP_TRACK, .subheaps = 1};
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    uint8_t *a = (uint8_t *)wh_malloc(&h, 100), *b = (uint8_t *)wh_malloc(&h, 100);
    CHECK(a == h.base + 16 && b == a + 128); /* units 0 and 8 */
    wh_free(&h, b);
    wh_free(&h, a); /* absorbs b's header at unit 8 */
    uint8_t *c = (uint8_t *)wh_malloc(&h, 1000);
    CHECK(c == a); /* units 0 .. 63: unit 8 is user data now */
    uint8_t header[16], *old = b - 16;
    memcpy(header, c + 1008, 16); /* the free remainder's header at unit 64 */
    memset(c, 0x5A, 1000);
    memcpy(old, header, 16);
    h.cursors[0] = (uint64_t)(old - h.base) / 16u; /* a stale walker's position */
    uint8_t *d = (uint8_t *)wh_malloc(&h, 100);
    CHECK(d != NULL && (d + 100 <= c || d >= c + 1000));
    CHECK(memcmp(old, header, 16) == 0);
    CHECK(c[0] == 0x5A && c[999] == 0x5A && old[-1] == 0x5A && old[16] == 0x5A);
    check_walk(&h, 2);
    wh_free(&h, d);
    wh_free(&h, c);
    check_walk(&h, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* A walker whose chunk absorbed free followers and stayed too small leaves the
 * cursor on it (heap/circular.h: wh__circ_take), so that the next request
 * goes on merging there.  Here the cursor stands at the pre-split's smallest
 * chunks, WH_CIRC_MERGES + 1 of which are one unit short of the request: the
 * first request merges runs of them and is served further on, the second
 * joins two merged runs where the cursor was left.  Moved past them instead,
 * the cursor leaves the merged room to walks that come round the whole ring,
 * which in a large heap run out of steps first. */
static void test_circ_merge_cursor(wh_heap_kind kind) {
    wh_heap h = make(kind, 1u << 20);
    uint32_t levels = h.split_levels, small = h.split_root >> (levels - 1u);
    uint32_t first = (levels - 1u) * h.split_root, run = (WH_CIRC_MERGES + 1u) * small;
    size_t size = (size_t)run * 16u; /* run + 1 units with the header */
    h.cursors[0] = first;
    uint8_t *p = (uint8_t *)wh_malloc(&h, size);
    CHECK(p != NULL && p > h.base + ((uint64_t)first + run) * 16u);
    CHECK_EQ_U64(h.cursors[0], first);
    uint8_t *q = (uint8_t *)wh_malloc(&h, size);
    CHECK(q == h.base + (uint64_t)first * 16u + 16u);
    check_walk(&h, 2);
    wh_free(&h, p);
    wh_free(&h, q);
    check_walk(&h, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* A circular kind filled with one size from one thread until the first NULL:
 * the fraction of the heap in used chunks (the walk's used bytes, headers
 * apart) must reach `least`; then everything is freed, the walk finds every
 * byte free again (or a header), and a second fill reaches the same fraction
 * within 3 points.  The rest of a full heap is the headers (one unit a chunk:
 * 1/need of it), chunks too small for the request (a sub-heap's tail, the
 * smallest pre-split chunks that no free neighbour can join) and the room a
 * bounded walk does not reach; least allows for the headers and 10% more.
 * MULTI hands one thread's requests to the other sub-heaps once its own is
 * full, and must fill those too. */
static void test_circ_fill(wh_heap_kind kind, uint64_t bytes, uint32_t subheaps, size_t size) {
    uint64_t need = 1u + (size + 15u) / 16u, cap = bytes / 16u / need + 1u; /* more chunks than fit */
    double least = 0.9 * (double)(need - 1u) / (double)need, got[2] = {0, 0};
    void **p = (void **)malloc(cap * sizeof *p);
    wh_heap h;
    wh_heap_config cfg = {.bytes = bytes, .kind = kind, .flags = WH_HEAP_HOST | WH_HEAP_TRACK, .subheaps = subheaps};
    CHECK(p != NULL && wh_heap_create(&h, &cfg) == WH_OK);
    for (int r = 0; r < 2; ++r) {
        uint64_t n = 0;
        while (n < cap && (p[n] = wh_malloc(&h, size)) != NULL) ++n;
        wh_heap_usage s;
        CHECK(n < cap);
        CHECK(wh_heap_stats(&h, &s) == WH_OK);
        CHECK_EQ_U64(s.inconsistencies, 0);
        CHECK_EQ_U64(s.allocations, n);
        got[r] = (double)s.used_bytes / (double)s.heap_bytes;
        for (uint64_t k = 0; k < n; ++k) wh_free(&h, p[k]);
        CHECK(wh_heap_stats(&h, &s) == WH_OK);
        CHECK(s.inconsistencies == 0 && s.allocations == 0 && s.used_bytes == 0);
        CHECK_EQ_U64(s.free_bytes + s.overhead_bytes, s.heap_bytes);
    }
    printf("%-20s %u sub-heap(s) of %llu KiB, size %5zu: fill %.3f then %.3f (at least %.3f)\n",
           wh_heap_kind_name(kind), h.subheaps, (unsigned long long)(h.subheap_units / 64u), size, got[0], got[1],
           least);
    CHECK(got[0] >= least && got[1] >= least);
    CHECK(fabs(got[1] - got[0]) <= 0.03);
    CHECK(wh_heap_destroy(&h) == WH_OK);
    free(p);
}

/* WRAP: reservations go round the pool; pointers always inside, aligned. */
static void test_wrap(void) {
    wh_heap h = make(WH_HEAP_WRAP, 4096);
    uint8_t *p[6];
    for (int k = 0; k < 6; ++k) p[k] = (uint8_t *)wh_malloc(&h, 1000); /* 1008 each */
    CHECK(p[0] == h.base && p[1] == h.base + 1008 && p[3] == h.base + 3024);
    CHECK(p[4] == h.base && p[5] == h.base + 1008); /* wrapped */
    CHECK(wh_malloc(&h, 5000) == NULL);             /* above the pool */
    wh_heap_usage s;
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    CHECK_EQ_U64(s.failed_allocs, 1);
    CHECK_EQ_U64(s.inconsistencies, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* wh__seg_claim_run takes 2^shift aligned free pages for a bump segment; a
 * run over several bitmap words takes them all without waiting between the
 * and-nots and puts back every word when any was not all free. */
static void test_claim_run(void) {
    wh_heap h = make(WH_HEAP_DEFAULT, 1ull << 30); /* 16384 pages, 256 words */
    uint32_t words = h.npages / 64u;
    /* one busy page in every odd word: each aligned two-word run (shift 7)
     * is broken, while its first word looks whole */
    for (uint32_t w = 1; w < words; w += 2) CHECK(take_pages(&h, w, 1ull << 5) & (1ull << 5));
    unsigned long long before = wh_bitmap_count_host(&h.pages);
    for (uint64_t seed = 0; seed < 64; ++seed) CHECK(wh__seg_claim_run(&h, 7, seed, WH_BITMAP_NONE) == WH_BITMAP_NONE);
    CHECK_EQ_U64(wh_bitmap_count_host(&h.pages), before); /* every word put back */
    (void)give_pages(&h, 11, 1ull << 5);                  /* words 10-11: the only whole run */
    uint32_t run = WH_BITMAP_NONE;
    for (uint64_t seed = 0; seed < 4096 && run == WH_BITMAP_NONE; ++seed)
        run = wh__seg_claim_run(&h, 7, seed, WH_BITMAP_NONE);
    CHECK_EQ_U64(run, 5); /* pages 640 .. 767 */
    CHECK_EQ_U64(wh_bitmap_count_host(&h.pages), before + 1 - 128);
    CHECK(*wh_bitmap_word(&h.pages, 0, 10) == 0 && *wh_bitmap_word(&h.pages, 0, 11) == 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* A run that exists is found with any seed, however few its words among the
 * words with free pages: one whole aligned two-word run (words 200-201) and a
 * free page in every third word elsewhere, so that the random tries land in
 * the run only now and then and the scan of the summary must find it. */
static void test_claim_run_scan(void) {
    wh_heap h = make(WH_HEAP_DEFAULT, 1ull << 30); /* 16384 pages, 256 words */
    uint32_t words = h.npages / 64u;
    for (uint32_t w = 0; w < words; ++w) (void)take_pages(&h, w, w % 3u == 1u ? ~2ull : ~0ull);
    (void)give_pages(&h, 200, ~0ull);
    (void)give_pages(&h, 201, ~0ull);
    unsigned long long before = wh_bitmap_count_host(&h.pages);
    for (uint64_t seed = 0; seed < 256; ++seed) {
        uint32_t run = wh__seg_claim_run(&h, 7, wh_hash64(seed), WH_BITMAP_NONE);
        CHECK_EQ_U64(run, 100); /* pages 12800 .. 12927 */
        CHECK_EQ_U64(wh_bitmap_count_host(&h.pages), before - 128);
        (void)give_pages(&h, 200, ~0ull); /* back, for the next seed */
        (void)give_pages(&h, 201, ~0ull);
    }
    /* none whole: every seed finds none, and puts back what it took */
    (void)take_pages(&h, 201, 1ull << 9);
    for (uint64_t seed = 0; seed < 64; ++seed)
        CHECK(wh__seg_claim_run(&h, 7, wh_hash64(seed), WH_BITMAP_NONE) == WH_BITMAP_NONE);
    CHECK_EQ_U64(wh_bitmap_count_host(&h.pages), before - 1);
    for (uint32_t w = 0; w < words; ++w) (void)give_pages(&h, w, ~0ull);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* As above, but every other word has free pages too, so that the page
 * bitmap's summary cannot tell the run from the 127 partly free groups: the
 * whole-word summary (heap/page_whole.h) finds it with any seed, after
 * pages were taken and given back in every word.  A bit left over a word
 * taken from behind its back (stale) costs the searches a failed take and
 * nothing else: none finds a run, each puts back what it took; a take of a
 * page of that word clears the bit.  Once all is given back, the walk finds
 * every word with its bit. */
static void test_claim_run_whole(void) {
    wh_heap h = make(WH_HEAP_DEFAULT, 1ull << 30); /* 16384 pages, 256 words */
    uint32_t words = h.npages / 64u;
    for (uint32_t w = 0; w < words; ++w) CHECK(take_pages(&h, w, ~0ull) == ~0ull);
    for (uint32_t w = 0; w < words; ++w) (void)give_pages(&h, w, w == 200u || w == 201u ? ~0ull : 0xFF00ull);
    unsigned long long before = wh_bitmap_count_host(&h.pages);
    for (uint64_t seed = 0; seed < 256; ++seed) {
        uint32_t run = wh__seg_claim_run(&h, 7, wh_hash64(seed), WH_BITMAP_NONE);
        CHECK_EQ_U64(run, 100); /* pages 12800 .. 12927 */
        CHECK_EQ_U64(wh_bitmap_count_host(&h.pages), before - 128);
        CHECK_EQ_U64(h.page_whole[3] >> 8 & 3u, 0); /* words 200-201: taken */
        (void)give_pages(&h, 200, ~0ull);
        (void)give_pages(&h, 201, ~0ull);
        CHECK_EQ_U64(h.page_whole[3] >> 8 & 3u, 3u); /* given back: whole again */
    }
    /* a page of word 201 taken without its bit cleared: the bit is stale,
     * and no run is whole */
    CHECK(wh_bitmap_and_not_word(&h.pages, 201, 1ull << 9) == ~0ull);
    CHECK_EQ_U64(h.page_whole[3] >> 8 & 3u, 3u);
    for (uint64_t seed = 0; seed < 64; ++seed)
        CHECK(wh__seg_claim_run(&h, 7, wh_hash64(seed), WH_BITMAP_NONE) == WH_BITMAP_NONE);
    CHECK_EQ_U64(wh_bitmap_count_host(&h.pages), before - 1);
    CHECK(take_pages(&h, 201, 1ull << 10) == ~(1ull << 9)); /* a take clears it */
    CHECK_EQ_U64(h.page_whole[3] >> 8 & 3u, 1u);            /* word 200 whole, 201 not */
    (void)give_pages(&h, 201, 3ull << 9);
    CHECK_EQ_U64(h.page_whole[3] >> 8 & 3u, 3u);
    CHECK_EQ_U64(wh__seg_claim_run(&h, 7, 1, WH_BITMAP_NONE), 100);
    (void)give_pages(&h, 200, ~0ull);
    (void)give_pages(&h, 201, ~0ull);
    for (uint32_t w = 0; w < words; ++w) (void)give_pages(&h, w, ~0ull);
    check_walk(&h, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* The summary levels of the page bitmap learn of the words a segment's run
 * emptied only when the segment is installed (wh__seg_finish): after the
 * first allocations of classes whose segments span 2 and 8 words (two
 * chunks of the run's and-nots), the walk finds the bitmap consistent, and
 * again once they are freed. */
static void test_segment_summary(void) {
    wh_heap h = make(WH_HEAP_DEFAULT, 2ull << 30); /* 32768 pages */
    void *p[3] = {wh_malloc(&h, 16), wh_malloc(&h, 256), wh_malloc(&h, 4096)};
    CHECK(p[0] && p[1] && p[2]);
    CHECK(h.seg_shift[wh__slab_class_of(&h, 16)] >= 7u && h.seg_shift[wh__slab_class_of(&h, 256)] == 9u);
    check_walk(&h, 3);
    for (int k = 0; k < 3; ++k) wh_free(&h, p[k]);
    check_walk(&h, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* A page's last free racing a claim of one of its slots (the bitmap path):
 * the reclaim fails and keeps nothing -- every word it took goes back, with
 * the summary levels in agreement -- and once the slot's bit is back, the
 * page goes to the pool.  16 B: 64 words a page, the missing bit in the
 * middle of a chunk, so words on both sides of it in that chunk were taken;
 * 1 KiB: one word of its own; 4 KiB: pages share a word. */
/* Page p made active in class c by hand, its count zero, its slots free in
 * the class bitmap but slot `miss`, which a claim in flight holds; the
 * slot's bit. */
static uint64_t page_with_claim(wh_heap *h, uint32_t c, uint32_t p, uint32_t miss) {
    uint32_t w0 = wh__slab_page_word(h, c, p), nw = wh__slab_page_words(h, c);
    wh_bitmap bm = wh__slab_bitmap(h, c);
    CHECK(wh_bitmap_try_clear(&h->pages, p));
    h->page_info[p] = WH_PAGE_SLAB(c, 0);
    for (uint32_t k = 0; k < nw; ++k) (void)wh_bitmap_or_word(&bm, w0 + k, wh__slab_word_mask(h, c, p, k));
    uint64_t b = ((uint64_t)p << wh__slab_lbpp(c)) + miss;
    CHECK(wh_bitmap_try_clear(&bm, (uint32_t)b));
    return b;
}

/* Page p back in the pool, none of its bits left in class c's bitmap, the
 * summary levels in agreement, the walk sound. */
static void check_page_back(const wh_heap *h, uint32_t c, uint32_t p) {
    wh_bitmap bm = wh__slab_bitmap(h, c);
    uint32_t w0 = wh__slab_page_word(h, c, p), nw = wh__slab_page_words(h, c);
    CHECK(h->page_info[p] == WH_PAGE_FREE && wh_bitmap_get(&h->pages, p));
    for (uint32_t k = 0; k < nw; ++k) CHECK_EQ_U64(*wh__slab_word(h, c, w0 + k) & wh__slab_word_mask(h, c, p, k), 0);
    CHECK_EQ_U64(wh_bitmap_check_host(&bm), 0);
    check_walk(h, 0);
}

static void test_reclaim_in_flight(void) {
    static const uint32_t sizes[] = {16, 1024, 4096};
    for (uint32_t chunk = 1; chunk <= WH__RUN_CHUNK; chunk += WH__RUN_CHUNK - 1u)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
            wh_heap h = make(WH_HEAP_DEFAULT, 64ull << 20);
            uint32_t c = wh__slab_class(sizes[i]), p = h.npages - 1u, spp = wh__slab_spp(c);
            uint32_t w0 = wh__slab_page_word(&h, c, p), nw = wh__slab_page_words(&h, c), miss = spp * 13u / 25u;
            wh_bitmap bm = wh__slab_bitmap(&h, c);
            uint64_t b = page_with_claim(&h, c, p, miss), before[64];
            for (uint32_t k = 0; k < nw; ++k) before[k] = *wh__slab_word(&h, c, w0 + k);
            CHECK(!wh__slab_reclaim(&h, c, p, chunk));
            for (uint32_t k = 0; k < nw; ++k) CHECK_EQ_U64(*wh__slab_word(&h, c, w0 + k), before[k]);
            CHECK_EQ_U64(wh_bitmap_check_host(&bm), 0);
            CHECK(h.page_info[p] == WH_PAGE_SLAB(c, 0) && !wh_bitmap_get(&h.pages, p));
            CHECK(wh_bitmap_try_set(&bm, (uint32_t)b)); /* freed: the page's last slot */
            CHECK(wh__slab_reclaim(&h, c, p, chunk));
            for (uint32_t k = 0; k < nw; ++k)
                CHECK_EQ_U64(*wh__slab_word(&h, c, w0 + k) & wh__slab_word_mask(&h, c, p, k), 0);
            CHECK_EQ_U64(wh_bitmap_check_host(&bm), 0);
            CHECK(h.page_info[p] == WH_PAGE_FREE && wh_bitmap_get(&h.pages, p));
            check_walk(&h, 0);
            CHECK(wh_heap_destroy(&h) == WH_OK);
        }
}

/* The race that test_reclaim_in_flight stops before: the claim in flight
 * counts its slot after the page's count reached zero, and its free comes
 * while the reclaim (the page's previous last free) holds the page's other
 * bits -- that free's own take finds them gone and leaves the page.  The
 * reclaim must then find the page empty and take it: a page kept by its
 * class with every slot free is lost to the other classes and to page
 * runs. */
static struct {
    wh_heap *h;
    uint32_t c, p, slot;
    bool armed;
} lost;
static void reclaim_lost(const void *hv, uint32_t c, uint32_t p) {
    if (!lost.armed || hv != lost.h || c != lost.c || p != lost.p) return;
    lost.armed = false; /* the free's own lost take comes here too */
    uint64_t b = ((uint64_t)p << wh__slab_lbpp(c)) + lost.slot;
    wh__slab_used_add(lost.h, c, (uint32_t)(b >> 6), 1ull << (b & 63u)); /* the claim counts its slot */
    wh_free(lost.h, lost.h->base + (uint64_t)p * WH_SLAB_PAGE + (uint64_t)lost.slot * wh__slab_size(c));
}
static void test_reclaim_lost_free(void) {
    static const uint32_t sizes[] = {16, 1024, 4096};
    for (uint32_t chunk = 1; chunk <= WH__RUN_CHUNK; chunk += WH__RUN_CHUNK - 1u)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
            wh_heap h;
            wh_heap_config cfg = {.bytes = 64ull << 20, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST};
            CHECK(wh_heap_create(&h, &cfg) == WH_OK);
            uint32_t c = wh__slab_class(sizes[i]), p = h.npages - 1u, miss = wh__slab_spp(c) * 13u / 25u;
            (void)page_with_claim(&h, c, p, miss);
            lost.h = &h, lost.c = c, lost.p = p, lost.slot = miss, lost.armed = true;
            bool back = wh__slab_reclaim(&h, c, p, chunk);
            if (!back)
                printf("reclaim   %u B, chunk %u: the page stays in its class, every slot free\n", sizes[i], chunk);
            CHECK(!lost.armed); /* the race ran */
            CHECK(back);
            check_page_back(&h, c, p);
            CHECK(wh_heap_destroy(&h) == WH_OK);
        }
}

/* Page p of class c stranded: a reclaim's second try misses a bit with the
 * page's count at zero, then the bit comes. */
static void strand_page(wh_heap *h, uint32_t c, uint32_t p) {
    wh_bitmap bm = wh__slab_bitmap(h, c);
    uint64_t b = page_with_claim(h, c, p, wh__slab_spp(c) / 3u);
    CHECK(!wh__slab_reclaim(h, c, p, WH__RUN_CHUNK)); /* count zero, a bit missing */
    CHECK(wh_bitmap_try_set(&bm, (uint32_t)b));       /* the bit it missed */
    CHECK(h->page_info[p] == WH_PAGE_SLAB(c, 0) && !wh_bitmap_get(&h->pages, p));
}

/* A reclaim whose second try misses a bit with the page's count at zero --
 * the bit comes a moment later: a claim's slot freed at once, or on the GPU
 * a free's or reaching its word after its subtraction reached the count --
 * leaves the page with its class, every slot free.  It must not stay there:
 * wh_heap_trim gives it back, and so does an allocation that finds the page
 * pool dry (here a page-sized one, which gets every page of the heap), in a
 * heap with bump segments and in one too small for them. */
static void test_reclaim_stranded(void) {
    static const uint32_t sizes[] = {16, 1024, 4096};
    for (int k = 0; k < 4; ++k)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
            bool dry = k & 1, small = k & 2; /* small: no bump segments */
            wh_heap h = make(WH_HEAP_DEFAULT, small ? 512ull << 10 : 16ull << 20);
            CHECK((h.slab_segs == 0) == small);
            uint32_t c = wh__slab_class(sizes[i]), p = h.npages - 1u;
            strand_page(&h, c, p);
            check_walk(&h, 0);
            uint32_t got = 0;
            if (dry) {
                static void *ptrs[1024];
                while (got < 1024u && (ptrs[got] = wh_malloc(&h, WH_SLAB_PAGE)) != NULL) ++got;
                printf("stranded  %4u B: %u page-sized allocations of %u pages\n", sizes[i], got, h.npages);
                CHECK_EQ_U64(got, h.npages);
                for (uint32_t j = 0; j < got; ++j) wh_free(&h, ptrs[j]);
            } else {
                CHECK(wh_heap_trim(&h) == WH_OK);
            }
            check_page_back(&h, c, p);
            CHECK(wh_heap_destroy(&h) == WH_OK);
        }
}

/* A double free gives no page back, even where its count says the page is
 * empty: on the GPU other double frees of the page may be on their way,
 * and an or of theirs landing after the reclaim would set a bit of a page
 * in the pool (double frees then went unseen and the walk found the page's
 * bits inconsistent).  A stranded page -- count zero, every bit set --
 * double-freed stays stranded; trim gives it back. */
static void test_double_free_strands(void) {
    static const uint32_t sizes[] = {16, 1024, 4096};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
        wh_heap h = make(WH_HEAP_DEFAULT, 16ull << 20);
        uint32_t c = wh__slab_class(sizes[i]), p = h.npages - 1u;
        strand_page(&h, c, p);
        wh_free(&h, h.base + (uint64_t)p * WH_SLAB_PAGE + (uint64_t)(wh__slab_spp(c) / 2u) * wh__slab_size(c));
        wh_heap_usage s;
        CHECK(wh_heap_stats(&h, &s) == WH_OK);
        CHECK_EQ_U64(s.double_frees, 1);
        CHECK(h.page_info[p] == WH_PAGE_SLAB(c, 0) && !wh_bitmap_get(&h.pages, p));
        CHECK_EQ_U64(s.inconsistencies, 0);
        CHECK(wh_heap_trim(&h) == WH_OK);
        check_page_back(&h, c, p);
        CHECK(wh_heap_destroy(&h) == WH_OK);
    }
}

/* A take-back of a segment whose handed-out slots were all freed empties
 * its first page, whose other slots it never handed out: the publish
 * strands that page, and the sweep that ends the take-back (here
 * wh_heap_trim's) gives it back with the segment's untouched pages. */
static void test_take_back_emptied(void) {
    static const uint32_t sizes[] = {16, 1024, 4096};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
        wh_heap h = make(WH_HEAP_DEFAULT, 16ull << 20);
        uint32_t c = wh__slab_class_of(&h, sizes[i]);
        CHECK(wh__seg_on(&h, c));
        void *p[8];
        for (int k = 0; k < 8; ++k) CHECK((p[k] = wh_malloc(&h, sizes[i])) != NULL);
        uint32_t page = (uint32_t)(((uint8_t *)p[0] - h.base) >> WH_SLAB_PAGE_SHIFT);
        for (int k = 0; k < 8; ++k) wh_free(&h, p[k]);
        CHECK(h.page_info[page] == WH_PAGE_SLAB(c, 0)); /* the segment holds it */
        CHECK(wh_heap_trim(&h) == WH_OK);
        check_page_back(&h, c, page);
        wh_heap_usage s;
        CHECK(wh_heap_stats(&h, &s) == WH_OK);
        CHECK_EQ_U64(s.free_bytes, (uint64_t)h.npages * WH_SLAB_PAGE);
        CHECK(wh_heap_destroy(&h) == WH_OK);
    }
}

/* The fast path's per-class constants (heap/core.h) and the segment form
 * of a leader's result (heap/slab.h: wh__got_seg, wh__got_slot): the
 * reciprocal divisions are exact for every position below 2^20 and every
 * offset in a page; segment codes name their runs; and every slot of a
 * group -- across a page boundary and into the next segment, of another
 * size -- is the one that page = p0 + q / spp, slot = q % spp names. */
static void test_class_constants(uint64_t bytes) {
    wh_heap h = make(WH_HEAP_DEFAULT, bytes);
    uint64_t bad = 0, checked = 0;
    for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) {
        uint32_t spp = wh__slab_spp(c), shift = h.seg_shift[c], size = wh__slab_size(c);
        CHECK_EQ_U64(wh__slab_spp_of(&h, c), spp);
        for (uint32_t q = 0; q < WH_SLAB_PAGE; ++q) bad += wh__slab_slot_of(&h, c, q) != q / size;
        wh_bitmap bm = wh__slab_bitmap(&h, c);
        CHECK(h.slot_words + h.slot_top[c] == wh_bitmap_word(&bm, bm.levels - 1u, 0));
        if (!wh__seg_class(c, 2u)) continue;
        for (uint32_t q = 0; q < (1u << 20); ++q) bad += wh__slab_spp_div(&h, c, q) != q / spp;
        for (uint32_t k = 0; k < 2000u; ++k) {
            uint64_t x = wh_hash64(c * 7919u + k), y = wh_hash64(x);
            /* two segments of any size up to the class's largest */
            uint32_t k1 = (uint32_t)(y % (shift + 1u)), k2 = (uint32_t)((y >> 8) % (shift + 1u));
            uint32_t p1 = (uint32_t)(x % (h.npages >> k1)) << k1, p2 = (uint32_t)((x >> 20) % (h.npages >> k2)) << k2;
            uint32_t code = (uint32_t)wh__seg_code(p1, k1), code2 = (uint32_t)wh__seg_code(p2, k2);
            CHECK(wh__seg_p0(code) == p1 && wh__seg_pages(code) == 1ull << k1 && code < (1u << 21));
            CHECK(wh__seg_p0(code2) == p2 && wh__seg_cap(&h, c, code2) == (uint64_t)spp << k2);
            uint32_t cap = spp << k1, cap2 = spp << k2;
            uint32_t most = cap < 32u ? cap : 32u; /* a segment may hold 16 */
            uint32_t n1 = 1u + (uint32_t)(x >> 40) % most, n2 = (uint32_t)(x >> 50) % (most + 1u - n1);
            if (n2 > cap2) n2 = cap2;
            /* near a page's end half of the time, so that the group crosses it */
            uint32_t q = (uint32_t)((x >> 8) % cap);
            if (k & 1u) {
                uint32_t end = (q / spp + 1u) * spp, back = 1u + (uint32_t)(x >> 56) % 32u;
                q = end > back ? end - back : 0u; /* spp may be 16 (tiled classes) */
            }
            if (q + n1 > cap) q = cap - n1;
            wh__slab_got g = wh__got_seg(&h, c, code, q, n1, code2, n2);
            CHECK_EQ_U64(wh__got_count(&g), n1 + n2);
            for (uint32_t r = 0; r < n1 + n2; ++r) {
                uint32_t pp = r < n1 ? p1 : p2, qq = r < n1 ? q + r : r - n1;
                uint8_t *want = h.base + ((uint64_t)pp + qq / spp) * WH_SLAB_PAGE + (uint64_t)(qq % spp) * size;
                bad += (uint8_t *)wh__got_slot(&h, c, &g, r) != want;
                checked++;
            }
        }
    }
    CHECK_EQ_U64(bad, 0);
    CHECK(checked > 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* The class table (heap/classes.h): sizes multiples of 16, rising; every
 * request of 1 B .. 64 KiB gets the smallest class that holds it, in a heap
 * of all classes, and the smallest power of two in a small heap; from 1 to
 * 4 KiB class c holds 95 - c slots a page, the largest of 16 bytes' multiples
 * that fit, with a tail under 16 bytes a slot. */
static void test_class_table(void) {
    wh_heap fine = make(WH_HEAP_DEFAULT, 256ull << 20), coarse = make(WH_HEAP_DEFAULT, 1ull << 20);
    CHECK(fine.slab_fine && !coarse.slab_fine);
    CHECK_EQ_U64(wh__slab_size(WH_SLAB_CLASSES - 1u), WH_SLAB_MAX);
    for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) {
        uint32_t size = wh__slab_size(c), spp = wh__slab_spp(c);
        CHECK(size % 16u == 0 && (c == 0 || size > wh__slab_size(c - 1u)));
        if (size > 1024u && size <= 4096u)
            CHECK(spp == WH__SLAB_SPP_END - c && WH_SLAB_PAGE - spp * size < 16u * spp &&
                  (size + 16u) * spp > WH_SLAB_PAGE);
    }
    uint64_t bad = 0;
    for (uint32_t n = 1; n <= WH_SLAB_MAX; ++n) {
        uint32_t c = wh__slab_class(n), p = wh__slab_class_of(&coarse, n), pow2 = 16u;
        while (pow2 < n) pow2 *= 2u;
        bad += wh__slab_class_of(&fine, n) != c || wh__slab_size(c) < n || (c && wh__slab_size(c - 1u) >= n);
        bad += wh__slab_size(p) != pow2;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK(wh_heap_destroy(&fine) == WH_OK && wh_heap_destroy(&coarse) == WH_OK);
}

/* A free of an address inside a slot (16-byte aligned, not its start) is
 * foreign in every class -- the slot's start is found without its size --
 * and loses nothing: the slot is freed afterwards as usual. */
static void test_free_inside_slot(void) {
    wh_heap h = make(WH_HEAP_SLAB, 256ull << 20);
    uint64_t foreign = 0;
    for (uint32_t c = 1; c < WH_SLAB_CLASSES; ++c) {
        uint32_t size = wh__slab_size(c);
        uint8_t *p = (uint8_t *)wh_malloc(&h, size);
        CHECK(p != NULL);
        if (!p) continue;
        wh_free(&h, p + 16), wh_free(&h, p + size - 16u);
        foreign += 2u;
        wh_heap_usage s;
        CHECK(wh_heap_stats(&h, &s) == WH_OK);
        CHECK_EQ_U64(s.foreign_frees, foreign);
        CHECK_EQ_U64(s.allocations, 1);
        wh_free(&h, p);
        check_walk(&h, 0);
    }
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* Which classes hand out bump segments: none below WH__SEG_MIN_PAGES pages,
 * the tiled ones (1-4 KiB powers of two) only from WH__SEG_TILED_MIN_PAGES
 * (they held half of a 24-page heap), the others from the first. */
static void test_segment_classes(void) {
    static const struct {
        uint64_t pages;
        uint32_t segs;
    } cases[] = {{WH__SEG_MIN_PAGES - 1u, 0u},
                 {WH__SEG_MIN_PAGES, 1u},
                 {WH__SEG_TILED_MIN_PAGES - 1u, 1u},
                 {WH__SEG_TILED_MIN_PAGES, 2u}};
    for (unsigned k = 0; k < sizeof cases / sizeof *cases; ++k) {
        wh_heap h = make(WH_HEAP_DEFAULT, cases[k].pages * WH_SLAB_PAGE);
        CHECK_EQ_U64(h.slab_segs, cases[k].segs);
        for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) {
            uint32_t size = wh__slab_size(c);
            bool small = size <= WH_SLAB_PAGE / WH__SEG_MIN_SPP;
            bool tiled = size <= WH__SEG_MAX_TILED && !(size & (size - 1u));
            bool want = cases[k].segs && (small || (cases[k].segs == 2u && tiled));
            CHECK(wh__seg_on(&h, c) == want);
        }
        CHECK(wh_heap_destroy(&h) == WH_OK);
    }
}

/* A caller built with heap values other than the library's is refused with
 * a message naming the value; the library still creates heaps for callers
 * that agree. */
static void test_build_record(void) {
    wh_heap h;
    wh_heap_config cfg = {.bytes = 1u << 20, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST};
    wh_heap_build ours = WH__HEAP_BUILD, other = ours;
    other.seg_max_tiled = 2048u;
    CHECK(wh_heap_create_built(&h, &cfg, &other) == WH_ERR_UNSUPPORTED);
    CHECK(strstr(wh_last_error(), "WH__SEG_MAX_TILED = 2048") != NULL);
    CHECK(h.ctl == NULL); /* a zeroed handle: wh_malloc returns NULL */
    other = ours;
    other.heap_size += 8u;
    CHECK(wh_heap_create_built(&h, &cfg, &other) == WH_ERR_UNSUPPORTED);
    CHECK(strstr(wh_last_error(), "sizeof(wh_heap)") != NULL);
    CHECK(wh_heap_create_built(&h, &cfg, NULL) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_heap_create_built(&h, &cfg, &ours) == WH_OK);
    CHECK(wh_malloc(&h, 64) != NULL);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* The options of heap/config.h as this file was built with them (CI builds
 * it twice: test_heap with the defaults, test_heap_options with others):
 * requests up to WH_DEFAULT_SLAB_MAX take a slab slot, larger ones a page
 * run; with WH_HEAP_PROFILE the slab paths count their events. */
static void test_options(void) {
    wh_heap h = make(WH_HEAP_DEFAULT, 32u << 20);
    void *slot = wh_malloc(&h, WH_DEFAULT_SLAB_MAX), *run = wh_malloc(&h, WH_DEFAULT_SLAB_MAX + 16u);
    CHECK(slot != NULL && run != NULL);
    uint32_t slot_info = h.page_info[((uint8_t *)slot - h.base) >> WH_SLAB_PAGE_SHIFT];
    uint32_t run_info = h.page_info[((uint8_t *)run - h.base) >> WH_SLAB_PAGE_SHIFT];
    CHECK(WH_PAGE_CLASS(slot_info) < WH_SLAB_CLASSES && !(slot_info & WH_PAGE_RUN_HEAD));
    CHECK(run_info & WH_PAGE_RUN_HEAD);
    static void *small[1000];
    for (int k = 0; k < 1000; ++k) CHECK((small[k] = wh_malloc(&h, 48)) != NULL);
#ifdef WH_HEAP_PROFILE
    CHECK(h.ctl->prof[WH_PROF_SEG_CALLS] > 0);
#else
    CHECK_EQ_U64(h.ctl->prof[WH_PROF_SEG_CALLS], 0);
#endif
    wh_free(&h, slot);
    wh_free(&h, run);
    check_walk(&h, 1000);
    for (int k = 0; k < 1000; ++k) wh_free(&h, small[k]);
    check_walk(&h, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* The activation gate (heap/slab_bitmap.h), one leader on the 3840-B class
 * (17 slots a page, which do not tile it: no segments, the bitmap path),
 * with the class's gate word set as other leaders would hold it, and the
 * slack of a GPU heap (a heap in host memory has none).  One activation in
 * flight beyond the slack and no other demand hold the leader back for
 * every look before it activates anyway; the slack alone does not; nor
 * does one in flight that covers less than the waiting leaders want on a
 * heap without slack; with nothing in flight it activates at once.  The
 * word is back where it was after each (profile builds count the held
 * looks). */
static void test_gate_by_demand(void) {
    wh_heap d;
    size_t arena;
    wh_heap_config dc = {.bytes = 1ull << 30, .kind = WH_HEAP_DEFAULT}, hc = dc;
    hc.flags = WH_HEAP_HOST;
    CHECK(wh__heap_plan(&d, &dc, &arena) == WH_OK);
    CHECK_EQ_U64(d.gate_slack, WH_HAVE_CUDA ? d.npages >> WH__SLAB_GATE_SHIFT : 0u);
    CHECK(d.npages >> WH__SLAB_GATE_SHIFT >= 2u);
    CHECK(wh__heap_plan(&d, &hc, &arena) == WH_OK);
    CHECK_EQ_U64(d.gate_slack, 0);
    for (int k = 0; k < 4; ++k) {
        wh_heap h = make(WH_HEAP_DEFAULT, k == 2 ? 16ull << 20 : 1ull << 30); /* 256 pages: the fine classes */
        uint32_t c = wh__slab_class_of(&h, 3840), slack = k == 2 ? 0u : 4u;
        CHECK(!wh__seg_on(&h, c) && wh__slab_spp_of(&h, c) == 17u);
        h.gate_slack = ((wh_heap *)h.dev)->gate_slack = slack; /* the rare paths read the metadata's copy */
        /* one beyond the slack in flight, the slack, one and 100 slots wanted, none */
        uint64_t word = k == 0 ? slack + 1u : k == 1 ? slack : k == 2 ? 100ull << 32 | 1ull : 0ull;
        h.ctl->activating[c] = word;
        void *p = wh_malloc(&h, 3840);
        CHECK(p != NULL);
        CHECK_EQ_U64(h.ctl->activating[c], word);
#ifdef WH_HEAP_PROFILE
        CHECK_EQ_U64(h.ctl->prof[WH_PROF_ACTIVATIONS], 1);
        CHECK_EQ_U64(h.ctl->prof[WH_PROF_GATED], k == 0 ? WH__SLAB_GATE_TRIES : 0);
#endif
        h.ctl->activating[c] = 0;
        check_walk(&h, 1);
        wh_free(&h, p);
        check_walk(&h, 0);
        CHECK(wh_heap_destroy(&h) == WH_OK);
    }
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Device heap, one thread on the CPU backend.");
    test_class_table();
    test_free_inside_slot();
    test_segment_classes();
    test_reclaim_in_flight();
    test_reclaim_lost_free();
    test_reclaim_stranded();
    test_double_free_strands();
    test_take_back_emptied();
    test_class_constants(1ull << 20);
    test_class_constants(256ull << 20);
    test_claim_run();
    test_claim_run_scan();
    test_claim_run_whole();
    test_seg_next_run();
    test_seg_share();
    test_seg_share_mixed();
    test_gate_by_demand();
    test_segment_summary();
    test_wrap();
    test_create_errors();
    test_default_ways();
    test_build_record();
    test_options();
    for (unsigned k = 0; k < sizeof kinds / sizeof *kinds; ++k) {
        test_bad_calls(kinds[k]);
        test_exhaustion(kinds[k], 64);
        test_exhaustion(kinds[k], 1000);
        /* SLAB serves up to 64 KiB; MULTI up to a segment (here 64 KiB) */
        if (kinds[k] != WH_HEAP_SLAB && !wh__circ_multi(kinds[k])) test_exhaustion(kinds[k], 100000);
    }
    test_seg_backoff();
    test_seg_backoff_pool_grew();
    test_seg_hop();
    test_mixed_fill(WH_HEAP_DEFAULT);
    test_mixed_fill(WH_HEAP_SLAB);
    test_reuse_when_dry(WH_HEAP_DEFAULT, 64);
    test_reuse_when_dry(WH_HEAP_DEFAULT, 48);
    test_reuse_when_dry(WH_HEAP_SLAB, 256);
    test_up_class(WH_HEAP_DEFAULT);
    test_up_class(WH_HEAP_SLAB);
    test_dry_takes_back(WH_HEAP_DEFAULT, 256);
    test_dry_takes_back(WH_HEAP_DEFAULT, 4096);
    test_dry_takes_back(WH_HEAP_SLAB, 1024);
    test_fragmentation();
    test_circ_gone(WH_HEAP_CIRCULAR);
    test_circ_gone(WH_HEAP_CIRCULAR_FUSED);
    test_circ_stale_walker(WH_HEAP_CIRCULAR);
    test_circ_stale_walker(WH_HEAP_CIRCULAR_MULTI);
    test_circ_stale_walker(WH_HEAP_CIRCULAR_FUSED);
    test_circ_stale_walker(WH_HEAP_CIRCULAR_FUSED_MULTI);
    test_circ_merge_cursor(WH_HEAP_CIRCULAR);
    test_circ_merge_cursor(WH_HEAP_CIRCULAR_FUSED);
    {
        static const wh_heap_kind circ[] = {WH_HEAP_CIRCULAR, WH_HEAP_CIRCULAR_MULTI, WH_HEAP_CIRCULAR_FUSED,
                                            WH_HEAP_CIRCULAR_FUSED_MULTI};
        static const size_t sizes[] = {64, 240, 1000, 4000};
        for (unsigned k = 0; k < 4; ++k)
            for (unsigned z = 0; z < 4; ++z) test_circ_fill(circ[k], 16u << 20, 0, sizes[z]);
        /* sub-heaps of more chunks than a walk visits (WH_HEAP_RETRY_LIMIT) */
        test_circ_fill(WH_HEAP_CIRCULAR_MULTI, 16u << 20, 2, 64);
        test_circ_fill(WH_HEAP_CIRCULAR_FUSED_MULTI, 16u << 20, 2, 64);
    }
    return wh_test_finish("test_heap");
}
