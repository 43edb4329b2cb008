/* SPDX-License-Identifier: MIT */
/* Game of Life on the object allocator: DynaSOAr's game-of-life (Table 1 of
 * the paper), the O(#alive cells) form: alive cells and alive-candidates (dead
 * cells next to an alive cell) are objects, classes Alive and Candidate
 * (subclasses of the abstract Agent); only they are processed, by
 * parallel_do.  Per iteration: Alive.prepare and Candidate.prepare count live
 * neighbours and decide (read-only); Alive.update destroys the dying;
 * Candidate.update turns a birth into a new Alive and destroys every
 * candidate; Alive.spread creates a Candidate in each dead neighbour cell that
 * has none (one wins by compare-and-swap on the cell).  Departure: the cell grid
 * is two plain arrays (alive flag, agent pointer), not Cell objects.
 *
 * Variants: warpheap; the static baseline, the classic O(#cells) grid update
 * (the paper notes that this application has no static-allocation form with
 * the same algorithm); CUDA device malloc with per-type pointer arrays (GPU
 * only).  --check requires identical final grids.
 *
 *   wh_gameoflife [--w=2048] [--h=2048] [--iters=300] [--density=25]
 *                 [--mode=all|pair|warpheap|static|malloc] [--cpu] [--check] [--ppm=FILE] [--csv=FILE]
 *                 [--max-seconds=S]
 */
#include "warpheap/soa.h"
#include "wh_app_bench.h"

/* clang-format off */
#define AGENT_FIELDS(F) F(uint32_t, cell) F(uint32_t, action)
/* clang-format on */
WH_SOA_CLASS(Agent, 0, AGENT_FIELDS)
WH_SOA_SUBCLASS(Alive, 1, Agent, WH_SOA_NO_FIELDS)
WH_SOA_SUBCLASS(Candidate, 2, Agent, WH_SOA_NO_FIELDS)

#define GL_RESERVED 1ull /* an agent pointer being created (never a real pointer) */

typedef struct gl_ctx {
    uint32_t w, h, density;
    uint32_t *alive, *next; /* per cell                                  */
    uint64_t *agent;        /* warpheap: the cell's Alive or Candidate    */
    wh_soa soa;             /* for plain kernels that create objects      */
} gl_ctx;

WH_INLINE WH_HOST_DEVICE uint32_t gl_nb(const gl_ctx *c, uint32_t cell, uint32_t k) {
    uint32_t idx = k < 4u ? k : k + 1u; /* 3x3 square without its centre */
    uint32_t x = cell % c->w, y = cell / c->w;
    x = (x + c->w + idx % 3u - 1u) % c->w;
    y = (y + c->h + idx / 3u - 1u) % c->h;
    return y * c->w + x;
}
WH_INLINE WH_HOST_DEVICE uint32_t gl_count(const gl_ctx *c, uint32_t cell) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < 8; ++k) n += c->alive[gl_nb(c, cell, k)];
    return n;
}
WH_INLINE WH_HOST_DEVICE uint32_t gl_initial(const gl_ctx *c, uint64_t i) {
    return (uint32_t)(wh_hash64(0x6A3Eull + i) % 100u) < c->density;
}

