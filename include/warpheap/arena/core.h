/* SPDX-License-Identifier: MIT */
/* Stream arena, internal: the lock, the accounting and the host mirror, and
 * the command bodies (allocate, free, replace) run on the block core under
 * the lock.  Seed gpu-executed-heap.txt: "Padding" (allocation by count and
 * stride, the address a multiple of the stride from the buffer's start) and
 * the single-thread compute shader that runs the heap -- the same code is a
 * command kernel <<<1,1>>> (src/arena/arena_cuda.cu), the CPU backend's
 * command, and the body of the in-kernel calls.  Not part of the API:
 * included by arena.h. */
#ifndef WARPHEAP_ARENA_CORE_H
#define WARPHEAP_ARENA_CORE_H

WH_INLINE WH_HOST_DEVICE wh_blocks *wh__arena_core(wh__arena_state *s) {
    return (wh_blocks *)((char *)s + s->core_off);
}
WH_INLINE WH_HOST_DEVICE uint32_t *wh__arena_gen(wh__arena_state *s) { return (uint32_t *)((char *)s + s->gen_off); }

/* LOCK RULE: the lock word serialises the single-threaded core between
 * command kernels and kernels that allocate directly.  At most one lane of a
 * warp ever tries to take it (wh_arena_alloc_warp elects one), so a waiting
 * lane always waits for another warp, which the scheduler runs.  Bounded:
 * false after WH_ARENA_LOCK_TRIES attempts (on the CPU backend, as many
 * microseconds: platform.h, wh_wait). */
WH_INLINE WH_HOST_DEVICE bool wh__arena_lock(wh__arena_state *s) {
    for (wh_wait w = wh_wait_begin(WH_ARENA_LOCK_TRIES); wh_wait_more(&w); wh_wait_backoff(&w, ~0u)) {
        uint32_t expected = 0;
        if (wh_atomic_cas(&s->lock, &expected, 1u, WH_ACQUIRE, WH_RELAXED)) return true;
    }
    return false;
}
/* The lock for a caller that expects it free within microseconds (a commit
 * about to unlock) and no other waiter: a CAS at the shortest backoff, so
 * it answers as soon as the holder lets go (one round trip, where a load
 * that sees it free and then a CAS take two), where wh__arena_lock's
 * backoff grows to 2 us between tries.  Bounded: false after polls tries
 * (on the CPU backend, as many microseconds; its backoff grows there, as a
 * holder that was preempted runs only once the waiter sleeps). */
WH_INLINE WH_HOST_DEVICE bool wh__arena_lock_poll(wh__arena_state *s, uint32_t polls) {
    for (wh_wait w = wh_wait_begin(polls); wh_wait_more(&w); wh_wait_backoff(&w, 0u)) {
        uint32_t expected = 0;
        if (wh_atomic_cas(&s->lock, &expected, 1u, WH_ACQUIRE, WH_RELAXED)) return true;
    }
    return false;
}
WH_INLINE WH_HOST_DEVICE void wh__arena_unlock(wh__arena_state *s) { wh_atomic_store(&s->lock, 0u, WH_RELEASE); }

/* Record a command's outcome (first_status and failures also outside the lock). */
WH_INLINE WH_HOST_DEVICE void wh__arena_note(wh__arena_state *s, wh_status st) {
    if (st == WH_OK) return;
    uint32_t expected = WH_OK;
    wh_atomic_cas(&s->first_status, &expected, (uint32_t)st, WH_RELAXED, WH_RELAXED);
    wh_atomic_fetch_add(&s->failures, 1ull, WH_RELAXED);
}

/* Order writes to host-mapped memory as the host sees them. */
WH_INLINE WH_HOST_DEVICE void wh__arena_fence_system(void) {
#if WH_ON_GPU
    __threadfence_system();
#else
    wh_fence();
#endif
}

/* A command's bookkeeping in the state (lock held): count it, its status,
 * the peak, the mirror's next sequence number. */
WH_INLINE WH_HOST_DEVICE void wh__arena_account(wh__arena_state *s, wh_status last) {
    wh_blocks *c = wh__arena_core(s);
    s->commands++;
    s->last_status = (uint32_t)last;
    if (c->used_bytes > s->peak_used) s->peak_used = c->used_bytes;
    s->seq += 2u;
}

/* Copy the counters to the host-visible mirror (lock held, after
 * wh__arena_account: s->seq is the even number the copy ends with). */
