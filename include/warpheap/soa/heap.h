/* SPDX-License-Identifier: MIT */
/* Object allocator: the heap descriptor and its host functions.
 *
 * DynaSOAr (Springer & Masuhara, ECOOP 2019) section 3: one heap of equal-size
 * blocks; a block holds objects of one type in SOA layout; per type a block
 * allocation bitmap and an active (allocated, not full) block bitmap, plus one
 * free block bitmap (3.4), all hierarchical (warpheap/bitmap.h).
 *
 * Departures: (1) block size.  The paper sizes blocks for 64 objects of the
 * smallest type and cannot hold a type 64x larger; here the data segment is
 * max(64 * smallest, largest) bytes, so every type gets capacity
 * min(64, data / size) >= 1 (rule of 3.2 otherwise unchanged).  (2) Abstract
 * classes (never instantiated) do not count as "smallest".  (3) At most
 * WH_SOA_MAX_TYPES types, so that the descriptor, passed by value to every
 * kernel, stays small (kernel parameters live in constant memory).
 */
#ifndef WARPHEAP_SOA_HEAP_H
#define WARPHEAP_SOA_HEAP_H

#include "warpheap/bitmap.h"
#include "warpheap/soa/pointer.h"

#define WH_SOA_MAX_TYPES      16u
/* The largest data segment of a block: 1 GiB.  The 64-object rule of 3.2
 * stops there (a type of 64 MiB gets 16 objects a block), and no type may be
 * larger.  It keeps a block's size within the 32 bits of block_bytes. */
#define WH_SOA_BLOCK_DATA_MAX (1u << 30)

/* Heap-wide counters, in heap memory (device memory for a device heap). */
enum {
    WH_SOA_CTR_FAILED_ALLOCS = 0, /* wh_soa_alloc returned null (out of memory)   */
    WH_SOA_CTR_RETRY_LIMIT,       /* a bounded retry loop gave up                 */
    WH_SOA_CTR_BAD_FREE,          /* free of a slot that was not allocated        */
    WH_SOA_CTR_SLOW_PATH,         /* blocks initialised                           */
    WH_SOA_CTR_BLOCKS_FREED,      /* blocks given back (emptied and deleted)      */
    WH_SOA_CTR_FOREIGN_FREE,      /* free of a pointer this heap never handed out */
    WH_SOA_CTR_STALE_DO,          /* parallel_do_again after another type's
                                   * preparation: it visited nothing            */
    WH_SOA_CTR_COUNT
};
/* Words at do_count: the length of do_blocks, then the places and thread
 * blocks a device preparation counts (src/soa/soa_cuda.cu), then the type
 * the snapshot is of + 1 (0: none yet; parallel_do_again checks it). */
#define WH_SOA_DO_COUNTERS 4u
#define WH__SOA_DO_TYPE    3u
/* Bytes before block 0: the counters, then wh__soa_opening's words. */
#define WH_SOA_HEADER_AREA 256u

typedef struct wh_soa {
    uint8_t *blocks;    /* block 0, 64-byte aligned                 */
    uint64_t *counters; /* WH_SOA_CTR_COUNT words                   */
    uint32_t nblocks, block_bytes, ntypes;
    uint32_t on_device;                  /* memory is device memory                  */
    uint8_t cap[WH_SOA_MAX_TYPES];       /* 0 for abstract types                     */
    uint16_t subtypes[WH_SOA_MAX_TYPES]; /* bit u: u is t or derives from t   */
    wh_bitmap free_blocks;
    wh_bitmap alloc_blocks[WH_SOA_MAX_TYPES];
    wh_bitmap active_blocks[WH_SOA_MAX_TYPES];
    /* parallel_do scratch, same memory space as the heap: the compact array of
     * allocated blocks (Fig. 8) and beside it their iteration bitmaps (3.7:
     * the slots the running do-all visits); its length, then the
     * preparation's counters (WH_SOA_DO_COUNTERS words, zero between
     * preparations). */
    uint32_t *do_blocks, *do_count;
    uint64_t *do_iter;
    /* placement keys (soa/alloc.h): per type, home_mask + 1 block indices */
    uint32_t *homes, home_mask;
    void *mem; /* the one allocation holding all of it     */
    size_t mem_bytes;
    uint32_t do_threads;  /* GPU threads of a parallel_do launch      */
    uint32_t do_early;    /* its do-all may start while its preparation
                           * finishes (sm_90 and later: soa.h)        */
    uint32_t cpu_threads; /* host threads of a CPU parallel_do        */
    uint32_t in_region;   /* mem is the caller's: destroy leaves it   */
    uint32_t refs;        /* objects may be referenced (soa/ref.h)    */
} wh_soa;

