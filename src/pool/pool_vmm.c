/* Host pool growth with the driver's virtual-memory calls (issue 6, part 2:
 * "grown as one contiguous range with the driver's virtual-memory calls").
 * Not from a seed: Futhark's free list and the seed heap both get whole
 * buffers; this is the mapping side of the block core of
 * gpu-executed-heap.txt ("Heap": one region, blocks split and merged).
 *
 * One address range is reserved at create and given to the block core as
 * its only arena, so blocks merge across everything ever grown.  Parts with
 * no physical memory are USED blocks the pool marks WH__HOLE; growing fills
 * part of a hole (cuMemCreate + cuMemMap + cuMemSetAccess) next to the free
 * block that is short of the request, so reserved follows the request, not
 * a fixed arena step.  When growing would take reserved above the budget
 * (the peak in use plus 1/10), whole mapped pieces inside free READY blocks
 * are unmapped first and become holes again: reserved tracks live memory.
 * Only READY blocks: a stream's own free blocks may still be read by work
 * queued on it, so the walk first waits for the streams (wh__reclaim).
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

#if WH_HAVE_CUDA
#include <cuda.h>
#include "warpheap/cuda_check.h"
#endif

#define WH__CPU_GRAN (64ull << 10)       /* CPU granule: small, so tests see many pieces */
#define WH__CPU_RANGE (4ull << 30)
#define WH__PIECE_MAX (64ull << 20)      /* largest piece mapped by one cuMemCreate       */
#define WH__GROW_SHIFT 4                 /* extra growth: reserved / 16, within the budget */
#define WH__HARD_SHIFT 2                 /* walk regardless past budget + budget / 4       */

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

/* Unmap the piece that starts at granule g. */
static void wh__unmap_piece(wh_pool *p, uint32_t g) {
    wh__vmm *v = &p->vmm;
    uint32_t n = v->plen[g];
    uint64_t bytes = (uint64_t)n * v->gran;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        /* nothing can be done on failure: the address stays unusable, no block refers to it */
        (void)wh__drv.unmap((CUdeviceptr)wh__addr(p, g), bytes);
        (void)wh__drv.release((CUmemGenericAllocationHandle)v->handle[g]);
    } else
#endif
    {
        void *a = (void *)(uintptr_t)wh__addr(p, g);
        (void)madvise(a, bytes, MADV_DONTNEED);
        (void)mprotect(a, bytes, PROT_NONE);
    }
    for (uint32_t k = 0; k < n; ++k) v->piece[g + k] = WH_BLOCK_NONE;
    v->plen[g] = 0;
    v->handle[g] = 0;
    p->st.arena_frees++;
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
            CUresult r = wh__drv.create(&h, bytes, &prop, 0);
            if (r == CUDA_SUCCESS) {
                r = wh__drv.map((CUdeviceptr)wh__addr(p, g), bytes, 0, h, 0);
                if (r != CUDA_SUCCESS) (void)wh__drv.release(h);
            }
            if (r != CUDA_SUCCESS) {
                st = r == CUDA_ERROR_OUT_OF_MEMORY ? WH_ERR_OUT_OF_MEMORY
                                                   : wh__fail(WH_ERR_CUDA, "pool: cuMemCreate/cuMemMap of %llu B: "
                                                              "CUresult %d", (unsigned long long)bytes, (int)r);
                break;
            }
            v->handle[g] = (uint64_t)h;
        } else
#endif
        if (mprotect((void *)(uintptr_t)wh__addr(p, g), bytes, PROT_READ | PROT_WRITE)) {
            st = WH_ERR_OUT_OF_MEMORY;
            break;
        }
        for (uint32_t k = 0; k < len; ++k) v->piece[g + k] = g;
        v->plen[g] = len;
        p->st.arena_allocs++;
        g += len;
    }
#if WH_HAVE_CUDA
    if (st == WH_OK && wh__is_cuda(p)) {            /* one access call for the whole growth */
        CUmemAccessDesc acc;
        memset(&acc, 0, sizeof acc);
        acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        acc.location.id = v->device;
        acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CUresult r = wh__drv.access((CUdeviceptr)wh__addr(p, g0), (uint64_t)n * v->gran, &acc, 1);
        if (r != CUDA_SUCCESS)
            st = wh__fail(WH_ERR_CUDA, "pool: cuMemSetAccess: CUresult %d", (int)r);
    }
#endif
    if (st != WH_OK)                                /* give back the pieces [g0, g) mapped here */
        for (uint32_t k = g0, len; k < g; k += len) {
            len = v->plen[k];
            wh__unmap_piece(p, k);
        }
    return st;
}

/* ---- holes: found through the arena's chain (a walk per growth or release) ---- */

static bool wh__is_hole(const wh_pool *p, uint32_t b) {
    return b != WH_BLOCK_NONE && p->info[b].state == WH__HOLE;
}

