/* SPDX-License-Identifier: MIT */
/* warpheap stream arena: allocate and free as commands in a CUDA stream.
 * Sizes are read from device memory when the command runs, the address
 * lands in a handle slot in device memory, the CPU never waits.
 *
 * Implements seed gpu-executed-heap.txt (an HLSL heap run by the GPU):
 * "Address Buffering" (results go to a slot another kernel reads), "Padding"
 * (allocation by count and stride, the address a multiple of the stride from
 * the buffer's start) and, through the block core (core/blocks.h), "Heap",
 * "Fragmentation" and "Linked List".  A command is a one-thread kernel that
 * runs the core on its device-resident metadata (the seed's single-thread
 * compute shader).  Departures from the seed: a handle is {address, block
 * id, generation}, so a free is O(1) and stale or foreign handles are
 * rejected; padding is count*stride + stride - gcd(stride, granule) bytes;
 * a failure writes a null handle and a status in host-mapped memory; kernels
 * may also allocate directly under a lock word (LOCK RULE below).
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
 *
 * This header is the API; the machinery is in warpheap/arena/ (internal
 * names wh__*), included in the marked sections. */
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

/* ---- internal layouts (not part of the API) ------------------------------------ */
#include "warpheap/arena/types.h"

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

/* What a kernel gets, by value (wh_arena_device). */
typedef struct wh_arena_ref {
    struct wh__arena_state *s;
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
 * costs two system-scope fences and a dozen PCIe stores per command, on the
 * command's critical path. */
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

/* ---- allocation from a kernel --------------------------------------------------- *
 * LOCK RULE: the block core is single-threaded, so it sits behind one lock
 * word, shared by command kernels and kernels that allocate directly.  At
 * most one lane of a warp ever tries to take it (the calls below elect
 * one), so a waiting lane always waits for another warp, which the scheduler
 * runs.  Lanes of one warp must not be inside two arena calls at once: call
 * from converged code, or derive the mask with wh_ballot.  Bounded: past
 * WH_ARENA_LOCK_TRIES attempts (with back-off; on the CPU backend, where
 * the back-off sleeps, as many microseconds) a call fails with
 * WH_ERR_RETRY_LIMIT (a null handle, counted).  Throughput is that of one
 * thread: use these where one thread per block or warp is the natural owner. */
#define WH_ARENA_LOCK_TRIES (1u << 22)

/* The pointer in a slot (NULL for the null handle); the null handle. */
WH_INLINE WH_HOST_DEVICE void *wh_handle_ptr(const wh_handle *slot) { return (void *)(uintptr_t)slot->ptr; }
WH_INLINE WH_HOST_DEVICE wh_handle wh_handle_null(void) {
    wh_handle h = {0, WH_BLOCK_NONE, 0};
    return h;
}

/* Every active lane gets its own allocation of count * stride bytes (null
 * on failure); _mask: exactly the lanes of mask call, each with its own
 * request (wh_arena_alloc_warp uses wh_active_mask()). */
WH_INLINE WH_HOST_DEVICE wh_handle wh_arena_alloc_warp(wh_arena_ref a, uint64_t count, uint64_t stride);
WH_INLINE WH_HOST_DEVICE wh_handle wh_arena_alloc_mask(wh_arena_ref a, uint32_t mask, uint64_t count, uint64_t stride);
/* Free *slot and null it; returns this lane's status.  Same rules. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_free_warp(wh_arena_ref a, wh_handle *slot);
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_free_mask(wh_arena_ref a, uint32_t mask, wh_handle *slot);
/* wh_arena_replace_span_async from a kernel, by one thread (e.g. the last
 * block of a counting kernel, once the size is known: no command launch). */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_replace_span_thread(wh_arena_ref a, uint64_t count, uint64_t stride,
                                                                wh_arena_span *slot);
#ifdef __CUDACC__
/* The same by a whole thread block (every thread, converged, the same
 * arguments; blockDim.x >= 64): the metadata image staged in smem
 * (smem_bytes >= wh_arena_meta_bytes, 8-aligned), thread 0 replaces on the
 * copy, the block writes back the words that changed.  Without room, thread
 * 0 runs it in place.  The status to every thread. */
WH_INLINE WH_DEVICE wh_status wh_arena_replace_span_block(wh_arena_ref a, uint64_t count, uint64_t stride,
                                                          wh_arena_span *slot, void *smem, uint64_t smem_bytes);
#endif

/* ---- RING reservations: the address out before the block core runs -------------- *
 * In a FIFO ring the answer of a replace is known before the block core
 * runs: the new span starts at the cursor, in the free block there once the
 * oldest span is freed.  A reserve (one thread, once the count is known)
 * takes the lock and, if the plan the previous commit left is current,
 * publishes the span from the plan's few words; otherwise it runs the whole
 * replace.  The lock stays held until wh_arena_ring_commit runs the real
 * replace (which must give the published span: WH_ERR_CORRUPT if not),
 * accounts, and plans the next replace.  No other command of the arena may
 * come between (it would wait for the lock).  Same semantics as
 * wh_arena_replace_span_async, except that a reserve that cannot take the
 * lock (WH_ERR_RETRY_LIMIT) leaves the slot as it was: check the status,
 * not only the span, before writing. */

/* What begin read for end (one thread runs both). */
typedef struct wh_arena_ring_ticket {
    wh__ring_plan pl;
    wh_arena_span old; /* what the slot held                     */
    wh_arena_span *slot;
    uint64_t commands, base, bytes, planned;
    uint64_t fit; /* the plan's quote, if the plan is current */
    uint32_t policy, locked, current;
    uint32_t partial; /* read_handed: the quote's words only    */
} wh_arena_ring_ticket;

/* A lock hand-off from a commit to the ring's next reserve: the commit
 * keeps the lock and adds `handed` to *word (release), or `empty` when it
 * had no reservation to commit.  The reserve that reads `handed` (acquire)
 * owns the lock and calls wh_arena_ring_reserve_read_handed; on anything
 * else it takes the lock itself (wh_arena_ring_reserve_begin).  word NULL
 * (wh_arena_ring_unlock_baton, or all zeros): the commit unlocks. */
typedef struct wh_arena_ring_baton {
    uint32_t *word;
    uint32_t handed, empty;
} wh_arena_ring_baton;
WH_INLINE WH_HOST_DEVICE wh_arena_ring_baton wh_arena_ring_unlock_baton(void);

/* Reserve the replace of *slot by count elements of stride, begin and end
 * back to back.  next: the slot the following replace will free (the commit
 * plans for it; NULL: none).  WH_OK, WH_ERR_RETRY_LIMIT (no lock), or the
 * slow path's failure. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_reserve_thread(wh_arena_ref a, uint64_t count, uint64_t stride,
                                                                wh_arena_span *slot, const wh_arena_span *next);
/* begin: the lock (lock_polls 0: the arena's back-off; else that many polls
 * at the shortest back-off, for a commit expected to unlock within
 * microseconds; on the CPU backend, as many microseconds), then every load the plan's answer needs -- while the count
 * is still being summed.  On WH_ERR_RETRY_LIMIT (counted) no lock is held. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_reserve_begin(wh_arena_ref a, wh_arena_span *slot, uint32_t lock_polls,
                                                               wh_arena_ring_ticket *t);
/* begin for a reserve a commit handed the lock to (only then): only the
 * plan's quote is loaded; a count it does not answer has end read the rest. */
WH_INLINE WH_HOST_DEVICE void wh_arena_ring_reserve_read_handed(wh_arena_ref a, wh_arena_span *slot,
                                                                wh_arena_ring_ticket *t);
/* end: the span for count written to the slot and announced (release), the
 * lock kept for the commit.  _deferred: announced later by
 * wh_arena_ring_reserve_publish, after a fence of the caller's own (the one
 * that opens its grid barrier), so the reservation costs no fence. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_reserve_end(wh_arena_ref a, const wh_arena_ring_ticket *t,
                                                             uint64_t count, uint64_t stride,
                                                             const wh_arena_span *next);
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_reserve_end_deferred(wh_arena_ref a, const wh_arena_ring_ticket *t,
                                                                      uint64_t count, uint64_t stride,
                                                                      const wh_arena_span *next);
WH_INLINE WH_HOST_DEVICE void wh_arena_ring_reserve_publish(wh_arena_ref a);

/* ---- forecasts and posts: one-pass producers that never take the lock -------------- *
 * A one-pass producer (each block adds its predecessors' totals and writes
 * at once) needs the address before the count.  For a ring whose slots are
 * replaced in order the block core is a function of a few numbers -- its
 * free blocks, the cursor, each slot's blocks -- which a forecast keeps and
 * runs replaces on.  The producer of each frame writes into the window the
 * forecast gives, runs the replace on the forecast and posts what it did;
 * one committer (WH_ARENA_COMMIT_POSTS) runs the real replaces in order and
 * checks each against its post (WH_ERR_CORRUPT, counted, where they differ;
 * the forecast is then made again from the real state). */
#define WH_ARENA_FORECAST_FREE  8 /* free blocks a forecast follows */
#define WH_ARENA_FORECAST_SLOTS 8 /* ring slots it follows          */
typedef struct wh_arena_forecast {
    uint32_t valid, k; /* k slots */
    uint32_t nfree, pad;
    uint64_t base, bytes, granule, cursor;
    uint64_t stamp;                                /* the arena's allocs + frees + 1 when a committer left it exact */
    wh__arena_extent free[WH_ARENA_FORECAST_FREE]; /* address order, maximal */
    wh__arena_extent held[WH_ARENA_FORECAST_SLOTS][2]; /* each slot's blocks */
} wh_arena_forecast;

/* What the producer of a frame did (one post ring entry). */
typedef struct wh_arena_ring_post {
    uint32_t seq;           /* post number + 1 (release): posted              */
    uint32_t clamped;       /* 1: the count outgrew the window                */
    uint32_t fstatus, pad;  /* the forecast's replace: WH_OK, or a failure    */
    uint64_t count;         /* elements written                               */
    wh_arena_span forecast; /* where (addresses, counts)                      */
} wh_arena_ring_post;

/* The window the next replace of slot will write into: element i of any
 * count up to w->count goes to wh_arena_span_at(w, i, stride); empty if the
 * forecast is invalid. */
WH_INLINE WH_HOST_DEVICE void wh_arena_ring_forecast_window(const wh_arena_forecast *fc, uint32_t slot, uint64_t stride,
                                                            wh_arena_span *w);
/* The replace of slot by count elements on the forecast: the span the core
 * will give into *out, and the forecast moves on.  WH_OK;
 * WH_ERR_OUT_OF_MEMORY where the core will fail; WH_ERR_CORRUPT where the
 * forecast cannot tell (it is then invalid). */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_forecast_replace(wh_arena_forecast *fc, uint32_t slot, uint64_t count,
                                                                  uint64_t stride, wh_arena_span *out);
/* Whether fc, left exact by a committer, still is (no block taken or freed
 * since): then the next chain's producer forecasts its first window itself. */
WH_INLINE WH_HOST_DEVICE bool wh_arena_ring_forecast_current(const wh_arena_forecast *fc, wh_arena_ref a);

/* ---- the committer ----------------------------------------------------------------- */

/* How wh_arena_ring_commit runs the real replaces of a ring's reservations
 * on the block core.  Every mode checks that the core gives the span the
 * producer already uses, accounts, writes the mirror and plans the next
 * replace; they differ in when the committer runs and what it waits for. */
typedef enum wh_arena_commit_mode {
    /* WH_ARENA_COMMIT_NOW: the reservation of ring[first % k], if one is in
     * flight now (nothing to do otherwise); no wait.  The lock then goes to
     * `last` (zeros: unlock).
     * Use it where a kernel later in the same stream can commit: the first
     * block of the kernel that consumes the span, or the producer's own last
     * block after a grid barrier.  The commit costs no launch and overlaps
     * the consumer's work; the next reserve waits only if it comes before
     * the commit is done. */
    WH_ARENA_COMMIT_NOW = 0,
    /* WH_ARENA_COMMIT_AHEAD: launched before the reserves it commits, on
     * another stream: waits (bounded: tries) for each of `frames`
     * reservations of ring[(first + f) % k] in turn, commits it, and hands
     * the lock through `baton` to the next frame's reserve (through `last`
     * after the chain's last frame).
     * Faster where a frame's commit would otherwise stand between frames:
     * the commit overlaps the next frame, the next reserve gets the lock
     * without a round trip, and a block keeps its copy of the image from
     * frame to frame, so each commit only allocates.  Its block must run
     * beside the producers (its own stream, resident). */
    WH_ARENA_COMMIT_AHEAD = 1,
    /* WH_ARENA_COMMIT_POSTS: the committer of a forecast ring: holds the
     * lock for `frames` posts, makes the forecast and the first window from
     * the real state (unless the forecast is current), then commits each
     * post in order (post f replacing ring[(first + f - f0) % k]), writes
     * its slot and counts it consumed; at the end the forecast is stamped
     * exact.
     * For one-pass producers, which write before their count is known and
     * never take the lock: the frame's critical path holds no reserve and
     * no commit.  Its block must run beside the producers. */
    WH_ARENA_COMMIT_POSTS = 2,
} wh_arena_commit_mode;

/* POSTS: the post ring and where the committer publishes the first window. */
typedef struct wh_arena_ring_posts {
    wh_arena_ring_post *post;  /* post f in post[f % n]                         */
    uint32_t n, f0;            /* posts in the ring; the first frame's number   */
    uint32_t *consumed;        /* posts committed, f + 1 (release)              */
    uint64_t stride;           /* element bytes                                 */
    wh_arena_forecast *fc;     /* the forecast, kept across chains              */
    wh_arena_span *w;          /* the first window, published by               */
    uint32_t *w_flag, w_value; /*   a release store of w_value into *w_flag    */
} wh_arena_ring_posts;

typedef struct wh_arena_commit {
    wh_arena_commit_mode mode;
    wh_arena_span *ring;              /* the ring's k slots                           */
    uint32_t k, first, frames;        /* the first slot; AHEAD, POSTS: frames         */
    uint32_t tries;                   /* AHEAD, POSTS: polls of each bounded wait     */
                                      /* (CPU backend: microseconds)                  */
    void *smem;                       /* the image's copy: a block's smem (GPU) or    */
    uint64_t smem_bytes;              /* scratch (CPU); >= wh_arena_meta_bytes (AHEAD */
                                      /* on the CPU: twice that), 8-aligned           */
    wh_arena_ring_baton baton;        /* AHEAD: after each frame but the last         */
    wh_arena_ring_baton last;         /* NOW, AHEAD: after the last                   */
    const wh_arena_ring_posts *posts; /* POSTS                                 */
} wh_arena_commit;

/* Run the committer.  In device code every thread of a block calls it
 * (converged, the same arguments; blockDim.x >= 64 to stage the image,
 * else thread 0 commits in place); on the CPU backend one thread.  Returns
 * the last commit's status to every caller: WH_OK (also for nothing to
 * commit), WH_ERR_RETRY_LIMIT where the lock or a reservation or post did
 * not come in time, WH_ERR_CORRUPT where the core disagreed with the
 * published span, the core's own failure, or WH_ERR_INVALID_ARGUMENT
 * (nothing done) for a missing ring, k = 0, or POSTS without posts or room. */
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_commit(wh_arena_ref a, const wh_arena_commit *c);

/* ---- implementation (internal: warpheap/arena/) ------------------------------------ */
#include "warpheap/arena/core.h"
#include "warpheap/arena/kernel.h"
#include "warpheap/arena/reserve.h"
#include "warpheap/arena/forecast.h"
#include "warpheap/arena/commit.h"

WH_EXTERN_C_END

#endif /* WARPHEAP_ARENA_H */
