/* SPDX-License-Identifier: MIT */
/* Host pool: create, allocate and free on a stream (a freed block is reused at once), stats, destroy. */
#include "warpheap/pool.h"
#include <stdio.h>

static int fail(const char *what) { fprintf(stderr, "%s: %s\n", what, wh_last_error()); return 1; }

int main(void) {
    wh_pool *pool;
    wh_pool_stats st;
    wh_stream stream = NULL;                              /* a cudaStream_t; NULL: the default stream */
    wh_pool_config cfg = {.backend = wh_cuda_available() ? WH_POOL_CUDA : WH_POOL_CPU};   /* 0s: defaults */
    if (wh_pool_create(&pool, &cfg) != WH_OK) return fail("create");
    for (int i = 0; i < 3; ++i) {
        void *p = wh_pool_alloc(pool, 1 << 20, stream);   /* NULL + wh_last_error() on failure */
        if (!p) return fail("alloc");
        if (wh_pool_free(pool, p, stream) != WH_OK) return fail("free");   /* after kernels on stream used p */
    }
    if (wh_pool_get_stats(pool, &st) != WH_OK) return fail("stats");
    printf("%s pool: %llu allocations, %llu frees, %llu bytes in use, %llu cached\n",
           wh_pool_get_backend(pool) == WH_POOL_CUDA ? "CUDA" : "CPU", (unsigned long long)st.allocs,
           (unsigned long long)st.frees, (unsigned long long)st.in_use, (unsigned long long)st.cached);
    if (st.allocs != 3 || st.frees != 3 || st.in_use != 0) return 1;
    return wh_pool_destroy(pool) == WH_OK ? 0 : fail("destroy");
}
