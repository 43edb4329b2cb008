/* SPDX-License-Identifier: MIT */
/* warpheap stream arena: allocate and free as commands in a CUDA
 * stream.  Sizes are read from device memory when the command runs, the
 * address lands in a handle slot in device memory, the CPU never waits.
 *
 * Implements seed gpu-executed-heap.txt (an HLSL heap run by the GPU):
 * "Address Buffering" (results go to a slot another kernel reads), "Padding"
 * (allocation by count and stride, the address a multiple of the stride from
 * the buffer's start) and, through the block core (core/blocks.h), "Heap",
 * "Fragmentation" and "Linked List".  A command is a one-thread kernel that
 * runs the core on its device-resident metadata (the seed's single-thread
 * compute shader).
 *
 * Departures from the seed:
 *  - A handle is {address, block id, generation}, not a raw word index: the
 *    free command finds the block in O(1) and rejects stale (double free) and
 *    foreign handles instead of corrupting the heap.
 *  - Padding needs count*stride + stride - gcd(stride, granule) bytes, not
 *    (count + 1) * stride: block addresses are granule aligned, so strides
 *    that divide the granule need no padding at all.
 *  - A failure writes a null handle and records a status in a word of
 *    host-mapped memory, so the host reads it whenever it likes, no sync.
 *  - The core is single-threaded; kernels may also allocate directly under a
 *    lock word (wh_arena_alloc_warp): one lane per warp takes it, never two
 *    lanes of one warp, so no lane spins on a sibling (see LOCK RULE below).
 *
 *   wh_arena *a;
 *   wh_arena_create(&a, &(wh_arena_config){ .bytes = 1 << 30 });
 *   count_kernel<<<..., s>>>(d_bytes);                 // the size, on the GPU
 *   wh_arena_alloc_async(a, d_bytes, d_slot, s);       // address -> *d_slot
 *   fill_kernel<<<..., s>>>(d_slot);                   // p = wh_handle_ptr(d_slot)
 *   wh_arena_free_async(a, d_slot, s);                 // *d_slot = null handle
 *   if (wh_arena_status(a) != WH_OK) ...               // any time, never syncs
 *
 * On the CPU backend (WH_ARENA_CPU, or a build without CUDA) region and
 * metadata are host memory and the calling thread runs each command at once:
 * program order is stream order.  The command code is the same.
 */
#ifndef WARPHEAP_ARENA_H
#define WARPHEAP_ARENA_H

#include "warpheap/warpheap.h"
#include "warpheap/core/walk.h" /* wh_blocks_report, for wh_arena_check */

WH_EXTERN_C_BEGIN

/* Where an allocation landed.  ptr == 0 is the null handle (failure, or a
 * slot already freed).  16 bytes, one vector load. */
typedef struct wh_handle {
    uint64_t ptr;   /* address of element 0                          */
    uint32_t block; /* descriptor id in the arena's block core       */
    uint32_t gen;   /* that descriptor's generation at allocation    */
} wh_handle;

/* An allocation in up to two extents (RING policy, arena/ring.h): elements
 * [0, count0) at part[0], [count0, count) at part[1] (null when one extent
 * holds them all). */
typedef struct wh_arena_span {
    wh_handle part[2];
    uint64_t count0, count;
} wh_arena_span;

/* Address of element i (of elem_bytes) of a span; NULL for a null span. */
WH_INLINE WH_HOST_DEVICE void *wh_arena_span_at(const wh_arena_span *sp, uint64_t i, uint64_t elem_bytes) {
    if (i < sp->count0) return (void *)(uintptr_t)(sp->part[0].ptr + i * elem_bytes);
    if (!sp->part[1].ptr) return NULL;
    return (void *)(uintptr_t)(sp->part[1].ptr + (i - sp->count0) * elem_bytes);
}

/* A span over ordinary memory (one extent, no element bound), so that code
 * writing through wh_arena_span_at serves arena spans and plain buffers alike.
 * It is not an arena allocation: never free it with the arena. */
WH_INLINE WH_HOST_DEVICE wh_arena_span wh_arena_span_of(void *ptr) {
    wh_arena_span sp;
    memset(&sp, 0, sizeof sp);
    sp.part[0].ptr = (uint64_t)(uintptr_t)ptr;
    sp.count0 = sp.count = UINT64_MAX;
    return sp;
}

