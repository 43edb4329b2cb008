/* SPDX-License-Identifier: MIT */
/* Host pool growth with the driver's virtual-memory calls: the pool grows as
 * one contiguous range.
 * Not from a seed: Futhark's free list and the seed heap both get whole
 * buffers; this is the mapping side of the block core of
 * gpu-executed-heap.txt ("Heap": one region, blocks split and merged).
 *
 * One address range is reserved at create and given to the block core as its
 * only arena, so blocks merge across everything ever grown.  Parts with no
 * physical memory are USED blocks the pool marks WH__HOLE; growing fills
 * part of a hole (cuMemCreate + cuMemMap + cuMemSetAccess, for the pool's
 * device and its peers) next to the free block that is short of the request,
 * so reserved follows the request, not a fixed arena step.  When growing
 * would take reserved above the budget (the peak in use plus 1/10; for
 * requests large against it, up to 14/100: wh__move_budget), whole mapped
 * pieces inside free READY blocks are *moved* there instead (cuMemUnmap,
 * cuMemMap of the same handle, cuMemSetAccess): reserved stays, and the
 * driver neither releases nor creates memory, which costs it ~0.32 us a MiB
 * and ~9 us a piece.  Pieces moved for one request lie side by side and get
 * one cuMemSetAccess.  Past budget + 1/64 (the hard budget), or with no piece
 * to move, free pieces are unmapped and become holes again: reserved tracks
 * live memory.  Only READY blocks: a stream's own free blocks may still be
 * read by work queued on it, so the walk first waits for the streams
 * (wh__reclaim).  A growth may still move pieces from its own stream's free
 * blocks without a wait: the piece is mapped where the request needs it as
 * well, and its old address stays mapped, a retired USED block, until an
 * event recorded on the stream after the move completes.  Later work on the
 * stream reaches the memory only at the new address, so the physical
 * memory is never used twice at once, and the host does not stop the GPU's
 * queue.
 *
 * Every piece costs the driver ~50-90 us to map or move, however large,
 * and only whole pieces can be moved or unmapped: a piece under both a live
 * and a free block holds the free part.  The largest piece is the trade
 * between the two: on random_allocations with blocks up to 1 GiB, 64 MiB
 * pieces move ~0.1 a request and stay at 1.375x of the peak in use (the
 * ceiling without moves), 128 MiB ~0.27 at 1.14-1.16x, 192 MiB ~0.18 at
 * 1.16-1.20x.  With the batched access, the tie-break of wh__move_source
 * and a hard budget of 1/64, 112 MiB holds 1.12-1.14x on the CPU replay
 * (wh_pool_replay) at a modelled driver time 7-13% under 128 MiB's with
 * 1/32 for N = 1e4 / 1e5; 96 MiB 1.12-1.13x but 1.141 at max 64 MiB.
 * Since only whole pieces move, a large block is placed in its free block
 * where the rest stays in whole pieces (wh__spot), and a hole between two
 * free blocks is filled by moves too; the margin this wins pays for moves
 * that start later (1.144x at 22-28% less modelled driver time, 11.7-15.8
 * us an operation instead of 15.6-22.2).
 *
 * The CUDA entry points come from cudaGetDriverEntryPointByVersion, so the
 * library does not link libcuda.  The CPU backend does the same with mmap
 * (PROT_NONE reserve, mprotect to map, MADV_DONTNEED to unmap), so the CPU
 * tests run every path, and touching an unmapped hole faults there too.
 */
#include "pool_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#if WH_HAVE_CUDA
#include <cuda.h>
#include "warpheap/cuda_check.h"
#endif

#define WH__CPU_GRAN   (64ull << 10) /* CPU granule: small, so tests see many pieces */
#define WH__CPU_RANGE  (4ull << 30)
/* The growth policy's constants. */
#define WH__PIECE_MAX  (112ull << 20) /* largest piece mapped by one cuMemCreate             */
#define WH__GROW_SHIFT 4              /* extra growth: reserved / 16, within the budget       */
#define WH__MOVE_K     3              /* moves begin past + 3 of the largest requests (below) */
#define WH__PLACE_MIN  (64ull << 20)  /* blocks placed by wh__spot: this size and more         */
#define WH__HARD_SHIFT 6              /* walk regardless past budget + budget / 64            */
#define WH__MOVES      12             /* pieces moved at most for one request                 */

/* ---- the driver's calls ---------------------------------------------------------- */
#if WH_HAVE_CUDA
typedef CUresult (*wh__pfn_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*wh__pfn_addr_free)(CUdeviceptr, size_t);
typedef CUresult (*wh__pfn_create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                                   unsigned long long);
typedef CUresult (*wh__pfn_release)(CUmemGenericAllocationHandle);
typedef CUresult (*wh__pfn_map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*wh__pfn_unmap)(CUdeviceptr, size_t);
typedef CUresult (*wh__pfn_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*wh__pfn_gran)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);

static struct {
    wh__pfn_reserve reserve;
    wh__pfn_addr_free addr_free;
    wh__pfn_create create;
    wh__pfn_release release;
    wh__pfn_map map;
    wh__pfn_unmap unmap;
    wh__pfn_access access;
    wh__pfn_gran gran;
    bool ok;
} wh__drv;
static pthread_once_t wh__drv_once = PTHREAD_ONCE_INIT;

static bool wh__sym(const char *name, void **fn) {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e == cudaSuccess && q == cudaDriverEntryPointSuccess && *fn;
}

static void wh__drv_load(void) {
    bool ok = wh__sym("cuMemAddressReserve", (void **)&wh__drv.reserve);
    ok = wh__sym("cuMemAddressFree", (void **)&wh__drv.addr_free) && ok;
    ok = wh__sym("cuMemCreate", (void **)&wh__drv.create) && ok;
    ok = wh__sym("cuMemRelease", (void **)&wh__drv.release) && ok;
    ok = wh__sym("cuMemMap", (void **)&wh__drv.map) && ok;
    ok = wh__sym("cuMemUnmap", (void **)&wh__drv.unmap) && ok;
    ok = wh__sym("cuMemSetAccess", (void **)&wh__drv.access) && ok;
    ok = wh__sym("cuMemGetAllocationGranularity", (void **)&wh__drv.gran) && ok;
    wh__drv.ok = ok;
}

