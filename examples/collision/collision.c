/* SPDX-License-Identifier: MIT */
/* Particle collisions on the object allocator: DynaSOAr's "collision" (Table 1
 * and section 6 of the DynaSOAr paper, ECOOP 2019): n-body gravity in which
 * particles that come closer than a merge threshold merge (perfectly
 * inelastic collision).  All particles are created up front; during the run
 * objects are only destroyed (category "allocation up front, then only
 * deallocation").
 *
 * One iteration, four do-alls over Body:
 *   find   -- sum the forces of all other bodies (device_do, block-wise) and,
 *             in the same pass, the body of smallest id below one's own within
 *             the threshold (the merge candidate);
 *   claim  -- each body with a candidate bids for it (atomic max of ~id: the
 *             smallest id wins);
 *   merge  -- a winning body whose candidate is not itself merging adds its
 *             mass, momentum and force to the candidate and destroys itself;
 *   update -- velocity and position of the survivors.
 * Forces are summed in 2^-32 fixed point, so no result depends on the order
 * in which bodies are visited or on thread scheduling.
 *
 * Variants: warpheap; a static SOA baseline (arrays with an active flag, the
 * paper's baseline); CUDA device malloc with an array of object pointers
 * (GPU only).  --check requires bit-identical survivors.
 *
 *   wh_collision [--n=40000] [--iters=2000] [--threshold=0.005] [--dt=0.02]
 *                [--mode=all|warpheap|static|malloc] [--max-seconds=S] [--heap-mb=N] [--cpu] [--check] [--ppm=FILE] [--csv=FILE]
 */
#include "warpheap/soa.h"
#include "wh_app_bench.h"

#include <math.h>

/* id before cand: no padding in front of the 8-byte field, 44 bytes an object */
/* clang-format off */
#define BODY_FIELDS(F)                                                                             \
    F(float, px) F(float, py) F(float, vx) F(float, vy) F(float, fx) F(float, fy) F(float, mass)      \
    F(uint32_t, id) F(uint64_t, cand) F(uint32_t, win)
/* clang-format on */
WH_SOA_CLASS(Body, 0, BODY_FIELDS)

#define CO_G    2.0e-5f
#define CO_DAMP 0.05f
#define CO_FIX  4294967296.0f /* 2^32 */

typedef struct co_ctx {
    float dt, thr2;
    uint64_t n;
    /* static baseline */
    float *px, *py, *vx, *vy, *fx, *fy, *m;
    uint32_t *active, *cand, *win; /* cand: index + 1, 0 for none */
} co_ctx;

/* ---- shared rules ------------------------------------------------------------ */
WH_INLINE WH_HOST_DEVICE float co_unit(uint64_t i, uint64_t k) {
    return (float)(wh_hash64(0xC011ull + i * 8u + k) >> 40) * (1.0f / 16777216.0f);
}
WH_INLINE WH_HOST_DEVICE void co_init(uint64_t i, float *px, float *py, float *vx, float *vy, float *m) {
    *px = 2.0f * co_unit(i, 0) - 1.0f;
    *py = 2.0f * co_unit(i, 1) - 1.0f;
    *vx = (co_unit(i, 2) - 0.5f) / 20.0f;
    *vy = (co_unit(i, 3) - 0.5f) / 20.0f;
    *m = 0.5f + co_unit(i, 4);
}
/* Force of o on b, exactly accumulated; returns the squared distance. */
WH_INLINE WH_HOST_DEVICE float co_pair(float x, float y, float m, float ox, float oy, float om, int64_t *ax,
                                       int64_t *ay) {
    float dx = ox - x, dy = oy - y;
    float d2 = dx * dx + dy * dy;
    if (d2 == 0.0f) return d2;
    float dist = sqrtf(d2);
    float f = CO_G * m * om / ((d2 + CO_DAMP) * dist);
    *ax += (int64_t)(f * dx * CO_FIX);
    *ay += (int64_t)(f * dy * CO_FIX);
    return d2;
}
WH_INLINE WH_HOST_DEVICE void co_move(float *px, float *py, float *vx, float *vy, float fx, float fy, float m,
                                      float dt) {
    *vx += fx / m * dt;
    *vy += fy / m * dt;
    *px += *vx * dt;
    *py += *vy * dt;
    if (*px < -1.0f || *px > 1.0f) *vx = -*vx;
    if (*py < -1.0f || *py > 1.0f) *vy = -*vy;
}
/* Perfectly inelastic collision: (m, v, f) of the target absorbs the source's. */
WH_INLINE WH_HOST_DEVICE void co_absorb(float *m, float *vx, float *vy, float *fx, float *fy, float sm, float svx,
                                        float svy, float sfx, float sfy) {
    float nm = *m + sm;
    *vx = (*m * *vx + sm * svx) / nm;
    *vy = (*m * *vy + sm * svy) / nm;
    *fx += sfx;
    *fy += sfy;
    *m = nm;
}
#define CO_BID(id) (0xFFFFFFFFu - (id)) /* larger bid = smaller id */

