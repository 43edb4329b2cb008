/* SPDX-License-Identifier: MIT */
/* Game of Life on CUDA's device malloc (GPU only), as the paper's "other
 * allocators": the same O(#alive) algorithm with malloc'd agents and per-type
 * pointer arrays (compacted after each do-all; the destroyed are freed then:
 * wh_app_plist.h).
 * Included by gameoflife.c; uses its rules. */
#if defined(__CUDACC__)
#include "wh_app_plist.h"

typedef struct gm_agent {
    uint32_t dead, cell, action;
} gm_agent; /* dead first: app_plist marks it */
typedef struct gm_ctx {
    gl_ctx c;
    gm_agent **agent;
    app_plist alive, cand;
    unsigned long long *fails;
} gm_ctx;

static __device__ gm_agent *gm_new(app_plist *l, uint32_t cell, unsigned long long *fails) {
    gm_agent *a = (gm_agent *)app_dev_malloc(sizeof(gm_agent), fails);
    if (!a) return NULL;
    a->cell = cell;
    a->action = 0;
    a->dead = 0;
    app_plist_add(l, a, fails);
    return a;
}
static __global__ void gm_seed(gm_ctx m, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    m.c.alive[i] = gl_initial(&m.c, i);
    m.agent[i] = m.c.alive[i] ? gm_new(&m.alive, (uint32_t)i, m.fails) : NULL;
}
static __global__ void gm_prepare(gm_ctx m, app_plist l, bool alive) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= APP_PLIST_N(l)) return;
    gm_agent *a = (gm_agent *)l.items[i];
    uint32_t n = gl_count(&m.c, a->cell);
    a->action = alive ? (n == 2 || n == 3) : n == 3;
}
static __global__ void gm_alive_update(gm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= APP_PLIST_N(m.alive)) return;
    gm_agent *a = (gm_agent *)m.alive.items[i];
    if (a->action) return;
    m.c.alive[a->cell] = 0;
    m.agent[a->cell] = NULL;
    a->dead = 1;
}
static __global__ void gm_cand_update(gm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= APP_PLIST_N(m.cand)) return;
    gm_agent *a = (gm_agent *)m.cand.items[i];
    a->dead = 1;
    if (a->action) {
        m.c.alive[a->cell] = 1;
        m.agent[a->cell] = gm_new(&m.alive, a->cell, m.fails);
    } else {
        m.agent[a->cell] = NULL;
    }
}
static __global__ void gm_spread(gm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= APP_PLIST_N(m.alive)) return;
    uint32_t cell = ((const gm_agent *)m.alive.items[i])->cell;
    for (uint32_t k = 0; k < 8; ++k) {
        uint32_t nb = gl_nb(&m.c, cell, k);
        if (m.c.alive[nb] || m.agent[nb]) continue;
        if (atomicCAS((unsigned long long *)&m.agent[nb], 0ull, GL_RESERVED) == 0ull)
            m.agent[nb] = gm_new(&m.cand, nb, m.fails);
    }
}
static double run_malloc(const opts *o, uint32_t *out) {
    uint64_t n = (uint64_t)o->w * o->h;
    /* 256 B a cell: the first generation holds 3.4M agents in a 2048^2 grid, and
     * 64 B a cell leaves 1.04M of them unallocated */
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)n * 256 + ((size_t)64 << 20)));
    gm_ctx m;
    memset(&m, 0, sizeof m);
    m.c = ctx_for(o);
    m.c.alive = (uint32_t *)app_alloc(n * 4, 1);
    WH_CUDA_OR_DIE(cudaMalloc(&m.agent, n * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&m.fails, 8));
    WH_CUDA_OR_DIE(cudaMemset(m.fails, 0, 8));
    app_plist_alloc(&m.alive, (uint32_t)n);
    app_plist_alloc(&m.cand, (uint32_t)n);
    unsigned g = (unsigned)((n + 255) / 256);
    double ts = app_now();
    gm_seed<<<g, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    app_plist_settle(&m.alive);
    gm_spread<<<g, 256>>>(m);
    WH_LAUNCH_OR_DIE();
    app_plist_settle(&m.cand);
    app_sync(1);
    printf("  malloc: set-up (seeding and the first candidates) %.3f s\n", app_now() - ts);
    double t0 = app_now();
    for (uint32_t it = 0; it < o->iters; ++it) {
        APP_TIME_CAP(it, 1, 1, t0)
        gm_prepare<<<g, 256>>>(m, m.alive, true);
        WH_LAUNCH_OR_DIE();
        gm_prepare<<<g, 256>>>(m, m.cand, false);
        WH_LAUNCH_OR_DIE();
        gm_alive_update<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        gm_cand_update<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        app_plist_settle(&m.alive);
        app_plist_settle(&m.cand);
        gm_spread<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        app_plist_settle(&m.cand);
        if (it < 3 || (it + 1) % 10 == 0) {
            app_sync(1);
            printf("  malloc progress: %u iterations, %.3f s\n", it + 1, app_now() - t0);
            fflush(stdout);
        }
    }
    app_sync(1);
    double t = app_now() - t0;
    unsigned long long fails = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&fails, m.fails, 8, cudaMemcpyDeviceToHost));
    if (fails) printf("  malloc: %llu failed allocations\n", fails);
    app_to_host(out, m.c.alive, n * 4, 1);
    app_plist_free_items<<<g, 256>>>(m.alive);
    WH_LAUNCH_OR_DIE();
    app_plist_free_items<<<g, 256>>>(m.cand);
    WH_LAUNCH_OR_DIE();
    app_sync(1);
    app_plist_free(&m.alive);
    app_plist_free(&m.cand);
    WH_CUDA_OR_DIE(cudaFree(m.agent));
    WH_CUDA_OR_DIE(cudaFree(m.fails));
    app_free(m.c.alive, 1);
    return t;
}
#endif
