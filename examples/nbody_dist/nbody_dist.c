/* SPDX-License-Identifier: MIT */
/* N-body across ranks (soa/dist.h), a spatial decomposition: rank r owns
 * the bodies of the r-th vertical slab of the box, and a body that crosses
 * into another slab migrates there.  The force on a body needs every body,
 * so each iteration every rank exports its bodies' positions and masses and
 * an allgather gives each rank all of them (wa-tor's pattern is a halo; this
 * one is all to all).  Forces are summed in 2^-40 fixed point
 * (nbody_sim.h), so the final state equals the one-domain static version's
 * bit for bit whatever rank a body was on (--check: rank 0 gathers it).
 *
 *   wh_nbody_dist [--ranks=N] [--n=20000] [--iters=100] [--dt=0.02] [--cpu] [--check]
 * Ranks are threads of this process, or GPUs over NCCL (--nccl):
 * examples/common/wh_dist_app.h.
 */
#include "../nbody/nbody_sim.h"
#include "warpheap/soa/dist.h"
#include "wh_dist_app.h"

typedef struct nd_point {
    float x, y, m;
} nd_point;
typedef struct nd_ctx {
    float dt;
    uint32_t rank, size;
    nd_point *mine;      /* the heap's memory: this rank's bodies, exported */
    uint32_t *count;     /* how many */
    const nd_point *all; /* every rank's, after the allgather */
    uint64_t nall;
} nd_ctx;

/* The slab of x (the box is [-1, 1]; bodies a little past it, or NaN, go to the edge ranks). */
WH_INLINE WH_HOST_DEVICE uint32_t nd_slab(float x, uint32_t size) {
    if (!(x > -1.0f)) return 0;
    uint32_t r = (uint32_t)((x + 1.0f) * 0.5f * (float)size);
    return r < size ? r : size - 1u;
}
WH_INLINE WH_HOST_DEVICE void nd_export(const wh_soa *s, Body b, const nd_ctx *c) {
    (void)s;
    uint32_t i = wh_atomic_fetch_add(c->count, 1u, WH_RELAXED);
    nd_point p = {WH_GET(Body, b, px), WH_GET(Body, b, py), WH_GET(Body, b, mass)};
    c->mine[i] = p;
}
/* Every body's pull (its own gives d2 = 0 and adds nothing, as the static
 * version's skip of itself). */
WH_INLINE WH_HOST_DEVICE void nd_force(const wh_soa *s, Body b, const nd_ctx *c) {
    (void)s;
    float x = WH_GET(Body, b, px), y = WH_GET(Body, b, py), m = WH_GET(Body, b, mass);
    int64_t ax = 0, ay = 0;
    for (uint64_t j = 0; j < c->nall; ++j) nb_pair(x, y, m, c->all[j].x, c->all[j].y, c->all[j].m, &ax, &ay);
    nb_set_force(b, ax, ay);
}
WH_INLINE WH_HOST_DEVICE void nd_update(const wh_soa *s, Body b, const nd_ctx *c) {
    (void)s;
    nb_move_body(b, c->dt);
}
WH_INLINE WH_HOST_DEVICE uint32_t nd_owner(const wh_soa *s, Body b, const nd_ctx *c) {
    (void)s;
    return nd_slab(WH_GET(Body, b, px), c->size);
}
WH_INLINE WH_HOST_DEVICE void nd_arrive(const wh_soa *s, Body b, const nd_ctx *c) { (void)s, (void)b, (void)c; }
WH_SOA_PARALLEL_DO(Body, nd_export, nd_ctx)
WH_SOA_PARALLEL_DO(Body, nd_force, nd_ctx)
WH_SOA_PARALLEL_DO(Body, nd_update, nd_ctx)
WH_SOA_DIST_CLASS(Body, nd_owner, nd_arrive, nd_ctx)

