/* SPDX-License-Identifier: MIT */
/* Device heap benchmarks: every kind against CUDA's device malloc (its heap
 * limit raised to the same size) and BUMP (the speed limit), in one binary and
 * one run.  Workloads (register-efficient-gpu-allocators.txt sections 6-7,
 * Table 2, scaled to the GPU: blocks = 8 x #SM, 256 threads; DynaSOAr 6.4):
 *   ad      Alloc-Dealloc, one allocating thread per warp and every thread
 *   acd     Alloc-Cycle-Dealloc, 10 and 100 cycles
 *   prob    Probability (pAlloc = pFree = 0.75, 10 launches)
 *   linux   Linux scalability: 16384 threads, n 64-B objects each, allocate
 *           kernel then free kernel, time / n
 *   one     one allocation per thread, 1M threads (the performance goals)
 *   onewarm the same after a small kernel (4 warps per SM, one object per
 *           thread, untimed) has started every way's first segment: what
 *           the cold start of a class costs is one minus the other
 *   fill90  fill 90% of a 9.4 GB heap with one size: allocations / s
 *   util    heap utilisation at the first failed allocation (64 B; mixed),
 *           and for the mixed sizes where the rest of the heap is then
 *           (class rounding, tails, free) and what later rounds still get
 *   regs    registers and local memory of a kernel with one allocation and
 *           one free (Table 1), the allocation alone, the free alone; per
 *           kind (wh_malloc_as) and for wh_malloc (any kind)
 *   rounds  DEFAULT: fill 90% of a 10 GB heap, free all, --rounds times
 *           (steady.cu)
 *   churn   DEFAULT: --churn-rounds rounds of random frees and allocations,
 *           with fragmentation after each (steady.cu)
 * --tests=one,fill90,util,paper,regs,rounds,churn (paper: ad, acd, prob, linux) and
 * --kinds=bump,default,... run only those; --quick: no 100-cycle ACD;
 * --ways=N: slab and default heaps with N ways per class (0: by heap size);
 * --one-sizes=16,32,...: the sizes of one and onewarm (default 16,256,4096).
 * After the last timed round of `one`, the heap walk checks the live
 * allocations (and none after the free kernel): rows "walk" in the CSV.
 * Times are CUDA events, median of 5 after a warm-up (3 for CUDA's malloc,
 * whose runs take seconds).  Writes heap_bench.csv and heap_bench.md into
 * --out=DIR, each with GPU, driver, CUDA version, date and --commit. */
#include "steady.h"
#include "warpheap/heap.h"
#include "warpheap/cuda_check.h"
#include "wh_cli.h"

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned long long ull;

/* ---- allocators: one set of kernels each, the kind fixed at compile time so
 * that each kernel holds only its own kind's code (fair register counts) ---- */