/* RING reservations (arena/reserve.h): what the next replace of one slot
 * will find once that slot's span is freed -- the free blocks in ring order
 * from the cursor -- made off the critical path by the previous commit. */
#define WH_ARENA_PLAN_BLOCKS 4
typedef struct wh_arena_plan_block {
    uint64_t addr, size; /* offset in the region, bytes           */
    uint32_t id, gen;    /* descriptor; the generation a take gives */
} wh_arena_plan_block;

typedef struct wh_arena_ring_plan {
    uint32_t valid, nfree;    /* nfree blocks recorded in blk           */
    uint32_t start, complete; /* the cursor's block; 1: blk holds every free block */
    uint64_t version;         /* state's commands when made: stale once another runs */
    uint64_t slot;            /* the slot whose span it assumes freed   */
    uint64_t granule;
    wh_arena_span expect; /* what that slot held                    */
    wh_arena_plan_block blk[WH_ARENA_PLAN_BLOCKS];
    uint64_t q_stride, q_fit; /* the quote: counts 1..q_fit of q_stride */
    wh_handle q_h0;           /* bytes take q_h0, the cursor's block    */
} wh_arena_ring_plan;

/* A reservation in flight: published by wh_arena_ring_reserve_thread, the
 * block core brought up to date by wh_arena_ring_commit_*; the lock is held
 * from one to the other. */
typedef struct wh_arena_ring_pending {
    uint32_t active, fast; /* fast: published from the plan, core not yet changed */
    uint32_t status, pad;  /* what the commit reports if it succeeds: WH_OK, or */
                           /* a clamped close's WH_ERR_OUT_OF_MEMORY (arena/window.h) */
    uint64_t slot, next;   /* the replaced slot; the slot to plan for (0: none) */
    uint64_t count, stride;
    wh_arena_span old, made; /* the span it frees, the span it published */
} wh_arena_ring_pending;

/* Lives in the arena's metadata (device memory on CUDA).  Counters change
 * only under the lock, except first_status and failures (atomics: a lock
 * that could not be taken still reports). */
typedef struct wh_arena_state {
    uint32_t lock;         /* 0 free, 1 held                        */
    uint32_t first_status; /* sticky: first failure since clear     */
    uint32_t last_status;  /* of the last command                   */
    uint32_t seq;          /* the mirror's sequence word, kept here: */
                           /* the GPU then never reads host memory   */
    uint64_t base, bytes;  /* the region                            */
    uint64_t peak_used;    /* high-water mark of used block bytes   */
    uint64_t allocs, frees, failures, commands;
    uint64_t gen_off, core_off; /* byte offsets from this struct         */
    uint64_t mirror;            /* wh_arena_stats * the host can read    */
    uint32_t policy;            /* wh_arena_policy                       */
    uint32_t ring_head;         /* RING: descriptor of the first block   */
    uint32_t ring_hint;         /* RING: the last block allocated        */
    uint32_t mirror_mode;       /* wh_arena_mirror                       */
    uint64_t ring_cursor;       /* RING: offset where that block ended   */
    wh_arena_ring_plan plan;    /* RING: made by the last commit          */
    wh_arena_ring_pending pending;
    uint64_t planned;      /* RING: reservations the plan served     */
                           /* (after pending: a kept copy reloads both) */
    uint64_t warm_commits; /* RING: commits that only allocated: the */
                           /* free made on a kept copy by the plan   */
} wh_arena_state;
#ifdef __cplusplus
#define WH__ARENA_ASSERT static_assert
#else
#define WH__ARENA_ASSERT _Static_assert
#endif
WH__ARENA_ASSERT(offsetof(wh_arena_state, planned) ==
                         offsetof(wh_arena_state, pending) + sizeof(wh_arena_ring_pending) &&
                     offsetof(wh_arena_state, pending) % 8u == 0 && offsetof(wh_arena_state, plan) % 8u == 0 &&
                     sizeof(wh_arena_ring_plan) % 8u == 0,
                 "a kept copy reloads pending..planned as whole words");

/* A copy of the counters the host can read at any time (host-mapped memory,
 * written by the command that changed them; a sequence word makes the copy
 * a consistent snapshot). */
