/* SPDX-License-Identifier: MIT */
/* Hierarchical bitmap, device side: fill, count and indices() -- DynaSOAr
 * section 4.1.5, Alg. 5 -- on a bitmap in device memory. */
#include "warpheap/bitmap_cuda.h"
#include "warpheap/cuda_check.h"

#include <stdlib.h>

static const unsigned kThreads = 256;

static unsigned grid_for(uint64_t items) {
    uint64_t blocks = (items + kThreads - 1) / kThreads;
    return (unsigned)(blocks < 1 ? 1 : blocks > 4096 ? 4096 : blocks);
}

static __global__ void fill_kernel(wh_bitmap bm, bool ones) {
    uint32_t total = bm.offset[bm.levels - 1] + 1u;
    for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < total; g += gridDim.x * blockDim.x) {
        uint32_t l = 0;
        while (l + 1 < bm.levels && g >= bm.offset[l + 1]) ++l;
        bm.words[g] = wh_bitmap_fill_word(&bm, l, g - bm.offset[l], ones);
    }
}

extern "C" wh_status wh_bitmap_init_device(wh_bitmap *bm, void *d_mem, uint64_t nbits, bool ones, cudaStream_t stream) {
    if (!d_mem) return WH_ERR_INVALID_ARGUMENT;
    wh_status st = wh_bitmap_layout(bm, d_mem, nbits);
    if (st != WH_OK) return st;
    fill_kernel<<<grid_for(wh_bitmap_words_for(nbits)), kThreads, 0, stream>>>(*bm, ones);
    WH_LAUNCH_TRY();
    return WH_OK;
}

static __global__ void count_kernel(wh_bitmap bm, unsigned long long *count) {
    uint32_t words = wh_bitmap_level_words(&bm, 0);
    unsigned long long n = 0;
    for (uint32_t w = blockIdx.x * blockDim.x + threadIdx.x; w < words; w += gridDim.x * blockDim.x)
        n += (unsigned long long)__popcll(bm.words[w]);
    for (int d = 16; d > 0; d /= 2) n += __shfl_down_sync(0xffffffffu, n, d);
    if ((threadIdx.x & 31u) == 0) atomicAdd(count, n);
}

extern "C" wh_status wh_bitmap_count_device(const wh_bitmap *bm, unsigned long long *d_count, cudaStream_t stream) {
    if (!bm || !d_count) return WH_ERR_INVALID_ARGUMENT;
    WH_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof *d_count, stream));
    count_kernel<<<grid_for(wh_bitmap_level_words(bm, 0)), kThreads, 0, stream>>>(*bm, d_count);
    WH_LAUNCH_TRY();
    return WH_OK;
}

/* One level of Alg. 5: every selected container of level l (sel == NULL: the
 * single top word) appends the indices of its set bits to out, reserving its
 * run with one atomic add.  The selection's length is read on the device, so
 * no level waits for the host. */
static __global__ void indices_kernel(wh_bitmap bm, uint32_t l, const uint32_t *sel, const uint32_t *sel_count,
                                      uint32_t *out, uint32_t *out_count) {
    uint32_t n = sel ? *sel_count : 1u;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        uint32_t c = sel ? sel[i] : 0u;
        uint64_t w = *wh_bitmap_word(&bm, l, c);
        if (!w) continue;
        uint32_t pos = atomicAdd(out_count, (uint32_t)__popcll(w));
        for (; w; w &= w - 1) out[pos++] = c * 64u + (uint32_t)(__ffsll((long long)w) - 1);
    }
}

/* Scratch: two selection buffers of one level-0 word count each (no level
 * below the top selects more containers than level 0 has words), then one
 * counter per level. */
extern "C" size_t wh_bitmap_indices_scratch_bytes(uint64_t nbits) {
    wh_bitmap bm;
    if (wh_bitmap_layout(&bm, NULL, nbits) != WH_OK) return 0;
    return 2u * (size_t)wh_bitmap_level_words(&bm, 0) * sizeof(uint32_t) + WH_BITMAP_MAX_LEVELS * sizeof(uint32_t);
}

extern "C" wh_status wh_bitmap_indices_device(const wh_bitmap *bm, uint32_t *d_out, uint32_t *d_count, void *d_scratch,
                                              cudaStream_t stream) {
    if (!bm || !d_out || !d_count || !d_scratch) return WH_ERR_INVALID_ARGUMENT;
    uint32_t words0 = wh_bitmap_level_words(bm, 0);
    uint32_t *buf[2] = {(uint32_t *)d_scratch, (uint32_t *)d_scratch + words0};
    uint32_t *counters = (uint32_t *)d_scratch + 2u * words0;
    WH_CUDA_TRY(cudaMemsetAsync(counters, 0, WH_BITMAP_MAX_LEVELS * sizeof(uint32_t), stream));
    WH_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof *d_count, stream));
    const uint32_t *sel = NULL, *sel_count = NULL;
    for (int l = (int)bm->levels - 1; l >= 0; --l) {
        uint32_t *out = l == 0 ? d_out : buf[l & 1];
        uint32_t *out_count = l == 0 ? d_count : counters + l;
        /* at most as many selected containers as the level has words */
        indices_kernel<<<grid_for(wh_bitmap_level_words(bm, (uint32_t)l)), kThreads, 0, stream>>>(
            *bm, (uint32_t)l, sel, sel_count, out, out_count);
        WH_LAUNCH_TRY();
        sel = out;
        sel_count = out_count;
    }
    return WH_OK;
}

extern "C" wh_status wh_bitmap_check_device(const wh_bitmap *bm, uint64_t *bad, uint64_t *count, cudaStream_t stream) {
    if (!bm) return WH_ERR_INVALID_ARGUMENT;
    size_t bytes = wh_bitmap_bytes(bm->nbits);
    void *host = malloc(bytes);
    if (!host) return wh__fail(WH_ERR_OUT_OF_MEMORY, "%zu bytes for a host copy of the bitmap", bytes);
    cudaError_t e = cudaMemcpyAsync(host, bm->words, bytes, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        free(host);
        return wh__fail(WH_ERR_CUDA, "copying the bitmap back: %s", cudaGetErrorString(e));
    }
    wh_bitmap h = wh_bitmap_rebase(bm, host);
    if (bad) *bad = wh_bitmap_check_host(&h);
    if (count) *count = wh_bitmap_count_host(&h);
    free(host);
    return WH_OK;
}
