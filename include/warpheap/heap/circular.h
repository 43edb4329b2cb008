/* SPDX-License-Identifier: MIT */
/* CIRCULAR: CMalloc, register-efficient-gpu-allocators.txt section 5.2
 * (Algorithm 3, the pre-split of equation 1, MAX_FRAG).
 *
 * The arena is a circular singly linked list of chunks in 16-byte units.  A
 * chunk starts with a 16-byte header: a tag word (heap/fused.h), the unit of
 * the next chunk, and the requested size (for the heap walk's equation 2).  A
 * sentinel header at the end is always used and points back to unit 0.
 * Allocation walks from the shared cursor, locks a free chunk with a CAS on
 * its state, splits it when it is at least MAX_FRAG times the request, and
 * moves the cursor past it.  Free merges the chunk with its next one if that
 * is free.
 *
 * Departures:
 * - The flag is out of band: a state of 2 bits for every unit (NONE, FREE,
 *   USED, GONE), 16 units a word, in the heap's metadata (1/64 of the arena).
 *   A unit is FREE only while it is the header of a free chunk, and every
 *   lock, merge and free is a CAS on that state, never an access to the
 *   arena.  The paper's argument that a walker is never stalled long enough
 *   to hold a stale offset does not hold with independent scheduling and
 *   preemption: a walker that read `next` of a chunk it does not own may
 *   reach that unit after a merge made it part of a larger chunk and a user
 *   wrote there.  With the flag in the header its CAS raced the user's writes,
 *   and user data that equalled the free flag was taken: memory handed out
 *   twice.  Out of band, that unit is GONE (or NONE), never FREE: the walker
 *   only reads its in-band `next` as a candidate (wh__circ_peek) and goes on.
 *   `next` and `req` stay in the header, written only by the chunk's owner.
 * - A header absorbed by a merge is GONE, in the same CAS that takes it from
 *   free: a second free of a chunk that a neighbour has since absorbed is
 *   then a double free, not a chunk spliced into the middle of another.
 *   Walkers step over GONE to its in-band next; a NONE unit (never a header)
 *   sends them back to a permanent header.
 * - A walker that locks a free chunk too small for it first tries to absorb
 *   the free chunks after it (bounded): the paper merges only on free, which
 *   leaves runs of free chunks that never join.
 * - Free points the cursor at the chunk just freed (the paper moves it past),
 *   and so does a walker at a chunk that absorbed free followers and is still
 *   too small for it: the next walker goes on merging there (wh__circ_take).
 * - A cursor never rests on a header that was absorbed: whoever absorbs a
 *   chunk moves a cursor that points at it (one CAS).  For this to hold, free
 *   sets the cursor while it still owns the chunk, and chunks of different
 *   sub-heaps never merge, so each cursor stays within its own sub-heap and
 *   sub-heap starts are permanent headers (the restart point of a walk that
 *   raced a merge).
 * - Every walk is bounded: by two turns of the ring in units passed and by
 *   WH_HEAP_RETRY_LIMIT chunks; then the request fails (NULL, counted).
 * - Units are 16 bytes with 32-bit offsets: arenas up to 64 GiB.
 *
 * CIRCULAR_MULTI (CMMalloc, section 5.4) is the same list with one cursor per
 * SM, each starting at its own sub-heap of the pre-split (R' = R / #SM); the
 * sub-heaps are linked into the one ring, so a walk crosses into the next.
 * Departure: a walk enters each other sub-heap at its cursor on its first
 * turn (wh_circ_walk).  Crossing a full sub-heap chunk by chunk from its
 * start, as the ring's links lead, made every request of a thread whose own
 * sub-heap was full walk all the chunks after it: quadratic in the fill, and
 * past WH_HEAP_RETRY_LIMIT chunks a NULL with most of the heap free.
 */
#ifndef WARPHEAP_HEAP_CIRCULAR_H
#define WARPHEAP_HEAP_CIRCULAR_H

#include "warpheap/heap/core.h"

/* A unit's state (2 bits in h->circ_states). */
#define WH_CIRC_NONE       0u /* never a header: inside a chunk since creation    */
#define WH_CIRC_FREE       1u /* the header of a free chunk                        */
#define WH_CIRC_USED       2u /* the header of a used (or locked) chunk, sentinel  */
#define WH_CIRC_GONE       3u /* a header absorbed by a merge: inside a chunk      */
/* A header's in-band tag: its state, as heap/fused.h keeps a copy of it. */
#define WH_CIRC_TAG(state) (0xC1A5C1A0u | (state))
#define WH_CIRC_MAX_FRAG   2u  /* split when the chunk is >= 2x the need  */
#define WH_CIRC_MIN_UNITS  16u /* smallest pre-split chunk: 256 B         */
#define WH_CIRC_MERGES     8u  /* free neighbours a walker may absorb     */