static CUmemAllocationProp wh__prop(int dev) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    return prop;
}

static bool wh__is_cuda(const wh_pool *p) { return p->cfg.backend == WH_POOL_CUDA; }
#endif

static uint64_t wh__addr(const wh_pool *p, uint32_t g) { return p->vmm.base + (uint64_t)g * p->vmm.gran; }

#if WH_HAVE_CUDA
/* Time spent in the driver's calls (stats.driver_ns). */
static uint64_t wh__ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
#endif

/* Unmap the piece that starts at granule g and hand back its driver handle,
 * still allocated (CPU: its pages dropped), for a move (wh__map_handle) or
 * wh__drop.  *bytes gets its size. */
static uint64_t wh__unmap_keep(wh_pool *p, uint32_t g, uint64_t *bytes) {
    wh__vmm *v = &p->vmm;
    uint32_t n = v->plen[g];
    uint64_t h = v->handle[g];
    *bytes = (uint64_t)n * v->gran;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        uint64_t t = wh__ns();
        /* nothing can be done on failure: the address stays unusable, no block refers to it */
        (void)wh__drv.unmap((CUdeviceptr)wh__addr(p, g), *bytes);
        p->st.driver_ns += wh__ns() - t;
    } else
#endif
    {
        void *a = (void *)(uintptr_t)wh__addr(p, g);
        (void)madvise(a, *bytes, MADV_DONTNEED);
        (void)mprotect(a, *bytes, PROT_NONE);
    }
    for (uint32_t k = 0; k < n; ++k) v->piece[g + k] = WH_BLOCK_NONE;
    v->plen[g] = 0;
    v->handle[g] = 0;
    return h;
}

/* Give an unmapped piece's memory back to the driver. */
static void wh__drop(wh_pool *p, uint64_t h, uint64_t bytes) {
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        uint64_t t = wh__ns();
        (void)wh__drv.release((CUmemGenericAllocationHandle)h);
        p->st.driver_ns += wh__ns() - t;
    }
#endif
    (void)h;
    p->st.arena_frees++;
    p->st.bytes_released += bytes;
}

static void wh__unmap_piece(wh_pool *p, uint32_t g) {
    uint64_t bytes, h = wh__unmap_keep(p, g, &bytes);
    wh__drop(p, h, bytes);
}

/* Read and write access on [g0, g0 + n granules), all mapped, for the
 * pool's device and its peers (wh__vmm.readers): one call however many
 * pieces (the driver's cost is mostly per piece). */
static wh_status wh__access(wh_pool *p, uint32_t g0, uint32_t n) {
    p->st.growths++;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        CUmemAccessDesc acc[WH__VMM_READERS];
        memset(acc, 0, sizeof acc);
        for (uint32_t k = 0; k < p->vmm.nreaders; ++k) {
            acc[k].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            acc[k].location.id = p->vmm.readers[k];
            acc[k].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        }
        uint64_t t = wh__ns();
        CUresult r = wh__drv.access((CUdeviceptr)wh__addr(p, g0), (uint64_t)n * p->vmm.gran, acc, p->vmm.nreaders);
        p->st.driver_ns += wh__ns() - t;
        if (r != CUDA_SUCCESS) return wh__fail(WH_ERR_CUDA, "pool: cuMemSetAccess: CUresult %d", (int)r);
    }
#else
    (void)g0;
    (void)n;
#endif
    return WH_OK;
}

/* Map the kept handle h of n granules at granule g (a move), and set its
 * access unless the caller sets it later over several pieces (access
 * false).  On failure nothing stays mapped there and h is still the
 * caller's to release. */
static wh_status wh__map_handle(wh_pool *p, uint32_t g, uint32_t n, uint64_t h) {
    wh__vmm *v = &p->vmm;
    uint64_t bytes = (uint64_t)n * v->gran;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        uint64_t t = wh__ns();
        CUresult r = wh__drv.map((CUdeviceptr)wh__addr(p, g), bytes, 0, (CUmemGenericAllocationHandle)h, 0);
        p->st.driver_ns += wh__ns() - t;
        if (r != CUDA_SUCCESS)
            return wh__fail(WH_ERR_CUDA, "pool: cuMemMap of a moved piece of %llu B: CUresult %d",
                            (unsigned long long)bytes, (int)r);
    } else
#endif
        if (mprotect((void *)(uintptr_t)wh__addr(p, g), bytes, PROT_READ | PROT_WRITE))
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: mprotect of a moved piece failed");
    for (uint32_t k = 0; k < n; ++k) v->piece[g + k] = g;
    v->plen[g] = n;
    v->handle[g] = h;
    return WH_OK;
}

/* Unmap and release every piece that starts in [g0, g1). */
static void wh__unmap_run(wh_pool *p, uint32_t g0, uint32_t g1) {
    for (uint32_t g = g0, n; g < g1; g += n) {
        n = p->vmm.plen[g];
        wh__unmap_piece(p, g);
    }
}

/* Back granules [g0, g0 + n) with physical memory.  On failure nothing stays
 * mapped; WH_ERR_OUT_OF_MEMORY if the device is full. */
