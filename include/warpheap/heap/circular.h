/* SPDX-License-Identifier: MIT */
/* CIRCULAR: CMalloc, register-efficient-gpu-allocators.txt section 5.2
 * (Algorithm 3, the pre-split of equation 1, MAX_FRAG).
 *
 * The arena is a circular singly linked list of chunks in 16-byte units.  A
 * chunk starts with a 16-byte header: a flag word, the unit of the next
 * chunk, and the requested size (for the heap walk's equation 2).  A sentinel
 * header at the end is always used and points back to unit 0.  Allocation
 * walks from the shared cursor, locks a free chunk with a CAS on its flag,
 * splits it when it is at least MAX_FRAG times the request, and moves the
 * cursor past it.  Free merges the chunk with its next one if that is free.
 *
 * Departures:
 * - Flags are 32-bit magic values, not 0/1, and every `next` read is checked
 *   (inside the arena, after the chunk): the paper's argument that a walker is
 *   never stalled long enough to hold a stale offset does not hold with
 *   independent scheduling and preemption, so a stale walker restarts from the
 *   cursor instead of trusting garbage.  The access itself remains: a walker
 *   that read `next` of a chunk it does not own may reach that header after
 *   the chunk absorbed it and a user wrote there -- an atomic access racing a
 *   plain write (ThreadSanitizer reports it), and should that user data equal
 *   the free magic exactly, the walker would take it.  The seed's design has
 *   this; only out-of-band headers would remove it.
 * - A header absorbed by a merge is flagged GONE, in the same CAS that takes
 *   it from free: a second free of a chunk that a neighbour has since
 *   absorbed is then a double free, not a chunk spliced into the middle of
 *   another.  Walkers step over GONE to its next, a header when it went.
 * - A walker that locks a free chunk too small for it first tries to absorb
 *   the free chunks after it (bounded): the paper merges only on free, which
 *   leaves runs of free chunks that never join.
 * - Free points the cursor at the chunk just freed (the paper moves it past).
 * - A cursor never rests on a header that was absorbed: whoever absorbs a
 *   chunk moves a cursor that points at it (one CAS).  For this to hold, free
 *   sets the cursor while it still owns the chunk, and chunks of different
 *   sub-heaps never merge, so each cursor stays within its own sub-heap and
 *   sub-heap starts are permanent headers (the restart point of a walk that
 *   raced a merge).
 * - Every walk is bounded: by one full turn of the ring in units and by
 *   WH_HEAP_RETRY_LIMIT chunks; then the request fails (NULL, counted).
 * - Units are 16 bytes with 32-bit offsets: arenas up to 64 GiB.
 *
 * CIRCULAR_MULTI (CMMalloc, section 5.4) is the same list with one cursor per
 * SM, each starting at its own sub-heap of the pre-split (R' = R / #SM); the
 * sub-heaps are linked into the one ring, so a walk crosses into the next.
 */
#ifndef WARPHEAP_HEAP_CIRCULAR_H
#define WARPHEAP_HEAP_CIRCULAR_H

#include "warpheap/heap/core.h"

#define WH_CIRC_FREE      0xF4EEC1A5u
#define WH_CIRC_USED      0x05EDC1A5u
#define WH_CIRC_GONE      0x0DEAC1A5u /* a header absorbed by a merge */
#define WH_CIRC_MAX_FRAG  2u          /* split when the chunk is >= 2x the need  */
#define WH_CIRC_MIN_UNITS 16u         /* smallest pre-split chunk: 256 B         */
#define WH_CIRC_MERGES    8u          /* free neighbours a walker may absorb     */

typedef struct wh_circ_header {
    uint32_t flag;
    uint32_t next; /* unit of the next chunk's header        */
    uint64_t req;  /* requested bytes while used              */
} wh_circ_header;

WH_INLINE WH_HOST_DEVICE wh_circ_header *wh__circ_hdr(const wh_heap *h, uint32_t unit) {
    return (wh_circ_header *)(h->base + (uint64_t)unit * 16u);
}

/* Equation 1 for chunk k of the pre-split: sub-heap k >> L, and inside it
 * binary-heap index (k mod 2^L) + 1, or the sub-heap's last chunk (the
 * remainder) for k mod 2^L == 2^L - 1.  Writes its header as free. */
