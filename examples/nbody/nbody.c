/* SPDX-License-Identifier: MIT */
/* N-body on the object allocator: DynaSOAr's nbody (Table 1 of the paper):
 * one class Body (7 float fields), all bodies created up front by
 * parallel_new; per iteration parallel_do(Body, force) -- where each body sums
 * the forces of all others with device_do -- and parallel_do(Body, update).
 *
 * Three variants in one binary: warpheap, a static SOA baseline (plain arrays,
 * as the paper's "Baseline (SOA)"), and CUDA's device malloc with an array of
 * object pointers (the paper's "other allocators"; GPU only).  Forces are
 * summed in 2^-40 fixed point, so the sum does not depend on the order in which
 * device_do meets the bodies: --check runs warpheap and the baseline and
 * requires bit-identical final states.  This file is C; with CUDA it is
 * compiled as CUDA and runs on the GPU (--cpu: the CPU backend).
 *
 *   wh_nbody [--n=20000] [--iters=3000] [--dt=0.02] [--mode=all|pair|warpheap|static|malloc]
 *            [--cpu] [--check] [--ppm=FILE] [--csv=FILE]
 */
#include "warpheap/soa.h"
#include "wh_app_bench.h"

#include <math.h>

/* clang-format off */
#define BODY_FIELDS(F) F(float, px) F(float, py) F(float, vx) F(float, vy) F(float, fx) F(float, fy) F(float, mass)
/* clang-format on */
WH_SOA_CLASS(Body, 0, BODY_FIELDS)

#define NB_G    2.0e-5f
#define NB_DAMP 0.05f
#define NB_FIX  1099511627776.0f /* 2^40 */

typedef struct nb_ctx {
    float dt;
    uint64_t n;
    /* static baseline arrays / device-malloc pointer array */
    float *px, *py, *vx, *vy, *fx, *fy, *m;
} nb_ctx;

/* A product that the compiler may not fuse into a following add: nvcc
 * contracts a*b+c into one FMA (one rounding), the CPU build does not, and the
 * CPU backend's result must match the GPU's bit for bit. */