WH_INLINE WH_HOST_DEVICE void wh__arena_mirror(wh__arena_state *s) {
    wh_arena_stats *m = (wh_arena_stats *)(uintptr_t)s->mirror;
    wh_blocks *c = wh__arena_core(s);
    if (!m) return;
    volatile wh_arena_stats *v = (volatile wh_arena_stats *)m;
    uint32_t seq = s->seq - 2u;
    uint32_t last = s->last_status;
    v->seq = seq + 1u; /* odd: being written */
    wh__arena_fence_system();
    v->first_status = wh_atomic_load(&s->first_status, WH_RELAXED);
    v->last_status = (uint32_t)last;
    v->region_bytes = s->bytes;
    v->used_bytes = c->used_bytes;
    v->peak_used = s->peak_used;
    v->live_blocks = c->nused;
    v->allocs = s->allocs;
    v->frees = s->frees;
    v->failures = wh_atomic_load(&s->failures, WH_RELAXED);
    v->commands = s->commands;
    wh__arena_fence_system();
    v->seq = seq + 2u;
}

/* Whether a command that ended with `last` writes the mirror. */
WH_INLINE WH_HOST_DEVICE bool wh__arena_mirrors(const wh__arena_state *s, wh_status last) {
    return s->mirror_mode != WH_ARENA_MIRROR_ON_FAILURE || last != WH_OK;
}

/* Both, the mirror as the mode says (lock held). */
WH_INLINE WH_HOST_DEVICE void wh__arena_publish(wh__arena_state *s, wh_status last) {
    wh__arena_account(s, last);
    if (wh__arena_mirrors(s, last)) wh__arena_mirror(s);
}

/* The mirror now, whatever the mode (clear, flush; lock held). */
WH_INLINE WH_HOST_DEVICE void wh__arena_publish_now(wh__arena_state *s, wh_status last) {
    wh__arena_account(s, last);
    wh__arena_mirror(s);
}

/* gcd(stride, granule), the granule a power of two (wh_blocks_init requires it). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__arena_gcd(uint64_t stride, uint64_t granule) {
    uint64_t low = stride & (~stride + 1u); /* granule is a power of two: no division */
    return low < granule ? low : granule;
}

/* a / b and a % b (b > 0) in 32 bits where both fit: on the GPU a 64-bit
 * division is a long call, and one replace runs about ten of them (~1 us of
 * its 4.8 us at 32^3). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__arena_div(uint64_t a, uint64_t b) {
    return ((a | b) >> 32) ? a / b : (uint64_t)((uint32_t)a / (uint32_t)b);
}
WH_INLINE WH_HOST_DEVICE uint64_t wh__arena_mod(uint64_t a, uint64_t b) {
    return ((a | b) >> 32) ? a % b : (uint64_t)((uint32_t)a % (uint32_t)b);
}

/* The first offset at or after off that is a multiple of stride. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__arena_align_up(uint64_t off, uint64_t stride) {
    return off + wh__arena_mod(stride - wh__arena_mod(off, stride), stride);
}

#include "warpheap/arena/ring.h"

/* Padding a block needs so that some address in it is a multiple of stride
 * from the region's start (block addresses are granule multiples). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__arena_pad_max(const wh__arena_state *s, uint64_t stride) {
    return stride - wh__arena_gcd(stride, wh__arena_core((wh__arena_state *)s)->granule);
}

/* The handle of freshly allocated block b (a new generation). */
WH_INLINE WH_HOST_DEVICE wh_handle wh__arena_handle(wh__arena_state *s, uint32_t b, uint64_t stride) {
    uint64_t off = wh_blocks_desc(wh__arena_core(s))[b].addr;
    uint32_t *gen = wh__arena_gen(s);
    wh_handle h;
    gen[b]++;
    h.ptr = s->base + wh__arena_align_up(off, stride);
    h.block = b;
    h.gen = gen[b];
    s->allocs++;
    return h;
}

/* The seed's Allocate(count, stride), lock held.  *out = the handle or null. */
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_do_alloc(wh__arena_state *s, uint64_t count, uint64_t stride,
                                                      wh_handle *out) {
    *out = wh_handle_null();
    if (count == 0 || stride == 0) return WH_ERR_INVALID_ARGUMENT;
    if (count > wh__arena_div(s->bytes, stride)) return WH_ERR_TOO_LARGE;
    wh_blocks *c = wh__arena_core(s);
    uint64_t pad_max = wh__arena_pad_max(s, stride);
    uint64_t need = count * stride + pad_max;
    if (need > s->bytes || need < pad_max) return WH_ERR_TOO_LARGE;
    uint32_t b = s->policy == WH_ARENA_RING ? wh__ring_alloc(s, need) : wh_blocks_alloc(c, need, 0);
    if (b == WH_BLOCK_NONE) return WH_ERR_OUT_OF_MEMORY;
    *out = wh__arena_handle(s, b, stride);
    return WH_OK;
}