typedef struct wh_circ_header {
    uint32_t tag;  /* FUSED: WH_CIRC_TAG of the state (heap/fused.h)  */
    uint32_t next; /* unit of the next chunk's header                 */
    uint64_t req;  /* requested bytes while used                      */
} wh_circ_header;

WH_INLINE WH_HOST_DEVICE wh_circ_header *wh__circ_hdr(const wh_heap *h, uint32_t unit) {
    return (wh_circ_header *)(h->base + (uint64_t)unit * 16u);
}

/* ---- out-of-band states ---------------------------------------------------- */

WH_INLINE WH_HOST_DEVICE uint32_t *wh__circ_state_word(const wh_heap *h, uint32_t unit) {
    return h->circ_states + (unit >> 4);
}
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_state_shift(uint32_t unit) { return (unit & 15u) * 2u; }
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_state(const wh_heap *h, uint32_t unit) {
    return (wh_atomic_load(wh__circ_state_word(h, unit), WH_ACQUIRE) >> wh__circ_state_shift(unit)) & 3u;
}
/* from -> to where others may change the state too (a lock or a merge takes
 * FREE; a free of the same pointer races a free): a CAS on the word, retried
 * only when another unit of the word changed, at most WH_HEAP_RETRY_LIMIT
 * times.  *seen: the state found (from when it changed it); false with
 * *seen == from when the neighbours' changes outlasted the bound. */
WH_INLINE WH_HOST_DEVICE bool wh__circ_state_cas(const wh_heap *h, uint32_t unit, uint32_t from, uint32_t to,
                                                 uint32_t *seen) {
    uint32_t *p = wh__circ_state_word(h, unit), shift = wh__circ_state_shift(unit);
    uint32_t w = wh_atomic_load(p, WH_RELAXED);
    for (uint32_t n = 0; n < WH_HEAP_RETRY_LIMIT; ++n) {
        *seen = (w >> shift) & 3u;
        if (*seen != from) return false;
        if (wh_atomic_cas(p, &w, (w & ~(3u << shift)) | to << shift, WH_ACQ_REL, WH_RELAXED)) return true;
        wh_backoff(n);
    }
    return false;
}
/* from -> to where only the caller changes the state (the header of its own
 * chunk, or a unit inside it): one xor, which publishes the caller's writes
 * to the header (release). */
WH_INLINE WH_HOST_DEVICE void wh__circ_state_flip(const wh_heap *h, uint32_t unit, uint32_t from, uint32_t to) {
    WH_ASSERT(wh__circ_state(h, unit) == from);
    (void)wh_atomic_fetch_xor(wh__circ_state_word(h, unit), (from ^ to) << wh__circ_state_shift(unit), WH_RELEASE);
}

/* The in-band tag (low half) and next (high half) at a unit the caller does
 * not own.  This read races by design: the unit may be the header of another
 * thread's chunk, or, absorbed since the caller learnt of it, user data that
 * its owner is writing.  Any value is safe: it is only a candidate position,
 * and a walker takes a chunk only by a CAS of its out-of-band state from
 * FREE, which a unit has only while it is the header of a free chunk (whose
 * in-band words its last owner wrote before it published FREE).  So on the
 * CPU backend it is a volatile read that ThreadSanitizer does not see, and on
 * the GPU a relaxed load (an atomic: it bypasses the incoherent L1).  A
 * header reached through a link is seen whole: the split publishes it before
 * the link (release), and the walker's read of it depends on the link's
 * value (its address), so it cannot be served before it. */
WH_NO_TSAN WH_INLINE WH_HOST_DEVICE uint64_t wh__circ_peek(const wh_heap *h, uint32_t unit) {
#if WH_ON_GPU
    return wh_atomic_load((uint64_t *)wh__circ_hdr(h, unit), WH_RELAXED);
#else
    return *(const volatile uint64_t *)wh__circ_hdr(h, unit);
#endif
}
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_peek_next(const wh_heap *h, uint32_t unit) {
    return (uint32_t)(wh__circ_peek(h, unit) >> 32);
}

/* Write a header of a heap being made (init: one thread per chunk, whose
 * states may share a word, so the state is or-ed in). */
