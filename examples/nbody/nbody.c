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
#include "nbody_sim.h"

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
    nb_set_force(b, ax, ay);
}
WH_INLINE WH_HOST_DEVICE void body_update(const wh_soa *s, Body b, const nb_ctx *c) {
    (void)s;
    nb_move_body(b, c->dt);
}
WH_SOA_PARALLEL_NEW(Body, body_init, nb_ctx)
WH_SOA_PARALLEL_DO(Body, body_force, nb_ctx)
WH_SOA_PARALLEL_DO(Body, body_update, nb_ctx)

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

static double run_warpheap(uint64_t n, int iters, float dt, int dev, state *out) {
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Body)};
    size_t bytes = (size_t)(n / 64 + 64) * 2048 * 2 + ((size_t)8 << 20);
    wh_soa_config cfg = {bytes, types, 1, dev != 0, 0, NULL, false};
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
            state_free(&h);
        }
    }
    if (o.ppm) write_picture(o.ppm, a.n ? &a : &b);
    if (o.csv) app_csv_times(o.csv, "nbody", 3, names, n, done, ts, env);
    state_free(&a);
    state_free(&b);
#if defined(__CUDACC__)
    state_free(&mm);
#endif
    return rc;
}
