/* SPDX-License-Identifier: MIT */
/* Object allocator, device side of the host API: heap memory and its
 * initialisation, and the preparation of a parallel_do (DynaSOAr section 3.7):
 * enumerate the allocated blocks of a type (Alg. 5) and snapshot their slot
 * bitmaps as the iteration bitmaps, in one launch.  Everything is enqueued on
 * the default stream; the host does not wait. */
#include "soa_internal.h"
#include "warpheap/bitmap_cuda.h"
#include "warpheap/cuda_check.h"

static const unsigned kThreads = WH__SOA_DO_BLOCK; /* the do-all's thread block, for every kernel here */

static unsigned grid_for(uint64_t n) {
    uint64_t g = (n + kThreads - 1) / kThreads;
    return (unsigned)(g < 1 ? 1 : g > 65535 ? 65535 : g);
}
/* Thread blocks of a do-all (soa->do_threads threads, at least one block). */
static unsigned do_grid(const wh_soa *soa) { return soa->do_threads / kThreads ? soa->do_threads / kThreads : 1u; }

extern "C" wh_status wh__soa_dev_alloc(void **mem, size_t bytes) {
    if (wh__fault()) return wh__fail(WH_ERR_OUT_OF_MEMORY, "soa: cudaMalloc of %zu bytes refused", bytes);
    WH_CUDA_TRY(cudaMalloc(mem, bytes));
    return WH_OK;
}
extern "C" wh_status wh__soa_dev_free(void *mem) {
    WH_CUDA_TRY(cudaFree(mem));
    return WH_OK;
}
extern "C" wh_status wh__soa_dev_to_host(void *dst, const void *src, size_t bytes) {
    WH_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return WH_OK;
}
extern "C" wh_status wh__soa_dev_copy(void *dst, const void *src, size_t bytes) {
    WH_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
    return WH_OK;
}
extern "C" wh_status wh__soa_dev_zero(void *dst, size_t bytes) {
    WH_CUDA_TRY(cudaMemset(dst, 0, bytes));
    return WH_OK;
}
extern "C" uint32_t wh__soa_dev_threads(void) {
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 64u * 1024u;
    }
    return (uint32_t)sms * (uint32_t)per_sm / kThreads * kThreads;
}

extern "C" uint32_t wh__soa_dev_early(void) {
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return major >= 9;
}

static __global__ void init_blocks_kernel(wh_soa s) {
    for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < s.nblocks; b += gridDim.x * blockDim.x) {
        *wh__soa_alloc_word(&s, b) = ~0ull; /* free: no slot can be reserved */
        *wh__soa_type_word(&s, b) = ~0u;
    }
}

extern "C" wh_status wh__soa_dev_init(const wh_soa *soa) {
    WH_CUDA_TRY(cudaMemset(soa->counters, 0, WH_SOA_HEADER_AREA));
    WH_CUDA_TRY(cudaMemset(soa->do_count, 0, WH_SOA_DO_COUNTERS * sizeof *soa->do_count));
    WH_CUDA_TRY(cudaMemset(soa->homes, 0xFF, wh__soa_homes_bytes(soa->ntypes, soa->home_mask)));
    init_blocks_kernel<<<grid_for(soa->nblocks), kThreads>>>(*soa);
    WH_LAUNCH_TRY();
    wh_bitmap bm;
    wh_status st = wh_bitmap_init_device(&bm, soa->free_blocks.words, soa->nblocks, true, 0);
    for (uint32_t t = 0; st == WH_OK && t < soa->ntypes; ++t) {
        st = wh_bitmap_init_device(&bm, soa->alloc_blocks[t].words, soa->nblocks, false, 0);
        if (st == WH_OK) st = wh_bitmap_init_device(&bm, soa->active_blocks[t].words, soa->nblocks, false, 0);
    }
    if (st != WH_OK) return st;
    WH_CUDA_TRY(cudaDeviceSynchronize());
    return WH_OK;
}

/* Alg. 5 and the snapshot in one pass.  In each round a thread block takes
 * eight consecutive level-0 words of the type's allocation bitmap, a warp
 * each (a word whose summary bit is clear counts as empty); the warps' block
 * counts are summed in shared memory and the thread block reserves their
 * places in do_blocks with one atomic add (an atomic per word, all on one
 * counter, queued at L2 behind each other); then each lane writes the index
 * and, beside it, the iteration bitmap (slot bitmap restricted to real
 * slots) of one block.  The last thread block to finish publishes the count
 * and the snapshot's type, and clears the counters for the next preparation:
 * nothing is reset between launches and the host never waits.  No kernel
 * that changes the bitmaps runs meanwhile (stream order), so plain loads see
 * a consistent bitmap.
 * The do-all kernel may be launched as soon as every thread block here has
 * started (programmatic dependent launch, sm_90): it waits for this grid's
 * completion before it reads anything (wh__soa_do_wait). */