static wh_status wh__map(wh_pool *p, uint32_t g0, uint32_t n) {
    wh__vmm *v = &p->vmm;
    /* A growth is one piece up to WH__PIECE_MAX.  (Pieces aligned to their
     * power-of-two sizes, which line up across growths, mapped ~2x as many
     * pieces on the CPU replay of random_allocations for the same peaks.) */
    uint32_t capg = (uint32_t)(WH__PIECE_MAX / v->gran);
    capg = capg ? capg : 1;
    wh_status st = WH_OK;
    uint32_t g = g0, end = g0 + n;
    while (g < end && st == WH_OK) {
        uint32_t len = end - g < capg ? end - g : capg;
        uint64_t bytes = (uint64_t)len * v->gran;
#if WH_HAVE_CUDA
        if (wh__is_cuda(p)) {
            CUmemAllocationProp prop = wh__prop(v->device);
            CUmemGenericAllocationHandle h = 0;
            uint64_t t = wh__ns();
            CUresult r = wh__fault() ? CUDA_ERROR_OUT_OF_MEMORY : wh__drv.create(&h, bytes, &prop, 0);
            if (r == CUDA_SUCCESS) {
                r = wh__drv.map((CUdeviceptr)wh__addr(p, g), bytes, 0, h, 0);
                if (r != CUDA_SUCCESS) (void)wh__drv.release(h);
            }
            p->st.driver_ns += wh__ns() - t;
            if (r != CUDA_SUCCESS) {
                if (r == CUDA_ERROR_OUT_OF_MEMORY) p->refused = bytes;
                st = r == CUDA_ERROR_OUT_OF_MEMORY ? WH_ERR_OUT_OF_MEMORY
                                                   : wh__fail(WH_ERR_CUDA,
                                                              "pool: cuMemCreate/cuMemMap of %llu B: "
                                                              "CUresult %d",
                                                              (unsigned long long)bytes, (int)r);
                break;
            }
            v->handle[g] = (uint64_t)h;
        } else
#endif
            if (wh__fault() || mprotect((void *)(uintptr_t)wh__addr(p, g), bytes, PROT_READ | PROT_WRITE)) {
            p->refused = bytes;
            st = WH_ERR_OUT_OF_MEMORY;
            break;
        }
        for (uint32_t k = 0; k < len; ++k) v->piece[g + k] = g;
        v->plen[g] = len;
        p->st.arena_allocs++;
        g += len;
    }
    if (st == WH_OK) st = wh__access(p, g0, n);
    if (st != WH_OK) wh__unmap_run(p, g0, g); /* give back the pieces mapped here */
    return st;
}

/* ---- holes: found through the arena's chain (a walk per growth or release) ---- */

static bool wh__is_hole(const wh_pool *p, uint32_t b) { return b != WH_BLOCK_NONE && p->info[b].state == WH__HOLE; }

static uint32_t wh__gran_of(const wh_pool *p, uint64_t addr) { return (uint32_t)((addr - p->vmm.base) / p->vmm.gran); }

/* Used block u, its memory unmapped, becomes a hole, joined with the holes
 * next to it; the hole's descriptor. */
static uint32_t wh__hole_join(wh_pool *p, uint32_t u) {
    const wh_block *d = wh_blocks_desc(p->core);
    p->vmm.hole_bytes += d[u].size;
    wh__poison(p, d[u].addr, d[u].size, false); /* holes are not the pool's */
    p->info[u] = (wh__info){.state = WH__HOLE};
    if (wh__is_hole(p, d[u].next)) {
        uint32_t n = d[u].next;
        wh_blocks_join_used(p->core, u);
        p->info[n] = (wh__info){0};
    }
    uint32_t prev = d[u].prev;
    if (wh__is_hole(p, prev)) {
        wh_blocks_join_used(p->core, prev);
        p->info[u] = (wh__info){0};
        u = prev;
    }
    return u;
}

/* Turn [a, a + n granules) of free READY block f, all whole pieces, into a
 * hole, joined with holes next to it.  Returns the block after it.  kept:
 * NULL (the pieces are released), or [a, e) is one piece, unmapped and its
 * handle stored there (a move).  Without a descriptor for the carve nothing
 * changes: the piece stays mapped. */
static uint32_t wh__punch(wh_pool *p, uint32_t f, uint32_t a, uint32_t e, uint64_t *kept) {
    uint32_t u = wh_blocks_carve(p->core, f, wh__addr(p, a), (uint64_t)(e - a) * p->vmm.gran);
    if (u == WH_BLOCK_NONE) return wh_blocks_desc(p->core)[f].next;
    uint64_t bytes;
    if (kept)
        *kept = wh__unmap_keep(p, a, &bytes);
    else
        for (uint32_t g = a, n; g < e; g += n) {
            n = p->vmm.plen[g];
            wh__unmap_piece(p, g);
        }
    return wh_blocks_desc(p->core)[wh__hole_join(p, u)].next;
}

/* Granules [*a, *e) of the pieces that lie wholly under backed block b. */
static void wh__whole_pieces(const wh_pool *p, const wh_block *b, uint32_t *a, uint32_t *e) {
    const wh__vmm *v = &p->vmm;
    *a = wh__gran_of(p, b->addr + v->gran - 1);
    *e = wh__gran_of(p, b->addr + b->size);
    if (*a < *e && v->piece[*a] != *a) *a = v->piece[*a] + v->plen[v->piece[*a]];
    if (*a < *e && v->piece[*e - 1] + v->plen[v->piece[*e - 1]] > *e) *e = v->piece[*e - 1];
}

/* A free block of index idx that may hold a whole piece. */
static bool wh__free_in(const wh_pool *p, const wh_block *b, uint32_t idx) {
    return b->state == WH_BLOCK_FREE && b->index == idx && b->size >= p->vmm.gran;
}
static bool wh__ready_free(const wh_pool *p, const wh_block *b) { return wh__free_in(p, b, WH__READY); }

/* Unmap whole pieces under free READY blocks until reserved <= target (all
 * it can when target is 0).  wait: first wait for the streams' work queued
 * before their frees, so that those blocks become READY too; without it only
 * the blocks whose work is already done count (the footprint budget is soft:
 * holding a host thread for a stream's kernels to keep reserved within it
 * is not worth it -- test_pool_gpu saw a growth wait 0.1 s for another
 * stream's kernel). */
void wh__vmm_release(wh_pool *p, uint64_t target, bool wait) {
    wh__vmm *v = &p->vmm;
    uint64_t before = v->retire_seq; /* entries made while the wait has the lock released are not waited for */
    wh__vmm_retire_poll(p, wait && wh__wait_streams(p) ? before : 0);
    wh__pending_poll(p);
    wh__reclaim(p);
    v->walk_frees = p->st.frees;
    const wh_block *d = wh_blocks_desc(p->core);
    uint32_t b = v->head;
    for (uint32_t k = 0; b != WH_BLOCK_NONE && k < p->core->capacity && wh__reserved(p) > target; ++k) {
        if (!wh__ready_free(p, &d[b])) {
            b = d[b].next;
            continue;
        }
        uint32_t a, e;
        wh__whole_pieces(p, &d[b], &a, &e);
        b = a < e ? wh__punch(p, b, a, e, NULL) : d[b].next;
    }
}

