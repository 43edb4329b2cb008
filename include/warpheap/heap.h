/* SPDX-License-Identifier: MIT */
/* warpheap device heap: wh_malloc / wh_free from any kernel (or, on the CPU
 * backend, any pthread), for any size.  See docs/heap.md.
 *
 *   wh_heap heap;
 *   wh_heap_config cfg = { .bytes = 1ull << 30, .kind = WH_HEAP_DEFAULT };
 *   wh_heap_create(&heap, &cfg);
 *   kernel<<<g, b>>>(heap);      // void *p = wh_malloc(&heap, n); wh_free(&heap, p);
 *   wh_heap_stats(&heap, &stats);
 *   wh_heap_destroy(&heap);
 *
 * Device functions are header-only (no -rdc).  wh_malloc coalesces same-size
 * (same-class) requests of the lanes present at its entry: one leader, one
 * atomic.  wh_malloc_warp / wh_free_warp take the participating mask from the
 * caller (all its lanes must call together); wh_malloc_as / wh_free_as the
 * heap's kind as a constant (only that kind's code in the kernel).  Every
 * pointer is 16-byte aligned; NULL means exhausted (counted in the stats) and
 * the heap stays usable; wh_free(NULL) does nothing; double and foreign frees
 * are detected where the kind can see them and counted.
 */
#ifndef WARPHEAP_HEAP_H
#define WARPHEAP_HEAP_H

#include "warpheap/heap/core.h"
#include "warpheap/heap/bump.h"
#include "warpheap/heap/wrap.h"
#include "warpheap/heap/slab.h"
#include "warpheap/heap/pagerun.h"
#include "warpheap/heap/circular.h"
#include "warpheap/heap/fused.h"

typedef struct wh_heap_config {
    uint64_t bytes; /* arena size                                       */
    wh_heap_kind kind;
    uint32_t flags;    /* WH_HEAP_HOST, WH_HEAP_TRACK, WH_HEAP_SECURE                    */
    uint32_t ways;     /* SLAB, DEFAULT: bump-segment states per size class, 1, 2, 4
                     * or 8 (WH_SEG_WAYS_MAX); 0 = 1, 2 from 4 GiB, 8 from 8 GiB */
    uint32_t subheaps; /* CIRCULAR_MULTI, CIRCULAR_FUSED_MULTI: sub-heaps, one cursor
                        * each; 0 = the GPU's SM count (a host heap: 16)            */
    /* optional: the caller's memory, [region, region + bytes), aligned to
     * WH_HEAP_REGION_ALIGN; device (or managed) memory, host memory with
     * WH_HEAP_HOST.  Arena and metadata both go there, the arena first, and
     * destroy leaves it to the caller.  NULL: the heap allocates both. */
    void *region;
} wh_heap_config;

/* Alignment of wh_heap_config.region: cudaMalloc's and the host pool's
 * default, so the arena's slots and the metadata's 128-byte lines sit as in
 * a heap that allocates itself. */
#define WH_HEAP_REGION_ALIGN 256u

typedef struct wh_heap_usage {
    uint64_t heap_bytes;      /* arena                                           */
    uint64_t used_bytes;      /* bytes of allocated regions (slots, chunks, runs) */
    uint64_t free_bytes;      /* bytes of free regions                           */
    uint64_t overhead_bytes;  /* headers, sentinel, unusable tails               */
    uint64_t allocations;     /* live allocated regions                          */
    uint64_t requested_bytes; /* sum of live requests (if known, else 0)         */
    uint64_t peak_bytes;      /* peak of requested bytes (WH_HEAP_TRACK)         */
    uint64_t largest_free;    /* largest free region                             */
    uint64_t failed_allocs, double_frees, foreign_frees;
    double internal_frag;     /* equation 2; -1 when requests are unknown        */
    double external_frag;     /* equation 3                                      */
    uint64_t inconsistencies; /* broken invariants found by the walk (0 = sound) */
    uint64_t corruptions;     /* WH_HEAP_SECURE: reused memory found written while free */
} wh_heap_usage;

