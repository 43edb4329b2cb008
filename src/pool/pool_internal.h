/* SPDX-License-Identifier: MIT */
/* Host pool internals, shared by the files of src/pool/.
 *
 * One mutex guards a pool.  Memory is a block core (core/blocks.h) with one free
 * index per stream plus index 0 (READY) for blocks every stream may take; the
 * pool keeps, per descriptor, what the core does not know: who holds a USED
 * block (a live allocation, the tag cache, or the pending list that waits
 * for other streams), its tag and the streams it was used on.
 */
#ifndef WH_POOL_INTERNAL_H
#define WH_POOL_INTERNAL_H

#include "warpheap/pool.h"
#include "warpheap/core/walk.h"

#include <pthread.h>
#include <stdlib.h> /* realloc */

#define WH__READY          0u      /* free index of blocks safe on every stream */
#define WH__MAX_LANES      63u     /* READY + 62 streams with a free index each  */
#define WH__SLOT_LIMIT     0xFFFFu /* stream slots: uint16_t in wh__info         */
#define WH__USES_MORE      1u      /* wh__info.uses bit 0: more uses in xuses     */
#define WH__TAGS           1024u   /* tag table entries (power of two)          */
#define WH__PENDING_EVENTS 8u      /* events a pending block can wait on        */
#define WH__PENDING_POLL   256u    /* pending blocks that make free() poll      */

/* WH__RETIRED: a piece's old address after the piece moved from a stream's
 * own free block (pool_vmm.c), mapped until that stream's queued work is done. */
enum { WH__FREE_OR_CORE = 0, WH__LIVE = 1, WH__TAGGED = 2, WH__PENDING = 3, WH__HOLE = 4, WH__RETIRED = 5 };

typedef struct wh__info { /* the pool's view of a USED descriptor */
    const void *tag;
    uint64_t uses; /* bit k: used on stream slot k (1..63) besides its own;
                      bit 0: on slots >= 64 too, listed in the pool's xuses */
    uint64_t requested;
    uint32_t off;                   /* the pointer is addr + off (config.secure) */
    uint8_t state;                  /* WH__LIVE / TAGGED / PENDING               */
    uint16_t alloc_slot, free_slot; /* free_slot: the free index it goes to */
} wh__info;

typedef struct wh__event { /* a cudaEvent_t, or the stream on the CPU */
    void *ev;
    wh_stream stream;
} wh__event;

/* A stream the pool serves.  Slots below the core's nindex are lanes: the
 * stream has its own free index there.  refs counts what names the slot: the
 * live, kept and pending blocks whose free_slot it is, and the uses marks
 * (wh__info.uses, xuses).  pins counts the allocations on the slot in
 * progress, which may release the lock while they wait for streams.  A slot
 * with no refs, no pins and an empty lane is idle: a new stream may take it
 * (pool_streams.c, wh__slot_of). */
enum { WH__SLOT_FREE = 0, WH__SLOT_LIVE = 1, WH__SLOT_GONE = 2 /* forgotten: done, refs may remain */ };
typedef struct wh__slot {
    wh_stream stream;
    wh__event ev; /* the reclaim event, kept between uses */
    uint32_t refs, pins;
    uint8_t state;
} wh__slot;

typedef struct wh__xuse { /* a use of a block on a stream slot >= 64 */
    uint32_t block, slot;
} wh__xuse;

typedef struct wh__pending {
    uint32_t block;
    uint32_t nev;
    wh__event ev[WH__PENDING_EVENTS];
} wh__pending;

typedef struct wh__arena {
    void *raw;     /* what the driver gave                     */
    uint64_t size; /* bytes handed to the core                 */
    uint32_t head; /* its first descriptor: never changes      */
    void *heap;    /* its NVTX heap (pool_nvtx.c), or NULL     */
} wh__arena;

/* Devices a VMM mapping is made accessible to: the pool's own and every
 * peer that can access it, as cudaMalloc memory is once peer access is on
 * (a tensor copied to another GPU, a peer's kernel reading it). */
#define WH__VMM_READERS 16

/* A piece moved from a stream's free block: its old address (block, a USED
 * descriptor of state WH__RETIRED) stays mapped until ev, recorded on that
 * stream after the move, has completed. */
typedef struct wh__retired {
    uint32_t block;
    bool recorded; /* ev was recorded: else only a wait for every stream ends it */
    uint64_t seq;  /* wh__vmm.retire_seq when it was made */
    wh__event ev;
} wh__retired;

/* Growth by the driver's virtual-memory calls (pool_vmm.c): one address
 * range reserved at create is the core's only arena; the parts with no
 * physical memory behind them are USED blocks of state WH__HOLE, so every
 * block the core may hand out is backed.  Physical memory is mapped in
 * pieces (one cuMemCreate each), and only whole pieces are unmapped. */