/* ---- placement: where in a free block a large block goes ------------------------- */

/* Bytes of the whole pieces of free block [a, e) that [x, x + s) touches:
 * the run of pieces from the one under x to the one under x + s - 1, less
 * its first and last if they reach out of the block. */
static uint64_t wh__touched(const wh_pool *p, uint64_t a, uint64_t e, uint64_t x, uint64_t s) {
    const wh__vmm *m = &p->vmm;
    uint32_t f = m->piece[wh__gran_of(p, x)], l = m->piece[wh__gran_of(p, x + s - 1)];
    uint64_t lo = wh__addr(p, f), hi = wh__addr(p, l + m->plen[l]);
    if (lo < a) lo = wh__addr(p, f + m->plen[f]);
    if (hi > e) hi = wh__addr(p, l);
    return hi > lo ? hi - lo : 0;
}

/* Where in free block f a block of s bytes leaves the most of the rest in
 * whole pieces: its start, its end, or a place where one of the block's
 * ends is a piece boundary (the first such place of the best, start
 * first).  Free bytes in a piece shared with a live block can serve only
 * requests that fit there; free whole pieces can also be moved where a
 * larger request needs them.  O(pieces in f).  (On the CPU replay of
 * random_allocations with blocks up to 1 GiB, placing at the start held
 * 1.14x of the peak live with the budget at 1.10x; placed here, 1.12x, and
 * the margin pays for the later start of moves, wh__move_budget.) */
static uint64_t wh__spot(const wh_pool *p, uint32_t f, uint64_t s) {
    const wh__vmm *m = &p->vmm;
    const wh_block *d = wh_blocks_desc(p->core);
    uint64_t a = d[f].addr, e = a + d[f].size;
    uint64_t best = a, best_t = wh__touched(p, a, e, a, s);
    uint32_t g = wh__gran_of(p, a), g1 = wh__gran_of(p, e);
    if (m->piece[g] != g) g = m->piece[g] + m->plen[m->piece[g]]; /* the first boundary in f */
    for (uint32_t k = 0; g <= g1 && k <= m->ngran && best_t; ++k) {
        uint64_t q = wh__addr(p, g), c[3] = {q, q - s, e - s}; /* q - s may wrap: checked */
        for (int i = 0; i < 3; ++i) {
            uint64_t x = c[i], t;
            if (x < a || x > e - s) continue;
            t = wh__touched(p, a, e, x, s);
            if (t < best_t) best = x, best_t = t;
        }
        if (g == g1) break;
        g += m->plen[g];
    }
    return best;
}

/* Allocate from free index slot: a block of WH__PLACE_MIN or more goes
 * where wh__spot says in the free block the index picks.  (Smaller ones at
 * the start: placed, blocks up to 64 MiB held 1.17x instead of 1.13x.) */
uint32_t wh__vmm_alloc(wh_pool *p, uint64_t size, uint64_t align, uint32_t slot) {
    wh_blocks *c = p->core;
    uint64_t s = wh_blocks_round(c, size);
    if (align > c->granule || s < WH__PLACE_MIN || slot >= c->nindex)
        return wh_blocks_alloc_aligned(c, size, align, slot);
    uint32_t f = wh__index_find(c, slot, s);
    return f == WH_BLOCK_NONE ? f : wh_blocks_carve(c, f, wh__spot(p, f, s), s);
}

/* ---- growth ---------------------------------------------------------------------- */

/* The peak in use, this request counted. */
static uint64_t wh__peak(const wh_pool *p, uint64_t size) {
    uint64_t peak = p->st.in_use + size;
    return peak > p->st.in_use_peak ? peak : p->st.in_use_peak;
}

/* Reserved bytes growth may reach: the peak in use plus pm/1000 of it, at
 * least one granule.  (On RMM's random_allocations run on the CPU backend
 * with the GPU's 2 MiB granule, 1/12 gives the same peaks for sizes up to
 * 64 MiB but unmapped and mapped again ~40x as often.) */
static uint64_t wh__budget(const wh_pool *p, uint64_t size, uint64_t pm) {
    uint64_t peak = wh__peak(p, size), slack = peak / 1000 * pm;
    return peak + (slack > p->vmm.gran ? slack : p->vmm.gran);
}

/* Past this, growth moves pieces instead of mapping new ones: room for
 * WH__MOVE_K of the largest requests, between growth's budget and 1.4 times
 * its slack over the peak in use.  With blocks up to 1 GiB, 1.14x instead
 * of 1.10x moves a little less and maps and releases new pieces
 * 1/700 as often (wh_pool_replay's warm pass at N = 1e5: 11 against 8322),
 * and the mean modelled driver time over eight traces falls by 22-28%
 * (wh_pool_replay --seeds=8).  On the benchmark's trace (wh_pool_replay
 * built with -DWH__MOVE_K=k) K = 1, which leaves 1.10x there, modelled
 * 14.8 / 17.1 / 18.6 us an operation for N = 1e3 / 1e4 / 1e5, K = 2 (1.125x)
 * 13.9 / 15.5 / 16.6 and K = 3 12.6 / 13.9 / 14.6.  Blocks up to 64 MiB
 * keep the 1.10x that holds their footprint. */
static uint64_t wh__move_budget(const wh_pool *p, uint64_t size) {
    uint32_t slack = p->cfg.vmm_slack_pm; /* growth's budget (default 100/1000) */
    uint64_t lo = wh__budget(p, size, slack), hi = wh__budget(p, size, slack * 14 / 10);
    uint64_t want = wh__peak(p, size) + WH__MOVE_K * p->vmm.big;
    return want < lo ? lo : want > hi ? hi : want;
}

/* The walk's gate (below) lets reserved pass the budget for a while; past
 * this it walks anyway.  Without moves, a 1/4 margin holds random_allocations
 * with blocks up to 1 GiB at 1.375x of the peak in use (without one: 1.36 /
 * 1.44 / 1.46 for N = 1e3 / 1e4 / 1e5); with moves, 1/32 holds it at
 * 1.14-1.16x (1/16: 1.169x in about the same time); with batched moves,
 * 1/64 and 112 MiB pieces 1.12-1.14x (CPU replay). */
