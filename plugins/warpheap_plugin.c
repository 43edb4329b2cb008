/* SPDX-License-Identifier: MIT */
/* warpheap host pool as a drop-in allocator for PyTorch and CuPy.  One pool
 * per device, created at first use on that device.  Exported:
 *   PyTorch CUDAPluggableAllocator:  wh_torch_alloc / wh_torch_free, and
 *                                    wh_torch_record_stream (its record-stream hook)
 *   CuPy CFunctionAllocator:         wh_cupy_malloc / wh_cupy_free (legacy default stream)
 *   CuPy, a stream per call:         wh_cupy_malloc_stream / wh_cupy_free_stream
 *   configuration, before a device's pool exists: wh_plugin_set_option
 *   the pool's state: wh_plugin_stats, wh_plugin_pool_stats, wh_plugin_reset_peak,
 *   wh_plugin_trim, wh_plugin_live_blocks, wh_plugin_forget_stream,
 *   wh_plugin_record_stream
 *   wh_plugin_last_error: the message of the calling thread's last failure
 * The warpheap Python package (python/) wraps these. */
#include "warpheap/pool.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define WH_PLUGIN_EXPORT  __attribute__((visibility("default")))
#define WH_PLUGIN_DEVICES 64

typedef struct plugin_options {
    wh_pool_config cfg;
    size_t release_threshold; /* a free that leaves more cached trims to it; 0: never */
} plugin_options;

static wh_pool *pools[WH_PLUGIN_DEVICES];
static plugin_options options[WH_PLUGIN_DEVICES];
static bool options_set; /* options[] holds the defaults once this is true */
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread char last_error[512];

static int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return -1;
}

/* Under pools_lock. */
static void options_init(void) {
    if (options_set) return;
    for (int d = 0; d < WH_PLUGIN_DEVICES; ++d)
        options[d] = (plugin_options){.cfg = {.backend = WH_POOL_CUDA, .max_streams = 62, .vmm_slack_pm = 30}};
    options_set = true;
}

static wh_pool *pool_get(int device) {
    return device >= 0 && device < WH_PLUGIN_DEVICES ? __atomic_load_n(&pools[device], __ATOMIC_ACQUIRE) : NULL;
}

/* The device's pool, created on first use with that device current. */
static wh_pool *pool_of(int device) {
    wh_pool *p = pool_get(device);
    if (p || device < 0 || device >= WH_PLUGIN_DEVICES) return p;
    pthread_mutex_lock(&pools_lock);
    options_init();
    if (!pools[device]) {
        if (wh_pool_create(&p, &options[device].cfg) == WH_OK)
            __atomic_store_n(&pools[device], p, __ATOMIC_RELEASE);
        else
            fprintf(stderr, "warpheap plugin: device %d: %s\n", device, wh_last_error());
    }
    p = pools[device];
    pthread_mutex_unlock(&pools_lock);
    return p;
}

/* Set one option of device's pool (device -1: every device's) before it is
 * created.  Keys: growth (0 default, 1 arenas, 2 vmm), max_bytes,
 * release_threshold, alignment, max_streams, max_blocks, secure (0 or 1),
 * footprint (0 tight, 1 loose), vmm_slack_pm (1..1000).  0, or -1 with the
 * reason in wh_plugin_last_error.  The pools' budget defaults to 30/1000 over
 * the peak in use, not the library's 100: a framework's steps take
 * milliseconds, so the driver calls of a tight budget cost it little, and
 * its memory is what its users watch. */