/* Body i of the one-domain run, created by the rank of its slab. */
typedef struct nd_seed {
    wh_soa s;
    nd_ctx c;
} nd_seed;
WH_INLINE WH_HOST_DEVICE void nd_create(uint64_t i, const nd_seed *p) {
    float px, py, vx, vy, m;
    nb_init(i, &px, &py, &vx, &vy, &m);
    if (nd_slab(px, p->c.size) != p->c.rank) return;
    Body b = WH_SOA_NEW(&p->s, Body);
    if (Body_is_null(b)) return; /* out of memory: the check shows it */
    WH_GET(Body, b, px) = px, WH_GET(Body, b, py) = py, WH_GET(Body, b, vx) = vx, WH_GET(Body, b, vy) = vy;
    WH_GET(Body, b, mass) = m;
}
WH_SOA_PARALLEL_FOR(nd_create_all, nd_seed, nd_create)

typedef struct nd_run {
    uint64_t n;
    int iters, dev;
    float dt;
    state *out;     /* rank 0: every body's final state */
    double ms;      /* rank 0: ms an iteration */
    uint64_t moved; /* bodies migrated, all ranks */
    uint64_t most;  /* the most bodies a rank held at the end */
} nd_run;

static void nd_rank_main(uint32_t rank, uint32_t size, wh_soa_transport *end, void *arg) {
    nd_run *run = (nd_run *)arg;
    int dev = run->dev;
    uint64_t n = run->n;
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Body)};
    /* room for every body on one rank: slabs can empty */
    wh_soa_config cfg = {(size_t)(n / 64 + 64) * 2048 * 2 + ((size_t)8 << 20), types, 1, dev != 0, 2, NULL, false};
    wh_soa soa;
    wh_soa_dist d;
    app_dist_begin(&soa, &cfg, &d, end);
    nd_ctx c;
    memset(&c, 0, sizeof c);
    c.dt = run->dt;
    c.rank = rank;
    c.size = size;
    c.mine = (nd_point *)app_alloc(n * sizeof(nd_point), dev);
    nd_point *all = (nd_point *)app_alloc(n * sizeof(nd_point), dev);
    c.all = all;
    c.count = (uint32_t *)app_alloc(sizeof(uint32_t), dev);
    nd_seed seed = {soa, c};
    APP_TRY(nd_create_all(dev, n, seed));
    uint64_t zero = 0, sync;
    APP_TRY(wh_soa_dist_sum(&d, &zero, &sync, 1)); /* every rank starts here */
    double t0 = app_now();
    for (int it = 0; it < run->iters; ++it) {
        uint32_t none = 0, mine = 0;
        app_to_dev(c.count, &none, sizeof none, dev);
        APP_TRY(Body_parallel_do_nd_export(&soa, c));
        app_to_host(&mine, c.count, sizeof mine, dev);
        size_t total = 0;
        APP_TRY(wh_soa_dist_allgather(&d, c.mine, (size_t)mine * sizeof(nd_point), all, n * sizeof(nd_point), &total));
        c.nall = total / sizeof(nd_point);
        APP_TRY(Body_parallel_do_nd_force(&soa, c));
        APP_TRY(Body_parallel_do_nd_update(&soa, c));
        APP_TRY(Body_dist_migrate(&d, c));
    }
    app_sync(dev);
    APP_TRY(wh_soa_dist_sum(&d, &zero, &sync, 1));
    double t = app_now() - t0;
    /* this rank's bodies as rows of (px, py, vx, vy, m), gathered on rank 0 */
    wh_soa img;
    void *owned;
    APP_TRY(wh_soa_host_image(&soa, &img, &owned));
    uint64_t k = 0;
    float *rows = (float *)malloc(n * 5 * sizeof(float) + 4);
    wh_soa_iter itr;
    wh_soa_iter_begin(&itr, &img, Body_TYPE);
    for (uint64_t p; (p = wh_soa_iter_next(&itr, &img)) != 0 && k < n; ++k) {
        Body b = Body_from(p);
        float v[5] = {WH_GET(Body, b, px), WH_GET(Body, b, py), WH_GET(Body, b, vx), WH_GET(Body, b, vy),
                      WH_GET(Body, b, mass)};
        memcpy(rows + k * 5, v, sizeof v);
    }
    free(owned);
    float *every = rank == 0 ? (float *)malloc(n * 5 * sizeof(float) + 4) : NULL;
    size_t got = 0;
    APP_TRY(wh_soa_dist_gather(&d, rows, k * 5 * sizeof(float), every, every ? n * 5 * sizeof(float) : 0, &got));
    uint64_t held[APP_DIST_MAX_RANKS] = {0}, sum[APP_DIST_MAX_RANKS];
    held[rank] = k;
    APP_TRY(wh_soa_dist_sum(&d, held, sum, size));
    uint64_t mv = d.stats.sent, moved = 0;
    APP_TRY(wh_soa_dist_sum(&d, &mv, &moved, 1));
    if (rank == 0) {
        uint64_t bodies = got / (5 * sizeof(float));
        state_alloc(run->out, bodies);
        for (uint64_t i = 0; i < bodies; ++i) {
            run->out->px[i] = every[i * 5], run->out->py[i] = every[i * 5 + 1];
            run->out->vx[i] = every[i * 5 + 2], run->out->vy[i] = every[i * 5 + 3];
            run->out->m[i] = every[i * 5 + 4];
        }
        run->ms = run->iters ? t * 1e3 / run->iters : 0;
        run->moved = moved;
        for (uint32_t r = 0; r < size; ++r) run->most = sum[r] > run->most ? sum[r] : run->most;
    }
    free(every);
    free(rows);
    app_dist_end(&soa, &d, end);
    app_free(c.mine, dev);
    app_free(all, dev);
    app_free(c.count, dev);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    nd_run run;
    memset(&run, 0, sizeof run);
    run.n = 20000, run.iters = 100, run.dt = 0.02f;
    app_dist ad = {2, 0};
    app_opts o = app_opts_new();
    wh_cli_opt cli[] = {APP_CLI_DIST(&ad),
                        WH_CLI_UINT("n", &run.n, "bodies"),
                        WH_CLI_INT("iters", &run.iters, "iterations"),
                        WH_CLI_DOUBLE("dt", &run.dt, "time step"),
                        APP_CLI_COMMON(&o, "all|warpheap|static"),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "N-body across ranks: one vertical slab of the box and one object heap per rank.");
    app_opts_done(&o);
    run.dev = o.dev;
    char env[512];
    app_env(env, sizeof env, run.dev);
    printf("nbody_dist: %llu bodies, %d iterations, dt %g, %s\n", (unsigned long long)run.n, run.iters, run.dt, env);
    state a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    double ts[2] = {-1, -1};
    long long done[2] = {run.iters, run.iters};
    if (o.check || app_wants(&o, "warpheap")) {
        run.out = &a;
        int reporter = 1;
        uint32_t ranks = app_dist_run(&ad, run.dev, nd_rank_main, &run, &reporter);
        if (!reporter) return 0; /* rank 0's process reports and checks */
        ts[0] = run.ms * run.iters / 1e3;
        printf("  warpheap, %u ranks: %.3f ms an iteration; %llu bodies migrated, at most %llu on a rank at the end\n",
               ranks, run.ms, (unsigned long long)run.moved, (unsigned long long)run.most);
    }
    if (o.check || app_wants(&o, "static")) ts[1] = run_static(run.n, run.iters, run.dt, run.dev, &b);
    const char *names[2] = {"warpheap", "static"};
    app_print_times(2, names, ts, done);
    int rc = 0;
    if (o.check) {
        rc |= a.n != b.n;
        if (a.n != b.n)
            printf("  check: %llu bodies gathered, %llu expected -> FAILED\n", (unsigned long long)a.n,
                   (unsigned long long)b.n);
        else
            rc |= compare("warpheap across ranks", &a, "static", &b) != 0;
    }
    if (o.csv) app_csv_times(o.csv, "nbody_dist", 2, names, run.n, done, ts, env);
    state_free(&a);
    state_free(&b);
    return rc;
}