static uint64_t wh__hard_budget(uint64_t budget) { return budget + (budget >> WH__HARD_SHIFT); }

typedef struct {
    uint32_t hole;
    uint64_t bytes;
    int side;
} wh__fill; /* side: -1 low end, 1 high end, 0 all */

/* The hole whose filling makes a free block of at least need bytes for slot
 * with the fewest new bytes (then the lowest address). */
static wh__fill wh__choose(wh_pool *p, uint64_t need, uint32_t slot) {
    wh__fill best = {WH_BLOCK_NONE, 0, 0};
    const wh_block *d = wh_blocks_desc(p->core);
    uint64_t G = p->vmm.gran;
    for (uint32_t b = p->vmm.head, k = 0; b != WH_BLOCK_NONE && k < p->core->capacity; b = d[b].next, ++k) {
        if (!wh__is_hole(p, b)) continue;
        uint64_t hs = d[b].size;
        uint64_t ls = wh__blocks_joins(p->core, d[b].prev, slot) ? d[d[b].prev].size : 0;
        uint64_t rs = wh__blocks_joins(p->core, d[b].next, slot) ? d[d[b].next].size : 0;
        wh__fill c[3] = {{b, ls >= need ? 0 : (need - ls + G - 1) / G * G, -1},
                         {b, rs >= need ? 0 : (need - rs + G - 1) / G * G, 1},
                         {b, ls + hs + rs >= need ? hs : 0, 0}};
        for (int i = 0; i < 3; ++i)
            if (c[i].bytes && c[i].bytes <= hs && (best.hole == WH_BLOCK_NONE || c[i].bytes < best.bytes)) best = c[i];
    }
    return best;
}

/* The mapped bytes [a, a + f.bytes) at f's side of its hole become a free
 * block of slot (merging with its neighbour). */
static void wh__fill_done(wh_pool *p, wh__fill f, uint32_t slot) {
    const wh_block *d = wh_blocks_desc(p->core);
    uint32_t h = f.hole, filled = h;
    uint64_t hs = d[h].size;
    if (f.bytes < hs) {
        uint32_t r = wh_blocks_split_used(p->core, h, f.side > 0 ? hs - f.bytes : f.bytes);
        if (f.side > 0)
            filled = r;
        else
            p->info[r] = (wh__info){.state = WH__HOLE};
    }
    p->info[filled] = (wh__info){0};
    wh__poison(p, d[filled].addr, d[filled].size, true); /* free from here */
    wh__secure_fresh(p, d[filled].addr, d[filled].size);
    p->vmm.hole_bytes -= f.bytes;
    wh_blocks_free(p->core, filled, slot);
    uint64_t r = wh__reserved(p);
    p->st.reserved = r;
    if (r > p->st.reserved_peak) p->st.reserved_peak = r;
    wh__poison_check(p);
}

static uint32_t wh__fill_start(const wh_pool *p, wh__fill f) {
    const wh_block *h = &wh_blocks_desc(p->core)[f.hole];
    return wh__gran_of(p, f.side > 0 ? h->addr + h->size - f.bytes : h->addr);
}

/* Map f.bytes of its hole and free them into slot (merging). */
static bool wh__do_fill(wh_pool *p, wh__fill f, uint32_t slot) {
    if (!wh__blocks_have_spares(p->core, 1)) return false;
    if (wh__map(p, wh__fill_start(p, f), (uint32_t)(f.bytes / p->vmm.gran)) != WH_OK) return false;
    wh__fill_done(p, f, slot);
    return true;
}

/* ---- moves: a piece under a free block remapped where a growth needs it --------- */

typedef struct {
    uint32_t block, g;
    uint64_t bytes;
} wh__src;

/* Is a piece of n bytes a better source for want bytes than one of best (0: none)? */
static bool wh__better(uint64_t n, uint64_t best, uint64_t want) {
    if (!best) return true;
    if (n >= want) return best < want || n < best; /* covering: the smallest */
    return best < want && n > best;                /* else: the largest */
}

/* The whole piece under a free block of index idx that best serves a fill of
 * want bytes into a hole of room bytes: the smallest of at least want, else the
 * largest that fits; of pieces of one size, the one under the smallest free
 * block (the least likely to serve a request as it is: cutting a large free
 * block costs the next request that it would have fitted a move).  The
 * blocks next to the hole are left alone (they are what the fill extends). */
static wh__src wh__move_source(const wh_pool *p, uint32_t hole, uint64_t want, uint64_t room, uint32_t idx) {
    const wh_block *d = wh_blocks_desc(p->core);
    const wh__vmm *v = &p->vmm;
    wh__src best = {WH_BLOCK_NONE, 0, 0};
    uint64_t best_block = 0; /* size of best's free block */
    for (uint32_t b = v->head, k = 0; b != WH_BLOCK_NONE && k < p->core->capacity; b = d[b].next, ++k) {
        if (!wh__free_in(p, &d[b], idx) || b == d[hole].prev || b == d[hole].next) continue;
        uint32_t a, e;
        wh__whole_pieces(p, &d[b], &a, &e);
        for (uint32_t g = a; g < e; g += v->plen[g]) {
            uint64_t n = (uint64_t)v->plen[g] * v->gran;
            bool tie = n == best.bytes && d[b].size < best_block;
            if (n <= room && (wh__better(n, best.bytes, want) || tie)) {
                best = (wh__src){b, g, n};
                best_block = d[b].size;
            }
        }
    }
    return best;
}

/* Move piece src, whole, to granule g of a hole; the caller sets the access
 * of the pieces moved side by side with one call.  From READY the piece is
 * unmapped first.  From lane idx, whose stream may still have work queued
 * that reads the piece's old address, it is mapped at g as well and its old
 * address retired: a USED block until an event recorded on that stream after
 * the move completes (wh__vmm_retire_poll).  Work queued later on the stream
 * reaches the memory only through g, so nothing waits.  False (nothing
 * changed but the piece given back to the driver, if it was unmapped) when
 * it cannot. */
