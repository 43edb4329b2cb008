/* SPDX-License-Identifier: MIT */
/* Stream arena, RING policy: a replace split in two so that the block core
 * stays off the critical path of a frame.  Seed gpu-executed-heap.txt,
 * "Example Use-Case" (output whose size only the GPU learns).
 *
 * A replace (free the slot's span, allocate count elements into it) run by
 * one thread is a chain of dozens of dependent loads through the descriptors
 * and the free index; staged in a block's smem it still stands between a
 * kernel's count and the kernels that wait for the address.  Yet in a
 * FIFO ring the answer is known before the count: the new span starts at
 * the cursor, in the free block there once the oldest span is freed.  So:
 *
 *   reserve (one thread, once the count is known): take the lock; if the
 *     plan the previous commit left is still current (no command since, the
 *     same slot holding the same span) compute the span from the plan's few
 *     words -- the same span wh__arena_do_alloc_span would give -- write it
 *     to the slot and return: a handful of independent loads and a little
 *     arithmetic.  Otherwise run the whole replace there (the slow path).
 *     The lock stays held.  In two halves (begin: lock and loads; end: the
 *     span for the count) a kernel takes the lock while it still sums.
 *   commit (wh_arena_ring_commit: a block or one thread, any time later,
 *     before the next arena command; or launched ahead on another stream,
 *     waiting -- bounded -- until the reservation is published):
 *     run the real replace on the block core (staged in smem),
 *     check it gives the published span (WH_ERR_CORRUPT if not), account,
 *     write the mirror; then, on the staged copy, free the span of the slot
 *     the next reserve will replace and record the free blocks from the
 *     cursor in ring order: the next plan.  Release the lock.
 *
 * Everything the slot holds between reserve and commit is final; only the
 * bookkeeping lags.  Same semantics as wh_arena_replace_span_async: the slot
 * written, a null span and a status on failure (failures always take the
 * slow path, so the status is the core's own).  Included by arena.h. */
#ifndef WARPHEAP_ARENA_RESERVE_H
#define WARPHEAP_ARENA_RESERVE_H

/* A span read word by word from memory another block or kernel wrote. */
WH_INLINE WH_HOST_DEVICE wh_arena_span wh__span_load(const wh_arena_span *p) {
    wh_arena_span sp;
    uint64_t d[sizeof sp / 8u];
    const volatile uint64_t *w = (const volatile uint64_t *)p;
    for (unsigned i = 0; i < sizeof sp / 8u; ++i) d[i] = w[i];
    memcpy(&sp, d, sizeof sp);
    return sp;
}

WH_INLINE WH_HOST_DEVICE bool wh__span_same(const wh_arena_span *a, const wh_arena_span *b) {
    for (int p = 0; p < 2; ++p)
        if (a->part[p].ptr != b->part[p].ptr || a->part[p].block != b->part[p].block ||
            a->part[p].gen != b->part[p].gen)
            return false;
    return a->count0 == b->count0 && a->count == b->count;
}

/* The handle a take of planned block b gives (as wh__arena_handle). */
WH_INLINE WH_HOST_DEVICE wh_handle wh__plan_handle(uint64_t base, const wh__plan_block *b, uint64_t stride) {
    wh_handle h;
    h.ptr = base + wh__arena_align_up(b->addr, stride);
    h.block = b->id;
    h.gen = b->gen;
    return h;
}

WH_INLINE WH_HOST_DEVICE uint64_t wh__plan_round(uint64_t granule, uint64_t size) {
    uint64_t g = granule - 1u;
    return size > UINT64_MAX - g ? 0 : (size + g) & ~g;
}

/* The span wh__arena_do_alloc_span gives on the planned state (next fit
 * from the cursor's block, a second extent in the next free block that
 * holds the rest), or false where the plan cannot tell: a request that
 * fails, or an answer past the recorded free blocks.  Mirrors its tests. */
WH_INLINE WH_HOST_DEVICE bool wh__plan_span(const wh__ring_plan *pl, uint64_t base, uint64_t bytes, uint64_t count,
                                            uint64_t stride, wh_arena_span *out) {
    if (count == 0 || stride == 0 || pl->granule == 0 || count > wh__arena_div(bytes, stride)) return false;
    uint32_t n = pl->nfree < WH__PLAN_BLOCKS ? pl->nfree : WH__PLAN_BLOCKS;
    uint64_t pad = stride - wh__arena_gcd(stride, pl->granule);
    const wh__plan_block *first = n && pl->blk[0].id == pl->start ? &pl->blk[0] : NULL; /* cursor's, free */
    uint64_t room = first ? first->size : 0;
    uint64_t n0 = room > pad ? wh__arena_div(room - pad, stride) : 0;
    out->part[1] = wh_handle_null();
    if (n0 != 0 && n0 < count && wh__plan_round(pl->granule, count * stride + pad) > room) {
        uint64_t need1 = wh__plan_round(pl->granule, (count - n0) * stride + pad);
        const wh__plan_block *b1 = NULL;
        for (uint32_t i = 1; need1 && i < n && !b1; ++i) /* after the cursor's block, in ring order */
            if (pl->blk[i].size >= need1) b1 = &pl->blk[i];
        if (!b1 && !pl->complete) return false;
        if (b1) {
            out->part[0] = wh__plan_handle(base, first, stride);
            out->part[1] = wh__plan_handle(base, b1, stride);
            out->count0 = n0;
            out->count = count;
            return true;
        }
    }
    uint64_t need = count * stride + pad;
    if (need > bytes || need < pad) return false;
    uint64_t size = wh__plan_round(pl->granule, need);
    for (uint32_t i = 0; size && i < n; ++i) {
        if (pl->blk[i].size < size) continue;
        out->part[0] = wh__plan_handle(base, &pl->blk[i], stride);
        out->count0 = out->count = count;
        return true;
    }
    return false; /* out of memory, or further on: the core says */
}