WH_INLINE WH_HOST_DEVICE float nb_mul(float a, float b) {
#if WH_ON_GPU
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
WH_INLINE WH_HOST_DEVICE float nb_unit(uint64_t i, uint64_t k) {
    return (float)(wh_hash64(i * 8u + k) >> 40) * (1.0f / 16777216.0f);
}
/* Contribution of body o to the force on body b, accumulated exactly. */
WH_INLINE WH_HOST_DEVICE void nb_pair(float x, float y, float m, float ox, float oy, float om, int64_t *ax,
                                      int64_t *ay) {
    float dx = ox - x, dy = oy - y;
    float d2 = nb_mul(dx, dx) + nb_mul(dy, dy);
    if (d2 == 0.0f) return;
    float dist = sqrtf(d2);
    float f = NB_G * m * om / ((d2 + NB_DAMP) * dist);
    *ax += (int64_t)(f * dx * NB_FIX);
    *ay += (int64_t)(f * dy * NB_FIX);
}
/* Velocity and position from the force; bodies bounce off the unit box. */
WH_INLINE WH_HOST_DEVICE void nb_move(float *px, float *py, float *vx, float *vy, float fx, float fy, float m,
                                      float dt) {
    *vx += nb_mul(fx / m, dt);
    *vy += nb_mul(fy / m, dt);
    *px += nb_mul(*vx, dt);
    *py += nb_mul(*vy, dt);
    if (*px < -1.0f || *px > 1.0f) *vx = -*vx;
    if (*py < -1.0f || *py > 1.0f) *vy = -*vy;
}
WH_INLINE WH_HOST_DEVICE void nb_init(uint64_t i, float *px, float *py, float *vx, float *vy, float *m) {
    *px = 2.0f * nb_unit(i, 0) - 1.0f;
    *py = 2.0f * nb_unit(i, 1) - 1.0f;
    *vx = (nb_unit(i, 2) - 0.5f) / 20.0f;
    *vy = (nb_unit(i, 3) - 0.5f) / 20.0f;
    *m = 0.5f + nb_unit(i, 4);
}

/* ---- warpheap -------------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE void body_init(const wh_soa *s, Body b, uint64_t i, const nb_ctx *c) {
    (void)s;
    (void)c;
    nb_init(i, &WH_GET(Body, b, px), &WH_GET(Body, b, py), &WH_GET(Body, b, vx), &WH_GET(Body, b, vy),
            &WH_GET(Body, b, mass));
}
WH_INLINE WH_HOST_DEVICE void body_force(const wh_soa *s, Body b, const nb_ctx *c) {
    (void)c;
    float x = WH_GET(Body, b, px), y = WH_GET(Body, b, py), m = WH_GET(Body, b, mass);
    int64_t ax = 0, ay = 0;
    wh_soa_iter it; /* device_do(Body, ...), block-wise */
    wh_soa_iter_begin(&it, s, Body_TYPE);
    uint64_t slots;
    for (uint64_t p0; (p0 = wh_soa_iter_next_block(&it, s, &slots)) != 0;) {
        const float *ox = WH_FIELD(Body, Body_from(p0), px), *oy = WH_FIELD(Body, Body_from(p0), py);
        const float *om = WH_FIELD(Body, Body_from(p0), mass);
        if (p0 == (b.p & ~(uint64_t)63u)) slots &= ~(1ull << wh_soa_ptr_slot(b.p)); /* not itself */
        WH_SOA_FOR_SLOTS(k, slots, wh_soa_ptr_cap(p0), nb_pair(x, y, m, ox[k], oy[k], om[k], &ax, &ay););
    }
    WH_GET(Body, b, fx) = (float)((double)ax / NB_FIX);
    WH_GET(Body, b, fy) = (float)((double)ay / NB_FIX);
}
WH_INLINE WH_HOST_DEVICE void body_update(const wh_soa *s, Body b, const nb_ctx *c) {
    (void)s;
    nb_move(&WH_GET(Body, b, px), &WH_GET(Body, b, py), &WH_GET(Body, b, vx), &WH_GET(Body, b, vy), WH_GET(Body, b, fx),
            WH_GET(Body, b, fy), WH_GET(Body, b, mass), c->dt);
}
WH_SOA_PARALLEL_NEW(Body, body_init, nb_ctx)
WH_SOA_PARALLEL_DO(Body, body_force, nb_ctx)
WH_SOA_PARALLEL_DO(Body, body_update, nb_ctx)

/* ---- static SOA baseline ------------------------------------------------------ */
WH_INLINE WH_HOST_DEVICE void st_init(uint64_t i, const nb_ctx *c) {
    nb_init(i, &c->px[i], &c->py[i], &c->vx[i], &c->vy[i], &c->m[i]);
}
WH_INLINE WH_HOST_DEVICE void st_force(uint64_t i, const nb_ctx *c) {
    float x = c->px[i], y = c->py[i], m = c->m[i];
    int64_t ax = 0, ay = 0;
    for (uint64_t j = 0; j < c->n; ++j)
        if (j != i) nb_pair(x, y, m, c->px[j], c->py[j], c->m[j], &ax, &ay);
    c->fx[i] = (float)((double)ax / NB_FIX);
    c->fy[i] = (float)((double)ay / NB_FIX);
}
WH_INLINE WH_HOST_DEVICE void st_update(uint64_t i, const nb_ctx *c) {
    nb_move(&c->px[i], &c->py[i], &c->vx[i], &c->vy[i], c->fx[i], c->fy[i], c->m[i], c->dt);
}
WH_SOA_PARALLEL_FOR(st_init_all, nb_ctx, st_init)
WH_SOA_PARALLEL_FOR(st_force_all, nb_ctx, st_force)
WH_SOA_PARALLEL_FOR(st_update_all, nb_ctx, st_update)

