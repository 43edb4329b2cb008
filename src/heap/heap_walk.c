/* SPDX-License-Identifier: MIT */
/* Device heap: the heap walk behind wh_heap_stats.  It visits every region
 * (slab slot, free page, page run, circular chunk), checks the invariants
 * that tie the metadata together, and computes the fragmentation of
 * register-efficient-gpu-allocators.txt section 8: equation 2 (internal: the
 * mean over allocated regions of (size - request) / size) and equation 3
 * (external: 1 - largest free region / all free bytes).  Every byte of the
 * arena must land in used, free or overhead, else it counts as an
 * inconsistency. */
#include "heap_internal.h"

#include <string.h>

typedef struct walk {
    wh_heap_usage *s;
    double frag_sum;         /* equation 2 numerator            */
    uint64_t known, unknown; /* regions with / without request   */
    uint64_t free_run;       /* current run of free pages        */
} walk;

static void used_region(walk *w, uint64_t size, uint64_t req, bool known) {
    w->s->used_bytes += size;
    w->s->allocations++;
    if (known && size) {
        w->known++;
        w->s->requested_bytes += req;
        w->frag_sum += (double)(size - (req < size ? req : size)) / (double)size;
    } else {
        w->unknown++;
    }
}
static void free_region(walk *w, uint64_t size) {
    w->s->free_bytes += size;
    if (size > w->s->largest_free) w->s->largest_free = size;
}
static void end_free_run(walk *w) {
    if (w->free_run) free_region(w, w->free_run);
    w->free_run = 0;
}

/* A slab page of class c: its free slots from the class bitmap; the rest of
 * the page past its last slot is overhead. */
static void walk_slab_page(const wh_heap *h, walk *w, uint32_t p, uint32_t c, uint32_t way, uint64_t *class_free) {
    uint32_t spp = wh__slab_spp(c), w0 = wh__slab_page_word(h, c, p);
    wh_bitmap bm = wh__slab_bitmap(h, c);
    uint64_t nfree = 0;
    for (uint32_t k = 0; k < wh__slab_page_words(h, c); ++k)
        nfree += (uint64_t)wh_popc64(*wh_bitmap_word(&bm, 0, w0 + k) & wh__slab_word_mask(h, c, p, k));
    class_free[c] += nfree;
    /* slots a bump segment has yet to hand out: counted by the page, free here */
    uint64_t size = wh__slab_size(c), untouched = wh__seg_untouched(h, c, p, *wh__seg_state(h, c, way));
    uint64_t live = spp - nfree - untouched;
    if (h->page_used[p] != spp - nfree || nfree + untouched > spp) w->s->inconsistencies++;
    for (uint64_t i = 0; i < live; ++i) used_region(w, size, 0, false);
    for (uint64_t i = 0; i < nfree + untouched; ++i) free_region(w, size);
    w->s->overhead_bytes += WH_SLAB_PAGE - (uint64_t)spp * size;
}

static void walk_paged(const wh_heap *h, walk *w) {
    wh_heap_usage *s = w->s;
    uint64_t class_free[WH_SLAB_CLASSES] = {0};
    for (uint32_t p = 0; p < h->npages; ++p) {
        uint32_t info = h->page_info[p];
        bool bit = wh_bitmap_get(&h->pages, p);
        if (bit != (info == WH_PAGE_FREE)) s->inconsistencies++;
        if (info == WH_PAGE_FREE) {
            w->free_run += WH_SLAB_PAGE;
            continue;
        }
        end_free_run(w);
        if (info & WH_PAGE_RUN_HEAD) {
            uint32_t n = info & ~WH_PAGE_RUN_HEAD;
            if (n == 0 || p + n > h->npages) {
                s->inconsistencies++;
                continue;
            }
            for (uint32_t k = 1; k < n; ++k)
                if (h->page_info[p + k] != WH_PAGE_RUN_TAIL || wh_bitmap_get(&h->pages, p + k)) s->inconsistencies++;
            used_region(w, (uint64_t)n * WH_SLAB_PAGE, h->page_req[p], true);
            p += n - 1u;
        } else if (WH_PAGE_CLASS(info) < WH_SLAB_CLASSES && WH_PAGE_WAY(info) < h->seg_ways) {
            walk_slab_page(h, w, p, WH_PAGE_CLASS(info), WH_PAGE_WAY(info), class_free);
        } else {
            s->inconsistencies++; /* orphan tail or garbage */
        }
    }
    end_free_run(w);
    s->inconsistencies += wh_bitmap_check_host(&h->pages);
    for (uint32_t k = 0; k < h->npages / 64u; ++k) /* a wholly free page word has its whole bit */
        if (*wh_bitmap_word(&h->pages, 0, k) == ~0ull && !(h->page_whole[k >> 6] >> (k & 63u) & 1u))
            s->inconsistencies++;
    for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) { /* no free bit outside its pages */
        wh_bitmap bm = wh__slab_bitmap(h, c);
        s->inconsistencies += wh_bitmap_check_host(&bm);
        if (wh_bitmap_count_host(&bm) != class_free[c]) s->inconsistencies++;
    }
}