/* The plan's quote for stride (the stride of the reservation being
 * committed: a ring's next is most likely the same): the counts whose
 * answer is the cursor's free block as one extent -- wh__plan_span's
 * last case for i = 0, taken before any split, for every count <= q_fit
 * (n0 >= count, and the rounded need fits room) -- so that the reserve
 * answers them with one comparison. */
WH_INLINE WH_HOST_DEVICE void wh__plan_quote(wh__ring_plan *pl, uint64_t base, uint64_t stride) {
    pl->q_stride = stride;
    pl->q_fit = 0;
    if (!stride || !pl->granule || !pl->nfree || pl->blk[0].id != pl->start) return;
    uint64_t pad = stride - wh__arena_gcd(stride, pl->granule), room = pl->blk[0].size;
    if (room <= pad) return;
    uint64_t n0 = wh__arena_div(room - pad, stride);
    if (n0 == 0 || wh__plan_round(pl->granule, n0 * stride + pad) > room) return;
    pl->q_fit = n0;
    pl->q_h0 = wh__plan_handle(base, &pl->blk[0], stride);
}

/* begin: take the lock and read the state the reserve of *slot needs.
 * lock_polls: 0, the arena's lock (backoff, WH_ARENA_LOCK_TRIES); else polls
 * of the lock word at the shortest backoff, for a reserve that expects a
 * commit in flight to unlock within microseconds.  On WH_ERR_RETRY_LIMIT
 * (counted) no lock is held and end does nothing.  Its first half alone,
 * the lock: */
WH_INLINE WH_HOST_DEVICE wh_status wh__ring_reserve_lock(wh_arena_ref a, uint32_t lock_polls) {
    wh__arena_state *s = a.s;
    if (lock_polls ? wh__arena_lock_poll(s, lock_polls) : wh__arena_lock(s)) return WH_OK;
    wh__arena_note(s, WH_ERR_RETRY_LIMIT);
    return WH_ERR_RETRY_LIMIT;
}
/* begin's second half, the lock held: the loads.  A kernel may take the
 * lock early in one block (wh__ring_reserve_lock) and read in the
 * block that reserves, once that one has seen the lock taken (acquire);
 * or read after a commit handed the lock on (wh_arena_ring_baton). */
WH_INLINE WH_HOST_DEVICE void wh__ring_reserve_read(wh_arena_ref a, wh_arena_span *slot, wh_arena_ring_ticket *t) {
    wh__arena_state *s = a.s;
    t->slot = slot;
    t->locked = 1u;
    t->partial = 0u;
    t->pl = s->plan; /* all loads: independent, in flight together */
    t->old = *slot;
    t->commands = s->commands;
    t->base = s->base;
    t->bytes = s->bytes;
    t->planned = s->planned;
    t->policy = s->policy;
    /* while the count is still being summed: whether the plan holds (no
     * command since, the same slot holding the same span) */
    const wh__ring_plan *pl = &t->pl;
    t->current = pl->valid && pl->version == t->commands && pl->slot == (uint64_t)(uintptr_t)slot &&
                 t->policy == WH_ARENA_RING && wh__span_same(&t->old, &pl->expect);
    t->fit = t->current ? pl->q_fit : 0u;
}
/* read for a reserve the lock was handed to (wh_arena_ring_baton; only
 * then): no command ran since the commit that made the plan -- none could,
 * the lock never came free -- so the plan is current if it is this slot's,
 * and the slot holds what the plan expects.  Only the quote's words are
 * loaded; a count the quote does not answer has end read the rest. */
WH_INLINE WH_HOST_DEVICE void wh_arena_ring_reserve_read_handed(wh_arena_ref a, wh_arena_span *slot,
                                                                wh_arena_ring_ticket *t) {
    wh__arena_state *s = a.s;
    const wh__ring_plan *p = &s->plan;
    t->slot = slot;
    t->locked = 1u;
    t->partial = 1u;
    t->pl.valid = p->valid;
    t->pl.slot = p->slot;
    t->pl.q_stride = p->q_stride;
    t->pl.q_fit = p->q_fit;
    t->pl.q_h0 = p->q_h0;
    t->old = p->expect;
    t->planned = s->planned;
    t->current = t->pl.valid && t->pl.slot == (uint64_t)(uintptr_t)slot;
    t->fit = t->current ? t->pl.q_fit : 0u;
}
/* Both halves: */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_reserve_begin(wh_arena_ref a, wh_arena_span *slot, uint32_t lock_polls,
                                                               wh_arena_ring_ticket *t) {
    t->slot = slot;
    t->locked = 0u;
    wh_status st = wh__ring_reserve_lock(a, lock_polls);
    if (st != WH_OK) return st;
    wh__ring_reserve_read(a, slot, t);
    return WH_OK;
}