/* A span of count elements, lock held.  RING policy: when the free block at
 * the cursor is too small for all of them, it takes as many as fit there and
 * the rest from the next free block that holds them (in a FIFO ring: the one
 * at the region's start); otherwise, and under BEST_FIT, one extent. */
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_do_alloc_span(wh__arena_state *s, uint64_t count, uint64_t stride,
                                                           wh_arena_span *out) {
    out->part[0] = out->part[1] = wh_handle_null();
    out->count0 = out->count = 0;
    if (s->policy == WH_ARENA_RING && count != 0 && stride != 0 && count <= wh__arena_div(s->bytes, stride)) {
        wh_blocks *c = wh__arena_core(s);
        const wh_block *d = wh_blocks_desc(c);
        uint64_t pad_max = wh__arena_pad_max(s, stride);
        uint32_t b = wh__ring_start(s);
        uint64_t room = d[b].state == WH_BLOCK_FREE ? d[b].size : 0;
        uint64_t n0 = room > pad_max ? wh__arena_div(room - pad_max, stride) : 0;
        if (n0 != 0 && n0 < count && wh_blocks_round(c, count * stride + pad_max) > room) {
            uint64_t need1 = wh_blocks_round(c, (count - n0) * stride + pad_max);
            uint32_t b1 = need1 ? wh__ring_find(s, wh__ring_succ(s, d, b), need1) : WH_BLOCK_NONE;
            if (b1 != WH_BLOCK_NONE && b1 != b) {
                wh__ring_take(s, b, wh_blocks_round(c, n0 * stride + pad_max));
                wh__ring_take(s, b1, need1);
                out->part[0] = wh__arena_handle(s, b, stride);
                out->part[1] = wh__arena_handle(s, b1, stride);
                out->count0 = n0;
                out->count = count;
                return WH_OK;
            }
        }
    }
    wh_status st = wh__arena_do_alloc(s, count, stride, &out->part[0]);
    if (st == WH_OK) out->count0 = out->count = count;
    return st;
}

/* Free(handle), lock held.  Rejects, changing nothing: the null handle
 * (INVALID_ARGUMENT), a handle of another arena or a forged one (FOREIGN),
 * a handle whose block was freed already (DOUBLE_FREE). */
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_do_free(wh__arena_state *s, wh_handle h) {
    if (h.ptr == 0) return WH_ERR_INVALID_ARGUMENT;
    wh_blocks *c = wh__arena_core(s);
    if (h.ptr < s->base || h.ptr - s->base >= s->bytes || h.block >= c->capacity) return WH_ERR_FOREIGN_POINTER;
    const wh_block *d = &wh_blocks_desc(c)[h.block];
    if (d->state != WH_BLOCK_USED || wh__arena_gen(s)[h.block] != h.gen) return WH_ERR_DOUBLE_FREE;
    uint64_t off = h.ptr - s->base;
    if (off < d->addr || off - d->addr >= d->size) return WH_ERR_FOREIGN_POINTER;
    if (!wh_blocks_free(c, h.block, 0)) return WH_ERR_CORRUPT;
    s->frees++;
    return WH_OK;
}

/* A command: n allocations (counts[i] * stride bytes) into slots[i].  Run by
 * one thread.  Returns the first failure. */
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_cmd_alloc(wh__arena_state *s, const size_t *counts, uint64_t stride,
                                                       uint32_t n, wh_handle *slots) {
    if (!wh__arena_lock(s)) {
        for (uint32_t i = 0; i < n; ++i) slots[i] = wh_handle_null();
        wh__arena_note(s, WH_ERR_RETRY_LIMIT);
        return WH_ERR_RETRY_LIMIT;
    }
    wh_status first = WH_OK;
    for (uint32_t i = 0; i < n; ++i) {
        wh_handle h;
        wh_status st = wh__arena_do_alloc(s, counts[i], stride, &h);
        slots[i] = h;
        wh__arena_note(s, st);
        if (first == WH_OK) first = st;
    }
    wh__arena_publish(s, first);
    wh__arena_unlock(s);
    return first;
}

