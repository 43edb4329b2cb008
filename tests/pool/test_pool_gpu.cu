/* SPDX-License-Identifier: MIT */
/* Host pool on the CUDA backend (exits 77 without a GPU): blocks that kernels
 * fill and the host checks; stream order with a kernel that keeps a stream
 * busy (a block freed on it is reused on it at once, on another stream only
 * after the kernel: if the other stream does get it, the first stream must
 * be idle by then); record_stream; exhaustion under a cap; host threads on
 * their own streams; trim and destroy give everything back.  All of it twice:
 * growing by cudaMalloc arenas and by the driver's virtual-memory calls (one
 * range; trim unmaps, growth maps again: blocks must still hold data), and
 * with VMM, large blocks churning so that growth moves pieces. */
#include "warpheap/pool.h"
#include "warpheap/cuda_check.h"
#include "wh_cli.h"
#include "wh_test.h"

#include <pthread.h>
#include <vector>

__global__ void fill_kernel(uint32_t *p, size_t words, uint32_t value) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
        p[i] = value;
}

/* Busy for about `cycles` clock ticks, then write value to p[0]. */
__global__ void spin_kernel(uint32_t *p, long long cycles, uint32_t value) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    p[0] = value;
}

static const long long kSpin = 200000000ll; /* ~0.1 s at 1.98 GHz */

static void fill(void *p, size_t bytes, uint32_t v, cudaStream_t s) {
    fill_kernel<<<64, 256, 0, s>>>((uint32_t *)p, bytes / 4, v);
    WH_LAUNCH_OR_DIE();
}

static bool holds(const void *p, size_t bytes, uint32_t v) {
    std::vector<uint32_t> h(bytes / 4);
    WH_CUDA_OR_DIE(cudaMemcpy(h.data(), p, bytes / 4 * 4, cudaMemcpyDeviceToHost));
    for (uint32_t x : h)
        if (x != v) return false;
    return true;
}

static wh_pool_growth growth = WH_POOL_GROW_ARENAS;

static wh_pool *make(size_t cap) {
    wh_pool_config c = {};
    c.backend = WH_POOL_CUDA;
    c.max_bytes = cap;
    c.growth = growth;
    wh_pool *p = NULL;
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    CHECK(wh_pool_get_backend(p) == WH_POOL_CUDA);
    return p;
}

static void blocks_hold_data(void) {
    wh_pool *pool = make(0);
    std::vector<void *> v;
    std::vector<size_t> n;
    for (int i = 0; i < 200; ++i) {
        size_t bytes = 4 + (size_t)wh_hash64(i) % (i % 10 == 0 ? (8u << 20) : 4096u) / 4 * 4;
        void *p = wh_pool_alloc(pool, bytes, NULL);
        CHECK(p && ((uintptr_t)p & 255u) == 0);
        fill(p, bytes, 0xA0000000u + i, NULL);
        v.push_back(p);
        n.push_back(bytes);
    }
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    for (int i = 0; i < 200; ++i) CHECK(holds(v[i], n[i], 0xA0000000u + i)); /* no overlap */
    CHECK(wh_pool_check(pool) == WH_OK);
    for (int i = 0; i < 200; i += 2) CHECK(wh_pool_free(pool, v[i], NULL) == WH_OK);
    CHECK(wh_pool_trim(pool, 0) == WH_OK);
    for (int i = 1; i < 200; i += 2) CHECK(holds(v[i], n[i], 0xA0000000u + i));
    for (int i = 0; i < 200; i += 2) { /* refill what trim gave back */
        v[i] = wh_pool_alloc_aligned(pool, n[i], (size_t)4096 << (i % 8), NULL);
        CHECK(v[i] && ((uintptr_t)v[i] & ((4096u << (i % 8)) - 1)) == 0);
        fill(v[i], n[i], 0xB0000000u + i, NULL);
    }
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    for (int i = 0; i < 200; ++i) CHECK(holds(v[i], n[i], (i % 2 ? 0xA0000000u : 0xB0000000u) + i));
    CHECK(wh_pool_check(pool) == WH_OK);
    for (int i = 0; i < 200; i += 2) CHECK(wh_pool_free(pool, v[i], NULL) == WH_OK);
    for (int i = 1; i < 200; i += 2) CHECK(wh_pool_free(pool, v[i], NULL) == WH_OK);
    CHECK(wh_pool_trim(pool, 0) == WH_OK);
    wh_pool_stats s;
    wh_pool_get_stats(pool, &s);
    CHECK_EQ_U64(s.reserved, 0);
    CHECK(wh_pool_destroy(pool) == WH_OK);
}