/* The reserve's slow path (the plan cannot answer): the whole replace on
 * the block core, lock held.  Inline: out of line (__noinline__) it leaves
 * the calling warp divergent at the kernel's next block barrier (as
 * synccheck reports). */
WH_INLINE WH_HOST_DEVICE wh_status wh__ring_reserve_slow(wh__arena_state *s, uint64_t count, uint64_t stride,
                                                         wh_arena_span *slot) {
    s->pending.fast = 0u; /* the core now, commit plans only */
    wh_status st = wh__arena_replace_span_locked(s, count, stride, slot);
    wh__arena_note(s, st);
    wh__arena_publish(s, st);
    return st;
}

/* end, but for the flag a commit waits on: the slot and the pending
 * record written, not yet announced.  The caller publishes them with
 * wh_arena_ring_reserve_publish after a fence of its own (as the one that
 * opens a grid barrier), so the reservation costs no fence of its own on
 * a kernel's critical path. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_reserve_end_deferred(wh_arena_ref a, const wh_arena_ring_ticket *t,
                                                                      uint64_t count, uint64_t stride,
                                                                      const wh_arena_span *next) {
    wh__arena_state *s = a.s;
    if (!t->locked) return WH_ERR_RETRY_LIMIT; /* begin counted it */
    wh_arena_span *slot = t->slot;
    wh__ring_pending *p = &s->pending;
    p->slot = (uint64_t)(uintptr_t)slot;
    p->next = (uint64_t)(uintptr_t)next;
    p->count = count;
    p->stride = stride;
    wh_arena_span made;
    const wh__ring_plan *pl = &t->pl;
    wh_arena_ring_ticket full;
    if (stride == pl->q_stride && count - 1u < t->fit) { /* the quote: one extent, the cursor's block */
        made.part[0] = pl->q_h0;
        made.part[1] = wh_handle_null();
        made.count0 = made.count = count;
    } else {
        if (t->partial) { /* read_handed's: the rest of the state */
            wh__ring_reserve_read(a, slot, &full);
            t = &full;
            pl = &t->pl;
        }
        if (!(t->current && wh__plan_span(pl, t->base, t->bytes, count, stride, &made)))
            return wh__ring_reserve_slow(s, count, stride, slot);
    }
    *slot = made;
    p->old = t->old;
    p->made = made;
    p->fast = 1u;
    s->planned = t->planned + 1u;
    return WH_OK;
}

/* Announce a deferred reservation (wh_arena_ring_reserve_end_deferred's,
 * whatever its status; not after WH_ERR_RETRY_LIMIT from begin: no lock),
 * the caller's fence since.  A commit that waits for it
 * (wh__ring_pending_for) reads the flag with acquire, then the rest: the
 * fence before this store orders the slot and the record first.  On the
 * CPU a release store (ThreadSanitizer models no stand-alone fence). */
WH_INLINE WH_HOST_DEVICE void wh_arena_ring_reserve_publish(wh_arena_ref a) {
#if WH_ON_GPU
    wh_atomic_store(&a.s->pending.active, 1u, WH_RELAXED);
#else
    wh_atomic_store(&a.s->pending.active, 1u, WH_RELEASE);
#endif
}

/* Publish the replace of the ticket's slot by count elements (the plan's
 * answer, else the whole replace), the lock kept for the commit.  next: the
 * slot the replace after this one will free (its plan is made by the
 * commit); NULL: none.  The caller's fence (or the kernel's end) publishes
 * the slot.  Returns WH_OK, or the slow path's failure. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_reserve_end(wh_arena_ref a, const wh_arena_ring_ticket *t,
                                                             uint64_t count, uint64_t stride,
                                                             const wh_arena_span *next) {
    wh_status st = wh_arena_ring_reserve_end_deferred(a, t, count, stride, next);
    if (!t->locked) return st;
    /* last, with release: a commit that waits for the reservation
     * (wh__ring_pending_for) reads active (acquire) before the rest, and
     * must not stage the image mid-replace */
    wh_atomic_store(&a.s->pending.active, 1u, WH_RELEASE);
    return st;
}

/* Reserve: publish the replace of *slot by count elements into *slot,
 * lock taken and kept for the commit -- begin and end back to back.  One
 * thread; not several lanes of one warp (LOCK RULE).  Returns the status:
 * WH_OK, WH_ERR_RETRY_LIMIT (no lock), or the slow path's failure. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_reserve_thread(wh_arena_ref a, uint64_t count, uint64_t stride,
                                                                wh_arena_span *slot, const wh_arena_span *next) {
    wh_arena_ring_ticket t;
    wh_status st = wh_arena_ring_reserve_begin(a, slot, 0, &t);
    return st != WH_OK ? st : wh_arena_ring_reserve_end(a, &t, count, stride, next);
}

/* Commit's first half (lock held; s the state or a staged copy of it): the
 * real replace, which must give the published span. */
