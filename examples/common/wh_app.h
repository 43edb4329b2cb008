/* SPDX-License-Identifier: MIT */
/* Shared by the object-allocator examples (nbody, wator, gameoflife, collision,
 * sugarscape, traffic, structure, barneshut; wh_app_bench.h builds on it;
 * their options are parsed by wh_cli.h): timing, the run environment (GPU, driver, CUDA version) for result files, and
 * a PPM writer (binary P6: a header line and raw RGB, viewable everywhere and
 * convertible with any image tool).  Header-only C that also compiles as CUDA;
 * anyone may reuse it. */
#ifndef WH_APP_H
#define WH_APP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include "warpheap/platform.h"
#if defined(__CUDACC__)
#include <cuda_runtime_api.h>
#include "warpheap/cuda_check.h"
#endif

/* The neighbour of cell (row-major, w x h) in direction d (0 up, 1 right,
 * 2 down, 3 left) on a torus: the grid of wa-tor and sugarscape. */
WH_INLINE WH_HOST_DEVICE uint32_t app_torus_neighbor(uint32_t w, uint32_t h, uint32_t cell, uint32_t d) {
    uint32_t x = cell % w, y = cell / w;
    if (d == 0)
        y = y ? y - 1 : h - 1;
    else if (d == 1)
        x = x + 1 == w ? 0 : x + 1;
    else if (d == 2)
        y = y + 1 == h ? 0 : y + 1;
    else
        x = x ? x - 1 : w - 1;
    return y * w + x;
}

static inline double app_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* Wait for the GPU (no-op on the CPU backend). */
static inline void app_sync(int on_device) {
#if defined(__CUDACC__)
    if (on_device) WH_CUDA_OR_DIE(cudaDeviceSynchronize());
#else
    (void)on_device;
#endif
}
/* "GPU name,driver,runtime" (or "cpu,-,-") for CSV files. */
static inline void app_env(char *out, size_t n, int on_device) {
#if defined(__CUDACC__)
    if (on_device) {
        struct cudaDeviceProp p;
        int dev = 0, drv = 0, rt = 0;
        WH_CUDA_OR_DIE(cudaGetDevice(&dev));
        WH_CUDA_OR_DIE(cudaGetDeviceProperties(&p, dev));
        WH_CUDA_OR_DIE(cudaDriverGetVersion(&drv));
        WH_CUDA_OR_DIE(cudaRuntimeGetVersion(&rt));
        snprintf(out, n, "%.200s,%d.%d,%d.%d", p.name, drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
        return;
    }
#endif
    (void)on_device;
    snprintf(out, n, "cpu,-,-");
}

/* Write a w x h RGB image (rgb: 3 bytes per pixel, rows top to bottom). */
static inline int app_write_ppm(const char *path, int w, int h, const unsigned char *rgb) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "P6\n%d %d\n255\n", w, h);
    size_t n = (size_t)w * (size_t)h * 3u;
    int ok = fwrite(rgb, 1, n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok) fprintf(stderr, "%s: write failed\n", path);
    return ok ? 0 : -1;
}

/* Copy n bytes from the heap's memory space to the host. */
static inline void app_to_host(void *dst, const void *src, size_t n, int on_device) {
#if defined(__CUDACC__)
    if (on_device) {
        WH_CUDA_OR_DIE(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
        return;
    }
#endif
    (void)on_device;
    memcpy(dst, src, n);
}
static inline void app_to_dev(void *dst, const void *src, size_t n, int on_device) {
#if defined(__CUDACC__)
    if (on_device) {
        WH_CUDA_OR_DIE(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
        return;
    }
#endif
    (void)on_device;
    memcpy(dst, src, n);
}
static inline void *app_alloc(size_t n, int on_device) {
    void *p = NULL;
#if defined(__CUDACC__)
    if (on_device) {
        WH_CUDA_OR_DIE(cudaMalloc(&p, n));
        WH_CUDA_OR_DIE(cudaMemset(p, 0, n));
        return p;
    }
#endif
    (void)on_device;
    p = calloc(1, n);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}
static inline void app_free(void *p, int on_device) {
#if defined(__CUDACC__)
    if (on_device) {
        WH_CUDA_OR_DIE(cudaFree(p));
        return;
    }
#endif
    (void)on_device;
    free(p);
}

/* Host memory that kernels read over the bus (pinned and mapped; plain host
 * memory on the CPU backend).  For set-up data a variant reads only once,
 * such as a network's topology copied into its objects: kept off the device,
 * it takes nothing from a --heap-mb budget. */
static inline void *app_alloc_mapped(size_t n, int on_device) {
#if defined(__CUDACC__)
    if (on_device) {
        void *p = NULL;
        WH_CUDA_OR_DIE(cudaHostAlloc(&p, n, cudaHostAllocMapped));
        return p;
    }
#endif
    return app_alloc(n, on_device);
}
static inline void app_free_mapped(void *p, int on_device) {
#if defined(__CUDACC__)
    if (on_device) {
        WH_CUDA_OR_DIE(cudaFreeHost(p));
        return;
    }
#endif
    app_free(p, on_device);
}

/* Check a wh_status in a program. */
#define APP_TRY(call)                                                                                              \
    do {                                                                                                           \
        wh_status st_ = (call);                                                                                    \
        if (st_ != WH_OK) {                                                                                        \
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, wh_strerror(st_), wh_last_error()); \
            exit(1);                                                                                               \
        }                                                                                                          \
    } while (0)

/* The end of a run: the simulation's objects are released with the heap, so
 * WH_ERR_IN_USE (live objects at destroy) is what a run ends with. */
#define APP_DESTROY(soa_ptr)                                                                           \
    do {                                                                                               \
        wh_status dst_ = wh_soa_destroy(soa_ptr);                                                      \
        if (dst_ != WH_OK && dst_ != WH_ERR_IN_USE) {                                                  \
            fprintf(stderr, "%s:%d: wh_soa_destroy: %s (%s)\n", __FILE__, __LINE__, wh_strerror(dst_), \
                    wh_last_error());                                                                  \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

#endif
