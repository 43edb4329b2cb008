/* SPDX-License-Identifier: MIT */
/* Traffic flow on the object allocator: DynaSOAr's "traffic" benchmark
 * (Table 1 and section 6 of the DynaSOAr paper, ECOOP 2019), the
 * Nagel-Schreckenberg cellular automaton on a street network: streets are
 * chains of cells (at most one car per cell) between intersections; cars are
 * created at intersections and destroyed when their trip is over (category
 * "cellular automaton with a static cell network").  Classes Cell and Car.
 *
 * Network: the intersections form a torus grid (--isects of them); each one
 * has two outgoing streets (east, south) of 4..19 cells and two incoming ones
 * (from west, north).  A traffic light at each intersection lets one incoming
 * street at a time enter.  One iteration:
 *   plan  (Car)  Nagel-Schreckenberg: accelerate by one up to --vmax, brake to
 *                the free cells ahead (red light = obstacle), slow down by one
 *                with probability 20%; record the destination cell
 *   move  (Car)  leave the old cell, take the new one; a car whose trip is
 *                over is destroyed
 *   spawn (Cell) a free intersection creates a car with probability --spawn %
 * Cars take the east or south street at an intersection by a hash of (car,
 * intersection); every random number is wh_hash64 of (seed, car or cell,
 * iteration), so the result does not depend on thread scheduling.  Plans read
 * the occupancy before any car moves, destinations are free cells, and only
 * one street feeds each cell behind an intersection per light phase, so no two
 * cars ever take the same cell.
 *
 * Variants: warpheap; a static SOA baseline with the cars stored in the cell
 * arrays (the paper's baseline); CUDA device malloc, cells and cars malloc'd,
 * with an array of car pointers (GPU only).  --check requires identical final
 * networks.
 *
 *   wh_traffic [--isects=17500] [--iters=12000] [--vmax=10] [--spawn=3] [--max-seconds=S] [--place=N]
 *              [--mode=all|warpheap|static|malloc] [--cpu] [--check] [--ppm=FILE] [--csv=FILE] [--heap-mb=N]
 */
#include "warpheap/soa.h"
#include "wh_app_bench.h"

#include <math.h>

/* clang-format off */
#define CELL_FIELDS(F) F(uint64_t, car) F(uint32_t, id) F(uint32_t, next0) F(uint32_t, next1) \
    F(uint32_t, light) F(uint32_t, isect)
/* clang-format on */
WH_SOA_CLASS(Cell, 0, CELL_FIELDS)
/* clang-format off */
#define CAR_FIELDS(F) F(uint64_t, cid) F(uint32_t, cell) F(uint32_t, v) F(int32_t, trip) F(uint32_t, dest)
/* clang-format on */
WH_SOA_CLASS(Car, 1, CAR_FIELDS)

#define TR_NONE   0xFFFFFFFFu
#define TR_MAXV   16u
#define TR_PERIOD 8u

typedef struct tr_ctx {
    uint32_t ncells, iter, vmax, spawn;
    uint32_t place; /* cars created in a run of `place` cells share blocks (0: anywhere) */
    /* topology (static, both variants read it through their own cells) */
    const uint32_t *next0, *next1, *light, *isect;
    uint64_t *cells; /* warpheap: Cell pointer of each cell */
    /* static baseline: cars inside the cells */
    uint32_t *occ, *v, *dest, *pending;
    int32_t *trip;
    uint64_t *cid;
} tr_ctx;

/* ---- shared rules --------------------------------------------------------------- */
/* Green: the incoming slot allowed into intersection x at this iteration. */
WH_INLINE WH_HOST_DEVICE uint32_t tr_green(uint32_t iter, uint32_t x) { return ((iter + x) / TR_PERIOD) & 1u; }
WH_INLINE WH_HOST_DEVICE uint32_t tr_choose(uint64_t cid, uint32_t at, uint32_t n0, uint32_t n1) {
    if (n1 == TR_NONE) return n0;
    return (wh_hash64(cid * 0x9E3779B97F4A7C15ull + at) & 1u) ? n1 : n0;
}
WH_INLINE WH_HOST_DEVICE bool tr_slow(uint64_t cid, uint32_t iter) {
    return wh_hash64(cid ^ ((uint64_t)iter << 40) ^ 0x51070ull) % 100u < 20u;
}
WH_INLINE WH_HOST_DEVICE bool tr_spawns(uint32_t iter, uint32_t cell, uint32_t pct) {
    return wh_hash64(((uint64_t)iter << 32) ^ cell ^ 0x5EA4000000000000ull) % 100u < pct;
}
WH_INLINE WH_HOST_DEVICE int32_t tr_trip(uint64_t cid) { return 40 + (int32_t)(wh_hash64(cid + 77u) % 400u); }

