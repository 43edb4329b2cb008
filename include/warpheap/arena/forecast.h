/* SPDX-License-Identifier: MIT */
/* Stream arena, RING policy: the block core's answers for a ring of FIFO
 * spans, forecast from a few intervals -- so that a one-pass producer knows
 * the next frame's window (where element i of any count up to the window's
 * goes) as soon as it knows this frame's count, with no lock and no commit
 * in between.  Seed gpu-executed-heap.txt, "Example Use-Case".
 *
 * In a FIFO ring the answer is known before the count: whatever the count,
 * the span starts in the cursor's free block and, past it, continues in the
 * next free block in ring order (wh__plan_span).  For a ring whose slots
 * are replaced in order the core is a function of a few numbers: its free
 * blocks (maximal: it merges on every free), the cursor, and each slot's
 * blocks.  A forecast keeps exactly those, as offsets, and runs a replace on
 * them: free the slot's blocks (merging with both neighbours), then the
 * plan's answer (wh__plan_span: the code the reserve's fast path already
 * trusts to be the core's answer).  The real replace still runs, in the
 * committer of the posts below (WH_ARENA_COMMIT_POSTS), and its span must be
 * the one forecast; where it is not, the commit reports WH_ERR_CORRUPT
 * (counted) and the forecast is made again from the real state.  What it
 * cannot follow (more free blocks than it keeps, a core without a spare
 * descriptor to split with) makes it invalid or shows as a mismatch, never
 * as a silent overlap: a block the core did not split leaves the forecast's
 * "free" tail inside that block, which nobody else holds.  Valid only while
 * nothing but this ring's replaces changes the arena:
 * wh_arena_ring_forecast_current tells, from the arena's counters.
 * Included by arena.h after arena/reserve.h. */
#ifndef WARPHEAP_ARENA_FORECAST_H
#define WARPHEAP_ARENA_FORECAST_H

/* Elements of stride (pad bytes of alignment first) that plan block b holds. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__window_cap(const wh__plan_block *b, uint64_t pad, uint64_t stride) {
    return b->size > pad ? wh__arena_div(b->size - pad, stride) : 0u;
}

/* The window of a reservation for elements of stride on plan pl (region
 * at base, bytes long): the cursor's free block as part 0 and the next
 * recorded free block as part 1 -- the two extents wh__plan_span picks for
 * every count up to the window's -- or, where the cursor's block holds
 * nothing, the first recorded block that holds something, alone.  Empty
 * (count 0) if the plan holds nothing. */