#define WH_BENCH_ALLOCATOR(NAME, ALLOC, FREE)                                                                          \
    static __device__ __forceinline__ void *NAME##_alloc(const wh_heap *h, size_t n) { ALLOC; }                        \
    static __device__ __forceinline__ void NAME##_free(const wh_heap *h, void *p) { FREE; }                            \
    static __global__ void NAME##_ad(wh_heap h, size_t size, int per_warp, uint32_t threads, ull *fails) {             \
        uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (t >= threads || (per_warp && wh_lane_id() != 0)) return;                                                   \
        void *p = NAME##_alloc(&h, size);                                                                              \
        if (!p) {                                                                                                      \
            atomicAdd(fails, 1ull);                                                                                    \
            return;                                                                                                    \
        }                                                                                                              \
        *(volatile char *)p = 1;                                                                                       \
        NAME##_free(&h, p);                                                                                            \
    }                                                                                                                  \
    static __global__ void NAME##_acd(wh_heap h, size_t size, int iters, int per_warp, uint32_t threads, ull *fails) { \
        uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (t >= threads || (per_warp && wh_lane_id() != 0)) return;                                                   \
        void *ps[100];                                                                                                 \
        for (int i = 0; i < iters; ++i) {                                                                              \
            ps[i] = NAME##_alloc(&h, size);                                                                            \
            if (!ps[i])                                                                                                \
                atomicAdd(fails, 1ull);                                                                                \
            else                                                                                                       \
                *(volatile char *)ps[i] = 1;                                                                           \
        }                                                                                                              \
        for (int i = 0; i < iters; ++i)                                                                                \
            if (ps[i]) NAME##_free(&h, ps[i]);                                                                         \
    }                                                                                                                  \
    static __global__ void NAME##_prob(wh_heap h, size_t size, void **slots, uint64_t seed, uint32_t threads,          \
                                       ull *fails) {                                                                   \
        uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (t >= threads || wh_lane_id() != 0) return;                                                                 \
        uint32_t w = t / 32u;                                                                                          \
        bool go = wh_hash64(seed * 0x100000001ull + t) % 4u != 0u; /* p = 0.75 */                                      \
        if (!go) return;                                                                                               \
        if (!slots[w]) {                                                                                               \
            slots[w] = NAME##_alloc(&h, size);                                                                         \
            if (!slots[w]) atomicAdd(fails, 1ull);                                                                     \
        } else {                                                                                                       \
            NAME##_free(&h, slots[w]);                                                                                 \
            slots[w] = NULL;                                                                                           \
        }                                                                                                              \
    }                                                                                                                  \
    /* thread t < count allocates n objects (pointers kept when ptrs != NULL) */                                       \
    static __global__ void NAME##_many(wh_heap h, size_t size, uint32_t n, uint64_t count, void **ptrs, ull *fails) {  \
        uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;                                                  \
        if (t >= count) return;                                                                                        \
        for (uint32_t k = 0; k < n; ++k) {                                                                             \
            void *p = NAME##_alloc(&h, size);                                                                          \
            if (!p) atomicAdd(fails, 1ull);                                                                            \
            if (ptrs) ptrs[t * n + k] = p;                                                                             \
        }                                                                                                              \
    }                                                                                                                  \
    static __global__ void NAME##_freemany(wh_heap h, uint32_t n, uint64_t count, void **ptrs) {                       \
        uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;                                                  \
        if (t >= count) return;                                                                                        \
        for (uint32_t k = 0; k < n; ++k)                                                                               \
            if (ptrs[t * n + k]) NAME##_free(&h, ptrs[t * n + k]);                                                     \
    }                                                                                                                  \
    /* one round of the utilisation test: size 0 = mixed 16 B .. 4 KiB */                                              \
    static __global__ void NAME##_util(wh_heap h, uint32_t count, uint64_t seed, uint32_t size, ull *ok_bytes,         \
                                       ull *fails) {                                                                   \
        uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (t >= count) return;                                                                                        \
        uint32_t n = size ? size : 16u + (uint32_t)(wh_hash64(seed + t) % 4081u);                                      \
        void *p = NAME##_alloc(&h, n);                                                                                 \
        if (p)                                                                                                         \
            atomicAdd(ok_bytes, (ull)n);                                                                               \
        else                                                                                                           \
            atomicAdd(fails, 1ull);                                                                                    \
    }                                                                                                                  \
    static __global__ void NAME##_reg(wh_heap h, size_t n, void **out) {                                               \
        void *p = NAME##_alloc(&h, n);                                                                                 \
        out[threadIdx.x] = p;                                                                                          \
        NAME##_free(&h, p);                                                                                            \
    }                                                                                                                  \
    static __global__ void NAME##_rega(wh_heap h, size_t n, void **out) { out[threadIdx.x] = NAME##_alloc(&h, n); }    \
    static __global__ void NAME##_regf(wh_heap h, size_t n, void **out) {                                              \
        (void)n;                                                                                                       \
        NAME##_free(&h, out[threadIdx.x]);                                                                             \
    }

/* the kind as a constant: no copy of the heap with its kind set (a copy whose
 * arrays the slab path indexes lives in local memory, 688 bytes a thread) */
#define WH_KIND_ALLOC(KIND) \
    { return wh_malloc_as(h, KIND, n); }
#define WH_KIND_FREE(KIND) \
    { wh_free_as(h, KIND, p); }

WH_BENCH_ALLOCATOR(
    cuda,
    {
        (void)h;
        return malloc(n);
    },
    {
        (void)h;
        free(p);
    })
WH_BENCH_ALLOCATOR(bump, WH_KIND_ALLOC(WH_HEAP_BUMP), WH_KIND_FREE(WH_HEAP_BUMP))
WH_BENCH_ALLOCATOR(dflt, WH_KIND_ALLOC(WH_HEAP_DEFAULT), WH_KIND_FREE(WH_HEAP_DEFAULT))
WH_BENCH_ALLOCATOR(slab, WH_KIND_ALLOC(WH_HEAP_SLAB), WH_KIND_FREE(WH_HEAP_SLAB))
WH_BENCH_ALLOCATOR(circ, WH_KIND_ALLOC(WH_HEAP_CIRCULAR), WH_KIND_FREE(WH_HEAP_CIRCULAR))
WH_BENCH_ALLOCATOR(cmul, WH_KIND_ALLOC(WH_HEAP_CIRCULAR_MULTI), WH_KIND_FREE(WH_HEAP_CIRCULAR_MULTI))
WH_BENCH_ALLOCATOR(cfus, WH_KIND_ALLOC(WH_HEAP_CIRCULAR_FUSED), WH_KIND_FREE(WH_HEAP_CIRCULAR_FUSED))
WH_BENCH_ALLOCATOR(cfmu, WH_KIND_ALLOC(WH_HEAP_CIRCULAR_FUSED_MULTI), WH_KIND_FREE(WH_HEAP_CIRCULAR_FUSED_MULTI))

/* wh_malloc and wh_free, the kind read from the heap at run time: every
 * kind's code in one kernel */
