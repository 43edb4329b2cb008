/* SPDX-License-Identifier: MIT */
/* Device heap: sizes and layout of the arena and the metadata of each kind,
 * computed once on the host.  The pre-split of CIRCULAR follows equation 1 of
 * register-efficient-gpu-allocators.txt section 5.2: levels 0..L-1 of a binary
 * heap of chunks, level l holding 2^l chunks of R / 2^l units, R chosen so the
 * heap fills the arena; the rest is one last chunk. */
#include "heap_internal.h"

#include <stddef.h>
#include <string.h>

/* The fused kinds read a header's flag and next as one little-endian word
 * (heap/fused.h): the layout they share with CIRCULAR. */
_Static_assert(offsetof(wh_circ_header, next) == 4 && sizeof(wh_circ_header) == 16, "circular header layout");
/* each segment state, back count and the cursor on its own 128-byte line (heap/core.h) */
_Static_assert(offsetof(wh_heap_ctl, pages_back) % 128u == 0 && offsetof(wh_heap_ctl, cursor) % 128u == 0,
               "wh_heap_ctl line alignment");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "heap/fused.h assumes a little-endian host (as the GPU is)"
#endif

#define META_ALIGN 256u
static size_t align_up(size_t n, size_t a) { return (n + a - 1u) / a * a; }

/* Metadata block: ctl | desc | cursors | states (circular) | page_info |
 * page_used | page_req | pages | whole | strand | slots[c] (slab and default). */
typedef struct meta_layout {
    size_t desc, cursors, states, info, used, req, pages, whole, strand, slots[WH_SLAB_CLASSES], total;
} meta_layout;

static meta_layout layout_of(const wh_heap *h) {
    meta_layout m;
    memset(&m, 0, sizeof m);
    size_t off = align_up(sizeof(wh_heap_ctl), META_ALIGN);
    bool paged = h->kind == WH_HEAP_SLAB || h->kind == WH_HEAP_DEFAULT;
    m.desc = off;
    off = align_up(off + sizeof(wh_heap), META_ALIGN);
    m.cursors = off;
    off = align_up(off + (size_t)h->subheaps * WH_CURSOR_STRIDE * 8u, META_ALIGN);
    m.states = off;
    if (h->end) off = align_up(off + 4u * (((size_t)h->end + 16u) / 16u), META_ALIGN); /* units 0 .. end */
    if (paged) {
        m.info = off;
        off = align_up(off + 4u * (size_t)h->npages, META_ALIGN);
        m.used = off;
        off = align_up(off + 4u * (size_t)h->npages, META_ALIGN);
        m.req = off;
        off = align_up(off + 8u * (size_t)h->npages, META_ALIGN);
        m.pages = off;
        off = align_up(off + wh_bitmap_bytes(h->npages), META_ALIGN);
        m.whole = off;
        off = align_up(off + 8u * (size_t)wh__whole_words(h->npages), META_ALIGN);
        m.strand = off;
        off = align_up(off + 8u * (((size_t)h->npages + 63u) / 64u), META_ALIGN);
        for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) {
            m.slots[c] = off;
            off = align_up(off + wh_bitmap_bytes((uint64_t)h->npages << wh__slab_lbpp(c)), META_ALIGN);
        }
    }
    m.total = off;
    return m;
}

/* Equation 1: the deepest binary heap whose smallest chunks keep
 * WH_CIRC_MIN_UNITS, filling the pool of `pool` units. */
static void circular_split(wh_heap *h, uint32_t pool) {
    uint32_t best_L = 1, best_R = pool;
    for (uint32_t L = 2; L <= 24; ++L) {
        uint32_t R = pool / L;
        R -= R % (1u << (L - 1u));
        if ((R >> (L - 1u)) < WH_CIRC_MIN_UNITS) break;
        best_L = L;
        best_R = R;
    }
    h->split_levels = best_L;
    h->split_root = best_R;
}

