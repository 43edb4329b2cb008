/* SPDX-License-Identifier: MIT */
/* Stream order for the host pool (not from a seed -- the
 * Futhark free list serves one in-order OpenCL queue).
 *
 * Every stream gets a slot, and the first config.max_streams slots (lanes)
 * their own free index in the block core; a block freed on stream S goes
 * into S's index, so S reuses it at once (its later work is ordered after
 * the free).  Another stream T may take it only after the work queued on S
 * before the free has finished: when T finds nothing, an event is recorded
 * on S and, once it has completed, all of S's free blocks move to index
 * READY, where every stream may take them.  A block also used on other
 * streams (wh_pool_record_stream, or freed on another stream than it was
 * allocated on) waits on the pending list until events recorded on those
 * streams at the free have completed; so does a block freed on a stream past
 * the lanes, which then goes to READY.
 *
 * Any number of streams: a slot counts what names it (refs: blocks whose
 * free index it is, uses marks).  A new stream takes the lowest idle slot --
 * no refs, an empty lane -- so slots come back once a stream's blocks are
 * gone, and lanes go to the streams that hold blocks now.
 */
#include "pool_internal.h"

#include <stdlib.h>
#include <string.h>

wh_status wh__slots_init(wh_pool *p) {
    p->slots_cap = p->core->nindex > 8 ? p->core->nindex : 8;
    p->slots = calloc(p->slots_cap, sizeof *p->slots);
    p->use_list = calloc(p->slots_cap, sizeof *p->use_list);
    p->nslots = 1; /* slot 0: READY */
    return p->slots && p->use_list ? WH_OK : WH_ERR_OUT_OF_MEMORY;
}

static bool wh__slot_idle(const wh_pool *p, uint32_t k) {
    return p->slots[k].refs == 0 && p->slots[k].pins == 0 &&
           (k >= p->core->nindex || wh_blocks_index(p->core, k)->nfree == 0);
}

static uint32_t wh__slot_find(const wh_pool *p, wh_stream s) {
    for (uint32_t k = 1; k < p->nslots; ++k)
        if (p->slots[k].state == WH__SLOT_LIVE && p->slots[k].stream == s) return k;
    return 0;
}

static wh_status wh__slots_grow(wh_pool *p) {
    uint32_t cap = p->slots_cap * 2 < WH__SLOT_LIMIT ? p->slots_cap * 2 : WH__SLOT_LIMIT;
    wh__slot *t = realloc(p->slots, cap * sizeof *t);
    if (t) p->slots = t;
    uint32_t *l = t ? realloc(p->use_list, cap * sizeof *l) : NULL;
    if (!l) return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: no host memory for %u stream slots", cap);
    memset(t + p->slots_cap, 0, (cap - p->slots_cap) * sizeof *t);
    p->use_list = l;
    p->slots_cap = cap;
    return WH_OK;
}

/* A slot for a stream the pool does not serve now: the lowest idle one, after
 * moving finished streams' free blocks to READY when every lane is taken;
 * else a new one. */
static wh_status wh__slot_new(wh_pool *p, uint32_t *out) {
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t k = 1; k < p->nslots; ++k)
            if (wh__slot_idle(p, k)) {
                *out = k;
                return WH_OK;
            }
        if (p->nslots < p->core->nindex) break; /* a lane is still free */
        wh__reclaim(p);
    }
    if (p->nslots == WH__SLOT_LIMIT)
        return wh__fail(WH_ERR_UNSUPPORTED, "pool: %u streams hold blocks at once, the most one pool serves",
                        WH__SLOT_LIMIT - 1);
    if (p->nslots == p->slots_cap && wh__slots_grow(p) != WH_OK) return WH_ERR_OUT_OF_MEMORY;
    *out = p->nslots++;
    return WH_OK;
}

wh_status wh__slot_find_or_take(wh_pool *p, wh_stream s, uint32_t *slot) {
    uint32_t k = wh__slot_find(p, s);
    if (k >= p->core->nindex && wh__slot_idle(p, k)) /* no lane, nothing names it: an idle lane instead */
        for (uint32_t j = 1; j < wh__nlanes(p) && k; ++j)
            if (wh__slot_idle(p, j)) {
                p->slots[k].state = WH__SLOT_FREE;
                k = 0;
            }
    if (!k) {
        wh_status st = wh__slot_new(p, &k);
        if (st != WH_OK) return st;
        p->slots[k].stream = s; /* its event stays for reuse */
        p->slots[k].state = WH__SLOT_LIVE;
    }
    p->last_stream = s;
    p->last_slot = k;
    *slot = k;
    return WH_OK;
}