static __global__ void any_reg(wh_heap h, size_t n, void **out) {
    void *p = wh_malloc(&h, n);
    out[threadIdx.x] = p;
    wh_free(&h, p);
}
static __global__ void any_rega(wh_heap h, size_t n, void **out) { out[threadIdx.x] = wh_malloc(&h, n); }
static __global__ void any_regf(wh_heap h, size_t n, void **out) {
    (void)n;
    wh_free(&h, out[threadIdx.x]);
}

typedef struct allocator {
    const char *name;
    int kind; /* -1: CUDA's malloc */
    void (*ad)(wh_heap, size_t, int, uint32_t, ull *);
    void (*acd)(wh_heap, size_t, int, int, uint32_t, ull *);
    void (*prob)(wh_heap, size_t, void **, uint64_t, uint32_t, ull *);
    void (*many)(wh_heap, size_t, uint32_t, uint64_t, void **, ull *);
    void (*freemany)(wh_heap, uint32_t, uint64_t, void **);
    void (*util)(wh_heap, uint32_t, uint64_t, uint32_t, ull *, ull *);
    void (*reg)(wh_heap, size_t, void **);  /* one allocation and one free */
    void (*rega)(wh_heap, size_t, void **); /* the allocation alone */
    void (*regf)(wh_heap, size_t, void **); /* the free alone */
} allocator;

#define WH_ALLOCATOR_ROW(NAME, LABEL, KIND)                                                                     \
    {                                                                                                           \
        LABEL, KIND, NAME##_ad, NAME##_acd, NAME##_prob, NAME##_many, NAME##_freemany, NAME##_util, NAME##_reg, \
            NAME##_rega, NAME##_regf                                                                            \
    }
static const allocator allocators[] = {
    WH_ALLOCATOR_ROW(bump, "bump", WH_HEAP_BUMP),
    WH_ALLOCATOR_ROW(dflt, "default", WH_HEAP_DEFAULT),
    WH_ALLOCATOR_ROW(slab, "slab", WH_HEAP_SLAB),
    WH_ALLOCATOR_ROW(circ, "circular", WH_HEAP_CIRCULAR),
    WH_ALLOCATOR_ROW(cmul, "circular_multi", WH_HEAP_CIRCULAR_MULTI),
    WH_ALLOCATOR_ROW(cfus, "circular_fused", WH_HEAP_CIRCULAR_FUSED),
    WH_ALLOCATOR_ROW(cfmu, "circular_fused_multi", WH_HEAP_CIRCULAR_FUSED_MULTI),
    WH_ALLOCATOR_ROW(cuda, "cuda-malloc", -1), /* last: its runs take seconds */
};
#define NALLOC (sizeof allocators / sizeof *allocators)

/* ---- run state, output ---------------------------------------------------- */
static FILE *csv, *md;
static int sms_count;
static ull *d_fails, *d_bytes;
static wh_heap cur; /* heap of the allocator being measured */
static const allocator *cur_a;
static uint64_t cur_bytes;

static void row(const char *test, const char *mode, uint64_t size, uint64_t param, uint64_t threads, uint64_t allocs,
                double ms, ull fails) {
    fprintf(csv, "%s,%s,%s,%llu,%llu,%llu,%llu,%.6f,%.4g,%llu\n", test, cur_a->name, mode, (ull)size, (ull)param,
            (ull)threads, (ull)allocs, ms, ms > 0 ? (double)allocs / (ms * 1e-3) : 0.0, fails);
    fflush(csv);
    printf("%-7s %-15s %-6s size %7llu param %4llu threads %9llu allocs %10llu  %10.4f ms  %9.3g /s  failed %llu\n",
           test, cur_a->name, mode, (ull)size, (ull)param, (ull)threads, (ull)allocs, ms,
           ms > 0 ? (double)allocs / (ms * 1e-3) : 0.0, fails);
}

/* --seg-shift=N (ablation): bump segments of up to 2^N pages per class,
 * instead of heap_layout.c's choice (at most 1/128 of the heap, under 2^20
 * slots); kept at or under 2^19 slots so that the state word's position
 * field (22 bits) keeps its headroom.  The heap struct is a value: the
 * kernels and the walk see the override, and the reset after it writes it
 * into the copy in the heap's metadata, which the rare paths read
 * (WH__RARE; without that reset the rare paths would prepare segments of
 * the old size: overlapping slots, a "utilisation" above 1). */
static int seg_shift_max = -1;
static uint32_t seg_ways = 0; /* --ways=N: wh_heap_config.ways */
static bool secure = false;   /* --secure: WH_HEAP_SECURE on DEFAULT and SLAB */
static void override_seg_shift(int n) {
    if (cur.kind != WH_HEAP_DEFAULT && cur.kind != WH_HEAP_SLAB) return;
    if (!cur.slab_fine) return;
    for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) {
        uint32_t shift = 0;
        while ((int)shift < n && ((uint64_t)wh__slab_spp(c) << (shift + 1u)) <= (1u << 19) &&
               (2ull << shift) <= cur.npages)
            shift++;
        cur.seg_shift[c] = (uint8_t)shift;
    }
}

