/* SPDX-License-Identifier: MIT */
/* Platform layer on the GPU: the shared checks in a kernel, warp operations
 * with full and divergent masks, and atomics from a full grid. */
#include "platform_checks.h"
#include "warpheap/cuda_check.h"
#include "warpheap/warpheap.h"
#include "wh_test.h"

static __global__ void checks_kernel(uint64_t *w64, uint32_t *w32, uint32_t *fails) {
    *fails = wh_platform_checks(w64, w32);
}

/* Per lane: bit 0 lane id, 1 ballot, 2 shfl32, 3 shfl64, 4 match/leader/rank in
 * a divergent branch, 5 active mask contains self, 6 a group's ballot holds
 * only its own lanes while other groups run the same ballot beside it. */
static __global__ void warp_kernel(uint32_t *bad) {
    uint32_t lane = wh_lane_id(), b = 0;
    if (lane != (threadIdx.x & 31u)) b |= 1;
    if (wh_ballot(0xffffffffu, lane & 1u) != 0xAAAAAAAAu) b |= 2;
    if (wh_shfl32(0xffffffffu, lane * 3u, (lane + 1u) & 31u) != ((lane + 1u) & 31u) * 3u) b |= 4;
    uint64_t big = (uint64_t)lane << 40 | lane;
    if (wh_shfl64(0xffffffffu, big, 5) != ((uint64_t)5 << 40 | 5)) b |= 8;
    uint32_t half = wh_match_any64(0xffffffffu, lane / 16u), odd = wh_match_any64(0xffffffffu, lane & 1u);
    if (wh_ballot(half, true) != half || wh_ballot(odd, true) != odd) b |= 64;
    if (lane % 3u != 1u) { /* diverge */
        uint32_t mask = wh_active_mask();
        if (!(mask >> lane & 1u)) b |= 32;
        uint64_t key = lane % 4u; /* groups by key */
        uint32_t group = wh_match_any64(mask, key);
        uint32_t leader = wh_leader(group);
        uint64_t leader_key = wh_shfl64(mask, key, leader);
        if (leader_key != key || (leader % 4u) != key) b |= 16;
        /* ranks within the group are 0..n-1, each once */
        uint32_t rank = wh_rank(group);
        uint32_t ranks = 0;
        for (uint32_t l = 0; l < 32; ++l)
            if (group >> l & 1u) ranks |= 1u << wh_shfl32(mask, rank, l);
        if (ranks != (1u << wh_popc32(group)) - 1u && wh_popc32(group) < 32) b |= 16;
        if (wh_is_leader(group) != (lane == leader)) b |= 16;
        if (wh_ballot(group, true) != group) b |= 64;
    }
    bad[blockIdx.x * blockDim.x + threadIdx.x] = b;
}

/* g: the global-memory forms of the heap (wh__atomic_*64), under contention:
 * an add of 3, an or and an and-not by every thread. */