/* Mark live block b as used on slot (record_stream); its own slot needs no mark. */
wh_status wh__use(wh_pool *p, uint32_t b, uint32_t slot) {
    wh__info *in = &p->info[b];
    if (slot == in->alloc_slot) return WH_OK;
    if (slot < 64) {
        p->slots[slot].refs += !(in->uses >> slot & 1u);
        in->uses |= 1ull << slot;
        return WH_OK;
    }
    for (uint32_t i = 0; i < p->nxuses && (in->uses & WH__USES_MORE); ++i)
        if (p->xuses[i].block == b && p->xuses[i].slot == slot) return WH_OK;
    wh__xuse *x = wh__room(p->xuses, p->nxuses, &p->xuses_cap, sizeof *x);
    if (!x) return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: no host memory for the stream uses of blocks");
    p->xuses = x;
    p->xuses[p->nxuses++] = (wh__xuse){b, slot};
    in->uses |= WH__USES_MORE;
    p->slots[slot].refs++;
    return WH_OK;
}

static void wh__add_use(const wh_pool *p, uint32_t k, uint32_t slot, uint32_t *out, uint32_t *n) {
    if (k != slot && p->slots[k].state == WH__SLOT_LIVE) out[(*n)++] = k; /* forgotten streams are done */
}

/* The slots whose work must finish before live block b, freed on slot, is
 * anyone's: where it was allocated and used, and slot itself past the lanes.
 * Distinct, so at most nslots - 1 (p->use_list holds them). */
uint32_t wh__uses_of(wh_pool *p, uint32_t b, uint32_t slot, uint32_t *out) {
    const wh__info *in = &p->info[b];
    uint32_t n = 0;
    wh__add_use(p, in->alloc_slot, slot, out, &n);
    for (uint64_t m = in->uses & ~(uint64_t)WH__USES_MORE; m; m &= m - 1)
        wh__add_use(p, (uint32_t)(wh_ffs64(m) - 1), slot, out, &n);
    for (uint32_t i = 0; i < p->nxuses && (in->uses & WH__USES_MORE); ++i)
        if (p->xuses[i].block == b) wh__add_use(p, p->xuses[i].slot, slot, out, &n);
    if (wh__lane(p, slot) != slot) out[n++] = slot; /* no lane: wait for its own work too */
    return n;
}

/* Drop block b's uses marks (at its free). */
void wh__uses_drop(wh_pool *p, uint32_t b) {
    wh__info *in = &p->info[b];
    for (uint64_t m = in->uses & ~(uint64_t)WH__USES_MORE; m; m &= m - 1) p->slots[wh_ffs64(m) - 1].refs--;
    for (uint32_t i = p->nxuses; i-- > 0 && (in->uses & WH__USES_MORE);)
        if (p->xuses[i].block == b) {
            p->slots[p->xuses[i].slot].refs--;
            p->xuses[i] = p->xuses[--p->nxuses];
        }
    in->uses = 0;
}

