/* SPDX-License-Identifier: MIT */
/* Wa-Tor's simulation, its static-array baseline and the final-grid check,
 * shared by wh_wator (wator.c) and the tour (examples/tour): classes,
 * per-object rules, run_warpheap, run_static, run_malloc (CUDA), compare. */
#ifndef WATOR_SIM_H
#define WATOR_SIM_H

#include "warpheap/soa.h"
#include "wh_app_bench.h"

/* clang-format off */
#define CELL_FIELDS(F) F(uint64_t, agent) F(uint32_t, id) F(uint32_t, request) F(uint32_t, granted)
/* clang-format on */
WH_SOA_CLASS(Cell, 0, CELL_FIELDS)
/* clang-format off */
#define AGENT_FIELDS(F) F(uint32_t, cell) F(uint32_t, target) F(uint32_t, egg)
/* clang-format on */
WH_SOA_CLASS(Agent, 1, AGENT_FIELDS)
WH_SOA_SUBCLASS(Fish, 2, Agent, WH_SOA_NO_FIELDS)
/* clang-format off */
#define SHARK_FIELDS(F) F(uint32_t, energy)
/* clang-format on */
WH_SOA_SUBCLASS(Shark, 3, Agent, SHARK_FIELDS)

#define WT_NONE 4u
enum { WT_EMPTY = 0, WT_FISH = 1, WT_SHARK = 2 };

typedef struct wt_ctx {
    uint32_t w, h, iter, spawn, boost, start;
    uint32_t place;  /* agents of a place x place tile share blocks (0: anywhere) */
    uint64_t *cells; /* warpheap: Cell pointer of each cell */
    /* static baseline: one array per field, agents inside cells */
    uint32_t *kind, *egg, *energy, *target, *pending, *request, *granted;
} wt_ctx;

/* ---- shared rules -------------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE uint32_t wt_neighbor(const wt_ctx *c, uint32_t cell, uint32_t d) {
    return app_torus_neighbor(c->w, c->h, cell, d);
}
WH_INLINE WH_HOST_DEVICE uint64_t wt_rand(const wt_ctx *c, uint32_t phase, uint32_t cell) {
    return wh_hash64(((uint64_t)(c->iter * 8u + phase) << 32) ^ cell);
}
/* One of the set bits of mask (4 bits), chosen by r; WT_NONE if none. */
WH_INLINE WH_HOST_DEVICE uint32_t wt_pick(uint32_t mask, uint64_t r) {
    if (!mask) return WT_NONE;
    return (uint32_t)wh_nth_set_bit64(mask, (unsigned)(r % (uint64_t)wh_popc32(mask)));
}
/* Initial content of a cell: 30% fish, 5% sharks. */
WH_INLINE WH_HOST_DEVICE uint32_t wt_initial(uint32_t cell) {
    uint32_t r = (uint32_t)(wh_hash64(0xC0FFEEull + cell) % 100u);
    return r < 30u ? WT_FISH : r < 35u ? WT_SHARK : WT_EMPTY;
}
WH_INLINE WH_HOST_DEVICE uint32_t wt_initial_egg(const wt_ctx *c, uint32_t cell) {
    return (uint32_t)(wh_hash64(0xE66ull + cell) % c->spawn);
}

/* ---- warpheap ---------------------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE Cell wt_cell(const wt_ctx *c, uint32_t i) { return Cell_from(c->cells[i]); }
/* The placement key of an agent created in cell i. */
WH_INLINE WH_HOST_DEVICE uint32_t wt_key(const wt_ctx *c, uint32_t i) { return app_tile_key(i, c->w, c->place); }