WH_INLINE WH_HOST_DEVICE void wh__circ_init_header(const wh_heap *h, uint32_t off, uint32_t next, uint32_t state) {
    wh_circ_header *c = wh__circ_hdr(h, off);
    c->tag = WH_CIRC_TAG(state);
    c->next = next;
    c->req = 0;
    (void)wh_atomic_fetch_or(wh__circ_state_word(h, off), state << wh__circ_state_shift(off), WH_RELAXED);
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
    wh__circ_init_header(h, off, next, WH_CIRC_FREE);
}
/* The sentinel: always used, its next unit 0. */
WH_INLINE WH_HOST_DEVICE void wh__circ_init_sentinel(const wh_heap *h) {
    wh__circ_init_header(h, h->end, 0, WH_CIRC_USED);
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

/* A walk for one request (Algorithm 3, lines 2-3).  It starts at the cursor
 * of the caller's sub-heap.  On its first turn of the ring it enters every
 * other sub-heap at that sub-heap's cursor, where its free room is (a cursor
 * is left after the sub-heap's last allocation, or on its last free), and on
 * leaving a sub-heap that it entered past its start, it probes that start
 * once (room freed behind the cursor, as when a whole sub-heap was freed in
 * order); a sub-heap full up to its cursor costs two steps.  Then it walks
 * the ring chunk by chunk from its own sub-heap's start, for the room behind
 * the cursors.  Bounded by two turns of the ring in units passed and by
 * WH_HEAP_RETRY_LIMIT chunks. */
typedef struct wh_circ_walk {
    uint64_t travelled; /* units passed                                   */
    uint32_t need;      /* units with the header                          */
    uint32_t off, steps;
    uint32_t seg;     /* the sub-heap of off                                */
    uint32_t from;    /* where the walk entered seg                         */
    uint32_t entered; /* sub-heaps entered: the first turn is subheaps - 1  */
    bool probe;       /* off is seg's start, probed on the way out of seg   */
    bool held;        /* seg's cursor is left where the walk merged (take)  */
} wh_circ_walk;

/* Start at the cursor of the caller's sub-heap; false if it can never fit. */
WH_INLINE WH_HOST_DEVICE bool wh__circ_walk_begin(const wh_heap *h, uint64_t bytes, wh_circ_walk *w) {
    uint64_t need = 1u + (bytes + 15u) / 16u;
    if (need > h->end) return false;
    w->need = (uint32_t)need;
    w->seg = wh__circ_my_subheap(h);
    w->off = w->from = (uint32_t)wh_atomic_load(wh__circ_cursor_of(h, w->seg), WH_RELAXED);
    w->travelled = 0;
    w->steps = 0;
    w->entered = 0;
    w->probe = w->held = false;
    return true;
}
/* The walk has reached the end of sub-heap w->seg: probe its start (first
 * turn, entered past it), or enter the next sub-heap (the sentinel wraps to
 * sub-heap 0) at its cursor (first turn) or at its start. */
WH_INLINE WH_HOST_DEVICE void wh__circ_leave(const wh_heap *h, wh_circ_walk *w) {
    uint32_t start = w->seg * h->subheap_units;
    bool first = w->entered + 1u < h->subheaps; /* the next one is entered at its cursor */
    if (h->subheaps > 1u && w->entered < h->subheaps && !w->probe && w->from != start) {
        w->off = start;
        w->probe = true;
        return;
    }
    w->probe = w->held = false;
    w->seg = w->seg + 1u == h->subheaps ? 0u : w->seg + 1u;
    start = w->seg * h->subheap_units;
    w->off = first ? (uint32_t)wh_atomic_load(wh__circ_cursor_of(h, w->seg), WH_RELAXED) : start;
    w->from = w->off;
    w->entered++;
    w->travelled += 1;
}
/* Whether the walk goes on to w->off. */
WH_INLINE WH_HOST_DEVICE bool wh__circ_walk_on(const wh_heap *h, wh_circ_walk *w) {
    while (w->steps < WH_HEAP_RETRY_LIMIT && w->travelled <= 2ull * h->end) {
        ++w->steps;
        if (w->off < h->end) return true;
        wh__circ_leave(h, w); /* the sentinel: a cursor may hold it */
    }
    return false;
}
/* The walker read `next` at w->off (header: w->off was a header, by its
 * state, or by its tag for the fused kinds): go on there, or past the end of
 * the sub-heap.  A next that cannot be right means a merge raced it or it
 * reached user data: it restarts at the sub-heap's start, a permanent header. */
WH_INLINE WH_HOST_DEVICE void wh__circ_step(const wh_heap *h, wh_circ_walk *w, uint32_t next, bool header) {
    if (w->probe) {
        wh__circ_leave(h, w);
    } else if (next <= w->off || next > h->end || !header) {
        w->travelled += 1;
        w->off = w->from = w->seg * h->subheap_units;
    } else if (next == h->end || wh__circ_subheap(h, next) != w->seg) {
        w->travelled += next - w->off;
        wh__circ_leave(h, w);
    } else {
        w->travelled += next - w->off;
        w->off = next;
    }
}

/* The locked chunk at off absorbed the chunk at gone: a cursor must never be
 * left on a header that no longer exists, so move it to off. */
WH_INLINE WH_HOST_DEVICE void wh__circ_absorbed(const wh_heap *h, uint32_t off, uint32_t gone) {
    uint64_t expected = gone;
    (void)wh_atomic_cas(wh__circ_cursor_of(h, wh__circ_subheap(h, gone)), &expected, (uint64_t)off, WH_RELAXED,
                        WH_RELAXED);
}

/* Try to absorb free chunks after the locked chunk at off; returns its next.
 * Each one's state goes from FREE to GONE by CAS: its header is ours then. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_absorb(const wh_heap *h, uint32_t off, uint32_t next, uint32_t need) {
    wh_circ_header *c = wh__circ_hdr(h, off);
    uint32_t seg = wh__circ_subheap(h, off), seen;
    for (uint32_t k = 0; k < WH_CIRC_MERGES && next < h->end && next - off < need; ++k) {
        if (wh__circ_subheap(h, next) != seg) break;
        if (!wh__circ_state_cas(h, next, WH_CIRC_FREE, WH_CIRC_GONE, &seen)) break;
        uint32_t nn = wh_atomic_load(&wh__circ_hdr(h, next)->next, WH_RELAXED);
        wh_atomic_store(&c->next, nn, WH_RELAXED); /* next's header is now inside c */
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

/* Split the locked chunk [off, next) after `need` units if worth it: the new
 * header, then its state FREE (release), and only then the link to it
 * (release).  A walker that reads the link is then sure to find a header
 * there: with the link first, or the header's words visible after the link
 * (relaxed stores reach the GPU's L2 in any order), it found a NONE state or
 * an old tag, took the unit for user data and restarted at the sub-heap's
 * start, behind the fill; a free chunk found there pulled the cursor back,
 * and the next walks used up their bound crossing used chunks (a 12 GiB
 * fused heap failed every request at half full).  Making the cut FREE
 * before the link is safe: until the link, no walk leads to it, and only
 * we own the chunk it lies in.  tags: keep the in-band tags (the fused
 * kinds). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__circ_split(const wh_heap *h, uint32_t off, uint32_t next, uint32_t need,
                                                 bool tags) {
    uint32_t cut = wh__circ_cut(off, next, need);
    if (cut == next) return next;
    wh_circ_header *t = wh__circ_hdr(h, cut);
    if (tags) wh_atomic_store(&t->tag, WH_CIRC_TAG(WH_CIRC_FREE), WH_RELAXED);
    wh_atomic_store(&t->next, next, WH_RELAXED);
    wh_atomic_store(&t->req, 0ull, WH_RELAXED);
    /* inside our chunk, cut is NONE or GONE, and only we change it */
    uint32_t inside = wh__circ_state(h, cut);
    WH_ASSERT(inside == WH_CIRC_NONE || inside == WH_CIRC_GONE);
    wh__circ_state_flip(h, cut, inside, WH_CIRC_FREE);
    wh_atomic_store(&wh__circ_hdr(h, off)->next, cut, WH_RELEASE);
    return cut;
}