typedef struct wh_arena_stats {
    uint32_t seq; /* odd while a command writes            */
    uint32_t first_status, last_status, pad;
    uint64_t region_bytes;
    uint64_t used_bytes, peak_used, live_blocks;
    uint64_t allocs, frees, failures, commands;
} wh_arena_stats;

/* What a kernel gets, by value. */
typedef struct wh_arena_ref {
    wh_arena_state *s;
} wh_arena_ref;

typedef struct wh_arena wh_arena;

typedef enum wh_arena_backend {
    WH_ARENA_AUTO = 0, /* CUDA in a CUDA build (WH_ERR_NO_DEVICE
                                    without a GPU), CPU in a build without CUDA */
    WH_ARENA_CPU = 1,  /* host memory, commands run by the caller */
    WH_ARENA_CUDA = 2, /* device memory, commands are kernels     */
} wh_arena_backend;

/* Which free block an allocation takes (arena/ring.h says why RING). */
typedef enum wh_arena_policy {
    WH_ARENA_BEST_FIT = 0, /* the block core's free index (TLSF / max-heap)  */
    WH_ARENA_RING = 1,     /* next fit after the last allocation: FIFO use   */
} wh_arena_policy;

/* When commands write the host-visible mirror of the counters.  Writing it
 * costs two system-scope fences and a dozen PCIe stores per command, on
 * the command's critical path (a replace costs ~13 us back to back whether
 * one thread or a staged block runs it: test_arena_gpu). */
typedef enum wh_arena_mirror {
    WH_ARENA_MIRROR_EVERY = 0,      /* every command: stats always current        */
    WH_ARENA_MIRROR_ON_FAILURE = 1, /* only a failing command (and clear, flush): */
                                    /* wh_arena_status still shows every failure  */
                                    /* at once; the other counters are as of the  */
                                    /* last failure or wh_arena_flush_async       */
} wh_arena_mirror;

/* The largest region an arena takes: 2^48 bytes, the span of a 48-bit
 * virtual address space (x86-64 and today's GPUs).  Larger sizes are
 * refused with WH_ERR_TOO_LARGE before any rounding could wrap them. */
#define WH_ARENA_MAX_BYTES (1ull << 48)

typedef struct wh_arena_config {
    size_t bytes;         /* region size (required), <= WH_ARENA_MAX_BYTES  */
    void *region;         /* optional: caller's memory (pool / cudaMalloc), */
                          /* granule aligned; NULL: the arena allocates     */
    uint32_t max_blocks;  /* descriptors, free + used; 0 = 65536             */
    uint32_t granule;     /* power of two >= 8; 0 = 256                     */
    wh_blocks_kind index; /* TLSF (default), the seed's max-heap, or LIST:  */
                          /* no index -- for RING, which never searches    */
                          /* one: faster commands, a smaller image         */
    wh_arena_backend backend;
    wh_arena_policy policy;
    wh_arena_mirror mirror;
} wh_arena_config;

/* ---- host API --------------------------------------------------------------- */

WH_API wh_status wh_arena_create(wh_arena **out, const wh_arena_config *cfg);
WH_API wh_status wh_arena_destroy(wh_arena *a); /* waits for the device */
WH_API wh_arena_ref wh_arena_device(const wh_arena *a);
WH_API wh_arena_backend wh_arena_get_backend(const wh_arena *a);
/* Bytes of the metadata image: the dynamic smem wh_arena_replace_span_block
 * needs to stage it (small max_blocks keep it small: about 11 KiB for 64). */
WH_API size_t wh_arena_meta_bytes(const wh_arena *a);
WH_API void *wh_arena_base(const wh_arena *a);

/* Commands, in stream order.  Sizes and handles are device pointers (host
 * pointers on the CPU backend).  count*stride bytes; the address is a
 * multiple of stride from the region's start and granule aligned. */
WH_API wh_status wh_arena_alloc_async(wh_arena *a, const size_t *d_bytes, wh_handle *d_slot, wh_stream s);
WH_API wh_status wh_arena_alloc_strided_async(wh_arena *a, const size_t *d_count, size_t stride, wh_handle *d_slot,
                                              wh_stream s);
/* n allocations of d_counts[i]*stride bytes into d_slots[i], in order. */
WH_API wh_status wh_arena_alloc_batch_async(wh_arena *a, const size_t *d_counts, size_t stride, uint32_t n,
                                            wh_handle *d_slots, wh_stream s);