WH_PLUGIN_EXPORT int wh_plugin_set_option(int device, const char *key, unsigned long long value) {
    if (device < -1 || device >= WH_PLUGIN_DEVICES)
        return fail("device %d is not in [-1, %d)", device, WH_PLUGIN_DEVICES);
    if (!key) return fail("option name is NULL");
    int rc = 0;
    pthread_mutex_lock(&pools_lock);
    options_init();
    for (int d = device < 0 ? 0 : device; d < (device < 0 ? WH_PLUGIN_DEVICES : device + 1) && rc == 0; ++d) {
        plugin_options *o = &options[d];
        if (pools[d])
            rc = fail("%s: device %d already has its pool; set options before its first allocation", key, d);
        else if (!strcmp(key, "growth") && value > WH_POOL_GROW_VMM)
            rc = fail("growth: %llu is not 0 (default), 1 (arenas) or 2 (vmm)", value);
        else if (!strcmp(key, "growth"))
            o->cfg.growth = (wh_pool_growth)value;
        else if (!strcmp(key, "max_bytes"))
            o->cfg.max_bytes = (size_t)value;
        else if (!strcmp(key, "release_threshold"))
            o->release_threshold = (size_t)value;
        else if (!strcmp(key, "alignment"))
            o->cfg.alignment = (size_t)value;
        else if (!strcmp(key, "max_streams"))
            o->cfg.max_streams = (uint32_t)value;
        else if (!strcmp(key, "max_blocks"))
            o->cfg.max_blocks = (uint32_t)value;
        else if (!strcmp(key, "footprint") && value > WH_POOL_FOOTPRINT_LOOSE)
            rc = fail("footprint: %llu is not 0 (tight) or 1 (loose)", value);
        else if (!strcmp(key, "footprint"))
            o->cfg.footprint = (wh_pool_footprint)value;
        else if (!strcmp(key, "vmm_slack_pm") && (value < 1 || value > 1000))
            rc = fail("vmm_slack_pm: %llu is not in [1, 1000]", value);
        else if (!strcmp(key, "vmm_slack_pm"))
            o->cfg.vmm_slack_pm = (uint32_t)value;
        else if (!strcmp(key, "secure") && value > 1)
            rc = fail("secure: %llu is not 0 or 1", value);
        else if (!strcmp(key, "secure"))
            o->cfg.secure = value == 1;
        else
            rc = fail("unknown option '%s'", key);
    }
    pthread_mutex_unlock(&pools_lock);
    return rc;
}

WH_PLUGIN_EXPORT const char *wh_plugin_last_error(void) { return last_error; }