/* The walker has locked the chunk at wk->off: absorb, split and take it for
 * `bytes`, or give it back when it stays too small (NULL).  *next: where the
 * walk goes on.  A chunk that absorbed free followers and is still too small
 * keeps the cursor (set while the chunk is ours, as free does): the next
 * walker goes on merging there, where an allocation further on would move the
 * cursor past it and leave the merged room to a walk that comes round the
 * whole ring (the pre-split's smallest chunks, for a request larger than
 * WH_CIRC_MERGES + 1 of them). */
WH_INLINE WH_HOST_DEVICE void *wh__circ_take(const wh_heap *h, wh_circ_walk *wk, uint64_t bytes, uint32_t *next,
                                             bool tags) {
    uint32_t off = wk->off, need = wk->need;
    wh_circ_header *c = wh__circ_hdr(h, off);
    if (tags) wh_atomic_store(&c->tag, WH_CIRC_TAG(WH_CIRC_USED), WH_RELAXED);
    uint32_t first = wh_atomic_load(&c->next, WH_RELAXED);
    WH_ASSERT(first > off && first <= h->end); /* a FREE unit heads a chunk */
    *next = wh__circ_absorb(h, off, first, need);
    if (*next - off >= need) {
        uint32_t after = wh__circ_split(h, off, *next, need, tags);
        wh_atomic_store(&c->req, bytes, WH_RELAXED);
        if (!wk->held) wh__circ_advance(h, wh__circ_cursor_of(h, wk->seg), wk->seg, after);
        return (uint8_t *)c + 16;
    }
    if (*next != first && !wk->held) {
        wh_atomic_store(wh__circ_cursor_of(h, wk->seg), (uint64_t)off, WH_RELAXED);
        wk->held = true;
    }
    if (tags) wh_atomic_store(&c->tag, WH_CIRC_TAG(WH_CIRC_FREE), WH_RELAXED);
    wh__circ_state_flip(h, off, WH_CIRC_USED, WH_CIRC_FREE); /* too small */
    return (void *)0;
}