static void reset_heap(void);
static void use_allocator(const allocator *a, uint64_t bytes) {
    if (cur_a && cur_a->kind >= 0) WH_CUDA_OR_DIE(wh_heap_destroy(&cur) == WH_OK ? cudaSuccess : cudaErrorUnknown);
    memset(&cur, 0, sizeof cur);
    cur_a = a;
    cur_bytes = bytes;
    if (a->kind < 0) return;
    bool slab = a->kind == WH_HEAP_DEFAULT || a->kind == WH_HEAP_SLAB;
    wh_heap_config cfg = {bytes, (wh_heap_kind)a->kind, slab && secure ? WH_HEAP_SECURE : 0u, slab ? seg_ways : 0u, 0,
                          NULL};
    if (wh_heap_create(&cur, &cfg) != WH_OK) {
        fprintf(stderr, "heap_bench: %s: %s\n", a->name, wh_last_error());
        exit(1);
    }
    if (seg_shift_max >= 0) {
        override_seg_shift(seg_shift_max);
        reset_heap(); /* writes the override into the heap's metadata copy */
    }
}
static void reset_heap(void) {
    if (cur_a->kind >= 0 && wh_heap_reset(&cur) != WH_OK) {
        fprintf(stderr, "heap_bench: reset: %s\n", wh_last_error());
        exit(1);
    }
}
static ull read_fails(void) {
    ull f = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&f, d_fails, sizeof f, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemset(d_fails, 0, sizeof f));
    return f;
}

static cudaEvent_t ev0, ev1;
static void tic(void) { WH_CUDA_OR_DIE(cudaEventRecord(ev0)); }
static double toc(void) {
    float ms = 0;
    WH_CUDA_OR_DIE(cudaEventRecord(ev1));
    WH_CUDA_OR_DIE(cudaEventSynchronize(ev1));
    WH_CUDA_OR_DIE(cudaEventElapsedTime(&ms, ev0, ev1));
    return ms;
}
static int reps(void) { return cur_a->kind < 0 ? 3 : 5; }
static double median(double *v, int n) {
    std::sort(v, v + n);
    return v[n / 2];
}

/* ---- workloads ---------------------------------------------------------------- */
static uint32_t grid_threads(void) { return (uint32_t)sms_count * 8u * 256u; }

static void bench_ad(uint64_t size, int per_warp) {
    uint32_t threads = grid_threads();
    double t[5];
    cur_a->ad<<<threads / 256u, 256>>>(cur, size, per_warp, threads, d_fails); /* warm-up */
    WH_LAUNCH_OR_DIE();
    (void)read_fails();
    for (int r = 0; r < reps(); ++r) {
        tic();
        cur_a->ad<<<threads / 256u, 256>>>(cur, size, per_warp, threads, d_fails);
        WH_LAUNCH_OR_DIE();
        t[r] = toc();
    }
    row("ad", per_warp ? "warp" : "thread", size, 1, threads, per_warp ? threads / 32u : threads, median(t, reps()),
        read_fails() / (ull)reps());
    reset_heap();
}

static void bench_acd(uint64_t size, int iters) {
    uint32_t threads = grid_threads();
    double t[5];
    for (int r = 0; r < reps(); ++r) {
        tic();
        cur_a->acd<<<threads / 256u, 256>>>(cur, size, iters, 1, threads, d_fails);
        WH_LAUNCH_OR_DIE();
        t[r] = toc();
        reset_heap();
    }
    row("acd", "warp", size, (uint64_t)iters, threads, (uint64_t)threads / 32u * iters, median(t, reps()),
        read_fails() / (ull)reps());
}

static void bench_prob(uint64_t size) {
    uint32_t threads = grid_threads();
    void **slots;
    WH_CUDA_OR_DIE(cudaMalloc(&slots, threads / 32u * sizeof(void *)));
    double t[5];
    for (int r = 0; r < reps(); ++r) {
        WH_CUDA_OR_DIE(cudaMemset(slots, 0, threads / 32u * sizeof(void *)));
        tic();
        for (int k = 0; k < 10; ++k) {
            cur_a->prob<<<threads / 256u, 256>>>(cur, size, slots, (uint64_t)k, threads, d_fails);
            WH_LAUNCH_OR_DIE();
        }
        t[r] = toc();
        reset_heap();          /* leaks the last live slots on purpose: reset clears them */
        if (cur_a->kind < 0) { /* CUDA's heap is not reset: free what is live */
            cuda_freemany<<<threads / 32u / 256u + 1u, 256>>>(cur, 1, threads / 32u, slots);
            WH_LAUNCH_OR_DIE();
            WH_CUDA_OR_DIE(cudaDeviceSynchronize());
        }
    }
    row("prob", "warp", size, 10, threads, (uint64_t)threads / 32u * 10u * 3u / 4u, median(t, reps()),
        read_fails() / (ull)reps());
    WH_CUDA_OR_DIE(cudaFree(slots));
}

