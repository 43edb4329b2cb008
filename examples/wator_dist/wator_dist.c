/* SPDX-License-Identifier: MIT */
/* Wa-Tor across ranks (soa/dist.h): the grid split into bands of rows, one
 * band and one object heap per rank, fish and sharks migrating to the rank
 * of the band they move into.  The rules are wa-tor's (examples/wator), so
 * the final grid must equal the one-domain static version's cell for cell
 * (--check; rank 0 gathers the bands).
 *
 * The cells are static arrays of the band with a ghost row above and below
 * (agent pointer, requested direction, grant); the agents are objects.  Per
 * half-step (fish, then sharks), as the one-domain program's request/grant
 * protocol: halo of the agent pointers (a ghost cell's pointer is read for
 * its type only), the agents' requests, halo of the requests, the cells'
 * grants (a cell reads its neighbours' requests, so no request is written
 * into another rank's cell), halo of the grants, the agents' moves, and the
 * migration of the agents whose cell is now another rank's.  A shark that
 * arrives on a fish eats it on the receiver.
 *
 *   wh_wator_dist [--ranks=N] [--w=W] [--h=H] [--iters=I] [--cpu] [--check] ...
 * Ranks are threads of this process, or GPUs over NCCL (--nccl):
 * examples/common/wh_dist_app.h.
 */
#include "../wator/wator_sim.h"
#include "warpheap/soa/dist.h"

#include "wh_dist_app.h"

typedef struct wd_ctx {
    wt_ctx wt;                    /* w, h, iter and the rules' parameters */
    uint32_t rank, size, r0, own; /* this rank's rows [r0, r0 + own) */
    uint64_t *agent;              /* (own + 2) rows: the agent in each cell, 0 for none */
    uint32_t *tgt, *granted;      /* (own + 2) rows: the direction requested; the one granted */
} wd_ctx;

/* Rank r's first row (bands differ by at most a row). */
WH_INLINE WH_HOST_DEVICE uint32_t wd_first_row(uint32_t r, uint32_t size, uint32_t h) {
    return (uint32_t)(((uint64_t)r * h + size - 1u) / size);
}
WH_INLINE WH_HOST_DEVICE uint32_t wd_owner(const wd_ctx *c, uint32_t cell) {
    return (uint32_t)((uint64_t)(cell / c->wt.w) * c->size / c->wt.h);
}
/* A global cell's index in the band's arrays: own rows first (one rank owns
 * every row), then the ghost rows. */
WH_INLINE WH_HOST_DEVICE uint32_t wd_local(const wd_ctx *c, uint32_t cell) {
    uint32_t w = c->wt.w, y = cell / w, x = cell % w;
    if (y - c->r0 < c->own) return (y - c->r0 + 1u) * w + x;
    return y == (c->r0 + c->wt.h - 1u) % c->wt.h ? x : (c->own + 1u) * w + x;
}

/* ---- the agents' rules on the band --------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE void wd_request(Agent a, const wd_ctx *c, bool shark) {
    uint32_t me = WH_GET(Agent, a, cell), free_mask = 0, fish_mask = 0;
    for (uint32_t d = 0; d < 4; ++d) {
        uint64_t o = c->agent[wd_local(c, wt_neighbor(&c->wt, me, d))];
        free_mask |= (uint32_t)(o == 0) << d;
        fish_mask |= (uint32_t)(o != 0 && wh_soa_ptr_type(o) == Fish_TYPE) << d;
    }
    uint32_t d = wt_pick(shark && fish_mask ? fish_mask : free_mask, wt_rand(&c->wt, shark ? 5 : 1, me));
    WH_GET(Agent, a, target) = d;
    c->tgt[wd_local(c, me)] = d;
}
WH_INLINE WH_HOST_DEVICE void wd_fish_request(const wh_soa *s, Fish f, const wd_ctx *c) {
    (void)s;
    wd_request(Fish_super(f), c, false);
}
WH_INLINE WH_HOST_DEVICE void wd_shark_request(const wh_soa *s, Shark k, const wd_ctx *c) {
    (void)s;
    wd_request(Shark_super(k), c, true);
}
/* The cell this agent moves to, else ~0u. */
WH_INLINE WH_HOST_DEVICE uint32_t wd_granted(Agent a, const wd_ctx *c) {
    uint32_t d = WH_GET(Agent, a, target), me = WH_GET(Agent, a, cell);
    if (d == WT_NONE) return ~0u;
    uint32_t t = wt_neighbor(&c->wt, me, d);
    return c->granted[wd_local(c, t)] == ((d + 2u) & 3u) ? t : ~0u;
}
/* The agent left cell me for t: a newborn (or nothing) stays in me; in the
 * band the agent takes t now, else its migration takes it there. */
