/* SPDX-License-Identifier: MIT */
/* Device heap: the types and helpers every allocator kind shares.
 *
 * A wh_heap is a descriptor passed by value to kernels (like a texture
 * object): pointers to the arena and to the metadata, sizes, and the layout of
 * the slab bitmaps.  Every kind lives in its own header (heap/bump.h,
 * heap/slab.h, heap/circular.h, ...) and is dispatched by heap.h.
 *
 * Warp coalescing (XMalloc, as used by DynaSOAr section 4.2): wh_malloc takes
 * the mask of lanes present at its entry, groups them by a key with
 * wh_match_any64 and lets the lowest lane of each group reserve for all of it.
 * Every lane of the mask reaches the match (no early return before it), so
 * the mask is safe under independent thread scheduling.
 */
#ifndef WARPHEAP_HEAP_CORE_H
#define WARPHEAP_HEAP_CORE_H

#include "warpheap/bitmap.h"

typedef enum wh_heap_kind {
    WH_HEAP_DEFAULT = 0,          /* slabs for <= 32 KiB, page runs above      */
    WH_HEAP_BUMP,                 /* AtomicMalloc: one atomic, no free          */
    WH_HEAP_WRAP,                 /* AWMalloc: BUMP that wraps; no free         */
    WH_HEAP_CIRCULAR,             /* CMalloc                                    */
    WH_HEAP_CIRCULAR_FUSED,       /* CFMalloc: flag fused into the next word    */
    WH_HEAP_CIRCULAR_MULTI,       /* CMMalloc: one cursor and sub-heap per SM   */
    WH_HEAP_CIRCULAR_FUSED_MULTI, /* CFMMalloc: FUSED with a cursor per SM      */
    WH_HEAP_SLAB,                 /* size classes on hierarchical bitmaps       */
    WH_HEAP_KIND_COUNT
} wh_heap_kind;

/* wh_heap_config.flags */
#define WH_HEAP_HOST     1u  /* arena and metadata in host memory (CPU backend)   */
#define WH_HEAP_TRACK    2u  /* count bytes in use live, and their peak           */
#define WH_CURSOR_STRIDE 16u /* uint64 words between two cursors: own line     */

#define WH_HEAP_ALIGN       16u
#define WH_SLAB_PAGE_SHIFT  16u /* 64 KiB pages               */
#define WH_SLAB_PAGE        (1u << WH_SLAB_PAGE_SHIFT)
/* Slab classes (wh__slab_size): 16 .. 128 B in steps of 16 (c = 0..7), eight
 * steps per doubling from 128 B to 4 KiB (c = 8..47: 144, 160, .., 256, 288,
 * .., 4096; the waste of a request is at most 1/8 of its slot, where powers
 * of two waste up to half and a quarter on average), then 8, 16, 32 and
 * 64 KiB (c = 48..51: one page holds 8 .. 1 slots, so finer steps would only
 * leave the rest of the page empty). */
#define WH_SLAB_CLASSES     52u
#define WH_SLAB_MAX         (64u << 10)  /* 64 KiB                     */
#define WH_HEAP_MAX_BYTES   (1ull << 36) /* 64 GiB: 32-bit 16-B units  */
/* Bound on the retry loops of the heap (visits, claims).  Reaching it means
 * the heap is (nearly) exhausted or fragmented: the call fails and is counted. */
#define WH_HEAP_RETRY_LIMIT (1u << 16)

/* Ways of a slab class: independent bump-segment states, each on its own
 * line, a warp using the one of its SM (heap/slab.h: wh__seg_way). */
#define WH_SEG_WAYS_MAX 8u

/* page_info values: free, a page run's head or tail, or a slab page of class
 * c whose bump segment (if any) belongs to way w: w << 8 | (c + 1). */
#define WH_PAGE_FREE        0u
#define WH_PAGE_RUN_HEAD    0x80000000u /* | number of pages                  */
#define WH_PAGE_RUN_TAIL    0x40000000u
#define WH_PAGE_SLAB(c, w)  ((uint32_t)(w) << 8 | ((uint32_t)(c) + 1u))
#define WH_PAGE_CLASS(info) (((info)&0xFFu) - 1u) /* >= WH_SLAB_CLASSES: none */
#define WH_PAGE_WAY(info)   ((info) >> 8)

