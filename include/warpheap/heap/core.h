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
#include "warpheap/heap/config.h"

typedef enum wh_heap_kind {
    WH_HEAP_DEFAULT = 0,          /* slabs for <= 32 KiB, page runs above      */
    WH_HEAP_BUMP,                 /* AtomicMalloc: one atomic, no free          */
    WH_HEAP_WRAP,                 /* AWMalloc: BUMP that wraps; no free         */
    WH_HEAP_CIRCULAR,             /* CMalloc                                    */
    WH_HEAP_CIRCULAR_FUSED,       /* CFMalloc: flag copied into the next word   */
    WH_HEAP_CIRCULAR_MULTI,       /* CMMalloc: one cursor and sub-heap per SM   */
    WH_HEAP_CIRCULAR_FUSED_MULTI, /* CFMMalloc: FUSED with a cursor per SM      */
    WH_HEAP_SLAB,                 /* size classes on hierarchical bitmaps       */
    WH_HEAP_KIND_COUNT
} wh_heap_kind;

/* wh_heap_config.flags */
#define WH_HEAP_HOST   1u /* arena and metadata in host memory (CPU backend)   */
#define WH_HEAP_TRACK  2u /* count bytes in use live, and their peak           */
#define WH_HEAP_SECURE 4u /* hardened mode, SLAB and DEFAULT (heap/secure.h)   */

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
    WH_PROF_UP_CLASS,       /* groups handed on to a larger class (none left)  */
    WH_PROF_NONE_RUNS,      /* whole aligned runs a failed preparation's scan finds */
    WH_PROF_NONE_PAGES,     /* free pages it finds                             */
    WH_PROF_GATED,          /* bitmap-path looks the activation gate held back */
    WH_PROF_COUNT
};
/* Their names, in order (the benches print them). */
#define WH_PROF_NAMES                                                                                               \
    {                                                                                                               \
        "seg_calls", "seg_empty", "seg_fallback", "prep_locked", "prep_none", "prep_cycles", "orphans",             \
            "freed_claims", "activations", "take_calls", "begin_cycles", "setup_cycles", "install_cycles",          \
            "span_cycles", "leader_cycles", "retire_all", "backoff", "up_class", "none_runs", "none_pages", "gated" \
    }

/* Counters in device (or host) memory.  The arrays of 128-byte lines come
 * first, so that each starts on a line (the block is 256-byte aligned); the
 * cursor sits on its own line: it is the hot word of BUMP and CIRCULAR. */
typedef struct wh_heap_ctl {
    /* slab bump segments, one state word per class and way on its own
     * 128-byte line: the hot words of a fresh class (heap/slab_segment.h) */
    uint64_t seg[WH_SLAB_CLASSES * WH_SEG_WAYS_MAX * WH_CURSOR_STRIDE];
    /* pages that frees gave back to the pool since the heap was made or
     * reset, in WH__BACK_SHARDS counters on lines of their own (a 4-KiB
     * free-all gives a page back every 16 frees): what ends a back-off
     * early (heap/slab_segment.h) */
    uint64_t pages_back[WH__BACK_SHARDS * WH_CURSOR_STRIDE];
    uint64_t cursor; /* bump offset / circular unit      */
    uint64_t pad0[15];
    uint64_t failed; /* failed allocations               */
    uint64_t double_frees;
    uint64_t foreign_frees;
    uint64_t in_use; /* bytes in use (WH_HEAP_TRACK)     */
    uint64_t peak;
    uint64_t corruptions; /* WH_HEAP_SECURE: freed memory found written */
    /* slab, per class: slots wanted by leaders that found the class empty
     * (high 32 bits) and page activations in flight (low 32 bits): the
     * activation gate (heap/slab_bitmap.h) */
    uint64_t activating[WH_SLAB_CLASSES];
    /* slab: a next segment in preparation, per class and way */
    uint32_t seg_prep[WH_SLAB_CLASSES * WH_SEG_WAYS_MAX];
    /* slab: a back-off after a failed preparation, per class and way:
     * pages_back at the failure << WH__SKIP_BACK_SHIFT | consecutive
     * failures << WH__SKIP_E_SHIFT | requests counted since
     * (heap/slab_segment.h) */
    uint64_t seg_skip[WH_SLAB_CLASSES * WH_SEG_WAYS_MAX];
    /* slab: a page was marked in page_strand since the last sweep
     * (heap/slab_page.h: wh__slab_sweep) */
    uint64_t strands;
    /* slab: the class ways that have prepared a bump segment since the
     * heap was made, reset or trimmed, a bit each (wh__seg_index): how many
     * share the pool decides a segment's size (heap/slab_segment.h) */
    uint64_t seg_used[WH__SEG_USED_WORDS];
    /* event counters of the slab paths, counted only in code built with
     * WH_HEAP_PROFILE (bench/heap: wh_heap_bench_prof); indices WH_PROF_* */
    uint64_t prof[WH_PROF_COUNT];
} wh_heap_ctl;