WH_INLINE WH_HOST_DEVICE void wd_leave(const wh_soa *s, Agent a, uint32_t egg, uint32_t t, const wd_ctx *c,
                                       bool shark) {
    uint32_t me = WH_GET(Agent, a, cell);
    if (wd_owner(c, t) == c->rank) c->agent[wd_local(c, t)] = a.p;
    WH_GET(Agent, a, cell) = t;
    uint64_t left = 0;
    if (egg >= c->wt.spawn) {
        Agent n = shark ? Shark_super(WH_SOA_NEW(s, Shark)) : Fish_super(WH_SOA_NEW(s, Fish));
        if (!Agent_is_null(n)) {
            WH_GET(Agent, n, cell) = me;
            WH_GET(Agent, n, target) = WT_NONE;
            WH_GET(Agent, n, egg) = 0;
            if (shark) WH_GET(Shark, Shark_from(n.p), energy) = c->wt.start;
            left = n.p;
        }
        WH_GET(Agent, a, egg) = 0;
    }
    c->agent[wd_local(c, me)] = left;
}
WH_INLINE WH_HOST_DEVICE void wd_fish_update(const wh_soa *s, Fish f, const wd_ctx *c) {
    Agent a = Fish_super(f);
    uint32_t egg = ++WH_GET(Agent, a, egg), t = wd_granted(a, c);
    if (t != ~0u) wd_leave(s, a, egg, t, c, false);
}
/* A shark that enters a cell eats its fish (here, or on arrival). */
WH_INLINE WH_HOST_DEVICE void wd_eat(const wh_soa *s, Shark k, uint32_t t, const wd_ctx *c) {
    uint64_t prey = c->agent[wd_local(c, t)];
    if (!prey) return;
    WH_SOA_DESTROY(s, Fish_from(prey));
    WH_GET(Shark, k, energy) += c->wt.boost;
}
WH_INLINE WH_HOST_DEVICE void wd_shark_update(const wh_soa *s, Shark k, const wd_ctx *c) {
    Agent a = Shark_super(k);
    uint32_t egg = ++WH_GET(Agent, a, egg), me = WH_GET(Agent, a, cell);
    if (--WH_GET(Shark, k, energy) == 0) { /* starved */
        c->agent[wd_local(c, me)] = 0;
        WH_SOA_DESTROY(s, k);
        return;
    }
    uint32_t t = wd_granted(a, c);
    if (t == ~0u) return;
    if (wd_owner(c, t) == c->rank) wd_eat(s, k, t, c);
    wd_leave(s, a, egg, t, c, true);
}
WH_SOA_PARALLEL_DO(Fish, wd_fish_request, wd_ctx)
WH_SOA_PARALLEL_DO(Fish, wd_fish_update, wd_ctx)
WH_SOA_PARALLEL_DO(Shark, wd_shark_request, wd_ctx)
WH_SOA_PARALLEL_DO(Shark, wd_shark_update, wd_ctx)

/* ---- migration ------------------------------------------------------------------------------ */
WH_INLINE WH_HOST_DEVICE uint32_t wd_fish_owner(const wh_soa *s, Fish f, const wd_ctx *c) {
    (void)s;
    return wd_owner(c, WH_GET(Agent, Fish_super(f), cell));
}
WH_INLINE WH_HOST_DEVICE uint32_t wd_shark_owner(const wh_soa *s, Shark k, const wd_ctx *c) {
    (void)s;
    return wd_owner(c, WH_GET(Agent, Shark_super(k), cell));
}
WH_INLINE WH_HOST_DEVICE void wd_fish_arrive(const wh_soa *s, Fish f, const wd_ctx *c) {
    (void)s;
    c->agent[wd_local(c, WH_GET(Agent, Fish_super(f), cell))] = f.p;
}
WH_INLINE WH_HOST_DEVICE void wd_shark_arrive(const wh_soa *s, Shark k, const wd_ctx *c) {
    uint32_t t = WH_GET(Agent, Shark_super(k), cell);
    wd_eat(s, k, t, c);
    c->agent[wd_local(c, t)] = k.p;
}
WH_SOA_DIST_CLASS(Fish, wd_fish_owner, wd_fish_arrive, wd_ctx)
WH_SOA_DIST_CLASS(Shark, wd_shark_owner, wd_shark_arrive, wd_ctx)

