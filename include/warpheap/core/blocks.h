/* SPDX-License-Identifier: MIT */
/* Block core: boundary-tagged blocks inside arenas, a free index, split on
 * allocation, merge with both neighbours on free.
 *
 * Implements the "Heap", "Fragmentation" and "Linked List" sections of seed
 * gpu-executed-heap.txt (an HLSL heap run by the GPU): every block knows its
 * two physical neighbours, free blocks sit in a free index, allocation splits
 * the block it finds, free merges with a free neighbour on either side so that
 * no two adjacent blocks of one index are ever both free.
 *
 * Departures from the seed:
 *  - The tags live out of band, in a descriptor table, not in words in front
 *    of each block.  The pool's arenas are device memory the host cannot read,
 *    and a descriptor table is what lets the stream arena keep the same code
 *    with metadata in device memory.  A block's neighbours are descriptor ids
 *    (prev/next), so "address - 3" becomes "desc[b].prev".
 *  - The free index is pluggable: TLSF (core/tlsf.h, the default, O(1)), the
 *    seed's max-heap of free blocks (core/maxheap.h, O(log n)), or none
 *    (LIST: only counts; a caller that finds blocks by walking the address
 *    order, as the arena's ring does, skips the index's upkeep).
 *  - Several independent free indices share one descriptor table; a free
 *    block belongs to exactly one and merges only with neighbours of the same
 *    index.  The pool uses one index per stream (stream-ordered reuse).
 *  - Alignment is a granule fixed at init (a power of two): every address and
 *    size is a multiple of it, so no per-block padding as in the seed's
 *    "Padding" section is needed.
 *  - The low part of a split free block keeps the descriptor and the block
 *    that merges keeps the lower descriptor, so an arena's first descriptor
 *    never changes: the owner can name an arena by it.
 *
 * Everything here is WH_HOST_DEVICE and uses no malloc: the caller gives one
 * region of memory (wh_blocks_bytes) and the structure refers to its parts by
 * offsets from its own start, so it can be built on the host and copied to the
 * device.  It is not thread-safe: one thread (or a lock) drives it.
 */
#ifndef WARPHEAP_BLOCKS_H
#define WARPHEAP_BLOCKS_H

#include <stdlib.h> /* abort */
#include <string.h> /* memset */

#include "warpheap/warpheap.h"

#define WH_BLOCK_NONE 0xFFFFFFFFu

typedef enum wh_blocks_kind {
    WH_BLOCKS_TLSF = 0,    /* two-level segregated fit (default)     */
    WH_BLOCKS_MAXHEAP = 1, /* the seed's max-heap of free blocks     */
    WH_BLOCKS_LIST = 2,    /* no index: blocks in address order only, */
                           /* for callers that search by walking (the */
                           /* arena's RING policy); alloc scans        */
} wh_blocks_kind;

enum { WH_BLOCK_SPARE = 0, WH_BLOCK_FREE = 1, WH_BLOCK_USED = 2 };

/* The index kinds this translation unit's inline code handles: a mask of
 * 1 << kind, all by default.  Code that only ever drives LIST cores (a
 * kernel running ring arenas) may define it as (1u << WH_BLOCKS_LIST)
 * before including warpheap: TLSF's and the max-heap's code then stays out
 * of it, and one thread's path through the core is a fraction of the code
 * (as in marching cubes).  A core of
 * a kind left out stops the program (trap), never runs a wrong index. */
#ifndef WH_BLOCKS_KINDS
#define WH_BLOCKS_KINDS 7u
#endif
#define WH__KIND(c, k) (((WH_BLOCKS_KINDS) >> (k)) & 1u && (c)->kind == (uint32_t)(k))
WH_INLINE WH_HOST_DEVICE void wh__blocks_kind_missing(void) {
#if WH_ON_GPU
    __trap();
#else
    abort();
#endif
}

/* One block's boundary tags, out of band.  addr is an address or an offset:
 * the core never dereferences it. */
typedef struct wh_block {
    uint64_t addr;
    uint64_t size;
    uint32_t prev, next; /* physical neighbours, NONE at arena ends  */
    uint32_t link_prev;  /* TLSF: list links; max-heap: heap slot;   */
    uint32_t link_next;  /* spare descriptors: next spare            */
    uint16_t state;      /* WH_BLOCK_SPARE / FREE / USED             */
    uint16_t index;      /* the free index holding it (when FREE)    */
} wh_block;

