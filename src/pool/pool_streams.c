/* SPDX-License-Identifier: MIT */
/* Stream order for the host pool (not from a seed -- the
 * Futhark free list serves one in-order OpenCL queue).
 *
 * Every stream gets a slot and its own free index in the block core; a block
 * freed on stream S goes into S's index, so S reuses it at once (its later
 * work is ordered after the free).  Another stream T may take it only after
 * the work queued on S before the free has finished: when T finds nothing,
 * an event is recorded on S and, once it has completed, all of S's free
 * blocks move to index READY, where every stream may take them.  A block
 * also used on other streams (wh_pool_record_stream, or freed on another
 * stream than it was allocated on) waits on the pending list until events
 * recorded on those streams at the free have completed.
 */
#include "pool_internal.h"

#include <stdlib.h>

wh_status wh__slot_of(wh_pool *p, wh_stream s, uint32_t *slot) {
    if (p->last_slot && p->last_stream == s) {
        *slot = p->last_slot;
        return WH_OK;
    }
    uint32_t k = 1;
    while (k < p->nslots && (p->streams[k] != s || (p->retired >> k & 1u))) ++k;
    if (k == p->nslots && p->retired) { /* reuse a forgotten stream's slot */
        k = (uint32_t)(wh_ffs64(p->retired) - 1);
        p->retired &= ~(1ull << k);
        p->streams[k] = s;
    } else if (k == p->nslots) {
        if (k > p->cfg.max_streams)
            return wh__fail(WH_ERR_UNSUPPORTED,
                            "pool serves at most %u streams at a time (config.max_streams; "
                            "see wh_pool_forget_stream)",
                            p->cfg.max_streams);
        p->streams[k] = s;
        p->nslots++;
    }
    p->last_stream = s;
    p->last_slot = k;
    *slot = k;
    return WH_OK;
}

/* Put USED block b on the pending list, with an event on each stream of uses. */
wh_status wh__defer(wh_pool *p, uint32_t b, uint64_t uses) {
    if (p->npending == p->pending_cap) {
        uint32_t cap = p->pending_cap ? 2 * p->pending_cap : 64;
        wh__pending *n = realloc(p->pending, cap * sizeof *n);
        if (!n) return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: no host memory for the pending list");
        p->pending = n;
        p->pending_cap = cap;
    }
    wh__pending *e = &p->pending[p->npending];
    *e = (wh__pending){.block = b};
    for (uint64_t m = uses; m; m &= m - 1) {
        uint32_t k = (uint32_t)(wh_ffs64(m) - 1);
        bool spill = e->nev == WH__PENDING_EVENTS; /* too many streams: wait for this one now */
        wh__event tmp = {0};
        wh__event *ev = spill ? &tmp : &e->ev[e->nev];
        wh_status st = wh__event_record(p, ev, p->streams[k]);
        if (st == WH_OK && spill) (void)wh__event_wait(p, ev);
        if (st == WH_OK && !spill) e->nev++;
        wh__event_release(p, &tmp);
        if (st != WH_OK) {
            for (uint32_t i = 0; i < e->nev; ++i) wh__event_release(p, &e->ev[i]);
            return st;
        }
    }
    p->info[b].state = WH__PENDING;
    p->npending++;
    p->st.pending = p->npending;
    return WH_OK;
}

/* Release the pending blocks whose events have all completed. */
void wh__pending_poll(wh_pool *p) {
    for (uint32_t i = p->npending; i-- > 0;) {
        wh__pending *e = &p->pending[i];
        bool done = true;
        for (uint32_t k = 0; k < e->nev && done; ++k) done = wh__event_done(p, &e->ev[k]);
        if (!done) continue;
        for (uint32_t k = 0; k < e->nev; ++k) wh__event_release(p, &e->ev[k]);
        uint32_t b = e->block;
        p->pending[i] = p->pending[--p->npending];
        wh__release(p, b);
    }
    p->st.pending = p->npending;
}

static void wh__drain_to_ready(wh_pool *p, uint32_t s) {
    wh_free_index *fi = wh_blocks_index(p->core, s);
    for (uint32_t n = fi->nfree + 1, b; n-- > 0 && (b = wh_blocks_any_free(p->core, s)) != WH_BLOCK_NONE;)
        wh_blocks_move(p->core, b, WH__READY);
}

/* Move every stream's free blocks whose stream has finished its queued work
 * to READY.  An event recorded now is later than every free in that index. */
void wh__reclaim(wh_pool *p) {
    for (uint32_t s = 1; s < p->nslots; ++s) {
        if (wh_blocks_index(p->core, s)->nfree == 0) continue;
        if (p->retired >> s & 1u) { /* a pending block came back to a gone stream */
            wh__drain_to_ready(p, s);
            continue;
        }
        if (wh__event_record(p, &p->reclaim_ev[s], p->streams[s]) != WH_OK) continue;
        if (wh__event_done(p, &p->reclaim_ev[s])) wh__drain_to_ready(p, s);
    }
}

/* Wait for the work queued so far on every stream the pool knows (called
 * with the lock held; returns with it held).  The lock is released for the
 * wait: other threads go on allocating and freeing meanwhile, and on the CPU
 * backend the thread that makes a stream idle is not locked out.  A later
 * wh__pending_poll / wh__reclaim then finds the blocks freed before the wait
 * safe.  False when a stream stayed busy (the CPU backend's bound): counted
 * in busy_streams, which the exhaustion message names. */
bool wh__wait_streams(wh_pool *p) {
    wh_stream s[WH__MAX_SLOTS];
    uint32_t n = 0, busy = 0;
    for (uint32_t k = 1; k < p->nslots; ++k)
        if (!(p->retired >> k & 1u)) s[n++] = p->streams[k];
    pthread_mutex_unlock(&p->lock);
    for (uint32_t i = 0; i < n; ++i) busy += !wh__stream_sync(p, s[i]);
    pthread_mutex_lock(&p->lock);
    /* other threads added map entries meanwhile: room for the caller's again
     * (on failure the map is still at most half full plus their few) */
    (void)wh__map_reserve(p);
    p->busy_streams = busy;
    return busy == 0;
}

/* The stream's work done, everything it freed is safe for all: stale
 * references to the slot (a live block's alloc_slot, a kept block's free
 * slot) at worst make a later user of the slot wait for its own stream. */
static wh_status wh__forget_locked(wh_pool *p, wh_stream s) {
    uint32_t k = 1;
    while (k < p->nslots && (p->streams[k] != s || (p->retired >> k & 1u))) ++k;
    if (k == p->nslots) return WH_OK; /* never seen */
    pthread_mutex_unlock(&p->lock);   /* wait with the pool free for others */
    bool done = wh__stream_sync(p, s);
    pthread_mutex_lock(&p->lock);
    if (!done) return wh__fail(WH_ERR_RETRY_LIMIT, "wh_pool_forget_stream: the stream's work did not finish");
    k = 1; /* the slot table may have changed */
    while (k < p->nslots && (p->streams[k] != s || (p->retired >> k & 1u))) ++k;
    if (k == p->nslots) return WH_OK; /* forgotten meanwhile */
    wh__pending_poll(p);
    wh__drain_to_ready(p, k);
    p->retired |= 1ull << k;
    if (p->last_slot == k) p->last_slot = 0;
    return WH_OK;
}

wh_status wh_pool_forget_stream(wh_pool *p, wh_stream s) {
    wh__clear_error();
    if (!p) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_forget_stream: pool is NULL");
    pthread_mutex_lock(&p->lock);
    wh_status st = wh__forget_locked(p, s);
    pthread_mutex_unlock(&p->lock);
    return st;
}
