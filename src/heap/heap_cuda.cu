/* SPDX-License-Identifier: MIT */
/* Device heap: create, reset, destroy and stats for heaps in device memory.
 * The empty heap is built on the GPU (zeroed metadata, the page bitmap
 * filled, the circular pre-split and its states written by a kernel, one
 * thread per chunk);
 * stats copy the heap to the host and run the same walk as host heaps. */
#include "heap_internal.h"
#include "warpheap/bitmap_cuda.h"
#include "warpheap/cuda_check.h"

#include <stdlib.h>
#include <string.h>

static __global__ void circ_init_kernel(wh_heap h, uint32_t count) {
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < count) wh__circ_init_chunk(&h, k);
    if (k == 0) wh__circ_init_sentinel(&h);
}

extern "C" uint32_t wh__heap_device_sms(void) {
    int dev = 0, sms = 0;
    if (!wh_cuda_available() || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return (uint32_t)sms;
}

/* Segment k's cursor starts at its sub-heap. */
static __global__ void cursor_init_kernel(wh_heap h) {
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < h.subheaps) h.cursors[(size_t)k * WH_CURSOR_STRIDE] = (uint64_t)k * h.subheap_units;
}

extern "C" wh_status wh__heap_init_device(wh_heap *h) {
    WH_CUDA_TRY(cudaMemset(h->meta_alloc, 0, h->meta_bytes));
    WH_CUDA_TRY(cudaMemcpy((void *)h->dev, h, sizeof *h, cudaMemcpyHostToDevice));
    if (h->kind == WH_HEAP_SLAB || h->kind == WH_HEAP_DEFAULT) {
        wh_bitmap bm;
        wh_status st = wh_bitmap_init_device(&bm, h->pages.words, h->npages, true, 0);
        if (st != WH_OK) return st;
        uint32_t n = wh__whole_words(h->npages);
        uint64_t *whole = (uint64_t *)malloc(8u * (size_t)n);
        if (!whole)
            return wh__fail(WH_ERR_OUT_OF_MEMORY, "heap: %u words of host memory for the whole-word summary", n);
        for (uint32_t k = 0; k < n; ++k) whole[k] = wh__whole_empty(h->npages, k);
        cudaError_t e = cudaMemcpy(h->page_whole, whole, 8u * (size_t)n, cudaMemcpyHostToDevice);
        free(whole);
        WH_CUDA_TRY(e);
    }
    if (h->flags & WH_HEAP_SECURE) WH_CUDA_TRY(cudaMemset(h->base, WH__HEAP_FREED_BYTE, h->bytes)); /* heap/secure.h */
    if (h->end) {
        cursor_init_kernel<<<(h->subheaps + 255u) / 256u, 256>>>(*h);
        WH_LAUNCH_TRY();
        uint32_t count = wh__circ_init_count(h);
        circ_init_kernel<<<(count + 255u) / 256u, 256>>>(*h, count);
        WH_LAUNCH_TRY();
    }
    WH_CUDA_TRY(cudaDeviceSynchronize());
    return WH_OK;
}

extern "C" wh_status wh__heap_create_device(wh_heap *h, size_t arena_bytes) {
    if (!wh_cuda_available()) return wh__fail(WH_ERR_NO_DEVICE, "heap: no GPU for a device heap (use WH_HEAP_HOST)");
    void *arena = NULL, *meta = NULL;
    cudaError_t e = wh__fault() ? cudaErrorMemoryAllocation : cudaMalloc(&arena, arena_bytes);
    if (e == cudaSuccess) e = wh__fault() ? cudaErrorMemoryAllocation : cudaMalloc(&meta, h->meta_bytes);
    if (e != cudaSuccess) {
        if (arena) (void)cudaFree(arena);
        (void)cudaGetLastError();
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "heap: cudaMalloc of %zu + %zu bytes: %s", arena_bytes, h->meta_bytes,
                        cudaGetErrorString(e));
    }
    h->arena_alloc = arena;
    h->meta_alloc = meta;
    wh__heap_bind(h, arena, meta);
    wh_status st = wh__heap_init_device(h);
    if (st != WH_OK) (void)wh__heap_destroy_device(h);
    return st;
}

extern "C" uint64_t wh__heap_in_use_device(const wh_heap *h) {
    uint64_t v = 0;
    if (cudaMemcpy(&v, &h->ctl->in_use, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return v;
}

extern "C" wh_status wh__heap_destroy_device(wh_heap *h) {
    if (!(h->flags & WH__HEAP_REGION)) {
        WH_CUDA_TRY(cudaFree(h->arena_alloc));
        WH_CUDA_TRY(cudaFree(h->meta_alloc));
    }
    memset(h, 0, sizeof *h);
    return WH_OK;
}

static __global__ void trim_kernel(wh_heap h) { wh__seg_trim(&h); }

extern "C" wh_status wh__heap_trim_device(const wh_heap *h) {
    trim_kernel<<<1, 1>>>(*h);
    WH_LAUNCH_TRY();
    WH_CUDA_TRY(cudaDeviceSynchronize());
    return WH_OK;
}

extern "C" wh_status wh__heap_stats_device(const wh_heap *h, wh_heap_usage *s) {
    bool need_arena = h->end != 0; /* headers live in the arena */
    void *meta = malloc(h->meta_bytes), *arena = need_arena ? malloc(h->bytes) : NULL;
    if (!meta || (need_arena && !arena)) {
        free(meta);
        free(arena);
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "heap: no host memory to walk the heap");
    }
    wh_status st = WH_OK;
    cudaError_t e = cudaMemcpy(meta, h->meta_alloc, h->meta_bytes, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && need_arena) e = cudaMemcpy(arena, h->arena_alloc, h->bytes, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        st = wh__fail(WH_ERR_CUDA, "heap: copy for stats: %s", cudaGetErrorString(e));
    } else {
        wh_heap copy = *h;
        wh__heap_bind(&copy, arena ? arena : h->arena_alloc, meta);
        wh__heap_walk(&copy, s);
    }
    free(meta);
    free(arena);
    return st;
}