static uint32_t wh__gran_of(const wh_pool *p, uint64_t addr) { return (uint32_t)((addr - p->vmm.base) / p->vmm.gran); }

/* Turn [a, a + n granules) of free READY block f, all whole pieces, into a
 * hole, joined with holes next to it.  Returns the block after it. */
static uint32_t wh__punch(wh_pool *p, uint32_t f, uint32_t a, uint32_t e) {
    uint32_t u = wh_blocks_carve(p->core, f, wh__addr(p, a), (uint64_t)(e - a) * p->vmm.gran);
    if (u == WH_BLOCK_NONE) return wh_blocks_desc(p->core)[f].next;
    for (uint32_t g = a, n; g < e; g += n) {
        n = p->vmm.plen[g];
        wh__unmap_piece(p, g);
    }
    p->vmm.hole_bytes += (uint64_t)(e - a) * p->vmm.gran;
    p->info[u] = (wh__info){.state = WH__HOLE};
    const wh_block *d = wh_blocks_desc(p->core);
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
    return d[u].next;
}

/* Unmap whole pieces under free READY blocks until reserved <= target (all
 * it can when target is 0).  wait: first wait for the streams' work queued
 * before their frees, so that those blocks become READY too; without it only
 * the blocks whose work is already done count (the footprint budget is soft:
 * holding a host thread for a stream's kernels to keep reserved within it
 * is not worth it -- test_pool_gpu saw a growth wait 0.1 s for another
 * stream's kernel). */
void wh__vmm_release(wh_pool *p, uint64_t target, bool wait) {
    wh__vmm *v = &p->vmm;
    wh__pending_poll(p, wait);
    wh__reclaim(p, wait);
    v->walk_frees = p->st.frees;
    const wh_block *d = wh_blocks_desc(p->core);
    uint32_t b = v->head;
    for (uint32_t k = 0; b != WH_BLOCK_NONE && k < p->core->capacity && wh__reserved(p) > target; ++k) {
        if (d[b].state != WH_BLOCK_FREE || d[b].index != WH__READY || d[b].size < v->gran) {
            b = d[b].next;
            continue;
        }
        uint64_t lo = d[b].addr, hi = lo + d[b].size;
        uint32_t a = wh__gran_of(p, lo + v->gran - 1), e = wh__gran_of(p, hi);
        if (a < e && v->piece[a] != a) a = v->piece[a] + v->plen[v->piece[a]];   /* first whole piece */
        if (a < e && v->piece[e - 1] + v->plen[v->piece[e - 1]] > e) e = v->piece[e - 1];   /* last */
        b = a < e ? wh__punch(p, b, a, e) : d[b].next;
    }
}

/* ---- growth ---------------------------------------------------------------------- */

/* Reserved bytes growth may reach: the peak in use (this request counted)
 * plus 1/10 of it, at least one granule.  (On RMM's random_allocations run
 * on the CPU backend with the GPU's 2 MiB granule, 1/12 gave the same peaks
 * for sizes up to 64 MiB but unmapped and mapped again ~40x as often.) */
static uint64_t wh__budget(const wh_pool *p, uint64_t size) {
    uint64_t peak = p->st.in_use + size;
    peak = peak > p->st.in_use_peak ? peak : p->st.in_use_peak;
    uint64_t slack = peak / 10;
    return peak + (slack > p->vmm.gran ? slack : p->vmm.gran);
}

/* The walk's gate (below) lets reserved pass the budget for a while; past
 * this it walks anyway, so that reserved stays near 1.1 x 1.25 of the peak
 * in use however long the run.  Without it, random_allocations with blocks
 * up to 1 GiB drifted with the run's length (1.36 / 1.44 / 1.46 for N =
 * 1e3 / 1e4 / 1e5; with it 1.36 / 1.375 / 1.375, CPU replay).  A lower
 * ceiling maps more again: at N = 1e5, 1.32 mapped ~10 MiB per operation
 * and 1.155 ~32 MiB, which at the H100's cost (~2 us per MiB plus ~20 us
 * per piece, fitted to its VMM timings) is ~25 and ~74 us an operation
 * where cudaMallocAsync takes ~120: the 5x goal would be lost. */
static uint64_t wh__hard_budget(uint64_t budget) { return budget + (budget >> WH__HARD_SHIFT); }

typedef struct { uint32_t hole; uint64_t bytes; int side; } wh__fill;   /* side: -1 low end, 1 high end, 0 all */

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
            if (c[i].bytes && c[i].bytes <= hs && (best.hole == WH_BLOCK_NONE || c[i].bytes < best.bytes))
                best = c[i];
    }
    return best;
}