WH_INLINE WH_HOST_DEVICE void wh__circ_init_chunk(const wh_heap *h, uint32_t k) {
    uint32_t R = h->split_root, L = h->split_levels, count = (1u << L) - 1u;
    uint32_t seg = k >> L, first = seg * h->subheap_units;
    uint32_t last = seg + 1u == h->subheaps ? h->end : first + h->subheap_units;
    uint32_t off, next;
    k &= (1u << L) - 1u;
    if (k < count) {
        uint32_t i = k + 1u, level = (uint32_t)wh_log2_64(i), size = R >> level;
        off = first + level * R + (i - (1u << level)) * size;
        next = off + size;
    } else {
        off = first + L * R; /* the remainder */
        next = last;
        if (off >= next) return;
    }
    wh_circ_header *c = wh__circ_hdr(h, off);
    c->flag = WH_CIRC_FREE;
    c->next = next;
    c->req = 0;
}
/* Number of chunks wh__circ_init_chunk writes (k = 0 .. n-1), sentinel apart. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_init_count(const wh_heap *h) { return h->subheaps << h->split_levels; }

/* The kinds built on this list: CIRCULAR and CIRCULAR_MULTI here, their fused
 * forms in heap/fused.h (same layout, so init, walk and stats serve all four). */
WH_INLINE WH_HOST_DEVICE bool wh__circ_kind(uint32_t kind) {
    return kind == WH_HEAP_CIRCULAR || kind == WH_HEAP_CIRCULAR_MULTI || kind == WH_HEAP_CIRCULAR_FUSED ||
           kind == WH_HEAP_CIRCULAR_FUSED_MULTI;
}
WH_INLINE WH_HOST_DEVICE bool wh__circ_multi(uint32_t kind) {
    return kind == WH_HEAP_CIRCULAR_MULTI || kind == WH_HEAP_CIRCULAR_FUSED_MULTI;
}

/* Sub-heap of a unit; sub-heap starts are permanent headers, because chunks
 * never absorb a chunk of another sub-heap. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_subheap(const wh_heap *h, uint32_t unit) {
    uint32_t s = unit / h->subheap_units;
    return s < h->subheaps ? s : h->subheaps - 1u;
}
WH_INLINE WH_HOST_DEVICE uint64_t *wh__circ_cursor_of(const wh_heap *h, uint32_t seg) {
    return h->cursors + (uint64_t)seg * WH_CURSOR_STRIDE;
}
/* The sub-heap this thread starts from: the only one, or (MULTI) its SM's. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_my_subheap(const wh_heap *h) {
    if (h->subheaps == 1u) return 0;
#if WH_ON_GPU
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
#else
    unsigned sm = (unsigned)(wh__heap_seed(0) >> 33);
#endif
    return sm % h->subheaps;
}

/* A walk for one request (Algorithm 3, lines 2-3), bounded by one turn of
 * the ring in units and by WH_HEAP_RETRY_LIMIT chunks. */
typedef struct wh_circ_walk {
    uint64_t *cursor;   /* of the walker's sub-heap                          */
    uint64_t travelled; /* units passed                                     */
    uint32_t need;      /* units with the header                            */
    uint32_t seg, off, steps;
} wh_circ_walk;

/* Start at the cursor of the caller's sub-heap; false if it can never fit. */
WH_INLINE WH_HOST_DEVICE bool wh__circ_walk_begin(const wh_heap *h, uint64_t bytes, wh_circ_walk *w) {
    uint64_t need = 1u + (bytes + 15u) / 16u;
    if (need > h->end) return false;
    w->need = (uint32_t)need;
    w->seg = wh__circ_my_subheap(h);
    w->cursor = wh__circ_cursor_of(h, w->seg);
    w->off = (uint32_t)wh_atomic_load(w->cursor, WH_RELAXED);
    w->travelled = 0;
    w->steps = 0;
    return true;
}
/* Whether the walk goes on to w->off (the sentinel wraps it to unit 0). */
WH_INLINE WH_HOST_DEVICE bool wh__circ_walk_on(const wh_heap *h, wh_circ_walk *w) {
    while (w->steps < WH_HEAP_RETRY_LIMIT && w->travelled <= 2ull * h->end) {
        ++w->steps;
        if (w->off < h->end) return true;
        w->off = 0;
        w->travelled += 1;
    }
    return false;
}
/* The walker read `next` at w->off (header: the flag or tag was a header's):
 * go on there.  A next that cannot be right means a merge raced it or it
 * reached user data: it restarts at its sub-heap's start, a permanent header. */