static void stream_order(void) {
    wh_pool *pool = make(0);
    cudaStream_t a, b;
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    const size_t n = 1u << 20;
    void *p = wh_pool_alloc(pool, n, a);
    spin_kernel<<<1, 1, 0, a>>>((uint32_t *)p, kSpin, 1);
    WH_LAUNCH_OR_DIE();
    CHECK(wh_pool_free(pool, p, a) == WH_OK);
    CHECK(wh_pool_alloc(pool, n, a) == p); /* same stream: at once */
    CHECK(wh_pool_free(pool, p, a) == WH_OK);
    /* the kernel was long enough: still running when b asks (asked after the
     * allocation, the check failed with the range growth, whose driver calls
     * may outlast the spin -- or wait for the device, reported below) */
    CHECK(cudaStreamQuery(a) == cudaErrorNotReady);
    void *q = wh_pool_alloc(pool, n, b);
    CHECK(q != NULL);
    CHECK(q != p || cudaStreamQuery(a) == cudaSuccess); /* never before a's kernel ends */
    printf("stream order: a's kernel %s when b's allocation returned\n",
           cudaStreamQuery(a) == cudaErrorNotReady ? "still running" : "finished");
    WH_CUDA_OR_DIE(cudaStreamSynchronize(a));
    CHECK(wh_pool_free(pool, q, b) == WH_OK);

    /* record_stream: allocated on a, used by a kernel on b */
    void *r = wh_pool_alloc(pool, n, a);
    spin_kernel<<<1, 1, 0, b>>>((uint32_t *)r, kSpin, 2);
    WH_LAUNCH_OR_DIE();
    CHECK(wh_pool_record_stream(pool, r, b) == WH_OK);
    CHECK(wh_pool_free(pool, r, a) == WH_OK);
    void *r2 = wh_pool_alloc(pool, n, a);
    CHECK(r2 != r || cudaStreamQuery(b) == cudaSuccess);
    CHECK(cudaStreamQuery(b) == cudaErrorNotReady);
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    uint32_t first;
    WH_CUDA_OR_DIE(cudaMemcpy(&first, r, 4, cudaMemcpyDeviceToHost));
    CHECK(first == 2 || r2 == r);
    CHECK(wh_pool_free(pool, r2, a) == WH_OK);
    wh_pool_stats s;
    CHECK(wh_pool_trim(pool, 0) == WH_OK);
    wh_pool_get_stats(pool, &s);
    CHECK_EQ_U64(s.pending, 0);
    CHECK_EQ_U64(s.reserved, 0);
    CHECK(wh_pool_check(pool) == WH_OK);
    CHECK(wh_pool_forget_stream(pool, a) == WH_OK && wh_pool_forget_stream(pool, b) == WH_OK);
    wh_pool_destroy(pool);
    WH_CUDA_OR_DIE(cudaStreamDestroy(a));
    WH_CUDA_OR_DIE(cudaStreamDestroy(b));
}

static void exhaustion(void) {
    const size_t cap = 64u << 20;
    wh_pool *pool = make(cap);
    std::vector<void *> v;
    void *p;
    while (v.size() < 1000 && (p = wh_pool_alloc(pool, 3u << 20, NULL)) != NULL) v.push_back(p);
    CHECK(v.size() >= 18 && v.size() < 1000);
    CHECK(strstr(wh_last_error(), "pool exhausted") != NULL);
    printf("exhaustion message: %s\n", wh_last_error());
    CHECK(wh_pool_alloc(pool, cap * 2, NULL) == NULL);
    for (void *x : v) CHECK(wh_pool_free(pool, x, NULL) == WH_OK);
    p = wh_pool_alloc(pool, 40u << 20, NULL); /* needs a trim of cached arenas */
    CHECK(p != NULL);
    CHECK(wh_pool_free(pool, p, NULL) == WH_OK);
    CHECK(wh_pool_check(pool) == WH_OK);
    wh_pool_destroy(pool);
}

static wh_pool *shared;
static void thread_body(unsigned t, void *arg) {
    (void)arg;
    cudaStream_t s;
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *keep[16] = {0};
    for (int i = 0; i < 3000; ++i) {
        uint64_t r = wh_hash64(((uint64_t)t << 32) + i);
        int k = (int)(r % 16);
        if (keep[k]) {
            CHECK(wh_pool_free(shared, keep[k], s) == WH_OK);
            keep[k] = NULL;
        } else {
            size_t n = 4 + (r >> 8) % 100000 / 4 * 4;
            keep[k] = r % 5 ? wh_pool_alloc(shared, n, s)
                            : wh_pool_alloc_tagged(shared, n, (void *)(uintptr_t)(r % 4 + 1), s);
            CHECK(keep[k] != NULL);
            if (keep[k]) WH_CUDA_OR_DIE(cudaMemsetAsync(keep[k], (int)t, n, s));
        }
    }
    for (int k = 0; k < 16; ++k) CHECK(wh_pool_free(shared, keep[k], s) == WH_OK);
    CHECK(wh_pool_forget_stream(shared, s) == WH_OK); /* before the handle dies */
    WH_CUDA_OR_DIE(cudaStreamDestroy(s));
}