#define WH_TLSF_FL      64 /* first level: floor(log2(size in granules)) */
#define WH_TLSF_SL_LOG2 5
#define WH_TLSF_SL      32 /* second level: linear subdivisions          */

typedef struct wh_tlsf {
    uint64_t fl_map;                       /* bit f: some list of row f non-empty */
    uint32_t sl_map[WH_TLSF_FL];           /* bit s of row f: list (f,s) non-empty */
    uint32_t head[WH_TLSF_FL][WH_TLSF_SL]; /* list heads, WH_BLOCK_NONE if empty  */
} wh_tlsf;

typedef struct wh_maxheap {
    uint32_t count;
    uint32_t pad;
    uint64_t slots_off; /* byte offset of its slot array from the core */
} wh_maxheap;

/* A free index: its block count and bytes, and the structure of its kind. */
typedef struct wh_free_index {
    uint32_t nfree;
    uint32_t pad;
    uint64_t free_bytes;
    union {
        wh_tlsf tlsf;
        wh_maxheap heap;
    } u;
} wh_free_index;

typedef struct wh_blocks {
    uint32_t kind, nindex, capacity, spare; /* spare: head of spare descriptors */
    uint32_t granule_log2, nused, narenas;
    uint32_t absorb; /* see wh_blocks_set_absorb; NONE if unset */
    uint64_t granule;
    uint64_t arena_bytes, used_bytes; /* sum of arena sizes, of USED blocks */
    uint64_t index_off, desc_off;     /* byte offsets from this struct     */
    uint64_t total_bytes;             /* the region given to init          */
} wh_blocks;

/* ---- layout ------------------------------------------------------------------ */

WH_INLINE WH_HOST_DEVICE uint64_t wh__blocks_round8(uint64_t x) { return (x + 7u) & ~(uint64_t)7u; }

/* Bytes of one free index: a LIST index keeps only its counts. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__index_stride(uint32_t kind) {
    return kind == WH_BLOCKS_LIST ? wh__blocks_round8(offsetof(wh_free_index, u)) : sizeof(wh_free_index);
}

/* Bytes of metadata for a core with nindex free indices and capacity descriptors. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_blocks_bytes(wh_blocks_kind kind, uint32_t nindex, uint32_t capacity) {
    uint64_t n = wh__blocks_round8(sizeof(wh_blocks)) + (uint64_t)nindex * wh__index_stride(kind);
    if (kind == WH_BLOCKS_MAXHEAP) n += wh__blocks_round8((uint64_t)nindex * capacity * sizeof(uint32_t));
    return n + (uint64_t)capacity * sizeof(wh_block);
}
WH_INLINE WH_HOST_DEVICE wh_block *wh_blocks_desc(const wh_blocks *c) { return (wh_block *)((char *)c + c->desc_off); }
WH_INLINE WH_HOST_DEVICE wh_free_index *wh_blocks_index(const wh_blocks *c, uint32_t i) {
    return (wh_free_index *)((char *)c + c->index_off + (uint64_t)i * wh__index_stride(c->kind));
}

#include "warpheap/core/tlsf.h"
#include "warpheap/core/maxheap.h"

/* ---- the free index, dispatched on the kind ---------------------------------- */

