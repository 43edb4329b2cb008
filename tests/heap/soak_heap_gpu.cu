/* SPDX-License-Identifier: MIT */
/* GPU soak of the device heap: every kind that frees, random sizes and frees
 * from every thread of a full grid (heap_stress.h: owner patterns checked
 * before every free, so two live blocks that overlap are caught), round
 * after round until --ops operations (allocations + frees) per kind or
 * --budget seconds, whichever comes first.  The heap is small enough that
 * allocations fail now and then: out of memory must give NULL, never a hang.
 * After every round the heap walk must be sound, hold nothing live and have
 * seen no double or foreign free.  One line of progress per round.
 *   soak_heap_gpu [--ops=N] [--budget=S] [--heap-mib=M] */
#include "heap_stress.h"
#include "warpheap/cuda_check.h"
#include "wh_test.h"

#include <getopt.h>
#include <stdio.h>

static __global__ void round_kernel(wh_heap h, wh_hs_shape shape, void **held, uint32_t *sizes, wh_hs_counts *total,
                                    uint64_t salt) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    wh_hs_counts c = {0, 0, 0, 0, 0};
    wh_hs_thread(&h, salt + t, &shape, held + (size_t)t * shape.cap, sizes + (size_t)t * shape.cap, &c);
    atomicAdd(&total->allocs, c.allocs);
    atomicAdd(&total->frees, c.frees);
    atomicAdd(&total->failed, c.failed);
    atomicAdd(&total->corrupt, c.corrupt);
    atomicAdd(&total->misaligned, c.misaligned);
}

static void soak(wh_heap_kind kind, uint64_t bytes, uint32_t blocks, wh_hs_shape shape, uint64_t target,
                 double budget) {
    wh_heap h;
    wh_heap_config cfg = {bytes, kind, 0, 0, 0, NULL};
    if (wh_heap_create(&h, &cfg) != WH_OK) {
        fprintf(stderr, "create: %s\n", wh_last_error());
        exit(1);
    }
    uint32_t threads = blocks * 256u;
    void **held;
    uint32_t *sizes;
    wh_hs_counts *d, sum = {0, 0, 0, 0, 0};
    WH_CUDA_OR_DIE(cudaMalloc(&held, (size_t)threads * shape.cap * sizeof *held));
    WH_CUDA_OR_DIE(cudaMalloc(&sizes, (size_t)threads * shape.cap * sizeof *sizes));
    WH_CUDA_OR_DIE(cudaMalloc(&d, sizeof *d));
    double t0 = wh_now_seconds();
    unsigned rounds = 0;
    while (sum.allocs + sum.frees < target && wh_now_seconds() - t0 < budget) {
        WH_CUDA_OR_DIE(cudaMemset(d, 0, sizeof *d));
        round_kernel<<<blocks, 256>>>(h, shape, held, sizes, d, (uint64_t)rounds << 40);
        WH_LAUNCH_OR_DIE();
        WH_CUDA_OR_DIE(cudaDeviceSynchronize());
        wh_hs_counts c;
        WH_CUDA_OR_DIE(cudaMemcpy(&c, d, sizeof c, cudaMemcpyDeviceToHost));
        sum.allocs += c.allocs;
        sum.frees += c.frees;
        sum.failed += c.failed;
        sum.corrupt += c.corrupt;
        sum.misaligned += c.misaligned;
        wh_heap_usage s;
        CHECK(wh_heap_stats(&h, &s) == WH_OK);
        CHECK_EQ_U64(s.inconsistencies, 0);
        CHECK_EQ_U64(s.allocations, 0);
        CHECK_EQ_U64(s.double_frees, 0);
        CHECK_EQ_U64(s.foreign_frees, 0);
        CHECK_EQ_U64(s.used_bytes + s.free_bytes + s.overhead_bytes, s.heap_bytes);
        ++rounds;
        double dt = wh_now_seconds() - t0;
        printf("  %-22s round %3u: %.3g ops (%.3g/s), %llu failed, %llu corrupt\n", wh_heap_kind_name(kind), rounds,
               (double)(sum.allocs + sum.frees), (double)(sum.allocs + sum.frees) / dt, (unsigned long long)sum.failed,
               (unsigned long long)sum.corrupt);
    }
    CHECK_EQ_U64(sum.corrupt, 0);
    CHECK_EQ_U64(sum.misaligned, 0);
    CHECK_EQ_U64(sum.allocs, sum.frees);
    printf("%-22s %.3g operations in %u rounds, %.1f s, %llu allocations failed (heap %llu MiB)\n",
           wh_heap_kind_name(kind), (double)(sum.allocs + sum.frees), rounds, wh_now_seconds() - t0,
           (unsigned long long)sum.failed, (unsigned long long)(bytes >> 20));
    WH_CUDA_OR_DIE(cudaFree(held));
    WH_CUDA_OR_DIE(cudaFree(sizes));
    WH_CUDA_OR_DIE(cudaFree(d));
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

int main(int argc, char **argv) {
    if (!wh_cuda_available()) {
        printf("soak_heap_gpu: no GPU, skipped\n");
        return WH_TEST_SKIP;
    }
    double target = 1e7, budget = 20;
    long heap_mib = 512;
    static const struct option opts[] = {{"ops", required_argument, NULL, 'o'},
                                         {"budget", required_argument, NULL, 'b'},
                                         {"heap-mib", required_argument, NULL, 'm'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (c == 'o')
            target = atof(optarg);
        else if (c == 'b')
            budget = atof(optarg);
        else if (c == 'm')
            heap_mib = atol(optarg);
        else {
            fprintf(c == 'h' ? stdout : stderr, "usage: %s [--ops=N] [--budget=SECONDS] [--heap-mib=M]\n", argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    int dev = 0, sms = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    uint64_t bytes = (uint64_t)heap_mib << 20;
    wh_hs_shape mixed = {200, 4, 256, 8192};    /* sizes 1 B .. 8 KiB, 4 held a thread */
    wh_hs_shape large = {200, 4, 4096, 100000}; /* DEFAULT's page runs too */
    soak(WH_HEAP_DEFAULT, bytes, (uint32_t)sms * 8u, mixed, (uint64_t)target, budget);
    soak(WH_HEAP_DEFAULT, bytes, (uint32_t)sms * 8u, large, (uint64_t)target, budget);
    soak(WH_HEAP_SLAB, bytes, (uint32_t)sms * 8u, mixed, (uint64_t)target, budget);
    /* the circular kinds serialise on their cursors: fewer threads */
    soak(WH_HEAP_CIRCULAR_MULTI, bytes, (uint32_t)sms, mixed, (uint64_t)target, budget);
    soak(WH_HEAP_CIRCULAR_FUSED_MULTI, bytes, (uint32_t)sms, mixed, (uint64_t)target, budget);
    soak(WH_HEAP_CIRCULAR, bytes, (uint32_t)sms / 4u, mixed, (uint64_t)target, budget);
    soak(WH_HEAP_CIRCULAR_FUSED, bytes, (uint32_t)sms / 4u, mixed, (uint64_t)target, budget);
    return wh_test_finish("soak_heap_gpu");
}
