/* SPDX-License-Identifier: MIT */
/* warpheap host pool: a caching, stream-ordered pool of device memory for
 * host code (seed futhark-tagged-free-list.txt in front of the block
 * core of gpu-executed-heap.txt).  See docs/pool.md.
 *
 *   wh_pool *pool;
 *   wh_pool_create(&pool, NULL);                 // defaults: CUDA if a GPU is there
 *   void *p = wh_pool_alloc(pool, n, stream);    // NULL + wh_last_error() on failure
 *   kernel<<<g, b, 0, stream>>>(p);
 *   wh_pool_free(pool, p, stream);               // reusable on `stream` at once,
 *                                                // elsewhere once that work is done
 *   wh_pool_destroy(pool);
 *
 * Thread-safe: any number of host threads may share one pool.
 */
#ifndef WARPHEAP_POOL_H
#define WARPHEAP_POOL_H

#include "warpheap/warpheap.h"
#include "warpheap/core/blocks.h"

WH_EXTERN_C_BEGIN

typedef struct wh_pool wh_pool;

typedef enum wh_pool_backend {
    WH_POOL_AUTO = 0, /* CUDA in a CUDA build (WH_ERR_NO_DEVICE without
                             a GPU), CPU in a build without CUDA          */
    WH_POOL_CPU = 1,  /* arenas in host memory, streams opaque          */
    WH_POOL_CUDA = 2, /* arenas from cudaMalloc, cudaEvents for streams */
} wh_pool_backend;

/* How the pool gets memory from the driver. */
typedef enum wh_pool_growth {
    WH_POOL_GROW_DEFAULT = 0, /* see wh_pool_create                               */
    WH_POOL_GROW_ARENAS = 1,  /* separate cudaMalloc arenas, kept until trimmed    */
    WH_POOL_GROW_VMM = 2,     /* one reserved address range; physical memory mapped
                                  (cuMemCreate/cuMemMap) where blocks need it, in
                                  pieces up to 112 MiB.  Past the peak in use +
                                  config.vmm_slack_pm (1/10; up to 1.4 times it
                                  for requests large against it), growth moves
                                  whole pieces from free blocks to where a
                                  request needs them (reserved stays); past
                                  another 1/64, free pieces are unmapped
                                  (config.footprint says whether growth waits for
                                  its stream's work to make that possible).  Such
                                  memory has no cudaIpcGetMemHandle: use ARENAS
                                  to share blocks between processes              */
} wh_pool_growth;

/* VMM growth: whether it uses the requesting stream's own free blocks to
 * keep its budget.  A piece of physical memory can be unmapped only when no
 * work queued before its block's free can still reach it. */
typedef enum wh_pool_footprint {
    WH_POOL_FOOTPRINT_TIGHT = 0, /* default: when the budget is reached and the
                                     requesting stream's own free blocks could
                                     keep the growth within it, their pieces
                                     are mapped where the request needs them
                                     too, without a wait: the old addresses
                                     stay mapped until the stream's work queued
                                     before the move is done (stats.retired).
                                     Where that is not enough, wait for that
                                     stream's queued work (once a request, the
                                     lock held; never another stream's, nor one
                                     being captured into a graph) and move
                                     pieces (stats.waits counts the waits)       */
    WH_POOL_FOOTPRINT_LOOSE = 1, /* never wait: only blocks whose streams' work
                                     is done move; while every stream is busy
                                     (a host that runs ahead of the GPU), growth
                                     maps new pieces past the budget             */
} wh_pool_footprint;

/* The largest alignment of config.alignment and of wh_pool_alloc_aligned. */
#define WH_POOL_MAX_ALIGNMENT ((size_t)1 << 30)