/* The heap walk after a timed round: live allocations, broken invariants. */
static void walk_row(const char *test, uint64_t size, const char *after) {
    wh_heap_usage u;
    if (wh_heap_stats(&cur, &u) != WH_OK) {
        fprintf(stderr, "heap_bench: stats: %s\n", wh_last_error());
        exit(1);
    }
    fprintf(csv, "walk,%s,%s,%llu,0,0,%llu,0,%llu,%llu\n", cur_a->name, after, (ull)size, (ull)u.allocations,
            (ull)u.inconsistencies, (ull)u.failed_allocs);
    printf(
        "walk    %-15s %s %s size %llu: %llu live, %llu inconsistencies, used %llu free %llu overhead %llu of %llu\n",
        cur_a->name, test, after, (ull)size, (ull)u.allocations, (ull)u.inconsistencies, (ull)u.used_bytes,
        (ull)u.free_bytes, (ull)u.overhead_bytes, (ull)u.heap_bytes);
}

/* WH_HEAP_PROFILE builds (wh_heap_bench_prof): the slab paths' event counters
 * of the round just timed, one line on stdout. */
static void print_prof(const char *test, uint64_t size) {
    if (cur_a->kind != WH_HEAP_DEFAULT && cur_a->kind != WH_HEAP_SLAB) return;
    char label[96];
    snprintf(label, sizeof label, "%-15s %s size %llu", cur_a->name, test, (ull)size);
    heap_bench_prof(&cur, label);
}

/* count threads allocate n objects each (timed); then free (timed separately).
 * warm: first, untimed, 4 warps per SM allocate one object per thread and
 * keep it (the reset after the round clears them). */
static void bench_many(const char *test, uint64_t size, uint32_t n, uint64_t count, bool keep, double *free_ms,
                       bool warm) {
    void **ptrs = NULL;
    if (keep || cur_a->kind < 0) WH_CUDA_OR_DIE(cudaMalloc(&ptrs, count * n * sizeof(void *)));
    double t[5], f[5];
    uint32_t blocks = (uint32_t)((count + 255u) / 256u);
    for (int r = 0; r < reps(); ++r) {
        if (warm) {
            cur_a->many<<<(uint32_t)sms_count * 4u, 32>>>(cur, size, 1, (uint64_t)sms_count * 128u, NULL, d_fails);
            WH_LAUNCH_OR_DIE();
            WH_CUDA_OR_DIE(cudaDeviceSynchronize());
        }
        tic();
        cur_a->many<<<blocks, 256>>>(cur, size, n, count, ptrs, d_fails);
        WH_LAUNCH_OR_DIE();
        t[r] = toc();
        if (r == reps() - 1) print_prof(test, size);
        f[r] = 0;
        bool walk = keep && (cur_a->kind == WH_HEAP_DEFAULT || cur_a->kind == WH_HEAP_SLAB) && r == reps() - 1 &&
                    !strcmp(test, "one");
        if (walk) walk_row(test, size, "alloc");
        if (ptrs) {
            tic();
            cur_a->freemany<<<blocks, 256>>>(cur, n, count, ptrs);
            WH_LAUNCH_OR_DIE();
            f[r] = toc();
        }
        if (walk) walk_row(test, size, "free");
        reset_heap();
    }
    double ms = median(t, reps());
    if (free_ms) *free_ms = median(f, reps());
    row(test, "thread", size, n, count, count * n, ms, read_fails() / (ull)reps());
    if (ptrs) WH_CUDA_OR_DIE(cudaFree(ptrs));
}

/* Where a heap is at the first failed allocation, over its size: slots and
 * runs beyond the requests (class rounding), tails and headers, free
 * regions, the largest one; and what later rounds still get (requests
 * small enough for the slots left; much more: the failure came while room
 * remained). */
typedef struct util_rest {
    double rounding, overhead, free, largest, later;
    heap_census census; /* slab kinds: the class pages then */
} util_rest;

/* One round of the utilisation test: `round` threads, the sizes of round r. */
static void util_round(uint32_t size, uint32_t round, uint32_t r) {
    cur_a->util<<<(round + 255u) / 256u, 256>>>(cur, round, (uint64_t)r * round, size, d_bytes, d_fails);
    WH_LAUNCH_OR_DIE();
}

/* Rounds of `round` threads until the first failed allocation; the bytes
 * requested successfully until then, over the heap size.  rest: where the
 * rest of the heap is then, and what up to 64 more rounds get. */