#ifdef WH_HEAP_PROFILE
#define WH__PROF(h, i, n) ((void)wh__atomic_add64(&(h)->ctl->prof[i], (uint64_t)(n), WH_RELAXED))
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
    uint8_t seg_shift[WH_SLAB_CLASSES]; /* class c's bump segments: up to 2^shift pages */
    uint32_t seg_ways;                  /* ways per class: 1 .. WH_SEG_WAYS_MAX, power of 2 */
    uint32_t slab_fine;                 /* all 84 classes (16 MiB and up)                   */
    /* bump segments (heap/slab_segment.h, wh__seg_class): 0 none; 1 from
     * WH__SEG_MIN_PAGES pages; 2, the tiled classes too, from
     * WH__SEG_TILED_MIN_PAGES */
    uint32_t slab_segs;
    /* activations in flight per class beyond the demand the gate sees
     * (heap/slab_bitmap.h): pages >> WH__SLAB_GATE_SHIFT, 0 in host memory */
    uint32_t gate_slack;
    uint32_t *page_info;   /* WH_PAGE_FREE, class + 1, or run head / tail      */
    uint32_t *page_used;   /* live slots of a slab page (reclaim at zero)      */
    uint64_t *page_req;    /* requested bytes of a page run                    */
    wh_bitmap pages;       /* 1 = page free                                    */
    uint64_t *page_whole;  /* 1 = page word wholly free (heap/page_whole.h)    */
    uint64_t *page_strand; /* 1 = a reclaim left the page with its class     */
    /* class c's slot bitmap (1 = slot free in an active page): words at
     * slot_words + slot_off[c], npages << wh__slab_lbpp(c) bits (see
     * wh__slab_bitmap: a descriptor per class would make this struct, passed
     * by value to every kernel, 2 KB) */
    uint64_t *slot_words;
    uint32_t slot_off[WH_SLAB_CLASSES];
    /* class c's constants for the fast path (heap/slab.h: wh__slab_get),
     * so that it makes no bitmap descriptor and divides nothing: its
     * bitmap's top word (an index into slot_words) and ceil(2^32 / spp),
     * with which q / spp = mulhi(q, spp_magic[c]) for every q < 2^20 */
    uint32_t slot_top[WH_SLAB_CLASSES];
    uint32_t spp_magic[WH_SLAB_CLASSES];
    /* and for the free (heap/classes.h: wh__slab_slot_of), ceil(2^32 / slot
     * bytes): a slot's index in its page and the page's slots by a
     * multiply and a shift */
    uint32_t size_magic[WH_SLAB_CLASSES];
    /* circular */
    uint32_t end;           /* 16-byte unit of the sentinel header              */
    uint32_t split_root;    /* eq. 1: R in units (of one sub-heap)              */
    uint32_t split_levels;  /* eq. 1: levels 0..L-1                             */
    uint32_t subheaps;      /* sub-heaps, one cursor each (1, or #SM for MULTI) */
    uint32_t subheap_units; /* units of a sub-heap (the last one takes the rest) */
    uint64_t *cursors;      /* the sub-heaps' cursors, 128 bytes apart          */
    uint32_t *circ_states;  /* 2 bits a unit, 16 units a word (heap/circular.h) */
    /* this descriptor's copy in the metadata block, for the rare paths
     * (WH__RARE), written by create and reset: a handle's fields are not
     * to be changed in between */
    const struct wh_heap *dev;
    /* ownership (host side only) */
    void *arena_alloc, *meta_alloc;
    size_t meta_bytes;
} wh_heap;