typedef struct wh__vmm {
    uint64_t base, size, gran; /* the range and the mapping granule          */
    uint64_t hole_bytes;       /* unbacked bytes: reserved = size - these     */
    uint64_t retired_bytes;    /* old addresses of moved pieces: not reserved */
    uint64_t walk_frees;       /* frees counter at the last release walk     */
    uint64_t big;              /* the largest request that reached growth     */
    uint32_t ngran, head;      /* granules; the arena's first descriptor      */
    uint32_t *piece;           /* per granule: first granule of its piece, or NONE */
    uint32_t *plen;            /* per first granule: granules in the piece    */
    uint64_t *handle;          /* per first granule: driver allocation handle
                                  (a retired piece shares it with its new place) */
    wh__retired *retired;      /* old addresses still mapped                  */
    uint32_t nretired, retired_cap;
    uint64_t retire_seq; /* retired entries made so far                      */
    void *raw;           /* CPU: the mmap'ed range                      */
    int device;
    uint32_t nreaders;            /* devices given access to what is mapped:     */
    int readers[WH__VMM_READERS]; /* the pool's device, then its peers        */
} wh__vmm;

typedef struct wh__tag_entry {
    const void *tag;
    uint32_t block; /* the block kept for this tag, or NONE     */
} wh__tag_entry;

/* Addresses of blocks released to the core lately, one per hash slot, so that
 * a free of such an address is a double free and any other address outside
 * the live blocks a foreign pointer (pool_alloc.c, wh__bad_pointer).  A
 * double free long after the release, once another address took the slot,
 * is reported as foreign with a message that says it may be either. */
#define WH__FREED_RECENT_BITS 12
#define WH__FREED_RECENT      (1u << WH__FREED_RECENT_BITS)

struct wh_pool {
    pthread_mutex_t lock;
    wh_pool_config cfg; /* defaults resolved                          */
    wh_blocks *core;
    wh__info *info;     /* per descriptor                             */
    uint64_t *map_keys; /* address -> descriptor, open addressing     */
    uint32_t *map_vals;
    uint64_t map_mask, map_count; /* entries - 1; keys in the map               */
    uint32_t map_shift;
    uint64_t freed[WH__FREED_RECENT]; /* addresses of blocks released lately       */
    wh__slot *slots;                  /* slot 0: READY                             */
    uint32_t nslots, slots_cap;       /* slots in use or idle; allocated          */
    uint32_t *use_list;               /* slots_cap entries: wh__free_locked's list */
    wh__xuse *xuses;
    uint32_t nxuses, xuses_cap;
    wh_stream last_stream;
    uint32_t last_slot;
    wh__arena *arenas;
    uint32_t narenas, arenas_cap;
    wh__pending *pending;
    uint32_t npending, pending_cap;
    void **spare_ev; /* CUDA events ready for reuse                */
    uint32_t nspare_ev, spare_ev_cap;
    uint32_t ntags;
    wh__tag_entry tags[WH__TAGS];
    uint32_t hot; /* pool_tags.c: the hot block, or NONE         */
    bool use_vmm;
    bool poison;           /* AddressSanitizer build, CPU backend, under WH__POISON_LIMIT */
    bool nvtx;             /* a memory tool took a heap of this pool (pool_nvtx.c)  */
    uint32_t busy_streams; /* streams still busy after the last wait      */
    uint64_t refused;      /* bytes the driver (host) refused in this call */
    uint32_t secure_gen;   /* pool_secure.c: the next pointer's offset      */
    uint64_t corrupt_at;   /* pool_secure.c: the first corruption found     */
    const char *corrupt_what;
    wh__vmm vmm;
    wh_pool_stats st;
};

/* pool_backend.c: memory and events of the chosen backend. */
wh_status wh__mem_alloc(wh_pool *p, uint64_t bytes, void **raw, uint64_t *base);
void wh__mem_free(wh_pool *p, void *raw);
wh_status wh__event_record(wh_pool *p, wh__event *e, wh_stream s);
bool wh__event_done(wh_pool *p, wh__event *e);
bool wh__event_wait(wh_pool *p, wh__event *e);      /* lock held: only where a wait is rare */
bool wh__stream_sync(wh_pool *p, wh_stream s);      /* the stream's queued work; lock not held */
bool wh__stream_capturing(wh_pool *p, wh_stream s); /* being captured into a CUDA graph */
void wh__event_release(wh_pool *p, wh__event *e);
void wh__events_destroy(wh_pool *p);