typedef struct wh_pool_config {
    wh_pool_backend backend;
    size_t alignment;     /* of every pointer; power of two up to
                                  WH_POOL_MAX_ALIGNMENT; 0 = 256                  */
    size_t max_bytes;     /* cap on reserved bytes; 0 = what the driver has */
    size_t small_arena;   /* arena for requests <= 1 MiB; 0 = 2 MiB         */
    size_t medium_arena;  /* arena for requests < 10 MiB; 0 = 20 MiB        */
    uint32_t max_blocks;  /* block descriptors; 0 = 2^18                     */
    uint32_t max_streams; /* distinct streams; 0 = 16, at most 62            */
    wh_blocks_kind index; /* free index; default TLSF                        */
    /* CPU backend only (tests): whether work is still queued on a stream.  An
     * event recorded on a busy stream is not complete.  NULL: never busy. */
    bool (*stream_busy)(wh_stream stream, void *user);
    void *stream_busy_user;
    uint32_t stream_wait_ms; /* CPU backend only: how long a call that must
                                  wait for a busy stream (exhaustion, trim,
                                  forget_stream) waits, the pool's lock released,
                                  before it gives up: the blocks stay unavailable
                                  and wh_last_error names the busy streams.  0:
                                  no wait (a busy stream is like an unfinished
                                  event query).  CUDA waits for the stream.    */
    wh_pool_growth growth;   /* default: VMM where the driver can reserve a
                                  range, else ARENAS (wh_pool_create)             */
    size_t vmm_range;        /* VMM: address range; 0 = 2x max_bytes, else 2x the
                                  device's memory (CPU backend: 4 GiB)            */
    size_t vmm_granule;      /* VMM, CPU backend only: mapping granule, a power of
                                  two >= 4 KiB; 0 = 64 KiB (CUDA: the driver's)    */
    bool secure;             /* hardened mode (docs/pool.md, "Hardened mode"):
                                  each pointer sits at one of four offsets in its
                                  block, rotating, so a second free after the
                                  memory went to a new owner is a double free;
                                  kept-block caches off.  CPU backend also: a
                                  guard past every request, checked at free, and
                                  free memory filled with a pattern checked when
                                  reused (wh_pool_check, stats.corruptions)     */
    /* VMM growth: whether it waits for the requesting stream's work to keep
     * its budget (wh_pool_footprint); default TIGHT. */
    wh_pool_footprint footprint;
    /* VMM growth's budget: the peak in use plus this many thousandths of it
     * (moves begin past 1.4 times it); 1..1000, 0 = 100.  Less holds
     * reserved closer to the peak at more driver calls (docs/pool.md). */
    uint32_t vmm_slack_pm;
} wh_pool_config;

typedef struct wh_pool_stats {
    uint64_t in_use, in_use_peak;     /* bytes of live allocations (rounded)   */
    uint64_t requested;               /* bytes asked for by live allocations   */
    uint64_t reserved, reserved_peak; /* bytes of arenas held from the driver   */
    uint64_t cached;                  /* reserved - in_use                     */
    uint64_t largest_free;            /* largest free block, any stream         */
    uint64_t allocs, frees, failures; /* calls that succeeded / failed          */
    uint64_t tag_hits;                /* allocations served by a kept block: of
                                            their tag, (untagged, <= 64 KiB) of
                                            their power-of-two size class, or
                                            (untagged, larger) the hot block: the
                                            last one freed, at its exact size     */
    uint64_t arenas, arena_allocs, arena_frees;
    /* Driver traffic (VMM: arena_allocs / arena_frees count pieces created
     * and released; growths count cuMemSetAccess calls, one per growth over
     * the pieces it maps and one per move; a move is one piece unmapped and
     * its memory mapped again elsewhere) */
    uint64_t growths, moves, bytes_released;
    uint64_t driver_ns;   /* time in those calls (CUDA backend)    */
    uint64_t pending;     /* freed blocks waiting for other streams */
    uint64_t tag_cached;  /* blocks held for their tag              */
    uint64_t retries;     /* allocations that flushed the caches and waited
                            for the streams before they were served or failed */
    uint64_t corruptions; /* config.secure: guards and freed memory found
                             overwritten (wh_pool_check names the first)    */
    uint64_t waits;       /* VMM growths that waited for the streams' work so
                             that pieces under their freed blocks could move
                             (config.footprint TIGHT)                        */
    uint64_t retired;     /* VMM: bytes of address range whose pieces moved
                             away from the requesting stream's own free
                             blocks without a wait, still mapped there for
                             the work queued before the move (its memory is
                             counted once, in reserved, where it moved)      */
} wh_pool_stats;

