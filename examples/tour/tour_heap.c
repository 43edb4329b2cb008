/* SPDX-License-Identifier: MIT */
/* Tour, device heap: every thread of a 1M-thread grid allocates 16 bytes,
 * writes them and frees them; warpheap's DEFAULT kind against CUDA's device
 * malloc and against BUMP, the speed limit (an atomic add, no free).  On the
 * CPU backend: threads doing the same against glibc malloc. */
#include "tour.h"
#include "warpheap/heap.h"

#include <pthread.h>

#define HEAP_BYTES ((uint64_t)1 << 30)
#define OBJ_BYTES  16u

#if defined(__CUDACC__)
static __global__ void pair_kernel(wh_heap h, uint32_t n, unsigned long long *failed) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t *p = (uint32_t *)wh_malloc(&h, OBJ_BYTES);
    if (!p) {
        atomicAdd(failed, 1ull);
        return;
    }
    *(volatile uint32_t *)p = i;
    wh_free(&h, p);
}
static __global__ void cuda_malloc_kernel(uint32_t n, unsigned long long *failed) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t *p = (uint32_t *)malloc(OBJ_BYTES);
    if (!p) {
        atomicAdd(failed, 1ull);
        return;
    }
    *(volatile uint32_t *)p = i;
    free(p);
}

/* Best of reps launches, in ms; a failed allocation fails the tour. */
static double gpu_time(int kind, wh_heap *h, uint32_t n, int reps) {
    unsigned long long *failed, nfail = 0;
    WH_CUDA_OR_DIE(cudaMalloc(&failed, sizeof *failed));
    WH_CUDA_OR_DIE(cudaMemset(failed, 0, sizeof *failed));
    double best = 1e30;
    for (int r = 0; r <= reps; ++r) { /* r = 0 warms up */
        if (h && h->kind == WH_HEAP_BUMP && wh_heap_reset(h) != WH_OK) tour_fail("device heap", "reset");
        double t0 = app_now();
        if (kind)
            cuda_malloc_kernel<<<(n + 255) / 256, 256>>>(n, failed);
        else
            pair_kernel<<<(n + 255) / 256, 256>>>(*h, n, failed);
        WH_LAUNCH_OR_DIE();
        WH_CUDA_OR_DIE(cudaDeviceSynchronize());
        double ms = (app_now() - t0) * 1e3;
        if (r && ms < best) best = ms;
    }
    WH_CUDA_OR_DIE(cudaMemcpy(&nfail, failed, sizeof nfail, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaFree(failed));
    if (nfail) tour_fail("device heap", kind ? "CUDA malloc ran out of memory" : "wh_malloc returned NULL");
    return best;
}
#endif

typedef struct cpu_job {
    const wh_heap *h;
    uint64_t n;
    uint64_t failed;
} cpu_job;
static void *cpu_pairs(void *arg) {
    cpu_job *j = (cpu_job *)arg;
    for (uint64_t i = 0; i < j->n; ++i) {
        uint32_t *p = (uint32_t *)(j->h ? wh_malloc(j->h, OBJ_BYTES) : malloc(OBJ_BYTES));
        if (!p) {
            j->failed++;
            continue;
        }
        *(volatile uint32_t *)p = (uint32_t)i;
        if (j->h)
            wh_free(j->h, p);
        else
            free(p);
    }
    return NULL;
}
/* Best of reps runs of n pairs spread over threads, in ms; h NULL: glibc. */
static double cpu_time(wh_heap *h, uint64_t n, unsigned threads, int reps) {
    pthread_t tid[1024];
    cpu_job job[1024];
    double best = 1e30;
    for (int r = 0; r <= reps; ++r) {
        if (h && h->kind == WH_HEAP_BUMP && wh_heap_reset(h) != WH_OK) tour_fail("device heap", "reset");
        double t0 = app_now();
        for (unsigned k = 0; k < threads; ++k) {
            job[k].h = h;
            job[k].n = n / threads;
            job[k].failed = 0;
            if (pthread_create(&tid[k], NULL, cpu_pairs, &job[k])) tour_fail("device heap", "pthread_create");
        }
        for (unsigned k = 0; k < threads; ++k) {
            pthread_join(tid[k], NULL);
            if (job[k].failed) tour_fail("device heap", h ? "wh_malloc returned NULL" : "malloc returned NULL");
        }
        double ms = (app_now() - t0) * 1e3;
        if (r && ms < best) best = ms;
    }
    return best;
}

void tour_heap(tour *t) {
    uint32_t n = t->quick ? 1u << 16 : 1u << 20;
    int reps = t->quick ? 2 : 5;
    double ms[2];
    wh_heap_kind kinds[2] = {WH_HEAP_DEFAULT, WH_HEAP_BUMP};
    for (int k = 0; k < 2; ++k) {
        wh_heap h;
        wh_heap_config cfg = {HEAP_BYTES, kinds[k], t->gpu ? 0u : WH_HEAP_HOST, 0, NULL};
        if (wh_heap_create(&h, &cfg) != WH_OK) tour_fail("device heap", "wh_heap_create");
#if defined(__CUDACC__)
        if (t->gpu)
            ms[k] = gpu_time(0, &h, n, reps);
        else
#endif
            ms[k] = cpu_time(&h, n, t->threads, reps);
        wh_heap_usage u;
        if (wh_heap_stats(&h, &u) != WH_OK || u.inconsistencies) tour_fail("device heap", "the heap walk");
        if (k == 0 && u.allocations) tour_fail("device heap", "allocations left after every free");
        if (wh_heap_destroy(&h) != WH_OK) tour_fail("device heap", "wh_heap_destroy");
    }
    char what[72];
    double base;
#if defined(__CUDACC__)
    if (t->gpu) {
        WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)HEAP_BYTES));
        base = gpu_time(1, NULL, n, reps);
        snprintf(what, sizeof what, "malloc+free %u B, %u threads", OBJ_BYTES, n);
        tour_report(t, "device heap", what, ms[0], "CUDA device malloc", base);
    } else
#endif
    {
        base = cpu_time(NULL, n, t->threads, reps);
        snprintf(what, sizeof what, "malloc+free %u B, %u pairs on %u threads", OBJ_BYTES, n, t->threads);
        tour_report(t, "device heap", what, ms[0], "glibc malloc", base);
    }
    tour_report(t, "device heap", what, ms[0], "BUMP (the speed limit)", ms[1]);
}