static bool wh__move_piece(wh_pool *p, uint32_t g, wh__src src, uint32_t idx) {
    if (!wh__blocks_have_spares(p->core, 3)) return false; /* carve 2, wh__fill_done 1 */
    wh__vmm *v = &p->vmm;
    uint32_t n = (uint32_t)(src.bytes / v->gran);
    uint64_t h = 0;
    if (idx != WH__READY) {
        wh__retired *r = wh__room(v->retired, v->nretired, &v->retired_cap, sizeof *r);
        if (!r) return false;
        v->retired = r;
        uint32_t u = wh_blocks_carve(p->core, src.block, wh__addr(p, src.g), src.bytes);
        if (u == WH_BLOCK_NONE) return false;
        if (wh__map_handle(p, g, n, v->handle[src.g]) != WH_OK) {
            p->info[u] = (wh__info){0};
            wh_blocks_free(p->core, u, idx); /* back where it was, still mapped */
            return false;
        }
        p->info[u] = (wh__info){.state = WH__RETIRED};
        v->retired_bytes += src.bytes;
        r = &v->retired[v->nretired++];
        *r = (wh__retired){.block = u, .seq = v->retire_seq++};
        r->recorded = wh__event_record(p, &r->ev, p->slots[idx].stream) == WH_OK;
        p->st.moves++;
        return true;
    }
    wh__punch(p, src.block, src.g, src.g + n, &h);
    if (v->piece[src.g] != WH_BLOCK_NONE) return false; /* not carved */
    if (wh__map_handle(p, g, n, h) != WH_OK) {
        wh__drop(p, h, src.bytes); /* the source is a hole now */
        p->st.reserved = wh__reserved(p);
        return false;
    }
    p->st.moves++;
    return true;
}

/* Old address i of a moved piece: unmapped (the handle lives on where the
 * piece went) and a hole. */
static void wh__retire_end(wh_pool *p, uint32_t i) {
    wh__vmm *v = &p->vmm;
    wh__retired r = v->retired[i];
    const wh_block *d = wh_blocks_desc(p->core);
    uint64_t bytes;
    v->retired_bytes -= d[r.block].size;
    (void)wh__unmap_keep(p, wh__gran_of(p, d[r.block].addr), &bytes);
    wh__event_release(p, &r.ev);
    v->retired[i] = v->retired[--v->nretired];
    wh__hole_join(p, r.block);
}

void wh__vmm_retire_poll(wh_pool *p, uint64_t before) {
    for (uint32_t i = p->vmm.nretired; i-- > 0;) {
        wh__retired *r = &p->vmm.retired[i];
        if (r->seq < before || (r->recorded && wh__event_done(p, &r->ev))) wh__retire_end(p, i);
    }
}

/* Over the budget: back f by moving pieces from free blocks of index idx
 * (READY, or the requesting stream's lane: wh__move_piece) (at most
 * WH__MOVES of them) to f's side of its hole, side by side, with one
 * cuMemSetAccess over them all (~11 us a call besides ~23 us a piece;
 * requests that move pieces move ~2 on average), then allocate.
 * NONE if that did not do: what was moved stays, free, next to the block it
 * extends, and the growth maps the rest.  (The sources' holes never touch
 * f's hole: the blocks next to it are not sources.) */
static uint32_t wh__move_find(wh_pool *p, wh__fill f, uint64_t need, uint64_t size, uint64_t align, uint32_t slot,
                              uint32_t idx) {
    (void)need;
    if (f.hole == WH_BLOCK_NONE) return WH_BLOCK_NONE;
    const wh_block *d = wh_blocks_desc(p->core);
    uint64_t G = p->vmm.gran, hs = d[f.hole].size, done = 0;
    /* A hole between two free blocks (often where a piece was moved out)
     * is filled whole, from its low end.  (Mapping new pieces there instead
     * takes reserved past the budget, and the walk then releases pieces
     * elsewhere: most of the pieces mapped and released in the replay's
     * warm passes at 1 GiB.) */
    bool whole = f.side == 0;
    if (whole) f.side = -1;
    uint32_t lo = wh__gran_of(p, d[f.hole].addr), hi = lo + (uint32_t)(hs / G);
    for (int k = 0; k < WH__MOVES && done < f.bytes; ++k) {
        wh__src src = wh__move_source(p, f.hole, f.bytes - done, hs - done, idx);
        uint32_t n = (uint32_t)(src.bytes / G), done_g = (uint32_t)(done / G);
        if (src.block == WH_BLOCK_NONE || !wh__move_piece(p, f.side < 0 ? lo + done_g : hi - done_g - n, src, idx))
            break;
        done += src.bytes;
    }
    if (!done) return WH_BLOCK_NONE;
    uint32_t g0 = f.side < 0 ? lo : hi - (uint32_t)(done / G), g1 = g0 + (uint32_t)(done / G);
    if (wh__access(p, g0, g1 - g0) != WH_OK) { /* still a hole: the pieces go back */
        wh__unmap_run(p, g0, g1);
        p->st.reserved = wh__reserved(p);
        return WH_BLOCK_NONE;
    }
    if (whole && done == hs) f.side = 0;
    f.bytes = done;
    wh__fill_done(p, f, slot);
    return wh_blocks_alloc_aligned(p->core, size, align, slot);
}

/* Whether growth by fill f takes reserved past budget by no more than the
 * free bytes of slot's lane (config.footprint TIGHT; not READY, nor a stream
 * being captured into a graph, where an event recorded or a wait would be
 * part of the graph). */
static bool wh__own_covers(wh_pool *p, wh__fill f, uint64_t budget, uint32_t slot) {
    uint64_t reserved = wh__reserved(p), G = p->vmm.gran;
    if (f.hole == WH_BLOCK_NONE || reserved + f.bytes <= budget || p->cfg.footprint != WH_POOL_FOOTPRINT_TIGHT ||
        slot == WH__READY || slot >= wh__nlanes(p) || p->slots[slot].state != WH__SLOT_LIVE)
        return false;
    uint64_t past = reserved + f.bytes - budget;
    return wh_blocks_index(p->core, slot)->free_bytes >= (past > G ? past : G) &&
           !wh__stream_capturing(p, p->slots[slot].stream);
}

/* Grow for a request of size at alignment align on slot, then allocate it.
 * NONE if the budget or the cap (config.max_bytes) or the device says no. */
