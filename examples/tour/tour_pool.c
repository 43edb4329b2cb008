/* SPDX-License-Identifier: MIT */
/* Tour, host pool: a program that allocates device memory in a loop.  One
 * alloc+free pair of 4 KiB on one stream, repeated, and RMM's
 * random_allocations pattern (bench/pool/rmm_pattern.h) on a warm pool;
 * against cudaMallocAsync with a pool that keeps its memory (its best case).
 * On the CPU backend against glibc malloc/free. */
#include "tour.h"
#include "warpheap/pool.h"
#include "rmm_pattern.h"

typedef struct pool_ctx {
    wh_pool *pool;
    void *stream;
} pool_ctx;

static void *pool_alloc(void *c, size_t n) {
    pool_ctx *x = (pool_ctx *)c;
    return wh_pool_alloc(x->pool, n, x->stream);
}
static void pool_release(void *c, void *p) {
    pool_ctx *x = (pool_ctx *)c;
    if (wh_pool_free(x->pool, p, x->stream) != WH_OK) tour_fail("host pool", "wh_pool_free");
}
static void *libc_alloc(void *c, size_t n) {
    (void)c;
    return malloc(n);
}
static void libc_release(void *c, void *p) {
    (void)c;
    free(p);
}
#if defined(__CUDACC__)
static void *async_alloc(void *c, size_t n) {
    void *p = NULL;
    if (cudaMallocAsync(&p, n, (cudaStream_t)((pool_ctx *)c)->stream) == cudaSuccess) return p;
    (void)cudaGetLastError(); /* out of memory is an answer here, not an error for the next launch check */
    return NULL;
}
static void async_release(void *c, void *p) { WH_CUDA_OR_DIE(cudaFreeAsync(p, (cudaStream_t)((pool_ctx *)c)->stream)); }
#endif

typedef void *(*alloc_fn)(void *, size_t);
typedef void (*release_fn)(void *, void *);

/* ms for pairs alloc+free pairs of bytes (best of 3 after a warm-up). */
static double pairs_ms(alloc_fn a, release_fn r, void *ctx, uint64_t pairs, size_t bytes, int gpu) {
    double best = 1e30;
    for (int rep = 0; rep < 4; ++rep) {
        double t0 = app_now();
        for (uint64_t i = 0; i < pairs; ++i) {
            void *p = a(ctx, bytes);
            if (!p) tour_fail("host pool", "an allocation of the pair failed");
            r(ctx, p);
        }
        app_sync(gpu);
        double ms = (app_now() - t0) * 1e3;
        if (rep && ms < best) best = ms;
    }
    return best;
}
/* ms of one random_allocations pass on a warm allocator (the second pass). */
static double random_ms(alloc_fn a, release_fn r, void *ctx, uint64_t n, uint64_t max, int gpu) {
    uint64_t peak;
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        double t0 = app_now();
        rmm_random_allocations(n, max, a, r, ctx, &peak);
        app_sync(gpu);
        double ms = (app_now() - t0) * 1e3;
        if (rep && ms < best) best = ms;
    }
    return best;
}

void tour_pool(tour *t) {
    uint64_t pairs = t->quick ? 20000 : 200000, n = t->quick ? 2000 : 10000, max = (uint64_t)1 << 20;
    wh_pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.backend = t->gpu ? WH_POOL_CUDA : WH_POOL_CPU;
    pool_ctx ctx = {NULL, NULL};
    if (wh_pool_create(&ctx.pool, &cfg) != WH_OK) tour_fail("host pool", "wh_pool_create");
    const char *base = "glibc malloc/free";
    alloc_fn ba = libc_alloc;
    release_fn br = libc_release;
#if defined(__CUDACC__)
    cudaStream_t s = NULL;
    if (t->gpu) {
        WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        ctx.stream = (void *)s;
        cudaMemPool_t mp;
        uint64_t keep = UINT64_MAX;
        WH_CUDA_OR_DIE(cudaDeviceGetDefaultMemPool(&mp, 0));
        WH_CUDA_OR_DIE(cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &keep));
        base = "cudaMallocAsync (warm)";
        ba = async_alloc;
        br = async_release;
    }
#endif
    char what[72];
    double ours = pairs_ms(pool_alloc, pool_release, &ctx, pairs, 4096, t->gpu);
    double theirs = pairs_ms(ba, br, &ctx, pairs, 4096, t->gpu);
    snprintf(what, sizeof what, "alloc+free pair, 4 KiB, x%llu", (unsigned long long)pairs);
    tour_report(t, "host pool", what, ours, base, theirs);
    ours = random_ms(pool_alloc, pool_release, &ctx, n, max, t->gpu);
    theirs = random_ms(ba, br, &ctx, n, max, t->gpu);
    snprintf(what, sizeof what, "random_allocations, N=%llu, up to 1 MiB", (unsigned long long)n);
    tour_report(t, "host pool", what, ours, base, theirs);
    if (wh_pool_check(ctx.pool) != WH_OK) tour_fail("host pool", "wh_pool_check");
    if (wh_pool_destroy(ctx.pool) != WH_OK) tour_fail("host pool", "wh_pool_destroy");
#if defined(__CUDACC__)
    if (s) WH_CUDA_OR_DIE(cudaStreamDestroy(s));
#endif
}