/* Put USED block b on the pending list, with an event on the stream of each of n slots. */
wh_status wh__defer(wh_pool *p, uint32_t b, const uint32_t *slots, uint32_t n) {
    wh__pending *list = wh__room(p->pending, p->npending, &p->pending_cap, sizeof *list);
    if (!list) return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: no host memory for the pending list");
    p->pending = list;
    wh__pending *e = &p->pending[p->npending];
    *e = (wh__pending){.block = b};
    for (uint32_t i = 0; i < n; ++i) {
        bool spill = e->nev == WH__PENDING_EVENTS; /* too many streams: wait for this one now */
        wh__event tmp = {0};
        wh__event *ev = spill ? &tmp : &e->ev[e->nev];
        wh_status st = wh__event_record(p, ev, p->slots[slots[i]].stream);
        if (st == WH_OK && spill) (void)wh__event_wait(p, ev);
        if (st == WH_OK && !spill) e->nev++;
        wh__event_release(p, &tmp);
        if (st != WH_OK) {
            for (uint32_t j = 0; j < e->nev; ++j) wh__event_release(p, &e->ev[j]);
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
    for (uint32_t s = 1; s < wh__nlanes(p); ++s) {
        wh__slot *t = &p->slots[s];
        if (wh_blocks_index(p->core, s)->nfree == 0) continue;
        if (t->state != WH__SLOT_LIVE) { /* a pending block came back to a gone stream */
            wh__drain_to_ready(p, s);
            continue;
        }
        if (wh__event_record(p, &t->ev, t->stream) != WH_OK) continue;
        if (wh__event_done(p, &t->ev)) wh__drain_to_ready(p, s);
    }
}

/* Wait for the work queued so far on lane k's stream and hand the lane's
 * free blocks to READY; the lock stays held, so no free joins the lane
 * meanwhile and the event is later than every free in it.  False (nothing
 * moved) where the stream is being captured into a CUDA graph, whose
 * capture a wait would end, or the wait failed. */
bool wh__lane_settle(wh_pool *p, uint32_t k) {
    wh__slot *t = &p->slots[k];
    if (k == WH__READY || wh__lane(p, k) != k || t->state != WH__SLOT_LIVE || wh__stream_capturing(p, t->stream))
        return false;
    if (wh__event_record(p, &t->ev, t->stream) != WH_OK || !wh__event_wait(p, &t->ev)) return false;
    wh__drain_to_ready(p, k);
    return true;
}

/* Wait for the work queued so far on every stream the pool knows (called
 * with the lock held; returns with it held).  The lock is released for the
 * wait: other threads go on allocating and freeing meanwhile, and on the CPU
 * backend the thread that makes a stream idle is not locked out.  A later
 * wh__pending_poll / wh__reclaim then finds the blocks freed before the wait
 * safe.  False when a stream stayed busy (the CPU backend's bound): counted
 * in busy_streams, which the exhaustion message names. */
bool wh__wait_streams(wh_pool *p) {
    wh_stream few[64], *s = few;
    uint32_t n = 0, busy = 0, live = 0;
    for (uint32_t k = 1; k < p->nslots; ++k) live += p->slots[k].state == WH__SLOT_LIVE;
    if (live > 64 && !(s = malloc(live * sizeof *s))) s = few; /* no host memory: the first 64 */
    uint32_t room = s == few ? 64 : live;
    for (uint32_t k = 1; k < p->nslots && n < room; ++k)
        if (p->slots[k].state == WH__SLOT_LIVE) s[n++] = p->slots[k].stream;
    pthread_mutex_unlock(&p->lock);
    for (uint32_t i = 0; i < n; ++i) busy += !wh__stream_sync(p, s[i]);
    busy += live - n;
    if (s != few) free(s);
    pthread_mutex_lock(&p->lock);
    /* other threads added map entries meanwhile: room for the caller's again
     * (on failure the map is still at most half full plus their few) */
    (void)wh__map_reserve(p);
    p->busy_streams = busy;
    return busy == 0;
}

/* The stream's work done, everything it freed is safe for all: its lane
 * goes to READY, and uses of the slot are no longer waited for.  The slot is
 * idle once no block names it any more. */
static wh_status wh__forget_locked(wh_pool *p, wh_stream s) {
    if (!wh__slot_find(p, s)) return WH_OK; /* never seen */
    pthread_mutex_unlock(&p->lock);         /* wait with the pool free for others */
    bool done = wh__stream_sync(p, s);
    pthread_mutex_lock(&p->lock);
    if (!done) return wh__fail(WH_ERR_RETRY_LIMIT, "wh_pool_forget_stream: the stream's work did not finish");
    uint32_t k = wh__slot_find(p, s); /* the slot table may have changed */
    if (!k) return WH_OK;             /* forgotten meanwhile */
    wh__pending_poll(p);
    if (wh__lane(p, k) == k) wh__drain_to_ready(p, k);
    p->slots[k].state = WH__SLOT_GONE;
    if (p->last_slot == k) p->last_slot = 0;
    return WH_OK;
}

/* refs of every slot against the blocks and marks that name it. */
wh_status wh__check_slots(wh_pool *p) {
    uint32_t *n = calloc(p->nslots, sizeof *n);
    if (!n) return wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_pool_check: no host memory");
    wh_status st = WH_OK;
    for (uint32_t b = 0; b < p->core->capacity && st == WH_OK; ++b) {
        const wh__info *in = &p->info[b];
        if (in->state != WH__LIVE && in->state != WH__TAGGED && in->state != WH__PENDING) continue;
        if (in->free_slot >= p->nslots || in->alloc_slot >= p->nslots || (in->state != WH__LIVE && in->uses))
            st = wh__fail(WH_ERR_CORRUPT, "pool: block %u names slots %u/%u of %u, uses %#llx", b, in->alloc_slot,
                          in->free_slot, p->nslots, (unsigned long long)in->uses);
        else
            n[in->free_slot]++;
        for (uint64_t m = in->uses & ~(uint64_t)WH__USES_MORE; m && st == WH_OK; m &= m - 1) n[wh_ffs64(m) - 1]++;
    }
    for (uint32_t i = 0; i < p->nxuses && st == WH_OK; ++i) {
        const wh__xuse *x = &p->xuses[i];
        if (x->slot < 64 || x->slot >= p->nslots || !(p->info[x->block].uses & WH__USES_MORE))
            st = wh__fail(WH_ERR_CORRUPT, "pool: use of block %u on slot %u is not marked", x->block, x->slot);
        else
            n[x->slot]++;
    }
    for (uint32_t k = 0; k < p->nslots && st == WH_OK; ++k)
        if (n[k] != p->slots[k].refs)
            st = wh__fail(WH_ERR_CORRUPT, "pool: stream slot %u has %u refs, the blocks name it %u times", k,
                          p->slots[k].refs, n[k]);
    free(n);
    return st;
}

wh_status wh_pool_forget_stream(wh_pool *p, wh_stream s) {
    wh__clear_error();
    if (!p) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_forget_stream: pool is NULL");
    pthread_mutex_lock(&p->lock);
    wh_status st = wh__forget_locked(p, s);
    pthread_mutex_unlock(&p->lock);
    return st;
}