WH_INLINE WH_HOST_DEVICE void wh__index_insert(wh_blocks *c, uint32_t i, uint32_t b) {
    wh_block *d = wh_blocks_desc(c);
    wh_free_index *fi = wh_blocks_index(c, i);
    WH_ASSERT(b < c->capacity && i < c->nindex);
    d[b].state = WH_BLOCK_FREE;
    d[b].index = (uint16_t)i;
    fi->nfree++;
    fi->free_bytes += d[b].size;
    if (WH__KIND(c, WH_BLOCKS_TLSF))
        wh_tlsf_insert(&fi->u.tlsf, d, b, c->granule_log2);
    else if (WH__KIND(c, WH_BLOCKS_MAXHEAP))
        wh_maxheap_insert(c, &fi->u.heap, d, b);
    else if (!WH__KIND(c, WH_BLOCKS_LIST))
        wh__blocks_kind_missing();
}
WH_INLINE WH_HOST_DEVICE void wh__index_remove(wh_blocks *c, uint32_t b) {
    wh_block *d = wh_blocks_desc(c);
    wh_free_index *fi = wh_blocks_index(c, d[b].index);
    fi->nfree--;
    fi->free_bytes -= d[b].size;
    if (WH__KIND(c, WH_BLOCKS_TLSF))
        wh_tlsf_remove(&fi->u.tlsf, d, b, c->granule_log2);
    else if (WH__KIND(c, WH_BLOCKS_MAXHEAP))
        wh_maxheap_remove(c, &fi->u.heap, d, b);
    else if (!WH__KIND(c, WH_BLOCKS_LIST))
        wh__blocks_kind_missing();
}
/* LIST: the first free block of index i (by descriptor) that has size
 * bytes, the largest (largest: true), or NONE -- a scan of every descriptor. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__list_scan(const wh_blocks *c, uint32_t i, uint64_t size, bool largest) {
    const wh_block *d = wh_blocks_desc(c);
    uint32_t best = WH_BLOCK_NONE;
    for (uint32_t b = 0; b < c->capacity; ++b) {
        if (d[b].state != WH_BLOCK_FREE || d[b].index != i || d[b].size < size) continue;
        if (!largest) return b;
        if (best == WH_BLOCK_NONE || d[b].size > d[best].size) best = b;
    }
    return best;
}
/* A free block of index i with size >= size, or NONE; it stays in the index. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__index_find(const wh_blocks *c, uint32_t i, uint64_t size) {
    wh_free_index *fi = wh_blocks_index(c, i);
    if (WH__KIND(c, WH_BLOCKS_TLSF)) return wh_tlsf_find(&fi->u.tlsf, wh_blocks_desc(c), size, c->granule_log2);
    if (WH__KIND(c, WH_BLOCKS_LIST)) return wh__list_scan(c, i, size, false);
    if (WH__KIND(c, WH_BLOCKS_MAXHEAP)) return wh_maxheap_find(c, &fi->u.heap, wh_blocks_desc(c), size);
    wh__blocks_kind_missing();
    return WH_BLOCK_NONE;
}

/* ---- descriptors --------------------------------------------------------------- */

WH_INLINE WH_HOST_DEVICE uint32_t wh__blocks_take_spare(wh_blocks *c) {
    uint32_t b = c->spare;
    if (b != WH_BLOCK_NONE) {
        wh_block *d = wh_blocks_desc(c);
        c->spare = d[b].link_next;
        d[b].state = WH_BLOCK_USED;
    }
    return b;
}
WH_INLINE WH_HOST_DEVICE void wh__blocks_put_spare(wh_blocks *c, uint32_t b) {
    wh_block *d = wh_blocks_desc(c);
    d[b].state = WH_BLOCK_SPARE;
    d[b].size = 0;
    d[b].link_next = c->spare;
    c->spare = b;
}

/* Lay out a core in mem (bytes long, 8-aligned).  NULL if the region is too
 * small, the granule is not a power of two or an argument is out of range. */
WH_INLINE WH_HOST_DEVICE wh_blocks *wh_blocks_init(void *mem, uint64_t bytes, wh_blocks_kind kind, uint32_t nindex,
                                                   uint32_t capacity, uint64_t granule) {
    if (!mem || ((uintptr_t)mem & 7u) || nindex == 0 || nindex > 0xFFFFu || capacity == 0 ||
        capacity >= WH_BLOCK_NONE || granule == 0 || (granule & (granule - 1)) ||
        (kind != WH_BLOCKS_TLSF && kind != WH_BLOCKS_MAXHEAP && kind != WH_BLOCKS_LIST) ||
        bytes < wh_blocks_bytes(kind, nindex, capacity))
        return NULL;
    wh_blocks *c = (wh_blocks *)mem;
    memset(c, 0, sizeof *c);
    c->kind = (uint32_t)kind;
    c->nindex = nindex;
    c->capacity = capacity;
    c->granule = granule;
    c->granule_log2 = (uint32_t)wh_log2_64(granule);
    c->total_bytes = bytes;
    c->index_off = wh__blocks_round8(sizeof(wh_blocks));
    uint64_t slots = c->index_off + (uint64_t)nindex * wh__index_stride(kind);
    c->desc_off = slots;
    if (kind == WH_BLOCKS_MAXHEAP) c->desc_off += wh__blocks_round8((uint64_t)nindex * capacity * sizeof(uint32_t));
    for (uint32_t i = 0; i < nindex; ++i) {
        wh_free_index *fi = wh_blocks_index(c, i);
        fi->nfree = 0;
        fi->free_bytes = 0;
        if (kind == WH_BLOCKS_TLSF)
            wh_tlsf_init(&fi->u.tlsf);
        else if (kind == WH_BLOCKS_MAXHEAP)
            wh_maxheap_init(&fi->u.heap, slots + (uint64_t)i * capacity * sizeof(uint32_t));
    }
    c->spare = WH_BLOCK_NONE;
    c->absorb = WH_BLOCK_NONE;
    for (uint32_t b = capacity; b-- > 0;) wh__blocks_put_spare(c, b);
    return c;
}

