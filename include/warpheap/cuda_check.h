/* SPDX-License-Identifier: MIT */
/* Checking CUDA calls.  Every runtime call and every launch in warpheap goes
 * through one of these: a library function turns a failure into WH_ERR_CUDA
 * with the call and message in wh_last_error(); a program (test, benchmark,
 * example) prints where it failed and exits. */
#ifndef WARPHEAP_CUDA_CHECK_H
#define WARPHEAP_CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include "warpheap/warpheap.h"

/* In a function returning wh_status. */
#define WH_CUDA_TRY(call)                                                                                         \
    do {                                                                                                          \
        cudaError_t wh_e_ = (call);                                                                               \
        if (wh_e_ != cudaSuccess)                                                                                 \
            return wh__fail(WH_ERR_CUDA, "%s: %s (%s:%d)", #call, cudaGetErrorString(wh_e_), __FILE__, __LINE__); \
    } while (0)
/* After a <<<launch>>> in a function returning wh_status. */
#define WH_LAUNCH_TRY() WH_CUDA_TRY(cudaGetLastError())

/* In programs: report and exit(1). */
#define WH_CUDA_OR_DIE(call)                                                                                        \
    do {                                                                                                            \
        cudaError_t wh_e_ = (call);                                                                                 \
        if (wh_e_ != cudaSuccess) {                                                                                 \
            fprintf(stderr, "CUDA error at %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(wh_e_)); \
            exit(1);                                                                                                \
        }                                                                                                           \
    } while (0)
#define WH_LAUNCH_OR_DIE() WH_CUDA_OR_DIE(cudaGetLastError())

/* Raise cudaLimitStackSize, before any of them runs, to what the largest
 * local frame of these n kernels needs.  A launch that needs more than the
 * limit has the driver grow local memory first, which waits for the device
 * to idle: a kernel launched beside others that wait for it (a committer
 * beside its producers, arena/forecast.h) then waits for them in turn.  In
 * programs: exits on a CUDA error. */
static inline void wh_cuda_stack_for(const void *const *kernels, int n) {
    size_t need = 0, have = 0;
    for (int i = 0; i < n; ++i) {
        struct cudaFuncAttributes fa;
        WH_CUDA_OR_DIE(cudaFuncGetAttributes(&fa, kernels[i]));
        if (fa.localSizeBytes > need) need = fa.localSizeBytes;
    }
    WH_CUDA_OR_DIE(cudaDeviceGetLimit(&have, cudaLimitStackSize));
    if (need > have) WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitStackSize, need));
}

#endif /* WARPHEAP_CUDA_CHECK_H */
