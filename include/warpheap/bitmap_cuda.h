/* SPDX-License-Identifier: MIT */
/* Hierarchical bitmap: bulk operations on a bitmap in device memory, enqueued
 * on a stream.  The per-bit operations are the device functions of bitmap.h. */
#ifndef WARPHEAP_BITMAP_CUDA_H
#define WARPHEAP_BITMAP_CUDA_H

#include <cuda_runtime_api.h>
#include "warpheap/bitmap.h"

WH_EXTERN_C_BEGIN

/* Lay out a bitmap in device memory d_mem and fill it (all zeros or ones). */
WH_API wh_status wh_bitmap_init_device(wh_bitmap *bm, void *d_mem, uint64_t nbits, bool ones, cudaStream_t stream);
/* *d_count = number of set bits (device memory). */
WH_API wh_status wh_bitmap_count_device(const wh_bitmap *bm, unsigned long long *d_count, cudaStream_t stream);

/* Scratch for wh_bitmap_indices_device. */
WH_API size_t wh_bitmap_indices_scratch_bytes(uint64_t nbits);
/* Alg. 5: the indices of all set bits, in no particular order, into d_out
 * (room for the set bits), their number into *d_count (device memory).  One
 * kernel per level; each selected container reserves its run of the output
 * with one atomic add.  The host never waits. */
WH_API wh_status wh_bitmap_indices_device(const wh_bitmap *bm, uint32_t *d_out, uint32_t *d_count, void *d_scratch,
                                          cudaStream_t stream);

/* Copy the bitmap to the host and run wh_bitmap_check_host and
 * wh_bitmap_count_host on it (synchronises the stream). */
WH_API wh_status wh_bitmap_check_device(const wh_bitmap *bm, uint64_t *bad, uint64_t *count, cudaStream_t stream);

WH_EXTERN_C_END

#endif /* WARPHEAP_BITMAP_CUDA_H */