/* Nagel-Schreckenberg for one car: its cell, speed and id in; new speed and
 * destination out.  occupied(cell) and the topology through the callbacks
 * below are the only inputs, so both variants share it. */
#define TR_PLAN(c, cell0, v0, cid, occupied, NEXT0, NEXT1, LIGHT, ISECT, vout, dout)        \
    do {                                                                                    \
        uint32_t want_ = (v0) + 1u < (c)->vmax ? (v0) + 1u : (c)->vmax, path_[TR_MAXV + 1]; \
        uint32_t pos_ = (cell0), d_ = 0;                                                    \
        path_[0] = pos_;                                                                    \
        while (d_ < want_) {                                                                \
            uint32_t nx_ = tr_choose((cid), pos_, NEXT0(pos_), NEXT1(pos_));                \
            if (nx_ == TR_NONE) break;                                                      \
            if (ISECT(nx_) && LIGHT(pos_) != tr_green((c)->iter, nx_)) break;               \
            if (occupied(nx_)) break;                                                       \
            pos_ = nx_;                                                                     \
            path_[++d_] = pos_;                                                             \
        }                                                                                   \
        if (d_ > 0 && tr_slow((cid), (c)->iter)) --d_;                                      \
        (vout) = d_;                                                                        \
        (dout) = path_[d_];                                                                 \
    } while (0)

/* ---- warpheap --------------------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE Cell tr_cell(const tr_ctx *c, uint32_t i) { return Cell_from(c->cells[i]); }

WH_INLINE WH_HOST_DEVICE void cell_init(const wh_soa *s, Cell o, uint64_t i, const tr_ctx *c) {
    (void)s;
    WH_GET(Cell, o, car) = 0;
    WH_GET(Cell, o, id) = (uint32_t)i;
    WH_GET(Cell, o, next0) = c->next0[i];
    WH_GET(Cell, o, next1) = c->next1[i];
    WH_GET(Cell, o, light) = c->light[i];
    WH_GET(Cell, o, isect) = c->isect[i];
    c->cells[i] = o.p;
}
#define WH_OCC(x)   (WH_GET(Cell, tr_cell(c, (x)), car) != 0)
#define WH_NEXT0(x) WH_GET(Cell, tr_cell(c, (x)), next0)
#define WH_NEXT1(x) WH_GET(Cell, tr_cell(c, (x)), next1)
#define WH_LIGHT(x) WH_GET(Cell, tr_cell(c, (x)), light)
#define WH_ISECT(x) WH_GET(Cell, tr_cell(c, (x)), isect)
WH_INLINE WH_HOST_DEVICE void car_plan(const wh_soa *s, Car k, const tr_ctx *c) {
    (void)s;
    uint32_t v, dest;
    TR_PLAN(c, WH_GET(Car, k, cell), WH_GET(Car, k, v), WH_GET(Car, k, cid), WH_OCC, WH_NEXT0, WH_NEXT1, WH_LIGHT,
            WH_ISECT, v, dest);
    WH_GET(Car, k, v) = v;
    WH_GET(Car, k, dest) = dest;
}
WH_INLINE WH_HOST_DEVICE void car_move(const wh_soa *s, Car k, const tr_ctx *c) {
    uint32_t from = WH_GET(Car, k, cell), to = WH_GET(Car, k, dest);
    int32_t trip = WH_GET(Car, k, trip) -= (int32_t)WH_GET(Car, k, v);
    WH_GET(Cell, tr_cell(c, from), car) = 0;
    if (trip <= 0) { /* arrived: removed */
        WH_SOA_DESTROY(s, k);
        return;
    }
    WH_GET(Cell, tr_cell(c, to), car) = k.p;
    WH_GET(Car, k, cell) = to;
}
WH_INLINE WH_HOST_DEVICE void cell_spawn(const wh_soa *s, Cell o, const tr_ctx *c) {
    uint32_t id = WH_GET(Cell, o, id);
    if (!WH_GET(Cell, o, isect) || WH_GET(Cell, o, car) || !tr_spawns(c->iter, id, c->spawn)) return;
    Car k = WH_SOA_NEW_AT(s, Car, app_tile_key(id, 1, c->place));
    if (Car_is_null(k)) return; /* out of memory: shows in --check */
    uint64_t cid = (uint64_t)c->iter * c->ncells + id + 1u;
    WH_GET(Car, k, cid) = cid;
    WH_GET(Car, k, cell) = id;
    WH_GET(Car, k, v) = 0;
    WH_GET(Car, k, trip) = tr_trip(cid);
    WH_GET(Car, k, dest) = id;
    WH_GET(Cell, o, car) = k.p;
}
WH_SOA_PARALLEL_NEW(Cell, cell_init, tr_ctx)
WH_SOA_PARALLEL_DO(Car, car_plan, tr_ctx)
WH_SOA_PARALLEL_DO(Car, car_move, tr_ctx)
WH_SOA_PARALLEL_DO(Cell, cell_spawn, tr_ctx)

