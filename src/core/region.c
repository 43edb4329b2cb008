/* SPDX-License-Identifier: MIT */
/* Caller's memory for a part (wh_heap_config.region, wh_soa_config.region):
 * the checks every part makes before it writes a byte there -- a size, an
 * alignment, a range that does not wrap, and on a CUDA build the memory kind
 * that cudaPointerGetAttributes reports at both ends of the range. */
#include "warpheap/warpheap.h"

#include <stdint.h>

#if WH_HAVE_CUDA
#include <cuda_runtime_api.h>

/* The kind of memory at p; false when the runtime cannot tell. */
static bool kind_at(const void *p, enum cudaMemoryType *kind) {
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError(); /* memory the runtime does not know: not an error to keep */
        return false;
    }
    *kind = a.type;
    return true;
}

/* A device part needs memory the GPU addresses as its own (device or
 * managed); a host part memory the host can touch (anything but device). */
static wh_status check_kind(const char *part, const uint8_t *p, size_t bytes, bool device) {
    if (device && !wh_cuda_available())
        return wh__fail(WH_ERR_NO_DEVICE, "%s: no usable GPU for a device region", part);
    const uint8_t *ends[2] = {p, p + bytes - 1u};
    for (int i = 0; i < 2; ++i) {
        enum cudaMemoryType k = cudaMemoryTypeUnregistered;
        bool known = kind_at(ends[i], &k);
        bool gpu = known && (k == cudaMemoryTypeDevice || k == cudaMemoryTypeManaged);
        const char *what = i ? "region's last byte" : "region";
        if (device && !gpu)
            return wh__fail(WH_ERR_INVALID_ARGUMENT, "%s: %s %p is host memory; a device %s needs device memory", part,
                            what, (const void *)ends[i], part);
        if (!device && known && k == cudaMemoryTypeDevice)
            return wh__fail(WH_ERR_INVALID_ARGUMENT, "%s: %s %p is device memory; a host %s needs host memory", part,
                            what, (const void *)ends[i], part);
    }
    return WH_OK;
}
#endif

wh_status wh__region_check(const char *part, const void *region, size_t bytes, size_t align, bool device) {
    uintptr_t p = (uintptr_t)region;
    if (bytes == 0) return wh__fail(WH_ERR_TOO_SMALL, "%s: region %p of 0 bytes", part, region);
    if (p + bytes - 1u < p)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "%s: region %p of %zu bytes wraps the address space", part, region,
                        bytes);
    if (p % align)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "%s: region %p not aligned to %zu bytes (%zu past a multiple)", part,
                        region, align, (size_t)(p % align));
#if WH_HAVE_CUDA
    return check_kind(part, (const uint8_t *)region, bytes, device);
#else
    if (device) return wh__fail(WH_ERR_NO_DEVICE, "%s: device region, built without CUDA", part);
    return WH_OK;
#endif
}