/* Frees the handle in *d_slot and writes the null handle there. */
WH_API wh_status wh_arena_free_async(wh_arena *a, wh_handle *d_slot, wh_stream s);
WH_API wh_status wh_arena_free_batch_async(wh_arena *a, wh_handle *d_slots, uint32_t n, wh_stream s);
/* Free *d_slot unless it holds the null handle, then allocate *d_count *
 * stride bytes into it: one command where a ring of K buffers turns over. */
WH_API wh_status wh_arena_replace_async(wh_arena *a, const size_t *d_count, size_t stride, wh_handle *d_slot,
                                        wh_stream s);
/* The same for a span (arena/ring.h): free *d_slot's parts, allocate
 * *d_count * stride bytes in at most two extents under the RING policy. */
WH_API wh_status wh_arena_replace_span_async(wh_arena *a, const size_t *d_count, size_t stride, wh_arena_span *d_slot,
                                             wh_stream s);
WH_API wh_status wh_arena_clear_status_async(wh_arena *a, wh_stream s);
/* A command that writes the mirror (for WH_ARENA_MIRROR_ON_FAILURE). */
WH_API wh_status wh_arena_flush_async(wh_arena *a, wh_stream s);

/* The returned wh_status of the calls above says only whether the command
 * was enqueued.  What happened when it ran: */
WH_API wh_status wh_arena_status(const wh_arena *a);                         /* first failure, never syncs */
WH_API wh_status wh_arena_stats_get(const wh_arena *a, wh_arena_stats *out); /* never syncs */

/* Heap walk: waits for the device, copies the metadata to the host and
 * checks the block core and the arena's counters.  WH_ERR_CORRUPT if wrong. */
WH_API wh_status wh_arena_check(wh_arena *a, wh_blocks_report *report);

/* ---- device side (and the command bodies) ------------------------------------ */

/* The pointer in a slot (NULL for the null handle). */
WH_INLINE WH_HOST_DEVICE void *wh_handle_ptr(const wh_handle *slot) { return (void *)(uintptr_t)slot->ptr; }
WH_INLINE WH_HOST_DEVICE wh_handle wh_handle_null(void) {
    wh_handle h = {0, WH_BLOCK_NONE, 0};
    return h;
}

WH_INLINE WH_HOST_DEVICE wh_blocks *wh__arena_core(wh_arena_state *s) { return (wh_blocks *)((char *)s + s->core_off); }
WH_INLINE WH_HOST_DEVICE uint32_t *wh__arena_gen(wh_arena_state *s) { return (uint32_t *)((char *)s + s->gen_off); }

#define WH_ARENA_LOCK_TRIES (1u << 22)

/* LOCK RULE: the lock word serialises the single-threaded core between
 * command kernels and kernels that allocate directly.  At most one lane of a
 * warp ever tries to take it (wh_arena_alloc_warp elects one), so a waiting
 * lane always waits for another warp, which the scheduler runs.  Bounded:
 * false after WH_ARENA_LOCK_TRIES attempts. */
WH_INLINE WH_HOST_DEVICE bool wh__arena_lock(wh_arena_state *s) {
    for (unsigned k = 0; k < WH_ARENA_LOCK_TRIES; ++k) {
        uint32_t expected = 0;
        if (wh_atomic_cas(&s->lock, &expected, 1u, WH_ACQUIRE, WH_RELAXED)) return true;
        wh_backoff(k);
    }
    return false;
}
/* The lock for a caller that expects it free within microseconds (a commit
 * about to unlock) and no other waiter: a CAS at the shortest backoff, so
 * it answers as soon as the holder lets go (one round trip, where a load
 * that sees it free and then a CAS take two), where wh__arena_lock's
 * backoff grows to 2 us between tries.  Bounded: false after polls tries. */
WH_INLINE WH_HOST_DEVICE bool wh__arena_lock_poll(wh_arena_state *s, uint32_t polls) {
    for (uint32_t k = 0; k < polls; ++k) {
        uint32_t expected = 0;
        if (wh_atomic_cas(&s->lock, &expected, 1u, WH_ACQUIRE, WH_RELAXED)) return true;
        wh_backoff(0);
    }
    return false;
}
WH_INLINE WH_HOST_DEVICE void wh__arena_unlock(wh_arena_state *s) { wh_atomic_store(&s->lock, 0u, WH_RELEASE); }