/* A live allocation, as wh_pool_live_blocks lists it. */
typedef struct wh_pool_block {
    void *ptr;
    size_t size;      /* usable bytes (the block)              */
    size_t requested; /* bytes asked for                       */
    wh_stream stream; /* the stream it was allocated on        */
    const void *tag;  /* wh_pool_alloc_tagged's tag, else NULL */
} wh_pool_block;

/* cfg may be NULL for defaults. */
WH_API wh_status wh_pool_create(wh_pool **out, const wh_pool_config *cfg);
/* Returns every arena to the driver, live allocations included. */
WH_API wh_status wh_pool_destroy(wh_pool *pool);

/* At least bytes, aligned, usable on stream at once.  NULL on failure
 * (size 0, too large, exhausted) with the reason in wh_last_error(). */
WH_API void *wh_pool_alloc(wh_pool *pool, size_t bytes, wh_stream stream);
/* Futhark's fast path: tag is a static label (compared by address) of the
 * allocation site.  Freeing keeps the block for its tag; the next request
 * with that tag takes it if it fits and is less than twice the request.
 * (Untagged requests up to 64 KiB are kept the same way, by size class.) */
WH_API void *wh_pool_alloc_tagged(wh_pool *pool, size_t bytes, const void *tag, wh_stream stream);
/* At an address that is a multiple of alignment (a power of two, any size;
 * config.alignment is the least every pointer gets). */
WH_API void *wh_pool_alloc_aligned(wh_pool *pool, size_t bytes, size_t alignment, wh_stream stream);
/* Both of the above with the status: *out = pointer or NULL. */
WH_API wh_status wh_pool_try_alloc(wh_pool *pool, size_t bytes, const void *tag, wh_stream stream, void **out);

/* Free on stream: the block is reused on stream at once, on another stream
 * only once the work queued on stream before this call has finished (and on
 * each stream named by wh_pool_record_stream).  NULL is a no-op. */
WH_API wh_status wh_pool_free(wh_pool *pool, void *ptr, wh_stream stream);
/* Declare that ptr is also used by work queued on stream (PyTorch's
 * record_stream): its memory is reused only after that work, too. */
WH_API wh_status wh_pool_record_stream(wh_pool *pool, void *ptr, wh_stream stream);

/* Call before destroying a stream the pool has seen: waits for the work
 * queued on it, hands its free blocks to every stream and frees its slot
 * (a pool serves at most config.max_streams streams at a time). */
WH_API wh_status wh_pool_forget_stream(wh_pool *pool, wh_stream stream);

/* Return cached memory to the driver until at most keep_bytes stay cached.
 * Waits for the streams that hold freed blocks.  Only whole free arenas go. */
WH_API wh_status wh_pool_trim(wh_pool *pool, size_t keep_bytes);

WH_API wh_status wh_pool_get_stats(wh_pool *pool, wh_pool_stats *stats);
/* The peaks (in_use_peak, reserved_peak) start again from the current values. */
WH_API wh_status wh_pool_reset_peak(wh_pool *pool);
/* The live allocations: *count = their number; the first min(cap, *count)
 * go to out (may be NULL when cap is 0), in no particular order. */
WH_API wh_status wh_pool_live_blocks(wh_pool *pool, wh_pool_block *out, size_t cap, size_t *count);
/* Usable size of a live allocation (0 if ptr is not one). */
WH_API size_t wh_pool_usable_size(wh_pool *pool, const void *ptr);
/* Heap walk: checks the block core and the pool's own bookkeeping against
 * each other and the stats.  WH_ERR_CORRUPT with details if they disagree. */
WH_API wh_status wh_pool_check(wh_pool *pool);
WH_API wh_pool_backend wh_pool_get_backend(const wh_pool *pool);

WH_EXTERN_C_END

#endif /* WARPHEAP_POOL_H */
