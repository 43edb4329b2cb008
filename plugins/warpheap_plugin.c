/* SPDX-License-Identifier: MIT */
/* warpheap host pool as a drop-in allocator for PyTorch and CuPy.  One pool
 * per device, created at first use.  Exported:
 *   PyTorch CUDAPluggableAllocator:  wh_torch_alloc / wh_torch_free
 *   CuPy CFunctionAllocator:         wh_cupy_malloc / wh_cupy_free
 *   wh_plugin_stats(device, out[8])  in use, peak, reserved, peak reserved,
 *                                    allocs, frees, failures, tag hits
 * PyTorch passes the stream of each allocation and free, so its memory is
 * stream-ordered by the pool; CuPy passes none, so its blocks live on the
 * legacy default stream (NULL), which CuPy uses unless told otherwise. */
#include "warpheap/pool.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/types.h>

#define WH_PLUGIN_EXPORT __attribute__((visibility("default")))
#define WH_PLUGIN_DEVICES 64

static wh_pool *pools[WH_PLUGIN_DEVICES];
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;

/* The device's pool, created on first use with that device current. */
static wh_pool *pool_of(int device) {
    if (device < 0 || device >= WH_PLUGIN_DEVICES) return NULL;
    wh_pool *p = __atomic_load_n(&pools[device], __ATOMIC_ACQUIRE);
    if (p) return p;
    pthread_mutex_lock(&pools_lock);
    if (!pools[device]) {
        wh_pool_config c = {.backend = WH_POOL_CUDA, .max_streams = 62};
        if (wh_pool_create(&p, &c) == WH_OK) __atomic_store_n(&pools[device], p, __ATOMIC_RELEASE);
        else fprintf(stderr, "warpheap plugin: %s\n", wh_last_error());
    }
    p = pools[device];
    pthread_mutex_unlock(&pools_lock);
    return p;
}

/* Arenas are cudaMalloc'd on the current device: make it `device`. */
static void *alloc_on(int device, size_t size, cudaStream_t stream) {
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess) { (void)cudaGetLastError(); return NULL; }
    if (cur != device && cudaSetDevice(device) != cudaSuccess) { (void)cudaGetLastError(); return NULL; }
    wh_pool *p = pool_of(device);
    void *ptr = p ? wh_pool_alloc(p, size ? size : 1, stream) : NULL;
    if (!ptr && p) fprintf(stderr, "warpheap plugin: %s\n", wh_last_error());
    if (cur != device) (void)cudaSetDevice(cur);
    return ptr;
}

static void free_on(int device, void *ptr, cudaStream_t stream) {
    wh_pool *p = pool_of(device);
    if (p && wh_pool_free(p, ptr, stream) != WH_OK) fprintf(stderr, "warpheap plugin: %s\n", wh_last_error());
}

WH_PLUGIN_EXPORT void *wh_torch_alloc(ssize_t size, int device, cudaStream_t stream) {
    return size < 0 ? NULL : alloc_on(device, (size_t)size, stream);
}
WH_PLUGIN_EXPORT void wh_torch_free(void *ptr, ssize_t size, int device, cudaStream_t stream) {
    (void)size;
    free_on(device, ptr, stream);
}
WH_PLUGIN_EXPORT void *wh_cupy_malloc(void *param, size_t size, int device) {
    (void)param;
    return alloc_on(device, size, NULL);
}
WH_PLUGIN_EXPORT void wh_cupy_free(void *param, void *ptr, int device) {
    (void)param;
    free_on(device, ptr, NULL);
}
WH_PLUGIN_EXPORT int wh_plugin_stats(int device, unsigned long long out[8]) {
    wh_pool *p = device >= 0 && device < WH_PLUGIN_DEVICES ? __atomic_load_n(&pools[device], __ATOMIC_ACQUIRE) : NULL;
    wh_pool_stats s;
    if (!p || wh_pool_get_stats(p, &s) != WH_OK) return -1;
    unsigned long long v[8] = {s.in_use, s.in_use_peak, s.reserved, s.reserved_peak, s.allocs, s.frees, s.failures,
                               s.tag_hits};
    for (int i = 0; i < 8; ++i) out[i] = v[i];
    return 0;
}