/* ---- device (and CPU-backend) API ---------------------------------------- */

/* DEFAULT serves requests up to WH_DEFAULT_SLAB_MAX (heap/config.h) from slab
 * classes, larger ones from page runs. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__slab_max(uint32_t kind) {
    return kind == WH_HEAP_DEFAULT ? WH_DEFAULT_SLAB_MAX : WH_SLAB_MAX;
}

/* Grouping key: slab class, bump size, or a key of its own (no coalescing). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__heap_key(const wh_heap *h, uint32_t kind, uint64_t n) {
    uint64_t solo = (1ull << 62) | wh_lane_id();
    if (n == 0 || n > h->bytes) return solo;
    switch (kind) {
    case WH_HEAP_BUMP:
    case WH_HEAP_WRAP: return wh__round16(n);
    case WH_HEAP_SLAB:
    case WH_HEAP_DEFAULT: return n <= wh__slab_max(kind) ? wh__slab_class_of(h, n) : solo;
    default: return solo;
    }
}

/* DEFAULT above WH_DEFAULT_SLAB_MAX: a page run; when none is free, the
 * slab classes give back the pages their bump segments hold untouched and
 * the stranded pages (wh__seg_retire_all), and one more try.  A
 * call on the GPU: inlined, the run search's registers counted in every
 * kernel that allocates small objects (heap_bench's `one`: 140 against 115). */
WH__SLAB_COLD WH_HOST_DEVICE void *wh__rare_run_malloc(const wh_heap *h, uint64_t n) {
    void *p = wh__run_malloc(h, n);
    if (!p) {
        wh__rare_retire_all(h, WH__SEG_ALL); /* h is the metadata's copy already */
        p = wh__run_malloc(h, n);
    }
    return p;
}

WH_INLINE WH_HOST_DEVICE void *wh__heap_malloc_group(const wh_heap *h, uint32_t kind, uint64_t n, uint32_t group) {
    switch (kind) {
    case WH_HEAP_BUMP: return wh__bump_malloc(h, wh__round16(n), group);
    case WH_HEAP_WRAP: return wh__wrap_malloc(h, wh__round16(n), group);
    case WH_HEAP_SLAB:
    case WH_HEAP_DEFAULT:
        if (n <= wh__slab_max(kind)) return wh__slab_malloc(h, wh__slab_class_of(h, n), wh__slab_max(kind), group);
        return kind == WH_HEAP_DEFAULT ? wh__rare_run_malloc(WH__RARE(h), n) : (void *)0;
    case WH_HEAP_CIRCULAR:
    case WH_HEAP_CIRCULAR_MULTI: return wh__circ_malloc(h, n);
    case WH_HEAP_CIRCULAR_FUSED:
    case WH_HEAP_CIRCULAR_FUSED_MULTI: return wh__circf_malloc(h, n);
    default: return (void *)0;
    }
}

/* Bytes counted in use for a request of n served at p (WH_HEAP_TRACK): the
 * slot size for slab slots (their requests are not recorded; a slot of a
 * larger class when n's had none, wh__slab_malloc), the request otherwise. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__heap_counted(const wh_heap *h, uint32_t kind, uint64_t n, const void *p) {
    if ((kind == WH_HEAP_SLAB || kind == WH_HEAP_DEFAULT) && n <= wh__slab_max(kind)) {
        uint32_t page = (uint32_t)((uint64_t)((const uint8_t *)p - h->base) >> WH_SLAB_PAGE_SHIFT);
        return wh__slab_size(WH_PAGE_CLASS(wh_atomic_load(&h->page_info[page], WH_ACQUIRE)));
    }
    return n;
}

/* kind: h->kind.  Written as a constant (wh_malloc_as), it lets the compiler
 * drop the other kinds' code from the kernel: fewer registers.  mask: lanes
 * that call together (each with its own size). */
