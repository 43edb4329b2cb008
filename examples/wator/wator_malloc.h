/* Wa-Tor on CUDA's device malloc (GPU only), as the paper's "other
 * allocators": agents are malloc'd structs (array of structures), the cells
 * hold agent pointers, and each type keeps an array of its object pointers for
 * the do-all kernels.  Objects created during a do-all go to a "new" array;
 * destroyed ones are marked dead (freed after the next compaction, so no
 * pointer dangles); after each do-all of a type its array is compacted with
 * atomic appends.  Included by wator.c; uses its rules. */
#if defined(__CUDACC__)
typedef struct wt_agent { uint32_t kind, cell, target, egg, energy, dead; } wt_agent;

typedef struct wt_list {
    wt_agent **items, **next, **fresh, **dead;
    uint32_t *n, *n_next, *n_fresh, *n_dead;       /* device counters */
    uint32_t cap;
} wt_list;

typedef struct wt_mctx {
    wt_ctx c;
    wt_agent **agent;                                  /* per cell */
    uint32_t *request, *granted;
    wt_list fish, sharks;
    unsigned long long *fails;
} wt_mctx;

static __device__ wt_agent *wm_new(wt_list *l, uint32_t kind, uint32_t cell, uint32_t energy, unsigned long long *fails) {
    wt_agent *a = (wt_agent *)malloc(sizeof(wt_agent));
    if (!a) { atomicAdd(fails, 1ull); return NULL; }
    a->kind = kind; a->cell = cell; a->target = WT_NONE; a->egg = 0; a->energy = energy; a->dead = 0;
    uint32_t k = atomicAdd(l->n_fresh, 1u);
    if (k < l->cap) l->fresh[k] = a; else atomicAdd(fails, 1ull);
    return a;
}
static __device__ void wm_kill(wt_list *l, wt_agent *a) {
    a->dead = 1;
    uint32_t k = atomicAdd(l->n_dead, 1u);
    if (k < l->cap) l->dead[k] = a;
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
static __global__ void wm_request(wt_mctx m, wt_list l, bool shark) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= *l.n) return;
    wt_agent *a = l.items[i];
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
static __global__ void wm_update(wt_mctx m, wt_list l, bool shark) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= *l.n) return;
    wt_agent *a = l.items[i];
    uint32_t egg = ++a->egg, me = a->cell;
    if (shark && --a->energy == 0) {
        m.agent[me] = NULL;
        wm_kill(&l, a);
        return;
    }
    uint32_t t = wm_granted(&m, a);
    if (t == ~0u) return;
    wt_agent *prey = m.agent[t];
    if (shark && prey) {
        wm_kill(&m.fish, prey);
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
/* items := live items + fresh; then free the dead (nothing points to them). */
static __global__ void wm_compact(wt_list l) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, n = *l.n, nf = *l.n_fresh;
    if (i < n && !l.items[i]->dead) l.next[atomicAdd(l.n_next, 1u)] = l.items[i];
    if (i < nf && i < l.cap && !l.fresh[i]->dead) l.next[atomicAdd(l.n_next, 1u)] = l.fresh[i];
}
static __global__ void wm_free_dead(wt_list l) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < *l.n_dead && i < l.cap) free(l.dead[i]);
}
static __global__ void wm_swap_counts(wt_list l) {
    *l.n = *l.n_next; *l.n_next = 0; *l.n_fresh = 0; *l.n_dead = 0;
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
static void wm_list_alloc(wt_list *l, uint32_t cap) {
    l->cap = cap;
    WH_CUDA_OR_DIE(cudaMalloc(&l->items, (size_t)cap * 8)); WH_CUDA_OR_DIE(cudaMalloc(&l->next, (size_t)cap * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&l->fresh, (size_t)cap * 8)); WH_CUDA_OR_DIE(cudaMalloc(&l->dead, (size_t)cap * 8));
    uint32_t *cnt;
    WH_CUDA_OR_DIE(cudaMalloc(&cnt, 16));
    WH_CUDA_OR_DIE(cudaMemset(cnt, 0, 16));
    l->n = cnt; l->n_next = cnt + 1; l->n_fresh = cnt + 2; l->n_dead = cnt + 3;
}
static void wm_list_free(wt_list *l) {
    WH_CUDA_OR_DIE(cudaFree(l->items)); WH_CUDA_OR_DIE(cudaFree(l->next));
    WH_CUDA_OR_DIE(cudaFree(l->fresh)); WH_CUDA_OR_DIE(cudaFree(l->dead)); WH_CUDA_OR_DIE(cudaFree(l->n));
}
/* After a do-all of list l (or after both, for deaths caused across types). */
static void wm_settle(wt_list *l) {
    unsigned g = (l->cap + 255) / 256;
    wm_compact<<<g, 256>>>(*l);
    WH_LAUNCH_OR_DIE();
    wm_free_dead<<<g, 256>>>(*l);
    WH_LAUNCH_OR_DIE();
    wm_swap_counts<<<1, 1>>>(*l);
    WH_LAUNCH_OR_DIE();
    wt_agent **t = l->items; l->items = l->next; l->next = t;
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
    wm_list_alloc(&m.fish, (uint32_t)n);
    wm_list_alloc(&m.sharks, (uint32_t)n);
    unsigned g = (unsigned)((n + 255) / 256);
    wm_init<<<g, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    wm_settle(&m.fish);
    wm_settle(&m.sharks);
    app_sync(1);
    double t0 = app_now();
    for (uint32_t it = 0; it < o->iters; ++it) {
        APP_TIME_CAP(it, 1, 1, t0)
        m.c.iter = it;
        wm_prepare<<<g, 256>>>(m, n); WH_LAUNCH_OR_DIE();
        wm_request<<<g, 256>>>(m, m.fish, false); WH_LAUNCH_OR_DIE();
        wm_decide<<<g, 256>>>(m, n); WH_LAUNCH_OR_DIE();
        wm_update<<<g, 256>>>(m, m.fish, false); WH_LAUNCH_OR_DIE();
        wm_settle(&m.fish);
        wm_prepare<<<g, 256>>>(m, n); WH_LAUNCH_OR_DIE();
        wm_request<<<g, 256>>>(m, m.sharks, true); WH_LAUNCH_OR_DIE();
        wm_decide<<<g, 256>>>(m, n); WH_LAUNCH_OR_DIE();
        wm_update<<<g, 256>>>(m, m.sharks, true); WH_LAUNCH_OR_DIE();
        wm_settle(&m.sharks);
        wm_settle(&m.fish);                            /* fish eaten by sharks */
        if ((it + 1) % 10 == 0) { app_sync(1); printf("  malloc progress: %u iterations, %.3f s\n", it + 1, app_now() - t0); fflush(stdout); }
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
    wm_list_free(&m.fish);
    wm_list_free(&m.sharks);
    WH_CUDA_OR_DIE(cudaFree(m.agent)); WH_CUDA_OR_DIE(cudaFree(m.request));
    WH_CUDA_OR_DIE(cudaFree(m.granted)); WH_CUDA_OR_DIE(cudaFree(m.fails));
    return t;
}
#endif