static double bench_util(uint32_t size, uint32_t round, util_rest *rest) {
    ull ok = 0, fails = 0;
    WH_CUDA_OR_DIE(cudaMemset(d_bytes, 0, sizeof(ull)));
    uint32_t r = 0;
    for (; r < 100000u && fails == 0; ++r) {
        util_round(size, round, r);
        WH_CUDA_OR_DIE(cudaMemcpy(&fails, d_fails, sizeof fails, cudaMemcpyDeviceToHost));
    }
    WH_CUDA_OR_DIE(cudaMemcpy(&ok, d_bytes, sizeof ok, cudaMemcpyDeviceToHost));
    (void)read_fails();
    double u = (double)ok / (double)cur_bytes;
    fprintf(csv, "util,%s,%s,%u,%u,%u,%u,0,%.6f,%llu\n", cur_a->name, size ? "single" : "mixed", size, round, round, r,
            u, fails);
    printf("util    %-15s %-6s size %5u: %.4f of %llu bytes at the first failure (%u rounds of %u)\n", cur_a->name,
           size ? "single" : "mixed", size, u, (ull)cur_bytes, r, round);
    if (rest) {
        wh_heap_usage st;
        if (wh_heap_stats(&cur, &st) != WH_OK) {
            fprintf(stderr, "heap_bench: util: %s\n", wh_last_error());
            exit(1);
        }
        double b = (double)cur_bytes;
        rest->rounding = ((double)st.used_bytes - (double)ok) / b;
        rest->overhead = (double)st.overhead_bytes / b;
        rest->free = (double)st.free_bytes / b;
        rest->largest = (double)st.largest_free / b;
        memset(&rest->census, 0, sizeof rest->census);
        if (cur.kind == WH_HEAP_DEFAULT || cur.kind == WH_HEAP_SLAB) heap_class_census(&cur, &rest->census);
        ull later = ok;
        for (uint32_t k = 0; k < 64u; ++k, ++r) util_round(size, round, r);
        WH_CUDA_OR_DIE(cudaMemcpy(&later, d_bytes, sizeof later, cudaMemcpyDeviceToHost));
        (void)read_fails();
        rest->later = (double)(later - ok) / b;
        fprintf(csv, "util_rest,%s,%s,%u,%u,%u,%u,0,%.6f,%.6f\n", cur_a->name, size ? "single" : "mixed", size, round,
                round, r, rest->rounding, rest->free);
        printf("util    %-15s %-6s size %5u: at the failure %.4f rounding, %.4f tails and headers, %.4f free (largest "
               "%.6f), %llu partly used class pages (%llu of class %u); 64 more rounds got %.4f\n",
               cur_a->name, size ? "single" : "mixed", size, rest->rounding, rest->overhead, rest->free, rest->largest,
               rest->census.part, rest->census.part_most, rest->census.part_most_class, rest->later);
    }
    reset_heap();
    return u;
}

/* Registers and local memory a thread (stack frame and spills) of a kernel */
static cudaFuncAttributes attrs_of(void (*k)(wh_heap, size_t, void **)) {
    cudaFuncAttributes at;
    WH_CUDA_OR_DIE(cudaFuncGetAttributes(&at, (const void *)k));
    return at;
}
/* One row of the registers table: the kernels of one allocation and one
 * free, the allocation alone, the free alone. */
static void regs_row(const char *name, void (*both)(wh_heap, size_t, void **), void (*alloc)(wh_heap, size_t, void **),
                     void (*free_)(wh_heap, size_t, void **)) {
    cudaFuncAttributes b = attrs_of(both), a = attrs_of(alloc), f = attrs_of(free_);
    fprintf(md, "| %s | %d | %d | %d | %zu | %zu | %zu |\n", name, b.numRegs, a.numRegs, f.numRegs, b.localSizeBytes,
            a.localSizeBytes, f.localSizeBytes);
    fprintf(csv, "regs,%s,,0,0,0,0,0,%d,0\n", name, b.numRegs);
    fprintf(csv, "regs,%s,malloc,0,0,0,0,0,%d,0\n", name, a.numRegs);
    fprintf(csv, "regs,%s,free,0,0,0,0,0,%d,0\n", name, f.numRegs);
    fprintf(csv, "local,%s,,0,0,0,0,0,%zu,0\n", name, b.localSizeBytes);
}

/* ---- main --------------------------------------------------------------------- */
/* --tests=one,fill90,util,paper,regs and --kinds=bump,default,...: run only
 * those (all when not given); name must be a whole item of the list. */
