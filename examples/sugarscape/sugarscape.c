/* SPDX-License-Identifier: MIT */
/* Sugarscape on the object allocator: DynaSOAr's "sugarscape" (Table 1 and
 * section 6 of the DynaSOAr paper, ECOOP 2019), an agent-based social
 * simulation: agents live on a 2D grid of cells holding sugar, eat it, age,
 * mate and die.  Classes Cell, Agent (abstract), Male and Female (subclasses
 * of Agent); agents are created (births) and destroyed (starvation, old age)
 * all the time on a fixed grid of cells (category "cellular automaton with a
 * static cell network").
 *
 * One iteration (all integer arithmetic):
 *   grow       (Cell)   sugar += 1 up to the cell's capacity; clear requests
 *   age        (Agent)  age += 1, sugar -= metabolism; dies at sugar <= 0 or
 *                       at its maximum age (destroys itself)
 *   request    (Agent)  ask for the free neighbour with the most sugar
 *   decide     (Cell)   grant one requester (counter-based random choice)
 *   move       (Agent)  granted agents move; every agent harvests its cell
 *   request    (Female) a fertile, rich female next to a male asks for a free
 *                       neighbour cell for a child
 *   decide     (Cell)
 *   mate       (Female) granted: a child (Male or Female) is created there and
 *                       receives half of the mother's sugar
 * Random choices are wh_hash64 of (iteration, phase, cell), so the result does
 * not depend on thread scheduling.
 *
 * Variants: warpheap; a static SOA baseline in which agents are fields of the
 * cells (the paper's baseline); CUDA device malloc, cells and agents malloc'd,
 * with an array of agent pointers (GPU only).  --check requires identical
 * final grids.
 *
 *   wh_sugarscape [--w=1700] [--h=1700] [--iters=10000] [--mode=all|warpheap|static|malloc] [--max-seconds=S]
 *                 [--cpu] [--check] [--ppm=FILE] [--csv=FILE] [--heap-mb=N] [--place=N]
 */
#include "warpheap/soa.h"
#include "wh_app_bench.h"

/* clang-format off */
#define CELL_FIELDS(F) F(uint64_t, agent) F(uint32_t, id) F(uint32_t, sugar) F(uint32_t, cap) \
    F(uint32_t, request) F(uint32_t, granted)
/* clang-format on */
WH_SOA_CLASS(Cell, 0, CELL_FIELDS)
/* clang-format off */
#define AGENT_FIELDS(F) F(int32_t, sugar) F(uint32_t, cell) F(uint32_t, age) F(uint32_t, max_age) \
    F(uint32_t, metabolism) F(uint32_t, target)
/* clang-format on */
WH_SOA_CLASS(Agent, 1, AGENT_FIELDS)
WH_SOA_SUBCLASS(Male, 2, Agent, WH_SOA_NO_FIELDS)
/* clang-format off */
#define FEMALE_FIELDS(F) F(uint32_t, children)
/* clang-format on */
WH_SOA_SUBCLASS(Female, 3, Agent, FEMALE_FIELDS)

#define SS_NONE       4u
#define SS_FERTILE_LO 15u
#define SS_FERTILE_HI 50u
#define SS_MATE_SUGAR 20
enum { SS_EMPTY = 0, SS_MALE = 1, SS_FEMALE = 2 };

typedef struct ss_ctx {
    uint32_t w, h, iter;
    uint32_t place;  /* agents of a place x place tile share blocks (0: anywhere) */
    uint64_t *cells; /* warpheap: Cell pointer of each cell */
    /* static baseline: cells and the agents inside them */
    uint32_t *sugar, *cap, *request, *granted;
    uint32_t *kind, *age, *max_age, *metab, *target, *pending, *children;
    int32_t *asugar;
} ss_ctx;

/* ---- shared rules --------------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE uint32_t ss_neighbor(const ss_ctx *c, uint32_t cell, uint32_t d) {
    return app_torus_neighbor(c->w, c->h, cell, d);
}
WH_INLINE WH_HOST_DEVICE uint64_t ss_rand(uint32_t iter, uint32_t phase, uint32_t cell) {
    return wh_hash64(((uint64_t)(iter * 8u + phase) << 32) ^ cell ^ 0x5AC0000000000000ull);
}
WH_INLINE WH_HOST_DEVICE uint32_t ss_pick(uint32_t mask, uint64_t r) {
    if (!mask) return SS_NONE;
    return (uint32_t)wh_nth_set_bit64(mask, (unsigned)(r % (uint64_t)wh_popc32(mask)));
}
/* Capacity: two sugar hills (as in Epstein and Axtell's landscape) plus noise. */
WH_INLINE WH_HOST_DEVICE uint32_t ss_capacity(const ss_ctx *c, uint32_t cell) {
    int64_t x = cell % c->w, y = cell / c->w, w = c->w, h = c->h;
    int64_t d1 = (x - w / 4) * (x - w / 4) + (y - h / 4) * (y - h / 4);
    int64_t d2 = (x - 3 * w / 4) * (x - 3 * w / 4) + (y - 3 * h / 4) * (y - 3 * h / 4);
    int64_t r2 = (w * w + h * h) / 32 + 1, d = d1 < d2 ? d1 : d2;
    uint32_t hill = d < r2 ? (uint32_t)(4 - 4 * d / r2) : 0u;
    return hill + (uint32_t)(wh_hash64(0xCA9ull + cell) % 3u);
}
/* A new agent's traits; kind SS_EMPTY if the cell starts without one. */
typedef struct ss_traits {
    uint32_t kind, age, max_age, metab;
    int32_t sugar;
} ss_traits;
WH_INLINE WH_HOST_DEVICE ss_traits ss_born(uint64_t r, bool initial) {
    ss_traits t;
    t.kind = (r & 1u) ? SS_FEMALE : SS_MALE;
    t.metab = 1u + (uint32_t)((r >> 8) % 3u);
    t.max_age = 60u + (uint32_t)((r >> 16) % 41u);
    t.age = initial ? (uint32_t)((r >> 24) % 30u) : 0u;
    t.sugar = initial ? 10 + (int32_t)((r >> 32) % 21u) : 0;
    return t;
}
WH_INLINE WH_HOST_DEVICE ss_traits ss_initial(uint32_t cell) {
    uint64_t r = wh_hash64(0x1417ull + cell);
    ss_traits t = ss_born(r >> 8, true);
    if (r % 100u >= 25u) t.kind = SS_EMPTY;
    return t;
}
WH_INLINE WH_HOST_DEVICE bool ss_fertile(uint32_t age, int32_t sugar) {
    return age >= SS_FERTILE_LO && age <= SS_FERTILE_HI && sugar >= SS_MATE_SUGAR;
}
/* Best free neighbour: most sugar, ties by a random choice.  free_mask and
 * sugar of the 4 neighbours in, direction (or SS_NONE) out. */