WH_INLINE WH_HOST_DEVICE void *wh__malloc_kind(const wh_heap *h, uint32_t kind, size_t bytes, uint32_t mask) {
    uint64_t n = (uint64_t)bytes;
    uint32_t group = wh_match_any64(mask, wh__heap_key(h, kind, n));
    if (n == 0 || !h->ctl) return (void *)0; /* no heap (zeroed or destroyed handle): NULL */
    void *p = n > h->bytes ? (void *)0 : wh__heap_malloc_group(h, kind, n, group);
    if (!p) {
        wh__heap_count(&h->ctl->failed);
        return p;
    }
    if (h->flags & (WH_HEAP_TRACK | WH_HEAP_SECURE)) {
        uint64_t counted = wh__heap_counted(h, kind, n, p);
        if (h->flags & WH_HEAP_TRACK) wh__heap_track(h, (int64_t)counted);
        if (h->flags & WH_HEAP_SECURE) wh__secure_taken(h, p, counted);
    }
    return p;
}

WH_INLINE WH_HOST_DEVICE void *wh_malloc_warp(const wh_heap *h, size_t bytes, uint32_t mask) {
    return wh__malloc_kind(h, h->kind, bytes, mask);
}

WH_INLINE WH_HOST_DEVICE void *wh_malloc(const wh_heap *h, size_t bytes) {
    return wh_malloc_warp(h, bytes, wh_active_mask());
}

/* wh_malloc for a heap created with `kind`, a constant (see wh__malloc_kind). */
#define wh_malloc_as(h, kind, bytes) wh__malloc_kind((h), (kind), (bytes), wh_active_mask())

/* Slab slots and page runs, per lane: which one p is, from its page's info.
 * True when p is a slab slot whose bit b (class c, page) the group part of
 * the free sets (wh__slab_free_group); false when the free is done here (a
 * run freed, or a foreign or double free counted). */
WH_INLINE WH_HOST_DEVICE bool wh__paged_free_lane(const wh_heap *h, void *p, uint32_t *c, uint32_t *page, uint64_t *b) {
    uint64_t off = (uint64_t)((uint8_t *)p - h->base);
    if ((uint8_t *)p < h->base || off >= (uint64_t)h->npages * WH_SLAB_PAGE) {
        wh__heap_count(&h->ctl->foreign_frees);
        return false;
    }
    *page = (uint32_t)(off >> WH_SLAB_PAGE_SHIFT);
    uint64_t in_page = off & (WH_SLAB_PAGE - 1u);
    /* relaxed: the allocation of p happens before its free, and it read the
     * page's set-up with acquire, so this load sees that info or a later one
     * (an acquire load would empty the SM's L1 in every free) */
    uint32_t info = wh_atomic_load(&h->page_info[*page], WH_RELAXED);
    if (info == WH_PAGE_FREE) {
        wh__heap_count(&h->ctl->double_frees);
        return false;
    }
    if (info & WH_PAGE_RUN_HEAD) {
        if (!wh__run_free(h, info, *page, in_page)) wh__heap_count(&h->ctl->foreign_frees);
        return false;
    }
    if (info & WH_PAGE_RUN_TAIL || !wh__slab_free_lane(h, info, *page, in_page, b)) {
        wh__heap_count(&h->ctl->foreign_frees);
        return false;
    }
    *c = WH_PAGE_CLASS(info);
    return *b != ~0ull; /* the hardened mode's double free is counted */
}

/* SLAB and DEFAULT: the lanes of mask (all of them call, NULL or not) whose
 * slots share a word of one class bitmap free them together (one leader, one
 * atomic); every other free is one lane's.  The hardened mode frees lane by
 * lane: each slot is checked and filled before its bit is set. */
WH_INLINE WH_HOST_DEVICE void wh__paged_free(const wh_heap *h, void *p, uint32_t mask) {
    uint32_t c = 0, page = 0;
    uint64_t b = 0;
    bool slot = p && wh__paged_free_lane(h, p, &c, &page, &b);
    uint64_t key = slot && !(h->flags & WH_HEAP_SECURE) ? (uint64_t)c << 32 | b >> 6 : 1ull << 62 | wh_lane_id();
    uint32_t group = wh_match_any64(mask, key);
    if (slot) wh__slab_free_group(h, c, page, b, group);
}