WH_INLINE WH_HOST_DEVICE wh_status wh__ring_commit_locked(wh__arena_state *s) {
    wh__ring_pending *p = &s->pending;
    wh_arena_span sp = p->old;
    wh_status st = wh__arena_replace_span_locked(s, p->count, p->stride, &sp);
    if (st == WH_OK && !wh__span_same(&sp, &p->made)) st = WH_ERR_CORRUPT;
    return st;
}

/* Commit's second half: the plan for the next replace of *next, which holds
 * held (read by the caller: a block reads it while thread 0 replaces), made
 * on s -- a scratch copy of the image, which it changes (frees held). */
WH_INLINE WH_HOST_DEVICE wh__ring_plan wh__ring_plan_make(wh__arena_state *s, const wh_arena_span *next,
                                                          const wh_arena_span *held) {
    wh__ring_plan pl;
    memset(&pl, 0, sizeof pl);
    if (!next || s->policy != WH_ARENA_RING) return pl;
    pl.expect = *held;
    pl.slot = (uint64_t)(uintptr_t)next;
    pl.version = s->commands;
    for (int k = 0; k < 2; ++k)
        if (pl.expect.part[k].ptr && wh__arena_do_free(s, pl.expect.part[k]) != WH_OK) return pl; /* not valid */
    wh_blocks *c = wh__arena_core(s);
    const wh_block *d = wh_blocks_desc(c);
    const uint32_t *gen = wh__arena_gen(s);
    uint32_t b = wh__ring_start(s), x = b;
    pl.start = b;
    pl.granule = c->granule;
    for (uint32_t k = 0; k < c->capacity && x != WH_BLOCK_NONE; ++k) {
        if (d[x].state == WH_BLOCK_FREE) {
            if (pl.nfree == WH__PLAN_BLOCKS) break; /* more free blocks than recorded */
            wh__plan_block *e = &pl.blk[pl.nfree++];
            e->addr = d[x].addr;
            e->size = d[x].size;
            e->id = x;
            e->gen = gen[x] + 1u;
        }
        x = wh__ring_succ(s, d, x);
        if (x == b) {
            pl.complete = 1u;
            break;
        }
    }
    pl.valid = 1u;
    wh__plan_quote(&pl, s->base, s->pending.stride);
    return pl;
}

/* Whether a reservation for slot is in flight (lock held by it). */
WH_INLINE WH_HOST_DEVICE bool wh__ring_pending_for(wh__arena_state *s, const wh_arena_span *slot) {
    return wh_atomic_load(&s->pending.active, WH_ACQUIRE) != 0u && s->pending.slot == (uint64_t)(uintptr_t)slot;
}

WH_INLINE WH_HOST_DEVICE wh_arena_ring_baton wh_arena_ring_unlock_baton(void) {
    wh_arena_ring_baton b = {NULL, 0u, 0u};
    return b;
}

/* The commit's end: hand the lock on, or unlock; release either way. */
WH_INLINE WH_HOST_DEVICE void wh__ring_release(wh__arena_state *s, wh_arena_ring_baton b) {
    if (b.word)
        wh_atomic_fetch_add(b.word, b.handed, WH_RELEASE);
    else
        wh__arena_unlock(s);
}
/* No reservation came: the next reserve must take the lock itself. */
WH_INLINE WH_HOST_DEVICE void wh__ring_pass_empty(wh_arena_ring_baton b) {
    if (b.word) wh_atomic_fetch_add(b.word, b.empty, WH_RELEASE);
}

/* Words of the image a copy reloads once it has seen a reservation: those
 * a reserve's fast path writes (the pending record and `planned`, adjacent)
 * and those others change outside the lock (atomics). */
WH_INLINE WH_HOST_DEVICE bool wh__ring_reload_word(uint64_t i) {
    return (i >= offsetof(wh__arena_state, pending) / 8u && i < (offsetof(wh__arena_state, planned) + 8u) / 8u) ||
           wh__arena_word_unlocked(i);
}
/* Words a commit writes back from its copy: not those others change
 * outside the lock, nor the plan's (the commit writes the plan whole). */
WH_INLINE WH_HOST_DEVICE bool wh__ring_written_back(uint64_t i) {
    return !wh__arena_word_unlocked(i) && !(i >= offsetof(wh__arena_state, plan) / 8u &&
                                            i < (offsetof(wh__arena_state, plan) + sizeof(wh__ring_plan)) / 8u);
}

/* A copy's words from the real image: all of them, or those a copy
 * reloads (wh__ring_reload_word); orig (unless NULL) gets them too.  The
 * words others change outside the lock are read atomically, one field at a
 * time (a reserve may poll the lock by CAS meanwhile). */
WH_INLINE WH_HOST_DEVICE void wh__ring_copy_words(uint64_t *img, uint64_t *orig, wh__arena_state *s, uint64_t words,
                                                  bool all) {
    const uint64_t *real = (const uint64_t *)s;
    for (uint64_t i = 0; i < words; ++i)
        if (!wh__arena_word_unlocked(i) && (all || wh__ring_reload_word(i))) {
            img[i] = real[i];
            if (orig) orig[i] = img[i];
        }
    wh__arena_state *copy = (wh__arena_state *)img;
    copy->lock = wh_atomic_load(&s->lock, WH_RELAXED);
    copy->first_status = wh_atomic_load(&s->first_status, WH_RELAXED);
    copy->failures = wh_atomic_load(&s->failures, WH_RELAXED);
}

