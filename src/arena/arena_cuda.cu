/* SPDX-License-Identifier: MIT */
/* Stream arena commands as kernels (seed gpu-executed-heap.txt: the heap's
 * Allocate/Free as single-thread compute dispatches buffered with the rest of
 * the GPU's work).  Each command is a <<<1, 1>>> launch running the portable
 * command body of arena.h on the device-resident metadata. */
#include "arena_internal.h"
#include "warpheap/cuda_check.h"

static __global__ void wh_arena_alloc_kernel(wh__arena_state *s, const size_t *counts, uint64_t stride, uint32_t n,
                                             wh_handle *slots) {
    (void)wh__arena_cmd_alloc(s, counts, stride, n, slots);
}

static __global__ void wh_arena_free_kernel(wh__arena_state *s, wh_handle *slots, uint32_t n) {
    (void)wh__arena_cmd_free(s, slots, n);
}

static __global__ void wh_arena_replace_kernel(wh__arena_state *s, const size_t *count, uint64_t stride,
                                               wh_handle *slot) {
    (void)wh__arena_cmd_replace(s, count, stride, slot);
}

static __global__ void wh_arena_replace_span_kernel(wh__arena_state *s, const size_t *count, uint64_t stride,
                                                    wh_arena_span *slot) {
    (void)wh__arena_cmd_replace_span(s, *count, stride, slot);
}

static __global__ void wh_arena_mirror_kernel(wh__arena_state *s, bool clear) { (void)wh__arena_cmd_mirror(s, clear); }

extern "C" wh_status wh__arena_launch_alloc(wh__arena_state *s, const size_t *counts, uint64_t stride, uint32_t n,
                                            wh_handle *slots, wh_stream stream) {
    wh_arena_alloc_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(s, counts, stride, n, slots);
    WH_LAUNCH_TRY();
    return WH_OK;
}

extern "C" wh_status wh__arena_launch_free(wh__arena_state *s, wh_handle *slots, uint32_t n, wh_stream stream) {
    wh_arena_free_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(s, slots, n);
    WH_LAUNCH_TRY();
    return WH_OK;
}

extern "C" wh_status wh__arena_launch_replace(wh__arena_state *s, const size_t *count, uint64_t stride, wh_handle *slot,
                                              wh_stream stream) {
    wh_arena_replace_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(s, count, stride, slot);
    WH_LAUNCH_TRY();
    return WH_OK;
}

extern "C" wh_status wh__arena_launch_replace_span(wh__arena_state *s, const size_t *count, uint64_t stride,
                                                   wh_arena_span *slot, wh_stream stream) {
    wh_arena_replace_span_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(s, count, stride, slot);
    WH_LAUNCH_TRY();
    return WH_OK;
}

extern "C" wh_status wh__arena_launch_mirror(wh__arena_state *s, bool clear, wh_stream stream) {
    wh_arena_mirror_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(s, clear);
    WH_LAUNCH_TRY();
    return WH_OK;
}
