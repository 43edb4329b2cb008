/* SPDX-License-Identifier: MIT */
/* Checks shared by the arena tests (CPU backend and GPU):
 *  - the overlap oracle: every live handle lies in the region, its address is
 *    a multiple of its stride from the region's start, and no two live
 *    allocations overlap (sorted by address);
 *  - the fuzz loop: each thread owns a range of slots and either allocates
 *    into an empty one or frees a full one, through the device-side API
 *    (wh_arena_alloc_warp / wh_arena_free_warp).  WH_HOST_DEVICE: a pthread
 *    on the CPU backend, a GPU thread in test_arena_gpu.cu. */
#ifndef WH_ARENA_ORACLE_H
#define WH_ARENA_ORACLE_H

#include "warpheap/arena.h"

/* Strides the tests use: bytes, words, a 12-byte vertex, a 36-byte triangle,
 * a cache line, odd ones. */
#define WH_TEST_NSTRIDES 8
WH_INLINE WH_HOST_DEVICE uint64_t wh_test_stride(uint64_t r) {
    const uint64_t s[WH_TEST_NSTRIDES] = {1, 4, 12, 16, 36, 128, 1000, 4096};
    return s[r % WH_TEST_NSTRIDES];
}

typedef struct wh_fuzz_counts {
    unsigned long long allocs, frees, failed_allocs, failed_frees;
} wh_fuzz_counts;

/* Thread t's loop over its slots [t*k, t*k + k).  warp_mask: the lanes that
 * run this loop together (all of them, every step: the warp is re-converged
 * at the top of each step, and all lanes call the same arena function in a
 * step, so no two lanes of a warp ever wait for the lock at once).
 * max_bytes: a request is 1..max_bytes/stride elements (stride <= max_bytes). */
WH_INLINE WH_HOST_DEVICE void wh_fuzz_thread(wh_arena_ref a, uint32_t warp_mask, uint64_t t, uint32_t k, uint32_t steps,
                                             uint64_t max_bytes, wh_handle *slots, uint64_t *bytes, uint64_t *strides,
                                             wh_fuzz_counts *c) {
    for (uint32_t i = 0; i < steps; ++i) {
        wh_syncwarp(warp_mask);
        uint64_t r = wh_hash64(t * 0x9E3779B97F4A7C15ull + i);
        uint32_t slot = (uint32_t)(t * k + (r >> 40) % k);
        bool full = slots[slot].ptr != 0;
        bool act = (i & 1u) == 0 ? !full : full;   /* warp-uniform phase: allocate, then free */
        uint32_t mask = wh_ballot(warp_mask, act); /* exactly the lanes that call */
        if (!act) continue;
        if ((i & 1u) == 0) {
            uint64_t st = wh_test_stride(r >> 8), n = 1 + (r >> 16) % (max_bytes / st);
            wh_handle h = wh_arena_alloc_mask(a, mask, n, st);
            slots[slot] = h;
            bytes[slot] = n * st;
            strides[slot] = st;
            if (h.ptr)
                c->allocs++;
            else
                c->failed_allocs++;
        } else {
            if (wh_arena_free_mask(a, mask, &slots[slot]) == WH_OK)
                c->frees++;
            else
                c->failed_frees++;
        }
    }
}

#ifdef __cplusplus
extern "C" {
#endif
/* Returns the number of violations (0 = fine), printing the first few.
 * bytes[i] and strides[i] describe slot i; null handles are skipped.
 * *live / *live_bytes: how many handles were live and their bytes. */
uint64_t wh_arena_oracle(const wh_handle *slots, const uint64_t *bytes, const uint64_t *strides, uint32_t n,
                         uint64_t base, uint64_t region, uint64_t *live, uint64_t *live_bytes);
#ifdef __cplusplus
}
#endif

#endif
