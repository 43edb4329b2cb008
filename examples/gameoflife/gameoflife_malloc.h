/* Game of Life on CUDA's device malloc (GPU only), as the paper's "other
 * allocators": the same O(#alive) algorithm with malloc'd agents and per-type
 * pointer arrays (compacted after each do-all; the destroyed are freed then).
 * Included by gameoflife.c; uses its rules. */
#if defined(__CUDACC__)
typedef struct gm_agent { uint32_t cell, action, dead; } gm_agent;
typedef struct gm_list {
    gm_agent **items, **next, **fresh;
    uint32_t *n, *n_next, *n_fresh;
    uint32_t cap;
} gm_list;
typedef struct gm_ctx {
    gl_ctx c;
    gm_agent **agent;
    gm_list alive, cand;
    unsigned long long *fails;
} gm_ctx;

static __device__ gm_agent *gm_new(gm_list *l, uint32_t cell, unsigned long long *fails) {
    gm_agent *a = (gm_agent *)malloc(sizeof(gm_agent));
    if (!a) { atomicAdd(fails, 1ull); return NULL; }
    a->cell = cell; a->action = 0; a->dead = 0;
    uint32_t k = atomicAdd(l->n_fresh, 1u);
    if (k < l->cap) l->fresh[k] = a; else atomicAdd(fails, 1ull);
    return a;
}
static __global__ void gm_seed(gm_ctx m, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    m.c.alive[i] = gl_initial(&m.c, i);
    m.agent[i] = m.c.alive[i] ? gm_new(&m.alive, (uint32_t)i, m.fails) : NULL;
}
static __global__ void gm_prepare(gm_ctx m, gm_list l, bool alive) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= *l.n) return;
    gm_agent *a = l.items[i];
    uint32_t n = gl_count(&m.c, a->cell);
    a->action = alive ? (n == 2 || n == 3) : n == 3;
}
static __global__ void gm_alive_update(gm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= *m.alive.n) return;
    gm_agent *a = m.alive.items[i];
    if (a->action) return;
    m.c.alive[a->cell] = 0;
    m.agent[a->cell] = NULL;
    a->dead = 1;
}
static __global__ void gm_cand_update(gm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= *m.cand.n) return;
    gm_agent *a = m.cand.items[i];
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
    if (i >= *m.alive.n) return;
    uint32_t cell = m.alive.items[i]->cell;
    for (uint32_t k = 0; k < 8; ++k) {
        uint32_t nb = gl_nb(&m.c, cell, k);
        if (m.c.alive[nb] || m.agent[nb]) continue;
        if (atomicCAS((unsigned long long *)&m.agent[nb], 0ull, GL_RESERVED) == 0ull)
            m.agent[nb] = gm_new(&m.cand, nb, m.fails);
    }
}
/* items := live items + fresh; the dead are freed (nothing points to them). */
static __global__ void gm_compact(gm_list l) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, n = *l.n, nf = *l.n_fresh;
    if (i < n) {
        if (l.items[i]->dead) free(l.items[i]);
        else l.next[atomicAdd(l.n_next, 1u)] = l.items[i];
    }
    if (i < nf && i < l.cap) l.next[atomicAdd(l.n_next, 1u)] = l.fresh[i];
}
static __global__ void gm_swap_counts(gm_list l) { *l.n = *l.n_next; *l.n_next = 0; *l.n_fresh = 0; }
static void gm_settle(gm_list *l) {
    gm_compact<<<(l->cap + 255) / 256, 256>>>(*l);
    WH_LAUNCH_OR_DIE();
    gm_swap_counts<<<1, 1>>>(*l);
    WH_LAUNCH_OR_DIE();
    gm_agent **t = l->items; l->items = l->next; l->next = t;
}
static void gm_list_alloc(gm_list *l, uint32_t cap) {
    l->cap = cap;
    WH_CUDA_OR_DIE(cudaMalloc(&l->items, (size_t)cap * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&l->next, (size_t)cap * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&l->fresh, (size_t)cap * 8));
    uint32_t *cnt;
    WH_CUDA_OR_DIE(cudaMalloc(&cnt, 12));
    WH_CUDA_OR_DIE(cudaMemset(cnt, 0, 12));
    l->n = cnt; l->n_next = cnt + 1; l->n_fresh = cnt + 2;
}
static void gm_list_free(gm_list *l) {
    WH_CUDA_OR_DIE(cudaFree(l->items)); WH_CUDA_OR_DIE(cudaFree(l->next));
    WH_CUDA_OR_DIE(cudaFree(l->fresh)); WH_CUDA_OR_DIE(cudaFree(l->n));
}
static double run_malloc(const opts *o, uint32_t *out) {
    uint64_t n = (uint64_t)o->w * o->h;
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)n * 64 + ((size_t)64 << 20)));
    gm_ctx m;
    memset(&m, 0, sizeof m);
    m.c = ctx_for(o);
    m.c.alive = (uint32_t *)app_alloc(n * 4, 1);
    WH_CUDA_OR_DIE(cudaMalloc(&m.agent, n * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&m.fails, 8));
    WH_CUDA_OR_DIE(cudaMemset(m.fails, 0, 8));
    gm_list_alloc(&m.alive, (uint32_t)n);
    gm_list_alloc(&m.cand, (uint32_t)n);
    unsigned g = (unsigned)((n + 255) / 256);
    gm_seed<<<g, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    gm_settle(&m.alive);
    gm_spread<<<g, 256>>>(m);
    WH_LAUNCH_OR_DIE();
    gm_settle(&m.cand);
    app_sync(1);
    double t0 = app_now();
    for (uint32_t it = 0; it < o->iters; ++it) {
        APP_TIME_CAP(it, 1, 1, t0)
        gm_prepare<<<g, 256>>>(m, m.alive, true); WH_LAUNCH_OR_DIE();
        gm_prepare<<<g, 256>>>(m, m.cand, false); WH_LAUNCH_OR_DIE();
        gm_alive_update<<<g, 256>>>(m); WH_LAUNCH_OR_DIE();
        gm_cand_update<<<g, 256>>>(m); WH_LAUNCH_OR_DIE();
        gm_settle(&m.alive);
        gm_settle(&m.cand);
        gm_spread<<<g, 256>>>(m); WH_LAUNCH_OR_DIE();
        gm_settle(&m.cand);
        if ((it + 1) % 10 == 0) { app_sync(1); printf("  malloc progress: %u iterations, %.3f s\n", it + 1, app_now() - t0); fflush(stdout); }
    }
    app_sync(1);
    double t = app_now() - t0;
    unsigned long long fails = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&fails, m.fails, 8, cudaMemcpyDeviceToHost));
    if (fails) printf("  malloc: %llu failed allocations\n", fails);
    app_to_host(out, m.c.alive, n * 4, 1);
    gm_list_free(&m.alive);
    gm_list_free(&m.cand);
    WH_CUDA_OR_DIE(cudaFree(m.agent)); WH_CUDA_OR_DIE(cudaFree(m.fails));
    app_free(m.c.alive, 1);
    return t;
}
#endif