wh_status wh__heap_plan(wh_heap *h, const wh_heap_config *cfg, size_t *arena_bytes) {
    if (!h || !cfg || !arena_bytes) return wh__fail(WH_ERR_INVALID_ARGUMENT, "heap: NULL argument");
    memset(h, 0, sizeof *h);
    if ((unsigned)cfg->kind >= WH_HEAP_KIND_COUNT)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "heap: unknown kind %d", (int)cfg->kind);
    if (cfg->flags & ~(WH_HEAP_HOST | WH_HEAP_TRACK | WH_HEAP_SECURE))
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "heap: unknown flags 0x%x", cfg->flags);
    if (cfg->flags & WH_HEAP_SECURE && cfg->kind != WH_HEAP_SLAB && cfg->kind != WH_HEAP_DEFAULT)
        return wh__fail(WH_ERR_UNSUPPORTED,
                        "heap: WH_HEAP_SECURE is for the SLAB and DEFAULT kinds (the others keep headers in "
                        "free memory)");
    if (cfg->bytes > WH_HEAP_MAX_BYTES)
        return wh__fail(WH_ERR_TOO_LARGE, "heap: %llu bytes, at most %llu", (unsigned long long)cfg->bytes,
                        (unsigned long long)WH_HEAP_MAX_BYTES);
    h->kind = (uint32_t)cfg->kind;
    h->flags = cfg->flags;
    switch (cfg->kind) {
    case WH_HEAP_SLAB:
    case WH_HEAP_DEFAULT:
        h->npages = (uint32_t)(cfg->bytes >> WH_SLAB_PAGE_SHIFT);
        if (h->npages == 0)
            return wh__fail(WH_ERR_TOO_SMALL, "heap: %llu bytes, a slab heap needs one 64 KiB page",
                            (unsigned long long)cfg->bytes);
        if ((uint64_t)h->npages << wh__slab_lbpp(0) > WH_BITMAP_MAX_BITS)
            return wh__fail(WH_ERR_TOO_LARGE, "heap: too many 16-byte slots for one bitmap");
        h->bytes = (uint64_t)h->npages * WH_SLAB_PAGE;
        /* Bump segments (heap/slab_segment.h): under 2^20 slots (the first shift
         * that reaches 2^19), at most 1/WH__SEG_HEAP_DIV of the heap and 1024 pages.
         * One thread per class prepares the next segment
         * while the current one is handed out; a whole GPU takes 2^17
         * slots in a few microseconds, about one preparation, so smaller
         * segments (at most 2^17 slots and 1/1024 of the heap) leave warps
         * waiting and send them to the bitmap path (wh_heap_bench_prof:
         * 4 KiB at 1M threads takes the bitmap path on all but one
         * preparation).  Small heaps get small ones (one or
         * two pages below 256): what a class holds untouched is taken back
         * only once the pool runs dry.  Below WH__SEG_MIN_PAGES pages, none:
         * the classes' segments would hold most of the heap. */
        h->slab_fine = h->npages >= WH__SLAB_FINE_PAGES;
        h->slab_segs = h->npages < WH__SEG_MIN_PAGES ? 0u : h->npages < WH__SEG_TILED_MIN_PAGES ? 1u : 2u;
        /* The activation gate's slack (heap/slab_bitmap.h): for a GPU's
         * warps, not for the few threads of a heap in host memory, which a
         * preemption inside an activation lets run ahead of the demand
         * (test_heap's 8-thread mixed fill under load ended with 1-2% of
         * its 1 GiB free in 5 of 48 runs with the slack, none in 48 without). */
        h->gate_slack = !WH_HAVE_CUDA || cfg->flags & WH_HEAP_HOST ? 0u : h->npages >> WH__SLAB_GATE_SHIFT;
        /* Ways (heap/slab_segment.h): cfg->ways, else 2 from 4 GiB, 8 from 8
         * GiB.  A way prepares one segment at a time, and a 4-KiB class's
         * segment (1024 pages, 16K slots) lasts a whole GPU a few microseconds,
         * a preparation ~10 times that: the tiled classes run at the rate of
         * the ways' preparations.  Against 4 ways, 8 fill 90% of 9.4 GB at
         * 8.8e9 allocations/s at 4 KiB (5.5e9), 3.7e10 at 16 B (3.5e10) and
         * 3.3e10 at 256 B (3.2e10), and one 4-KiB object per thread for 1M
         * threads takes 0.125 ms (0.196).  Not more: 16 ways (a build with
         * WH_SEG_WAYS_MAX 16) fill at 6.0e9 at 4 KiB against 8.9e9 for 8 in
         * the same build, and take 0.179 ms for the 1M 4-KiB objects against
         * 0.121.  And every way holds segments of its own: the k-d tree's
         * 2M-triangle builds (1.6 GB heaps, sizes of many classes) run 9-23%
         * slower with 4 ways and may fail a page run, their free pages spread
         * over more partly used segments; so heaps under 4 GiB keep one way. */
        if (cfg->ways & (cfg->ways - 1u) || cfg->ways > WH_SEG_WAYS_MAX)
            return wh__fail(WH_ERR_INVALID_ARGUMENT, "heap: %u ways per slab class, want a power of two up to %u",
                            cfg->ways, WH_SEG_WAYS_MAX);
        h->seg_ways = cfg->ways;
        if (!h->seg_ways)
            h->seg_ways = h->npages >= (uint32_t)((8ull << 30) >> WH_SLAB_PAGE_SHIFT)   ? 8u
                          : h->npages >= (uint32_t)((4ull << 30) >> WH_SLAB_PAGE_SHIFT) ? 2u
                                                                                        : 1u;
        for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) {
            uint32_t shift = 0, spp = wh__slab_spp(c);
            while (shift < 10u && ((uint64_t)spp << shift) < (1u << 19) &&
                   ((uint64_t)WH__SEG_HEAP_DIV << (shift + 1u)) <= h->npages)
                shift++;
            h->seg_shift[c] = (uint8_t)shift;
            h->spp_magic[c] = spp > 1u ? (uint32_t)(((1ull << 32) + spp - 1u) / spp) : 0u;
            h->size_magic[c] = (uint32_t)(((1ull << 32) + wh__slab_size(c) - 1u) / wh__slab_size(c));
        }
        break;
    case WH_HEAP_BUMP:
    case WH_HEAP_WRAP:
    case WH_HEAP_CIRCULAR:
    case WH_HEAP_CIRCULAR_MULTI:
    case WH_HEAP_CIRCULAR_FUSED:
    case WH_HEAP_CIRCULAR_FUSED_MULTI:
        if (cfg->bytes < 4096u)
            return wh__fail(WH_ERR_TOO_SMALL, "heap: %llu bytes, at least 4096", (unsigned long long)cfg->bytes);
        h->bytes = cfg->bytes & ~(uint64_t)15u;
        if (wh__circ_kind(cfg->kind)) {
            h->end = (uint32_t)(h->bytes / 16u - 1u); /* the last unit: sentinel */
            h->subheaps = wh__circ_multi(cfg->kind) ? (cfg->subheaps ? cfg->subheaps : 16u) : 1u;
            if (h->subheaps > 4096u || h->end / h->subheaps < WH_CIRC_MIN_UNITS)
                return wh__fail(WH_ERR_TOO_SMALL, "heap: %u sub-heaps of %llu bytes", h->subheaps,
                                (unsigned long long)h->bytes);
            h->subheap_units = h->end / h->subheaps;
            circular_split(h, h->subheap_units);
        }
        break;
    default: return wh__fail(WH_ERR_UNSUPPORTED, "heap: kind %s is not built yet", wh_heap_kind_name(cfg->kind));
    }
    h->meta_bytes = layout_of(h).total;
    *arena_bytes = (size_t)h->bytes;
    return WH_OK;
}

