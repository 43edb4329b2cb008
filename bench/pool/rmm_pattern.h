/* SPDX-License-Identifier: MIT */
/* The benchmark's allocation patterns, shared by pool_bench.c (timed on the
 * GPU) and replay_cpu.c (replayed on the CPU backend).
 *
 * RMM's random_allocations: each of 2N steps
 * allocates with probability 0.73 (at most N allocations, live bytes capped
 * at 16 GiB), else frees a random live block; sizes uniform in [1 B, max];
 * everything left is freed at the end.  A NULL from alloc frees instead. */
#ifndef WH_BENCH_RMM_PATTERN_H
#define WH_BENCH_RMM_PATTERN_H

#include "warpheap/warpheap.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    void *p;
    size_t n;
} rmm_blk;

/* Returns the number of operations (allocations and frees); *peak_live gets
 * the peak of live requested bytes.  seed 0 is the benchmark's trace; others
 * are traces of the same pattern (wh_pool_replay --seeds). */
static inline uint64_t rmm_random_allocations_seeded(uint64_t n, uint64_t max, uint64_t seed,
                                                     void *(*alloc)(void *ctx, size_t n),
                                                     void (*release)(void *ctx, void *p), void *ctx,
                                                     uint64_t *peak_live) {
    const uint64_t cap = 16ull << 30;
    rmm_blk *live = (rmm_blk *)malloc(sizeof(rmm_blk) * n);
    if (!live) {
        fprintf(stderr, "rmm_random_allocations: no host memory for %llu blocks\n", (unsigned long long)n);
        exit(1);
    }
    uint64_t nlive = 0, allocs = 0, bytes = 0, ops = 0;
    *peak_live = 0;
    for (uint64_t i = 0; i < 2 * n; ++i, ++ops) {
        uint64_t x = wh_hash64(i * 0x9E37 + max + seed * 0x1234567ull), size = 1 + x % max;
        bool do_alloc = nlive == 0 || ((x >> 33) % 100 < 73 && allocs < n && bytes + size < cap);
        void *p = do_alloc ? alloc(ctx, size) : NULL;
        if (do_alloc && p) {
            live[nlive].p = p;
            live[nlive++].n = size;
            allocs++;
            bytes += size;
            if (bytes > *peak_live) *peak_live = bytes;
        } else if (nlive) {
            uint64_t k = wh_hash64(x) % nlive;
            release(ctx, live[k].p);
            bytes -= live[k].n;
            live[k] = live[--nlive];
        }
    }
    for (; nlive; ++ops) release(ctx, live[--nlive].p);
    free(live);
    return ops;
}

static inline uint64_t rmm_random_allocations(uint64_t n, uint64_t max, void *(*alloc)(void *ctx, size_t n),
                                              void (*release)(void *ctx, void *p), void *ctx, uint64_t *peak_live) {
    return rmm_random_allocations_seeded(n, max, 0, alloc, release, ctx, peak_live);
}

/* Futhark's allocate-in-a-loop: iteration i allocates 6 buffers, buffer k
 * of 4 KiB << 2k (4 KiB .. 4 MiB) plus a drift of (i % 7) pages, then frees
 * them all. */
static inline size_t futhark_size(int i, int k) { return ((size_t)4096 << (2 * k)) + (size_t)(i % 7) * 4096; }

#endif