/* ---- warpheap ---------------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE void body_init(const wh_soa *s, Body b, uint64_t i, const co_ctx *c) {
    (void)s;
    (void)c;
    co_init(i, &WH_GET(Body, b, px), &WH_GET(Body, b, py), &WH_GET(Body, b, vx), &WH_GET(Body, b, vy),
            &WH_GET(Body, b, mass));
    WH_GET(Body, b, id) = (uint32_t)i;
    WH_GET(Body, b, cand) = 0;
    WH_GET(Body, b, win) = 0;
}
WH_INLINE WH_HOST_DEVICE void body_find(const wh_soa *s, Body b, const co_ctx *c) {
    float x = WH_GET(Body, b, px), y = WH_GET(Body, b, py), m = WH_GET(Body, b, mass);
    uint32_t me = WH_GET(Body, b, id), best = 0xFFFFFFFFu;
    uint64_t cand = 0;
    int64_t ax = 0, ay = 0;
    wh_soa_iter it;
    wh_soa_iter_begin(&it, s, Body_TYPE);
    uint64_t slots;
    for (uint64_t p0; (p0 = wh_soa_iter_next_block(&it, s, &slots)) != 0;) {
        Body o = Body_from(p0);
        const float *ox = WH_FIELD(Body, o, px), *oy = WH_FIELD(Body, o, py), *om = WH_FIELD(Body, o, mass);
        const uint32_t *oid = WH_FIELD(Body, o, id);
        if (p0 == (b.p & ~(uint64_t)63u)) slots &= ~(1ull << wh_soa_ptr_slot(b.p));
        WH_SOA_FOR_SLOTS(k, slots, wh_soa_ptr_cap(p0), {
            float d2 = co_pair(x, y, m, ox[k], oy[k], om[k], &ax, &ay);
            if (d2 < c->thr2 && oid[k] < me && oid[k] < best) {
                best = oid[k];
                cand = p0 | (uint64_t)k;
            }
        });
    }
    WH_GET(Body, b, fx) = (float)((double)ax / CO_FIX);
    WH_GET(Body, b, fy) = (float)((double)ay / CO_FIX);
    WH_GET(Body, b, cand) = cand;
    WH_GET(Body, b, win) = 0;
}
WH_INLINE WH_HOST_DEVICE void body_claim(const wh_soa *s, Body b, const co_ctx *c) {
    (void)s;
    (void)c;
    uint64_t cand = WH_GET(Body, b, cand);
    if (cand) (void)wh_atomic_fetch_max(&WH_GET(Body, Body_from(cand), win), CO_BID(WH_GET(Body, b, id)), WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE void body_merge(const wh_soa *s, Body b, const co_ctx *c) {
    (void)c;
    uint64_t cp = WH_GET(Body, b, cand);
    if (!cp) return;
    Body t = Body_from(cp);
    if (WH_GET(Body, t, win) != CO_BID(WH_GET(Body, b, id)) || WH_GET(Body, t, cand) != 0) return;
    co_absorb(&WH_GET(Body, t, mass), &WH_GET(Body, t, vx), &WH_GET(Body, t, vy), &WH_GET(Body, t, fx),
              &WH_GET(Body, t, fy), WH_GET(Body, b, mass), WH_GET(Body, b, vx), WH_GET(Body, b, vy),
              WH_GET(Body, b, fx), WH_GET(Body, b, fy));
    WH_SOA_DESTROY(s, b);
}
WH_INLINE WH_HOST_DEVICE void body_update(const wh_soa *s, Body b, const co_ctx *c) {
    (void)s;
    co_move(&WH_GET(Body, b, px), &WH_GET(Body, b, py), &WH_GET(Body, b, vx), &WH_GET(Body, b, vy), WH_GET(Body, b, fx),
            WH_GET(Body, b, fy), WH_GET(Body, b, mass), c->dt);
}
WH_SOA_PARALLEL_NEW(Body, body_init, co_ctx)
WH_SOA_PARALLEL_DO(Body, body_find, co_ctx)
WH_SOA_PARALLEL_DO(Body, body_claim, co_ctx)
WH_SOA_PARALLEL_DO(Body, body_merge, co_ctx)
WH_SOA_PARALLEL_DO(Body, body_update, co_ctx)

/* ---- static SOA baseline: arrays and an active flag --------------------------------- */
WH_INLINE WH_HOST_DEVICE void st_init(uint64_t i, const co_ctx *c) {
    co_init(i, &c->px[i], &c->py[i], &c->vx[i], &c->vy[i], &c->m[i]);
    c->active[i] = 1;
    c->cand[i] = 0;
    c->win[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_find(uint64_t i, const co_ctx *c) {
    if (!c->active[i]) return;
    float x = c->px[i], y = c->py[i], m = c->m[i];
    int64_t ax = 0, ay = 0;
    uint32_t best = 0xFFFFFFFFu;
    for (uint64_t j = 0; j < c->n; ++j) {
        if (j == i || !c->active[j]) continue;
        float d2 = co_pair(x, y, m, c->px[j], c->py[j], c->m[j], &ax, &ay);
        if (d2 < c->thr2 && j < i && (uint32_t)j < best) best = (uint32_t)j;
    }
    c->fx[i] = (float)((double)ax / CO_FIX);
    c->fy[i] = (float)((double)ay / CO_FIX);
    c->cand[i] = best == 0xFFFFFFFFu ? 0u : best + 1u;
    c->win[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_claim(uint64_t i, const co_ctx *c) {
    if (c->active[i] && c->cand[i])
        (void)wh_atomic_fetch_max(&c->win[c->cand[i] - 1u], CO_BID((uint32_t)i), WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE void st_merge(uint64_t i, const co_ctx *c) {
    if (!c->active[i] || !c->cand[i]) return;
    uint32_t t = c->cand[i] - 1u;
    if (c->win[t] != CO_BID((uint32_t)i) || c->cand[t] != 0) return;
    co_absorb(&c->m[t], &c->vx[t], &c->vy[t], &c->fx[t], &c->fy[t], c->m[i], c->vx[i], c->vy[i], c->fx[i], c->fy[i]);
    c->active[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_update(uint64_t i, const co_ctx *c) {
    if (c->active[i]) co_move(&c->px[i], &c->py[i], &c->vx[i], &c->vy[i], c->fx[i], c->fy[i], c->m[i], c->dt);
}
WH_SOA_PARALLEL_FOR(st_init_all, co_ctx, st_init)
WH_SOA_PARALLEL_FOR(st_find_all, co_ctx, st_find)
WH_SOA_PARALLEL_FOR(st_claim_all, co_ctx, st_claim)
WH_SOA_PARALLEL_FOR(st_merge_all, co_ctx, st_merge)
WH_SOA_PARALLEL_FOR(st_update_all, co_ctx, st_update)

/* ---- driver ------------------------------------------------------------------------ */
/* Survivors as rows (id, px, py, vx, vy, m) sorted by id. */
typedef struct rows {
    float *r;
    uint64_t n;
} rows;
#define CO_ROW 6

static int cmp_row(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}
static void rows_sort(rows *r) { qsort(r->r, r->n, CO_ROW * sizeof(float), cmp_row); }
static void row_set(float *r, uint32_t id, float px, float py, float vx, float vy, float m) {
    r[0] = (float)id;
    r[1] = px;
    r[2] = py;
    r[3] = vx;
    r[4] = vy;
    r[5] = m;
}

/* Bytes of the heap's blocks in use (synchronises; not timed). */

static double run_warpheap(uint64_t n, int iters, co_ctx c, int dev, rows *out, size_t *peak) {
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Body)};
    size_t bytes = budget_heap(0, (size_t)(n / 64 + 64) * 4096 + ((size_t)8 << 20));
    wh_soa_config cfg = {bytes, types, 1, dev != 0, 0, NULL, false};
    wh_soa soa;
    APP_TRY(wh_soa_create(&soa, &cfg));
    APP_TRY(Body_parallel_new_body_init(&soa, n, c));
    *peak = app_heap_used(&soa); /* deallocation only: the peak is the start */
    app_sync(dev);
    double t0 = app_now();
    for (int it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 8, dev, t0)
        APP_TRY(Body_parallel_do_body_find(&soa, c));
        APP_TRY(Body_parallel_do_body_claim(&soa, c));
        APP_TRY(Body_parallel_do_body_merge(&soa, c));
        APP_TRY(Body_parallel_do_body_update(&soa, c));
    }
    app_sync(dev);
    double t = app_now() - t0;
    app_heap_check(&soa, "warpheap");
    wh_soa img;
    void *owned;
    APP_TRY(wh_soa_host_image(&soa, &img, &owned));
    out->r = (float *)malloc(n * CO_ROW * sizeof(float));
    out->n = 0;
    wh_soa_iter itr;
    wh_soa_iter_begin(&itr, &img, Body_TYPE);
    for (uint64_t p; (p = wh_soa_iter_next(&itr, &img)) != 0 && out->n < n; ++out->n) {
        Body b = Body_from(p);
        row_set(out->r + out->n * CO_ROW, WH_GET(Body, b, id), WH_GET(Body, b, px), WH_GET(Body, b, py),
                WH_GET(Body, b, vx), WH_GET(Body, b, vy), WH_GET(Body, b, mass));
    }
    rows_sort(out);
    app_print_heap(&soa, 0);
    free(owned);
    APP_DESTROY(&soa);
    return t;
}

static double run_static(uint64_t n, int iters, co_ctx c, int dev, rows *out, size_t *peak) {
    float **fa[7] = {&c.px, &c.py, &c.vx, &c.vy, &c.fx, &c.fy, &c.m};
    uint32_t **ua[3] = {&c.active, &c.cand, &c.win};
    for (int k = 0; k < 7; ++k) *fa[k] = (float *)app_alloc(n * 4, dev);
    for (int k = 0; k < 3; ++k) *ua[k] = (uint32_t *)app_alloc(n * 4, dev);
    *peak = n * 40;
    APP_TRY(st_init_all(dev, n, c));
    app_sync(dev);
    double t0 = app_now();
    for (int it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 8, dev, t0)
        APP_TRY(st_find_all(dev, n, c));
        APP_TRY(st_claim_all(dev, n, c));
        APP_TRY(st_merge_all(dev, n, c));
        APP_TRY(st_update_all(dev, n, c));
    }
    app_sync(dev);
    double t = app_now() - t0;
    float *h[5];
    uint32_t *act = (uint32_t *)malloc(n * 4);
    for (int k = 0; k < 5; ++k) h[k] = (float *)malloc(n * 4);
    float *src[5] = {c.px, c.py, c.vx, c.vy, c.m};
    for (int k = 0; k < 5; ++k) app_to_host(h[k], src[k], n * 4, dev);
    app_to_host(act, c.active, n * 4, dev);
    out->r = (float *)malloc(n * CO_ROW * sizeof(float));
    out->n = 0;
    for (uint64_t i = 0; i < n; ++i)
        if (act[i]) row_set(out->r + out->n++ * CO_ROW, (uint32_t)i, h[0][i], h[1][i], h[2][i], h[3][i], h[4][i]);
    for (int k = 0; k < 5; ++k) free(h[k]);
    free(act);
    for (int k = 0; k < 7; ++k) app_free(*fa[k], dev);
    for (int k = 0; k < 3; ++k) app_free(*ua[k], dev);
    return t;
}

/* ---- CUDA device malloc (GPU only): the paper's "other allocators" ----------------------- *
 * Bodies are malloc'd structs read through an array of object pointers (8
 * bytes per body), compacted after each merge phase; merged bodies are freed. */
#if defined(__CUDACC__)
typedef struct cm_body {
    float px, py, vx, vy, fx, fy, m;
    uint32_t id, win, dead;
    struct cm_body *cand;
} cm_body;
typedef struct cm_ctx {
    co_ctx c;
    cm_body **items, **next, **dead;
    uint32_t *cnt; /* n, n_next, n_dead */
    unsigned long long *fails;
} cm_ctx;
static __global__ void cm_init(cm_ctx m, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cm_body *b = (cm_body *)malloc(sizeof(cm_body));
    m.items[i] = b;
    if (!b) {
        atomicAdd(m.fails, 1ull);
        return;
    }
    co_init(i, &b->px, &b->py, &b->vx, &b->vy, &b->m);
    b->id = (uint32_t)i;
    b->win = 0;
    b->dead = 0;
    b->cand = NULL;
}
static __global__ void cm_find(cm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, n = m.cnt[0];
    if (i >= n) return;
    cm_body *me = m.items[i], *cand = NULL;
    float x = me->px, y = me->py, mass = me->m;
    uint32_t best = 0xFFFFFFFFu;
    int64_t ax = 0, ay = 0;
    for (uint32_t j = 0; j < n; ++j) {
        cm_body *o = m.items[j];
        if (o == me) continue;
        float d2 = co_pair(x, y, mass, o->px, o->py, o->m, &ax, &ay);
        if (d2 < m.c.thr2 && o->id < me->id && o->id < best) {
            best = o->id;
            cand = o;
        }
    }
    me->fx = (float)((double)ax / CO_FIX);
    me->fy = (float)((double)ay / CO_FIX);
    me->cand = cand;
    me->win = 0;
}
static __global__ void cm_claim(cm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m.cnt[0]) return;
    cm_body *me = m.items[i];
    if (me->cand) atomicMax(&me->cand->win, CO_BID(me->id));
}
static __global__ void cm_merge(cm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m.cnt[0]) return;
    cm_body *me = m.items[i], *t = me->cand;
    if (!t || t->win != CO_BID(me->id) || t->cand != NULL) return;
    co_absorb(&t->m, &t->vx, &t->vy, &t->fx, &t->fy, me->m, me->vx, me->vy, me->fx, me->fy);
    me->dead = 1;
    m.dead[atomicAdd(&m.cnt[2], 1u)] = me;
}
static __global__ void cm_compact(cm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m.cnt[0] && !m.items[i]->dead) m.next[atomicAdd(&m.cnt[1], 1u)] = m.items[i];
}
static __global__ void cm_free_dead(cm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m.cnt[2]) free(m.dead[i]);
}
static __global__ void cm_swap(cm_ctx m) {
    m.cnt[0] = m.cnt[1];
    m.cnt[1] = m.cnt[2] = 0;
}
static __global__ void cm_update(cm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m.cnt[0]) return;
    cm_body *b = m.items[i];
    co_move(&b->px, &b->py, &b->vx, &b->vy, b->fx, b->fy, b->m, m.c.dt);
}
static __global__ void cm_export(cm_ctx m, float *out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m.cnt[0]) return;
    cm_body *b = m.items[i];
    float *r = out + (uint64_t)i * CO_ROW;
    r[0] = (float)b->id;
    r[1] = b->px;
    r[2] = b->py;
    r[3] = b->vx;
    r[4] = b->vy;
    r[5] = b->m;
    free(b);
}
static double run_malloc(uint64_t n, int iters, co_ctx c, rows *out, size_t *peak) {
    size_t heap = budget_heap(0, (size_t)n * 128 + ((size_t)32 << 20)); /* the pointer lists are not counted */
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
    cm_ctx m;
    memset(&m, 0, sizeof m);
    m.c = c;
    WH_CUDA_OR_DIE(cudaMalloc(&m.items, n * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&m.next, n * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&m.dead, n * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&m.cnt, 16));
    uint32_t cnt0[4] = {(uint32_t)n, 0, 0, 0};
    WH_CUDA_OR_DIE(cudaMemcpy(m.cnt, cnt0, 16, cudaMemcpyHostToDevice));
    WH_CUDA_OR_DIE(cudaMalloc(&m.fails, 8));
    WH_CUDA_OR_DIE(cudaMemset(m.fails, 0, 8));
    *peak = heap + n * 24; /* reserved: malloc heap and pointer arrays */
    unsigned g = (unsigned)((n + 255) / 256);
    cm_init<<<g, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    unsigned long long fails = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&fails, m.fails, 8, cudaMemcpyDeviceToHost));
    if (fails) {
        fprintf(stderr, "malloc: %llu allocations failed\n", fails);
        exit(1);
    }
    int dev = 1;
    app_sync(dev);
    double t0 = app_now();
    for (int it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 8, dev, t0)
        cm_find<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        cm_claim<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        cm_merge<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        cm_compact<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        cm_free_dead<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        cm_swap<<<1, 1>>>(m);
        WH_LAUNCH_OR_DIE();
        cm_body **t = m.items;
        m.items = m.next;
        m.next = t;
        cm_update<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
    }
    app_sync(dev);
    double t = app_now() - t0;
    uint32_t left = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&left, m.cnt, 4, cudaMemcpyDeviceToHost));
    float *d_out;
    WH_CUDA_OR_DIE(cudaMalloc(&d_out, (size_t)n * CO_ROW * 4));
    cm_export<<<g, 256>>>(m, d_out);
    WH_LAUNCH_OR_DIE();
    out->n = left;
    out->r = (float *)malloc(n * CO_ROW * sizeof(float));
    app_to_host(out->r, d_out, (size_t)left * CO_ROW * 4, 1);
    rows_sort(out);
    WH_CUDA_OR_DIE(cudaFree(d_out));
    WH_CUDA_OR_DIE(cudaFree(m.items));
    WH_CUDA_OR_DIE(cudaFree(m.next));
    WH_CUDA_OR_DIE(cudaFree(m.dead));
    WH_CUDA_OR_DIE(cudaFree(m.cnt));
    WH_CUDA_OR_DIE(cudaFree(m.fails));
    return t;
}
#endif

