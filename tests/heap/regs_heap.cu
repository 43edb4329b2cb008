/* SPDX-License-Identifier: MIT */
/* Kernels whose registers test_heap_regs checks (check_regs.sh): one
 * wh_malloc and one wh_free per thread, as heap_bench's regs rows build them
 * -- each kind through wh_malloc_as / wh_free_as, every kind through
 * wh_malloc / wh_free, the allocation alone, the free alone.  Compiled to a
 * cubin only; never run. */
#include "warpheap/heap.h"

#define REGS_KIND(NAME, KIND)                                          \
    extern "C" __global__ void NAME(wh_heap h, size_t n, void **out) { \
        void *p = wh_malloc_as(&h, KIND, n);                           \
        out[threadIdx.x] = p;                                          \
        wh_free_as(&h, KIND, p);                                       \
    }
REGS_KIND(regs_default, WH_HEAP_DEFAULT)
REGS_KIND(regs_slab, WH_HEAP_SLAB)
REGS_KIND(regs_bump, WH_HEAP_BUMP)
REGS_KIND(regs_wrap, WH_HEAP_WRAP)
REGS_KIND(regs_circular, WH_HEAP_CIRCULAR)
REGS_KIND(regs_circular_fused, WH_HEAP_CIRCULAR_FUSED)
REGS_KIND(regs_circular_multi, WH_HEAP_CIRCULAR_MULTI)
REGS_KIND(regs_circular_fused_multi, WH_HEAP_CIRCULAR_FUSED_MULTI)

extern "C" __global__ void regs_any(wh_heap h, size_t n, void **out) {
    void *p = wh_malloc(&h, n);
    out[threadIdx.x] = p;
    wh_free(&h, p);
}
extern "C" __global__ void regs_default_malloc(wh_heap h, size_t n, void **out) {
    out[threadIdx.x] = wh_malloc_as(&h, WH_HEAP_DEFAULT, n);
}
extern "C" __global__ void regs_any_malloc(wh_heap h, size_t n, void **out) { out[threadIdx.x] = wh_malloc(&h, n); }
extern "C" __global__ void regs_free(wh_heap h, void **out) { wh_free_as(&h, WH_HEAP_DEFAULT, out[threadIdx.x]); }
