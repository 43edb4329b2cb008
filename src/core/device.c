/* SPDX-License-Identifier: MIT */
/* Whether a GPU can be used: the CPU backend is the default wherever not. */
#include "warpheap/warpheap.h"

#if WH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

bool wh_cuda_available(void) {
#if WH_HAVE_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver: clear the sticky error */
        return false;
    }
    return n > 0;
#else
    return false;
#endif
}
