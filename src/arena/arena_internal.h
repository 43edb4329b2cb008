/* SPDX-License-Identifier: MIT */
/* Stream arena internals: the host object and the CUDA launchers
 * (arena_cuda.cu) that arena.c calls on the CUDA backend. */
#ifndef WH_ARENA_INTERNAL_H
#define WH_ARENA_INTERNAL_H

#include "warpheap/arena.h"

struct wh_arena {
    wh_arena_backend backend;
    wh__arena_state *state; /* device memory (CUDA) or host memory (CPU)  */
    size_t meta_bytes;
    void *region;
    bool own_region;
    wh_arena_stats *mirror; /* host view; host-mapped pinned on CUDA      */
};

WH_EXTERN_C_BEGIN
/* Enqueue one-thread command kernels; WH_ERR_CUDA if the launch failed. */
wh_status wh__arena_launch_alloc(wh__arena_state *s, const size_t *counts, uint64_t stride, uint32_t n,
                                 wh_handle *slots, wh_stream stream);
wh_status wh__arena_launch_free(wh__arena_state *s, wh_handle *slots, uint32_t n, wh_stream stream);
wh_status wh__arena_launch_replace(wh__arena_state *s, const size_t *count, uint64_t stride, wh_handle *slot,
                                   wh_stream stream);
wh_status wh__arena_launch_replace_span(wh__arena_state *s, const size_t *count, uint64_t stride, wh_arena_span *slot,
                                        wh_stream stream);
/* Clear the status (clear) or only write the mirror (flush). */
wh_status wh__arena_launch_mirror(wh__arena_state *s, bool clear, wh_stream stream);
WH_EXTERN_C_END

#endif