WH_INLINE WH_HOST_DEVICE uint32_t ss_best(uint32_t free_mask, const uint32_t *nsugar, uint64_t r) {
    uint32_t best = 0, mask = 0;
    for (uint32_t d = 0; d < 4; ++d) {
        if (!((free_mask >> d) & 1u)) continue;
        if (!mask || nsugar[d] > best) {
            best = nsugar[d];
            mask = 1u << d;
        } else if (nsugar[d] == best)
            mask |= 1u << d;
    }
    return ss_pick(mask, r);
}

/* ---- warpheap -------------------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE Cell ss_cell(const ss_ctx *c, uint32_t i) { return Cell_from(c->cells[i]); }

WH_INLINE WH_HOST_DEVICE Agent ss_new_agent(const wh_soa *s, const ss_ctx *c, ss_traits t, uint32_t cell) {
    uint32_t key = app_tile_key(cell, c->w, c->place);
    Agent a = t.kind == SS_MALE ? Male_super(WH_SOA_NEW_AT(s, Male, key)) : Female_super(WH_SOA_NEW_AT(s, Female, key));
    if (Agent_is_null(a)) return a;
    WH_GET(Agent, a, sugar) = t.sugar;
    WH_GET(Agent, a, cell) = cell;
    WH_GET(Agent, a, age) = t.age;
    WH_GET(Agent, a, max_age) = t.max_age;
    WH_GET(Agent, a, metabolism) = t.metab;
    WH_GET(Agent, a, target) = SS_NONE;
    if (t.kind == SS_FEMALE) WH_GET(Female, Female_from(a.p), children) = 0;
    return a;
}
WH_INLINE WH_HOST_DEVICE void cell_init(const wh_soa *s, Cell o, uint64_t i, const ss_ctx *c) {
    (void)s;
    WH_GET(Cell, o, agent) = 0;
    WH_GET(Cell, o, id) = (uint32_t)i;
    WH_GET(Cell, o, cap) = WH_GET(Cell, o, sugar) = ss_capacity(c, (uint32_t)i);
    WH_GET(Cell, o, request) = 0;
    WH_GET(Cell, o, granted) = SS_NONE;
    c->cells[i] = o.p;
}
WH_INLINE WH_HOST_DEVICE void cell_populate(const wh_soa *s, Cell o, const ss_ctx *c) {
    uint32_t id = WH_GET(Cell, o, id);
    ss_traits t = ss_initial(id);
    if (t.kind == SS_EMPTY) return;
    WH_GET(Cell, o, agent) = ss_new_agent(s, c, t, id).p; /* null when out of memory: shows in --check */
}
WH_INLINE WH_HOST_DEVICE void cell_grow(const wh_soa *s, Cell o, const ss_ctx *c) {
    (void)s;
    (void)c;
    uint32_t v = WH_GET(Cell, o, sugar), cap = WH_GET(Cell, o, cap);
    WH_GET(Cell, o, sugar) = v < cap ? v + 1u : cap;
    WH_GET(Cell, o, request) = 0;
    WH_GET(Cell, o, granted) = SS_NONE;
}
WH_INLINE WH_HOST_DEVICE void cell_clear(const wh_soa *s, Cell o, const ss_ctx *c) {
    (void)s;
    (void)c;
    WH_GET(Cell, o, request) = 0;
    WH_GET(Cell, o, granted) = SS_NONE;
}
WH_INLINE WH_HOST_DEVICE void cell_decide(const wh_soa *s, Cell o, const ss_ctx *c) {
    (void)s;
    uint32_t id = WH_GET(Cell, o, id);
    WH_GET(Cell, o, granted) = ss_pick(WH_GET(Cell, o, request), ss_rand(c->iter, 2, id));
}
WH_INLINE WH_HOST_DEVICE void agent_age(const wh_soa *s, Agent a, const ss_ctx *c) {
    uint32_t age = ++WH_GET(Agent, a, age);
    int32_t sugar = WH_GET(Agent, a, sugar) -= (int32_t)WH_GET(Agent, a, metabolism);
    WH_GET(Agent, a, target) = SS_NONE;
    if (sugar <= 0 || age >= WH_GET(Agent, a, max_age)) {
        WH_GET(Cell, ss_cell(c, WH_GET(Agent, a, cell)), agent) = 0;
        WH_SOA_DESTROY(s, a);
    }
}
WH_INLINE WH_HOST_DEVICE void agent_request(const wh_soa *s, Agent a, const ss_ctx *c) {
    (void)s;
    uint32_t me = WH_GET(Agent, a, cell), free_mask = 0, ns[4];
    for (uint32_t d = 0; d < 4; ++d) {
        Cell n = ss_cell(c, ss_neighbor(c, me, d));
        free_mask |= (uint32_t)(WH_GET(Cell, n, agent) == 0) << d;
        ns[d] = WH_GET(Cell, n, sugar);
    }
    uint32_t d = ss_best(free_mask, ns, ss_rand(c->iter, 1, me));
    WH_GET(Agent, a, target) = d;
    if (d != SS_NONE)
        (void)wh_atomic_fetch_or(&WH_GET(Cell, ss_cell(c, ss_neighbor(c, me, d)), request), 1u << ((d + 2u) & 3u),
                                 WH_RELAXED);
}
/* The granted neighbour cell, or ~0u. */
WH_INLINE WH_HOST_DEVICE uint32_t agent_granted(Agent a, const ss_ctx *c) {
    uint32_t d = WH_GET(Agent, a, target), me = WH_GET(Agent, a, cell);
    if (d == SS_NONE) return ~0u;
    uint32_t t = ss_neighbor(c, me, d);
    return WH_GET(Cell, ss_cell(c, t), granted) == ((d + 2u) & 3u) ? t : ~0u;
}
WH_INLINE WH_HOST_DEVICE void agent_move(const wh_soa *s, Agent a, const ss_ctx *c) {
    (void)s;
    uint32_t me = WH_GET(Agent, a, cell), t = agent_granted(a, c);
    WH_GET(Agent, a, target) = SS_NONE;
    if (t != ~0u) {
        WH_GET(Cell, ss_cell(c, me), agent) = 0;
        WH_GET(Cell, ss_cell(c, t), agent) = a.p;
        WH_GET(Agent, a, cell) = me = t;
    }
    Cell here = ss_cell(c, me);
    WH_GET(Agent, a, sugar) += (int32_t)WH_GET(Cell, here, sugar);
    WH_GET(Cell, here, sugar) = 0;
}
WH_INLINE WH_HOST_DEVICE void female_request(const wh_soa *s, Female f, const ss_ctx *c) {
    Agent a = Female_super(f);
    uint32_t me = WH_GET(Agent, a, cell), free_mask = 0, male = 0;
    if (!ss_fertile(WH_GET(Agent, a, age), WH_GET(Agent, a, sugar))) return;
    for (uint32_t d = 0; d < 4; ++d) {
        uint64_t o = WH_GET(Cell, ss_cell(c, ss_neighbor(c, me, d)), agent);
        free_mask |= (uint32_t)(o == 0) << d;
        male |= (uint32_t)WH_SOA_IS(s, o, Male);
    }
    if (!male) return;
    uint32_t d = ss_pick(free_mask, ss_rand(c->iter, 5, me));
    WH_GET(Agent, a, target) = d;
    if (d != SS_NONE)
        (void)wh_atomic_fetch_or(&WH_GET(Cell, ss_cell(c, ss_neighbor(c, me, d)), request), 1u << ((d + 2u) & 3u),
                                 WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE void female_mate(const wh_soa *s, Female f, const ss_ctx *c) {
    Agent a = Female_super(f);
    uint32_t t = agent_granted(a, c);
    WH_GET(Agent, a, target) = SS_NONE;
    if (t == ~0u) return;
    ss_traits k = ss_born(ss_rand(c->iter, 6, t), false);
    int32_t half = WH_GET(Agent, a, sugar) / 2;
    k.sugar = half;
    Agent child = ss_new_agent(s, c, k, t);
    if (Agent_is_null(child)) return; /* out of memory: shows in --check */
    WH_GET(Agent, a, sugar) -= half;
    WH_GET(Female, f, children) += 1u;
    WH_GET(Cell, ss_cell(c, t), agent) = child.p;
}
WH_SOA_PARALLEL_NEW(Cell, cell_init, ss_ctx)
WH_SOA_PARALLEL_DO(Cell, cell_populate, ss_ctx)
WH_SOA_PARALLEL_DO(Cell, cell_grow, ss_ctx)
WH_SOA_PARALLEL_DO(Cell, cell_clear, ss_ctx)
WH_SOA_PARALLEL_DO(Cell, cell_decide, ss_ctx)
WH_SOA_PARALLEL_DO(Agent, agent_age, ss_ctx)
WH_SOA_PARALLEL_DO(Agent, agent_request, ss_ctx)
WH_SOA_PARALLEL_DO(Agent, agent_move, ss_ctx)
WH_SOA_PARALLEL_DO(Female, female_request, ss_ctx)
WH_SOA_PARALLEL_DO(Female, female_mate, ss_ctx)

/* ---- static SOA baseline: agents are fields of the cells ------------------------------ */
WH_INLINE WH_HOST_DEVICE void st_set_agent(const ss_ctx *c, uint64_t i, ss_traits t) {
    c->kind[i] = t.kind;
    c->asugar[i] = t.sugar;
    c->age[i] = t.age;
    c->max_age[i] = t.max_age;
    c->metab[i] = t.metab;
    c->target[i] = SS_NONE;
    c->children[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_init(uint64_t i, const ss_ctx *c) {
    c->cap[i] = c->sugar[i] = ss_capacity(c, (uint32_t)i);
    c->request[i] = 0;
    c->granted[i] = SS_NONE;
    c->pending[i] = 0;
    ss_traits t = ss_initial((uint32_t)i);
    st_set_agent(c, i, t);
    if (t.kind == SS_EMPTY) c->asugar[i] = 0, c->age[i] = c->max_age[i] = c->metab[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_grow(uint64_t i, const ss_ctx *c) {
    uint32_t v = c->sugar[i], cap = c->cap[i];
    c->sugar[i] = v < cap ? v + 1u : cap;
    c->request[i] = 0;
    c->granted[i] = SS_NONE;
    c->pending[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_clear(uint64_t i, const ss_ctx *c) {
    c->request[i] = 0;
    c->granted[i] = SS_NONE;
    c->pending[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_decide(uint64_t i, const ss_ctx *c) {
    c->granted[i] = ss_pick(c->request[i], ss_rand(c->iter, 2, (uint32_t)i));
}
WH_INLINE WH_HOST_DEVICE void st_empty(uint64_t i, const ss_ctx *c) {
    c->kind[i] = SS_EMPTY;
    c->asugar[i] = 0;
    c->age[i] = c->max_age[i] = c->metab[i] = c->children[i] = 0;
    c->target[i] = SS_NONE;
}
WH_INLINE WH_HOST_DEVICE void st_age(uint64_t i, const ss_ctx *c) {
    if (c->kind[i] == SS_EMPTY) return;
    uint32_t age = ++c->age[i];
    int32_t sugar = c->asugar[i] -= (int32_t)c->metab[i];
    c->target[i] = SS_NONE;
    if (sugar <= 0 || age >= c->max_age[i]) st_empty(i, c);
}
WH_INLINE WH_HOST_DEVICE void st_request(uint64_t i, const ss_ctx *c) {
    if (c->kind[i] == SS_EMPTY) return;
    uint32_t me = (uint32_t)i, free_mask = 0, ns[4];
    c->pending[i] = 1;
    for (uint32_t d = 0; d < 4; ++d) {
        uint32_t n = ss_neighbor(c, me, d);
        free_mask |= (uint32_t)(c->kind[n] == SS_EMPTY) << d;
        ns[d] = c->sugar[n];
    }
    uint32_t d = ss_best(free_mask, ns, ss_rand(c->iter, 1, me));
    c->target[i] = d;
    if (d != SS_NONE) (void)wh_atomic_fetch_or(&c->request[ss_neighbor(c, me, d)], 1u << ((d + 2u) & 3u), WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE uint32_t st_granted(uint64_t i, const ss_ctx *c) {
    uint32_t d = c->target[i];
    if (d == SS_NONE) return ~0u;
    uint32_t t = ss_neighbor(c, (uint32_t)i, d);
    return c->granted[t] == ((d + 2u) & 3u) ? t : ~0u;
}
WH_INLINE WH_HOST_DEVICE void st_move(uint64_t i, const ss_ctx *c) {
    if (!c->pending[i]) return; /* only agents present at the request */
    c->pending[i] = 0;
    uint32_t t = st_granted(i, c);
    uint64_t here = i;
    if (t != ~0u) {
        c->kind[t] = c->kind[i];
        c->asugar[t] = c->asugar[i];
        c->age[t] = c->age[i];
        c->max_age[t] = c->max_age[i];
        c->metab[t] = c->metab[i];
        c->children[t] = c->children[i];
        st_empty(i, c);
        here = t;
    }
    c->target[here] = SS_NONE;
    c->asugar[here] += (int32_t)c->sugar[here];
    c->sugar[here] = 0;
}
WH_INLINE WH_HOST_DEVICE void st_female_request(uint64_t i, const ss_ctx *c) {
    if (c->kind[i] != SS_FEMALE || !ss_fertile(c->age[i], c->asugar[i])) return;
    uint32_t me = (uint32_t)i, free_mask = 0, male = 0;
    for (uint32_t d = 0; d < 4; ++d) {
        uint32_t k = c->kind[ss_neighbor(c, me, d)];
        free_mask |= (uint32_t)(k == SS_EMPTY) << d;
        male |= (uint32_t)(k == SS_MALE);
    }
    if (!male) return;
    c->pending[i] = 1;
    uint32_t d = ss_pick(free_mask, ss_rand(c->iter, 5, me));
    c->target[i] = d;
    if (d != SS_NONE) (void)wh_atomic_fetch_or(&c->request[ss_neighbor(c, me, d)], 1u << ((d + 2u) & 3u), WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE void st_mate(uint64_t i, const ss_ctx *c) {
    if (!c->pending[i]) return;
    c->pending[i] = 0;
    uint32_t t = st_granted(i, c);
    c->target[i] = SS_NONE;
    if (t == ~0u) return;
    ss_traits k = ss_born(ss_rand(c->iter, 6, t), false);
    int32_t half = c->asugar[i] / 2;
    k.sugar = half;
    st_set_agent(c, t, k);
    c->asugar[i] -= half;
    c->children[i] += 1u;
}
WH_SOA_PARALLEL_FOR(st_init_all, ss_ctx, st_init)
WH_SOA_PARALLEL_FOR(st_grow_all, ss_ctx, st_grow)
WH_SOA_PARALLEL_FOR(st_clear_all, ss_ctx, st_clear)
WH_SOA_PARALLEL_FOR(st_decide_all, ss_ctx, st_decide)
WH_SOA_PARALLEL_FOR(st_age_all, ss_ctx, st_age)
WH_SOA_PARALLEL_FOR(st_request_all, ss_ctx, st_request)
WH_SOA_PARALLEL_FOR(st_move_all, ss_ctx, st_move)
WH_SOA_PARALLEL_FOR(st_female_request_all, ss_ctx, st_female_request)
WH_SOA_PARALLEL_FOR(st_mate_all, ss_ctx, st_mate)

/* ---- driver --------------------------------------------------------------------------- */
#define SS_NF 7 /* per cell: kind, agent sugar, age, max_age, metabolism, children, cell sugar */
typedef struct grid {
    int64_t *v;
    uint64_t n;
} grid;

static ss_ctx ctx_for(uint32_t w, uint32_t h) {
    ss_ctx c;
    memset(&c, 0, sizeof c);
    c.w = w;
    c.h = h;
    return c;
}

static double run_warpheap(uint32_t w, uint32_t h, uint32_t iters, uint32_t place, size_t heap, int dev, grid *out,
                           size_t *peak) {
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Cell), WH_SOA_ABSTRACT_TYPE(Agent), WH_SOA_TYPE(Male), WH_SOA_TYPE(Female)};
    wh_soa_config cfg = {heap, types, 4, dev != 0, 0, NULL, false};
    wh_soa soa;
    APP_TRY(wh_soa_create(&soa, &cfg));
    uint64_t n = (uint64_t)w * h;
    ss_ctx c = ctx_for(w, h);
    c.place = place;
    c.cells = (uint64_t *)app_alloc(n * 8, dev);
    APP_TRY(Cell_parallel_new_cell_init(&soa, n, c));
    APP_TRY(Cell_parallel_do_cell_populate(&soa, c));
    *peak = app_heap_used(&soa);
    uint32_t every = iters / 20u + 1u < 512u ? iters / 20u + 1u : 512u; /* peak-memory samples (each copies the heap) */
    app_sync(dev);
    double t0 = app_now(), paused = 0;
    for (uint32_t it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 8, dev, t0 + paused)
        c.iter = it;
        APP_TRY(Cell_parallel_do_cell_grow(&soa, c));
        APP_TRY(Agent_parallel_do_agent_age(&soa, c));
        APP_TRY(Agent_parallel_do_agent_request(&soa, c));
        APP_TRY(Cell_parallel_do_cell_decide(&soa, c));
        APP_TRY(Agent_parallel_do_agent_move(&soa, c));
        APP_TRY(Cell_parallel_do_cell_clear(&soa, c));
        APP_TRY(Female_parallel_do_female_request(&soa, c));
        APP_TRY(Cell_parallel_do_cell_decide(&soa, c));
        APP_TRY(Female_parallel_do_female_mate(&soa, c));
        if (it % every == 0) app_sample_peak(&soa, peak, &paused); /* peak memory: sampled, not timed */
    }
    app_sync(dev);
    double t = app_now() - t0 - paused;
    app_heap_check(&soa, "warpheap");
    wh_soa img;
    void *owned;
    APP_TRY(wh_soa_host_image(&soa, &img, &owned));
    out->n = n;
    out->v = (int64_t *)calloc(n * SS_NF, sizeof(int64_t));
    wh_soa_iter itr;
    wh_soa_iter_begin(&itr, &img, Cell_TYPE);
    for (uint64_t p; (p = wh_soa_iter_next(&itr, &img)) != 0;) {
        Cell cl = Cell_from(p);
        uint32_t id = WH_GET(Cell, cl, id);
        uint64_t ag = WH_GET(Cell, cl, agent);
        int64_t *v = out->v + (uint64_t)id * SS_NF;
        v[6] = WH_GET(Cell, cl, sugar);
        if (!ag) continue;
        uint64_t ha =
            (ag & ~WH_SOA_ADDR_MASK) |
            (uint64_t)(uintptr_t)((uint8_t *)img.mem + ((uint8_t *)wh_soa_ptr_block(ag) - (uint8_t *)soa.mem)) |
            wh_soa_ptr_slot(ag);
        Agent a = Agent_from(ha);
        v[0] = wh_soa_ptr_type(ag) == Male_TYPE ? SS_MALE : SS_FEMALE;
        v[1] = WH_GET(Agent, a, sugar);
        v[2] = WH_GET(Agent, a, age);
        v[3] = WH_GET(Agent, a, max_age);
        v[4] = WH_GET(Agent, a, metabolism);
        v[5] = v[0] == SS_FEMALE ? WH_GET(Female, Female_from(ha), children) : 0;
    }
    app_print_heap(&soa, 1);
    free(owned);
    app_free(c.cells, dev);
    APP_DESTROY(&soa);
    return t;
}

static double run_static(uint32_t w, uint32_t h, uint32_t iters, int dev, grid *out, size_t *peak) {
    uint64_t n = (uint64_t)w * h;
    ss_ctx c = ctx_for(w, h);
    uint32_t **arr[11] = {&c.sugar,   &c.cap,   &c.request, &c.granted, &c.kind,    &c.age,
                          &c.max_age, &c.metab, &c.target,  &c.pending, &c.children};
    for (int k = 0; k < 11; ++k) *arr[k] = (uint32_t *)app_alloc(n * 4, dev);
    c.asugar = (int32_t *)app_alloc(n * 4, dev);
    *peak = n * 48;
    APP_TRY(st_init_all(dev, n, c));
    app_sync(dev);
    double t0 = app_now();
    for (uint32_t it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 8, dev, t0)
        c.iter = it;
        APP_TRY(st_grow_all(dev, n, c));
        APP_TRY(st_age_all(dev, n, c));
        APP_TRY(st_request_all(dev, n, c));
        APP_TRY(st_decide_all(dev, n, c));
        APP_TRY(st_move_all(dev, n, c));
        APP_TRY(st_clear_all(dev, n, c));
        APP_TRY(st_female_request_all(dev, n, c));
        APP_TRY(st_decide_all(dev, n, c));
        APP_TRY(st_mate_all(dev, n, c));
    }
    app_sync(dev);
    double t = app_now() - t0;
    out->n = n;
    out->v = (int64_t *)calloc(n * SS_NF, sizeof(int64_t));
    uint32_t *tmp = (uint32_t *)malloc(n * 4);
    uint32_t *src[SS_NF] = {c.kind, (uint32_t *)c.asugar, c.age, c.max_age, c.metab, c.children, c.sugar};
    for (int k = 0; k < SS_NF; ++k) {
        app_to_host(tmp, src[k], n * 4, dev);
        for (uint64_t i = 0; i < n; ++i) out->v[i * SS_NF + k] = k == 1 ? (int64_t)(int32_t)tmp[i] : (int64_t)tmp[i];
    }
    for (uint64_t i = 0; i < n; ++i) /* empty cells: only the sugar counts */
        if (out->v[i * SS_NF] == SS_EMPTY) memset(out->v + i * SS_NF, 0, 6 * sizeof(int64_t));
    free(tmp);
    for (int k = 0; k < 11; ++k) app_free(*arr[k], dev);
    app_free(c.asugar, dev);
    return t;
}

/* ---- CUDA device malloc (GPU only): the paper's "other allocators" ---------------------- *
 * Every object is malloc'd, as in the paper's comparison: cells (a struct per
 * cell, reached through an array of cell pointers, as warpheap's Cell objects
 * are) and agents (array of structures; the cell holds the agent pointer).
 * The do-alls run over an array of agent pointers, compacted after the ageing
 * phase and after mating (wh_app_plist.h).  Same rules as above, so --check
 * compares it with the baseline. */
#if defined(__CUDACC__)
#include "wh_app_plist.h"

/* dead first: app_plist marks it */
typedef struct sm_agent {
    uint32_t dead, kind, cell, age, max_age, metab, target, children;
    int32_t sugar;
} sm_agent;
typedef struct sm_cell {
    sm_agent *agent;
    uint32_t sugar, cap, request, granted;
} sm_cell;
typedef struct sm_ctx {
    ss_ctx c;       /* w, h, iter */
    sm_cell **cell; /* per cell index */
    app_plist agents;
    unsigned long long *fails;
} sm_ctx;
#define SM_I() uint32_t i = blockIdx.x * blockDim.x + threadIdx.x
static __device__ sm_agent *sm_new(sm_ctx *m, ss_traits t, uint32_t cell) {
    sm_agent *a = (sm_agent *)app_dev_malloc(sizeof(sm_agent), m->fails);
    if (!a) return NULL;
    a->kind = t.kind;
    a->cell = cell;
    a->age = t.age;
    a->max_age = t.max_age;
    a->metab = t.metab;
    a->target = SS_NONE;
    a->children = 0;
    a->dead = 0;
    a->sugar = t.sugar;
    app_plist_add(&m->agents, a, m->fails);
    return a;
}
static __global__ void sm_new_cells(sm_ctx m, uint64_t n) {
    SM_I();
    if (i >= n) return;
    sm_cell *c = (sm_cell *)app_dev_malloc(sizeof(sm_cell), m.fails);
    m.cell[i] = c;
    if (!c) return;
    c->cap = c->sugar = ss_capacity(&m.c, i);
    c->request = 0;
    c->granted = SS_NONE;
    c->agent = NULL;
}
static __global__ void sm_init(sm_ctx m, uint64_t n) {
    SM_I();
    if (i >= n) return;
    ss_traits t = ss_initial(i);
    if (t.kind != SS_EMPTY) m.cell[i]->agent = sm_new(&m, t, i);
}
static __global__ void sm_grow(sm_ctx m, uint64_t n, bool grow) {
    SM_I();
    if (i >= n) return;
    sm_cell *c = m.cell[i];
    if (grow) {
        uint32_t v = c->sugar, cap = c->cap;
        c->sugar = v < cap ? v + 1u : cap;
    }
    c->request = 0;
    c->granted = SS_NONE;
}
static __global__ void sm_decide(sm_ctx m, uint64_t n) {
    SM_I();
    if (i < n) m.cell[i]->granted = ss_pick(m.cell[i]->request, ss_rand(m.c.iter, 2, i));
}
static __global__ void sm_age(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.agents)) return;
    sm_agent *a = (sm_agent *)m.agents.items[i];
    uint32_t age = ++a->age;
    int32_t sugar = a->sugar -= (int32_t)a->metab;
    a->target = SS_NONE;
    if (sugar <= 0 || age >= a->max_age) {
        m.cell[a->cell]->agent = NULL;
        app_plist_kill(a);
    }
}
static __device__ void sm_bid(sm_ctx *m, sm_agent *a, uint32_t d) {
    a->target = d;
    if (d != SS_NONE) atomicOr(&m->cell[ss_neighbor(&m->c, a->cell, d)]->request, 1u << ((d + 2u) & 3u));
}
static __global__ void sm_request(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.agents)) return;
    sm_agent *a = (sm_agent *)m.agents.items[i];
    uint32_t free_mask = 0, ns[4];
    for (uint32_t d = 0; d < 4; ++d) {
        const sm_cell *nb = m.cell[ss_neighbor(&m.c, a->cell, d)];
        free_mask |= (uint32_t)(nb->agent == NULL) << d;
        ns[d] = nb->sugar;
    }
    sm_bid(&m, a, ss_best(free_mask, ns, ss_rand(m.c.iter, 1, a->cell)));
}
static __device__ uint32_t sm_granted(const sm_ctx *m, const sm_agent *a) {
    if (a->target == SS_NONE) return ~0u;
    uint32_t t = ss_neighbor(&m->c, a->cell, a->target);
    return m->cell[t]->granted == ((a->target + 2u) & 3u) ? t : ~0u;
}
static __global__ void sm_move(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.agents)) return;
    sm_agent *a = (sm_agent *)m.agents.items[i];
    uint32_t t = sm_granted(&m, a);
    a->target = SS_NONE;
    if (t != ~0u) {
        m.cell[a->cell]->agent = NULL;
        m.cell[t]->agent = a;
        a->cell = t;
    }
    sm_cell *c = m.cell[a->cell];
    a->sugar += (int32_t)c->sugar;
    c->sugar = 0;
}
static __global__ void sm_female_request(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.agents)) return;
    sm_agent *a = (sm_agent *)m.agents.items[i];
    if (a->kind != SS_FEMALE || !ss_fertile(a->age, a->sugar)) return;
    uint32_t free_mask = 0, male = 0;
    for (uint32_t d = 0; d < 4; ++d) {
        const sm_agent *o = m.cell[ss_neighbor(&m.c, a->cell, d)]->agent;
        free_mask |= (uint32_t)(o == NULL) << d;
        male |= (uint32_t)(o != NULL && o->kind == SS_MALE);
    }
    if (male) sm_bid(&m, a, ss_pick(free_mask, ss_rand(m.c.iter, 5, a->cell)));
}
static __global__ void sm_mate(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.agents)) return;
    sm_agent *a = (sm_agent *)m.agents.items[i];
    if (a->kind != SS_FEMALE) return;
    uint32_t t = sm_granted(&m, a);
    a->target = SS_NONE;
    if (t == ~0u) return;
    ss_traits k = ss_born(ss_rand(m.c.iter, 6, t), false);
    int32_t half = a->sugar / 2;
    k.sugar = half;
    sm_agent *child = sm_new(&m, k, t);
    if (!child) return;
    a->sugar -= half;
    a->children += 1u;
    m.cell[t]->agent = child;
}
static __global__ void sm_export(sm_ctx m, uint64_t n, int64_t *out) {
    SM_I();
    if (i >= n) return;
    const sm_agent *a = m.cell[i]->agent;
    int64_t *v = out + (uint64_t)i * SS_NF;
    v[0] = a ? a->kind : SS_EMPTY;
    v[1] = a ? a->sugar : 0;
    v[2] = a ? a->age : 0;
    v[3] = a ? a->max_age : 0;
    v[4] = a ? a->metab : 0;
    v[5] = a && a->kind == SS_FEMALE ? a->children : 0;
    v[6] = m.cell[i]->sugar;
}
static __global__ void sm_free_cells(sm_ctx m, uint64_t n) {
    SM_I();
    if (i < n) free(m.cell[i]);
}
static double run_malloc(uint32_t w, uint32_t h, uint32_t iters, grid *out, size_t *peak) {
    uint64_t n = (uint64_t)w * h;
    size_t heap = budget_heap(n * 8, (size_t)n * 128 + ((size_t)64 << 20)); /* the cell pointers; not the do-all list */
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
    sm_ctx m;
    memset(&m, 0, sizeof m);
    m.c = ctx_for(w, h);
    WH_CUDA_OR_DIE(cudaMalloc(&m.cell, n * 8));
    app_plist_alloc(&m.agents, (uint32_t)n);
    WH_CUDA_OR_DIE(cudaMalloc(&m.fails, 8));
    WH_CUDA_OR_DIE(cudaMemset(m.fails, 0, 8));
    *peak = heap + n * 32; /* reserved: malloc heap, cell pointers, list arrays */
    unsigned g = (unsigned)((n + 255) / 256);
    sm_new_cells<<<g, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    if (app_dev_count(m.fails)) { /* no grid: nothing more can run */
        printf("  malloc: the cells do not fit the heap\n");
        exit(3);
    }
    sm_init<<<g, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    app_plist_settle(&m.agents);
    int dev = 1;
    app_sync(dev);
    double t0 = app_now();
    for (uint32_t it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 8, dev, t0)
        m.c.iter = it;
        sm_grow<<<g, 256>>>(m, n, true);
        WH_LAUNCH_OR_DIE();
        sm_age<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        app_plist_settle(&m.agents); /* the dead leave the array */
        sm_request<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        sm_decide<<<g, 256>>>(m, n);
        WH_LAUNCH_OR_DIE();
        sm_move<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        sm_grow<<<g, 256>>>(m, n, false);
        WH_LAUNCH_OR_DIE();
        sm_female_request<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        sm_decide<<<g, 256>>>(m, n);
        WH_LAUNCH_OR_DIE();
        sm_mate<<<g, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        app_plist_settle(&m.agents); /* the newborn join it */
    }
    app_sync(dev);
    double t = app_now() - t0;
    unsigned long long fails = app_dev_count(m.fails);
    if (fails) printf("  malloc: %llu failed allocations\n", fails);
    int64_t *d_out;
    WH_CUDA_OR_DIE(cudaMalloc(&d_out, n * SS_NF * 8));
    sm_export<<<g, 256>>>(m, n, d_out);
    WH_LAUNCH_OR_DIE();
    out->n = n;
    out->v = (int64_t *)calloc(n * SS_NF, sizeof(int64_t));
    app_to_host(out->v, d_out, n * SS_NF * 8, 1);
    WH_CUDA_OR_DIE(cudaFree(d_out));
    app_plist_free_items<<<g, 256>>>(m.agents);
    WH_LAUNCH_OR_DIE();
    sm_free_cells<<<g, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    app_sync(dev);
    app_plist_free(&m.agents);
    WH_CUDA_OR_DIE(cudaFree(m.cell));
    WH_CUDA_OR_DIE(cudaFree(m.fails));
    return t;
}
#endif