/* ---- static SOA baseline: cars are fields of the cells --------------------------------- */
#define ST_OCC(x)   (c->occ[(x)] != 0)
#define ST_NEXT0(x) c->next0[(x)]
#define ST_NEXT1(x) c->next1[(x)]
#define ST_LIGHT(x) c->light[(x)]
#define ST_ISECT(x) c->isect[(x)]
WH_INLINE WH_HOST_DEVICE void st_plan(uint64_t i, const tr_ctx *c) {
    if (!c->occ[i]) return;
    uint32_t v, dest;
    TR_PLAN(c, (uint32_t)i, c->v[i], c->cid[i], ST_OCC, ST_NEXT0, ST_NEXT1, ST_LIGHT, ST_ISECT, v, dest);
    c->v[i] = v;
    c->dest[i] = dest;
    c->pending[i] = 1;
}
WH_INLINE WH_HOST_DEVICE void st_move(uint64_t i, const tr_ctx *c) {
    if (!c->pending[i]) return; /* only cars present at the plan */
    c->pending[i] = 0;
    uint32_t to = c->dest[i], v = c->v[i];
    int32_t trip = c->trip[i] - (int32_t)v;
    uint64_t cid = c->cid[i];
    c->occ[i] = 0;
    c->v[i] = 0;
    c->trip[i] = 0;
    c->cid[i] = 0;
    c->dest[i] = 0;
    if (trip <= 0) return;
    c->occ[to] = 1;
    c->v[to] = v;
    c->trip[to] = trip;
    c->cid[to] = cid;
    c->dest[to] = to;
}
WH_INLINE WH_HOST_DEVICE void st_spawn(uint64_t i, const tr_ctx *c) {
    if (!c->isect[i] || c->occ[i] || !tr_spawns(c->iter, (uint32_t)i, c->spawn)) return;
    uint64_t cid = (uint64_t)c->iter * c->ncells + i + 1u;
    c->occ[i] = 1;
    c->v[i] = 0;
    c->trip[i] = tr_trip(cid);
    c->cid[i] = cid;
    c->dest[i] = (uint32_t)i;
}
WH_SOA_PARALLEL_FOR(st_plan_all, tr_ctx, st_plan)
WH_SOA_PARALLEL_FOR(st_move_all, tr_ctx, st_move)
WH_SOA_PARALLEL_FOR(st_spawn_all, tr_ctx, st_spawn)

/* ---- network ------------------------------------------------------------------------- */
typedef struct net {
    uint32_t ncells, *next0, *next1, *light, *isect;
    float *x, *y; /* for the picture */
} net;