static uint64_t compare(const char *na, const rows *a, const char *nb, const rows *b) {
    uint64_t diff = a->n != b->n;
    double ma = 0, mb = 0;
    for (uint64_t i = 0; i < a->n && i < b->n; ++i)
        for (int k = 0; k < CO_ROW; ++k) diff += a->r[i * CO_ROW + k] != b->r[i * CO_ROW + k];
    for (uint64_t i = 0; i < a->n; ++i) ma += a->r[i * CO_ROW + 5];
    for (uint64_t i = 0; i < b->n; ++i) mb += b->r[i * CO_ROW + 5];
    printf("  check: %s vs %s: %llu / %llu bodies left, total mass %.6g / %.6g, %llu values differ -> %s\n", na, nb,
           (unsigned long long)a->n, (unsigned long long)b->n, ma, mb, (unsigned long long)diff,
           diff ? "FAILED" : "identical");
    return diff;
}

static void write_picture(const char *path, const rows *r) {
    int w = 800, h = 800;
    unsigned char *img = (unsigned char *)calloc((size_t)w * h * 3, 1);
    for (uint64_t i = 0; i < r->n; ++i) {
        const float *q = r->r + i * CO_ROW;
        int x = (int)((q[1] + 1.0f) * 0.5f * (float)(w - 1)), y = (int)((q[2] + 1.0f) * 0.5f * (float)(h - 1));
        int rad = q[5] > 8.0f ? 2 : q[5] > 2.0f ? 1 : 0;
        for (int dy = -rad; dy <= rad; ++dy)
            for (int dx = -rad; dx <= rad; ++dx) {
                int xx = x + dx, yy = y + dy;
                if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
                unsigned char *p = img + ((size_t)yy * w + xx) * 3;
                p[0] = 255;
                p[1] = (unsigned char)(q[5] > 2.0f ? 120 : 230);
                p[2] = 60;
            }
    }
    app_write_ppm(path, w, h, img);
    free(img);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* a run killed by a time limit keeps its log */
    uint64_t n = 40000;
    int iters = 2000;
    float thr = 0.005f, dt = 0.02f;
    app_opts o = app_opts_new();
    wh_cli_opt cli[] = {WH_CLI_UINT("n", &n, "bodies"),
                        WH_CLI_INT("iters", &iters, "iterations"),
                        WH_CLI_DOUBLE("threshold", &thr, "bodies closer than this merge"),
                        WH_CLI_DOUBLE("dt", &dt, "time step"),
                        APP_CLI_COMMON(&o, "all|warpheap|static|malloc"),
                        APP_CLI_LIMITS(&o),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli,
                 "DynaSOAr's collision benchmark (bodies that merge when close) on the object allocator.");
    app_opts_done(&o);
    int dev = o.dev, check = o.check;
    if (n < 1 || n > 0xFFFFFFF0ull || iters < 0) {
        fprintf(stderr, "collision: bad size\n");
        return 2;
    }
    co_ctx c;
    memset(&c, 0, sizeof c);
    c.dt = dt;
    c.thr2 = thr * thr;
    c.n = n;
    char env[512];
    app_env(env, sizeof env, dev);
    printf("collision: %llu bodies, %d iterations, threshold %g, %s\n", (unsigned long long)n, iters, thr, env);
    rows a = {0, 0}, b = {0, 0}, mm = {0, 0};
    app_runs r = app_runs_new(iters);
    g_malloc_heap = app_heap_opt(&o, 0); /* both heaps */
    app_time_cap_opt(&o);
    if (app_wants(&o, "warpheap")) app_ran(&r, 0, run_warpheap(n, iters, c, dev, &a, &r.peak[0]));
    if (check || app_wants(&o, "static")) app_ran(&r, 1, run_static(n, iters, c, dev, &b, &r.peak[1]));
#if defined(__CUDACC__)
    if (dev && app_wants(&o, "malloc")) app_ran(&r, 2, run_malloc(n, iters, c, &mm, &r.peak[2]));
#endif
    const char *names[3] = {"warpheap", "static", "malloc"};
    app_print_runs(&r, 3, names, "iteration");
    int rc = 0;
    if (check && r.ts[0] >= 0) rc |= compare("warpheap", &a, "static", &b) != 0;
    if (check && mm.r) rc |= compare("malloc", &mm, "static", &b) != 0;
    if (o.ppm) write_picture(o.ppm, a.r ? &a : &b);
    if (o.csv) app_csv_runs(o.csv, "collision", &r, 3, names, n, env);
    free(a.r);
    free(b.r);
    free(mm.r);
    return rc;
}