/* Arenas are cudaMalloc'd on the current device: make it `device`. */
static void *alloc_on(int device, size_t size, cudaStream_t stream) {
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (cur != device && cudaSetDevice(device) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    wh_pool *p = pool_of(device);
    void *ptr = p ? wh_pool_alloc(p, size ? size : 1, stream) : NULL;
    if (!ptr && p) fprintf(stderr, "warpheap plugin: %s\n", wh_last_error());
    if (cur != device && cudaSetDevice(cur) != cudaSuccess) { /* the caller's device, back */
        fprintf(stderr, "warpheap plugin: cannot make device %d current again: %s\n", cur,
                cudaGetErrorString(cudaGetLastError()));
    }
    return ptr;
}

static void free_on(int device, void *ptr, cudaStream_t stream) {
    wh_pool *p = pool_get(device);
    if (!p || wh_pool_free(p, ptr, stream) != WH_OK) {
        fprintf(stderr, "warpheap plugin: %s\n", p ? wh_last_error() : "free on a device without a pool");
        return;
    }
    size_t keep = options[device].release_threshold;
    wh_pool_stats s;
    if (keep && wh_pool_get_stats(p, &s) == WH_OK && s.cached > keep && wh_pool_trim(p, keep) != WH_OK)
        fprintf(stderr, "warpheap plugin: %s\n", wh_last_error());
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
/* CuPy's current stream, passed by the Python allocator (warpheap.cupy). */
WH_PLUGIN_EXPORT void *wh_cupy_malloc_stream(size_t size, int device, cudaStream_t stream) {
    return alloc_on(device, size, stream);
}
WH_PLUGIN_EXPORT void wh_cupy_free_stream(void *ptr, int device, cudaStream_t stream) { free_on(device, ptr, stream); }

static wh_pool *pool_or_fail(int device) {
    wh_pool *p = pool_get(device);
    if (!p) fail("device %d has no pool (nothing allocated there yet)", device);
    return p;
}

/* wh_pool_status to 0, or -1 with wh_last_error as the plug-in's error. */
static int done(wh_status st) { return st == WH_OK ? 0 : fail("%s", wh_last_error()); }

/* in use, peak, reserved, peak reserved, allocations, frees, failures, tag hits */
WH_PLUGIN_EXPORT int wh_plugin_stats(int device, unsigned long long out[8]) {
    wh_pool *p = pool_or_fail(device);
    wh_pool_stats s;
    if (!p || done(wh_pool_get_stats(p, &s))) return -1;
    unsigned long long v[8] = {s.in_use, s.in_use_peak, s.reserved, s.reserved_peak,
                               s.allocs, s.frees,       s.failures, s.tag_hits};
    for (int i = 0; i < 8; ++i) out[i] = v[i];
    return 0;
}
/* The whole wh_pool_stats; size: sizeof(wh_pool_stats) as the caller knows it. */
WH_PLUGIN_EXPORT int wh_plugin_pool_stats(int device, wh_pool_stats *out, size_t size) {
    wh_pool *p = pool_or_fail(device);
    wh_pool_stats s;
    if (!p || done(wh_pool_get_stats(p, &s))) return -1;
    memcpy(out, &s, size < sizeof s ? size : sizeof s);
    return 0;
}
WH_PLUGIN_EXPORT int wh_plugin_reset_peak(int device) {
    wh_pool *p = pool_or_fail(device);
    return p ? done(wh_pool_reset_peak(p)) : -1;
}
WH_PLUGIN_EXPORT int wh_plugin_trim(int device, size_t keep_bytes) {
    wh_pool *p = pool_or_fail(device);
    return p ? done(wh_pool_trim(p, keep_bytes)) : -1;
}
WH_PLUGIN_EXPORT int wh_plugin_live_blocks(int device, wh_pool_block *out, size_t cap, size_t *count) {
    wh_pool *p = pool_or_fail(device);
    return p ? done(wh_pool_live_blocks(p, out, cap, count)) : -1;
}
/* The pool with live block ptr, any device's; NULL if none has it. */
static wh_pool *pool_holding(const void *ptr) {
    for (int d = 0; d < WH_PLUGIN_DEVICES; ++d) {
        wh_pool *p = pool_get(d);
        if (p && wh_pool_usable_size(p, ptr)) return p;
    }
    return NULL;
}

/* ptr is also used by work queued on stream: its memory goes to the pool's
 * other streams only once that work is done too (wh_pool_record_stream).
 * device: the pool's, or -1 for the pool that holds ptr. */
WH_PLUGIN_EXPORT int wh_plugin_record_stream(int device, void *ptr, cudaStream_t stream) {
    if (device < -1 || device >= WH_PLUGIN_DEVICES)
        return fail("device %d is not in [-1, %d)", device, WH_PLUGIN_DEVICES);
    if (!ptr) return fail("record_stream: ptr is NULL");
    wh_pool *p = device >= 0 ? pool_or_fail(device) : pool_holding(ptr);
    if (!p && device < 0) return fail("record_stream: %p is no live block of any device's pool", ptr);
    return p ? done(wh_pool_record_stream(p, ptr, stream)) : -1;
}

/* PyTorch's record-stream hook (CUDAPluggableAllocator's set_record_stream_fn):
 * tensor.record_stream and PyTorch's own C++ callers (the autograd engine,
 * NCCL's point-to-point calls) reach the pool here.  Like PyTorch's own
 * allocator it passes over memory that is not its own (NULL, a tensor of
 * another process or library). */
WH_PLUGIN_EXPORT void wh_torch_record_stream(void *ptr, cudaStream_t stream) {
    wh_pool *p = ptr ? pool_holding(ptr) : NULL;
    if (p && wh_pool_record_stream(p, ptr, stream) != WH_OK) fprintf(stderr, "warpheap plugin: %s\n", wh_last_error());
}

/* Before destroying a stream that allocated from the pool. */
WH_PLUGIN_EXPORT int wh_plugin_forget_stream(int device, cudaStream_t stream) {
    wh_pool *p = pool_get(device);
    return p ? done(wh_pool_forget_stream(p, stream)) : 0;
}