/* A command: free slots[0..n) and null them. */
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_cmd_free(wh__arena_state *s, wh_handle *slots, uint32_t n) {
    if (!wh__arena_lock(s)) {
        wh__arena_note(s, WH_ERR_RETRY_LIMIT);
        return WH_ERR_RETRY_LIMIT;
    }
    wh_status first = WH_OK;
    for (uint32_t i = 0; i < n; ++i) {
        wh_status st = wh__arena_do_free(s, slots[i]);
        if (st == WH_OK) slots[i] = wh_handle_null();
        wh__arena_note(s, st);
        if (first == WH_OK) first = st;
    }
    wh__arena_publish(s, first);
    wh__arena_unlock(s);
    return first;
}

/* A command: free the handle in *slot unless it is null, then allocate
 * count * stride bytes into it -- one command for a ring of buffers.  If the
 * free is refused (a bad handle) the slot is left as it was. */
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_cmd_replace(wh__arena_state *s, const size_t *count, uint64_t stride,
                                                         wh_handle *slot) {
    if (!wh__arena_lock(s)) {
        wh__arena_note(s, WH_ERR_RETRY_LIMIT);
        return WH_ERR_RETRY_LIMIT;
    }
    wh_status st = slot->ptr ? wh__arena_do_free(s, *slot) : WH_OK;
    if (st == WH_OK) {
        wh_handle h;
        st = wh__arena_do_alloc(s, *count, stride, &h);
        *slot = h;
    }
    wh__arena_note(s, st);
    wh__arena_publish(s, st);
    wh__arena_unlock(s);
    return st;
}

/* A command: write the mirror now, clearing the sticky status first if
 * clear (wh_arena_clear_status_async; else wh_arena_flush_async).  The lock
 * keeps it from interleaving with a command's note.  False: no lock. */
WH_INLINE WH_HOST_DEVICE bool wh__arena_cmd_mirror(wh__arena_state *s, bool clear) {
    if (!wh__arena_lock(s)) return false;
    if (clear) wh_atomic_store(&s->first_status, (uint32_t)WH_OK, WH_RELAXED);
    wh__arena_publish_now(s, clear ? WH_OK : (wh_status)s->last_status);
    wh__arena_unlock(s);
    return true;
}

/* Free the span in *slot (its non-null parts), then allocate a span of
 * count elements into it (lock held). */
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_replace_span_locked(wh__arena_state *s, uint64_t count, uint64_t stride,
                                                                 wh_arena_span *slot) {
    wh_status st = WH_OK;
    for (int p = 0; p < 2 && st == WH_OK; ++p) {
        if (!slot->part[p].ptr) continue;
        st = wh__arena_do_free(s, slot->part[p]);
        if (st == WH_OK) slot->part[p] = wh_handle_null();
    }
    if (st == WH_OK) st = wh__arena_do_alloc_span(s, count, stride, slot);
    return st;
}

/* A command: free the span in *slot (its non-null parts), then allocate a
 * span of count elements into it -- replace for a ring of meshes that may
 * wrap (arena/ring.h).  If a free is refused the slot keeps what is left. */
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_cmd_replace_span(wh__arena_state *s, uint64_t count, uint64_t stride,
                                                              wh_arena_span *slot) {
    if (!wh__arena_lock(s)) {
        wh__arena_note(s, WH_ERR_RETRY_LIMIT);
        return WH_ERR_RETRY_LIMIT;
    }
    wh_status st = wh__arena_replace_span_locked(s, count, stride, slot);
    wh__arena_note(s, st);
    wh__arena_publish(s, st);
    wh__arena_unlock(s);
    return st;
}

/* Whether word i of the image is one that others change outside the lock
 * (atomics): the lock word with first_status, and failures.  A copy reads
 * them atomically; a write-back of a staged image never writes them. */
WH_INLINE WH_HOST_DEVICE bool wh__arena_word_unlocked(uint64_t i) {
    return i == offsetof(wh__arena_state, lock) / 8u || i == offsetof(wh__arena_state, failures) / 8u;
}

/* Bytes of the metadata image (state, generations, block core): what
 * wh_arena_replace_span_block stages.  Fixed at creation, read unlocked. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__arena_image_bytes(const wh__arena_state *s) {
    const wh_blocks *c = (const wh_blocks *)((const char *)s + s->core_off);
    return s->core_off + c->total_bytes;
}

#endif /* WARPHEAP_ARENA_CORE_H */