/* WH_ARENA_COMMIT_NOW by one thread, in place (CPU backend; a block without
 * smem): the reservation of slot, if one is in flight; the next plan on
 * scratch (a copy of the image: scratch_bytes >= wh_arena_meta_bytes,
 * 8-aligned), none without.  Hands the lock on through baton (an unlock
 * baton: releases it; also with no reservation in flight: `empty`).
 * Returns the commit's status. */
WH_INLINE WH_HOST_DEVICE wh_status wh__ring_commit_now_thread(wh_arena_ref a, const wh_arena_span *slot, void *scratch,
                                                              uint64_t scratch_bytes, wh_arena_ring_baton baton) {
    wh__arena_state *s = a.s;
    if (!wh__ring_pending_for(s, slot)) {
        wh__ring_pass_empty(baton);
        return WH_OK;
    }
    wh_status st = WH_OK;
    if (s->pending.fast) {
        st = wh__ring_commit_locked(s);
        wh__arena_note(s, st);
        wh__arena_publish(s, st);
    }
    s->pending.active = 0u;
    s->plan.valid = 0u;
    uint64_t bytes = wh__arena_image_bytes(s);
    if (st == WH_OK && scratch && scratch_bytes >= bytes && !((uintptr_t)scratch & 7u) && !(bytes & 7u)) {
        wh__ring_copy_words((uint64_t *)scratch, NULL, s, bytes / 8u, true);
        const wh_arena_span *next = (const wh_arena_span *)(uintptr_t)s->pending.next;
        wh_arena_span held;
        memset(&held, 0, sizeof held);
        if (next) held = wh__span_load(next);
        s->plan = wh__ring_plan_make((wh__arena_state *)scratch, next, &held);
    }
    wh__ring_release(s, baton);
    return st;
}

/* ---- a committer that keeps its copy of the image --------------------- */

/* What a committer's copy holds against the real image: the image itself
 * as staged after the reservation was seen (FRESH); the image as the last
 * commit wrote it back, the reserve's words since reloaded (COLD); that
 * plus the free of `freed` from `slot`, which the last plan made (WARM: a
 * reservation that replaces it only allocates); or nothing it can vouch for
 * (DIRTY: a plan whose free failed half way). */
enum { WH__COPY_FRESH, WH__COPY_COLD, WH__COPY_WARM, WH__COPY_DIRTY };
typedef struct wh__ring_memo {
    uint32_t state;
    uint64_t slot;
    wh_arena_span freed;
} wh__ring_memo;

/* The reservation in the copy's pending record (active), committed on the
 * copy: the whole replace, or on a WARM copy whose free is the
 * reservation's only the allocation; either must give the published span.
 * False, nothing done, if the copy must be staged again first (a slow-path
 * reserve replaced on the real image; a free on the copy that is not this
 * reservation's); then again on the FRESH copy. */
WH_INLINE WH_HOST_DEVICE bool wh__ring_commit_copy(wh__arena_state *copy, const wh__ring_memo *m, wh_status *st) {
    wh__ring_pending *p = &copy->pending;
    *st = WH_OK;
    if (!p->fast) return m->state == WH__COPY_FRESH; /* the reserve's slow path did it all */
    if (m->state == WH__COPY_DIRTY) return false;
    if (m->state == WH__COPY_WARM) {
        if (p->slot != m->slot || !wh__span_same(&p->old, &m->freed)) return false;
        wh_arena_span sp;
        *st = wh__arena_do_alloc_span(copy, p->count, p->stride, &sp);
        if (*st == WH_OK && !wh__span_same(&sp, &p->made)) *st = WH_ERR_CORRUPT;
        copy->warm_commits++;
    } else {
        *st = wh__ring_commit_locked(copy);
    }
    wh__arena_note(copy, *st);
    wh__arena_account(copy, *st);
    return true;
}

/* After a commit with status st, its copy written back: the plan for the
 * next replace of next (its span held, read by the caller), made on the
 * copy and written to the real state whole (invalid when none), and what
 * the copy now holds. */
WH_INLINE WH_HOST_DEVICE void wh__ring_plan_next(wh__arena_state *s, wh__arena_state *copy, const wh_arena_span *held,
                                                 wh_status st, wh__ring_memo *m) {
    m->state = WH__COPY_COLD;
    if (st != WH_OK) {
        s->plan.valid = 0u;
        return;
    }
    const wh_arena_span *next = (const wh_arena_span *)(uintptr_t)copy->pending.next;
    wh__ring_plan pl = wh__ring_plan_make(copy, next, held);
    s->plan = pl;
    if (pl.valid) {
        m->state = WH__COPY_WARM;
        m->slot = pl.slot;
        m->freed = pl.expect;
    } else if (pl.slot) {
        m->state = WH__COPY_DIRTY; /* its free failed part way */
    }
}

/* WH_ARENA_COMMIT_AHEAD by one thread (the CPU backend's; a thread that
 * waits for another thread's reserves): as wh__ring_commit_ahead_block,
 * its copy of the image and what the real image held in scratch
 * (scratch_bytes >= 2 x wh_arena_meta_bytes, 8-aligned; else every frame
 * commits in place), each reservation awaited with wh_backoff, tries polls
 * at most. */