static uint64_t compare(const char *na, const grid *a, const char *nb, const grid *b) {
    uint64_t diff = 0, pa = 0, pb = 0;
    for (uint64_t i = 0; i < a->n; ++i) {
        int bad = 0;
        for (int k = 0; k < SS_NF; ++k) bad |= a->v[i * SS_NF + k] != b->v[i * SS_NF + k];
        diff += bad;
        pa += a->v[i * SS_NF] != SS_EMPTY;
        pb += b->v[i * SS_NF] != SS_EMPTY;
    }
    printf("  check: %s vs %s: %llu of %llu cells differ (agents %llu / %llu) -> %s\n", na, nb,
           (unsigned long long)diff, (unsigned long long)a->n, (unsigned long long)pa, (unsigned long long)pb,
           diff ? "FAILED" : "identical");
    return diff;
}

static void write_picture(const char *path, const grid *g, uint32_t w, uint32_t h) {
    unsigned char *img = (unsigned char *)malloc((size_t)w * h * 3);
    for (uint64_t i = 0; i < (uint64_t)w * h; ++i) {
        const int64_t *v = g->v + i * SS_NF;
        unsigned char *p = img + i * 3;
        unsigned char s = (unsigned char)(v[6] > 6 ? 180 : v[6] * 30);
        p[0] = v[0] == SS_MALE ? 40 : v[0] == SS_FEMALE ? 240 : s;
        p[1] = v[0] == SS_MALE ? 120 : v[0] == SS_FEMALE ? 60 : s;
        p[2] = v[0] == SS_MALE ? 255 : v[0] == SS_FEMALE ? 120 : 0;
    }
    app_write_ppm(path, (int)w, (int)h, img);
    free(img);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* a run killed by a time limit keeps its log */
    uint32_t w = 1700, h = 1700;
    uint32_t iters = 10000;
    app_opts o = app_opts_new();
    wh_cli_opt cli[] = {WH_CLI_UINT("w", &w, "grid width in cells"),
                        WH_CLI_UINT("h", &h, "grid height in cells"),
                        WH_CLI_UINT("iters", &iters, "iterations"),
                        APP_CLI_COMMON(&o, "all|warpheap|static|malloc"),
                        APP_CLI_LIMITS(&o),
                        APP_CLI_PLACE(&o, "agents born in a N x N tile of cells"),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli,
                 "DynaSOAr's sugarscape benchmark (agents that harvest, age and breed) on the object allocator.");
    app_opts_done(&o);
    int dev = o.dev, check = o.check;
    uint64_t n = (uint64_t)w * h;
    g_malloc_heap = app_heap_opt(&o, 0);
    size_t heap = g_malloc_heap ? budget_heap(n * 8, 0) /* the Cell pointer array */
                                : (size_t)(n * 96 + ((uint64_t)16 << 20));
    if (w < 3 || h < 3 || n > 0xFFFFFFF0ull) {
        fprintf(stderr, "sugarscape: bad size\n");
        return 2;
    }
    char env[512];
    app_env(env, sizeof env, dev);
    printf("sugarscape: %ux%u cells, %u iterations, heap %zu MiB, %s\n", w, h, iters, heap >> 20, env);
    grid a = {0, 0}, b = {0, 0}, mm = {0, 0};
    app_runs r = app_runs_new(iters);
    app_time_cap_opt(&o);
    if (app_wants(&o, "warpheap")) app_ran(&r, 0, run_warpheap(w, h, iters, o.place, heap, dev, &a, &r.peak[0]));
    if (check || app_wants(&o, "static")) app_ran(&r, 1, run_static(w, h, iters, dev, &b, &r.peak[1]));
#if defined(__CUDACC__)
    if (dev && app_wants(&o, "malloc")) app_ran(&r, 2, run_malloc(w, h, iters, &mm, &r.peak[2]));
#endif
    const char *names[3] = {"warpheap", "static", "malloc"};
    app_print_runs(&r, 3, names, "iteration");
    int rc = 0;
    if (check && r.ts[0] >= 0) rc |= compare("warpheap", &a, "static", &b) != 0;
    if (check && mm.v) rc |= compare("malloc", &mm, "static", &b) != 0;
    /* the picture shows the first variant that ran (none: no picture) */
    const grid *shown = a.v ? &a : b.v ? &b : mm.v ? &mm : NULL;
    if (o.ppm && shown) write_picture(o.ppm, shown, w, h);
    if (o.csv) app_csv_runs(o.csv, "sugarscape", &r, 3, names, n, env);
    free(a.v);
    free(b.v);
    free(mm.v);
    return rc;
}
