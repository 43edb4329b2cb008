/* SPDX-License-Identifier: MIT */
/* compute-sanitizer sees inside the pool (src/pool/pool_nvtx.c; exits 77
 * without a GPU).  With no mode: blocks of both growths (cudaMalloc arenas,
 * the VMM range) on two streams, each filled by a kernel up to its request
 * and copied back, then trim and destroy -- under memcheck this must report
 * nothing.  Modes that a memcheck run must report (scripts/sanitize.d/pool.txt):
 *   overflow GROWTH        a kernel writes one float past a block of 1000 floats
 *   use-after-free GROWTH  a kernel writes to a block after its free
 * (GROWTH: arenas or vmm; compute-sanitizer reports only with arenas, as it
 * refuses the VMM range as a heap).  Without a tool these write only into memory the
 * pool holds and nobody uses: the rounding past the request, a freed block
 * kept for its size class. */
#include "warpheap/pool.h"
#include "warpheap/cuda_check.h"
#include "wh_test.h"

#include <string.h>
#include <vector>

__global__ void fill_kernel(float *x, size_t n, float v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) x[i] = v;
}

static void fill(float *x, size_t n, float v, cudaStream_t s) {
    fill_kernel<<<32, 256, 0, s>>>(x, n, v);
    WH_LAUNCH_OR_DIE();
}

static wh_pool *make(wh_pool_growth growth) {
    wh_pool_config c = {};
    c.backend = WH_POOL_CUDA;
    c.growth = growth;
    wh_pool *p = NULL;
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    return p;
}

/* Every block filled exactly up to its request and read back. */
static void in_bounds(wh_pool_growth growth) {
    wh_pool *p = make(growth);
    cudaStream_t s[2];
    for (cudaStream_t &x : s) WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    const size_t sizes[] = {1, 63, 1000, 4096, 100000, 3 << 20, 9 << 20};
    const int nblocks = (int)(sizeof sizes / sizeof sizes[0]);
    float *x[2 * nblocks];
    for (int i = 0; i < 2 * nblocks; ++i) {
        size_t n = sizes[i % nblocks];
        CHECK((x[i] = (float *)wh_pool_alloc(p, n * sizeof(float), s[i & 1])) != NULL);
        fill(x[i], n, (float)i, s[i & 1]);
    }
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    for (int i = 0; i < 2 * nblocks; ++i) {
        size_t n = sizes[i % nblocks];
        std::vector<float> h(n);
        WH_CUDA_OR_DIE(cudaMemcpy(h.data(), x[i], n * sizeof(float), cudaMemcpyDeviceToHost));
        size_t wrong = 0;
        for (float v : h) wrong += v != (float)i;
        CHECK(wrong == 0);
        CHECK(wh_pool_free(p, x[i], s[i & 1]) == WH_OK);
    }
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    CHECK(wh_pool_check(p) == WH_OK);
    for (cudaStream_t x : s) {
        CHECK(wh_pool_forget_stream(p, x) == WH_OK);
        WH_CUDA_OR_DIE(cudaStreamDestroy(x));
    }
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* The error a memcheck run reports; the block stays the pool's. */
static void bad_write(wh_pool_growth growth, bool after_free) {
    wh_pool *p = make(growth);
    const size_t n = 1000; /* 4000 B: the block is rounded to 4096, the write stays inside it */
    float *x = (float *)wh_pool_alloc(p, n * sizeof(float), NULL);
    CHECK(x != NULL);
    if (after_free) {
        CHECK(wh_pool_free(p, x, NULL) == WH_OK);
        printf("writing %zu floats into the freed block at %p\n", n, (void *)x);
        fill(x, n, 1.0f, NULL);
    } else {
        printf("writing float %zu of a block of %zu at %p (one past its request)\n", n, n, (void *)x);
        fill(x, n + 1, 1.0f, NULL);
    }
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    if (!after_free) CHECK(wh_pool_free(p, x, NULL) == WH_OK);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

int main(int argc, char **argv) {
    if (!wh_cuda_available()) return WH_TEST_SKIP;
    const char *mode = argc > 1 ? argv[1] : "";
    wh_pool_growth growth = argc > 2 && !strcmp(argv[2], "vmm") ? WH_POOL_GROW_VMM : WH_POOL_GROW_ARENAS;
    if (!strcmp(mode, "overflow") || !strcmp(mode, "use-after-free")) {
        bad_write(growth, !strcmp(mode, "use-after-free"));
    } else if (!*mode) {
        in_bounds(WH_POOL_GROW_ARENAS);
        in_bounds(WH_POOL_GROW_VMM);
    } else {
        fprintf(stderr, "usage: %s [overflow|use-after-free [arenas|vmm]]\n", argv[0]);
        return 2;
    }
    return wh_test_finish("test_pool_nvtx_gpu");
}