/* ---- the band's cells ------------------------------------------------------------------------- */
typedef struct wd_cells {
    wh_soa s;
    wd_ctx c;
} wd_cells;
/* Own cell i (i < own * w): its agent at the start. */
WH_INLINE WH_HOST_DEVICE void wd_populate(uint64_t i, const wd_cells *p) {
    const wd_ctx *c = &p->c;
    uint32_t cell = c->r0 * c->wt.w + (uint32_t)i, k = wt_initial(cell);
    if (k == WT_EMPTY) return;
    Agent a = k == WT_FISH ? Fish_super(WH_SOA_NEW(&p->s, Fish)) : Shark_super(WH_SOA_NEW(&p->s, Shark));
    if (Agent_is_null(a)) return; /* out of memory: the check shows it */
    WH_GET(Agent, a, cell) = cell;
    WH_GET(Agent, a, target) = WT_NONE;
    WH_GET(Agent, a, egg) = wt_initial_egg(&c->wt, cell);
    if (k == WT_SHARK) WH_GET(Shark, Shark_from(a.p), energy) = c->wt.start;
    c->agent[c->wt.w + i] = a.p;
}
/* Own cell i: its grant, from the requests of its neighbours. */
WH_INLINE WH_HOST_DEVICE void wd_decide(uint64_t i, const wd_ctx *c) {
    uint32_t cell = c->r0 * c->wt.w + (uint32_t)i, request = 0;
    for (uint32_t e = 0; e < 4; ++e)
        request |= (uint32_t)(c->tgt[wd_local(c, wt_neighbor(&c->wt, cell, e))] == ((e + 2u) & 3u)) << e;
    c->granted[c->wt.w + i] = wt_pick(request, wt_rand(&c->wt, 2, cell));
}
WH_INLINE WH_HOST_DEVICE void wd_clear(uint64_t i, const wd_ctx *c) { c->tgt[c->wt.w + i] = WT_NONE; }
WH_SOA_PARALLEL_FOR(wd_populate_all, wd_cells, wd_populate)
WH_SOA_PARALLEL_FOR(wd_decide_all, wd_ctx, wd_decide)
WH_SOA_PARALLEL_FOR(wd_clear_all, wd_ctx, wd_clear)

/* ---- a rank ---------------------------------------------------------------------------------- */
typedef struct wd_run {
    opts o;
    grid *out;                         /* rank 0: the gathered grid */
    double ms;                         /* rank 0: ms an iteration */
    uint64_t moved, bytes, halo_bytes; /* over all ranks */
} wd_run;

static void wd_half(wh_soa_dist *d, wd_ctx *c, bool shark) {
    size_t row = (size_t)c->wt.w;
    uint64_t cells = (uint64_t)c->own * c->wt.w;
    int dev = (int)d->soa->on_device;
    APP_TRY(wh_soa_dist_halo_rows(d, c->agent, row * 8u, c->own));
    APP_TRY(wd_clear_all(dev, cells, *c));
    APP_TRY(shark ? Shark_parallel_do_wd_shark_request(d->soa, *c) : Fish_parallel_do_wd_fish_request(d->soa, *c));
    APP_TRY(wh_soa_dist_halo_rows(d, c->tgt, row * 4u, c->own));
    APP_TRY(wd_decide_all(dev, cells, *c));
    APP_TRY(wh_soa_dist_halo_rows(d, c->granted, row * 4u, c->own));
    APP_TRY(shark ? Shark_parallel_do_wd_shark_update(d->soa, *c) : Fish_parallel_do_wd_fish_update(d->soa, *c));
    APP_TRY(shark ? Shark_dist_migrate(d, *c) : Fish_dist_migrate(d, *c));
}