/* pool_vmm.c: the range, its mapping and its holes (use_vmm only). */
wh_status wh__vmm_create(wh_pool *p);
void wh__vmm_destroy(wh_pool *p);
uint32_t wh__vmm_grow_find(wh_pool *p, uint64_t size, uint64_t align, uint32_t slot);
uint32_t wh__vmm_alloc(wh_pool *p, uint64_t size, uint64_t align, uint32_t slot);
void wh__vmm_release(wh_pool *p, uint64_t target, bool wait); /* wait: wh__wait_streams first */
/* Unmap the old addresses of moved pieces whose streams' work is done: their
 * events have completed, or they were made before `before` (a retire_seq
 * taken before a successful wh__wait_streams, which releases the lock: an
 * entry made meanwhile was not waited for; 0: none). */
void wh__vmm_retire_poll(wh_pool *p, uint64_t before);
wh_status wh__vmm_check(wh_pool *p);

/* Extra bytes a block needs so that an address in it is a multiple of align
 * (blocks are already multiples of config.alignment). */
static inline uint64_t wh__align_pad(const wh_pool *p, uint64_t align) {
    return align > p->cfg.alignment ? align - p->cfg.alignment : 0;
}

/* The free index of stream slot k: its lane, or READY for a slot past them. */
static inline uint32_t wh__lane(const wh_pool *p, uint32_t k) { return k < p->core->nindex ? k : WH__READY; }
/* Free indices in use: READY and the lanes of the slots so far. */
static inline uint32_t wh__nlanes(const wh_pool *p) {
    return p->nslots < p->core->nindex ? p->nslots : p->core->nindex;
}

/* AddressSanitizer sees inside the pool on the CPU backend: the requested
 * bytes of a live block are addressable, every other byte the pool holds is
 * poisoned (free, kept, pending, the rounding past a request, arenas not
 * handed out yet), so an overflow past a block or a use after free is
 * reported.  Memory goes back to the host unpoisoned.  Each call writes 1/8
 * of its bytes of shadow, so a pool stops once it reserves more than
 * WH__POISON_LIMIT: it unpoisons what it holds, once (wh__poison_stop).
 * Device memory (the CUDA backend) has no shadow here. */
#define WH__POISON_LIMIT (256ull << 20)
#if defined(__SANITIZE_ADDRESS__)
#define WH__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WH__ASAN 1
#endif
#endif
#ifndef WH__ASAN
#define WH__ASAN 0
#endif
#if WH__ASAN
#include <sanitizer/asan_interface.h>
static inline void wh__poison(const wh_pool *p, uint64_t addr, uint64_t bytes, bool poison) {
    if (!p->poison) return;
    if (poison)
        ASAN_POISON_MEMORY_REGION((void *)(uintptr_t)addr, bytes);
    else
        ASAN_UNPOISON_MEMORY_REGION((void *)(uintptr_t)addr, bytes);
}
#else
static inline void wh__poison(const wh_pool *p, uint64_t addr, uint64_t bytes, bool poison) {
    (void)p, (void)addr, (void)bytes, (void)poison;
}
#endif

/* arr (n of *cap elements of size bytes) with room for one more: itself, a
 * copy twice as large (*cap updated; 64 to start), or NULL without memory
 * (arr is then unchanged). */
static inline void *wh__room(void *arr, uint32_t n, uint32_t *cap, size_t size) {
    if (n < *cap) return arr;
    uint32_t c = *cap ? 2 * *cap : 64;
    void *t = realloc(arr, (size_t)c * size);
    if (t) *cap = c;
    return t;
}

/* Bytes backed by the driver: arenas, or the range less its holes and the
 * old addresses of moved pieces (their memory is counted where it moved). */
static inline uint64_t wh__reserved(const wh_pool *p) {
    return p->core->arena_bytes - p->vmm.hole_bytes - p->vmm.retired_bytes;
}
/* Free bytes in the core, of every index (holes are used blocks). */
static inline uint64_t wh__free_bytes(const wh_pool *p) { return p->core->arena_bytes - p->core->used_bytes; }

/* pool.c: every byte the pool holds unpoisoned, and no poisoning from here
 * on (past WH__POISON_LIMIT; before memory goes back at destroy). */
void wh__poison_stop(wh_pool *p);
static inline void wh__poison_check(wh_pool *p) {
    if (p->poison && wh__reserved(p) > WH__POISON_LIMIT) wh__poison_stop(p);
}

/* pool_nvtx.c: arenas (or the range) as NVTX heaps, live blocks as their
 * regions of the requested bytes, for compute-sanitizer (CUDA backend). */
void wh__nvtx_heap(wh_pool *p, wh__arena *a); /* a's base: its head's address */
void wh__nvtx_heap_drop(wh_pool *p, wh__arena *a);
void wh__nvtx_block(wh_pool *p, uint64_t addr, uint64_t bytes);
void wh__nvtx_block_drop(wh_pool *p, uint64_t addr);

