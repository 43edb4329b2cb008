/* SPDX-License-Identifier: MIT */
/* Stream arena, RING policy: a reservation opened before its count is
 * known -- for one-pass producers (seed gpu-executed-heap.txt,
 * "Example Use-Case": output whose size only the GPU learns).
 *
 * The split reserve (arena/reserve.h) still needs the count before the
 * address: a kernel counts, scans, reserves, and only then may its blocks
 * write -- a grid barrier, or a second pass over the data where the blocks
 * do not all fit on the GPU at once.  A producer that sums its counts as
 * it goes (a decoupled look-back scan: each block adds its predecessors'
 * totals and writes at once) needs the address first.  In a ring the plan
 * the last commit made already knows it: whatever the count, the span
 * starts in the cursor's free block and, past it, continues in the next
 * free block in ring order (wh__plan_span).  So:
 *
 *   open (one thread, the lock held: a ticket from wh_arena_ring_reserve_begin
 *     or a handed lock's full read): the window, a span whose count is the
 *     most elements it holds; element i of any reservation up to that count
 *     is at wh_arena_span_at(window, i).  A stale plan (a command ran since
 *     the last commit; a fresh arena) is made again on scratch, a copy of
 *     the image, as the commit would have made it.
 *   close (one thread, any block, the ticket passed on in memory): the
 *     reserve's end for the count the producers reached.  A count past the
 *     window is clamped to it -- the producers could not write further --
 *     and reported (WH_ERR_OUT_OF_MEMORY, counted as a failure): the slot
 *     then holds the first window.count elements, the ring stays in order.
 *
 * Between open and close the lock is held on behalf of the producer, as
 * between a reserve's begin and end; the commit follows as for any
 * reservation.  Included by arena.h after arena/reserve.h. */
#ifndef WARPHEAP_ARENA_WINDOW_H
#define WARPHEAP_ARENA_WINDOW_H

/* Elements of stride (pad bytes of alignment first) that plan block b holds. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__window_cap(const wh_arena_plan_block *b, uint64_t pad, uint64_t stride) {
    return b->size > pad ? wh__arena_div(b->size - pad, stride) : 0u;
}

/* The window of a reservation for elements of stride on plan pl (region
 * at base, bytes long): the cursor's free block as part 0 and the next
 * recorded free block as part 1 -- the two extents wh__plan_span picks for
 * every count up to the window's -- or, where the cursor's block holds
 * nothing, the first recorded block that holds something, alone.  Empty
 * (count 0) if the plan holds nothing. */
WH_INLINE WH_HOST_DEVICE void wh__window_on(const wh_arena_ring_plan *pl, uint64_t base, uint64_t bytes,
                                            uint64_t stride, wh_arena_span *w) {
    memset(w, 0, sizeof *w);
    if (!stride || !pl->granule) return;
    uint32_t n = pl->nfree < WH_ARENA_PLAN_BLOCKS ? pl->nfree : WH_ARENA_PLAN_BLOCKS;
    uint64_t pad = stride - wh__arena_gcd(stride, pl->granule), most = wh__arena_div(bytes, stride);
    uint32_t i = 0;
    while (i < n && wh__window_cap(&pl->blk[i], pad, stride) == 0) ++i;
    if (i == n) return;
    uint64_t c0 = wh__window_cap(&pl->blk[i], pad, stride);
    w->part[0] = wh__plan_handle(base, &pl->blk[i], stride);
    w->count0 = w->count = c0 < most ? c0 : most;
    /* a second extent only after the cursor's own block (plan_span's rule) */
    if (i != 0 || pl->blk[0].id != pl->start || n < 2 || w->count != c0) return;
    uint64_t c1 = wh__window_cap(&pl->blk[1], pad, stride);
    if (c1 == 0) return;
    w->part[1] = wh__plan_handle(base, &pl->blk[1], stride);
    w->count = c0 + c1 < most ? c0 + c1 : most;
}
/* The same for a ticket, whose plan must be current. */
WH_INLINE WH_HOST_DEVICE void wh__window_of(const wh_arena_ring_ticket *t, uint64_t stride, wh_arena_span *w) {
    memset(w, 0, sizeof *w);
    if (t->locked && t->current && !t->partial) wh__window_on(&t->pl, t->base, t->bytes, stride, w);
}