/* wh_heap_ctl.prof indices (WH_HEAP_PROFILE builds) */
enum {
    WH_PROF_SEG_CALLS,      /* leader calls of the bump-segment path          */
    WH_PROF_SEG_EMPTY,      /* its looks that found nothing to hand out       */
    WH_PROF_SEG_FALLBACK,   /* calls that gave up: bitmap path                */
    WH_PROF_PREP_LOCKED,    /* segment preparations that held the class flag  */
    WH_PROF_PREP_NONE,      /* ... that found no aligned run of free pages    */
    WH_PROF_PREP_CYCLES,    /* leaders' clock cycles setting up, installing   */
    WH_PROF_ORPHANS,        /* positions published as orphans                 */
    WH_PROF_FREED_CLAIMS,   /* claims of freed slots (class bitmap)           */
    WH_PROF_ACTIVATIONS,    /* pages activated on the bitmap path             */
    WH_PROF_TAKE_CALLS,     /* bitmap-path calls (wh__slab_take)              */
    WH_PROF_BEGIN_CYCLES,   /* preparers' cycles taking the flag and the run  */
    WH_PROF_SETUP_CYCLES,   /* ... setting up the pages (group, to its barrier) */
    WH_PROF_INSTALL_CYCLES, /* ... fence, install, flag back                  */
    WH_PROF_SPAN_CYCLES,    /* ... the page bitmap's summary after it         */
    WH_PROF_LEADER_CYCLES,  /* leaders' cycles getting slots (all their looks) */
    WH_PROF_RETIRE_ALL,     /* take-backs of every class's segments (pool dry) */
    WH_PROF_BACKOFF,        /* requests sent to the bitmap path by a back-off  */
    WH_PROF_COUNT
};
/* Their names, in order (the benches print them). */
#define WH_PROF_NAMES                                                                                      \
    {                                                                                                      \
        "seg_calls", "seg_empty", "seg_fallback", "prep_locked", "prep_none", "prep_cycles", "orphans",    \
            "freed_claims", "activations", "take_calls", "begin_cycles", "setup_cycles", "install_cycles", \
            "span_cycles", "leader_cycles", "retire_all", "backoff"                                        \
    }

/* Counters in device (or host) memory.  The cursor sits on its own 128-byte
 * line: it is the hot word of BUMP and CIRCULAR. */
typedef struct wh_heap_ctl {
    uint64_t cursor; /* bump offset / circular unit      */
    uint64_t pad0[15];
    uint64_t failed; /* failed allocations               */
    uint64_t double_frees;
    uint64_t foreign_frees;
    uint64_t in_use; /* bytes in use (WH_HEAP_TRACK)     */
    uint64_t peak;
    uint32_t activating[64]; /* slab: page activations in flight */
    /* slab: a next segment in preparation, per class and way */
    uint32_t seg_prep[WH_SLAB_CLASSES * WH_SEG_WAYS_MAX];
    /* slab: a back-off after a failed preparation, per class and way:
     * consecutive failures << 16 | requests left to skip (heap/slab.h) */
    uint32_t seg_skip[WH_SLAB_CLASSES * WH_SEG_WAYS_MAX];
    uint64_t pad1[11]; /* seg starts on a 128-byte line */
    /* slab bump segments, one state word per class and way on its own
     * 128-byte line: the hot words of a fresh class (heap/slab.h) */
    uint64_t seg[WH_SLAB_CLASSES * WH_SEG_WAYS_MAX * WH_CURSOR_STRIDE];
    /* event counters of the slab paths, counted only in code built with
     * WH_HEAP_PROFILE (bench/heap: wh_heap_bench_prof); indices WH_PROF_* */
    uint64_t prof[WH_PROF_COUNT];
} wh_heap_ctl;

#ifdef WH_HEAP_PROFILE
#define WH__PROF(h, i, n) ((void)wh_atomic_fetch_add(&(h)->ctl->prof[i], (uint64_t)(n), WH_RELAXED))
#else
#define WH__PROF(h, i, n) ((void)0)
#endif
/* WH__PROF_T(t): a clock stamp for WH__PROF's cycle counters; nothing (no
 * clock read, no variable) in other builds. */