typedef struct wh_soa_type_desc {
    const char *name;
    uint32_t id;       /* must equal the descriptor's index               */
    uint32_t size;     /* bytes of one object (its layout struct)         */
    int32_t parent;    /* type id of the superclass, -1 for none          */
    uint32_t abstract; /* never instantiated                              */
} wh_soa_type_desc;

typedef struct wh_soa_config {
    size_t bytes; /* all memory of the heap, bitmaps included */
    const wh_soa_type_desc *types;
    uint32_t ntypes;
    bool on_device;       /* device memory (CUDA build) or host memory */
    uint32_t cpu_threads; /* host parallel_do threads; 0: 4           */
    void *region;         /* optional: the caller's memory, [region,
                           * region + bytes), WH_SOA_REGION_ALIGN aligned, of
                           * the kind on_device says; the whole heap goes
                           * there and destroy leaves it.  NULL: the heap
                           * allocates it                                 */
    bool refs;            /* objects are referenced by 32-bit wh_soa_ref
                           * (soa/ref.h): at most WH_SOA_REF_BLOCKS blocks */
} wh_soa_config;

/* Alignment of wh_soa_config.region: blocks lie at multiples of
 * WH_SOA_BLOCK_ALIGN from it, and an object pointer keeps its slot in the
 * low bits of its block's address. */
#define WH_SOA_REGION_ALIGN WH_SOA_BLOCK_ALIGN

typedef struct wh_soa_stats {
    uint64_t blocks, free_blocks;
    uint64_t used_blocks[WH_SOA_MAX_TYPES], objects[WH_SOA_MAX_TYPES];
    uint64_t slots; /* slots of all allocated blocks            */
    uint64_t counters[WH_SOA_CTR_COUNT];
    double fragmentation; /* unused slots / slots of allocated blocks */
} wh_soa_stats;

WH_EXTERN_C_BEGIN
/* Lay out a heap in cfg->bytes of fresh memory, or of cfg->region.  Fails with
 * a clear status and message (wh_last_error) when the heap cannot hold one
 * block per type (WH_ERR_TOO_SMALL), there are too many types, bad descriptors
 * (WH_ERR_INVALID_ARGUMENT / WH_ERR_TOO_LARGE), more blocks than references
 * reach with cfg->refs (WH_ERR_TOO_LARGE), addresses past the pointer
 * budget (WH_ERR_UNSUPPORTED), or a region misaligned or of the wrong memory
 * kind (WH_ERR_INVALID_ARGUMENT; nothing is written there then). */
WH_API wh_status wh_soa_create(wh_soa *soa, const wh_soa_config *cfg);
WH_API wh_status wh_soa_destroy(wh_soa *soa);
/* Statistics (a host copy for a device heap: synchronises). */
WH_API wh_status wh_soa_stats_get(const wh_soa *soa, wh_soa_stats *st);
/* Live objects and the slots of all allocated blocks, quickly (a kernel and
 * two numbers for a device heap): fragmentation = 1 - objects / slots (the
 * paper's Fig. 12d).  No operation in flight. */
WH_API wh_status wh_soa_usage(const wh_soa *soa, uint64_t *objects, uint64_t *slots);
/* Invariants with no operation in flight: every bitmap consistent; each block
 * either free (all slot bits set, in no type bitmap) or allocated to exactly
 * the type it records, non-empty, padding bits set, active iff not full.
 * *violations = number broken (0: consistent). */
WH_API wh_status wh_soa_check(const wh_soa *soa, uint64_t *violations);
/* A host image of the heap (device heaps are copied; host heaps alias). */
/* A host image of the heap for reading objects on the host: a copy for a
 * device heap (free *owned afterwards), the heap itself for a host heap. */
WH_API wh_status wh_soa_host_image(const wh_soa *soa, wh_soa *img, void **owned);
/* An object pointer of heap soa, translated into its image img. */
WH_API uint64_t wh_soa_image_ptr(const wh_soa *soa, const wh_soa *img, uint64_t p);
/* Internal: always copy (host or device heap) into aligned host memory. */
WH_API wh_status wh__soa_image_copy(const wh_soa *soa, wh_soa *img, void **owned);