/* This code's build record (heap/config.h: wh_heap_build). */
#define WH__HEAP_BUILD                                                                                             \
    {                                                                                                              \
        WH_VERSION, (uint32_t)sizeof(wh_heap), (uint32_t)sizeof(wh_heap_ctl), WH_SLAB_PAGE_SHIFT, WH_SLAB_CLASSES, \
            WH_SEG_WAYS_MAX, WH__SEG_MIN_SPP, WH__SEG_MAX_TILED, WH__SEG_MIN_PAGES, WH__SEG_TILED_MIN_PAGES,       \
            WH__SLAB_FINE_PAGES                                                                                    \
    }

/* The descriptor handed to the rare paths, which the GPU calls instead of
 * inlining (heap/slab.h): the copy in the heap's metadata.  Passing the
 * address of the kernel's own copy would make the compiler keep that copy --
 * several hundred bytes -- in local memory in every thread that allocates or
 * frees (a 688-byte stack frame per thread), even in threads that
 * never take a rare path. */
#define WH__RARE(h) ((h)->dev)

/* ---- small helpers ------------------------------------------------------- */

WH_INLINE WH_HOST_DEVICE uint64_t wh__round16(uint64_t n) { return (n + 15u) & ~(uint64_t)15u; }

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
WH_INLINE WH_HOST_DEVICE void wh__heap_count(uint64_t *counter) { (void)wh__atomic_add64(counter, 1ull, WH_RELAXED); }
/* Frees gave n pages back to the page pool (a back-off's measure), counted
 * in the shard of the caller's SM (CPU backend: of its stack). */
WH_INLINE WH_HOST_DEVICE void wh__pages_back(const wh_heap *h, uint32_t n) {
#if WH_ON_GPU
    uint32_t s;
    asm("mov.u32 %0, %%smid;" : "=r"(s));
#else
    int local;
    uint32_t s = (uint32_t)wh_hash64((uint64_t)(uintptr_t)&local >> 12);
#endif
    uint64_t *c = &h->ctl->pages_back[(s % WH__BACK_SHARDS) * WH_CURSOR_STRIDE];
    (void)wh__atomic_add64(c, (uint64_t)n, WH_RELAXED);
}
/* Pages given back so far (all shards; not one instant's sum). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__pages_back_count(const wh_heap *h) {
    uint64_t n = 0;
    for (uint32_t k = 0; k < WH__BACK_SHARDS; ++k)
        n += wh_atomic_load(&h->ctl->pages_back[k * WH_CURSOR_STRIDE], WH_RELAXED);
    return n;
}
/* WH_HEAP_TRACK: requested bytes in use and their peak. */
WH_INLINE WH_HOST_DEVICE void wh__heap_track(const wh_heap *h, int64_t delta) {
    if (!(h->flags & WH_HEAP_TRACK)) return;
    uint64_t now = wh__atomic_add64(&h->ctl->in_use, (uint64_t)delta, WH_RELAXED) + (uint64_t)delta;
    if (delta > 0) (void)wh_atomic_fetch_max(&h->ctl->peak, now, WH_RELAXED);
}

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

#endif /* WARPHEAP_HEAP_CORE_H */
