/* SPDX-License-Identifier: MIT */
/* Hierarchical bitmap on the GPU: device fill/count/indices against the host
 * versions, a drain where every thread of a grid allocates bits (each bit must
 * come out exactly once), and the stress: >= 10^8 mixed operations from a full
 * grid, then the consistency check and exact count.  --small: sanitizer size. */
#include "stress.h"
#include "warpheap/bitmap_cuda.h"
#include "warpheap/cuda_check.h"
#include "wh_cli.h"
#include "wh_test.h"

#include <algorithm>

static __global__ void set_pattern(wh_bitmap bm, uint32_t stride) {
    uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) * stride;
    if (i < bm.nbits) wh_bitmap_try_set(&bm, i);
}

/* Every thread takes bits until the bitmap is empty, recording each. */
static __global__ void drain(wh_bitmap bm, uint32_t *taken, uint32_t *ntaken, uint32_t cap) {
    uint64_t seed = wh_hash64(blockIdx.x * blockDim.x + threadIdx.x);
    for (uint32_t k = 0; k < 1u << 20; ++k) { /* bounded */
        uint32_t b = wh_bitmap_find_and_clear(&bm, wh_hash64(seed + k));
        if (b == WH_BITMAP_NONE) return;
        uint32_t slot = atomicAdd(ntaken, 1u);
        if (slot < cap) taken[slot] = b;
    }
}

static void test_bulk(uint64_t nbits, uint32_t stride) {
    size_t bytes = wh_bitmap_bytes(nbits);
    void *d_mem, *d_scratch;
    uint32_t *d_out, *d_n;
    unsigned long long *d_count;
    WH_CUDA_OR_DIE(cudaMalloc(&d_mem, bytes));
    WH_CUDA_OR_DIE(cudaMalloc(&d_scratch, wh_bitmap_indices_scratch_bytes(nbits)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_out, nbits * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_n, sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_count, sizeof *d_count));
    wh_bitmap bm;
    CHECK(wh_bitmap_init_device(&bm, d_mem, nbits, false, 0) == WH_OK);
    uint32_t set = (uint32_t)((nbits + stride - 1) / stride);
    set_pattern<<<(set + 255) / 256, 256>>>(bm, stride);
    WH_LAUNCH_OR_DIE();
    CHECK(wh_bitmap_count_device(&bm, d_count, 0) == WH_OK);
    CHECK(wh_bitmap_indices_device(&bm, d_out, d_n, d_scratch, 0) == WH_OK);
    unsigned long long count = 0;
    uint32_t n = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&count, d_count, sizeof count, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(&n, d_n, sizeof n, cudaMemcpyDeviceToHost));
    CHECK_EQ_U64(count, set);
    CHECK_EQ_U64(n, set);
    uint32_t *out = (uint32_t *)malloc(set * sizeof(uint32_t));
    WH_CUDA_OR_DIE(cudaMemcpy(out, d_out, set * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    std::sort(out, out + set);
    uint32_t wrong = 0;
    for (uint32_t k = 0; k < set; ++k) wrong += out[k] != k * stride;
    CHECK_EQ_U64(wrong, 0);
    uint64_t bad = 1, hc = 0;
    CHECK(wh_bitmap_check_device(&bm, &bad, &hc, 0) == WH_OK);
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(hc, set);
    free(out);
    WH_CUDA_OR_DIE(cudaFree(d_mem));
    WH_CUDA_OR_DIE(cudaFree(d_scratch));
    WH_CUDA_OR_DIE(cudaFree(d_out));
    WH_CUDA_OR_DIE(cudaFree(d_n));
    WH_CUDA_OR_DIE(cudaFree(d_count));
}

static void test_drain(uint64_t nbits, unsigned blocks) {
    void *d_mem;
    uint32_t *d_taken, *d_n;
    WH_CUDA_OR_DIE(cudaMalloc(&d_mem, wh_bitmap_bytes(nbits)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_taken, nbits * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_n, sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMemset(d_n, 0, sizeof(uint32_t)));
    wh_bitmap bm;
    CHECK(wh_bitmap_init_device(&bm, d_mem, nbits, true, 0) == WH_OK);
    drain<<<blocks, 256>>>(bm, d_taken, d_n, (uint32_t)nbits);
    WH_LAUNCH_OR_DIE();
    uint32_t n = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&n, d_n, sizeof n, cudaMemcpyDeviceToHost));
    CHECK_EQ_U64(n, nbits); /* no bit twice, none lost */
    if (n == nbits) {
        uint32_t *taken = (uint32_t *)malloc(nbits * sizeof(uint32_t));
        WH_CUDA_OR_DIE(cudaMemcpy(taken, d_taken, nbits * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        std::sort(taken, taken + nbits);
        uint32_t wrong = 0;
        for (uint32_t k = 0; k < nbits; ++k) wrong += taken[k] != k;
        CHECK_EQ_U64(wrong, 0);
        free(taken);
    }
    uint64_t bad = 1, count = 1;
    CHECK(wh_bitmap_check_device(&bm, &bad, &count, 0) == WH_OK);
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(count, 0);
    WH_CUDA_OR_DIE(cudaFree(d_mem));
    WH_CUDA_OR_DIE(cudaFree(d_taken));
    WH_CUDA_OR_DIE(cudaFree(d_n));
}

int main(int argc, char **argv) {
    bool small = false;
    uint32_t ops = 0;
    wh_cli_opt cli[] = {WH_CLI_FLAG("small", &small, "the sanitizers' size"),
                        WH_CLI_UINT_D("ops", &ops, "operations per thread of the stress", "400, 50 with --small"),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Hierarchical bitmap on the GPU: bulk operations, a drain, and the stress.");
    if (!wh_cli_given(cli, "ops")) ops = small ? 50 : 400;
    if (!wh_cuda_available()) {
        printf("test_bitmap_gpu: no GPU, skipped\n");
        return WH_TEST_SKIP;
    }
    test_bulk(1, 1);
    test_bulk(4097, 3);
    test_bulk(small ? 100000 : 1u << 28, small ? 7 : 1000);
    test_drain(small ? 5000 : 1u << 22, small ? 8 : 1024);

    /* the stress: a small bitmap under heavy contention, then a large one */
    wh_stress_config cfgs[] = {
        {small ? 4096u : 1u << 16, small ? 2048u : 0u, ops, 1},
        {small ? 100000u : 1u << 22, small ? 2048u : 0u, ops, 4},
    };
    for (unsigned k = 0; k < 2; ++k) {
        wh_stress_result r;
        CHECK(wh_stress_gpu(&cfgs[k], &r) == 0);
        wh_stress_print("gpu", &cfgs[k], &r);
        if (!small) CHECK(r.ops >= 100000000ull);
        CHECK(r.counts.claims > 0 && r.counts.releases > 0 && r.counts.spans > 0);
        CHECK_EQ_U64(r.counts.violations, 0);
        CHECK_EQ_U64(r.inconsistent, 0);
        CHECK_EQ_U64(r.owned_twice, 0);
        CHECK_EQ_U64(r.count, r.expected);
    }
    return wh_test_finish("test_bitmap_gpu");
}