/* parallel_do support (soa_do_host.c / soa_cuda.cu) */
typedef void (*wh__soa_range_fn)(const wh_soa *s, uint32_t t, uint32_t k0, uint32_t k1, const void *ctx);
/* CPU backend: enumerate type t's blocks with their iteration bitmaps (again:
 * keep the last snapshot, if it is of t), then run fn over the allocated
 * blocks on soa->cpu_threads threads. */
WH_API wh_status wh__soa_do_host(const wh_soa *soa, uint32_t t, wh__soa_range_fn fn, const void *ctx, int again);
WH_EXTERN_C_END

/* ---- block layout ------------------------------------------------------------ */
WH_INLINE WH_HOST_DEVICE uint8_t *wh__soa_block(const wh_soa *s, uint32_t b) {
    return s->blocks + (size_t)b * s->block_bytes;
}
/* Slot bitmap: bit i set = slot i taken (allocated, padding or invalidated). */
WH_INLINE WH_HOST_DEVICE uint64_t *wh__soa_alloc_word(const wh_soa *s, uint32_t b) {
    return (uint64_t *)wh__soa_block(s, b);
}
/* The type word of a block given back to the free list: its last type with
 * this bit, so that a second free of its last object is told from a foreign
 * pointer (~0u: never used). */
#define WH_SOA_TYPE_FREED 0x80000000u
WH_INLINE WH_HOST_DEVICE uint32_t *wh__soa_type_word(const wh_soa *s, uint32_t b) {
    return (uint32_t *)(wh__soa_block(s, b) + 16);
}
/* Slots that exist for a capacity; the others are padding, always set. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__soa_usable(uint32_t cap) { return cap >= 64u ? ~0ull : (1ull << cap) - 1ull; }
WH_INLINE WH_HOST_DEVICE uint32_t wh__soa_block_of(const wh_soa *s, uint64_t p) {
    return (uint32_t)((size_t)(wh_soa_ptr_block(p) - s->blocks) / s->block_bytes);
}
/* Placement keys (wh_soa_alloc_at): per type a table of home blocks, a
 * power of two of entries (one per block, at most WH_SOA_HOMES).  Key k of
 * type t uses entry k mod the table's size: consecutive keys get different
 * entries.  An entry is a hint and may name any block (or none, ~0u). */
#define WH_SOA_HOMES 4096u
WH_INLINE WH_HOST_DEVICE uint32_t *wh__soa_home(const wh_soa *s, uint32_t t, uint32_t key) {
    return s->homes + (size_t)t * (s->home_mask + 1u) + (key & s->home_mask);
}
/* Bytes of the tables of all types (set to 0xFF, "no home", at creation). */
WH_INLINE WH_HOST_DEVICE size_t wh__soa_homes_bytes(uint32_t ntypes, uint32_t home_mask) {
    return (size_t)ntypes * (home_mask + 1u) * sizeof(uint32_t);
}
/* Slow paths of type t running now (wh__soa_open_begin): 32-bit words in the
 * counters' 256-byte area, from its byte 64 on (16 types: bytes 64-127). */
WH_INLINE WH_HOST_DEVICE uint32_t *wh__soa_opening(const wh_soa *s, uint32_t t) {
    return (uint32_t *)(s->counters + 8) + t;
}

WH_INLINE WH_HOST_DEVICE void wh__soa_count(const wh_soa *s, unsigned ctr) {
    (void)wh_atomic_fetch_add(&s->counters[ctr], 1ull, WH_RELAXED);
}
/* Blocks in use: opened (slow paths, parallel_new's chunks) minus given back.
 * Exact at quiescence (wh_soa_check), an estimate while the heap runs.  Freed
 * is read first: the other order could see a block given back in between and
 * wrap the difference to "full". */
WH_INLINE WH_HOST_DEVICE uint64_t wh__soa_blocks_in_use(const wh_soa *s) {
    uint64_t freed = wh_atomic_load(&s->counters[WH_SOA_CTR_BLOCKS_FREED], WH_RELAXED);
    return wh_atomic_load(&s->counters[WH_SOA_CTR_SLOW_PATH], WH_RELAXED) - freed;
}

#endif /* WARPHEAP_SOA_HEAP_H */