/* Intersection k of a gx x gy torus grid is cell k; streets follow. */
static void net_build(net *g, uint32_t nisect) {
    uint32_t gx = (uint32_t)ceil(sqrt((double)nisect)), gy = (nisect + gx - 1) / gx;
    uint32_t ni = gx * gy;
    uint64_t total = ni;
    for (uint32_t k = 0; k < ni; ++k)
        for (uint32_t d = 0; d < 2; ++d) total += 4u + (uint32_t)(wh_hash64(0x57EEull + k * 2u + d) % 16u);
    g->ncells = (uint32_t)total;
    g->next0 = (uint32_t *)malloc(total * 4);
    g->next1 = (uint32_t *)malloc(total * 4);
    g->light = (uint32_t *)malloc(total * 4);
    g->isect = (uint32_t *)malloc(total * 4);
    g->x = (float *)malloc(total * 4);
    g->y = (float *)malloc(total * 4);
    for (uint64_t i = 0; i < total; ++i) {
        g->next0[i] = g->next1[i] = TR_NONE;
        g->light[i] = 0;
        g->isect[i] = 0;
    }
    for (uint32_t k = 0; k < ni; ++k) {
        g->isect[k] = 1;
        g->x[k] = (float)(k % gx);
        g->y[k] = (float)(k / gx);
    }
    uint32_t next = ni;
    for (uint32_t k = 0; k < ni; ++k)
        for (uint32_t d = 0; d < 2; ++d) {
            uint32_t l = 4u + (uint32_t)(wh_hash64(0x57EEull + k * 2u + d) % 16u);
            uint32_t kx = k % gx, ky = k / gx;
            uint32_t to = d == 0 ? ky * gx + (kx + 1) % gx : ((ky + 1) % gy) * gx + kx;
            if (d == 0)
                g->next0[k] = next;
            else
                g->next1[k] = next;
            for (uint32_t j = 0; j < l; ++j) {
                uint32_t cell = next + j;
                g->next0[cell] = j + 1 < l ? cell + 1 : to;
                g->light[cell] = j + 1 < l ? 0u : d; /* slot at the target: 0 from the west, 1 from the north */
                float f = (float)(j + 1) / (float)(l + 1);
                g->x[cell] = (float)kx + (d == 0 ? f : 0.0f);
                g->y[cell] = (float)ky + (d == 1 ? f : 0.0f);
            }
            next += l;
        }
}

/* ---- driver ------------------------------------------------------------------------- */
#define TR_NF 4 /* per cell: occupied, speed, trip, car id */
typedef struct state {
    uint64_t *v;
    uint64_t n;
} state;

/* Topology in the variant's memory space.  `once`: the variant reads it only to
 * set up its cells (warpheap, device malloc: their cells carry their own
 * copy), so it stays in mapped host memory and takes nothing from a
 * --heap-mb budget; the static baseline reads it every iteration, from
 * device memory. */
static void ctx_topology(tr_ctx *c, const net *g, int dev, int once, uint32_t **owned) {
    const uint32_t *src[4] = {g->next0, g->next1, g->light, g->isect};
    size_t bytes = (size_t)g->ncells * 4;
    for (int k = 0; k < 4; ++k) {
        if (once) {
            owned[k] = (uint32_t *)app_alloc_mapped(bytes, dev);
            memcpy(owned[k], src[k], bytes);
        } else {
            owned[k] = (uint32_t *)app_alloc(bytes, dev);
            app_to_dev(owned[k], src[k], bytes, dev);
        }
    }
    c->next0 = owned[0];
    c->next1 = owned[1];
    c->light = owned[2];
    c->isect = owned[3];
    c->ncells = g->ncells;
}
static void ctx_topology_free(tr_ctx *c, uint32_t **owned, int dev, int once) {
    for (int k = 0; k < 4; ++k) {
        if (once)
            app_free_mapped(owned[k], dev);
        else
            app_free(owned[k], dev);
    }
    c->next0 = c->next1 = c->light = c->isect = NULL;
}