/* Open the reservation of the ticket's slot (lock held: begin's ticket, or
 * a handed lock read with wh_arena_ring_reserve_read) for elements of
 * stride: the window into *w.  A stale plan is made again on scratch
 * (>= wh_arena_meta_bytes, 8-aligned; a block's smem or a global buffer),
 * the ticket updated so that close answers from it; without scratch a
 * stale plan gives an empty window.  One thread. */
WH_INLINE WH_HOST_DEVICE void wh_arena_ring_open(wh_arena_ref a, wh_arena_ring_ticket *t, uint64_t stride,
                                                 void *scratch, uint64_t scratch_bytes, wh_arena_span *w) {
    wh_arena_state *s = a.s;
    uint64_t bytes = wh__arena_image_bytes(s);
    if (t->locked && !t->partial && !t->current && t->policy == WH_ARENA_RING && scratch && scratch_bytes >= bytes &&
        !((uintptr_t)scratch & 7u) && !(bytes & 7u)) {
        wh__ring_copy_words((uint64_t *)scratch, NULL, s, bytes / 8u, true);
        t->pl = wh__ring_plan_make((wh_arena_state *)scratch, t->slot, &t->old);
        t->current = t->pl.valid && t->pl.version == t->commands;
    }
    if (t->current) {
        wh__plan_quote(&t->pl, t->base, stride);
        t->fit = t->pl.q_fit;
    }
    wh__window_of(t, stride, w);
}

/* Whether every element of made sits where the window put it: the same
 * first address and, past part 0, the same split and second address. */
WH_INLINE WH_HOST_DEVICE bool wh_arena_window_holds(const wh_arena_span *w, const wh_arena_span *made) {
    if (made->count > w->count || made->part[0].ptr != w->part[0].ptr) return false;
    return made->count <= made->count0 || (made->count0 == w->count0 && made->part[1].ptr == w->part[1].ptr);
}

/* Close: the reservation of count elements (clamped to the window) written
 * to the slot and the pending record, not yet announced -- as
 * wh_arena_ring_reserve_end_deferred (the caller publishes with
 * wh_arena_ring_reserve_publish after a fence of its own), or announced at
 * once by wh_arena_ring_close.  Returns WH_OK; WH_ERR_OUT_OF_MEMORY when
 * the count was clamped (the slot holds the first w->count elements: what
 * was written); WH_ERR_CORRUPT if the slot's span does not put its elements
 * where the window did (a window that was not this plan's: a forecast gone
 * wrong, arena/forecast.h); or the reserve's own failure. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_close_deferred(wh_arena_ref a, const wh_arena_ring_ticket *t,
                                                                const wh_arena_span *w, uint64_t count, uint64_t stride,
                                                                const wh_arena_span *next) {
    uint64_t n = count <= w->count ? count : w->count;
    wh_status st = wh_arena_ring_reserve_end_deferred(a, t, n, stride, next);
    if (st != WH_OK) return st;
    if (!wh_arena_window_holds(w, t->slot))
        st = WH_ERR_CORRUPT; /* a window not from this plan: */
    else if (n < count)
        st = WH_ERR_OUT_OF_MEMORY; /* the writes are elsewhere      */
    if (st != WH_OK) {             /* the fast path (n >= 1 from a current plan), */
        wh__arena_note(a.s, st);   /* so the commit reports it and mirrors it      */
        a.s->pending.status = (uint32_t)st;
    }
    return st;
}
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_close(wh_arena_ref a, const wh_arena_ring_ticket *t,
                                                       const wh_arena_span *w, uint64_t count, uint64_t stride,
                                                       const wh_arena_span *next) {
    wh_status st = wh_arena_ring_close_deferred(a, t, w, count, stride, next);
    if (t->locked) wh_atomic_store(&a.s->pending.active, 1u, WH_RELEASE); /* as wh_arena_ring_reserve_end */
    return st;
}

#endif /* WARPHEAP_ARENA_WINDOW_H */
