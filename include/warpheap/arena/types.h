/* SPDX-License-Identifier: MIT */
/* Stream arena, internal layouts: the metadata image's state (lock,
 * counters, RING cursor, plan, reservation in flight) and the RING plan.
 * Seed gpu-executed-heap.txt, "Heap": the heap's own words live beside its
 * blocks in device memory, addressed by offsets, so the image works at any
 * address and can be staged in shared memory.  Not part of the API: included
 * by arena.h after wh_handle and wh_arena_span. */
#ifndef WARPHEAP_ARENA_TYPES_H
#define WARPHEAP_ARENA_TYPES_H

/* RING reservations (arena/reserve.h): what the next replace of one slot
 * will find once that slot's span is freed -- the free blocks in ring order
 * from the cursor -- made off the critical path by the previous commit. */
#define WH__PLAN_BLOCKS 4
typedef struct wh__plan_block {
    uint64_t addr, size; /* offset in the region, bytes           */
    uint32_t id, gen;    /* descriptor; the generation a take gives */
} wh__plan_block;

typedef struct wh__ring_plan {
    uint32_t valid, nfree;    /* nfree blocks recorded in blk           */
    uint32_t start, complete; /* the cursor's block; 1: blk holds every free block */
    uint64_t version;         /* state's commands when made: stale once another runs */
    uint64_t slot;            /* the slot whose span it assumes freed   */
    uint64_t granule;
    wh_arena_span expect; /* what that slot held                    */
    wh__plan_block blk[WH__PLAN_BLOCKS];
    uint64_t q_stride, q_fit; /* the quote: counts 1..q_fit of q_stride */
    wh_handle q_h0;           /* bytes take q_h0, the cursor's block    */
} wh__ring_plan;

/* A reservation in flight: published by a reserve, the block core brought
 * up to date by wh_arena_ring_commit; the lock is held from one to the
 * other. */
typedef struct wh__ring_pending {
    uint32_t active, fast; /* fast: published from the plan, core not yet changed */
    uint32_t pad[2];
    uint64_t slot, next; /* the replaced slot; the slot to plan for (0: none) */
    uint64_t count, stride;
    wh_arena_span old, made; /* the span it frees, the span it published */
} wh__ring_pending;

/* Lives in the arena's metadata (device memory on CUDA).  Counters change
 * only under the lock, except first_status and failures (atomics: a lock
 * that could not be taken still reports). */
typedef struct wh__arena_state {
    uint32_t lock;         /* 0 free, 1 held                        */
    uint32_t first_status; /* sticky: first failure since clear     */
    uint32_t last_status;  /* of the last command                   */
    uint32_t seq;          /* the mirror's sequence word, kept here: */
                           /* the GPU then never reads host memory   */
    uint64_t base, bytes;  /* the region                            */
    uint64_t peak_used;    /* high-water mark of used block bytes   */
    uint64_t allocs, frees, failures, commands;
    uint64_t gen_off, core_off; /* byte offsets from this struct         */
    uint64_t mirror;            /* wh_arena_stats * the host can read    */
    uint32_t policy;            /* wh_arena_policy                       */
    uint32_t ring_head;         /* RING: descriptor of the first block   */
    uint32_t ring_hint;         /* RING: the last block allocated        */
    uint32_t mirror_mode;       /* wh_arena_mirror                       */
    uint64_t ring_cursor;       /* RING: offset where that block ended   */
    wh__ring_plan plan;         /* RING: made by the last commit          */
    wh__ring_pending pending;
    uint64_t planned;      /* RING: reservations the plan served     */
                           /* (after pending: a kept copy reloads both) */
    uint64_t warm_commits; /* RING: commits that only allocated: the */
                           /* free made on a kept copy by the plan   */
} wh__arena_state;
#ifdef __cplusplus
#define WH__ARENA_ASSERT static_assert
#else
#define WH__ARENA_ASSERT _Static_assert
#endif
WH__ARENA_ASSERT(offsetof(wh__arena_state, planned) == offsetof(wh__arena_state, pending) + sizeof(wh__ring_pending) &&
                     offsetof(wh__arena_state, pending) % 8u == 0 && offsetof(wh__arena_state, plan) % 8u == 0 &&
                     sizeof(wh__ring_plan) % 8u == 0,
                 "a kept copy reloads pending..planned as whole words");

/* An interval of the region (forecasts, arena/forecast.h). */
typedef struct wh__arena_extent {
    uint64_t addr, size; /* offset in the region, bytes; size 0: none */
} wh__arena_extent;

#endif /* WARPHEAP_ARENA_TYPES_H */