static void threads(void) {
    shared = make(0);
    wh_run_threads(8, thread_body, NULL);
    wh_pool_stats s;
    wh_pool_get_stats(shared, &s);
    CHECK_EQ_U64(s.in_use, 0);
    CHECK(s.allocs == s.frees && s.allocs > 8000);
    CHECK(wh_pool_check(shared) == WH_OK);
    CHECK(wh_pool_trim(shared, 0) == WH_OK);
    wh_pool_get_stats(shared, &s);
    CHECK_EQ_U64(s.reserved, 0);
    wh_pool_destroy(shared);
}

/* The default growth on a GPU whose driver has the virtual-memory calls is
 * the range: one arena at create, nothing backed, a block that holds data. */
/* Counts the words of p that are not value into *bad. */
__global__ void check_kernel(const uint32_t *p, size_t words, uint32_t value, unsigned *bad) {
    unsigned n = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
        n += p[i] != value;
    if (n) atomicAdd(bad, n);
}

/* VMM growth with large blocks churning under a live-bytes cap: past the
 * budget, growth moves whole pieces from free blocks to new addresses (the
 * same physical memory mapped elsewhere).  Every live block is filled by a
 * kernel and checked on the device before it is freed and at the end: a
 * piece moved from under a live block, or from under a free block whose
 * check kernel is still running, would fault or lose its words. */
static void moves_hold_data(bool small) {
    wh_pool *pool = make(0);
    const int steps = small ? 300 : 600;
    const uint64_t max = (small ? 128ull : 256ull) << 20, cap = (small ? 1ull : 4ull) << 30;
    std::vector<void *> v;
    std::vector<size_t> n;
    std::vector<uint32_t> val;
    unsigned *bad = NULL;
    WH_CUDA_OR_DIE(cudaMalloc(&bad, sizeof *bad));
    WH_CUDA_OR_DIE(cudaMemset(bad, 0, sizeof *bad));
    uint64_t bytes = 0;
    for (int i = 0; i < steps; ++i) {
        uint64_t x = wh_hash64((uint64_t)i * 7 + 1), size = 4 + x % max / 4 * 4;
        /* Only blocks whose work is done may move (an unmap is immediate):
         * every other step waits, so that there are such blocks, and the
         * steps between run with kernels in flight on the others. */
        if (i % 2 == 0) WH_CUDA_OR_DIE(cudaDeviceSynchronize());
        if (v.empty() || ((x >> 33) % 100 < 60 && bytes + size < cap)) {
            void *p = wh_pool_alloc(pool, size, NULL);
            CHECK(p != NULL);
            if (!p) break;
            fill(p, size, 0xC0000000u + i, NULL);
            v.push_back(p);
            n.push_back(size);
            val.push_back(0xC0000000u + i);
            bytes += size;
        } else {
            size_t k = wh_hash64(x) % v.size();
            check_kernel<<<1024, 256>>>((const uint32_t *)v[k], n[k] / 4, val[k], bad);
            WH_LAUNCH_OR_DIE();
            CHECK(wh_pool_free(pool, v[k], NULL) == WH_OK);
            bytes -= n[k];
            v[k] = v.back(), n[k] = n.back(), val[k] = val.back();
            v.pop_back(), n.pop_back(), val.pop_back();
        }
    }
    for (size_t k = 0; k < v.size(); ++k) {
        check_kernel<<<1024, 256>>>((const uint32_t *)v[k], n[k] / 4, val[k], bad);
        WH_LAUNCH_OR_DIE();
    }
    unsigned h = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(h == 0);
    wh_pool_stats s;
    wh_pool_get_stats(pool, &s);
    printf("moves: %llu pieces moved, %llu mapped, %llu unmapped, peak reserved / peak in use %.3f, %d steps\n",
           (unsigned long long)s.moves, (unsigned long long)s.arena_allocs, (unsigned long long)s.arena_frees,
           (double)s.reserved_peak / (double)s.in_use_peak, steps);
    CHECK(s.moves > 0);
    CHECK(wh_pool_check(pool) == WH_OK);
    for (void *p : v) CHECK(wh_pool_free(pool, p, NULL) == WH_OK);
    CHECK(wh_pool_trim(pool, 0) == WH_OK);
    wh_pool_get_stats(pool, &s);
    CHECK_EQ_U64(s.reserved, 0);
    WH_CUDA_OR_DIE(cudaFree(bad));
    CHECK(wh_pool_destroy(pool) == WH_OK);
}