/* Algorithm 3: at every chunk, try the lock; where it fails, on to the next
 * chunk, whose unit is a candidate read from the header (wh__circ_peek). */
WH_INLINE WH_HOST_DEVICE void *wh__circ_malloc(const wh_heap *h, uint64_t bytes) {
    wh_circ_walk wk;
    if (!wh__circ_walk_begin(h, bytes, &wk)) return (void *)0;
    while (wh__circ_walk_on(h, &wk)) {
        uint32_t state, next;
        if (wh__circ_state_cas(h, wk.off, WH_CIRC_FREE, WH_CIRC_USED, &state)) {
            void *p = wh__circ_take(h, &wk, bytes, &next, false);
            if (p) return p;
        } else {
            next = wh__circ_peek_next(h, wk.off);
        }
        wh__circ_step(h, &wk, next, state != WH_CIRC_NONE);
    }
    return (void *)0;
}

/* Free; a pointer that is not a used chunk's is counted as foreign, a free or
 * absorbed one's as a double free.  tags: keep the in-band tags (fused). */
WH_INLINE WH_HOST_DEVICE void wh__circ_free_as(const wh_heap *h, void *p, bool tags) {
    uint32_t off = wh__circ_unit_of(h, p);
    if (off == UINT32_MAX) return;
    uint32_t state = wh__circ_state(h, off);
    if (state != WH_CIRC_USED) {
        wh__heap_count(state == WH_CIRC_NONE ? &h->ctl->foreign_frees : &h->ctl->double_frees);
        return;
    }
    wh_circ_header *c = wh__circ_hdr(h, off);
    uint32_t next = wh_atomic_load(&c->next, WH_RELAXED);
    if (next <= off || next > h->end) { /* the header was overwritten */
        wh__heap_count(&h->ctl->foreign_frees);
        return;
    }
    if (next < h->end && wh__circ_subheap(h, next) == wh__circ_subheap(h, off)) /* merge with next */
        if (wh__circ_state_cas(h, next, WH_CIRC_FREE, WH_CIRC_GONE, &state)) {
            wh_atomic_store(&c->next, wh_atomic_load(&wh__circ_hdr(h, next)->next, WH_RELAXED), WH_RELAXED);
            wh__circ_absorbed(h, off, next);
        }
    /* the cursor points here while the chunk is still ours, so that whoever
     * absorbs it later finds the cursor and moves it */
    wh_atomic_store(wh__circ_cursor_of(h, wh__circ_subheap(h, off)), (uint64_t)off, WH_RELAXED);
    uint64_t req = wh_atomic_load(&c->req, WH_RELAXED);
    wh_atomic_store(&c->req, 0ull, WH_RELAXED);
    if (tags) wh_atomic_store(&c->tag, WH_CIRC_TAG(WH_CIRC_FREE), WH_RELAXED);
    if (!wh__circ_state_cas(h, off, WH_CIRC_USED, WH_CIRC_FREE, &state)) {
        if (state != WH_CIRC_USED) { /* a concurrent free of p won */
            wh__heap_count(&h->ctl->double_frees);
            return;
        }
        /* the neighbours' changes outlasted the CAS's bound; only the owner
         * leaves USED */
        wh__circ_state_flip(h, off, WH_CIRC_USED, WH_CIRC_FREE);
    }
    wh__heap_track(h, -(int64_t)req);
}
WH_INLINE WH_HOST_DEVICE void wh__circ_free(const wh_heap *h, void *p) { wh__circ_free_as(h, p, false); }

#endif /* WARPHEAP_HEAP_CIRCULAR_H */