static double run_warpheap(const net *g, tr_ctx c, size_t heap, int dev, state *out, size_t *peak) {
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Cell), WH_SOA_TYPE(Car)};
    wh_soa_config cfg = {heap, types, 2, dev != 0, 0, NULL, false};
    wh_soa soa;
    APP_TRY(wh_soa_create(&soa, &cfg));
    uint32_t *topo[4];
    ctx_topology(&c, g, dev, 1, topo);
    uint64_t n = g->ncells;
    c.cells = (uint64_t *)app_alloc(n * 8, dev);
    APP_TRY(Cell_parallel_new_cell_init(&soa, n, c));
    ctx_topology_free(&c, topo, dev, 1); /* the cells have it now */
    *peak = app_heap_used(&soa);
    uint32_t iters = c.iter,
             every = iters / 20u + 1u < 512u ? iters / 20u + 1u : 512u; /* peak-memory samples (each copies the heap) */
    app_sync(dev);
    double t0 = app_now(), paused = 0;
    for (uint32_t it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 16, dev, t0 + paused)
        c.iter = it;
        APP_TRY(Car_parallel_do_car_plan(&soa, c));
        APP_TRY(Car_parallel_do_car_move(&soa, c));
        APP_TRY(Cell_parallel_do_cell_spawn(&soa, c));
        if (it % every == 0) app_sample_peak(&soa, peak, &paused);
    }
    app_sync(dev);
    double t = app_now() - t0 - paused;
    app_heap_check(&soa, "warpheap");
    wh_soa img;
    void *owned;
    APP_TRY(wh_soa_host_image(&soa, &img, &owned));
    out->n = n;
    out->v = (uint64_t *)calloc(n * TR_NF, sizeof(uint64_t));
    wh_soa_iter itr;
    wh_soa_iter_begin(&itr, &img, Car_TYPE);
    for (uint64_t p; (p = wh_soa_iter_next(&itr, &img)) != 0;) {
        Car k = Car_from(p);
        uint64_t *v = out->v + (uint64_t)WH_GET(Car, k, cell) * TR_NF;
        v[0] += 1; /* 2 would show a collision */
        v[1] = WH_GET(Car, k, v);
        v[2] = (uint64_t)(int64_t)WH_GET(Car, k, trip);
        v[3] = WH_GET(Car, k, cid);
    }
    app_print_heap(&soa, 1);
    free(owned);
    app_free(c.cells, dev);
    APP_DESTROY(&soa);
    return t;
}

static double run_static(const net *g, tr_ctx c, int dev, state *out, size_t *peak) {
    uint32_t *topo[4];
    ctx_topology(&c, g, dev, 0, topo);
    uint64_t n = g->ncells;
    uint32_t **arr[4] = {&c.occ, &c.v, &c.dest, &c.pending};
    for (int k = 0; k < 4; ++k) *arr[k] = (uint32_t *)app_alloc(n * 4, dev);
    c.trip = (int32_t *)app_alloc(n * 4, dev);
    c.cid = (uint64_t *)app_alloc(n * 8, dev);
    *peak = n * (16 + 20 + 8);
    uint32_t iters = c.iter;
    app_sync(dev);
    double t0 = app_now();
    for (uint32_t it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 16, dev, t0)
        c.iter = it;
        APP_TRY(st_plan_all(dev, n, c));
        APP_TRY(st_move_all(dev, n, c));
        APP_TRY(st_spawn_all(dev, n, c));
    }
    app_sync(dev);
    double t = app_now() - t0;
    out->n = n;
    out->v = (uint64_t *)calloc(n * TR_NF, sizeof(uint64_t));
    uint32_t *o = (uint32_t *)malloc(n * 4), *v = (uint32_t *)malloc(n * 4);
    int32_t *tp = (int32_t *)malloc(n * 4);
    uint64_t *id = (uint64_t *)malloc(n * 8);
    app_to_host(o, c.occ, n * 4, dev);
    app_to_host(v, c.v, n * 4, dev);
    app_to_host(tp, c.trip, n * 4, dev);
    app_to_host(id, c.cid, n * 8, dev);
    for (uint64_t i = 0; i < n; ++i)
        if (o[i]) {
            out->v[i * TR_NF] = 1;
            out->v[i * TR_NF + 1] = v[i];
            out->v[i * TR_NF + 2] = (uint64_t)(int64_t)tp[i];
            out->v[i * TR_NF + 3] = id[i];
        }
    free(o);
    free(v);
    free(tp);
    free(id);
    for (int k = 0; k < 4; ++k) app_free(*arr[k], dev);
    ctx_topology_free(&c, topo, dev, 0);
    app_free(c.trip, dev);
    app_free(c.cid, dev);
    return t;
}