WH_INLINE WH_HOST_DEVICE void wh__circ_step(const wh_heap *h, wh_circ_walk *w, uint32_t next, bool header) {
    if (next <= w->off || next > h->end || !header) {
        w->travelled += 1;
        w->off = w->seg * h->subheap_units;
        return;
    }
    w->travelled += next - w->off;
    w->off = next;
}

/* The locked chunk at off absorbed the chunk at gone: a cursor must never be
 * left on a header that no longer exists, so move it to off. */
WH_INLINE WH_HOST_DEVICE void wh__circ_absorbed(const wh_heap *h, uint32_t off, uint32_t gone) {
    uint64_t expected = gone;
    (void)wh_atomic_cas(wh__circ_cursor_of(h, wh__circ_subheap(h, gone)), &expected, (uint64_t)off, WH_RELAXED,
                        WH_RELAXED);
}

/* Try to absorb free chunks after the locked chunk at off; returns its next. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_absorb(const wh_heap *h, uint32_t off, uint32_t next, uint32_t need) {
    wh_circ_header *c = wh__circ_hdr(h, off);
    uint32_t seg = wh__circ_subheap(h, off);
    for (uint32_t k = 0; k < WH_CIRC_MERGES && next < h->end && next - off < need; ++k) {
        if (wh__circ_subheap(h, next) != seg) break;
        wh_circ_header *n = wh__circ_hdr(h, next);
        uint32_t expected = WH_CIRC_FREE;
        if (!wh_atomic_cas(&n->flag, &expected, WH_CIRC_GONE, WH_ACQ_REL, WH_RELAXED)) break;
        uint32_t nn = wh_atomic_load(&n->next, WH_ACQUIRE);
        wh_atomic_store(&c->next, nn, WH_RELEASE); /* n's header is now inside c */
        wh__circ_absorbed(h, off, next);
        next = nn;
    }
    return next;
}

/* Where to split the chunk [off, next) for `need` units (Algorithm 3, lines
 * 14-15: room for a header after it and at least MAX_FRAG times the need);
 * next when it is not worth it. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_cut(uint32_t off, uint32_t next, uint32_t need) {
    uint32_t csize = next - off;
    if (need + 1u > csize || (uint64_t)need * WH_CIRC_MAX_FRAG > csize) return next;
    return off + need;
}

/* After an allocation that ends at `after`: the cursor of sub-heap seg moves
 * there, if it stays in its sub-heap (a cursor only ever holds units of its
 * own sub-heap, or the sentinel). */
WH_INLINE WH_HOST_DEVICE void wh__circ_advance(const wh_heap *h, uint64_t *cursor, uint32_t seg, uint32_t after) {
    if (wh__circ_subheap(h, after) == seg || after == h->end) wh_atomic_store(cursor, (uint64_t)after, WH_RELAXED);
}

/* The header unit of a pointer handed out by a circular kind, or UINT32_MAX
 * (counted foreign) when p cannot be one. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_unit_of(const wh_heap *h, const void *p) {
    uint64_t pos = (uint64_t)((const uint8_t *)p - h->base);
    if ((const uint8_t *)p < h->base + 16 || pos % 16u || pos / 16u > h->end) {
        wh__heap_count(&h->ctl->foreign_frees);
        return UINT32_MAX;
    }
    return (uint32_t)(pos / 16u) - 1u;
}

/* Split the locked chunk [off, next) after `need` units if worth it. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_split(const wh_heap *h, uint32_t off, uint32_t next, uint32_t need) {
    uint32_t cut = wh__circ_cut(off, next, need);
    if (cut == next) return next;
    wh_circ_header *t = wh__circ_hdr(h, cut);
    wh_atomic_store(&t->next, next, WH_RELAXED);
    wh_atomic_store(&t->req, 0ull, WH_RELAXED);
    wh_atomic_store(&t->flag, WH_CIRC_FREE, WH_RELEASE);
    wh_atomic_store(&wh__circ_hdr(h, off)->next, cut, WH_RELEASE); /* publish */
    return cut;
}