WH_INLINE WH_HOST_DEVICE void wh__window_on(const wh__ring_plan *pl, uint64_t base, uint64_t bytes, uint64_t stride,
                                            wh_arena_span *w) {
    memset(w, 0, sizeof *w);
    if (!stride || !pl->granule) return;
    uint32_t n = pl->nfree < WH__PLAN_BLOCKS ? pl->nfree : WH__PLAN_BLOCKS;
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
/* fc's free blocks with slot's blocks freed, merged, into out (address
 * order); false if they do not fit or overlap a free block (not a ring the
 * forecast follows). */
WH_INLINE WH_HOST_DEVICE bool wh__forecast_freed(const wh_arena_forecast *fc, uint32_t slot, wh__arena_extent *out,
                                                 uint32_t *n) {
    uint32_t m = fc->nfree;
    for (uint32_t i = 0; i < m; ++i) out[i] = fc->free[i];
    for (int p = 0; p < 2; ++p) {
        wh__arena_extent e = fc->held[slot][p];
        if (e.size == 0) continue;
        uint32_t i = 0;
        while (i < m && out[i].addr < e.addr) ++i; /* e goes before out[i] */
        if ((i > 0 && out[i - 1].addr + out[i - 1].size > e.addr) || (i < m && e.addr + e.size > out[i].addr))
            return false;
        bool left = i > 0 && out[i - 1].addr + out[i - 1].size == e.addr;
        bool right = i < m && e.addr + e.size == out[i].addr;
        if (left && right) { /* three blocks become one */
            out[i - 1].size += e.size + out[i].size;
            for (uint32_t j = i; j + 1 < m; ++j) out[j] = out[j + 1];
            --m;
        } else if (left) {
            out[i - 1].size += e.size;
        } else if (right) {
            out[i].addr = e.addr;
            out[i].size += e.size;
        } else {
            if (m == WH_ARENA_FORECAST_FREE) return false;
            for (uint32_t j = m; j > i; --j) out[j] = out[j - 1];
            out[i] = e;
            ++m;
        }
    }
    *n = m;
    return true;
}

/* The plan the core's walk would record from the cursor over free blocks
 * fr[0..n) (address order): ring order from the block that holds the
 * cursor (block 0 where the cursor is at the region's end), ids 1.. in that
 * order, start 1 if the first is the cursor's own block, else 0 (a used
 * block). */
WH_INLINE WH_HOST_DEVICE void wh__forecast_plan(const wh_arena_forecast *fc, const wh__arena_extent *fr, uint32_t n,
                                                wh__ring_plan *pl) {
    memset(pl, 0, sizeof *pl);
    uint64_t c = fc->cursor < fc->bytes ? fc->cursor : 0;
    uint32_t j = 0;
    while (j < n && fr[j].addr + fr[j].size <= c) ++j; /* the first block that ends after c */
    for (uint32_t k = 0; k < n && pl->nfree < WH__PLAN_BLOCKS; ++k) {
        const wh__arena_extent *e = &fr[(j + k) % n];
        wh__plan_block *b = &pl->blk[pl->nfree];
        b->addr = e->addr;
        b->size = e->size;
        b->id = ++pl->nfree;
    }
    pl->start = n && j < n && fr[j].addr <= c ? 1u : 0u;
    pl->complete = n <= WH__PLAN_BLOCKS;
    pl->granule = fc->granule;
    pl->valid = 1u;
}

/* Make the forecast from plan pl (current, complete) for the replace of
 * ring[slot] on state s (the real image under the lock, or a staged copy):
 * the plan's free blocks, the cursor, and the blocks of the ring's other
 * slots (their descriptors in s).  Invalid if the plan is not complete or
 * a slot's block is not what its handle says. */
WH_INLINE WH_HOST_DEVICE void wh__forecast_from(wh__arena_state *s, const wh__ring_plan *pl, const wh_arena_span *ring,
                                                uint32_t k, uint32_t slot, wh_arena_forecast *out) {
    wh_arena_forecast f;        /* made here, then written whole: a producer may read *out */
    wh_arena_forecast *fc = &f; /* meanwhile (wh_arena_ring_forecast_current) */
    memset(fc, 0, sizeof *fc);
    fc->stamp = UINT64_MAX; /* current only once a committer stamps it */
    bool ok = pl->valid && pl->complete && k != 0 && k <= WH_ARENA_FORECAST_SLOTS && slot < k &&
              pl->nfree <= WH_ARENA_FORECAST_FREE;
    if (ok) {
        fc->k = k;
        fc->base = s->base;
        fc->bytes = s->bytes;
        fc->granule = pl->granule;
        fc->cursor = s->ring_cursor;
        for (uint32_t i = 0; i < pl->nfree; ++i) { /* ring order to address order */
            wh__arena_extent e = {pl->blk[i].addr, pl->blk[i].size};
            uint32_t j = fc->nfree++;
            for (; j > 0 && fc->free[j - 1].addr > e.addr; --j) fc->free[j] = fc->free[j - 1];
            fc->free[j] = e;
        }
        wh_blocks *c = wh__arena_core(s);
        const wh_block *d = wh_blocks_desc(c);
        const uint32_t *gen = wh__arena_gen(s);
        for (uint32_t i = 0; i < k && ok; ++i) {
            if (i == slot) continue; /* the plan freed it already */
            wh_arena_span sp = wh__span_load(&ring[i]);
            for (int p = 0; p < 2 && ok; ++p) {
                wh_handle h = sp.part[p];
                if (!h.ptr) continue;
                ok = h.block < c->capacity && d[h.block].state == WH_BLOCK_USED && gen[h.block] == h.gen;
                if (ok) {
                    fc->held[i][p].addr = d[h.block].addr;
                    fc->held[i][p].size = d[h.block].size;
                }
            }
        }
    }
    fc->valid = ok;
    *out = f;
}
/* The window the next replace of slot will write into: a span whose count
 * is the most elements it holds; empty if the forecast is invalid. */
WH_INLINE WH_HOST_DEVICE void wh_arena_ring_forecast_window(const wh_arena_forecast *fc, uint32_t slot, uint64_t stride,
                                                            wh_arena_span *w) {
    wh__arena_extent fr[WH_ARENA_FORECAST_FREE];
    uint32_t n = 0;
    wh__ring_plan pl;
    memset(w, 0, sizeof *w);
    if (!fc->valid || slot >= fc->k || !wh__forecast_freed(fc, slot, fr, &n)) return;
    wh__forecast_plan(fc, fr, n, &pl);
    wh__window_on(&pl, fc->base, fc->bytes, stride, w);
}

/* Cut size bytes from the front of the free block at addr (fr, n blocks). */
WH_INLINE WH_HOST_DEVICE bool wh__forecast_take(wh__arena_extent *fr, uint32_t *n, uint64_t addr, uint64_t size) {
    for (uint32_t i = 0; i < *n; ++i) {
        if (fr[i].addr != addr) continue;
        if (size > fr[i].size) return false;
        fr[i].addr += size;
        fr[i].size -= size;
        if (fr[i].size == 0) {
            for (uint32_t j = i; j + 1 < *n; ++j) fr[j] = fr[j + 1];
            --*n;
        }
        return true;
    }
    return false;
}

/* The offset of the plan block whose handle begins at ptr. */
WH_INLINE WH_HOST_DEVICE bool wh__forecast_block_at(const wh__ring_plan *pl, uint64_t base, uint64_t stride,
                                                    uint64_t ptr, uint64_t *addr) {
    for (uint32_t i = 0; i < pl->nfree && i < WH__PLAN_BLOCKS; ++i)
        if (wh__plan_handle(base, &pl->blk[i], stride).ptr == ptr) {
            *addr = pl->blk[i].addr;
            return true;
        }
    return false;
}

/* The replace of slot by count elements of stride, on the forecast: *out
 * gets the span the core will give (addresses and counts; no descriptors)
 * and the forecast moves on.  WH_OK; WH_ERR_OUT_OF_MEMORY where the core
 * will fail (the slot's blocks freed all the same, as the core frees them);
 * WH_ERR_CORRUPT where the forecast cannot tell (then invalid). */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_forecast_replace(wh_arena_forecast *fc, uint32_t slot, uint64_t count,
                                                                  uint64_t stride, wh_arena_span *out) {
    wh__arena_extent fr[WH_ARENA_FORECAST_FREE];
    uint32_t n = 0;
    wh__ring_plan pl;
    memset(out, 0, sizeof *out);
    if (!fc->valid || slot >= fc->k || !wh__forecast_freed(fc, slot, fr, &n)) {
        fc->valid = 0u;
        return WH_ERR_CORRUPT;
    }
    wh__forecast_plan(fc, fr, n, &pl);
    wh__arena_extent took[2] = {{0, 0}, {0, 0}};
    bool ok = wh__plan_span(&pl, fc->base, fc->bytes, count, stride, out);
    if (!ok && !pl.complete && count != 0 && stride != 0) { /* past what it follows */
        fc->valid = 0u;
        return WH_ERR_CORRUPT;
    }
    if (ok) {
        uint64_t pad = stride - wh__arena_gcd(stride, fc->granule);
        bool two = out->part[1].ptr != 0;
        took[0].size = wh__plan_round(fc->granule, (two ? out->count0 : count) * stride + pad);
        if (two) took[1].size = wh__plan_round(fc->granule, (count - out->count0) * stride + pad);
        for (int p = 0; p < (two ? 2 : 1); ++p)
            if (!wh__forecast_block_at(&pl, fc->base, stride, out->part[p].ptr, &took[p].addr) ||
                !wh__forecast_take(fr, &n, took[p].addr, took[p].size)) {
                fc->valid = 0u;
                return WH_ERR_CORRUPT;
            }
        fc->cursor = took[two ? 1 : 0].addr + took[two ? 1 : 0].size;
    }
    for (uint32_t i = 0; i < n; ++i) fc->free[i] = fr[i];
    fc->nfree = n;
    fc->held[slot][0] = took[0];
    fc->held[slot][1] = took[1];
    return ok ? WH_OK : WH_ERR_OUT_OF_MEMORY;
}

/* Whether the core's span holds the elements where the forecast put them:
 * the same addresses and the same split (descriptors are the core's). */
WH_INLINE WH_HOST_DEVICE bool wh__forecast_holds(const wh_arena_span *forecast, const wh_arena_span *made) {
    return forecast->part[0].ptr == made->part[0].ptr && forecast->part[1].ptr == made->part[1].ptr &&
           forecast->count0 == made->count0 && forecast->count == made->count;
}

/* Whether fc, left exact by a chain's committer, still is: no block taken
 * or freed in the arena since (its counters, read unlocked: a chain's
 * producer asks before the chain's committer commits anything).  Then the
 * next chain's producer may forecast its first window itself. */
WH_INLINE WH_HOST_DEVICE bool wh_arena_ring_forecast_current(const wh_arena_forecast *fc, wh_arena_ref a) {
    const volatile uint64_t *c = (const volatile uint64_t *)&a.s->allocs;
    return fc->valid && fc->stamp == c[0] + c[1] + 1u;
}

/* ---- the committer of a forecast ring -------------------------------- *
 * The producer of frame f writes into the window forecast for it, runs the
 * replace on the forecast, and posts what it did: the count, whether it
 * was clamped to the window, and the forecast's span and status.  It never
 * takes the lock.  One committer (a thread, or a block that keeps the image
 * in smem) holds the lock for a chain of frames: it makes the forecast and
 * the chain's first window from the real state, then commits each post in
 * order -- the real replace, checked against the forecast -- writes the
 * slot, and counts the post consumed, so its place in the post ring can be
 * used again. */

/* One post on state s (lock held; the real image or a staged copy), the
 * slot's span held (parts in `freed` freed on s already): the real replace
 * into *made.  Returns the status to report: the core's failure;
 * WH_ERR_CORRUPT where the core did not do what the forecast said (the
 * elements were written elsewhere); WH_ERR_OUT_OF_MEMORY where the producer
 * clamped; else WH_OK. */
WH_INLINE WH_HOST_DEVICE wh_status wh__post_commit(wh__arena_state *s, const wh_arena_ring_post *p,
                                                   const wh_arena_span *held, uint32_t freed, uint64_t stride,
                                                   wh_arena_span *made) {
    wh_status st = WH_OK;
    memset(made, 0, sizeof *made);
    for (int q = 0; q < 2 && st == WH_OK; ++q)
        if (held->part[q].ptr && !(freed >> q & 1u)) st = wh__arena_do_free(s, held->part[q]);
    if (st == WH_OK) st = wh__arena_do_alloc_span(s, p->count, stride, made);
    bool same = st == WH_OK ? p->fstatus == WH_OK && wh__forecast_holds(&p->forecast, made) : p->fstatus != WH_OK;
    if (!same) return WH_ERR_CORRUPT;
    return st != WH_OK ? st : p->clamped ? WH_ERR_OUT_OF_MEMORY : WH_OK;
}

/* The chain's start, lock held: every post before f0 counted consumed
 * (none is this chain's); the slot ring[s0] freed on copy (a copy of the
 * image; *freed says which parts) by the plan made there; and unless fc is
 * current (wh_arena_ring_forecast_current: the producer forecasts the
 * first window itself), the forecast made from that plan and the window
 * for the replace of ring[s0] published (release of w_value into *w_flag). */
WH_INLINE WH_HOST_DEVICE void wh__posts_begin(wh__arena_state *copy, const wh_arena_span *ring, uint32_t k, uint32_t s0,
                                              uint64_t stride, wh_arena_forecast *fc, wh_arena_span *w,
                                              uint32_t *w_flag, uint32_t w_value, uint32_t *freed, uint32_t *consumed,
                                              uint32_t f0) {
    wh_atomic_store(consumed, f0, WH_RELAXED); /* no post before f0 is this chain's (the release below) */
    bool current = fc->valid && fc->stamp == copy->allocs + copy->frees + 1u; /* before the plan's free */
    wh_arena_span held = wh__span_load(&ring[s0]);
    wh__ring_plan pl = wh__ring_plan_make(copy, &ring[s0], &held);
    *freed = pl.valid ? 3u : 0u;
    if (current) { /* the producer forecasts the first window itself */
        wh_atomic_store(consumed, f0, WH_RELEASE);
        return;
    }
    wh__forecast_from(copy, &pl, ring, k, s0, fc);
    memset(w, 0, sizeof *w);
    if (fc->valid) wh__window_on(&pl, copy->base, copy->bytes, stride, w);
    wh_fence();
    wh_atomic_store(w_flag, w_value, WH_RELEASE);
}
/* The chain's end (all its posts committed; s the state as committed): the
 * forecast stamped exact, then the count released once more. */
WH_INLINE WH_HOST_DEVICE void wh__posts_end(const wh__arena_state *s, wh_arena_forecast *fc, uint32_t *consumed,
                                            uint32_t f) {
    fc->stamp = s->allocs + s->frees + 1u; /* + 1: a forecast never stamped (0) is never current */
    wh_fence();
    wh_atomic_store(consumed, f, WH_RELEASE);
}

/* Wait (bounded: tries) for post f (seq f + 1) in the ring of npost. */
WH_INLINE WH_HOST_DEVICE bool wh__post_wait(wh_arena_ring_post *posts, uint32_t npost, uint32_t f, uint32_t tries) {
    for (wh_wait w = wh_wait_begin(tries); wh_wait_more(&w); wh_wait_backoff(&w, 8u))
        if (wh_atomic_load(&posts[f % npost].seq, WH_ACQUIRE) == f + 1u) return true;
    return false;
}

/* WH_ARENA_COMMIT_POSTS by one thread, in place (the CPU backend's; a test's):
 * lock (tries polls), the forecast into *fc and the first window into *w
 * for the replace of ring[s0] (published: w_value into *w_flag; scratch
 * >= wh_arena_meta_bytes, 8-aligned, for the plan) unless fc is current,
 * then frames posts
 * f0, f0 + 1, ... (post f replaces ring[(s0 + f - f0) % k], elements of
 * stride) each awaited (tries), committed, the slot written, *consumed = f
 * + 1 (release); then fc stamped exact (wh_arena_ring_forecast_current)
 * and unlock.  Returns WH_ERR_INVALID_ARGUMENT for bad arguments (nothing
 * done), else the last status (WH_ERR_RETRY_LIMIT:
 * no lock, or a post that did not come; the chain stops there). */
WH_INLINE WH_HOST_DEVICE wh_status wh__ring_commit_posts_thread(wh_arena_ref a, wh_arena_span *ring, uint32_t k,
                                                                uint32_t s0, uint32_t f0, uint32_t frames,
                                                                wh_arena_ring_post *posts, uint32_t npost,
                                                                uint32_t *consumed, uint64_t stride, void *scratch,
                                                                uint64_t scratch_bytes, uint32_t tries,
                                                                wh_arena_forecast *fc, wh_arena_span *w,
                                                                uint32_t *w_flag, uint32_t w_value) {
    wh__arena_state *s = a.s;
    uint64_t bytes = wh__arena_image_bytes(s);
    if (!ring || k == 0 || s0 >= k || !posts || npost == 0 || !scratch || scratch_bytes < bytes || (bytes & 7u))
        return WH_ERR_INVALID_ARGUMENT;
    if (!wh__arena_lock_poll(s, tries)) {
        wh__arena_note(s, WH_ERR_RETRY_LIMIT);
        return WH_ERR_RETRY_LIMIT;
    }
    uint32_t freed = 0;
    wh__ring_copy_words((uint64_t *)scratch, NULL, s, bytes / 8u, true);
    wh__posts_begin((wh__arena_state *)scratch, ring, k, s0, stride, fc, w, w_flag, w_value, &freed, consumed, f0);
    wh_status st = WH_OK;
    for (uint32_t i = 0; i < frames; ++i) {
        uint32_t f = f0 + i;
        if (!wh__post_wait(posts, npost, f, tries)) {
            st = WH_ERR_RETRY_LIMIT;
            wh__arena_note(s, st);
            break;
        }
        wh_arena_span *slot = &ring[(s0 + i) % k], held = *slot, made;
        st = wh__post_commit(s, &posts[f % npost], &held, 0u, stride, &made);
        *slot = made;
        wh__arena_note(s, st);
        wh__arena_publish(s, st);
        wh_atomic_store(consumed, f + 1u, WH_RELEASE);
    }
    if (st != WH_ERR_RETRY_LIMIT) wh__posts_end(s, fc, consumed, f0 + frames);
    wh__arena_unlock(s);
    return st;
}

#ifdef __CUDACC__
#define WH__POSTS_BATCH 8 /* posts a block commits between write-backs */
/* WH_ARENA_COMMIT_POSTS by one block (every thread, converged, the same
 * arguments), the image kept in smem from frame to frame (smem as
 * wh__ring_commit_now_block: without room, WH_ERR_INVALID_ARGUMENT and
 * nothing done).  Thread 0 commits the posts there (up to
 * WH__POSTS_BATCH: a committer behind catches up) on the copy -- the
 * next slot's span freed there ahead, so the first of them only allocates
 * -- and writes their slots; the block writes back the words that
 * changed; one fence, then the posts counted consumed.  As the thread
 * version otherwise.  Its frame needs ~1-2 KiB of local memory: raise
 * cudaLimitStackSize to it before launching a committer beside producers
 * that wait for it (a launch past the limit has the driver grow local
 * memory first, which waits for the device to idle: for the producers). */
WH_INLINE WH_DEVICE wh_status wh__ring_commit_posts_block(wh_arena_ref a, wh_arena_span *ring, uint32_t k, uint32_t s0,
                                                          uint32_t f0, uint32_t frames, wh_arena_ring_post *posts,
                                                          uint32_t npost, uint32_t *consumed, uint64_t stride,
                                                          void *smem, uint64_t smem_bytes, uint32_t tries,
                                                          wh_arena_forecast *fc, wh_arena_span *w, uint32_t *w_flag,
                                                          uint32_t w_value) {
    __shared__ uint32_t wh__posts_go;
    __shared__ wh_status wh__posts_st;
    wh__arena_state *s = a.s, *copy = (wh__arena_state *)smem;
    uint64_t words = wh__arena_image_bytes(s) / 8u, *img = (uint64_t *)smem, *real = (uint64_t *)s;
    uint64_t orig[WH__ARENA_STAGE_WORDS];
    if (!ring || k == 0 || s0 >= k || !posts || npost == 0 || !wh__ring_can_stage(s, smem, smem_bytes))
        return WH_ERR_INVALID_ARGUMENT; /* uniform: the same arguments */
    __syncthreads();
    if (threadIdx.x == 0) {
        wh__posts_go = wh__arena_lock_poll(s, tries);
        if (!wh__posts_go) wh__arena_note(s, WH_ERR_RETRY_LIMIT);
    }
    __syncthreads();
    if (!wh__posts_go) return WH_ERR_RETRY_LIMIT;
    wh__ring_stage_words(img, real, orig, words, true);
    __syncthreads();
    uint32_t freed = 0; /* thread 0's: parts of the next slot freed on the copy */
    wh_arena_span held; /* thread 0's: what that slot held */
    if (threadIdx.x == 0) {
        wh__posts_begin(copy, ring, k, s0, stride, fc, w, w_flag, w_value, &freed, consumed, f0);
        held = wh__span_load(&ring[s0]);
        wh__posts_st = WH_OK;
    }
    __syncthreads();
    for (uint32_t i = 0; i < frames;) {
        if (threadIdx.x == 0) { /* the posts there, up to a batch: one write-back */
            uint32_t n = 0;
            bool go = wh__post_wait(posts, npost, f0 + i, tries);
            if (!go) {
                wh__arena_note(s, WH_ERR_RETRY_LIMIT);
                wh__posts_st = WH_ERR_RETRY_LIMIT;
            }
            while (go) {
                uint32_t f = f0 + i + n;
                wh_arena_span *slot = &ring[(s0 + i + n) % k], made;
                if (n != 0) held = wh__span_load(slot);
                wh_status st = wh__post_commit(copy, &posts[f % npost], &held, n == 0 ? freed : 0u, stride, &made);
                *slot = made;
                wh__arena_note(s, st);
                wh__arena_account(copy, st);
                if (wh__arena_mirrors(copy, st)) wh__arena_mirror(copy);
                wh__posts_st = st;
                ++n;
                go = n < WH__POSTS_BATCH && i + n < frames &&
                     wh_atomic_load(&posts[(f + 1u) % npost].seq, WH_ACQUIRE) == f + 2u;
            }
            wh__posts_go = n;
        }
        __syncthreads();
        uint32_t n = wh__posts_go;
        if (n == 0) break;                                /* uniform: a post that did not come */
        for (int j = 0; j < WH__ARENA_STAGE_WORDS; ++j) { /* the words that changed, back */
            uint64_t x = threadIdx.x + (uint64_t)j * blockDim.x;
            if (x < words && wh__ring_written_back(x) && img[x] != orig[j]) real[x] = img[x];
            if (x < words) orig[j] = img[x];
        }
        __syncthreads();
        i += n;
        if (threadIdx.x == 0) {
            __threadfence(); /* the block's writes (cumulative), then the count */
            wh_atomic_store(consumed, f0 + i, WH_RELEASE);
            freed = 0; /* the next slot's free, ahead, on the copy only */
            if (i < frames) {
                held = wh__span_load(&ring[(s0 + i) % k]);
                for (int q = 0; q < 2; ++q)
                    if (held.part[q].ptr && wh__arena_do_free(copy, held.part[q]) == WH_OK) freed |= 1u << q;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (wh__posts_st != WH_ERR_RETRY_LIMIT) wh__posts_end(copy, fc, consumed, f0 + frames);
        __threadfence();
        wh__arena_unlock(s);
    }
    return wh__posts_st;
}
#endif

#endif /* WARPHEAP_ARENA_FORECAST_H */