/* ---- CUDA device malloc + pointer array (GPU only) ------------------------------ */
#if defined(__CUDACC__)
typedef struct body_aos {
    float px, py, vx, vy, fx, fy, mass;
} body_aos;
static __global__ void dm_init(body_aos **b, uint64_t n, unsigned long long *fails) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    body_aos *o = (body_aos *)malloc(sizeof(body_aos));
    b[i] = o;
    if (!o) {
        atomicAdd(fails, 1ull);
        return;
    }
    nb_init(i, &o->px, &o->py, &o->vx, &o->vy, &o->mass);
}
static __global__ void dm_force(body_aos **b, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    body_aos *me = b[i];
    int64_t ax = 0, ay = 0;
    for (uint64_t j = 0; j < n; ++j) {
        body_aos *o = b[j];
        if (o != me) nb_pair(me->px, me->py, me->mass, o->px, o->py, o->mass, &ax, &ay);
    }
    me->fx = (float)((double)ax / NB_FIX);
    me->fy = (float)((double)ay / NB_FIX);
}
static __global__ void dm_update(body_aos **b, uint64_t n, float dt) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    body_aos *o = b[i];
    nb_move(&o->px, &o->py, &o->vx, &o->vy, o->fx, o->fy, o->mass, dt);
}
static __global__ void dm_export(body_aos **b, uint64_t n, float *out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = b[i]->px;
    out[n + i] = b[i]->py;
    out[2 * n + i] = b[i]->vx;
    out[3 * n + i] = b[i]->vy;
    out[4 * n + i] = b[i]->mass;
}
static __global__ void dm_free(body_aos **b, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) free(b[i]);
}
static double run_malloc(uint64_t n, int iters, float dt, float *export5) {
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)256 << 20));
    body_aos **b;
    unsigned long long *fails, hf = 0;
    WH_CUDA_OR_DIE(cudaMalloc(&b, n * sizeof *b));
    WH_CUDA_OR_DIE(cudaMalloc(&fails, sizeof *fails));
    WH_CUDA_OR_DIE(cudaMemset(fails, 0, sizeof *fails));
    unsigned g = (unsigned)((n + 255) / 256);
    dm_init<<<g, 256>>>(b, n, fails);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaMemcpy(&hf, fails, sizeof hf, cudaMemcpyDeviceToHost));
    if (hf) {
        fprintf(stderr, "malloc: %llu allocations failed\n", hf);
        exit(1);
    }
    double t0 = app_now();
    for (int it = 0; it < iters; ++it) {
        app_window(it);
        dm_force<<<g, 256>>>(b, n);
        WH_LAUNCH_OR_DIE();
        dm_update<<<g, 256>>>(b, n, dt);
        WH_LAUNCH_OR_DIE();
    }
    app_sync(1);
    double t = app_now() - t0;
    float *d_out;
    WH_CUDA_OR_DIE(cudaMalloc(&d_out, n * 5 * sizeof(float)));
    dm_export<<<g, 256>>>(b, n, d_out);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaMemcpy(export5, d_out, n * 5 * sizeof(float), cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaFree(d_out));
    dm_free<<<g, 256>>>(b, n);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaFree(b));
    WH_CUDA_OR_DIE(cudaFree(fails));
    return t;
}
#endif

/* ---- driver ------------------------------------------------------------------------ */
typedef struct state {
    float *px, *py, *vx, *vy, *m;
    uint64_t n;
} state; /* host copy */

static int cmp_body(const void *a, const void *b) {
    const float *x = (const float *)a, *y = (const float *)b;
    for (int k = 0; k < 5; ++k)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}
/* rows of (px, py, vx, vy, m), sorted: comparable whatever the storage order */
static float *sorted_rows(const state *s) {
    float *r = (float *)malloc(s->n * 5 * sizeof(float));
    for (uint64_t i = 0; i < s->n; ++i) {
        r[i * 5 + 0] = s->px[i];
        r[i * 5 + 1] = s->py[i];
        r[i * 5 + 2] = s->vx[i];
        r[i * 5 + 3] = s->vy[i];
        r[i * 5 + 4] = s->m[i];
    }
    qsort(r, s->n, 5 * sizeof(float), cmp_body);
    return r;
}
/* Values that differ between two final states (sorted rows), NaNs, largest
 * difference; printed.  Returns the number of differing values. */