WH_INLINE WH_HOST_DEVICE void *wh__circ_malloc(const wh_heap *h, uint64_t bytes) {
    wh_circ_walk wk;
    if (!wh__circ_walk_begin(h, bytes, &wk)) return (void *)0;
    while (wh__circ_walk_on(h, &wk)) {
        uint32_t off = wk.off, need = wk.need;
        wh_circ_header *c = wh__circ_hdr(h, off);
        uint32_t expected = WH_CIRC_FREE, next;
        if (wh_atomic_cas(&c->flag, &expected, WH_CIRC_USED, WH_ACQ_REL, WH_ACQUIRE)) {
            next = wh__circ_absorb(h, off, wh_atomic_load(&c->next, WH_ACQUIRE), need);
            if (next - off >= need) {
                uint32_t after = wh__circ_split(h, off, next, need);
                wh_atomic_store(&c->req, bytes, WH_RELAXED);
                wh__circ_advance(h, wk.cursor, wk.seg, after);
                return (uint8_t *)c + 16;
            }
            wh_atomic_store(&c->flag, WH_CIRC_FREE, WH_RELEASE); /* too small */
        } else {
            next = wh_atomic_load(&c->next, WH_ACQUIRE);
        }
        wh__circ_step(h, &wk, next, expected == WH_CIRC_FREE || expected == WH_CIRC_USED || expected == WH_CIRC_GONE);
    }
    return (void *)0;
}

/* Free; a pointer that is not a used chunk is counted as foreign, a free or
 * absorbed one as a double free. */
WH_INLINE WH_HOST_DEVICE void wh__circ_free(const wh_heap *h, void *p) {
    uint32_t off = wh__circ_unit_of(h, p);
    if (off == UINT32_MAX) return;
    wh_circ_header *c = wh__circ_hdr(h, off);
    uint32_t flag = wh_atomic_load(&c->flag, WH_ACQUIRE);
    if (flag != WH_CIRC_USED) {
        bool freed = flag == WH_CIRC_FREE || flag == WH_CIRC_GONE;
        wh__heap_count(freed ? &h->ctl->double_frees : &h->ctl->foreign_frees);
        return;
    }
    uint32_t next = wh_atomic_load(&c->next, WH_ACQUIRE);
    if (next <= off || next > h->end) {
        wh__heap_count(&h->ctl->foreign_frees);
        return;
    }
    if (next < h->end && wh__circ_subheap(h, next) == wh__circ_subheap(h, off)) { /* merge with next */
        wh_circ_header *n = wh__circ_hdr(h, next);
        uint32_t expected = WH_CIRC_FREE;
        if (wh_atomic_cas(&n->flag, &expected, WH_CIRC_GONE, WH_ACQ_REL, WH_RELAXED)) {
            wh_atomic_store(&c->next, wh_atomic_load(&n->next, WH_ACQUIRE), WH_RELEASE);
            wh__circ_absorbed(h, off, next);
        }
    }
    /* the cursor points here while the chunk is still ours, so that whoever
     * absorbs it later finds the cursor and moves it */
    wh_atomic_store(wh__circ_cursor_of(h, wh__circ_subheap(h, off)), (uint64_t)off, WH_RELAXED);
    uint64_t req = wh_atomic_load(&c->req, WH_RELAXED);
    wh_atomic_store(&c->req, 0ull, WH_RELAXED);
    uint32_t expected = WH_CIRC_USED;
    if (!wh_atomic_cas(&c->flag, &expected, WH_CIRC_FREE, WH_ACQ_REL, WH_RELAXED)) {
        wh__heap_count(&h->ctl->double_frees); /* a concurrent free won */
        return;
    }
    wh__heap_track(h, -(int64_t)req);
}

#endif /* WARPHEAP_HEAP_CIRCULAR_H */