/* ---- CUDA device malloc (GPU only): the paper's "other allocators" ---------------------- *
 * Every object is malloc'd, as in the paper's comparison: cells (a struct per
 * cell with its copy of the topology, reached through an array of cell
 * pointers, as warpheap's Cell objects are) and cars (array of structures;
 * the cell holds the car pointer).  The do-all runs over an array of car
 * pointers, compacted once per iteration (wh_app_plist.h); cars that
 * arrived are freed then. */
#if defined(__CUDACC__)
#include "wh_app_plist.h"

/* dead first: app_plist marks it */
typedef struct tm_car {
    uint32_t dead, cell, v, dest;
    uint64_t cid;
    int32_t trip;
} tm_car;
typedef struct tm_cell {
    tm_car *car;
    uint32_t next0, next1, light, isect;
} tm_cell;
typedef struct tm_ctx {
    tr_ctx c;
    tm_cell **cell; /* per cell index */
    app_plist cars;
    unsigned long long *fails;
} tm_ctx;
#define TM_OCC(x)   (m.cell[(x)]->car != NULL)
#define TM_NEXT0(x) m.cell[(x)]->next0
#define TM_NEXT1(x) m.cell[(x)]->next1
#define TM_LIGHT(x) m.cell[(x)]->light
#define TM_ISECT(x) m.cell[(x)]->isect
static __global__ void tm_new_cells(tm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m.c.ncells) return;
    tm_cell *x = (tm_cell *)app_dev_malloc(sizeof(tm_cell), m.fails);
    m.cell[i] = x;
    if (!x) return;
    x->car = NULL;
    x->next0 = m.c.next0[i];
    x->next1 = m.c.next1[i];
    x->light = m.c.light[i];
    x->isect = m.c.isect[i];
}
static __global__ void tm_plan(tm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= APP_PLIST_N(m.cars)) return;
    const tr_ctx *c = &m.c;
    tm_car *k = (tm_car *)m.cars.items[i];
    uint32_t v, dest;
    TR_PLAN(c, k->cell, k->v, k->cid, TM_OCC, TM_NEXT0, TM_NEXT1, TM_LIGHT, TM_ISECT, v, dest);
    k->v = v;
    k->dest = dest;
}
static __global__ void tm_move(tm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= APP_PLIST_N(m.cars)) return;
    tm_car *k = (tm_car *)m.cars.items[i];
    k->trip -= (int32_t)k->v;
    m.cell[k->cell]->car = NULL;
    if (k->trip <= 0) {
        app_plist_kill(k);
        return;
    }
    m.cell[k->dest]->car = k;
    k->cell = k->dest;
}
static __global__ void tm_spawn(tm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m.c.ncells) return;
    tm_cell *x = m.cell[i];
    if (!x->isect || x->car || !tr_spawns(m.c.iter, i, m.c.spawn)) return;
    tm_car *k = (tm_car *)app_dev_malloc(sizeof(tm_car), m.fails);
    if (!k) return;
    k->cid = (uint64_t)m.c.iter * m.c.ncells + i + 1u;
    k->cell = k->dest = i;
    k->v = 0;
    k->dead = 0;
    k->trip = tr_trip(k->cid);
    x->car = k;
    app_plist_add(&m.cars, k, m.fails);
}
static __global__ void tm_export(tm_ctx m, uint64_t *out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m.c.ncells) return;
    const tm_car *k = m.cell[i]->car;
    out[(uint64_t)i * TR_NF] = k != NULL;
    out[(uint64_t)i * TR_NF + 1] = k ? k->v : 0;
    out[(uint64_t)i * TR_NF + 2] = k ? (uint64_t)(int64_t)k->trip : 0;
    out[(uint64_t)i * TR_NF + 3] = k ? k->cid : 0;
}
static __global__ void tm_free_cells(tm_ctx m) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m.c.ncells) free(m.cell[i]);
}
static double run_malloc(const net *g, tr_ctx c, int dev, state *out, size_t *peak) {
    uint64_t n = g->ncells;
    /* the budget counts the cell pointers, as warpheap's does; not the do-all
     * list (the topology is in host memory until the cells have it) */
    size_t heap = budget_heap(n * 8, (size_t)n * 96 + ((size_t)64 << 20));
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
    tm_ctx m;
    memset(&m, 0, sizeof m);
    uint32_t *topo[4];
    ctx_topology(&c, g, dev, 1, topo);
    m.c = c;
    WH_CUDA_OR_DIE(cudaMalloc(&m.cell, n * 8));
    app_plist_alloc(&m.cars, (uint32_t)n);
    WH_CUDA_OR_DIE(cudaMalloc(&m.fails, 8));
    WH_CUDA_OR_DIE(cudaMemset(m.fails, 0, 8));
    *peak = heap + n * 32; /* reserved: malloc heap, cell pointers, list arrays */
    uint32_t iters = c.iter;
    unsigned gb = (unsigned)((n + 255) / 256);
    tm_new_cells<<<gb, 256>>>(m);
    WH_LAUNCH_OR_DIE();
    app_sync(dev);
    ctx_topology_free(&m.c, topo, dev, 1); /* the cells have it now */
    if (app_dev_count(m.fails)) {          /* no network: nothing more can run */
        printf("  malloc: the cells do not fit the heap\n");
        exit(3);
    }
    app_sync(dev);
    double t0 = app_now();
    for (uint32_t it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 16, dev, t0)
        m.c.iter = it;
        tm_plan<<<gb, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        tm_move<<<gb, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        tm_spawn<<<gb, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        app_plist_settle(&m.cars);
    }
    app_sync(dev);
    double t = app_now() - t0;
    unsigned long long fails = app_dev_count(m.fails);
    if (fails) printf("  malloc: %llu failed allocations\n", fails);
    uint64_t *d_out;
    WH_CUDA_OR_DIE(cudaMalloc(&d_out, n * TR_NF * 8));
    tm_export<<<gb, 256>>>(m, d_out);
    WH_LAUNCH_OR_DIE();
    out->n = n;
    out->v = (uint64_t *)calloc(n * TR_NF, sizeof(uint64_t));
    app_to_host(out->v, d_out, n * TR_NF * 8, 1);
    WH_CUDA_OR_DIE(cudaFree(d_out));
    app_plist_free_items<<<gb, 256>>>(m.cars);
    WH_LAUNCH_OR_DIE(); /* the cars still alive */
    tm_free_cells<<<gb, 256>>>(m);
    WH_LAUNCH_OR_DIE();
    app_sync(dev);
    app_plist_free(&m.cars);
    WH_CUDA_OR_DIE(cudaFree(m.cell));
    WH_CUDA_OR_DIE(cudaFree(m.fails));
    return t;
}
#endif