WH_INLINE WH_HOST_DEVICE wh_status wh__ring_commit_ahead_thread(wh_arena_ref a, const wh_arena_span *ring, uint32_t k,
                                                                uint32_t f0, uint32_t frames, void *scratch,
                                                                uint64_t scratch_bytes, uint32_t tries,
                                                                wh_arena_ring_baton baton, wh_arena_ring_baton last) {
    if (!ring || k == 0) return WH_ERR_INVALID_ARGUMENT;
    wh__arena_state *s = a.s;
    uint64_t bytes = wh__arena_image_bytes(s), words = bytes / 8u;
    bool staged = scratch && scratch_bytes / 2u >= bytes && !((uintptr_t)scratch & 7u) && !(bytes & 7u);
    uint64_t *img = (uint64_t *)scratch, *orig = img + words;
    wh__arena_state *copy = (wh__arena_state *)scratch;
    wh__ring_memo memo;
    memset(&memo, 0, sizeof memo);
    memo.state = WH__COPY_DIRTY;
    wh_status st = WH_OK; /* no frame: nothing to do */
    bool all = true;
    for (uint32_t f = 0; f < frames; ++f) {
        const wh_arena_span *slot = &ring[(f0 + f) % k];
        wh_arena_ring_baton b = f + 1u == frames ? last : baton;
        wh_wait w = wh_wait_begin(tries);
        while (wh_wait_more(&w) && !wh__ring_pending_for(a.s, slot)) wh_wait_backoff(&w, ~0u);
        if (!wh_wait_more(&w)) {
            wh__ring_pass_empty(b);
            st = WH_ERR_RETRY_LIMIT;
            continue;
        }
        if (!staged) {
            st = wh__ring_commit_now_thread(a, slot, NULL, 0, b);
            continue;
        }
        wh__ring_copy_words(img, orig, s, words, all);
        if (all) memo.state = WH__COPY_FRESH;
        if (!wh__ring_commit_copy(copy, &memo, &st)) { /* stage again, then it commits */
            wh__ring_copy_words(img, orig, s, words, true);
            memo.state = WH__COPY_FRESH;
            (void)wh__ring_commit_copy(copy, &memo, &st);
        }
        all = false;
        copy->pending.active = 0u;
        if (copy->pending.fast && wh__arena_mirrors(copy, st)) wh__arena_mirror(copy);
        for (uint64_t i = 0; i < words; ++i) {
            if (wh__ring_written_back(i) && img[i] != orig[i]) ((uint64_t *)s)[i] = img[i];
            orig[i] = img[i];
        }
        const wh_arena_span *next = (const wh_arena_span *)(uintptr_t)copy->pending.next;
        wh_arena_span held;
        memset(&held, 0, sizeof held);
        if (next) held = wh__span_load(next);
        wh__ring_plan_next(s, copy, &held, st, &memo);
        wh__arena_note(s, st);
        wh__ring_release(s, b);
    }
    return st;
}

#ifdef __CUDACC__
/* A commit launched ahead (another stream): wait, one thread, until a
 * reservation for slot is in flight -- bounded: tries polls, 64 ns apart
 * (each an L2 round trip besides: the commit starts within ~0.1 us of the
 * reservation, where 200 ns apart cost ~0.1 us more).  False if
 * none came (a reserve that fails to lock reserves nothing). */
WH_INLINE WH_DEVICE bool wh__ring_wait_reserved(wh_arena_ref a, const wh_arena_span *slot, uint32_t tries) {
    for (uint32_t k = 0; k < tries; ++k) {
        if (wh__ring_pending_for(a.s, slot)) return true;
#if __CUDA_ARCH__ >= 700
        __nanosleep(64);
#endif
    }
    return false;
}

/* Every thread: its words of the image into the copy (smem) and orig
 * (registers): all of them, or those a kept copy reloads. */
WH_INLINE WH_DEVICE void wh__ring_stage_words(uint64_t *img, const uint64_t *real, uint64_t *orig, uint64_t words,
                                              bool all) {
    for (int j = 0; j < WH__ARENA_STAGE_WORDS; ++j) {
        uint64_t i = threadIdx.x + (uint64_t)j * blockDim.x;
        if (i < words && (all || wh__ring_reload_word(i))) img[i] = orig[j] = __ldcg(&real[i]); /* from L2 */
    }
}
/* Thread 0, the copy committed: the reservation retired, the status out. */
WH_INLINE WH_DEVICE void wh__ring_committed(wh__arena_state *copy, wh_status st, uint32_t *status) {
    copy->pending.active = 0u;
    *status = (uint32_t)st;
}