static __global__ void atomics_kernel(uint64_t *c64, uint32_t *c32, uint64_t *orw, uint64_t *mx, uint64_t *g) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    wh_atomic_fetch_add(c64, 1ull, WH_RELAXED);
    wh_atomic_fetch_add(c32, 1u, WH_RELAXED);
    wh_atomic_fetch_or(orw, 1ull << (t & 63u), WH_ACQ_REL);
    wh_atomic_fetch_max(mx, (uint64_t)t, WH_RELAXED);
    (void)wh__atomic_add64(&g[0], 3ull, WH_ACQUIRE);
    (void)wh__atomic_or64(&g[1], 1ull << ((t + 7u) & 63u), WH_RELEASE);
    (void)wh__atomic_and64(&g[2], ~(1ull << (t & 63u)), WH_SEQ_CST);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Platform layer on the GPU.");
    if (!wh_cuda_available()) {
        printf("test_platform_gpu: no GPU, skipped\n");
        return WH_TEST_SKIP;
    }
    uint64_t *d64;
    uint32_t *d32, *dfail;
    WH_CUDA_OR_DIE(cudaMalloc(&d64, 4 * sizeof(uint64_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&d32, 4 * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&dfail, 1024 * sizeof(uint32_t)));
    checks_kernel<<<1, 1>>>(d64, d32, dfail);
    WH_LAUNCH_OR_DIE();
    uint32_t fails = ~0u;
    WH_CUDA_OR_DIE(cudaMemcpy(&fails, dfail, sizeof fails, cudaMemcpyDeviceToHost));
    if (fails) fprintf(stderr, "failed check bits: %08x\n", fails);
    CHECK(fails == 0);

    warp_kernel<<<4, 256>>>(dfail);
    WH_LAUNCH_OR_DIE();
    uint32_t bad[1024];
    WH_CUDA_OR_DIE(cudaMemcpy(bad, dfail, sizeof bad, cudaMemcpyDeviceToHost));
    uint32_t any = 0;
    for (int i = 0; i < 1024; ++i) any |= bad[i];
    if (any) fprintf(stderr, "warp check bits: %x\n", any);
    CHECK(any == 0);

    uint64_t *c64, *orw, *mx, *g;
    uint32_t *c32;
    WH_CUDA_OR_DIE(cudaMalloc(&g, 3 * 8));
    WH_CUDA_OR_DIE(cudaMemset(g, 0, 2 * 8));
    WH_CUDA_OR_DIE(cudaMemset(g + 2, 0xFF, 8));
    WH_CUDA_OR_DIE(cudaMalloc(&c64, 8));
    WH_CUDA_OR_DIE(cudaMalloc(&orw, 8));
    WH_CUDA_OR_DIE(cudaMalloc(&mx, 8));
    WH_CUDA_OR_DIE(cudaMalloc(&c32, 4));
    WH_CUDA_OR_DIE(cudaMemset(c64, 0, 8));
    WH_CUDA_OR_DIE(cudaMemset(orw, 0, 8));
    WH_CUDA_OR_DIE(cudaMemset(mx, 0, 8));
    WH_CUDA_OR_DIE(cudaMemset(c32, 0, 4));
    const unsigned blocks = 4096, threads = 256;
    atomics_kernel<<<blocks, threads>>>(c64, c32, orw, mx, g);
    WH_LAUNCH_OR_DIE();
    uint64_t h64 = 0, horw = 0, hmx = 0, hg[3] = {0, 0, 1};
    WH_CUDA_OR_DIE(cudaMemcpy(hg, g, sizeof hg, cudaMemcpyDeviceToHost));
    CHECK_EQ_U64(hg[0], 3ull * blocks * threads);
    CHECK_EQ_U64(hg[1], ~0ull);
    CHECK_EQ_U64(hg[2], 0ull);
    uint32_t h32 = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&h64, c64, 8, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(&horw, orw, 8, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(&hmx, mx, 8, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(&h32, c32, 4, cudaMemcpyDeviceToHost));
    CHECK_EQ_U64(h64, (uint64_t)blocks * threads);
    CHECK_EQ_U64(h32, (uint64_t)blocks * threads);
    CHECK_EQ_U64(horw, ~0ull);
    CHECK_EQ_U64(hmx, (uint64_t)blocks * threads - 1);
    WH_CUDA_OR_DIE(cudaFree(d64));
    WH_CUDA_OR_DIE(cudaFree(d32));
    WH_CUDA_OR_DIE(cudaFree(dfail));
    WH_CUDA_OR_DIE(cudaFree(c64));
    WH_CUDA_OR_DIE(cudaFree(orw));
    WH_CUDA_OR_DIE(cudaFree(mx));
    WH_CUDA_OR_DIE(cudaFree(c32));
    WH_CUDA_OR_DIE(cudaFree(g));
    return wh_test_finish("test_platform_gpu");
}