/* mask: the lanes that call together (wh_free_warp); every one of them calls */
WH_INLINE WH_HOST_DEVICE void wh__free_kind(const wh_heap *h, uint32_t kind, void *p, uint32_t mask) {
    if (!h->ctl) return; /* no heap: nothing it could free */
    if (kind == WH_HEAP_SLAB || kind == WH_HEAP_DEFAULT) {
        wh__paged_free(h, p, mask);
        return;
    }
    if (!p) return;
    switch (kind) {
    case WH_HEAP_BUMP: wh__bump_free(h, p); break;
    case WH_HEAP_WRAP: wh__wrap_free(h, p); break;
    case WH_HEAP_CIRCULAR:
    case WH_HEAP_CIRCULAR_MULTI: wh__circ_free(h, p); break;
    case WH_HEAP_CIRCULAR_FUSED:
    case WH_HEAP_CIRCULAR_FUSED_MULTI: wh__circf_free(h, p); break;
    default: wh__heap_count(&h->ctl->foreign_frees); break;
    }
}

/* mask: the lanes that call together, each with its own pointer (or NULL) */
WH_INLINE WH_HOST_DEVICE void wh_free_warp(const wh_heap *h, void *p, uint32_t mask) {
    wh__free_kind(h, h->kind, p, mask);
}

WH_INLINE WH_HOST_DEVICE void wh_free(const wh_heap *h, void *p) { wh_free_warp(h, p, wh_active_mask()); }

/* wh_free for a heap created with `kind`, a constant. */
#define wh_free_as(h, kind, p) wh__free_kind((h), (kind), (p), wh_active_mask())

/* ---- host API (src/heap) -------------------------------------------------- */
WH_EXTERN_C_BEGIN

/* Create a heap: device memory, or host memory with WH_HEAP_HOST (always on a
 * build without CUDA).  WH_ERR_TOO_SMALL below one page (64 KiB) for slab and
 * default, below 4 KiB otherwise; WH_ERR_TOO_LARGE above 64 GiB;
 * WH_ERR_INVALID_ARGUMENT for an unknown kind.  With cfg->region, the arena is
 * the largest that fits the region beside its metadata (h->bytes), and
 * nothing is written there unless the heap is made: WH_ERR_TOO_SMALL when the
 * smallest heap of the kind does not fit, WH_ERR_INVALID_ARGUMENT for a region
 * misaligned or of the wrong memory kind (CUDA build).  WH_ERR_UNSUPPORTED when the
 * caller was compiled with heap values other than the library's (the message
 * names the value: a header of another version, or a changed constant).
 * wh_heap_create passes the caller's build record (heap/config.h) to
 * wh_heap_create_built. */
WH_API wh_status wh_heap_create_built(wh_heap *h, const wh_heap_config *cfg, const wh_heap_build *caller);
static inline wh_status wh_heap_create(wh_heap *h, const wh_heap_config *cfg) {
    wh_heap_build b = WH__HEAP_BUILD;
    return wh_heap_create_built(h, cfg, &b);
}
/* Free everything: the heap is empty again (no kernel may be running on it). */
WH_API wh_status wh_heap_reset(wh_heap *h);
WH_API wh_status wh_heap_destroy(wh_heap *h);
/* Give the pages that the slab classes' bump segments hold untouched back to
 * the page pool (SLAB and DEFAULT; nothing for the other kinds).  They are
 * taken back anyway when the pool runs dry; call it before measuring
 * fragmentation, or to make room for page runs ahead of time.  Lock-free: it
 * takes nothing a class is handing out at that moment.  Waits for the GPU. */
WH_API wh_status wh_heap_trim(const wh_heap *h);
/* Walk the heap (no kernel may be running on it) and fill *s. */
WH_API wh_status wh_heap_stats(const wh_heap *h, wh_heap_usage *s);
WH_API const char *wh_heap_kind_name(wh_heap_kind kind);

WH_EXTERN_C_END

#endif /* WARPHEAP_HEAP_H */