/* Map f.bytes of its hole and free them into slot (merging). */
static bool wh__do_fill(wh_pool *p, wh__fill f, uint32_t slot) {
    const wh_block *d = wh_blocks_desc(p->core);
    uint32_t h = f.hole;
    uint64_t hs = d[h].size, a = f.side > 0 ? d[h].addr + hs - f.bytes : d[h].addr;
    uint32_t g0 = wh__gran_of(p, a), n = (uint32_t)(f.bytes / p->vmm.gran);
    if (!wh__blocks_have_spares(p->core, 1)) return false;
    if (wh__map(p, g0, n) != WH_OK) return false;
    uint32_t filled = h;
    if (f.bytes < hs) {
        uint32_t r = wh_blocks_split_used(p->core, h, f.side > 0 ? hs - f.bytes : f.bytes);
        if (f.side > 0) filled = r;
        else p->info[r] = (wh__info){.state = WH__HOLE};
    }
    p->info[filled] = (wh__info){0};
    p->vmm.hole_bytes -= f.bytes;
    wh_blocks_free(p->core, filled, slot);
    uint64_t r = wh__reserved(p);
    p->st.reserved = r;
    if (r > p->st.reserved_peak) p->st.reserved_peak = r;
    return true;
}

/* Grow for a request of size at alignment align on slot, then allocate it.
 * NONE if the budget or the cap (config.max_bytes) or the device says no. */
uint32_t wh__vmm_grow_find(wh_pool *p, uint64_t size, uint64_t align, uint32_t slot) {
    uint64_t need = size + wh__align_pad(p, align);
    uint64_t cap = p->cfg.max_bytes, G = p->vmm.gran;
    for (int attempt = 0; attempt < 2; ++attempt) {
        wh__fill f = wh__choose(p, need, slot);
        uint64_t budget = wh__budget(p, size), reserved = wh__reserved(p);
        if (cap && budget > cap) budget = cap;
        bool over = f.hole == WH_BLOCK_NONE || reserved + f.bytes > budget;
        /* Unmap free pieces first, at most once per nused + 256 frees unless
         * the cap, the range or the hard budget (budget + 1/4) forces it:
         * the walk is O(blocks), and pieces unmapped while the working set
         * hovers near its peak are mapped again soon (each a cuMemCreate +
         * cuMemMap). */
        bool may_walk = p->st.frees - p->vmm.walk_frees >= (uint64_t)p->core->nused + 256 ||
                        f.hole == WH_BLOCK_NONE || (cap && reserved + f.bytes > cap) ||
                        reserved + f.bytes > wh__hard_budget(budget);
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
        uint64_t room = budget > reserved + f.bytes ? budget - reserved - f.bytes : 0;
        if (f.side != 0) {
            extra = extra < room ? extra : room;
            extra = extra < hs - f.bytes ? extra : hs - f.bytes;
            f.bytes += extra / G * G;
        }
        if (!wh__do_fill(p, f, slot)) return WH_BLOCK_NONE;
        return wh_blocks_alloc_aligned(p->core, size, align, slot);   /* align <= granule: plain alloc */
    }
    return WH_BLOCK_NONE;
}

/* ---- create, destroy, check -------------------------------------------------------- */

wh_status wh__vmm_create(wh_pool *p) {
    wh__vmm *v = &p->vmm;
    uint64_t gran = WH__CPU_GRAN, range = p->cfg.vmm_range;
    uint64_t a = p->cfg.alignment;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        pthread_once(&wh__drv_once, wh__drv_load);
        if (!wh__drv.ok) return wh__fail(WH_ERR_UNSUPPORTED, "pool: the driver has no virtual-memory entry points");
        WH_CUDA_TRY(cudaGetDevice(&v->device));
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
        CUresult r = wh__drv.reserve(&base, range, gran, 0, 0);
        if (r != CUDA_SUCCESS) return wh__fail(WH_ERR_UNSUPPORTED, "pool: cuMemAddressReserve of %llu B: CUresult %d",
                                               (unsigned long long)range, (int)r);
        v->base = (uint64_t)base;
    } else
#endif
    {
        void *m = mmap(NULL, range + gran, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: cannot reserve %llu B of address space",
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

/* Everything goes back: every piece, then the range. */
void wh__vmm_destroy(wh_pool *p) {
    wh__vmm *v = &p->vmm;
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
    uint64_t holes = 0;
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
        uint32_t g0 = wh__gran_of(p, d[b].addr), g1 = wh__gran_of(p, d[b].addr + d[b].size - 1);
        for (uint32_t g = g0; g <= g1; ++g)
            if ((v->piece[g] == WH_BLOCK_NONE) != hole)
                return wh__fail(WH_ERR_CORRUPT, "pool: block %u (%s) at granule %u is %s", b, hole ? "hole" : "backed",
                                g, hole ? "mapped" : "not mapped");
    }
    if (holes != v->hole_bytes)
        return wh__fail(WH_ERR_CORRUPT, "pool: holes sum to %llu B, recorded %llu B", (unsigned long long)holes,
                        (unsigned long long)v->hole_bytes);
    return WH_OK;
}
