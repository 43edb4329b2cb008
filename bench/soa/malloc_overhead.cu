/* SPDX-License-Identifier: MIT */
/* What CUDA's device malloc costs per object: for each object size, how many
 * objects fit in a device heap of --heap-mb, and so the bytes each one takes
 * (heap / count).  The space comparison of DynaSOAr section 6.2
 * (bench/apps/space.sh) pits warpheap's SOA blocks against the apps' malloc
 * versions; this separates the allocator's per-object cost from the apps'
 * object sizes.  Also a mix of two sizes in a ratio (barnes-hut's bodies and
 * tree nodes: --mix=A:B:R allocates R objects of B bytes per object of A).
 *
 *   wh_malloc_overhead [--heap-mb=64] [--sizes=16,24,...] [--mix=32:80:0.72]
 *
 * One process sets the heap once; every size runs in it, its objects freed
 * before the next.  The default list ends with its first size again, to show
 * that the earlier sizes left the heap as they found it. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "warpheap/cuda_check.h"
#include "wh_cli.h"

#define THREADS    256
#define PER_THREAD 64u /* each thread's bound: no loop runs unbounded */

/* Thread i allocates objects of size a (and, every time its running mix
 * count reaches a whole object, one of size b) until malloc fails or its
 * bound; the pointers go to ptrs[i * PER_THREAD + k]. */
static __global__ void fill(void **ptrs, uint32_t *count, uint64_t *bytes, uint32_t a, uint32_t b, float ratio,
                            uint32_t nthreads) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nthreads) return;
    uint32_t k = 0;
    uint64_t mine = 0;
    float owed = 0.0f;
    while (k < PER_THREAD) {
        uint32_t sz = a;
        if (b && owed >= 1.0f) {
            sz = b;
            owed -= 1.0f;
        } else
            owed += ratio;
        void *p = malloc(sz);
        if (!p) break;
        ((volatile char *)p)[sz - 1] = 1; /* the whole object is usable */
        ptrs[(uint64_t)i * PER_THREAD + k++] = p;
        mine += sz;
    }
    atomicAdd(count, k);
    atomicAdd((unsigned long long *)bytes, (unsigned long long)mine);
}
static __global__ void drain(void **ptrs, uint32_t nthreads) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nthreads) return;
    for (uint32_t k = 0; k < PER_THREAD; ++k) {
        void **slot = &ptrs[(uint64_t)i * PER_THREAD + k];
        if (!*slot) break;
        free(*slot);
        *slot = NULL;
    }
}

/* One run: objects that fit and the bytes they hold. */
static void run(void **ptrs, uint32_t *d_count, uint64_t *d_bytes, uint32_t nthreads, uint32_t a, uint32_t b,
                float ratio, uint64_t heap) {
    WH_CUDA_OR_DIE(cudaMemset(ptrs, 0, sizeof(void *) * (size_t)nthreads * PER_THREAD));
    WH_CUDA_OR_DIE(cudaMemset(d_count, 0, 4));
    WH_CUDA_OR_DIE(cudaMemset(d_bytes, 0, 8));
    uint32_t blocks = (nthreads + THREADS - 1) / THREADS;
    fill<<<blocks, THREADS>>>(ptrs, d_count, d_bytes, a, b, ratio, nthreads);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    uint32_t count;
    uint64_t bytes;
    WH_CUDA_OR_DIE(cudaMemcpy(&count, d_count, 4, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(&bytes, d_bytes, 8, cudaMemcpyDeviceToHost));
    drain<<<blocks, THREADS>>>(ptrs, nthreads);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    if (count == (uint64_t)nthreads * PER_THREAD)
        fprintf(stderr, "warning: size %u filled every slot (heap not full)\n", a);
    double per = count ? (double)heap / count : 0.0, asked = count ? (double)bytes / count : 0.0;
    if (b)
        printf("| %u + %.2f x %u | %u | %.1f | %.1f | %.1f |\n", a, ratio, b, count, asked, per, per - asked);
    else
        printf("| %u | %u | %.1f | %.1f | %.1f |\n", a, count, asked, per, per - asked);
    fflush(stdout);
}

int main(int argc, char **argv) {
    uint32_t heap_mb = 64;
    const char *sz = NULL, *mix = NULL;
    wh_cli_opt cli[] = {WH_CLI_UINT("heap-mb", &heap_mb, "CUDA's device heap limit in MiB"),
                        WH_CLI_STRING_D("sizes", &sz, "object sizes in bytes, comma-separated", "16,24,...,128,16"),
                        WH_CLI_STRING_D("mix", &mix,
                                        "also A:B:R, R objects of B bytes per object of A bytes (e.g. 32:80:0.72)",
                                        "none"),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "What CUDA's device malloc costs per object, by object size.");
    uint64_t heap = (uint64_t)heap_mb << 20;
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
    size_t got;
    WH_CUDA_OR_DIE(cudaDeviceGetLimit(&got, cudaLimitMallocHeapSize));
    /* enough threads that the heap runs out before the bound: heap / 16 B objects */
    uint32_t nthreads = (uint32_t)(heap / 16u / PER_THREAD) + THREADS;
    void **ptrs;
    uint32_t *d_count;
    uint64_t *d_bytes;
    WH_CUDA_OR_DIE(cudaMalloc(&ptrs, sizeof(void *) * (size_t)nthreads * PER_THREAD));
    WH_CUDA_OR_DIE(cudaMalloc(&d_count, 4));
    WH_CUDA_OR_DIE(cudaMalloc(&d_bytes, 8));
    printf("CUDA device malloc, heap limit %llu bytes (asked %llu); bytes per object = heap / objects that fit\n\n",
           (unsigned long long)got, (unsigned long long)heap);
    printf("| object bytes | objects | bytes asked per object | heap bytes per object | overhead per object |\n");
    printf("| --- | ---: | ---: | ---: | ---: |\n");
    char list[512];
    snprintf(list, sizeof list, "%s", sz ? sz : "16,24,32,40,48,56,64,72,80,88,96,104,112,128,16");
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
        run(ptrs, d_count, d_bytes, nthreads, (uint32_t)atoi(t), 0, 0.0f, got);
    if (mix) { /* A:B:R, e.g. "32:80:0.72" */
        unsigned a = 0, b = 0;
        float r = 0.0f;
        if (sscanf(mix, "%u:%u:%f", &a, &b, &r) != 3 || !a || !b) {
            fprintf(stderr, "--mix=A:B:R\n");
            return 1;
        }
        run(ptrs, d_count, d_bytes, nthreads, a, b, r, got);
    }
    WH_CUDA_OR_DIE(cudaFree(ptrs));
    WH_CUDA_OR_DIE(cudaFree(d_count));
    WH_CUDA_OR_DIE(cudaFree(d_bytes));
    return 0;
}
