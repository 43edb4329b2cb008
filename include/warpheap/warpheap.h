/* SPDX-License-Identifier: MIT */
/* warpheap: GPU memory management in C.
 *
 * This header holds what every part shares: the version, the status codes and
 * their messages.  Each part has its own header:
 *   warpheap/bitmap.h   hierarchical lock-free bitmap (DynaSOAr 4.1)
 *   warpheap/platform.h the CPU/CUDA portability layer the device code uses
 */
#ifndef WARPHEAP_H
#define WARPHEAP_H

#include "warpheap/platform.h"
#include "warpheap/config.h"

#define WH_VERSION_MAJOR 0
#define WH_VERSION_MINOR 1
#define WH_VERSION_PATCH 0
/* major*10000 + minor*100 + patch: compare with WH_VERSION >= 100 etc. */
#define WH_VERSION       (WH_VERSION_MAJOR * 10000 + WH_VERSION_MINOR * 100 + WH_VERSION_PATCH)

WH_EXTERN_C_BEGIN

typedef enum wh_status {
    WH_OK = 0,
    WH_ERR_INVALID_ARGUMENT, /* a NULL pointer, a size of 0, a bad flag ...      */
    WH_ERR_OUT_OF_MEMORY,    /* the heap, pool or system has no room for this     */
    WH_ERR_TOO_SMALL,        /* a region too small to hold the structure's header */
    WH_ERR_TOO_LARGE,        /* a size beyond what the structure can address      */
    WH_ERR_DOUBLE_FREE,      /* the block was already free                        */
    WH_ERR_FOREIGN_POINTER,  /* the pointer was never handed out by this object   */
    WH_ERR_RETRY_LIMIT,      /* a bounded retry loop gave up under contention     */
    WH_ERR_CORRUPT,          /* a consistency check found a broken invariant      */
    WH_ERR_CUDA,             /* a CUDA runtime call failed                        */
    WH_ERR_NO_DEVICE,        /* no GPU, or built without CUDA                     */
    WH_ERR_UNSUPPORTED,      /* valid request this build or backend cannot serve  */
    WH_ERR_IN_USE,           /* destroyed with live allocations (released anyway) */
    WH_STATUS_COUNT
} wh_status;

/* A stream: a cudaStream_t on the CUDA backend (NULL is the default stream),
 * any opaque handle on the CPU backend (the pool and the arena take one). */
typedef void *wh_stream;

/* A static English sentence for a status; never NULL, also for unknown codes. */
WH_API const char *wh_strerror(wh_status status);

/* Details of the calling thread's last failure ("pool exhausted: request
 * ..., reserved ..."), or "" when its last call of the host API succeeded.
 * Every host function that returns a status or an allocation sets it. */
WH_API const char *wh_last_error(void);

/* The library's WH_VERSION, for checking that headers and binary agree. */
WH_API int wh_version(void);
WH_API const char *wh_version_string(void);

/* Whether this build has the CUDA backend and a usable GPU is present. */
WH_API bool wh_cuda_available(void);

/* Internal: record a formatted detail message for wh_last_error(); and
 * clear it, at the entry of a host API function. */
WH_API wh_status wh__fail(wh_status status, const char *fmt, ...);
void wh__clear_error(void);
/* Internal, for tests: the n-th request for memory from the driver or the
 * host from now on fails, and with sticky every later one too (n = 0:
 * none); call sites ask wh__fault() first. */
void wh__fault_arm(long n, bool sticky);
bool wh__fault(void);
/* Internal: aligned host memory for a structure, the size rounded up to the
 * alignment, the fault hook asked first (src/core/host_mem.c). */
void *wh__host_alloc(size_t align, size_t bytes);
/* Internal: the checks of a part's region, the caller's memory
 * [region, region + bytes), before anything is written there: bytes > 0, no
 * wrap, region a multiple of align, and (CUDA build) device or managed memory
 * for a device part, not device memory for a host part (src/core/region.c).
 * part names the caller in the message. */
wh_status wh__region_check(const char *part, const void *region, size_t bytes, size_t align, bool device);

WH_EXTERN_C_END

#endif /* WARPHEAP_H */
