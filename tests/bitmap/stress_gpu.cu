/* SPDX-License-Identifier: MIT */
/* Bitmap stress on the GPU: a full grid runs wh_stress_thread, the same loop as
 * the CPU backend's pthreads; the verdict is computed on a host copy. */
#include "stress.h"
#include "warpheap/bitmap_cuda.h"
#include "warpheap/cuda_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __global__ void stress_kernel(wh_bitmap bm, uint32_t ops, uint32_t *owned, uint32_t *nowned, uint32_t cap,
                                     uint32_t threads, wh_stress_counts *total) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    wh_stress_counts c = {0, 0, 0, 0, 0, 0, 0};
    uint32_t n = 0;
    wh_stress_thread(&bm, t, ops, owned + (size_t)t * cap, cap, &n, &c);
    nowned[t] = n;
    atomicAdd(&total->claims, c.claims);
    atomicAdd(&total->releases, c.releases);
    atomicAdd(&total->steals, c.steals);
    atomicAdd(&total->finds, c.finds);
    atomicAdd(&total->empty, c.empty);
    atomicAdd(&total->violations, c.violations);
    atomicAdd(&total->spans, c.spans);
}

extern "C" int wh_stress_gpu(const wh_stress_config *cfg, wh_stress_result *res) {
    memset(res, 0, sizeof *res);
    int dev = 0, sms = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    uint32_t threads = cfg->threads ? cfg->threads : (uint32_t)sms * 8u * 256u; /* a full grid */
    size_t bytes = wh_bitmap_bytes(cfg->nbits);
    void *d_mem;
    uint32_t *d_owned, *d_nowned;
    wh_stress_counts *d_counts;
    WH_CUDA_OR_DIE(cudaMalloc(&d_mem, bytes));
    WH_CUDA_OR_DIE(cudaMalloc(&d_owned, (size_t)threads * cfg->cap * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_nowned, threads * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_counts, sizeof *d_counts));
    WH_CUDA_OR_DIE(cudaMemset(d_counts, 0, sizeof *d_counts));
    wh_bitmap bm;
    if (wh_bitmap_init_device(&bm, d_mem, cfg->nbits, true, 0) != WH_OK) {
        fprintf(stderr, "stress: %s\n", wh_last_error());
        return 1;
    }
    cudaEvent_t e0, e1;
    WH_CUDA_OR_DIE(cudaEventCreate(&e0));
    WH_CUDA_OR_DIE(cudaEventCreate(&e1));
    WH_CUDA_OR_DIE(cudaEventRecord(e0));
    stress_kernel<<<(threads + 255) / 256, 256>>>(bm, cfg->ops_per_thread, d_owned, d_nowned, cfg->cap, threads,
                                                  d_counts);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaEventRecord(e1));
    WH_CUDA_OR_DIE(cudaEventSynchronize(e1));
    float ms = 0;
    WH_CUDA_OR_DIE(cudaEventElapsedTime(&ms, e0, e1));
    res->seconds = ms / 1e3;
    res->threads = threads;
    res->ops = (uint64_t)threads * cfg->ops_per_thread;

    void *h_mem = malloc(bytes);
    uint32_t *owned = (uint32_t *)malloc((size_t)threads * cfg->cap * sizeof(uint32_t));
    uint32_t *nowned = (uint32_t *)malloc(threads * sizeof(uint32_t));
    if (!h_mem || !owned || !nowned) {
        fprintf(stderr, "stress: host memory\n");
        return 1;
    }
    WH_CUDA_OR_DIE(cudaMemcpy(h_mem, d_mem, bytes, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(owned, d_owned, (size_t)threads * cfg->cap * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(nowned, d_nowned, threads * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(&res->counts, d_counts, sizeof res->counts, cudaMemcpyDeviceToHost));
    wh_bitmap h = wh_bitmap_rebase(&bm, h_mem);
    wh_stress_verify(&h, owned, nowned, threads, cfg->cap, res);
    free(h_mem);
    free(owned);
    free(nowned);
    WH_CUDA_OR_DIE(cudaFree(d_mem));
    WH_CUDA_OR_DIE(cudaFree(d_owned));
    WH_CUDA_OR_DIE(cudaFree(d_nowned));
    WH_CUDA_OR_DIE(cudaFree(d_counts));
    WH_CUDA_OR_DIE(cudaEventDestroy(e0));
    WH_CUDA_OR_DIE(cudaEventDestroy(e1));
    return 0;
}