/* Bytes a heap planned from cfg with an arena of `arena` bytes takes in one
 * region: the arena, then its metadata on a META_ALIGN boundary; 0 when cfg
 * makes no heap of that size. */
static uint64_t region_need(wh_heap *h, const wh_heap_config *cfg, uint64_t arena) {
    wh_heap_config c = *cfg;
    size_t got = 0;
    c.bytes = arena;
    if (wh__heap_plan(h, &c, &got) != WH_OK) return 0;
    return align_up(got, META_ALIGN) + h->meta_bytes;
}

wh_status wh__heap_plan_region(wh_heap *h, const wh_heap_config *cfg, size_t *arena_bytes, size_t *meta_offset) {
    wh_status st = wh__heap_plan(h, cfg, arena_bytes); /* every check but the metadata's room */
    if (st != WH_OK) return st;
    /* In arena units (a page, or 16 bytes), the smallest arena cfg's kind
     * accepts, then the largest that fits with its metadata: a plan's
     * acceptance grows with the arena, and so does its total. */
    uint64_t unit = (h->kind == WH_HEAP_SLAB || h->kind == WH_HEAP_DEFAULT) ? WH_SLAB_PAGE : WH_HEAP_ALIGN;
    uint64_t lo = 0, hi = cfg->bytes / unit;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2u;
        if (region_need(h, cfg, mid * unit))
            hi = mid;
        else
            lo = mid + 1u;
    }
    uint64_t least = region_need(h, cfg, lo * unit);
    if (least > cfg->bytes)
        return wh__fail(WH_ERR_TOO_SMALL,
                        "heap: region of %llu bytes, the smallest %s heap takes %llu with its metadata",
                        (unsigned long long)cfg->bytes, wh_heap_kind_name(cfg->kind), (unsigned long long)least);
    for (hi = cfg->bytes / unit; lo < hi;) {
        uint64_t mid = hi - (hi - lo) / 2u;
        if (region_need(h, cfg, mid * unit) <= cfg->bytes)
            lo = mid;
        else
            hi = mid - 1u;
    }
    (void)region_need(h, cfg, lo * unit);
    *arena_bytes = (size_t)h->bytes;
    *meta_offset = align_up((size_t)h->bytes, META_ALIGN);
    wh__clear_error(); /* the probes below the least size failed on purpose */
    return WH_OK;
}