WH_INLINE WH_HOST_DEVICE void cell_init(const wh_soa *s, Cell o, uint64_t i, const wt_ctx *c) {
    (void)s;
    WH_GET(Cell, o, agent) = 0;
    WH_GET(Cell, o, id) = (uint32_t)i;
    WH_GET(Cell, o, request) = 0;
    WH_GET(Cell, o, granted) = WT_NONE;
    c->cells[i] = o.p;
}
/* Runs in a do-all of Cell: creates Fish and Shark objects (other types). */
WH_INLINE WH_HOST_DEVICE void cell_populate(const wh_soa *s, Cell o, const wt_ctx *c) {
    uint32_t id = WH_GET(Cell, o, id), k = wt_initial(id);
    if (k == WT_EMPTY) return;
    uint32_t key = wt_key(c, id);
    Agent a = k == WT_FISH ? Fish_super(WH_SOA_NEW_AT(s, Fish, key)) : Shark_super(WH_SOA_NEW_AT(s, Shark, key));
    if (Agent_is_null(a)) return; /* out of memory: shows in --check */
    WH_GET(Agent, a, cell) = id;
    WH_GET(Agent, a, target) = WT_NONE;
    WH_GET(Agent, a, egg) = wt_initial_egg(c, id);
    if (k == WT_SHARK) WH_GET(Shark, Shark_from(a.p), energy) = c->start;
    WH_GET(Cell, o, agent) = a.p;
}
WH_INLINE WH_HOST_DEVICE void cell_prepare(const wh_soa *s, Cell o, const wt_ctx *c) {
    (void)s;
    (void)c;
    WH_GET(Cell, o, request) = 0;
    WH_GET(Cell, o, granted) = WT_NONE;
}
WH_INLINE WH_HOST_DEVICE void cell_decide(const wh_soa *s, Cell o, const wt_ctx *c) {
    (void)s;
    uint32_t id = WH_GET(Cell, o, id);
    WH_GET(Cell, o, granted) = wt_pick(WH_GET(Cell, o, request), wt_rand(c, 2, id));
}
/* Request a neighbour: sharks prefer fish; everyone takes free cells. */
WH_INLINE WH_HOST_DEVICE void agent_request(const wh_soa *s, Agent a, const wt_ctx *c, bool shark) {
    uint32_t me = WH_GET(Agent, a, cell), free_mask = 0, fish_mask = 0;
    for (uint32_t d = 0; d < 4; ++d) {
        uint64_t o = WH_GET(Cell, wt_cell(c, wt_neighbor(c, me, d)), agent);
        free_mask |= (uint32_t)(o == 0) << d;
        fish_mask |= (uint32_t)(o != 0 && wh_soa_ptr_type(o) == Fish_TYPE) << d;
    }
    (void)s;
    uint32_t mask = shark && fish_mask ? fish_mask : free_mask;
    uint32_t d = wt_pick(mask, wt_rand(c, shark ? 5 : 1, me));
    WH_GET(Agent, a, target) = d;
    if (d != WT_NONE)
        (void)wh_atomic_fetch_or(&WH_GET(Cell, wt_cell(c, wt_neighbor(c, me, d)), request), 1u << ((d + 2u) & 3u),
                                 WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE void fish_prepare(const wh_soa *s, Fish f, const wt_ctx *c) {
    agent_request(s, Fish_super(f), c, false);
}
WH_INLINE WH_HOST_DEVICE void shark_prepare(const wh_soa *s, Shark k, const wt_ctx *c) {
    agent_request(s, Shark_super(k), c, true);
}
/* Granted: the cell this agent moves to, else WT_NONE as a cell. */
WH_INLINE WH_HOST_DEVICE uint32_t agent_granted(Agent a, const wt_ctx *c) {
    uint32_t d = WH_GET(Agent, a, target), me = WH_GET(Agent, a, cell);
    if (d == WT_NONE) return ~0u;
    uint32_t t = wt_neighbor(c, me, d);
    return WH_GET(Cell, wt_cell(c, t), granted) == ((d + 2u) & 3u) ? t : ~0u;
}
WH_INLINE WH_HOST_DEVICE void fish_update(const wh_soa *s, Fish f, const wt_ctx *c) {
    Agent a = Fish_super(f);
    uint32_t egg = ++WH_GET(Agent, a, egg), me = WH_GET(Agent, a, cell), t = agent_granted(a, c);
    if (t == ~0u) return;
    WH_GET(Cell, wt_cell(c, t), agent) = f.p;
    WH_GET(Agent, a, cell) = t;
    uint64_t left = 0;
    if (egg >= c->spawn) {
        Fish n = WH_SOA_NEW_AT(s, Fish, wt_key(c, me));
        if (!Fish_is_null(n)) {
            WH_GET(Agent, Fish_super(n), cell) = me;
            WH_GET(Agent, Fish_super(n), target) = WT_NONE;
            WH_GET(Agent, Fish_super(n), egg) = 0;
            left = n.p;
        }
        WH_GET(Agent, a, egg) = 0;
    }
    WH_GET(Cell, wt_cell(c, me), agent) = left;
}
WH_INLINE WH_HOST_DEVICE void shark_update(const wh_soa *s, Shark k, const wt_ctx *c) {
    Agent a = Shark_super(k);
    uint32_t egg = ++WH_GET(Agent, a, egg), me = WH_GET(Agent, a, cell);
    uint32_t energy = --WH_GET(Shark, k, energy);
    if (energy == 0) { /* starved: destroys itself */
        WH_GET(Cell, wt_cell(c, me), agent) = 0;
        WH_SOA_DESTROY(s, k);
        return;
    }
    uint32_t t = agent_granted(a, c);
    if (t == ~0u) return;
    Cell tc = wt_cell(c, t);
    uint64_t prey = WH_GET(Cell, tc, agent);
    if (prey) { /* a fish: eaten (another type) */
        WH_SOA_DESTROY(s, Fish_from(prey));
        WH_GET(Shark, k, energy) = energy + c->boost;
    }
    WH_GET(Cell, tc, agent) = k.p;
    WH_GET(Agent, a, cell) = t;
    uint64_t left = 0;
    if (egg >= c->spawn) {
        Shark n = WH_SOA_NEW_AT(s, Shark, wt_key(c, me));
        if (!Shark_is_null(n)) {
            WH_GET(Agent, Shark_super(n), cell) = me;
            WH_GET(Agent, Shark_super(n), target) = WT_NONE;
            WH_GET(Agent, Shark_super(n), egg) = 0;
            WH_GET(Shark, n, energy) = c->start;
            left = n.p;
        }
        WH_GET(Agent, a, egg) = 0;
    }
    WH_GET(Cell, wt_cell(c, me), agent) = left;
}
WH_SOA_PARALLEL_NEW(Cell, cell_init, wt_ctx)
WH_SOA_PARALLEL_DO(Cell, cell_populate, wt_ctx)
WH_SOA_PARALLEL_DO(Cell, cell_prepare, wt_ctx)
WH_SOA_PARALLEL_DO(Cell, cell_decide, wt_ctx)
WH_SOA_PARALLEL_DO(Fish, fish_prepare, wt_ctx)
WH_SOA_PARALLEL_DO(Fish, fish_update, wt_ctx)
WH_SOA_PARALLEL_DO(Shark, shark_prepare, wt_ctx)
WH_SOA_PARALLEL_DO(Shark, shark_update, wt_ctx)

/* ---- static SOA baseline: agents stored in the cells ------------------------------------ */
WH_INLINE WH_HOST_DEVICE void st_init(uint64_t i, const wt_ctx *c) {
    uint32_t k = wt_initial((uint32_t)i);
    c->kind[i] = k;
    c->egg[i] = k == WT_EMPTY ? 0 : wt_initial_egg(c, (uint32_t)i);
    c->energy[i] = k == WT_SHARK ? c->start : 0;
    c->target[i] = WT_NONE;
    c->pending[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_prepare(uint64_t i, const wt_ctx *c) {
    c->request[i] = 0;
    c->granted[i] = WT_NONE;
    c->pending[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_decide(uint64_t i, const wt_ctx *c) {
    c->granted[i] = wt_pick(c->request[i], wt_rand(c, 2, (uint32_t)i));
}
WH_INLINE WH_HOST_DEVICE void st_request(uint64_t i, const wt_ctx *c, uint32_t kind) {
    if (c->kind[i] != kind) return;
    uint32_t me = (uint32_t)i, free_mask = 0, fish_mask = 0;
    c->pending[i] = 1;
    for (uint32_t d = 0; d < 4; ++d) {
        uint32_t k = c->kind[wt_neighbor(c, me, d)];
        free_mask |= (uint32_t)(k == WT_EMPTY) << d;
        fish_mask |= (uint32_t)(k == WT_FISH) << d;
    }
    bool shark = kind == WT_SHARK;
    uint32_t d = wt_pick(shark && fish_mask ? fish_mask : free_mask, wt_rand(c, shark ? 5 : 1, me));
    c->target[i] = d;
    if (d != WT_NONE) (void)wh_atomic_fetch_or(&c->request[wt_neighbor(c, me, d)], 1u << ((d + 2u) & 3u), WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE void st_fish_prepare(uint64_t i, const wt_ctx *c) { st_request(i, c, WT_FISH); }
WH_INLINE WH_HOST_DEVICE void st_shark_prepare(uint64_t i, const wt_ctx *c) { st_request(i, c, WT_SHARK); }
WH_INLINE WH_HOST_DEVICE uint32_t st_granted(uint64_t i, const wt_ctx *c) {
    uint32_t d = c->target[i];
    if (d == WT_NONE) return ~0u;
    uint32_t t = wt_neighbor(c, (uint32_t)i, d);
    return c->granted[t] == ((d + 2u) & 3u) ? t : ~0u;
}
/* Move the agent of cell i to t; a newborn (or nothing) stays in i. */
WH_INLINE WH_HOST_DEVICE void st_move(uint64_t i, uint32_t t, const wt_ctx *c, uint32_t kind, uint32_t egg,
                                      uint32_t energy) {
    c->kind[t] = kind;
    c->target[t] = WT_NONE;
    c->energy[t] = energy;
    if (egg >= c->spawn) {
        c->egg[t] = 0;
        c->egg[i] = 0;
        c->energy[i] = kind == WT_SHARK ? c->start : 0;
        c->target[i] = WT_NONE;
    } else {
        c->egg[t] = egg;
        c->kind[i] = WT_EMPTY;
        c->egg[i] = 0;
        c->energy[i] = 0;
    }
}
WH_INLINE WH_HOST_DEVICE void st_fish_update(uint64_t i, const wt_ctx *c) {
    if (!c->pending[i]) return; /* only fish present at the request phase */
    c->pending[i] = 0;
    uint32_t egg = ++c->egg[i], t = st_granted(i, c);
    if (t != ~0u) st_move(i, t, c, WT_FISH, egg, 0);
}
WH_INLINE WH_HOST_DEVICE void st_shark_update(uint64_t i, const wt_ctx *c) {
    if (!c->pending[i]) return;
    c->pending[i] = 0;
    uint32_t egg = ++c->egg[i], energy = --c->energy[i];
    if (energy == 0) {
        c->kind[i] = WT_EMPTY;
        c->egg[i] = 0;
        return;
    }
    uint32_t t = st_granted(i, c);
    if (t == ~0u) return;
    if (c->kind[t] == WT_FISH) energy += c->boost;
    st_move(i, t, c, WT_SHARK, egg, energy);
}
WH_SOA_PARALLEL_FOR(st_init_all, wt_ctx, st_init)
WH_SOA_PARALLEL_FOR(st_prepare_all, wt_ctx, st_prepare)
WH_SOA_PARALLEL_FOR(st_decide_all, wt_ctx, st_decide)
WH_SOA_PARALLEL_FOR(st_fish_prepare_all, wt_ctx, st_fish_prepare)
WH_SOA_PARALLEL_FOR(st_fish_update_all, wt_ctx, st_fish_update)
WH_SOA_PARALLEL_FOR(st_shark_prepare_all, wt_ctx, st_shark_prepare)
WH_SOA_PARALLEL_FOR(st_shark_update_all, wt_ctx, st_shark_update)

/* ---- driver ------------------------------------------------------------------------------ */
typedef struct grid {
    uint32_t *kind, *egg, *energy;
    uint64_t n;
} grid;

static void grid_alloc(grid *g, uint64_t n) {
    g->n = n;
    g->kind = (uint32_t *)calloc(n, 4);
    g->egg = (uint32_t *)calloc(n, 4);
    g->energy = (uint32_t *)calloc(n, 4);
}
static __attribute__((unused)) void grid_free(grid *g) {
    free(g->kind);
    free(g->egg);
    free(g->energy);
    memset(g, 0, sizeof *g);
}
static void grid_count(const grid *g, uint64_t *fish, uint64_t *sharks) {
    *fish = *sharks = 0;
    for (uint64_t i = 0; i < g->n; ++i) {
        *fish += g->kind[i] == WT_FISH;
        *sharks += g->kind[i] == WT_SHARK;
    }
}

typedef struct opts {
    uint32_t w, h, iters, spawn, boost, start, place;
    int dev, quiet; /* quiet: no heap line */
    size_t heap;
    const char *frag;
} opts;

/* The grid and the rules: wa-tor's defaults and options (wh_wator, wh_wator_dist). */
static __attribute__((unused)) void opts_defaults(opts *o) {
    memset(o, 0, sizeof *o);
    o->w = 2048, o->h = 2560, o->iters = 500, o->spawn = 4, o->boost = 4, o->start = 2;
}
#define WT_CLI_RULES(o)                                                                                  \
    WH_CLI_UINT("w", &(o)->w, "grid width in cells"), WH_CLI_UINT("h", &(o)->h, "grid height in cells"), \
        WH_CLI_UINT("iters", &(o)->iters, "iterations"),                                                 \
        WH_CLI_UINT("spawn", &(o)->spawn, "a fish or shark spawns when its egg timer reaches this"),     \
        WH_CLI_UINT("boost", &(o)->boost, "energy a shark gains by eating a fish"),                      \
        WH_CLI_UINT("start", &(o)->start, "energy of a new shark")

static wt_ctx ctx_for(const opts *o) {
    wt_ctx c;
    memset(&c, 0, sizeof c);
    c.w = o->w;
    c.h = o->h;
    c.spawn = o->spawn;
    c.boost = o->boost;
    c.start = o->start;
    c.place = o->place;
    return c;
}

static __attribute__((unused)) double run_warpheap(const opts *o, grid *out) {
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Cell), WH_SOA_ABSTRACT_TYPE(Agent), WH_SOA_TYPE(Fish), WH_SOA_TYPE(Shark)};
    wh_soa_config cfg = {o->heap, types, 4, o->dev != 0, 0, NULL, false};
    wh_soa soa;
    APP_TRY(wh_soa_create(&soa, &cfg));
    uint64_t n = (uint64_t)o->w * o->h;
    wt_ctx c = ctx_for(o);
    c.cells = (uint64_t *)app_alloc(n * 8, o->dev);
    APP_TRY(Cell_parallel_new_cell_init(&soa, n, c));
    APP_TRY(Cell_parallel_do_cell_populate(&soa, c));
    FILE *ff = o->frag ? fopen(o->frag, "w") : NULL;
    if (ff) fprintf(ff, "iteration,objects,slots,fragmentation\n");
    app_sync(o->dev);
    double t0 = app_now(), paused = 0;
    for (uint32_t it = 0; it < o->iters; ++it) {
        APP_TIME_CAP(it, 8, o->dev, t0 + paused)
        c.iter = it;
        APP_TRY(Cell_parallel_do_cell_prepare(&soa, c));
        APP_TRY(Fish_parallel_do_fish_prepare(&soa, c));
        APP_TRY(Cell_parallel_do_cell_decide(&soa, c));
        APP_TRY(Fish_parallel_do_fish_update(&soa, c));
        APP_TRY(Cell_parallel_do_cell_prepare(&soa, c));
        APP_TRY(Shark_parallel_do_shark_prepare(&soa, c));
        APP_TRY(Cell_parallel_do_cell_decide(&soa, c));
        APP_TRY(Shark_parallel_do_shark_update(&soa, c));
        if (ff) {             /* Fig. 12d: not timed */
            app_sync(o->dev); /* the iteration's work counts */
            double p0 = app_now();
            uint64_t objs, slots;
            APP_TRY(wh_soa_usage(&soa, &objs, &slots));
            fprintf(ff, "%u,%llu,%llu,%.5f\n", it, (unsigned long long)objs, (unsigned long long)slots,
                    slots ? 1.0 - (double)objs / (double)slots : 0.0);
            paused += app_now() - p0;
        }
    }
    app_sync(o->dev);
    double t = app_now() - t0 - paused;
    if (ff) fclose(ff);
    /* the final grid, read through a host image of the heap */
    wh_soa img;
    void *owned;
    APP_TRY(wh_soa_host_image(&soa, &img, &owned));
    grid_alloc(out, n);
    wh_soa_iter itr;
    wh_soa_iter_begin(&itr, &img, Cell_TYPE);
    for (uint64_t p; (p = wh_soa_iter_next(&itr, &img)) != 0;) {
        Cell cl = Cell_from(p);
        uint32_t id = WH_GET(Cell, cl, id);
        uint64_t a = WH_GET(Cell, cl, agent);
        if (!a || id >= n) continue;
        uint64_t ha = wh_soa_image_ptr(&soa, &img, a); /* the agent in the image */
        out->kind[id] = wh_soa_ptr_type(a) == Fish_TYPE ? WT_FISH : WT_SHARK;
        out->egg[id] = WH_GET(Agent, Agent_from(ha), egg);
        out->energy[id] = out->kind[id] == WT_SHARK ? WH_GET(Shark, Shark_from(ha), energy) : 0;
    }
    app_heap_check(&soa, "warpheap");
    if (!o->quiet) app_print_heap(&soa, 1);
    free(owned);
    app_free(c.cells, o->dev);
    APP_DESTROY(&soa);
    return t;
}

static double run_static(const opts *o, int dev, grid *out) {
    uint64_t n = (uint64_t)o->w * o->h;
    wt_ctx c = ctx_for(o);
    uint32_t **arr[7] = {&c.kind, &c.egg, &c.energy, &c.target, &c.pending, &c.request, &c.granted};
    for (int k = 0; k < 7; ++k) *arr[k] = (uint32_t *)app_alloc(n * 4, dev);
    APP_TRY(st_init_all(dev, n, c));
    app_sync(dev);
    double t0 = app_now();
    for (uint32_t it = 0; it < o->iters; ++it) {
        APP_TIME_CAP(it, 8, dev, t0)
        c.iter = it;
        APP_TRY(st_prepare_all(dev, n, c));
        APP_TRY(st_fish_prepare_all(dev, n, c));
        APP_TRY(st_decide_all(dev, n, c));
        APP_TRY(st_fish_update_all(dev, n, c));
        APP_TRY(st_prepare_all(dev, n, c));
        APP_TRY(st_shark_prepare_all(dev, n, c));
        APP_TRY(st_decide_all(dev, n, c));
        APP_TRY(st_shark_update_all(dev, n, c));
    }
    app_sync(dev);
    double t = app_now() - t0;
    grid_alloc(out, n);
    app_to_host(out->kind, c.kind, n * 4, dev);
    app_to_host(out->egg, c.egg, n * 4, dev);
    app_to_host(out->energy, c.energy, n * 4, dev);
    for (int k = 0; k < 7; ++k) app_free(*arr[k], dev);
    return t;
}

static uint64_t compare(const char *na, const grid *a, const char *nb, const grid *b) {
    uint64_t diff = 0, fa, sa, fb, sb;
    for (uint64_t i = 0; i < a->n; ++i)
        diff += a->kind[i] != b->kind[i] || a->egg[i] != b->egg[i] || a->energy[i] != b->energy[i];
    grid_count(a, &fa, &sa);
    grid_count(b, &fb, &sb);
    printf("  check: %s vs %s: %llu of %llu cells differ (fish %llu/%llu, sharks %llu/%llu) -> %s\n", na, nb,
           (unsigned long long)diff, (unsigned long long)a->n, (unsigned long long)fa, (unsigned long long)fb,
           (unsigned long long)sa, (unsigned long long)sb, diff ? "FAILED" : "identical");
    return diff;
}

/* The grid as RGB (sharks red, fish green, water blue); the caller frees it. */
static __attribute__((unused)) unsigned char *grid_rgb(const grid *g, uint32_t w, uint32_t h) {
    unsigned char *img = (unsigned char *)malloc((size_t)w * h * 3);
    if (!img) return NULL;
    for (uint64_t i = 0; i < (uint64_t)w * h; ++i) {
        unsigned char *p = img + i * 3;
        p[0] = g->kind[i] == WT_SHARK ? 230 : 10;
        p[1] = g->kind[i] == WT_FISH ? 200 : 10;
        p[2] = g->kind[i] == WT_EMPTY ? 60 : 20;
    }
    return img;
}

#endif
