/* SPDX-License-Identifier: MIT */
/* N-body's class, rules, static-array baseline and final-state check, shared
 * by wh_nbody (nbody.c) and wh_nbody_dist (examples/nbody_dist): Body, the
 * pair force summed in 2^-40 fixed point (so no summation order changes a
 * bit), the move, the static version and compare (rows sorted, so storage
 * order does not matter). */
#ifndef NBODY_SIM_H
#define NBODY_SIM_H

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
/* A body's force from its fixed-point sums, and its move. */
WH_INLINE WH_HOST_DEVICE void nb_set_force(Body b, int64_t ax, int64_t ay) {
    WH_GET(Body, b, fx) = (float)((double)ax / NB_FIX);
    WH_GET(Body, b, fy) = (float)((double)ay / NB_FIX);
}
WH_INLINE WH_HOST_DEVICE void nb_move_body(Body b, float dt) {
    nb_move(&WH_GET(Body, b, px), &WH_GET(Body, b, py), &WH_GET(Body, b, vx), &WH_GET(Body, b, vy), WH_GET(Body, b, fx),
            WH_GET(Body, b, fy), WH_GET(Body, b, mass), dt);
}
WH_INLINE WH_HOST_DEVICE void nb_init(uint64_t i, float *px, float *py, float *vx, float *vy, float *m) {
    *px = 2.0f * nb_unit(i, 0) - 1.0f;
    *py = 2.0f * nb_unit(i, 1) - 1.0f;
    *vx = (nb_unit(i, 2) - 0.5f) / 20.0f;
    *vy = (nb_unit(i, 3) - 0.5f) / 20.0f;
    *m = 0.5f + nb_unit(i, 4);
}

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
static __attribute__((unused)) void state_free(state *s) {
    free(s->px);
    free(s->py);
    free(s->vx);
    free(s->vy);
    free(s->m);
    memset(s, 0, sizeof *s);
}

static __attribute__((unused)) double run_static(uint64_t n, int iters, float dt, int dev, state *out) {
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

#endif