#if WH_ON_GPU && defined(WH_HEAP_PROFILE)
#define WH__PROF_CLOCK() clock64()
#else
#define WH__PROF_CLOCK() 0ll
#endif
#ifdef WH_HEAP_PROFILE
#define WH__PROF_T(t) long long t = WH__PROF_CLOCK()
#else
#define WH__PROF_T(t) ((void)0)
#endif

typedef struct wh_heap {
    uint8_t *base;  /* arena: 64 KiB aligned                            */
    uint64_t bytes; /* arena bytes the kind hands out                   */
    wh_heap_ctl *ctl;
    uint32_t kind, flags;
    /* slab and default */
    uint32_t npages;
    uint8_t seg_shift[WH_SLAB_CLASSES]; /* class c's bump segments: 2^shift pages */
    uint32_t seg_ways;                  /* ways per class: 1 .. WH_SEG_WAYS_MAX, power of 2 */
    uint32_t slab_fine;                 /* all 52 classes (16 MiB and up)                   */
    /* bump segments (heap/slab.h, wh__seg_class): 0 none; 1 from
     * WH_SEG_MIN_PAGES pages; 2, the tiled classes too, from
     * WH_SEG_TILED_MIN_PAGES */
    uint32_t slab_segs;
    uint32_t *page_info; /* WH_PAGE_FREE, class + 1, or run head / tail      */
    uint32_t *page_used; /* live slots of a slab page (reclaim at zero)      */
    uint64_t *page_req;  /* requested bytes of a page run                    */
    wh_bitmap pages;     /* 1 = page free                                    */
    /* class c's slot bitmap (1 = slot free in an active page): words at
     * slot_words + slot_off[c], npages << wh__slab_lbpp(c) bits (see
     * wh__slab_bitmap: a descriptor per class would make this struct, passed
     * by value to every kernel, 2 KB) */
    uint64_t *slot_words;
    uint32_t slot_off[WH_SLAB_CLASSES];
    /* class c's constants for the fast path (heap/slab.h: wh__slab_get),
     * so that it makes no bitmap descriptor and divides nothing: its
     * bitmap's top word (an index into slot_words), the slots of one of its
     * bump segments (spp << seg_shift[c]), and ceil(2^32 / spp), with
     * which q / spp = mulhi(q, spp_magic[c]) for every q < 2^20 */
    uint32_t slot_top[WH_SLAB_CLASSES];
    uint32_t seg_cap[WH_SLAB_CLASSES];
    uint32_t spp_magic[WH_SLAB_CLASSES];
    /* circular */
    uint32_t end;          /* 16-byte unit of the sentinel header              */
    uint32_t split_root;   /* eq. 1: R in units (of one segment)               */
    uint32_t split_levels; /* eq. 1: levels 0..L-1                             */
    uint32_t segments;     /* sub-heaps, one cursor each (1, or #SM for MULTI) */
    uint32_t seg_units;    /* units of a segment (the last one takes the rest) */
    uint64_t *cursors;     /* segments cursors, 128 bytes apart                */
    /* this descriptor's copy in the metadata block, for the rare paths
     * (WH__RARE), written by create and reset: a handle's fields are not
     * to be changed in between */
    const struct wh_heap *dev;
    /* ownership (host side only) */
    void *arena_alloc, *meta_alloc;
    size_t meta_bytes;
} wh_heap;

/* The descriptor handed to the rare paths, which the GPU calls instead of
 * inlining (heap/slab.h): the copy in the heap's metadata.  Passing the
 * address of the kernel's own copy would make the compiler keep that copy --
 * several hundred bytes -- in local memory in every thread that allocates or
 * frees (a 688-byte stack frame per thread), even in threads that
 * never take a rare path. */
#define WH__RARE(h) ((h)->dev)

/* ---- small helpers ------------------------------------------------------- */

WH_INLINE WH_HOST_DEVICE uint64_t wh__round16(uint64_t n) { return (n + 15u) & ~(uint64_t)15u; }