/* Record a command's outcome (first_status and failures also outside the lock). */
WH_INLINE WH_HOST_DEVICE void wh__arena_note(wh_arena_state *s, wh_status st) {
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
WH_INLINE WH_HOST_DEVICE void wh__arena_account(wh_arena_state *s, wh_status last) {
    wh_blocks *c = wh__arena_core(s);
    s->commands++;
    s->last_status = (uint32_t)last;
    if (c->used_bytes > s->peak_used) s->peak_used = c->used_bytes;
    s->seq += 2u;
}

/* Copy the counters to the host-visible mirror (lock held, after
 * wh__arena_account: s->seq is the even number the copy ends with). */
WH_INLINE WH_HOST_DEVICE void wh__arena_mirror(wh_arena_state *s) {
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
WH_INLINE WH_HOST_DEVICE bool wh__arena_mirrors(const wh_arena_state *s, wh_status last) {
    return s->mirror_mode != WH_ARENA_MIRROR_ON_FAILURE || last != WH_OK;
}

/* Both, the mirror as the mode says (lock held). */
WH_INLINE WH_HOST_DEVICE void wh__arena_publish(wh_arena_state *s, wh_status last) {
    wh__arena_account(s, last);
    if (wh__arena_mirrors(s, last)) wh__arena_mirror(s);
}

/* The mirror now, whatever the mode (clear, flush; lock held). */
WH_INLINE WH_HOST_DEVICE void wh__arena_publish_now(wh_arena_state *s, wh_status last) {
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
WH_INLINE WH_HOST_DEVICE uint64_t wh__arena_pad_max(const wh_arena_state *s, uint64_t stride) {
    return stride - wh__arena_gcd(stride, wh__arena_core((wh_arena_state *)s)->granule);
}

/* The handle of freshly allocated block b (a new generation). */
WH_INLINE WH_HOST_DEVICE wh_handle wh__arena_handle(wh_arena_state *s, uint32_t b, uint64_t stride) {
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
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_do_alloc(wh_arena_state *s, uint64_t count, uint64_t stride,
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
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_do_alloc_span(wh_arena_state *s, uint64_t count, uint64_t stride,
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
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_do_free(wh_arena_state *s, wh_handle h) {
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
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_cmd_alloc(wh_arena_state *s, const size_t *counts, uint64_t stride,
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
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_cmd_free(wh_arena_state *s, wh_handle *slots, uint32_t n) {
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
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_cmd_replace(wh_arena_state *s, const size_t *count, uint64_t stride,
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
WH_INLINE WH_HOST_DEVICE bool wh__arena_cmd_mirror(wh_arena_state *s, bool clear) {
    if (!wh__arena_lock(s)) return false;
    if (clear) wh_atomic_store(&s->first_status, (uint32_t)WH_OK, WH_RELAXED);
    wh__arena_publish_now(s, clear ? WH_OK : (wh_status)s->last_status);
    wh__arena_unlock(s);
    return true;
}

/* Free the span in *slot (its non-null parts), then allocate a span of
 * count elements into it (lock held). */
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_replace_span_locked(wh_arena_state *s, uint64_t count, uint64_t stride,
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
WH_INLINE WH_HOST_DEVICE wh_status wh__arena_cmd_replace_span(wh_arena_state *s, uint64_t count, uint64_t stride,
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

/* The same from a kernel, by one thread (e.g. the last block of a counting
 * kernel, once the size is known: no command launch).  Not for several
 * lanes of one warp at once (LOCK RULE). */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_replace_span_thread(wh_arena_ref a, uint64_t count, uint64_t stride,
                                                                wh_arena_span *slot) {
    return wh__arena_cmd_replace_span(a.s, count, stride, slot);
}

/* Whether word i of the image is one that others change outside the lock
 * (atomics): the lock word with first_status, and failures.  A copy reads
 * them atomically; a write-back of a staged image never writes them. */
WH_INLINE WH_HOST_DEVICE bool wh__arena_word_unlocked(uint64_t i) {
    return i == offsetof(wh_arena_state, lock) / 8u || i == offsetof(wh_arena_state, failures) / 8u;
}

/* Bytes of the metadata image (state, generations, block core): what
 * wh_arena_replace_span_block stages.  Fixed at creation, read unlocked. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__arena_image_bytes(const wh_arena_state *s) {
    const wh_blocks *c = (const wh_blocks *)((const char *)s + s->core_off);
    return s->core_off + c->total_bytes;
}

#ifdef __CUDACC__ /* CUDA sources: both nvcc passes see the declarations */

/* The same replace by a whole thread block (every thread calls it, converged,
 * with the same arguments), for a kernel whose last block allocates: a
 * single thread's command is a chain of dependent loads from L2 (~40 of
 * them, about 12 us: test_arena_gpu), so the block copies the
 * metadata image -- position independent: offsets -- into smem (smem_bytes
 * of it, 8-aligned), thread 0 runs the command on the copy, and the block
 * writes back the words that changed, all under the real lock; meanwhile
 * one thread of warp 1 writes the host mirror (its system-scope fences off
 * the critical path).  Words the command does not own are never written
 * back: lock, first_status and failures (changed by atomics outside the
 * lock); a failure is noted on the real state.  With too little smem, or an
 * image over 8 words a thread, thread 0 runs the command in place.  Returns
 * the status (to every thread). */
#define WH_ARENA_STAGE_WORDS 8
WH_INLINE WH_DEVICE wh_status wh_arena_replace_span_block(wh_arena_ref a, uint64_t count, uint64_t stride,
                                                          wh_arena_span *slot, void *smem, uint64_t smem_bytes) {
    __shared__ uint32_t wh__block_status;
    uint64_t bytes = wh__arena_image_bytes(a.s), words = bytes / 8u;
    __syncthreads(); /* wh__block_status: free to write */
    if (bytes > smem_bytes || (bytes & 7u) || ((uintptr_t)smem & 7u) || blockDim.x < 64 ||
        words > (uint64_t)WH_ARENA_STAGE_WORDS * blockDim.x) {
        if (threadIdx.x == 0) wh__block_status = (uint32_t)wh__arena_cmd_replace_span(a.s, count, stride, slot);
        __syncthreads();
        return (wh_status)wh__block_status;
    }
    if (threadIdx.x == 0) {
        bool locked = wh__arena_lock(a.s);
        if (!locked) wh__arena_note(a.s, WH_ERR_RETRY_LIMIT);
        wh__block_status = locked ? (uint32_t)WH_OK : (uint32_t)WH_ERR_RETRY_LIMIT;
    }
    __syncthreads();
    if (wh__block_status != WH_OK) return (wh_status)wh__block_status;
    uint64_t *img = (uint64_t *)smem, *real = (uint64_t *)a.s, orig[WH_ARENA_STAGE_WORDS];
    for (int j = 0; j < WH_ARENA_STAGE_WORDS; ++j) {
        uint64_t i = threadIdx.x + (uint64_t)j * blockDim.x;
        if (i < words) img[i] = orig[j] = __ldcg(&real[i]); /* from L2: written elsewhere */
    }
    __syncthreads();
    wh_arena_state *copy = (wh_arena_state *)smem;
    if (threadIdx.x == 0) {
        wh_status st = wh__arena_replace_span_locked(copy, count, stride, slot);
        wh__arena_note(copy, st);
        wh__arena_account(copy, st);
        wh__block_status = (uint32_t)st;
    }
    __syncthreads();
    if (threadIdx.x == 32 && wh__arena_mirrors(copy, (wh_status)wh__block_status)) wh__arena_mirror(copy);
    for (int j = 0; j < WH_ARENA_STAGE_WORDS; ++j) {
        uint64_t i = threadIdx.x + (uint64_t)j * blockDim.x;
        if (i < words && !wh__arena_word_unlocked(i) && img[i] != orig[j]) real[i] = img[i];
    }
    __threadfence(); /* the image before the unlock */
    __syncthreads();
    wh_status st = (wh_status)wh__block_status;
    if (threadIdx.x == 0) {
        wh__arena_note(a.s, st);
        wh__arena_unlock(a.s);
    }
    return st;
}
#endif

/* ---- allocation from a kernel ------------------------------------------------- *
 * Every active lane may call these; one lane of the warp (the lowest) takes
 * the lock once and serves the whole warp.  Call where the calling lanes are
 * converged (wh_active_mask() is read at entry).  Throughput is that of one
 * thread: use them where one thread per block or warp is the natural owner. */
/* mask: exactly the lanes that call, each with its own request (derive it
 * with wh_ballot at a converged point; wh_arena_alloc_warp uses the active
 * mask).  Lanes of one warp must not be inside two arena calls at once. */
WH_INLINE WH_HOST_DEVICE wh_handle wh_arena_alloc_mask(wh_arena_ref a, uint32_t mask, uint64_t count, uint64_t stride) {
    unsigned leader = wh_leader(mask);
    bool lead = wh_lane_id() == leader;
    uint32_t locked = lead ? (uint32_t)wh__arena_lock(a.s) : 0u;
    locked = wh_shfl32(mask, locked, leader);
    wh_handle mine = wh_handle_null();
    wh_status first = locked ? WH_OK : WH_ERR_RETRY_LIMIT;
    if (!locked && lead) wh__arena_note(a.s, WH_ERR_RETRY_LIMIT);
    for (uint32_t left = locked ? mask : 0u; left; left &= left - 1u) {
        unsigned lane = wh_leader(left); /* serve lanes in order */
        uint64_t c = wh_shfl64(mask, count, lane), st = wh_shfl64(mask, stride, lane);
        wh_handle h = wh_handle_null();
        if (lead) {
            wh_status r = wh__arena_do_alloc(a.s, c, st, &h);
            wh__arena_note(a.s, r);
            if (first == WH_OK) first = (wh_status)r;
        }
        uint64_t p = wh_shfl64(mask, h.ptr, leader);
        uint32_t b = wh_shfl32(mask, h.block, leader), g = wh_shfl32(mask, h.gen, leader);
        if (wh_lane_id() == lane) {
            mine.ptr = p;
            mine.block = b;
            mine.gen = g;
        }
    }
    if (locked && lead) {
        wh__arena_publish(a.s, first);
        wh__arena_unlock(a.s);
    }
    wh_syncwarp(mask);
    return mine;
}

/* Free the handle in *slot (and null it) from a kernel; same rules.  Returns
 * this lane's status. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_free_mask(wh_arena_ref a, uint32_t mask, wh_handle *slot) {
    unsigned leader = wh_leader(mask);
    bool lead = wh_lane_id() == leader;
    uint32_t locked = lead ? (uint32_t)wh__arena_lock(a.s) : 0u;
    locked = wh_shfl32(mask, locked, leader);
    if (!locked) {
        if (lead) wh__arena_note(a.s, WH_ERR_RETRY_LIMIT);
        return WH_ERR_RETRY_LIMIT;
    }
    wh_handle h = *slot;
    uint32_t mine = WH_OK, first = WH_OK;
    for (uint32_t left = mask; left; left &= left - 1u) {
        unsigned lane = wh_leader(left);
        wh_handle x;
        x.ptr = wh_shfl64(mask, h.ptr, lane);
        x.block = wh_shfl32(mask, h.block, lane);
        x.gen = wh_shfl32(mask, h.gen, lane);
        uint32_t r = WH_OK;
        if (lead) {
            r = (uint32_t)wh__arena_do_free(a.s, x);
            wh__arena_note(a.s, (wh_status)r);
            if (first == WH_OK) first = r;
        }
        r = wh_shfl32(mask, r, leader);
        if (wh_lane_id() == lane) mine = r;
    }
    if (lead) {
        wh__arena_publish(a.s, (wh_status)first);
        wh__arena_unlock(a.s);
    }
    if (mine == WH_OK) *slot = wh_handle_null();
    wh_syncwarp(mask);
    return (wh_status)mine;
}

WH_INLINE WH_HOST_DEVICE wh_handle wh_arena_alloc_warp(wh_arena_ref a, uint64_t count, uint64_t stride) {
    return wh_arena_alloc_mask(a, wh_active_mask(), count, stride);
}
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_free_warp(wh_arena_ref a, wh_handle *slot) {
    return wh_arena_free_mask(a, wh_active_mask(), slot);
}

#include "warpheap/arena/reserve.h"
#include "warpheap/arena/window.h"
#include "warpheap/arena/forecast.h"

WH_EXTERN_C_END

#endif /* WARPHEAP_ARENA_H */
