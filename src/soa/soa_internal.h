/* SPDX-License-Identifier: MIT */
/* Object allocator: what the host code of src/soa/ shares (not installed). */
#ifndef WH_SOA_INTERNAL_H
#define WH_SOA_INTERNAL_H

#include "warpheap/soa.h"

#include <string.h>

WH_EXTERN_C_BEGIN
/* Device memory (soa_cuda.cu; WH_ERR_NO_DEVICE stubs without CUDA). */
wh_status wh__soa_dev_alloc(void **mem, size_t bytes);
wh_status wh__soa_dev_free(void *mem);
wh_status wh__soa_dev_to_host(void *dst, const void *src, size_t bytes);
/* Copy between any two places of host and device memory (cudaMemcpyDefault). */
wh_status wh__soa_dev_copy(void *dst, const void *src, size_t bytes);
wh_status wh__soa_dev_zero(void *dst, size_t bytes);
/* bytes from src to dst, both in device memory (on_device) or in host memory. */
static inline wh_status wh__soa_copy(bool on_device, void *dst, const void *src, size_t bytes) {
    if (!bytes) return WH_OK;
    if (on_device) return wh__soa_dev_copy(dst, src, bytes);
    memcpy(dst, src, bytes);
    return WH_OK;
}
/* Fill a fresh device heap: counters 0, every block free, bitmaps. */
wh_status wh__soa_dev_init(const wh_soa *soa);
/* GPU threads for a parallel_do launch: enough to fill the device. */
uint32_t wh__soa_dev_threads(void);
/* Whether the current device launches a kernel before the previous one
 * completes (programmatic dependent launch: sm_90 and later). */
uint32_t wh__soa_dev_early(void);
/* wh_soa_usage on a device heap (synchronises). */
wh_status wh__soa_dev_usage(const wh_soa *soa, uint64_t *objects, uint64_t *slots);
WH_EXTERN_C_END

#endif