enum { kWarps = kThreads / 32u };
static __global__ void __launch_bounds__(kThreads) enumerate_kernel(wh_soa s, uint32_t t) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    __shared__ uint32_t counts[kWarps], base_of_block;
    const wh_bitmap *bm = &s.alloc_blocks[t];
    uint32_t words = wh_bitmap_level_words(bm, 0), lane = threadIdx.x & 31u, warp = threadIdx.x / 32u;
    uint64_t usable = wh__soa_usable(s.cap[t]);
    uint32_t *ctr = s.do_count; /* the count, places taken, thread blocks done */
    for (uint32_t w0 = blockIdx.x * kWarps; w0 < words; w0 += gridDim.x * kWarps) { /* uniform in the block */
        uint32_t w = w0 + warp;
        uint64_t x = 0;
        if (w < words && (bm->levels < 2 || ((*wh_bitmap_word(bm, 1, w >> 6) >> (w & 63u)) & 1u)))
            x = *wh_bitmap_word(bm, 0, w); /* the same for the whole warp */
        if (lane == 0) counts[warp] = (uint32_t)__popcll(x);
        __syncthreads();
        if (threadIdx.x == 0) {
            uint32_t sum = 0;
            for (uint32_t k = 0; k < kWarps; ++k) {
                uint32_t c = counts[k];
                counts[k] = sum; /* exclusive prefix: this warp's first place in the block's share */
                sum += c;
            }
            base_of_block = sum ? atomicAdd(&ctr[1], sum) : 0u;
        }
        __syncthreads();
        uint32_t base = base_of_block + counts[warp];
        for (uint32_t bit = lane; bit < 64u; bit += 32u) {
            if (!((x >> bit) & 1u)) continue;
            uint32_t b = w * 64u + bit, k = base + (uint32_t)__popcll(x & ((1ull << bit) - 1u));
            s.do_blocks[k] = b;
            s.do_iter[k] = *wh__soa_alloc_word(&s, b) & usable;
        }
        __syncthreads(); /* counts and base_of_block are read before the next round writes them */
    }
    if (threadIdx.x == 0) {
        __threadfence(); /* this block's places are taken before its ticket */
        if (atomicInc(&ctr[2], gridDim.x - 1u) == gridDim.x - 1u) {
            ctr[0] = atomicExch(&ctr[1], 0u);
            ctr[WH__SOA_DO_TYPE] = t + 1u;
        }
    }
}

static wh_status prepare(const wh_soa *soa, uint32_t t) {
    /* eight level-0 words a thread block, at most the fixed grid of the
     * do-all: the cost follows the objects, not the heap size (Fig. 14b) */
    unsigned grid = grid_for((uint64_t)wh_bitmap_level_words(&soa->alloc_blocks[t], 0) * 32u);
    if (grid > do_grid(soa)) grid = do_grid(soa);
    enumerate_kernel<<<grid, kThreads>>>(*soa, t);
    WH_LAUNCH_TRY();
    return WH_OK;
}

extern "C" wh_status wh__soa_do_device(const void *kernel, const wh_soa *soa, uint32_t t, const void *ctx, int again) {
    if (!soa || t >= soa->ntypes) return WH_ERR_INVALID_ARGUMENT;
    if (!again) {
        wh_status st = prepare(soa, t);
        if (st != WH_OK) return st;
    }
    uint32_t type = t;
    void *args[3] = {(void *)soa, &type, (void *)ctx};
    cudaLaunchAttribute early;
    early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    early.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(do_grid(soa));
    cfg.blockDim = dim3(kThreads);
    cfg.attrs = &early;
    cfg.numAttrs = soa->do_early ? 1u : 0u;
    WH_CUDA_TRY(cudaLaunchKernelExC(&cfg, kernel, args));
    return WH_OK;
}

static __global__ void usage_kernel(wh_soa s, unsigned long long *out) {
    unsigned long long o = 0, n = 0;
    for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < s.nblocks; b += gridDim.x * blockDim.x) {
        if (wh_bitmap_get(&s.free_blocks, b)) continue;
        uint32_t t = *wh__soa_type_word(&s, b);
        if (t >= s.ntypes || !s.cap[t]) continue;
        o += (unsigned long long)__popcll(*wh__soa_alloc_word(&s, b) & wh__soa_usable(s.cap[t]));
        n += s.cap[t];
    }
    for (int d = 16; d > 0; d /= 2) {
        o += __shfl_down_sync(0xffffffffu, o, d);
        n += __shfl_down_sync(0xffffffffu, n, d);
    }
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&out[0], o);
        atomicAdd(&out[1], n);
    }
}

extern "C" wh_status wh__soa_dev_usage(const wh_soa *soa, uint64_t *objects, uint64_t *slots) {
    unsigned long long *d, h[2];
    WH_CUDA_TRY(cudaMalloc(&d, sizeof h));
    WH_CUDA_TRY(cudaMemset(d, 0, sizeof h));
    usage_kernel<<<grid_for(soa->nblocks), kThreads>>>(*soa, d);
    WH_LAUNCH_TRY();
    WH_CUDA_TRY(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    WH_CUDA_TRY(cudaFree(d));
    *objects = h[0];
    *slots = h[1];
    return WH_OK;
}