/* Name an index whose free blocks may be taken by any index: a block freed
 * (or moved) into index i then also merges with free neighbours of index a.
 * The pool's READY index: blocks every stream may use may just as well be
 * used by one, and merging keeps its streams' free space in one piece. */
WH_INLINE WH_HOST_DEVICE void wh_blocks_set_absorb(wh_blocks *c, uint32_t a) {
    c->absorb = a < c->nindex ? a : WH_BLOCK_NONE;
}

/* ---- arenas ------------------------------------------------------------------- */

/* Hand the core an arena [addr, addr + size) as one free block of index i.
 * Returns its descriptor (the arena's name for wh_blocks_remove_arena), or
 * NONE if misaligned, empty or no descriptor is left. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_blocks_add_arena(wh_blocks *c, uint64_t addr, uint64_t size, uint32_t i) {
    if (size == 0 || ((addr | size) & (c->granule - 1u)) || i >= c->nindex || addr + size < addr) return WH_BLOCK_NONE;
    uint32_t b = wh__blocks_take_spare(c);
    if (b == WH_BLOCK_NONE) return b;
    wh_block *d = wh_blocks_desc(c);
    d[b].addr = addr;
    d[b].size = size;
    d[b].prev = d[b].next = WH_BLOCK_NONE;
    wh__index_insert(c, i, b);
    c->arena_bytes += size;
    c->narenas++;
    return b;
}

/* Take back a whole arena named by its first descriptor: only if that block is
 * free and spans the arena.  Returns true when removed. */
WH_INLINE WH_HOST_DEVICE bool wh_blocks_remove_arena(wh_blocks *c, uint32_t head) {
    wh_block *d = wh_blocks_desc(c);
    if (head >= c->capacity || d[head].state != WH_BLOCK_FREE || d[head].prev != WH_BLOCK_NONE ||
        d[head].next != WH_BLOCK_NONE)
        return false;
    wh__index_remove(c, head);
    c->arena_bytes -= d[head].size;
    c->narenas--;
    wh__blocks_put_spare(c, head);
    return true;
}

/* ---- allocate / free ----------------------------------------------------------- */

WH_INLINE WH_HOST_DEVICE uint64_t wh_blocks_round(const wh_blocks *c, uint64_t size) {
    uint64_t g = c->granule - 1u;
    return size > UINT64_MAX - g ? 0 : (size + g) & ~g;
}

/* Cut block b at size (0 < size < its size): b keeps the low part, a spare
 * descriptor (returned, state USED, in no index) the rest.  NONE if none. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__blocks_cut(wh_blocks *c, uint32_t b, uint64_t size) {
    wh_block *d = wh_blocks_desc(c);
    WH_ASSERT(size > 0 && size < d[b].size);
    uint32_t r = wh__blocks_take_spare(c);
    if (r == WH_BLOCK_NONE) return r;
    d[r].addr = d[b].addr + size;
    d[r].size = d[b].size - size;
    d[r].prev = b;
    d[r].next = d[b].next;
    if (d[b].next != WH_BLOCK_NONE) d[d[b].next].prev = r;
    d[b].next = r;
    d[b].size = size;
    return r;
}

/* Cut block b (taken out of the index, now USED) to size; the rest becomes a
 * free block of index i.  With no spare descriptor, b stays whole: the caller
 * gets a larger block, never a failure. */
WH_INLINE WH_HOST_DEVICE void wh__blocks_split(wh_blocks *c, uint32_t b, uint64_t size, uint32_t i) {
    if (wh_blocks_desc(c)[b].size - size < c->granule) return;
    uint32_t r = wh__blocks_cut(c, b, size);
    if (r != WH_BLOCK_NONE) wh__index_insert(c, i, r);
}