/* ---- warpheap ------------------------------------------------------------------------ */
/* New agent of class type t in cell (the cell's agent word must be ours). */
WH_INLINE WH_HOST_DEVICE void gl_place(const wh_soa *s, const gl_ctx *c, uint32_t cell, uint32_t t) {
    Agent a = Agent_from(wh_soa_alloc(s, t));
    if (!Agent_is_null(a)) {
        WH_GET(Agent, a, cell) = cell;
        WH_GET(Agent, a, action) = 0;
    }
    wh_atomic_store(&c->agent[cell], a.p, WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE void gl_seed(uint64_t i, const gl_ctx *c) {
    c->alive[i] = gl_initial(c, i);
    c->agent[i] = 0;
    if (c->alive[i]) gl_place(&c->soa, c, (uint32_t)i, Alive_TYPE);
}
WH_INLINE WH_HOST_DEVICE void alive_prepare(const wh_soa *s, Alive o, const gl_ctx *c) {
    (void)s;
    uint32_t n = gl_count(c, WH_GET(Alive, o, base.cell));
    WH_GET(Alive, o, base.action) = n == 2 || n == 3; /* 1: stays alive */
}
WH_INLINE WH_HOST_DEVICE void candidate_prepare(const wh_soa *s, Candidate o, const gl_ctx *c) {
    (void)s;
    WH_GET(Candidate, o, base.action) = gl_count(c, WH_GET(Candidate, o, base.cell)) == 3; /* 1: born */
}
WH_INLINE WH_HOST_DEVICE void alive_update(const wh_soa *s, Alive o, const gl_ctx *c) {
    if (WH_GET(Alive, o, base.action)) return;
    uint32_t cell = WH_GET(Alive, o, base.cell);
    c->alive[cell] = 0;
    wh_atomic_store(&c->agent[cell], 0ull, WH_RELAXED);
    WH_SOA_DESTROY(s, o); /* an object may destroy itself */
}
WH_INLINE WH_HOST_DEVICE void candidate_update(const wh_soa *s, Candidate o, const gl_ctx *c) {
    uint32_t cell = WH_GET(Candidate, o, base.cell), born = WH_GET(Candidate, o, base.action);
    WH_SOA_DESTROY(s, o);
    if (born) {
        c->alive[cell] = 1;
        gl_place(s, c, cell, Alive_TYPE);
    } else {
        wh_atomic_store(&c->agent[cell], 0ull, WH_RELAXED);
    }
}
/* Dead neighbours without an agent become candidates; one creator per cell. */
WH_INLINE WH_HOST_DEVICE void alive_spread(const wh_soa *s, Alive o, const gl_ctx *c) {
    uint32_t cell = WH_GET(Alive, o, base.cell);
    for (uint32_t k = 0; k < 8; ++k) {
        uint32_t nb = gl_nb(c, cell, k);
        uint64_t expect = 0;
        if (c->alive[nb] || wh_atomic_load(&c->agent[nb], WH_RELAXED)) continue;
        if (wh_atomic_cas(&c->agent[nb], &expect, GL_RESERVED, WH_ACQ_REL, WH_RELAXED))
            gl_place(s, c, nb, Candidate_TYPE);
    }
}
WH_SOA_PARALLEL_FOR(gl_seed_all, gl_ctx, gl_seed)
WH_SOA_PARALLEL_DO(Alive, alive_prepare, gl_ctx)
WH_SOA_PARALLEL_DO(Candidate, candidate_prepare, gl_ctx)
WH_SOA_PARALLEL_DO(Alive, alive_update, gl_ctx)
WH_SOA_PARALLEL_DO(Candidate, candidate_update, gl_ctx)
WH_SOA_PARALLEL_DO(Alive, alive_spread, gl_ctx)

/* ---- static baseline: the whole grid every iteration ------------------------------------------ */
WH_INLINE WH_HOST_DEVICE void st_init(uint64_t i, const gl_ctx *c) { c->alive[i] = gl_initial(c, i); }
WH_INLINE WH_HOST_DEVICE void st_step(uint64_t i, const gl_ctx *c) {
    uint32_t n = gl_count(c, (uint32_t)i);
    c->next[i] = n == 3 || (n == 2 && c->alive[i]);
}
WH_SOA_PARALLEL_FOR(st_init_all, gl_ctx, st_init)
WH_SOA_PARALLEL_FOR(st_step_all, gl_ctx, st_step)

/* ---- driver ------------------------------------------------------------------------------------- */
typedef struct opts {
    uint32_t w, h, iters, density;
    int dev;
    size_t heap;
} opts;

static gl_ctx ctx_for(const opts *o) {
    gl_ctx c;
    memset(&c, 0, sizeof c);
    c.w = o->w;
    c.h = o->h;
    c.density = o->density;
    return c;
}

#include "gameoflife_malloc.h"

static double run_warpheap(const opts *o, uint32_t *out) {
    wh_soa_type_desc types[] = {WH_SOA_ABSTRACT_TYPE(Agent), WH_SOA_TYPE(Alive), WH_SOA_TYPE(Candidate)};
    wh_soa_config cfg = {o->heap, types, 3, o->dev != 0, 0, NULL, false};
    uint64_t n = (uint64_t)o->w * o->h;
    gl_ctx c = ctx_for(o);
    APP_TRY(wh_soa_create(&c.soa, &cfg));
    c.alive = (uint32_t *)app_alloc(n * 4, o->dev);
    c.agent = (uint64_t *)app_alloc(n * 8, o->dev);
    APP_TRY(gl_seed_all(o->dev, n, c));
    APP_TRY(Alive_parallel_do_alive_spread(&c.soa, c));
    app_sync(o->dev);
    double t0 = app_now();
    for (uint32_t it = 0; it < o->iters; ++it) {
        APP_TIME_CAP(it, 8, o->dev, t0)
        APP_TRY(Alive_parallel_do_alive_prepare(&c.soa, c));
        APP_TRY(Candidate_parallel_do_candidate_prepare(&c.soa, c));
        APP_TRY(Alive_parallel_do_alive_update(&c.soa, c));
        APP_TRY(Candidate_parallel_do_candidate_update(&c.soa, c));
        APP_TRY(Alive_parallel_do_alive_spread(&c.soa, c));
    }
    app_sync(o->dev);
    double t = app_now() - t0;
    app_to_host(out, c.alive, n * 4, o->dev);
    uint64_t bad = 0;
    APP_TRY(wh_soa_check(&c.soa, &bad));
    wh_soa_stats st;
    APP_TRY(wh_soa_stats_get(&c.soa, &st));
    printf("  warpheap heap: %u blocks, alive %llu, candidates %llu, fragmentation %.3f, %llu failed allocations, %llu "
           "invariants broken\n",
           c.soa.nblocks, (unsigned long long)st.objects[Alive_TYPE], (unsigned long long)st.objects[Candidate_TYPE],
           st.fragmentation, (unsigned long long)st.counters[WH_SOA_CTR_FAILED_ALLOCS], (unsigned long long)bad);
    if (bad || st.counters[WH_SOA_CTR_FAILED_ALLOCS]) exit(1);
    app_free(c.alive, o->dev);
    app_free(c.agent, o->dev);
    APP_DESTROY(&c.soa);
    return t;
}

static double run_static(const opts *o, uint32_t *out) {
    uint64_t n = (uint64_t)o->w * o->h;
    gl_ctx c = ctx_for(o);
    c.alive = (uint32_t *)app_alloc(n * 4, o->dev);
    c.next = (uint32_t *)app_alloc(n * 4, o->dev);
    APP_TRY(st_init_all(o->dev, n, c));
    app_sync(o->dev);
    double t0 = app_now();
    for (uint32_t it = 0; it < o->iters; ++it) {
        APP_TIME_CAP(it, 8, o->dev, t0)
        APP_TRY(st_step_all(o->dev, n, c));
        uint32_t *t = c.alive;
        c.alive = c.next;
        c.next = t;
    }
    app_sync(o->dev);
    double t = app_now() - t0;
    app_to_host(out, c.alive, n * 4, o->dev);
    app_free(c.alive, o->dev);
    app_free(c.next, o->dev);
    return t;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines survive a timeout */
    app_opts ao = app_opts_new();
    opts o;
    o.w = 2048, o.h = 2048, o.iters = 300, o.density = 25;
    wh_cli_opt cli[] = {WH_CLI_UINT("w", &o.w, "grid width in cells"),
                        WH_CLI_UINT("h", &o.h, "grid height in cells"),
                        WH_CLI_UINT("iters", &o.iters, "iterations"),
                        WH_CLI_UINT("density", &o.density, "percent of the cells alive at the start"),
                        APP_CLI_COMMON(&ao, "all|pair|warpheap|static|malloc"),
                        APP_CLI_LIMITS(&ao),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Game of Life on the object allocator.");
    app_opts_done(&ao);
    o.dev = ao.dev;
    uint64_t n = (uint64_t)o.w * o.h;
    o.heap = app_heap_opt(&ao, (size_t)(n * 48 + ((uint64_t)16 << 20)));
    int check = ao.check;
    if (o.w < 3 || o.h < 3) {
        fprintf(stderr, "gameoflife: grid too small\n");
        return 2;
    }
    char env[512];
    app_env(env, sizeof env, o.dev);
    printf("gameoflife: %ux%u cells, %u iterations, density %u%%, %s\n", o.w, o.h, o.iters, o.density, env);
    uint32_t *ga = (uint32_t *)calloc(n, 4), *gb = (uint32_t *)calloc(n, 4), *gm = (uint32_t *)calloc(n, 4);
    double ts[3] = {-1, -1, -1};
    long long done[3] = {o.iters, o.iters, o.iters};
    app_time_cap_opt(&ao);
    if (ao.pair || check || app_wants(&ao, "warpheap")) ts[0] = run_warpheap(&o, ga), app_take_done(&done[0]);
    if (ao.pair || check || app_wants(&ao, "static")) ts[1] = run_static(&o, gb), app_take_done(&done[1]);
#if defined(__CUDACC__)
    if (o.dev && app_wants(&ao, "malloc")) ts[2] = run_malloc(&o, gm), app_take_done(&done[2]);
#endif
    const char *names[3] = {"warpheap", "static", "malloc"};
    app_print_times(3, names, ts, done);
    int rc = 0;
    if (check) {
        uint32_t *other[2] = {ga, gm};
        for (int k = 0; k < 2; ++k) {
            if (ts[k == 0 ? 0 : 2] < 0) continue;
            uint64_t diff = 0, alive = 0;
            for (uint64_t i = 0; i < n; ++i) {
                diff += other[k][i] != gb[i];
                alive += gb[i];
            }
            printf("  check: %s vs static: %llu of %llu cells differ (%llu alive) -> %s\n", k ? "malloc" : "warpheap",
                   (unsigned long long)diff, (unsigned long long)n, (unsigned long long)alive,
                   diff ? "FAILED" : "identical");
            rc |= diff != 0;
        }
    }
    if (ao.ppm) {
        unsigned char *img = (unsigned char *)malloc(n * 3);
        for (uint64_t i = 0; i < n; ++i) memset(img + i * 3, (ts[0] >= 0 ? ga : gb)[i] ? 255 : 0, 3);
        app_write_ppm(ao.ppm, (int)o.w, (int)o.h, img);
        free(img);
    }
    if (ao.csv) app_csv_times(ao.csv, "gameoflife", 3, names, n, done, ts, env);
    free(ga);
    free(gb);
    free(gm);
    return rc;
}