static uint64_t compare(const char *na, const state *a, const char *nb, const state *b) {
    uint64_t diff = 0, ca = 0, cb = 0, multi = 0;
    for (uint64_t i = 0; i < a->n; ++i) {
        int bad = 0;
        for (int k = 0; k < TR_NF; ++k) bad |= a->v[i * TR_NF + k] != b->v[i * TR_NF + k];
        diff += bad;
        ca += a->v[i * TR_NF];
        cb += b->v[i * TR_NF];
        multi += a->v[i * TR_NF] > 1;
    }
    printf("  check: %s vs %s: %llu of %llu cells differ (cars %llu / %llu, %llu cells with 2 cars) -> %s\n", na, nb,
           (unsigned long long)diff, (unsigned long long)a->n, (unsigned long long)ca, (unsigned long long)cb,
           (unsigned long long)multi, diff || multi ? "FAILED" : "identical");
    return diff + multi;
}

static void write_picture(const char *path, const net *g, const state *s) {
    float mx = 1, my = 1;
    for (uint32_t i = 0; i < g->ncells; ++i) {
        if (g->x[i] + 1 > mx) mx = g->x[i] + 1;
        if (g->y[i] + 1 > my) my = g->y[i] + 1;
    }
    int w = 1024, h = (int)(1024.0f * my / mx);
    if (h < 16) h = 16;
    unsigned char *img = (unsigned char *)calloc((size_t)w * h * 3, 1);
    for (uint32_t i = 0; i < g->ncells; ++i) {
        int x = (int)(g->x[i] / mx * (float)(w - 1)), y = (int)(g->y[i] / my * (float)(h - 1));
        unsigned char *p = img + ((size_t)y * w + x) * 3;
        const uint64_t *v = s->v + (uint64_t)i * TR_NF;
        if (v[0]) {
            p[0] = 255;
            p[1] = (unsigned char)(v[1] * 25u > 255u ? 255u : v[1] * 25u);
            p[2] = 0;
        } else if (!p[0]) {
            p[0] = p[1] = p[2] = g->isect[i] ? 160 : 60;
        }
    }
    app_write_ppm(path, w, h, img);
    free(img);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* a run killed by a time limit keeps its log */
    uint32_t nis = 17500;
    uint32_t iters = 12000;
    tr_ctx c;
    memset(&c, 0, sizeof c);
    c.vmax = 10;
    c.spawn = 3;
    app_opts o = app_opts_new();
    wh_cli_opt cli[] = {WH_CLI_UINT("isects", &nis, "intersections of the street network"),
                        WH_CLI_UINT("iters", &iters, "iterations"),
                        WH_CLI_UINT("vmax", &c.vmax, "a car's top speed in cells per iteration"),
                        WH_CLI_UINT("spawn", &c.spawn, "percent chance that a free intersection creates a car"),
                        APP_CLI_COMMON(&o, "all|warpheap|static|malloc"),
                        APP_CLI_LIMITS(&o),
                        APP_CLI_PLACE(&o, "cars created in a run of N cells (by id)"),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli,
                 "DynaSOAr's traffic benchmark (Nagel-Schreckenberg cars on a street network) "
                 "on the object allocator.");
    app_opts_done(&o);
    int dev = o.dev, check = o.check;
    c.place = o.place;
    c.iter = iters; /* the runners read the count from here */
    if (nis < 4 || nis > 20000000u || c.vmax < 1 || c.vmax > TR_MAXV) {
        fprintf(stderr, "traffic: bad parameters\n");
        return 2;
    }
    net g;
    net_build(&g, nis);
    g_malloc_heap = app_heap_opt(&o, 0);
    /* default: room for the cells and a car in a third of them at a fragmentation of 0.6 */
    size_t heap = g_malloc_heap ? budget_heap((size_t)g.ncells * 8, 0) /* Cell pointers */
                                : (size_t)g.ncells * 128 + ((size_t)16 << 20);
    char env[512];
    app_env(env, sizeof env, dev);
    printf("traffic: %u intersections, %u cells, %u iterations, vmax %u, spawn %u%%, heap %zu MiB, %s\n", nis, g.ncells,
           iters, c.vmax, c.spawn, heap >> 20, env);
    state a = {0, 0}, b = {0, 0}, mm = {0, 0};
    app_runs r = app_runs_new(iters);
    app_time_cap_opt(&o);
    if (app_wants(&o, "warpheap")) app_ran(&r, 0, run_warpheap(&g, c, heap, dev, &a, &r.peak[0]));
    if (check || app_wants(&o, "static")) app_ran(&r, 1, run_static(&g, c, dev, &b, &r.peak[1]));
#if defined(__CUDACC__)
    if (dev && app_wants(&o, "malloc")) app_ran(&r, 2, run_malloc(&g, c, dev, &mm, &r.peak[2]));
#endif
    const char *names[3] = {"warpheap", "static", "malloc"};
    app_print_runs(&r, 3, names, "iteration");
    int rc = 0;
    if (check && r.ts[0] >= 0) rc |= compare("warpheap", &a, "static", &b) != 0;
    if (check && mm.v) rc |= compare("malloc", &mm, "static", &b) != 0;
    /* the picture shows the first variant that ran (none: no picture) */
    const state *shown = a.v ? &a : b.v ? &b : mm.v ? &mm : NULL;
    if (o.ppm && shown) write_picture(o.ppm, &g, shown);
    if (o.csv) app_csv_runs(o.csv, "traffic", &r, 3, names, nis, env);
    free(a.v);
    free(b.v);
    free(mm.v);
    free(g.next0);
    free(g.next1);
    free(g.light);
    free(g.isect);
    free(g.x);
    free(g.y);
    return rc;
}