static uint64_t compare(const char *na, const state *a, const char *nb, const state *b) {
    float *ra = sorted_rows(a), *rb = sorted_rows(b);
    uint64_t diff = 0, nan = 0;
    double maxd = 0, suma = 0, sumb = 0;
    for (uint64_t i = 0; i < a->n * 5; ++i) {
        nan += (ra[i] != ra[i]) + (rb[i] != rb[i]);
        diff += ra[i] != rb[i];
        double d = fabs((double)ra[i] - (double)rb[i]);
        if (d > maxd) maxd = d;
        suma += ra[i];
        sumb += rb[i];
    }
    uint64_t first = 0;
    while (first < a->n * 5 && ra[first] == rb[first]) ++first;
    printf("  check: %s vs %s: %llu of %llu values differ, %llu NaN, max diff %.3g, sums %.9g / %.9g -> %s\n", na, nb,
           (unsigned long long)diff, (unsigned long long)(a->n * 5), (unsigned long long)nan, maxd, suma, sumb,
           diff ? "FAILED" : "identical");
    if (diff)
        printf("    first difference: row %llu: %.9g %.9g %.9g %.9g %.9g vs %.9g %.9g %.9g %.9g %.9g\n",
               (unsigned long long)(first / 5), ra[first / 5 * 5], ra[first / 5 * 5 + 1], ra[first / 5 * 5 + 2],
               ra[first / 5 * 5 + 3], ra[first / 5 * 5 + 4], rb[first / 5 * 5], rb[first / 5 * 5 + 1],
               rb[first / 5 * 5 + 2], rb[first / 5 * 5 + 3], rb[first / 5 * 5 + 4]);
    free(ra);
    free(rb);
    return diff;
}

static void state_alloc(state *s, uint64_t n) {
    s->n = n;
    s->px = (float *)calloc(n, 4);
    s->py = (float *)calloc(n, 4);
    s->vx = (float *)calloc(n, 4);
    s->vy = (float *)calloc(n, 4);
    s->m = (float *)calloc(n, 4);
}

static double run_warpheap(uint64_t n, int iters, float dt, int dev, state *out) {
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Body)};
    size_t bytes = (size_t)(n / 64 + 64) * 2048 * 2 + ((size_t)8 << 20);
    wh_soa_config cfg = {bytes, types, 1, dev != 0, 0, NULL};
    wh_soa soa;
    APP_TRY(wh_soa_create(&soa, &cfg));
    nb_ctx c;
    memset(&c, 0, sizeof c);
    c.dt = dt;
    c.n = n;
    APP_TRY(Body_parallel_new_body_init(&soa, n, c));
    app_sync(dev);
    double t0 = app_now();
    for (int it = 0; it < iters; ++it) {
        app_window(it);
        APP_TRY(Body_parallel_do_body_force(&soa, c));
        APP_TRY(Body_parallel_do_body_update(&soa, c));
    }
    app_sync(dev);
    double t = app_now() - t0;
    wh_soa img;
    void *owned;
    APP_TRY(wh_soa_host_image(&soa, &img, &owned));
    state_alloc(out, n);
    wh_soa_iter itr;
    wh_soa_iter_begin(&itr, &img, Body_TYPE);
    uint64_t k = 0;
    for (uint64_t p; (p = wh_soa_iter_next(&itr, &img)) != 0 && k < n; ++k) {
        Body b = Body_from(p);
        out->px[k] = WH_GET(Body, b, px);
        out->py[k] = WH_GET(Body, b, py);
        out->vx[k] = WH_GET(Body, b, vx);
        out->vy[k] = WH_GET(Body, b, vy);
        out->m[k] = WH_GET(Body, b, mass);
    }
    if (k != n) {
        fprintf(stderr, "warpheap: %llu bodies, expected %llu\n", (unsigned long long)k, (unsigned long long)n);
        exit(1);
    }
    free(owned);
    APP_DESTROY(&soa);
    return t;
}