static void wd_rank_main(uint32_t rank, uint32_t size, wh_soa_transport *end, void *arg) {
    wd_run *run = (wd_run *)arg;
    const opts *o = &run->o;
    int dev = o->dev;
    wd_ctx c;
    memset(&c, 0, sizeof c);
    c.wt = ctx_for(o);
    c.rank = rank;
    c.size = size;
    c.r0 = wd_first_row(c.rank, c.size, o->h);
    c.own = wd_first_row(c.rank + 1u, c.size, o->h) - c.r0;
    if (c.own == 0) {
        fprintf(stderr, "wator_dist: %u rows for %u ranks: rank %u has none\n", o->h, size, rank);
        exit(2);
    }
    size_t cells = (size_t)(c.own + 2u) * o->w;
    c.agent = (uint64_t *)app_alloc(cells * 8u, dev);
    c.tgt = (uint32_t *)app_alloc(cells * 4u, dev);
    c.granted = (uint32_t *)app_alloc(cells * 4u, dev);
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Cell), WH_SOA_ABSTRACT_TYPE(Agent), WH_SOA_TYPE(Fish), WH_SOA_TYPE(Shark)};
    wh_soa_config cfg = {o->heap / c.size + ((size_t)16 << 20), types, 4, dev != 0, 2, NULL, false};
    wh_soa soa;
    wh_soa_dist d;
    app_dist_begin(&soa, &cfg, &d, end);
    wd_cells p = {soa, c};
    APP_TRY(wd_populate_all(dev, (uint64_t)c.own * o->w, p));
    app_sync(dev);
    uint64_t zero = 0, t0_ns = 0;
    APP_TRY(wh_soa_dist_sum(&d, &zero, &t0_ns, 1)); /* every rank starts here */
    double t0 = app_now();
    for (uint32_t it = 0; it < o->iters; ++it) {
        c.wt.iter = it;
        wd_half(&d, &c, false);
        wd_half(&d, &c, true);
        if (c.rank == 0 && o->iters >= 10 && (it + 1) % (o->iters / 10) == 0 && !o->quiet)
            printf("  iteration %u of %u\n", it + 1, o->iters);
    }
    app_sync(dev);
    APP_TRY(wh_soa_dist_sum(&d, &zero, &t0_ns, 1));
    double t = app_now() - t0;
    /* this band of the final grid, from a host image of the heap: kind, egg, energy per own cell */
    uint64_t n = (uint64_t)c.own * o->w, first = (uint64_t)c.r0 * o->w;
    uint32_t *band = (uint32_t *)calloc(3u * n + 1u, 4u);
    wh_soa img;
    void *owned;
    APP_TRY(wh_soa_host_image(&soa, &img, &owned));
    wh_soa_iter itr;
    wh_soa_iter_begin(&itr, &img, Agent_TYPE);
    for (uint64_t q; (q = wh_soa_iter_next(&itr, &img)) != 0;) {
        uint64_t cell = WH_GET(Agent, Agent_from(q), cell) - first;
        if (cell >= n) continue; /* not this band's: the check shows it */
        band[3u * cell] = wh_soa_ptr_type(q) == Fish_TYPE ? WT_FISH : WT_SHARK;
        band[3u * cell + 1u] = WH_GET(Agent, Agent_from(q), egg);
        band[3u * cell + 2u] = wh_soa_ptr_type(q) == Shark_TYPE ? WH_GET(Shark, Shark_from(q), energy) : 0;
    }
    free(owned);
    uint64_t nall = (uint64_t)o->w * o->h;
    uint32_t *all = c.rank == 0 ? (uint32_t *)calloc(3u * nall + 1u, 4u) : NULL;
    APP_TRY(wh_soa_dist_gather(&d, band, 3u * n * 4u, all, all ? 3u * nall * 4u : 0, NULL));
    uint64_t mine[3] = {d.stats.sent, d.stats.bytes_sent, d.stats.halo_bytes}, sum[3];
    APP_TRY(wh_soa_dist_sum(&d, mine, sum, 3));
    if (c.rank == 0) {
        grid_alloc(run->out, nall);
        for (uint64_t i = 0; i < nall; ++i) {
            run->out->kind[i] = all[3u * i];
            run->out->egg[i] = all[3u * i + 1u];
            run->out->energy[i] = all[3u * i + 2u];
        }
        run->ms = o->iters ? t * 1e3 / o->iters : 0;
        run->moved = sum[0], run->bytes = sum[1], run->halo_bytes = sum[2];
    }
    free(all);
    free(band);
    app_dist_end(&soa, &d, end);
    app_free(c.agent, dev);
    app_free(c.tgt, dev);
    app_free(c.granted, dev);
}