/* pool_ptrmap.c */
#define WH__MAP_MIN_BITS 10
bool wh__map_init(wh_pool *p);
bool wh__map_reserve(wh_pool *p);
void wh__map_put(wh_pool *p, uint64_t key, uint32_t val);
uint32_t wh__map_get(const wh_pool *p, uint64_t key);
void wh__map_del(wh_pool *p, uint64_t key);

/* pool_streams.c */
wh_status wh__slot_find_or_take(wh_pool *p, wh_stream s, uint32_t *slot);
/* The stream's slot, taken if it has none: the last stream's inline. */
static inline wh_status wh__slot_of(wh_pool *p, wh_stream s, uint32_t *slot) {
    if (p->last_slot && p->last_stream == s) {
        *slot = p->last_slot;
        return WH_OK;
    }
    return wh__slot_find_or_take(p, s, slot);
}
wh_status wh__slots_init(wh_pool *p);
wh_status wh__defer(wh_pool *p, uint32_t b, const uint32_t *slots, uint32_t n);
wh_status wh__use(wh_pool *p, uint32_t b, uint32_t slot);                   /* record_stream */
uint32_t wh__uses_of(wh_pool *p, uint32_t b, uint32_t slot, uint32_t *out); /* at a free on slot */
void wh__uses_drop(wh_pool *p, uint32_t b);
wh_status wh__check_slots(wh_pool *p);
void wh__pending_poll(wh_pool *p);
void wh__reclaim(wh_pool *p);
bool wh__wait_streams(wh_pool *p);
bool wh__lane_settle(wh_pool *p, uint32_t k); /* lock held: only where a wait is rare */

/* pool_tags.c */
uint32_t wh__tag_take(wh_pool *p, const void *tag, uint64_t size, uint32_t slot);
bool wh__tag_keep(wh_pool *p, uint32_t b);
void wh__tag_flush(wh_pool *p); /* the hot block too */
/* The hot block (p->hot != NONE): taken for an untagged request of size on
 * slot that it fits (size 0: none), else given back; kept on free. */
uint32_t wh__hot_take(wh_pool *p, uint64_t size, uint32_t slot);
void wh__hot_keep(wh_pool *p, uint32_t b);

/* pool_secure.c: the hardened mode (config.secure).  The wrappers below
 * test the flag inline: a pool without it pays a branch per call. */
#define WH__GUARD 16u
void wh__sec_fresh(wh_pool *p, uint64_t addr, uint64_t bytes);
void wh__sec_released(wh_pool *p, uint32_t b);
void wh__sec_live(wh_pool *p, uint32_t b);
wh_status wh__sec_freeing(wh_pool *p, uint32_t b, const void *ptr);
bool wh__secure_stale(const wh_pool *p, uint32_t b, uint64_t a); /* a: a stale pointer of b */
wh_status wh__secure_check(wh_pool *p);

/* Bytes a block needs more; the offset of the next pointer in its block. */
static inline uint64_t wh__secure_extra(const wh_pool *p, uint64_t align) {
    return p->cfg.secure ? (align ? 0 : 3 * (uint64_t)p->cfg.alignment) + WH__GUARD : 0;
}
static inline uint32_t wh__secure_offset(wh_pool *p, uint64_t align) {
    return p->cfg.secure && !align ? (p->secure_gen++ & 3u) * (uint32_t)p->cfg.alignment : 0;
}
/* New free memory; a block back to the core; a block handed out (its offset
 * set); a live block at its free (WH_ERR_CORRUPT: its guard was overwritten). */
static inline void wh__secure_fresh(wh_pool *p, uint64_t addr, uint64_t bytes) {
    if (p->cfg.secure) wh__sec_fresh(p, addr, bytes);
}
static inline void wh__secure_released(wh_pool *p, uint32_t b) {
    if (p->cfg.secure) wh__sec_released(p, b);
}
static inline void wh__secure_live(wh_pool *p, uint32_t b) {
    if (p->cfg.secure) wh__sec_live(p, b);
}
static inline wh_status wh__secure_freeing(wh_pool *p, uint32_t b, const void *ptr) {
    return p->cfg.secure ? wh__sec_freeing(p, b, ptr) : WH_OK;
}

/* The pointer handed out for USED block b. */
static inline uint64_t wh__user_addr(const wh_pool *p, uint32_t b) {
    return wh_blocks_desc(p->core)[b].addr + p->info[b].off;
}

/* pool_alloc.c / pool.c */
void wh__release(wh_pool *p, uint32_t b); /* USED block back to the core */
void wh__trim_arenas(wh_pool *p, uint64_t keep);

#endif