static double run_static(uint64_t n, int iters, float dt, int dev, state *out) {
    nb_ctx c;
    c.dt = dt;
    c.n = n;
    float **arr[7] = {&c.px, &c.py, &c.vx, &c.vy, &c.fx, &c.fy, &c.m};
    for (int k = 0; k < 7; ++k) *arr[k] = (float *)app_alloc(n * 4, dev);
    APP_TRY(st_init_all(dev, n, c));
    app_sync(dev);
    double t0 = app_now();
    for (int it = 0; it < iters; ++it) {
        app_window(it);
        APP_TRY(st_force_all(dev, n, c));
        APP_TRY(st_update_all(dev, n, c));
    }
    app_sync(dev);
    double t = app_now() - t0;
    state_alloc(out, n);
    app_to_host(out->px, c.px, n * 4, dev);
    app_to_host(out->py, c.py, n * 4, dev);
    app_to_host(out->vx, c.vx, n * 4, dev);
    app_to_host(out->vy, c.vy, n * 4, dev);
    app_to_host(out->m, c.m, n * 4, dev);
    for (int k = 0; k < 7; ++k) app_free(*arr[k], dev);
    return t;
}

static void write_picture(const char *path, const state *s) {
    int w = 800, h = 800;
    unsigned char *img = (unsigned char *)calloc((size_t)w * h * 3, 1);
    for (uint64_t i = 0; i < s->n; ++i) {
        int x = (int)((s->px[i] + 1.0f) * 0.5f * (float)(w - 1)), y = (int)((s->py[i] + 1.0f) * 0.5f * (float)(h - 1));
        if (x < 0 || y < 0 || x >= w || y >= h) continue;
        unsigned char *p = img + ((size_t)y * w + x) * 3;
        p[0] = 255;
        p[1] = (unsigned char)(255 - 100 * (s->m[i] - 0.5f));
        p[2] = 120;
    }
    app_write_ppm(path, w, h, img);
    free(img);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines survive a timeout */
    uint64_t n = 20000;
    int iters = 3000;
    float dt = 0.02f;
    app_opts o = app_opts_new();
    wh_cli_opt cli[] = {WH_CLI_UINT("n", &n, "bodies"), WH_CLI_INT("iters", &iters, "iterations"),
                        WH_CLI_DOUBLE("dt", &dt, "time step"), APP_CLI_COMMON(&o, "all|pair|warpheap|static|malloc"),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "N-body (all pairs) on the object allocator.");
    app_opts_done(&o);
    int dev = o.dev, check = o.check;
    char env[512];
    app_env(env, sizeof env, dev);
    printf("nbody: %llu bodies, %d iterations, dt %g, %s\n", (unsigned long long)n, iters, dt, env);
    double t_wh = -1, t_st = -1, t_dm = -1;
    state a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (o.pair || check || app_wants(&o, "warpheap")) t_wh = run_warpheap(n, iters, dt, dev, &a);
    if (o.pair || check || app_wants(&o, "static")) t_st = run_static(n, iters, dt, dev, &b);
#if defined(__CUDACC__)
    state mm;
    memset(&mm, 0, sizeof mm);
    if (dev && app_wants(&o, "malloc")) {
        state_alloc(&mm, n);
        float *ex = (float *)malloc(n * 5 * sizeof(float));
        t_dm = run_malloc(n, iters, dt, ex);
        memcpy(mm.px, ex, n * 4);
        memcpy(mm.py, ex + n, n * 4);
        memcpy(mm.vx, ex + 2 * n, n * 4);
        memcpy(mm.vy, ex + 3 * n, n * 4);
        memcpy(mm.m, ex + 4 * n, n * 4);
        free(ex);
        if (check) compare("malloc", &mm, "static", &b);
    }
#endif
    const char *names[3] = {"warpheap", "static", "malloc"};
    double ts[3] = {t_wh, t_st, t_dm};
    long long done[3] = {iters, iters, iters};
    app_print_times(3, names, ts, done);
    int rc = 0;
    if (check) {
        rc |= compare("warpheap", &a, "static", &b) != 0;
        if (dev && (double)n * (double)n * iters <= 2e9) { /* which one is right: a CPU reference */
            state h;
            run_static(n, iters, dt, 0, &h);
            compare("static", &b, "static-cpu", &h);
            compare("warpheap", &a, "static-cpu", &h);
        }
    }
    if (o.ppm) write_picture(o.ppm, a.n ? &a : &b);
    if (o.csv) app_csv_times(o.csv, "nbody", 3, names, n, done, ts, env);
    return rc;
}