uint32_t wh__vmm_grow_find(wh_pool *p, uint64_t size, uint64_t align, uint32_t slot) {
    if (p->vmm.nretired) wh__vmm_retire_poll(p, 0);
    uint64_t need = size + wh__align_pad(p, align);
    uint64_t cap = p->cfg.max_bytes, G = p->vmm.gran;
    bool waited = false;
    for (int attempt = 0; attempt < 2; ++attempt) {
        wh__fill f = wh__choose(p, need, slot);
        p->vmm.big = size > p->vmm.big ? size : p->vmm.big;
        uint64_t budget = wh__move_budget(p, size), reserved = wh__reserved(p);
        if (cap && budget > cap) budget = cap;
        bool over = f.hole == WH_BLOCK_NONE || reserved + f.bytes > budget;
        if (attempt == 0 && over) {
            uint32_t b = wh__move_find(p, f, need, size, align, slot, WH__READY);
            if (b != WH_BLOCK_NONE) return b;
            f = wh__choose(p, need, slot); /* pieces that moved there filled part of f's hole */
            /* The requesting stream's own free blocks could keep the
             * growth within the budget: move their pieces without waiting
             * (wh__move_piece retires their old addresses); where that
             * leaves it past the budget and they still could, wait for the
             * stream's queued work, so that they merge into READY, and look
             * again, once.  Other streams' work is not waited for: a long
             * kernel there would hold this request. */
            if (wh__own_covers(p, f, budget, slot)) {
                if ((b = wh__move_find(p, f, need, size, align, slot, slot)) != WH_BLOCK_NONE) return b;
                f = wh__choose(p, need, slot);
                if (!waited && wh__own_covers(p, f, budget, slot)) {
                    waited = true;
                    if (wh__lane_settle(p, slot)) {
                        p->st.waits++;
                        attempt = -1; /* attempt 0 again, the lane's blocks READY */
                        continue;
                    }
                }
            }
            reserved = wh__reserved(p); /* f is chosen after the last move */
            over = f.hole == WH_BLOCK_NONE || reserved + f.bytes > budget;
        }
        /* Unmap free pieces first, at most once per nused + 256 frees unless
         * the cap, the range or the hard budget (budget + 1/4) forces it:
         * the walk is O(blocks), and pieces unmapped while the working set
         * hovers near its peak are mapped again soon (each a cuMemCreate +
         * cuMemMap). */
        bool may_walk = p->st.frees - p->vmm.walk_frees >= (uint64_t)p->core->nused + 256 || f.hole == WH_BLOCK_NONE ||
                        (cap && reserved + f.bytes > cap) || reserved + f.bytes > wh__hard_budget(budget);
        if (attempt == 0 && over && may_walk) {
            uint64_t want = f.hole == WH_BLOCK_NONE ? 0 : budget - (f.bytes < budget ? f.bytes : budget);
            /* wait for the streams only where growing is impossible otherwise */
            bool must = f.hole == WH_BLOCK_NONE || (cap && reserved + f.bytes > cap);
            wh__vmm_release(p, want, must);
            continue;
        }
        if (f.hole == WH_BLOCK_NONE || (cap && reserved + f.bytes > cap)) return WH_BLOCK_NONE;
        /* Room left in the budget buys a little more, so that a growing
         * working set takes O(log) growths instead of one per request. */
        uint64_t hs = wh_blocks_desc(p->core)[f.hole].size, extra = reserved >> WH__GROW_SHIFT;
        uint64_t grow_to = wh__budget(p, size, p->cfg.vmm_slack_pm);
        grow_to = cap && grow_to > cap ? cap : grow_to;
        uint64_t room = grow_to > reserved + f.bytes ? grow_to - reserved - f.bytes : 0;
        if (f.side != 0) {
            extra = extra < room ? extra : room;
            extra = extra < hs - f.bytes ? extra : hs - f.bytes;
            f.bytes += extra / G * G;
        }
        if (!wh__do_fill(p, f, slot)) return WH_BLOCK_NONE;
        return wh_blocks_alloc_aligned(p->core, size, align, slot); /* align <= granule: plain alloc */
    }
    return WH_BLOCK_NONE;
}

/* ---- create, destroy, check -------------------------------------------------------- */

#if WH_HAVE_CUDA
/* The pool's device first, then every device that can access its memory
 * (peer to peer), up to WH__VMM_READERS. */
static wh_status wh__vmm_readers(wh__vmm *v) {
    int count = 0;
    WH_CUDA_TRY(cudaGetDeviceCount(&count));
    v->readers[0] = v->device;
    v->nreaders = 1;
    for (int d = 0; d < count && v->nreaders < WH__VMM_READERS; ++d) {
        int can = 0;
        if (d == v->device) continue;
        WH_CUDA_TRY(cudaDeviceCanAccessPeer(&can, d, v->device));
        if (can) v->readers[v->nreaders++] = d;
    }
    return WH_OK;
}
#endif