/* The final grid as a picture: wa-tor's colours (sharks red, fish green,
 * water blue), each band of rows tinted by its rank's hue. */
static void wd_picture(const char *path, const grid *g, uint32_t w, uint32_t h, uint32_t ranks) {
    static const unsigned char hue[6][3] = {{255, 255, 255}, {255, 200, 0}, {0, 200, 255},
                                            {255, 0, 255},   {0, 255, 120}, {160, 120, 255}};
    unsigned char *img = grid_rgb(g, w, h);
    if (!img) return;
    for (uint32_t y = 0; y < h; ++y) {
        const unsigned char *t = hue[(uint64_t)y * ranks / h % 6u]; /* the row's rank (wd_owner) */
        for (uint32_t x = 0; x < w; ++x)
            for (int k = 0; k < 3; ++k) {
                unsigned char *p = img + ((size_t)y * w + x) * 3 + k;
                *p = (unsigned char)((*p * 5u + t[k] * 3u) / 8u);
            }
    }
    app_write_ppm(path, (int)w, (int)h, img);
    free(img);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    app_opts ao = app_opts_new();
    opts o;
    opts_defaults(&o);
    app_dist ad = {2, 0};
    wh_cli_opt cli[] = {APP_CLI_DIST(&ad),
                        WT_CLI_RULES(&o),
                        WH_CLI_FLAG("quiet", &o.quiet, "no progress lines"),
                        APP_CLI_COMMON(&ao, "all|warpheap|static"),
                        APP_CLI_LIMITS(&ao),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Wa-Tor across ranks: one band of rows and one object heap per rank.");
    app_opts_done(&ao);
    o.dev = ao.dev;
    uint64_t n = (uint64_t)o.w * o.h;
    o.heap = app_heap_opt(&ao, (size_t)(n * 96 + ((uint64_t)16 << 20)));
    if (o.w < 3 || o.h < 3 || o.spawn < 1 || o.start < 1 || o.h < ad.ranks) {
        fprintf(stderr, "wator_dist: bad size or parameters (at least a row a rank)\n");
        return 2;
    }
    char env[512];
    app_env(env, sizeof env, o.dev);
    printf("wator_dist: %ux%u cells, %u iterations, %s\n", o.w, o.h, o.iters, env);
    uint32_t ranks = ad.ranks;
    grid a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    double ts[2] = {-1, -1};
    long long done[2] = {o.iters, o.iters};
    if (ao.check || app_wants(&ao, "warpheap")) {
        wd_run run;
        memset(&run, 0, sizeof run);
        run.o = o;
        run.out = &a;
        int reporter = 1;
        ranks = app_dist_run(&ad, o.dev, wd_rank_main, &run, &reporter);
        if (!reporter) return 0; /* rank 0's process reports and checks */
        ts[0] = run.ms * o.iters / 1e3;
        printf("  warpheap, %u ranks: %.3f ms an iteration; %llu agents migrated (%.1f MB), halos %.1f MB\n", ranks,
               run.ms, (unsigned long long)run.moved, run.bytes / 1e6, run.halo_bytes / 1e6);
    }
    if (ao.check || app_wants(&ao, "static")) ts[1] = run_static(&o, o.dev, &b);
    const char *names[2] = {"warpheap", "static"};
    app_print_times(2, names, ts, done);
    int rc = 0;
    if (ao.check) rc |= compare("warpheap across ranks", &a, "static", &b) != 0;
    if (ao.ppm && a.n) wd_picture(ao.ppm, &a, o.w, o.h, ranks);
    if (ao.csv) app_csv_times(ao.csv, "wator_dist", 2, names, n, done, ts, env);
    grid_free(&a);
    grid_free(&b);
    return rc;
}