static void default_growth(void) {
    wh_pool *p = NULL;
    CHECK(wh_pool_create(&p, NULL) == WH_OK);
    wh_pool_stats s;
    wh_pool_get_stats(p, &s);
    printf("default growth: %s\n", s.arenas == 1 ? "vmm" : "arenas");
    CHECK(s.arenas == 1 && s.reserved == 0);
    void *x = wh_pool_alloc(p, 3u << 20, 0);
    CHECK(x != NULL);
    if (x) {
        CHECK(cudaMemset(x, 0x5a, 3u << 20) == cudaSuccess);
        unsigned char h = 0;
        CHECK(cudaMemcpy(&h, (char *)x + (3u << 20) - 1, 1, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK(h == 0x5a);
        CHECK(wh_pool_free(p, x, 0) == WH_OK);
    }
    CHECK(wh_pool_check(p) == WH_OK);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* Two GPUs that can reach each other: a block of device 0's pool is
 * copied to device 1 and read there by a kernel, as cudaMalloc memory can
 * be: the pool maps its memory for the peers too.  Skipped with one GPU. */
static void peers(void) {
    int count = 0, can = 0;
    WH_CUDA_OR_DIE(cudaGetDeviceCount(&count));
    if (count >= 2) WH_CUDA_OR_DIE(cudaDeviceCanAccessPeer(&can, 1, 0));
    if (!can) {
        printf("peers: skipped (%s)\n", count >= 2 ? "device 1 cannot reach device 0" : "one GPU");
        return;
    }
    const size_t bytes = 5u << 20;
    WH_CUDA_OR_DIE(cudaSetDevice(0));
    wh_pool *pool = make(0);
    void *x = wh_pool_alloc(pool, bytes, NULL);
    CHECK(x != NULL);
    if (!x) {
        CHECK(wh_pool_destroy(pool) == WH_OK);
        return;
    }
    fill(x, bytes, 0xD0D0u, NULL);
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    WH_CUDA_OR_DIE(cudaSetDevice(1));
    void *y = NULL;
    unsigned *bad = NULL, h[2] = {0, 0};
    WH_CUDA_OR_DIE(cudaMalloc(&y, bytes));
    WH_CUDA_OR_DIE(cudaMalloc(&bad, 2 * sizeof *bad));
    WH_CUDA_OR_DIE(cudaMemset(bad, 0, 2 * sizeof *bad));
    CHECK(cudaMemcpyPeer(y, 1, x, 0, bytes) == cudaSuccess);
    check_kernel<<<256, 256>>>((const uint32_t *)y, bytes / 4, 0xD0D0u, bad);
    WH_LAUNCH_OR_DIE();
    check_kernel<<<256, 256>>>((const uint32_t *)x, bytes / 4, 0xD0D0u, bad + 1); /* device 1 reads device 0's */
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    WH_CUDA_OR_DIE(cudaMemcpy(h, bad, sizeof h, cudaMemcpyDeviceToHost));
    printf("peers (%s growth): copy to device 1: %u wrong words; read from device 1: %u wrong words\n",
           growth == WH_POOL_GROW_VMM ? "vmm" : "arenas", h[0], h[1]);
    CHECK(h[0] == 0 && h[1] == 0);
    WH_CUDA_OR_DIE(cudaFree(y));
    WH_CUDA_OR_DIE(cudaFree(bad));
    WH_CUDA_OR_DIE(cudaSetDevice(0));
    CHECK(wh_pool_free(pool, x, NULL) == WH_OK);
    CHECK(wh_pool_destroy(pool) == WH_OK);
}

int main(int argc, char **argv) {
    bool small = false;
    wh_cli_opt cli[] = {WH_CLI_FLAG("small", &small, "the sanitizers' size: no host threads, fewer moves"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Host pool on the CUDA backend, growing by cudaMalloc arenas and by VMM.");
    if (!wh_cuda_available()) return WH_TEST_SKIP;
    default_growth();
    for (int g = 0; g < 2; ++g) {
        growth = g ? WH_POOL_GROW_VMM : WH_POOL_GROW_ARENAS;
        printf("growth: %s\n", g ? "vmm" : "arenas");
        blocks_hold_data();
        stream_order();
        exhaustion();
        if (!small) threads();
    }
    growth = WH_POOL_GROW_VMM;
    peers();
    moves_hold_data(small);
    if (wh_test_failures) fprintf(stderr, "last error: %s\n", wh_last_error());
    return wh_test_finish("test_pool_gpu");
}