/* Allocate at least size bytes from free index i.  Returns the descriptor of
 * a USED block (its addr and size are in wh_blocks_desc(c)[b]), or NONE. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_blocks_alloc(wh_blocks *c, uint64_t size, uint32_t i) {
    size = wh_blocks_round(c, size);
    if (size == 0 || i >= c->nindex) return WH_BLOCK_NONE;
    uint32_t b = wh__index_find(c, i, size);
    if (b == WH_BLOCK_NONE) return b;
    WH_ASSERT(wh_blocks_desc(c)[b].state == WH_BLOCK_FREE && wh_blocks_desc(c)[b].size >= size);
    wh__index_remove(c, b);
    wh_blocks_desc(c)[b].state = WH_BLOCK_USED;
    wh__blocks_split(c, b, size, i);
    c->nused++;
    c->used_bytes += wh_blocks_desc(c)[b].size;
    return b;
}

/* Absorb b's next neighbour n into b (both out of any index). */
WH_INLINE WH_HOST_DEVICE void wh__blocks_absorb_next(wh_blocks *c, uint32_t b) {
    wh_block *d = wh_blocks_desc(c);
    uint32_t n = d[b].next;
    /* boundary tags: n follows b in memory and links back to it */
    WH_ASSERT(n != WH_BLOCK_NONE && d[n].prev == b && d[b].addr + d[b].size == d[n].addr);
    d[b].size += d[n].size;
    d[b].next = d[n].next;
    if (d[n].next != WH_BLOCK_NONE) d[d[n].next].prev = b;
    wh__blocks_put_spare(c, n);
}

/* Whether free neighbour x may merge into a block of index i. */
WH_INLINE WH_HOST_DEVICE bool wh__blocks_joins(const wh_blocks *c, uint32_t x, uint32_t i) {
    const wh_block *d = wh_blocks_desc(c);
    return x != WH_BLOCK_NONE && d[x].state == WH_BLOCK_FREE && (d[x].index == i || d[x].index == c->absorb);
}

/* Put block b (out of any index) into index i, merged with the free
 * neighbours of that index (and of the absorb index, if set: free blocks
 * of i and of the absorb index may alternate in a run, and the whole run
 * merges; each step frees a descriptor, so capacity bounds the loop).
 * Returns the descriptor of the merged block. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__blocks_release(wh_blocks *c, uint32_t b, uint32_t i) {
    wh_block *d = wh_blocks_desc(c);
    for (uint32_t k = 0; k < c->capacity && wh__blocks_joins(c, d[b].next, i); ++k) {
        wh__index_remove(c, d[b].next);
        wh__blocks_absorb_next(c, b);
    }
    for (uint32_t k = 0; k < c->capacity && wh__blocks_joins(c, d[b].prev, i); ++k) {
        uint32_t p = d[b].prev;
        wh__index_remove(c, p);
        wh__blocks_absorb_next(c, p);
        b = p;
    }
    /* no free neighbour of index i is left unmerged */
    WH_ASSERT(!wh__blocks_joins(c, d[b].next, i) && !wh__blocks_joins(c, d[b].prev, i));
    wh__index_insert(c, i, b);
    return b;
}

/* Free USED block b into index i.  Returns false (and changes nothing) if b is
 * not a USED block: a double free or a bad id. */
WH_INLINE WH_HOST_DEVICE bool wh_blocks_free(wh_blocks *c, uint32_t b, uint32_t i) {
    if (b >= c->capacity || i >= c->nindex || wh_blocks_desc(c)[b].state != WH_BLOCK_USED) return false;
    c->nused--;
    c->used_bytes -= wh_blocks_desc(c)[b].size;
    wh__blocks_release(c, b, i);
    return true;
}

/* Move free block b into index i (merging there).  Returns the merged block. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_blocks_move(wh_blocks *c, uint32_t b, uint32_t i) {
    wh__index_remove(c, b);
    return wh__blocks_release(c, b, i);
}

/* ---- placed blocks: alignment above the granule, and owner-held ranges --------- */

/* Whether n spare descriptors are left (n <= 2). */
WH_INLINE WH_HOST_DEVICE bool wh__blocks_have_spares(const wh_blocks *c, uint32_t n) {
    uint32_t b = c->spare;
    for (uint32_t k = 0; k < n; ++k, b = wh_blocks_desc(c)[b].link_next)
        if (b == WH_BLOCK_NONE) return false;
    return true;
}