void wh__heap_bind(wh_heap *h, void *arena, void *meta) {
    meta_layout m = layout_of(h);
    uint8_t *mb = (uint8_t *)meta;
    h->base = (uint8_t *)arena;
    h->ctl = (wh_heap_ctl *)meta;
    h->cursors = (uint64_t *)(mb + m.cursors);
    h->circ_states = h->end ? (uint32_t *)(mb + m.states) : NULL;
    /* a host copy of a device heap, rebased for the walk, points at the
     * copied descriptor (device pointers inside): the walk takes no rare path */
    h->dev = (const wh_heap *)(mb + m.desc);
    if (h->kind != WH_HEAP_SLAB && h->kind != WH_HEAP_DEFAULT) return;
    h->page_info = (uint32_t *)(mb + m.info);
    h->page_used = (uint32_t *)(mb + m.used);
    h->page_req = (uint64_t *)(mb + m.req);
    (void)wh_bitmap_layout(&h->pages, mb + m.pages, h->npages);
    h->page_whole = (uint64_t *)(mb + m.whole);
    h->page_strand = (uint64_t *)(mb + m.strand);
    h->slot_words = (uint64_t *)(mb + m.slots[0]);
    for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) {
        h->slot_off[c] = (uint32_t)((m.slots[c] - m.slots[0]) / 8u);
        wh_bitmap bm = wh__slab_bitmap(h, c);
        h->slot_top[c] = (uint32_t)(wh_bitmap_word(&bm, bm.levels - 1u, 0) - h->slot_words);
    }
}

size_t wh__heap_pages_offset(const wh_heap *h) { return layout_of(h).pages; }

const char *wh_heap_kind_name(wh_heap_kind kind) {
    static const char *names[] = {
        "default", "bump", "wrap", "circular", "circular_fused", "circular_multi", "circular_fused_multi", "slab"};
    return (unsigned)kind < WH_HEAP_KIND_COUNT ? names[kind] : "unknown";
}