/* Slab class of a request: the smallest class whose slots hold n (1 <= n <= 64 KiB). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_class(uint64_t n) {
    if (n <= 128u) return n <= 16u ? 0u : (uint32_t)((n - 1u) >> 4);
    uint32_t k = 63u - (uint32_t)wh_clz64(n - 1u); /* 2^k < n <= 2^(k+1), k >= 7 */
    if (k < 12u) return 8u + (k - 7u) * 8u + (uint32_t)(((n - 1u) >> (k - 3u)) & 7u);
    return 48u + (k - 12u);
}
/* The class a heap serves n from: below 256 pages (16 MiB) only the powers of
 * two (16 B .. 64 KiB, as many classes as pages to hold them would otherwise
 * run a small heap dry), all of them from there. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_class_of(const struct wh_heap *h, uint64_t n);
/* Slot bytes of class c (multiples of 16). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_size(uint32_t c) {
    if (c < 8u) return 16u * (c + 1u);
    if (c < 48u) {
        uint32_t k = 7u + (c - 8u) / 8u;
        return (1u << k) + ((c - 8u) % 8u + 1u) * (1u << (k - 3u));
    }
    return 8192u << (c - 48u);
}
/* Slots per page; the rest of the page (under one slot) is unused. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_spp(uint32_t c) { return WH_SLAB_PAGE / wh__slab_size(c); }
/* Bits per page in the class bitmap: spp rounded up to a power of two, so a
 * bit splits into page and slot by shifts (bits past spp are never set). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_lbpp(uint32_t c) {
    uint32_t spp = wh__slab_spp(c);
    return spp <= 1u ? 0u : 32u - (uint32_t)wh_clz32(spp - 1u);
}

/* A rotation seed for bitmap searches: different per thread and per call, so
 * that threads spread over different words (DynaSOAr's bitmap rotation). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__heap_seed(uint64_t salt) {
#if WH_ON_GPU
    uint64_t t = ((uint64_t)blockIdx.x << 32) ^ ((uint64_t)threadIdx.x << 16) ^ (uint64_t)clock64();
    return wh_hash64(t ^ salt);
#else
    int local;
    return wh_hash64((uint64_t)(uintptr_t)&local ^ salt);
#endif
}

/* Failure and debug counters: only on rare paths. */
WH_INLINE WH_HOST_DEVICE void wh__heap_count(uint64_t *counter) {
    (void)wh_atomic_fetch_add(counter, 1ull, WH_RELAXED);
}
/* WH_HEAP_TRACK: requested bytes in use and their peak. */
WH_INLINE WH_HOST_DEVICE void wh__heap_track(const wh_heap *h, int64_t delta) {
    if (!(h->flags & WH_HEAP_TRACK)) return;
    uint64_t now = wh_atomic_fetch_add(&h->ctl->in_use, (uint64_t)delta, WH_RELAXED) + (uint64_t)delta;
    if (delta > 0) (void)wh_atomic_fetch_max(&h->ctl->peak, now, WH_RELAXED);
}

WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_class_of(const wh_heap *h, uint64_t n) {
    uint32_t c = wh__slab_class(n);
    if (h->slab_fine) return c;
    if (c < 8u) return c < 2u ? c : (c < 4u ? 3u : 7u); /* 16, 32, 64, 128 */
    return c < 48u ? c | 7u : c;                        /* 256 .. 4096, then 8 .. 64 KiB */
}

/* q / spp for class c's slots per page, by its reciprocal (no division),
 * for the classes with bump segments (spp >= 128): exact for q < 2^20 (a
 * segment's positions, heap_layout.c), because with m = ceil(2^32 / spp) =
 * (2^32 + e) / spp, e < spp <= 4096, q * m / 2^32 exceeds q / spp by
 * q * e / (spp * 2^32) < 1 / spp (test_heap checks every q). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_spp_div(const wh_heap *h, uint32_t c, uint32_t q) {
    return wh_mulhi32(q, h->spp_magic[c]);
}

/* Class c's slot bitmap (a descriptor made on the fly: no memory access). */
WH_INLINE WH_HOST_DEVICE wh_bitmap wh__slab_bitmap(const wh_heap *h, uint32_t c) {
    wh_bitmap bm;
    (void)wh_bitmap_layout(&bm, h->slot_words + h->slot_off[c], (uint64_t)h->npages << wh__slab_lbpp(c));
    return bm;
}

#endif /* WARPHEAP_HEAP_CORE_H */