/* Take [addr, addr + size) out of free block f as a USED block (returned);
 * what lies before and after stays free in f's index.  NONE, changing
 * nothing, if the range is not inside f, misaligned, or the two spare
 * descriptors a cut may need are not there. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_blocks_carve(wh_blocks *c, uint32_t f, uint64_t addr, uint64_t size) {
    wh_block *d = wh_blocks_desc(c);
    if (f >= c->capacity || d[f].state != WH_BLOCK_FREE || size == 0 || ((addr | size) & (c->granule - 1u)) ||
        addr < d[f].addr || addr + size > d[f].addr + d[f].size || !wh__blocks_have_spares(c, 2))
        return WH_BLOCK_NONE;
    uint32_t i = d[f].index, u = f;
    wh__index_remove(c, f);
    if (addr > d[f].addr) { /* the head stays free, f keeps it */
        u = wh__blocks_cut(c, f, addr - d[f].addr);
        wh__index_insert(c, i, f);
    }
    d[u].state = WH_BLOCK_USED;
    wh__blocks_split(c, u, size, i); /* the tail stays free */
    c->nused++;
    c->used_bytes += size;
    return u;
}

/* Allocate size bytes at an address that is a multiple of align (a power of
 * two; at most the granule means any block) from free index i, or NONE. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_blocks_alloc_aligned(wh_blocks *c, uint64_t size, uint64_t align, uint32_t i) {
    if (align <= c->granule) return wh_blocks_alloc(c, size, i);
    size = wh_blocks_round(c, size);
    if (size == 0 || i >= c->nindex || (align & (align - 1u)) || size + align < size) return WH_BLOCK_NONE;
    uint32_t f = wh__index_find(c, i, size + align - c->granule);
    if (f == WH_BLOCK_NONE) return f;
    uint64_t a = wh_blocks_desc(c)[f].addr;
    return wh_blocks_carve(c, f, (a + align - 1u) & ~(align - 1u), size);
}

/* Cut USED block b at size: b keeps the first size bytes, a new USED block
 * (returned) the rest.  NONE if size is not strictly inside or no spare. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_blocks_split_used(wh_blocks *c, uint32_t b, uint64_t size) {
    wh_block *d = wh_blocks_desc(c);
    if (b >= c->capacity || d[b].state != WH_BLOCK_USED || size == 0 || size >= d[b].size || (size & (c->granule - 1u)))
        return WH_BLOCK_NONE;
    uint32_t r = wh__blocks_cut(c, b, size);
    if (r != WH_BLOCK_NONE) c->nused++;
    return r;
}

/* Join USED block b with its USED next neighbour (whose descriptor goes
 * spare).  False if either is not USED. */
WH_INLINE WH_HOST_DEVICE bool wh_blocks_join_used(wh_blocks *c, uint32_t b) {
    wh_block *d = wh_blocks_desc(c);
    if (b >= c->capacity || d[b].state != WH_BLOCK_USED || d[b].next == WH_BLOCK_NONE ||
        d[d[b].next].state != WH_BLOCK_USED)
        return false;
    wh__blocks_absorb_next(c, b);
    c->nused--;
    return true;
}

/* Some free block of index i (to drain an index), or NONE. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_blocks_any_free(const wh_blocks *c, uint32_t i) {
    wh_free_index *fi = wh_blocks_index(c, i);
    if (fi->nfree == 0) return WH_BLOCK_NONE;
    if (WH__KIND(c, WH_BLOCKS_TLSF)) return wh_tlsf_any(&fi->u.tlsf);
    if (WH__KIND(c, WH_BLOCKS_LIST)) return wh__list_scan(c, i, 0, false);
    if (WH__KIND(c, WH_BLOCKS_MAXHEAP)) return wh_maxheap_slots(c, &fi->u.heap)[0];
    wh__blocks_kind_missing();
    return WH_BLOCK_NONE;
}

/* Size of the largest free block of index i (0 if none). */
WH_INLINE WH_HOST_DEVICE uint64_t wh_blocks_largest_free(const wh_blocks *c, uint32_t i) {
    wh_free_index *fi = wh_blocks_index(c, i);
    if (fi->nfree == 0) return 0;
    if (WH__KIND(c, WH_BLOCKS_TLSF)) return wh_tlsf_largest(&fi->u.tlsf, wh_blocks_desc(c));
    if (WH__KIND(c, WH_BLOCKS_LIST)) return wh_blocks_desc(c)[wh__list_scan(c, i, 0, true)].size;
    if (WH__KIND(c, WH_BLOCKS_MAXHEAP)) return wh_blocks_desc(c)[wh_maxheap_slots(c, &fi->u.heap)[0]].size;
    wh__blocks_kind_missing();
    return 0;
}

#endif /* WARPHEAP_BLOCKS_H */