wh_status wh__vmm_create(wh_pool *p) {
    wh__vmm *v = &p->vmm;
    uint64_t gran = WH__CPU_GRAN, range = p->cfg.vmm_range;
    uint64_t a = p->cfg.alignment;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        pthread_once(&wh__drv_once, wh__drv_load);
        if (!wh__drv.ok) return wh__fail(WH_ERR_UNSUPPORTED, "pool: the driver has no virtual-memory entry points");
        WH_CUDA_TRY(cudaGetDevice(&v->device));
        wh_status st = wh__vmm_readers(v);
        if (st != WH_OK) return st;
        CUmemAllocationProp prop = wh__prop(v->device);
        size_t g = 0;
        if (wh__drv.gran(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || g == 0 || (g & (g - 1)))
            return wh__fail(WH_ERR_UNSUPPORTED, "pool: no virtual-memory granularity for device %d", v->device);
        gran = g;
        if (!range) {
            size_t free_b = 0, total = 0;
            WH_CUDA_TRY(cudaMemGetInfo(&free_b, &total));
            range = p->cfg.max_bytes ? 2 * (uint64_t)p->cfg.max_bytes : 2 * (uint64_t)total;
        }
    }
#endif
    if (p->cfg.backend == WH_POOL_CPU && p->cfg.vmm_granule) {
        gran = p->cfg.vmm_granule;
        if ((gran & (gran - 1)) || gran < 4096)
            return wh__fail(WH_ERR_INVALID_ARGUMENT, "pool: vmm_granule %zu is not a power of two >= 4 KiB",
                            p->cfg.vmm_granule);
    }
    if (!range) range = p->cfg.max_bytes ? 2 * (uint64_t)p->cfg.max_bytes : WH__CPU_RANGE;
    gran = gran > a ? gran : a;
    range = (range + gran - 1) / gran * gran;
    if (range / gran >= WH_BLOCK_NONE) return wh__fail(WH_ERR_TOO_LARGE, "pool: address range too large");
    v->gran = gran;
    v->size = range;
    v->ngran = (uint32_t)(range / gran);
    v->piece = malloc(v->ngran * sizeof *v->piece);
    v->plen = calloc(v->ngran, sizeof *v->plen);
    v->handle = calloc(v->ngran, sizeof *v->handle);
    if (!v->piece || !v->plen || !v->handle) return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: no host memory for the map");
    for (uint32_t g = 0; g < v->ngran; ++g) v->piece[g] = WH_BLOCK_NONE;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        CUdeviceptr base = 0;
        CUresult r = wh__fault() ? CUDA_ERROR_OUT_OF_MEMORY : wh__drv.reserve(&base, range, gran, 0, 0);
        if (r != CUDA_SUCCESS)
            return wh__fail(WH_ERR_UNSUPPORTED, "pool: cuMemAddressReserve of %llu B: CUresult %d",
                            (unsigned long long)range, (int)r);
        v->base = (uint64_t)base;
    } else
#endif
    {
        void *m = wh__fault() ? MAP_FAILED
                              : mmap(NULL, range + gran, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: cannot reserve %llu B of address space",
                            (unsigned long long)range);
        v->raw = m;
        v->base = ((uint64_t)(uintptr_t)m + gran - 1) & ~(gran - 1);
    }
    v->head = wh_blocks_add_arena(p->core, v->base, range, WH__READY);
    uint32_t h = v->head == WH_BLOCK_NONE ? v->head : wh_blocks_carve(p->core, v->head, v->base, range);
    if (h == WH_BLOCK_NONE) {
        if (v->head != WH_BLOCK_NONE) wh_blocks_remove_arena(p->core, v->head);
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: no block descriptors for the range");
    }
    p->info[h] = (wh__info){.state = WH__HOLE};
    v->hole_bytes = range;
    return WH_OK;
}

/* Everything goes back: every piece, then the range.  (The pool's destroy
 * has ended the retired addresses: each handle is released once.) */
void wh__vmm_destroy(wh_pool *p) {
    wh__vmm *v = &p->vmm;
    free(v->retired);
    for (uint32_t g = 0; v->piece && g < v->ngran; ++g)
        if (v->piece[g] == g) wh__unmap_piece(p, g);
#if WH_HAVE_CUDA
    if (wh__is_cuda(p) && v->base) (void)wh__drv.addr_free((CUdeviceptr)v->base, v->size);
#endif
    if (v->raw) munmap(v->raw, v->size + v->gran);
    free(v->piece);
    free(v->plen);
    free(v->handle);
    *v = (wh__vmm){0};
}

/* The mapping against the blocks: holes unbacked, every other byte backed,
 * pieces well formed, hole bytes summed. */
wh_status wh__vmm_check(wh_pool *p) {
    const wh__vmm *v = &p->vmm;
    const wh_block *d = wh_blocks_desc(p->core);
    uint64_t holes = 0, nret = 0;
    for (uint32_t g = 0; g < v->ngran; ++g) {
        uint32_t s = v->piece[g];
        if (s != WH_BLOCK_NONE && (s > g || s + v->plen[s] <= g || v->piece[s] != s))
            return wh__fail(WH_ERR_CORRUPT, "pool: granule %u has a bad piece %u", g, s);
    }
    for (uint32_t b = v->head, k = 0; b != WH_BLOCK_NONE && k < p->core->capacity; b = d[b].next, ++k) {
        bool hole = wh__is_hole(p, b);
        if (hole && d[b].state != WH_BLOCK_USED)
            return wh__fail(WH_ERR_CORRUPT, "pool: hole %u is not a used block", b);
        if (hole && ((d[b].addr - v->base) % v->gran || d[b].size % v->gran))
            return wh__fail(WH_ERR_CORRUPT, "pool: hole %u is not granule-aligned", b);
        holes += hole ? d[b].size : 0;
        nret += p->info[b].state == WH__RETIRED;
        uint32_t g0 = wh__gran_of(p, d[b].addr), g1 = wh__gran_of(p, d[b].addr + d[b].size - 1);
        for (uint32_t g = g0; g <= g1; ++g)
            if ((v->piece[g] == WH_BLOCK_NONE) != hole)
                return wh__fail(WH_ERR_CORRUPT, "pool: block %u (%s) at granule %u is %s", b, hole ? "hole" : "backed",
                                g, hole ? "mapped" : "not mapped");
    }
    if (holes != v->hole_bytes)
        return wh__fail(WH_ERR_CORRUPT, "pool: holes sum to %llu B, recorded %llu B", (unsigned long long)holes,
                        (unsigned long long)v->hole_bytes);
    uint64_t retired = 0;
    if (nret != v->nretired)
        return wh__fail(WH_ERR_CORRUPT, "pool: %llu retired blocks, %u listed", (unsigned long long)nret, v->nretired);
    for (uint32_t i = 0; i < v->nretired; ++i) {
        uint32_t b = v->retired[i].block;
        if (b >= p->core->capacity || p->info[b].state != WH__RETIRED)
            return wh__fail(WH_ERR_CORRUPT, "pool: retired entry %u names block %u, not a retired block", i, b);
        retired += d[b].size;
    }
    if (retired != v->retired_bytes)
        return wh__fail(WH_ERR_CORRUPT, "pool: retired addresses sum to %llu B, recorded %llu B",
                        (unsigned long long)retired, (unsigned long long)v->retired_bytes);
    return WH_OK;
}
