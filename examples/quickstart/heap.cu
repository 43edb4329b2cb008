// SPDX-License-Identifier: MIT
// Device heap: every thread of a kernel calls wh_malloc, writes its block and calls wh_free.
#include "warpheap/heap.h"
#include "warpheap/cuda_check.h"                                   // WH_CUDA_OR_DIE
__device__ unsigned long long good;                                // threads that got a block
__global__ void work(wh_heap heap) {                               // the heap descriptor, by value
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, bytes = 16 + t % 16 * 16;   // 16..256
    unsigned *p = (unsigned *)wh_malloc(&heap, bytes);              // NULL when the heap is exhausted
    if (p) p[0] = p[bytes / 4 - 1] = t, atomicAdd(&good, 1ull);    // its first and last word
    wh_free(&heap, p);                                              // wh_free(NULL) does nothing
}
#define TRY(c) do { if ((c) != WH_OK) { fprintf(stderr, "%s: %s\n", #c, wh_last_error()); return 1; } } while (0)
int main(void) {
    if (!wh_cuda_available()) { printf("heap: no GPU, skipped\n"); return 77; }
    wh_heap heap; wh_heap_usage u; unsigned long long n = 0, threads = 1 << 20;
    wh_heap_config cfg = {.bytes = 256 << 20, .kind = WH_HEAP_DEFAULT};   // device memory
    TRY(wh_heap_create(&heap, &cfg));
    work<<<threads / 256, 256>>>(heap);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaMemcpyFromSymbol(&n, good, sizeof n));      // waits for the kernel
    TRY(wh_heap_stats(&heap, &u));                                  // a heap walk: what is still live?
    TRY(wh_heap_destroy(&heap));
    printf("heap: %llu of %llu threads got a block; %llu live now\n", n, threads, (unsigned long long)u.allocations);
    return n == threads && u.allocations == 0 ? 0 : 1;
}
