/* SPDX-License-Identifier: MIT */
/* Kernels whose registers test_heap_regs checks (check_regs.sh): one
 * wh_malloc and one wh_free per thread, as heap_bench's regs rows build them
 * -- DEFAULT and SLAB through wh_malloc_as / wh_free_as, every kind through
 * wh_malloc / wh_free, the free alone.  Compiled to a cubin only; never run. */
#include "warpheap/heap.h"

extern "C" __global__ void regs_default(wh_heap h, size_t n, void **out) {
    void *p = wh_malloc_as(&h, WH_HEAP_DEFAULT, n);
    out[threadIdx.x] = p;
    wh_free_as(&h, WH_HEAP_DEFAULT, p);
}
extern "C" __global__ void regs_slab(wh_heap h, size_t n, void **out) {
    void *p = wh_malloc_as(&h, WH_HEAP_SLAB, n);
    out[threadIdx.x] = p;
    wh_free_as(&h, WH_HEAP_SLAB, p);
}
extern "C" __global__ void regs_any(wh_heap h, size_t n, void **out) {
    void *p = wh_malloc(&h, n);
    out[threadIdx.x] = p;
    wh_free(&h, p);
}
extern "C" __global__ void regs_free(wh_heap h, void **out) { wh_free_as(&h, WH_HEAP_DEFAULT, out[threadIdx.x]); }