/* The staged commit, by one block for a chain of frames of a ring of k
 * slots: frame f of the chain replaces ring[(f0 + f) % k] (its
 * reservation published by then or awaited, thread 0, bounded: tries
 * polls).  The block keeps its copy of the image in smem from frame to
 * frame (8-aligned, enough for the image; checked by the callers): after
 * the first frame it reloads only the words a reserve writes, and the free
 * the last plan made on the copy stays there, so the next commit only
 * allocates (wh__ring_commit_copy).  In a frame:
 * thread 0 commits on the copy while thread 32 reads the next slot's span
 * (for the plan), one thread of warp 1 writes the mirror, the block writes
 * back the words that changed (never the lock word nor failures: atomics
 * outside the lock; nor the plan: thread 0 writes it whole) while thread 0
 * makes the next plan on the copy, then thread 0 hands the lock on (baton;
 * the chain's last frame: last).  One fence a frame: the release, after the
 * block's barrier, covers every thread's writes (cumulative, as grid.sync's
 * one fence).  seen: frame 0's reservation was seen already (acquire,
 * before the block's last barrier).  A frame whose reservation does not
 * come passes `empty` on and is skipped.  Returns the last frame's status
 * (WH_ERR_RETRY_LIMIT: none came; WH_OK for no frame). */
WH_INLINE WH_DEVICE wh_status wh__ring_chain_staged(wh_arena_ref a, const wh_arena_span *ring, uint32_t k, uint32_t f0,
                                                    uint32_t frames, uint64_t words, void *smem, uint32_t tries,
                                                    bool seen, wh_arena_ring_baton baton, wh_arena_ring_baton last) {
    __shared__ uint32_t wh__chain_go, wh__chain_status, wh__chain_all;
    __shared__ wh_arena_span wh__chain_next; /* the next slot's span, for the plan */
    wh__arena_state *s = a.s, *copy = (wh__arena_state *)smem;
    uint64_t *img = (uint64_t *)smem, *real = (uint64_t *)s, orig[WH__ARENA_STAGE_WORDS];
    wh__ring_memo memo; /* thread 0's: what the copy holds */
    memset(&memo, 0, sizeof memo);
    memo.state = WH__COPY_DIRTY;
    wh_status st = WH_OK;                     /* no frame: nothing to do */
    if (threadIdx.x == 0) wh__chain_all = 1u; /* the first frame stages everything */
    __syncthreads();
    for (uint32_t f = 0; f < frames; ++f) {
        const wh_arena_span *slot = &ring[(f0 + f) % k];
        wh_arena_ring_baton b = f + 1u == frames ? last : baton;
        if (f != 0 || !seen) {
            if (threadIdx.x == 0) {
                wh__chain_go = wh__ring_wait_reserved(a, slot, tries);
                if (!wh__chain_go) wh__ring_pass_empty(b);
            }
            __syncthreads();
            if (!wh__chain_go) { /* uniform; the real image unchanged */
                st = WH_ERR_RETRY_LIMIT;
                continue;
            }
        }
        wh__ring_stage_words(img, real, orig, words, wh__chain_all != 0u);
        __syncthreads();
        if (threadIdx.x == 0) {
            if (wh__chain_all) memo.state = WH__COPY_FRESH;
            bool done = wh__ring_commit_copy(copy, &memo, &st);
            wh__chain_all = !done; /* false: restage first */
            if (done) wh__ring_committed(copy, st, &wh__chain_status);
        } else if (threadIdx.x == 32) { /* meanwhile: a load from global memory, off the plan's path */
            const wh_arena_span *next = (const wh_arena_span *)(uintptr_t)copy->pending.next;
            if (next) wh__chain_next = wh__span_load(next);
        }
        __syncthreads();
        if (wh__chain_all) { /* uniform: a slow-path reserve, or not the free made */
            wh__ring_stage_words(img, real, orig, words, true);
            __syncthreads();
            if (threadIdx.x == 0) {
                memo.state = WH__COPY_FRESH;
                (void)wh__ring_commit_copy(copy, &memo, &st);
                wh__ring_committed(copy, st, &wh__chain_status);
                wh__chain_all = 0u;
            }
            __syncthreads();
        }
        st = (wh_status)wh__chain_status;
        if (threadIdx.x == 32 && copy->pending.fast && wh__arena_mirrors(copy, st)) wh__arena_mirror(copy);
        uint64_t now[WH__ARENA_STAGE_WORDS]; /* the image after the commit: the plan changes the copy */
        for (int j = 0; j < WH__ARENA_STAGE_WORDS; ++j) {
            uint64_t i = threadIdx.x + (uint64_t)j * blockDim.x;
            now[j] = i < words ? img[i] : 0u;
        }
        __syncthreads();                                  /* every word read, the mirror done with the copy */
        for (int j = 0; j < WH__ARENA_STAGE_WORDS; ++j) { /* thread 0 too, before its plan */
            uint64_t i = threadIdx.x + (uint64_t)j * blockDim.x;
            if (i < words && wh__ring_written_back(i) && now[j] != orig[j]) real[i] = now[j];
            orig[j] = now[j];
        }
        if (threadIdx.x == 0) { /* while the others write back */
            wh__ring_plan_next(s, copy, &wh__chain_next, st, &memo);
        }
        __syncthreads(); /* written back, the plan made */
        if (threadIdx.x == 0) {
            wh__arena_note(s, st);
            wh__ring_release(s, b); /* release: the image, the plan, then the lock */
        }
    }
    return st;
}