static const char *only_tests, *only_kinds;
static bool listed(const char *list, const char *name) {
    if (!list) return true;
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == 0)) return true;
    return false;
}
static bool run_kind(const allocator *a) { return listed(only_kinds, a->name); }
static bool run_test(const char *t) { return listed(only_tests, t); }

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *out = ".", *commit = "unknown", *one_sizes_opt = "16,256,4096";
    bool quick = false;
    uint32_t rounds = 5, churn_rounds = 100;
    wh_cli_opt cli[] = {
        WH_CLI_STRING("out", &out, "directory of heap_bench.csv and heap_bench.md"),
        WH_CLI_STRING("commit", &commit, "the commit named in the result files"),
        WH_CLI_FLAG("quick", &quick, "leave out the 100-cycle Alloc-Cycle-Dealloc"),
        WH_CLI_STRING_D("tests", &only_tests,
                        "only these workloads, comma-separated (one,onewarm,fill90,util,paper,regs,rounds,churn)",
                        "all"),
        WH_CLI_STRING_D("kinds", &only_kinds, "only these allocators, comma-separated (bump,default,...)", "all"),
        WH_CLI_INT_D("seg-shift", &seg_shift_max, "bump segments of up to 2^N pages per class (an ablation)",
                     "-1: heap_layout.c's choice"),
        WH_CLI_UINT_D("ways", &seg_ways, "slab and default heaps with this many ways per class", "0: by heap size"),
        WH_CLI_STRING("one-sizes", &one_sizes_opt, "sizes of the one and onewarm workloads, comma-separated"),
        WH_CLI_FLAG("secure", &secure, "DEFAULT and SLAB heaps in the hardened mode (WH_HEAP_SECURE)"),
        WH_CLI_UINT("rounds", &rounds, "fills and frees of the rounds workload, per size"),
        WH_CLI_UINT("churn-rounds", &churn_rounds, "rounds of the churn workload"),
        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Device heap benchmarks: every kind against CUDA's device malloc and BUMP.");
    uint64_t heap = 8ull << 30;
    cudaDeviceProp prop;
    int dev = 0, driver = 0, runtime = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaGetDeviceProperties(&prop, dev));
    WH_CUDA_OR_DIE(cudaDriverGetVersion(&driver));
    WH_CUDA_OR_DIE(cudaRuntimeGetVersion(&runtime));
    sms_count = prop.multiProcessorCount;
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap)); /* CUDA's heap: the same size */
    WH_CUDA_OR_DIE(cudaMalloc(&d_fails, sizeof(ull)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_bytes, sizeof(ull)));
    WH_CUDA_OR_DIE(cudaMemset(d_fails, 0, sizeof(ull)));
    WH_CUDA_OR_DIE(cudaEventCreate(&ev0));
    WH_CUDA_OR_DIE(cudaEventCreate(&ev1));
    char path[1024], date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    snprintf(path, sizeof path, "%s/heap_bench.csv", out);
    csv = fopen(path, "w");
    snprintf(path, sizeof path, "%s/heap_bench.md", out);
    md = fopen(path, "w");
    if (!csv || !md) {
        fprintf(stderr, "heap_bench: cannot write into %s\n", out);
        return 1;
    }
    char header[512];
    snprintf(header, sizeof header, "# gpu=%s sms=%d driver=%d cuda_runtime=%d date=%s commit=%s heap=%llu ways=%u",
             prop.name, sms_count, driver, runtime, date, commit, (ull)heap, seg_ways);
    fprintf(csv, "%s\n", header);
    fprintf(csv, "test,allocator,mode,size,param,threads,allocs,ms,allocs_per_s,failed\n");
    fprintf(md,
            "# Device heap benchmarks\n\n%s (%d SMs), driver %d, CUDA runtime %d, %s, commit %s.\n"
            "Heaps (and CUDA's malloc heap limit) %llu GiB unless said; blocks = 8 x #SM, 256 threads; "
            "median of 5 (CUDA malloc: 3); slab ways per class: %u (0: by heap size).\n\n",
            prop.name, sms_count, driver, runtime, date, commit, (ull)(heap >> 30), seg_ways);

    /* registers (Table 1) */
    if (run_test("regs")) {
        fprintf(md,
                "## Registers of a kernel with one allocation and one free, or one of them\n\n"
                "Each kind through `wh_malloc_as` / `wh_free_as` (its code alone); `any kind`: `wh_malloc` / "
                "`wh_free`, the kind read from the heap (every kind's code).  Local: bytes a thread of local memory "
                "(stack frame and spills).\n\n"
                "| allocator | malloc + free | malloc | free | local, malloc + free | local, malloc | local, free |\n"
                "|---|---|---|---|---|---|---|\n");
        for (unsigned a = 0; a < NALLOC; ++a)
            if (run_kind(&allocators[a]))
                regs_row(allocators[a].name, allocators[a].reg, allocators[a].rega, allocators[a].regf);
        regs_row("any kind", any_reg, any_rega, any_regf);
    }

    /* one allocation per thread, 1M threads (the goals) */
    uint64_t one_sizes[16];
    unsigned n_one = 0;
    for (const char *p = one_sizes_opt; *p && n_one < 16;) {
        char *end;
        uint64_t v = strtoull(p, &end, 10);
        if (v) one_sizes[n_one++] = v;
        p = *end ? end + 1 : end; /* past the comma (or any stray character) */
    }
    for (unsigned a = 0; a < NALLOC; ++a) {
        if (!run_test("one") || !run_kind(&allocators[a])) continue;
        use_allocator(&allocators[a], heap);
        for (unsigned s = 0; s < n_one; ++s) {
            double free_ms = 0;
            bench_many("one", one_sizes[s], 1, 1u << 20, true, &free_ms, false);
            fprintf(csv, "one_free,%s,thread,%llu,1,%u,%u,%.6f,0,0\n", allocators[a].name, (ull)one_sizes[s], 1u << 20,
                    1u << 20, free_ms);
        }
    }
    for (unsigned a = 0; a + 1 < NALLOC; ++a) { /* CUDA's heap is not reset */
        if (!run_test("onewarm") || !run_kind(&allocators[a])) continue;
        use_allocator(&allocators[a], heap);
        for (unsigned s = 0; s < n_one; ++s) bench_many("onewarm", one_sizes[s], 1, 1u << 20, true, NULL, true);
    }

    /* Alloc-Dealloc, Alloc-Cycle-Dealloc, Probability, Linux scalability */
    static const uint64_t ad_sizes[] = {4, 16, 64, 256, 1024, 4096, 16384, 65536, 131072};
    for (unsigned a = 0; a < NALLOC; ++a) {
        if (!run_test("paper") || !run_kind(&allocators[a])) continue;
        use_allocator(&allocators[a], heap);
        for (unsigned s = 0; s < sizeof ad_sizes / sizeof *ad_sizes; ++s) bench_ad(ad_sizes[s], 1);
        for (unsigned s = 1; s < 6; s += 2) bench_ad(ad_sizes[s], 0);
        bench_acd(16, 10);
        if (!quick) bench_acd(16, 100);
        bench_acd(4096, 10);
        bench_prob(16);
        bench_many("linux", 64, 16, 16384, true, NULL, false);
        bench_many("linux", 64, 128, 16384, true, NULL, false);
    }

    /* fill 90% of a 9.4 GB heap with one size */
    uint64_t big = 9400ull * 1000 * 1000;
    static const int fill_kinds[] = {0, 1, 2};            /* bump, default, slab */
    static const uint64_t fill_sizes[] = {16, 256, 4096}; /* the goals' sizes */
    for (unsigned k = 0; k < 3; ++k) {
        if (!run_test("fill90") || !run_kind(&allocators[fill_kinds[k]])) continue;
        use_allocator(&allocators[fill_kinds[k]], big);
        for (unsigned s = 0; s < 3; ++s) {
            uint64_t count = big / 10u * 9u / fill_sizes[s];
            bench_many("fill90", fill_sizes[s], 1, count, false, NULL, false);
        }
    }

    /* utilisation at the first failure */
    fprintf(md, "\n## Heap utilisation at the first failed allocation (256 MiB heap)\n\n"
                "| allocator | 64 B objects | mixed 16 B - 4 KiB |\n|---|---|---|\n");
    util_rest rest[NALLOC] = {};
    for (unsigned a = 0; a + 1 < NALLOC; ++a) { /* not CUDA's: it has no walk */
        if (!run_test("util") || !run_kind(&allocators[a])) continue;
        use_allocator(&allocators[a], 256ull << 20);
        double u64 = bench_util(64, 4096, NULL), umix = bench_util(0, 1024, &rest[a]);
        fprintf(md, "| %s | %.4f | %.4f |\n", allocators[a].name, u64, umix);
    }
    if (run_test("util")) {
        fprintf(md, "\nThe rest of the heap at the first failure of the mixed sizes, over the heap: slots and runs "
                    "beyond the requests (class rounding), page tails and headers, free regions and the largest "
                    "one; the slab kinds' class pages partly used then (the free slots are theirs), and the most "
                    "of them in one class; then what 64 more rounds of 1024 requests got (a failure while room "
                    "remained lets them get more than a little).\n\n"
                    "| allocator | rounding | tails, headers | free | largest free | partly used pages | most in a "
                    "class (slot bytes) | 64 more rounds |\n"
                    "|---|---|---|---|---|---|---|---|\n");
        for (unsigned a = 0; a + 1 < NALLOC; ++a) {
            if (!run_kind(&allocators[a])) continue;
            const heap_census *cs = &rest[a].census;
            fprintf(md, "| %s | %.4f | %.4f | %.4f | %.6f | %llu | %llu (%u) | %.4f |\n", allocators[a].name,
                    rest[a].rounding, rest[a].overhead, rest[a].free, rest[a].largest, cs->part, cs->part_most,
                    cs->part ? wh__slab_size(cs->part_most_class) : 0u, rest[a].later);
        }
    }
    /* steady state: refills, frees, churn (DEFAULT) */
    int unsound = 0;
    steady_run st = {md,         out,    header,       10066329600ull,
                     4ull << 30, rounds, churn_rounds, secure ? (uint32_t)WH_HEAP_SECURE : 0u,
                     seg_ways};
    if (run_kind(&allocators[1]) && run_test("rounds")) unsound += steady_rounds(&st);
    if (run_kind(&allocators[1]) && run_test("churn")) unsound += steady_churn(&st);
    use_allocator(&allocators[NALLOC - 1], 0);
    fprintf(md, "\nAll timings: heap_bench.csv (test, allocator, mode, size, param, threads, allocs, ms, "
                "allocs_per_s, failed).  Tables of the timings: bench/heap/report.py.\n");
    fclose(csv);
    fclose(md);
    if (unsound) {
        printf("heap_bench: %d steady-state rounds with an unsound heap walk\n", unsound);
        return 1;
    }
    printf("heap_bench: done\n");
    return 0;
}