/* Headers among the units of the circular kinds' states: those FREE or USED
 * (2 bits a unit: 01 or 10). */
static uint64_t circ_headers(const wh_heap *h) {
    uint64_t n = 0;
    for (uint64_t k = 0; k <= h->end / 16u; ++k) {
        uint32_t w = h->circ_states[k];
        n += (uint64_t)wh_popc32((w ^ w >> 1) & 0x55555555u);
    }
    return n;
}

/* The chain of headers from unit 0 to the sentinel: each FREE or USED, its
 * next after it, the fused kinds' tags their states'; no other unit FREE or
 * USED (GONE and NONE lie inside chunks). */
static void walk_circular(const wh_heap *h, walk *w) {
    wh_heap_usage *s = w->s;
    bool tags = h->kind == WH_HEAP_CIRCULAR_FUSED || h->kind == WH_HEAP_CIRCULAR_FUSED_MULTI;
    uint64_t headers = 1; /* the sentinel */
    uint32_t off = 0;
    while (off < h->end) {
        const wh_circ_header *c = wh__circ_hdr(h, off);
        uint32_t state = wh__circ_state(h, off);
        if ((state != WH_CIRC_FREE && state != WH_CIRC_USED) || c->next <= off || c->next > h->end) {
            s->inconsistencies++;
            s->overhead_bytes += (uint64_t)(h->end - off) * 16u; /* unaccounted rest */
            break;
        }
        if (tags && c->tag != WH_CIRC_TAG(state)) s->inconsistencies++;
        uint64_t data = (uint64_t)(c->next - off - 1u) * 16u;
        s->overhead_bytes += 16u;
        headers++;
        if (state == WH_CIRC_USED)
            used_region(w, data, c->req, true);
        else
            free_region(w, data);
        off = c->next;
    }
    const wh_circ_header *sentinel = wh__circ_hdr(h, h->end);
    if (wh__circ_state(h, h->end) != WH_CIRC_USED || sentinel->next != 0) s->inconsistencies++;
    if (off == h->end && circ_headers(h) != headers) s->inconsistencies++;
    s->overhead_bytes += 16u;
}

void wh__heap_walk(const wh_heap *h, wh_heap_usage *s) {
    memset(s, 0, sizeof *s);
    walk w = {s, 0.0, 0, 0, 0};
    s->heap_bytes = h->bytes;
    s->failed_allocs = h->ctl->failed;
    s->double_frees = h->ctl->double_frees;
    s->foreign_frees = h->ctl->foreign_frees;
    s->corruptions = h->ctl->corruptions;
    s->peak_bytes = h->ctl->peak;
    switch (h->kind) {
    case WH_HEAP_SLAB:
    case WH_HEAP_DEFAULT: walk_paged(h, &w); break;
    case WH_HEAP_CIRCULAR:
    case WH_HEAP_CIRCULAR_MULTI:
    case WH_HEAP_CIRCULAR_FUSED: /* the same layout (heap/fused.h) */
    case WH_HEAP_CIRCULAR_FUSED_MULTI: walk_circular(h, &w); break;
    case WH_HEAP_BUMP:
    case WH_HEAP_WRAP: {
        uint64_t used = h->ctl->cursor < h->bytes ? h->ctl->cursor : h->bytes;
        s->used_bytes = used;
        free_region(&w, h->bytes - used);
        break;
    }
    default: break;
    }
    if (s->used_bytes + s->free_bytes + s->overhead_bytes != s->heap_bytes) s->inconsistencies++;
    s->internal_frag = (w.unknown || !w.known) ? (w.known || w.unknown ? -1.0 : 0.0) : w.frag_sum / (double)w.known;
    s->external_frag = s->free_bytes ? 1.0 - (double)s->largest_free / (double)s->free_bytes : 0.0;
}