/* Whether a block can stage the image of s in smem_bytes at smem. */
WH_INLINE WH_DEVICE bool wh__ring_can_stage(wh__arena_state *s, const void *smem, uint64_t smem_bytes) {
    uint64_t bytes = wh__arena_image_bytes(s);
    return bytes <= smem_bytes && !(bytes & 7u) && !((uintptr_t)smem & 7u) && blockDim.x >= 64 &&
           bytes / 8u <= (uint64_t)WH__ARENA_STAGE_WORDS * blockDim.x;
}

/* The commit in place by thread 0 (no room to stage), its status to every
 * thread through flag (shared; every thread past its last read of it). */
WH_INLINE WH_DEVICE wh_status wh__ring_commit_in_place(wh_arena_ref a, const wh_arena_span *slot, uint32_t *flag,
                                                       wh_arena_ring_baton baton) {
    if (threadIdx.x == 0) *flag = (uint32_t)wh__ring_commit_now_thread(a, slot, NULL, 0, baton);
    __syncthreads();
    return (wh_status)*flag;
}

/* WH_ARENA_COMMIT_NOW by a whole block (every thread, converged, same
 * arguments): the image staged in smem (smem_bytes, 8-aligned, >=
 * wh_arena_meta_bytes; else thread 0 commits in place and makes no plan).
 * Nothing to do if no reservation for slot is in flight (`empty` passed on).
 * The lock handed on through baton (an unlock baton: released).  Returns
 * the status to every thread. */
WH_INLINE WH_DEVICE wh_status wh__ring_commit_now_block(wh_arena_ref a, const wh_arena_span *slot, void *smem,
                                                        uint64_t smem_bytes, wh_arena_ring_baton baton) {
    __shared__ uint32_t wh__commit_go;
    wh__arena_state *s = a.s;
    __syncthreads(); /* the flag: free to write */
    if (!wh__ring_can_stage(s, smem, smem_bytes)) return wh__ring_commit_in_place(a, slot, &wh__commit_go, baton);
    if (threadIdx.x == 0) {
        wh__commit_go = wh__ring_pending_for(s, slot);
        if (!wh__commit_go) wh__ring_pass_empty(baton);
    }
    __syncthreads();
    if (!wh__commit_go) return WH_OK;
    return wh__ring_chain_staged(a, slot, 1u, 0u, 1u, wh__arena_image_bytes(s) / 8u, smem, 0u, true, baton, baton);
}

/* One frame of WH_ARENA_COMMIT_AHEAD where the image cannot be staged:
 * thread 0 waits (wh__ring_wait_reserved, tries), then commits in place.
 * WH_ERR_RETRY_LIMIT, nothing done and nothing counted, if no reservation
 * came (a reserve that failed to lock counted its own failure; `empty`
 * passed on through baton). */
WH_INLINE WH_DEVICE wh_status wh__ring_commit_ahead_in_place(wh_arena_ref a, const wh_arena_span *slot, uint32_t tries,
                                                             wh_arena_ring_baton baton) {
    __shared__ uint32_t wh__ahead_go;
    __syncthreads(); /* the flag: free to write */
    if (threadIdx.x == 0) {
        wh__ahead_go = wh__ring_wait_reserved(a, slot, tries);
        if (!wh__ahead_go) wh__ring_pass_empty(baton);
    }
    __syncthreads();
    if (!wh__ahead_go) return WH_ERR_RETRY_LIMIT;
    __syncthreads(); /* every thread has read the flag */
    return wh__ring_commit_in_place(a, slot, &wh__ahead_go, baton);
}

/* WH_ARENA_COMMIT_AHEAD by one block (every thread, converged, the same
 * arguments): a chain of `frames` reservations of a ring of k slots, frame
 * f (from 0) replacing ring[(f0 + f) % k], launched ahead of them all (one
 * kernel for the chain instead of one a frame): it waits for each in turn
 * (thread 0, tries polls), hands the lock on through baton after each but
 * the last, and through last after that (an unlock baton: unlock).
 * Between frames it keeps the image in smem, so a frame's commit reloads
 * only the words the reserve wrote and only allocates: the free of the span
 * it replaces was made on the copy by the previous frame's plan.  smem as
 * wh__ring_commit_now_block; with too little, every frame commits in place
 * (one thread).  Returns the last frame's status (WH_OK for no frame;
 * WH_ERR_RETRY_LIMIT where a reservation did not come). */
WH_INLINE WH_DEVICE wh_status wh__ring_commit_ahead_block(wh_arena_ref a, const wh_arena_span *ring, uint32_t k,
                                                          uint32_t f0, uint32_t frames, void *smem, uint64_t smem_bytes,
                                                          uint32_t tries, wh_arena_ring_baton baton,
                                                          wh_arena_ring_baton last) {
    wh__arena_state *s = a.s;
    __syncthreads();
    if (wh__ring_can_stage(s, smem, smem_bytes)) /* uniform */
        return wh__ring_chain_staged(a, ring, k, f0, frames, wh__arena_image_bytes(s) / 8u, smem, tries, false, baton,
                                     last);
    wh_status st = WH_OK;
    for (uint32_t f = 0; f < frames; ++f)
        st = wh__ring_commit_ahead_in_place(a, &ring[(f0 + f) % k], tries, f + 1u == frames ? last : baton);
    return st;
}
#endif

#endif /* WARPHEAP_ARENA_RESERVE_H */
