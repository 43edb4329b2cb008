/* SPDX-License-Identifier: MIT */
/* Wa-Tor on CUDA's device malloc (GPU only), as the paper's "other
 * allocators": agents are malloc'd structs (array of structures), the cells
 * hold agent pointers, and each type keeps an array of its object pointers for
 * the do-all kernels, compacted after each do-all of the type
 * (wh_app_plist.h).  Included by wator.c; uses its rules. */
#if defined(__CUDACC__)
#include "wh_app_plist.h"

/* dead first: app_plist marks it */
typedef struct wt_agent {
    uint32_t dead, kind, cell, target, egg, energy;
} wt_agent;

typedef struct wt_mctx {
    wt_ctx c;
    wt_agent **agent; /* per cell */
    uint32_t *request, *granted;
    app_plist fish, sharks;
    unsigned long long *fails;
} wt_mctx;

static __device__ wt_agent *wm_new(app_plist *l, uint32_t kind, uint32_t cell, uint32_t energy,
                                   unsigned long long *fails) {
    wt_agent *a = (wt_agent *)app_dev_malloc(sizeof(wt_agent), fails);
    if (!a) return NULL;
    a->kind = kind;
    a->cell = cell;
    a->target = WT_NONE;
    a->egg = 0;
    a->energy = energy;
    a->dead = 0;
    app_plist_add(l, a, fails);
    return a;
}
static __global__ void wm_init(wt_mctx m, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t k = wt_initial((uint32_t)i);
    m.agent[i] = NULL;
    if (k == WT_EMPTY) return;
    wt_agent *a = wm_new(k == WT_FISH ? &m.fish : &m.sharks, k, (uint32_t)i, k == WT_SHARK ? m.c.start : 0, m.fails);
    if (a) a->egg = wt_initial_egg(&m.c, (uint32_t)i);
    m.agent[i] = a;
}
static __global__ void wm_prepare(wt_mctx m, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    m.request[i] = 0;
    m.granted[i] = WT_NONE;
}
static __global__ void wm_decide(wt_mctx m, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    m.granted[i] = wt_pick(m.request[i], wt_rand(&m.c, 2, (uint32_t)i));
}
static __global__ void wm_request(wt_mctx m, app_plist l, bool shark) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= APP_PLIST_N(l)) return;
    wt_agent *a = (wt_agent *)l.items[i];
    uint32_t me = a->cell, free_mask = 0, fish_mask = 0;
    for (uint32_t d = 0; d < 4; ++d) {
        wt_agent *o = m.agent[wt_neighbor(&m.c, me, d)];
        free_mask |= (uint32_t)(o == NULL) << d;
        fish_mask |= (uint32_t)(o != NULL && o->kind == WT_FISH) << d;
    }
    uint32_t d = wt_pick(shark && fish_mask ? fish_mask : free_mask, wt_rand(&m.c, shark ? 5 : 1, me));
    a->target = d;
    if (d != WT_NONE) atomicOr(&m.request[wt_neighbor(&m.c, me, d)], 1u << ((d + 2u) & 3u));
}
static __device__ uint32_t wm_granted(const wt_mctx *m, const wt_agent *a) {
    if (a->target == WT_NONE) return ~0u;
    uint32_t t = wt_neighbor(&m->c, a->cell, a->target);
    return m->granted[t] == ((a->target + 2u) & 3u) ? t : ~0u;
}
static __global__ void wm_update(wt_mctx m, app_plist l, bool shark) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= APP_PLIST_N(l)) return;
    wt_agent *a = (wt_agent *)l.items[i];
    uint32_t egg = ++a->egg, me = a->cell;
    if (shark && --a->energy == 0) {
        m.agent[me] = NULL;
        app_plist_kill(a);
        return;
    }
    uint32_t t = wm_granted(&m, a);
    if (t == ~0u) return;
    wt_agent *prey = m.agent[t];
    if (shark && prey) {
        app_plist_kill(prey);
        a->energy += m.c.boost;
    }
    m.agent[t] = a;
    a->cell = t;
    wt_agent *left = NULL;
    if (egg >= m.c.spawn) {
        left = wm_new(&l, a->kind, me, shark ? m.c.start : 0, m.fails);
        a->egg = 0;
    }
    m.agent[me] = left;
}
/* The grid as three arrays (kind, egg, energy), for the comparison. */
static __global__ void wm_export(wt_mctx m, uint64_t n, uint32_t *out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    wt_agent *a = m.agent[i];
    out[i] = a ? a->kind : WT_EMPTY;
    out[n + i] = a ? a->egg : 0;
    out[2 * n + i] = a && a->kind == WT_SHARK ? a->energy : 0;
}
static double run_malloc(const opts *o, grid *out) {
    uint64_t n = (uint64_t)o->w * o->h;
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)n * 3 * 64 + ((size_t)64 << 20)));
    wt_mctx m;
    memset(&m, 0, sizeof m);
    m.c = ctx_for(o);
    WH_CUDA_OR_DIE(cudaMalloc(&m.agent, n * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&m.request, n * 4));
    WH_CUDA_OR_DIE(cudaMalloc(&m.granted, n * 4));
    WH_CUDA_OR_DIE(cudaMalloc(&m.fails, 8));
    WH_CUDA_OR_DIE(cudaMemset(m.fails, 0, 8));
    app_plist_alloc(&m.fish, (uint32_t)n);
    app_plist_alloc(&m.sharks, (uint32_t)n);
    unsigned g = (unsigned)((n + 255) / 256);
    wm_init<<<g, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    app_plist_settle(&m.fish);
    app_plist_settle(&m.sharks);
    app_sync(1);
    double t0 = app_now();
    for (uint32_t it = 0; it < o->iters; ++it) {
        APP_TIME_CAP(it, 1, 1, t0)
        m.c.iter = it;
        wm_prepare<<<g, 256>>>(m, n);
        WH_LAUNCH_OR_DIE();
        wm_request<<<g, 256>>>(m, m.fish, false);
        WH_LAUNCH_OR_DIE();
        wm_decide<<<g, 256>>>(m, n);
        WH_LAUNCH_OR_DIE();
        wm_update<<<g, 256>>>(m, m.fish, false);
        WH_LAUNCH_OR_DIE();
        app_plist_settle(&m.fish);
        wm_prepare<<<g, 256>>>(m, n);
        WH_LAUNCH_OR_DIE();
        wm_request<<<g, 256>>>(m, m.sharks, true);
        WH_LAUNCH_OR_DIE();
        wm_decide<<<g, 256>>>(m, n);
        WH_LAUNCH_OR_DIE();
        wm_update<<<g, 256>>>(m, m.sharks, true);
        WH_LAUNCH_OR_DIE();
        app_plist_settle(&m.sharks);
        app_plist_settle(&m.fish); /* fish eaten by sharks */
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
    /* final grid */
    grid_alloc(out, n);
    uint32_t *d_out;
    WH_CUDA_OR_DIE(cudaMalloc(&d_out, n * 12));
    wm_export<<<g, 256>>>(m, n, d_out);
    WH_LAUNCH_OR_DIE();
    app_to_host(out->kind, d_out, n * 4, 1);
    app_to_host(out->egg, d_out + n, n * 4, 1);
    app_to_host(out->energy, d_out + 2 * n, n * 4, 1);
    WH_CUDA_OR_DIE(cudaFree(d_out));
    app_plist_settle(&m.fish);
    app_plist_settle(&m.sharks);
    app_plist_free_items<<<g, 256>>>(m.fish);
    WH_LAUNCH_OR_DIE();
    app_plist_free_items<<<g, 256>>>(m.sharks);
    WH_LAUNCH_OR_DIE();
    app_sync(1);
    app_plist_free(&m.fish);
    app_plist_free(&m.sharks);
    WH_CUDA_OR_DIE(cudaFree(m.agent));
    WH_CUDA_OR_DIE(cudaFree(m.request));
    WH_CUDA_OR_DIE(cudaFree(m.granted));
    WH_CUDA_OR_DIE(cudaFree(m.fails));
    return t;
}
#endif
