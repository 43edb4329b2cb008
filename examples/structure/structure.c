/* SPDX-License-Identifier: MIT */
/* Fracture of a structure on the object allocator: DynaSOAr's "structure"
 * benchmark (Table 1 and section 6 of the DynaSOAr paper, ECOOP 2019), a
 * finite-element-like mesh of nodes joined by springs; one side is held, the
 * other pulled; springs break when their tension exceeds their strength, and
 * nodes cut off from every anchor (found by a BFS) are removed.  Objects are
 * created up front and only destroyed during the run.
 *
 * Classes: NodeBase (abstract: position, velocity, mass, up to 5 spring
 * slots, BFS label) with three subclasses sharing its fields -- AnchorNode
 * (fixed), AnchorPullNode (moves at constant speed) and Node (free) -- and
 * Spring.  The mesh is a w x h grid with springs to the right and below
 * (degree <= 4 of the 5 slots; slot 0 right, 1 down, 2 left, 3 up).
 *
 * A step is --iters compute iterations of
 *   spring (Spring)         tension from the endpoints' positions; a spring
 *                           over its strength clears its two slots and
 *                           destroys itself
 *   node   (Node)           forces of the springs in slot order, move
 *   pull   (AnchorPullNode) move at the pull speed
 * followed by the BFS: labels (0xFFFFFFFF - distance, 0 = unreached) spread
 * from the anchors along springs by atomic max until a round changes nothing;
 * unreached Nodes destroy the springs of their slots 0 and 1 and themselves.
 * Forces are summed in slot order, the same in both variants, so results are
 * bit-identical and independent of thread scheduling.  Springs and nodes name
 * each other by 32-bit references (wh_soa_ref), as the static version's arrays
 * do by 32-bit indices.
 *
 * Variants: warpheap; a static SOA baseline (node and spring arrays with
 * active flags); CUDA's device malloc with arrays of object pointers
 * (structure_malloc.h; GPU only).  --check requires identical final meshes.
 *
 *   wh_structure [--w=1225] [--h=1225] [--steps=500] [--iters=40]
 *                [--mode=all|warpheap|static|malloc] [--cpu] [--check] [--ppm=FILE] [--csv=FILE]
 *                [--max-seconds=S] [--heap-mb=N]
 */
#include "warpheap/soa.h"
#include "wh_app_bench.h"

#include <math.h>

/* clang-format off */
#define NODE_FIELDS(F) F(float, px) F(float, py) F(float, vx) F(float, vy) F(float, mass) \
    F(wh_soa_ref, s0) F(wh_soa_ref, s1) F(wh_soa_ref, s2) F(wh_soa_ref, s3) F(wh_soa_ref, s4) F(uint32_t, reach) \
    F(uint32_t, id)
/* clang-format on */
WH_SOA_CLASS(NodeBase, 0, NODE_FIELDS)
WH_SOA_SUBCLASS(AnchorNode, 1, NodeBase, WH_SOA_NO_FIELDS)
/* clang-format off */
#define PULL_FIELDS(F) F(float, pull)
/* clang-format on */
WH_SOA_SUBCLASS(AnchorPullNode, 2, NodeBase, PULL_FIELDS)
WH_SOA_SUBCLASS(Node, 3, NodeBase, WH_SOA_NO_FIELDS)
/* clang-format off */
#define SPRING_FIELDS(F) F(wh_soa_ref, p1) F(wh_soa_ref, p2) F(float, rest) F(float, k) F(float, strength) \
    F(float, fx) F(float, fy) F(uint32_t, slot1) F(uint32_t, slot2) F(uint32_t, id)
/* clang-format on */
WH_SOA_CLASS(Spring, 4, SPRING_FIELDS)

#define SLOTS   5
#define ST_DT   0.2f
#define ST_DAMP 0.98f
#define ST_FAR  0xFFFFFFFFu
enum { K_NODE = 0, K_ANCHOR = 1, K_PULL = 2 };

typedef struct st_ctx {
    uint32_t w, h;
    float pull;
    uint32_t *changed; /* BFS: a label changed this round */
    uint64_t *nodes;   /* warpheap: NodeBase pointer of node i */
    /* static baseline */
    float *px, *py, *vx, *vy, *m, *sfx, *sfy, *rest, *k, *strength;
    uint32_t *kind, *nactive, *reach, *slot; /* slot: SLOTS per node, spring index + 1 */
    uint32_t *sp1, *sp2, *ss1, *ss2, *sactive;
} st_ctx;

/* ---- shared rules ------------------------------------------------------------------ */
WH_INLINE WH_HOST_DEVICE float st_unit(uint64_t i, uint64_t k) {
    return (float)(wh_hash64(0x57A0ull + i * 8u + k) >> 40) * (1.0f / 16777216.0f);
}
WH_INLINE WH_HOST_DEVICE uint32_t st_kind(const st_ctx *c, uint32_t i) {
    uint32_t x = i % c->w;
    return x == 0 ? K_ANCHOR : x + 1 == c->w ? K_PULL : K_NODE;
}
WH_INLINE WH_HOST_DEVICE void st_node0(uint32_t i, uint32_t w, float *px, float *py, float *m) {
    *px = (float)(i % w) + 0.2f * (st_unit(i, 0) - 0.5f);
    *py = (float)(i / w) + 0.2f * (st_unit(i, 1) - 0.5f);
    *m = 0.8f + 0.4f * st_unit(i, 2);
}
/* Spring j: node j / 2 to its right (j even) or lower (j odd) neighbour; exists? */
WH_INLINE WH_HOST_DEVICE bool st_spring_ends(const st_ctx *c, uint32_t j, uint32_t *a, uint32_t *b) {
    uint32_t i = j / 2u, x = i % c->w, y = i / c->w;
    *a = i;
    if (j & 1u) {
        *b = i + c->w;
        return y + 1 < c->h;
    }
    *b = i + 1u;
    return x + 1 < c->w;
}
WH_INLINE WH_HOST_DEVICE void st_spring0(uint32_t j, float *k, float *strength) {
    *k = 0.5f + st_unit(j, 3);
    *strength = *k * (0.05f + 0.15f * st_unit(j, 4));
}
/* Tension of a spring from (x1, y1) to (x2, y2); force on the first end. */
WH_INLINE WH_HOST_DEVICE float st_tension(float x1, float y1, float x2, float y2, float rest, float k, float *fx,
                                          float *fy) {
    float dx = x2 - x1, dy = y2 - y1, len = sqrtf(dx * dx + dy * dy);
    if (len == 0.0f) {
        *fx = *fy = 0.0f;
        return 0.0f;
    }
    float f = k * (len - rest);
    *fx = f * dx / len;
    *fy = f * dy / len;
    return f;
}
WH_INLINE WH_HOST_DEVICE void st_integrate(float *px, float *py, float *vx, float *vy, float m, float fx, float fy) {
    *vx = (*vx + fx / m * ST_DT) * ST_DAMP;
    *vy = (*vy + fy / m * ST_DT) * ST_DAMP;
    *px += *vx * ST_DT;
    *py += *vy * ST_DT;
}
/* BFS label spread over one spring (labels only grow). */
WH_INLINE WH_HOST_DEVICE void st_spread(uint32_t *ra, uint32_t *rb, uint32_t *changed) {
    uint32_t a = wh_atomic_load(ra, WH_RELAXED), b = wh_atomic_load(rb, WH_RELAXED);
    if (a > 1u && a - 1u > b && wh_atomic_fetch_max(rb, a - 1u, WH_RELAXED) < a - 1u)
        (void)wh_atomic_store(changed, 1u, WH_RELAXED);
    if (b > 1u && b - 1u > a && wh_atomic_fetch_max(ra, b - 1u, WH_RELAXED) < b - 1u)
        (void)wh_atomic_store(changed, 1u, WH_RELAXED);
}

/* ---- warpheap ------------------------------------------------------------------------ */
WH_INLINE WH_HOST_DEVICE wh_soa_ref *nb_slot(NodeBase n, uint32_t k) {
    return k == 0   ? WH_FIELD(NodeBase, n, s0)
           : k == 1 ? WH_FIELD(NodeBase, n, s1)
           : k == 2 ? WH_FIELD(NodeBase, n, s2)
           : k == 3 ? WH_FIELD(NodeBase, n, s3)
                    : WH_FIELD(NodeBase, n, s4);
}
/* Node number idx (row-major); its subclass is chosen by its column. */
WH_INLINE WH_HOST_DEVICE void node_fill(NodeBase n, uint32_t idx, const st_ctx *c) {
    c->nodes[idx] = n.p;
    st_node0(idx, c->w, &WH_GET(NodeBase, n, px), &WH_GET(NodeBase, n, py), &WH_GET(NodeBase, n, mass));
    WH_GET(NodeBase, n, vx) = WH_GET(NodeBase, n, vy) = 0.0f;
    for (uint32_t k = 0; k < SLOTS; ++k) *nb_slot(n, k) = 0;
    WH_GET(NodeBase, n, reach) = st_kind(c, idx) == K_NODE ? 0u : ST_FAR;
    WH_GET(NodeBase, n, id) = idx;
}
/* One parallel_new per subclass: anchors are column 0, pulled nodes column
 * w - 1, free nodes the columns between. */
WH_INLINE WH_HOST_DEVICE void anchor_init(const wh_soa *s, AnchorNode o, uint64_t i, const st_ctx *c) {
    (void)s;
    node_fill(AnchorNode_super(o), (uint32_t)i * c->w, c);
}
WH_INLINE WH_HOST_DEVICE void pull_init(const wh_soa *s, AnchorPullNode o, uint64_t i, const st_ctx *c) {
    (void)s;
    node_fill(AnchorPullNode_super(o), (uint32_t)i * c->w + c->w - 1u, c);
    WH_GET(AnchorPullNode, o, pull) = c->pull;
}
WH_INLINE WH_HOST_DEVICE void free_init(const wh_soa *s, Node o, uint64_t i, const st_ctx *c) {
    (void)s;
    uint32_t inner = c->w - 2u;
    node_fill(Node_super(o), (uint32_t)(i / inner) * c->w + 1u + (uint32_t)(i % inner), c);
}
WH_SOA_PARALLEL_NEW(AnchorNode, anchor_init, st_ctx)
WH_SOA_PARALLEL_NEW(AnchorPullNode, pull_init, st_ctx)
WH_SOA_PARALLEL_NEW(Node, free_init, st_ctx)
/* Springs in the nodes' order, as the static version's arrays hold them:
 * spring i is the i-th of the mesh taken node by node (row-major), each node
 * with its right spring, then its lower one.  A row but the last has 2w - 1
 * (its last node only a lower one), the last row w - 1.  So a do-all over
 * springs meets the nodes' blocks in order, and their lines stay in L2. */
WH_INLINE WH_HOST_DEVICE uint64_t st_springs(const st_ctx *c) {
    return (uint64_t)c->h * (c->w - 1u) + (uint64_t)(c->h - 1u) * c->w;
}
WH_INLINE WH_HOST_DEVICE uint32_t st_spring_index(const st_ctx *c, uint64_t i) {
    uint32_t row = 2u * c->w - 1u, y = (uint32_t)(i / row), o = (uint32_t)(i % row);
    if (y + 1u == c->h) return 2u * (y * c->w + o);             /* the last row: right springs */
    if (o + 1u == row) return 2u * (y * c->w + c->w - 1u) + 1u; /* the row's last node: down */
    return 2u * (y * c->w + o / 2u) + (o & 1u);
}
WH_INLINE WH_HOST_DEVICE void spring_init(const wh_soa *s, Spring sp, uint64_t i, const st_ctx *c) {
    uint32_t j = st_spring_index(c, i), d = j & 1u, a, b;
    bool ok = st_spring_ends(c, j, &a, &b);
    WH_ASSERT(ok);
    (void)ok;
    NodeBase na = NodeBase_from(c->nodes[a]), nb = NodeBase_from(c->nodes[b]);
    WH_GET(Spring, sp, p1) = WH_SOA_REF(s, na);
    WH_GET(Spring, sp, p2) = WH_SOA_REF(s, nb);
    WH_GET(Spring, sp, slot1) = d;
    WH_GET(Spring, sp, slot2) = d + 2u;
    WH_GET(Spring, sp, id) = j;
    WH_GET(Spring, sp, rest) = 1.0f;
    st_spring0(j, &WH_GET(Spring, sp, k), &WH_GET(Spring, sp, strength));
    WH_GET(Spring, sp, fx) = WH_GET(Spring, sp, fy) = 0.0f;
    *nb_slot(na, d) = *nb_slot(nb, d + 2u) = WH_SOA_REF(s, sp); /* each slot written by one spring */
}
WH_SOA_PARALLEL_NEW(Spring, spring_init, st_ctx)
WH_INLINE WH_HOST_DEVICE void spring_compute(const wh_soa *s, Spring sp, const st_ctx *c) {
    (void)c;
    NodeBase a = NodeBase_from_ref(s, WH_GET(Spring, sp, p1)), b = NodeBase_from_ref(s, WH_GET(Spring, sp, p2));
    float f =
        st_tension(WH_GET(NodeBase, a, px), WH_GET(NodeBase, a, py), WH_GET(NodeBase, b, px), WH_GET(NodeBase, b, py),
                   WH_GET(Spring, sp, rest), WH_GET(Spring, sp, k), &WH_GET(Spring, sp, fx), &WH_GET(Spring, sp, fy));
    if (f > WH_GET(Spring, sp, strength)) { /* broken */
        *nb_slot(a, WH_GET(Spring, sp, slot1)) = 0;
        *nb_slot(b, WH_GET(Spring, sp, slot2)) = 0;
        WH_SOA_DESTROY(s, sp);
    }
}
WH_INLINE WH_HOST_DEVICE void node_move(const wh_soa *s, Node o, const st_ctx *c) {
    (void)c;
    NodeBase n = Node_super(o);
    float fx = 0.0f, fy = 0.0f;
    for (uint32_t k = 0; k < SLOTS; ++k) {
        wh_soa_ref r = *nb_slot(n, k);
        if (!r) continue;
        Spring sp = Spring_from_ref(s, r);
        float sx = WH_GET(Spring, sp, fx), sy = WH_GET(Spring, sp, fy);
        if (wh_soa_ref_ptr(s, WH_GET(Spring, sp, p1)) == n.p) {
            fx += sx;
            fy += sy;
        } else {
            fx -= sx;
            fy -= sy;
        }
    }
    st_integrate(&WH_GET(NodeBase, n, px), &WH_GET(NodeBase, n, py), &WH_GET(NodeBase, n, vx), &WH_GET(NodeBase, n, vy),
                 WH_GET(NodeBase, n, mass), fx, fy);
}
WH_INLINE WH_HOST_DEVICE void pull_move(const wh_soa *s, AnchorPullNode o, const st_ctx *c) {
    (void)s;
    (void)c;
    WH_GET(AnchorPullNode, o, base.px) += WH_GET(AnchorPullNode, o, pull);
}
WH_INLINE WH_HOST_DEVICE void node_bfs_reset(const wh_soa *s, Node o, const st_ctx *c) {
    (void)s;
    (void)c;
    WH_GET(Node, o, base.reach) = 0;
}
WH_INLINE WH_HOST_DEVICE void spring_bfs(const wh_soa *s, Spring sp, const st_ctx *c) {
    st_spread(&WH_GET(NodeBase, NodeBase_from_ref(s, WH_GET(Spring, sp, p1)), reach),
              &WH_GET(NodeBase, NodeBase_from_ref(s, WH_GET(Spring, sp, p2)), reach), c->changed);
}
WH_INLINE WH_HOST_DEVICE void node_remove(const wh_soa *s, Node o, const st_ctx *c) {
    (void)c;
    NodeBase n = Node_super(o);
    if (WH_GET(NodeBase, n, reach) != 0) return;
    for (uint32_t k = 0; k < 2; ++k) { /* this node is p1 of its slots 0 and 1 */
        wh_soa_ref r = *nb_slot(n, k);
        if (r) WH_SOA_DESTROY(s, Spring_from_ref(s, r));
    }
    WH_SOA_DESTROY(s, o);
}
WH_SOA_PARALLEL_DO(Spring, spring_compute, st_ctx)
WH_SOA_PARALLEL_DO(Node, node_move, st_ctx)
WH_SOA_PARALLEL_DO(AnchorPullNode, pull_move, st_ctx)
WH_SOA_PARALLEL_DO(Node, node_bfs_reset, st_ctx)
WH_SOA_PARALLEL_DO(Spring, spring_bfs, st_ctx)
WH_SOA_PARALLEL_DO(Node, node_remove, st_ctx)

/* ---- static SOA baseline -------------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE void b_node_init(uint64_t i, const st_ctx *c) {
    st_node0((uint32_t)i, c->w, &c->px[i], &c->py[i], &c->m[i]);
    c->vx[i] = c->vy[i] = 0.0f;
    c->kind[i] = st_kind(c, (uint32_t)i);
    c->nactive[i] = 1;
    c->reach[i] = c->kind[i] == K_NODE ? 0u : ST_FAR;
    for (uint32_t k = 0; k < SLOTS; ++k) c->slot[i * SLOTS + k] = 0;
}
WH_INLINE WH_HOST_DEVICE void b_spring_init(uint64_t j, const st_ctx *c) {
    uint32_t a, b;
    c->sactive[j] = st_spring_ends(c, (uint32_t)j, &a, &b);
    if (!c->sactive[j]) return;
    c->sp1[j] = a;
    c->sp2[j] = b;
    c->ss1[j] = (uint32_t)(j & 1u);
    c->ss2[j] = (uint32_t)(j & 1u) + 2u;
    c->rest[j] = 1.0f;
    st_spring0((uint32_t)j, &c->k[j], &c->strength[j]);
    c->sfx[j] = c->sfy[j] = 0.0f;
    c->slot[(uint64_t)a * SLOTS + c->ss1[j]] = (uint32_t)j + 1u;
    c->slot[(uint64_t)b * SLOTS + c->ss2[j]] = (uint32_t)j + 1u;
}
WH_INLINE WH_HOST_DEVICE void b_spring_compute(uint64_t j, const st_ctx *c) {
    if (!c->sactive[j]) return;
    uint32_t a = c->sp1[j], b = c->sp2[j];
    float f = st_tension(c->px[a], c->py[a], c->px[b], c->py[b], c->rest[j], c->k[j], &c->sfx[j], &c->sfy[j]);
    if (f > c->strength[j]) {
        c->slot[(uint64_t)a * SLOTS + c->ss1[j]] = 0;
        c->slot[(uint64_t)b * SLOTS + c->ss2[j]] = 0;
        c->sactive[j] = 0;
    }
}
WH_INLINE WH_HOST_DEVICE void b_node_move(uint64_t i, const st_ctx *c) {
    if (!c->nactive[i]) return;
    if (c->kind[i] == K_PULL) {
        c->px[i] += c->pull;
        return;
    }
    if (c->kind[i] != K_NODE) return;
    float fx = 0.0f, fy = 0.0f;
    for (uint32_t k = 0; k < SLOTS; ++k) {
        uint32_t j = c->slot[i * SLOTS + k];
        if (!j--) continue;
        if (c->sp1[j] == i) {
            fx += c->sfx[j];
            fy += c->sfy[j];
        } else {
            fx -= c->sfx[j];
            fy -= c->sfy[j];
        }
    }
    st_integrate(&c->px[i], &c->py[i], &c->vx[i], &c->vy[i], c->m[i], fx, fy);
}
WH_INLINE WH_HOST_DEVICE void b_bfs_reset(uint64_t i, const st_ctx *c) {
    if (c->nactive[i] && c->kind[i] == K_NODE) c->reach[i] = 0;
}
WH_INLINE WH_HOST_DEVICE void b_spring_bfs(uint64_t j, const st_ctx *c) {
    if (c->sactive[j]) st_spread(&c->reach[c->sp1[j]], &c->reach[c->sp2[j]], c->changed);
}
WH_INLINE WH_HOST_DEVICE void b_node_remove(uint64_t i, const st_ctx *c) {
    if (!c->nactive[i] || c->kind[i] != K_NODE || c->reach[i] != 0) return;
    for (uint32_t k = 0; k < 2; ++k) {
        uint32_t j = c->slot[i * SLOTS + k];
        if (j) c->sactive[j - 1u] = 0;
    }
    c->nactive[i] = 0;
}
WH_SOA_PARALLEL_FOR(b_node_init_all, st_ctx, b_node_init)
WH_SOA_PARALLEL_FOR(b_spring_init_all, st_ctx, b_spring_init)
WH_SOA_PARALLEL_FOR(b_spring_compute_all, st_ctx, b_spring_compute)
WH_SOA_PARALLEL_FOR(b_node_move_all, st_ctx, b_node_move)
WH_SOA_PARALLEL_FOR(b_bfs_reset_all, st_ctx, b_bfs_reset)
WH_SOA_PARALLEL_FOR(b_spring_bfs_all, st_ctx, b_spring_bfs)
WH_SOA_PARALLEL_FOR(b_node_remove_all, st_ctx, b_node_remove)

/* ---- driver ---------------------------------------------------------------------------- */
/* Final mesh: per node (alive, px, py, vx, vy) and per spring alive. */
typedef struct mesh {
    uint32_t *alive;
    float *pos;
    uint8_t *spring;
    uint64_t n, ns;
} mesh;

static void mesh_alloc(mesh *m, uint64_t n) {
    m->n = n;
    m->ns = 2 * n;
    m->alive = (uint32_t *)calloc(n, 4);
    m->pos = (float *)calloc(n * 4, 4);
    m->spring = (uint8_t *)calloc(2 * n, 1);
}
static void mesh_free(mesh *m) {
    free(m->alive);
    free(m->pos);
    free(m->spring);
    memset(m, 0, sizeof *m);
}
static uint32_t read_flag(const uint32_t *p, int dev) {
    uint32_t v;
    app_to_host(&v, p, 4, dev);
    return v;
}
static void clear_flag(uint32_t *p, int dev) {
    uint32_t z = 0;
    app_to_dev(p, &z, 4, dev);
}
/* BFS rounds until nothing changes (at most one per node: a bound); `round`
 * may read the round's number r. */
#define BFS_LOOP(n, r, round)                  \
    for (uint64_t r = 0; r <= (n); ++r) {      \
        clear_flag(c.changed, dev);            \
        round;                                 \
        if (!read_flag(c.changed, dev)) break; \
    }

static double run_warpheap(st_ctx c, uint32_t steps, uint32_t iters, int dev, mesh *out, size_t *peak) {
    wh_soa_type_desc types[] = {WH_SOA_ABSTRACT_TYPE(NodeBase), WH_SOA_TYPE(AnchorNode), WH_SOA_TYPE(AnchorPullNode),
                                WH_SOA_TYPE(Node), WH_SOA_TYPE(Spring)};
    uint64_t n = (uint64_t)c.w * c.h;
    size_t bytes = budget_heap(n * 8, (size_t)n * 200 + ((size_t)16 << 20)); /* --heap-mb: heap + node array */
    wh_soa_config cfg = {bytes, types, 5, dev != 0, 0, NULL, true};          /* springs and nodes hold wh_soa_ref */
    wh_soa soa;
    APP_TRY(wh_soa_create(&soa, &cfg));
    c.nodes = (uint64_t *)app_alloc(n * 8, dev);
    c.changed = (uint32_t *)app_alloc(4, dev);
    APP_TRY(AnchorNode_parallel_new_anchor_init(&soa, c.h, c));
    APP_TRY(AnchorPullNode_parallel_new_pull_init(&soa, c.h, c));
    APP_TRY(Node_parallel_new_free_init(&soa, (uint64_t)(c.w - 2u) * c.h, c));
    APP_TRY(Spring_parallel_new_spring_init(&soa, st_springs(&c), c));
    *peak = app_heap_used(&soa);
    app_sync(dev);
    double t0 = app_now();
    for (uint32_t st = 0; st < steps; ++st) {
        APP_TIME_CAP(st, 1, dev, t0)
        for (uint32_t it = 0; it < iters; ++it) {
            APP_TRY(Spring_parallel_do_spring_compute(&soa, c));
            APP_TRY(Node_parallel_do_node_move(&soa, c));
            APP_TRY(AnchorPullNode_parallel_do_pull_move(&soa, c));
        }
        APP_TRY(Node_parallel_do_node_bfs_reset(&soa, c));
        /* no spring is made or broken during the search: after the first
         * round, each round visits the first round's snapshot */
        BFS_LOOP(n, r,
                 APP_TRY(r ? Spring_parallel_do_again_spring_bfs(&soa, c) : Spring_parallel_do_spring_bfs(&soa, c)))
        APP_TRY(Node_parallel_do_node_remove(&soa, c));
    }
    app_sync(dev);
    double t = app_now() - t0;
    app_heap_check(&soa, "warpheap");
    wh_soa img;
    void *owned;
    APP_TRY(wh_soa_host_image(&soa, &img, &owned));
    mesh_alloc(out, n);
    wh_soa_iter itr;
    wh_soa_iter_begin(&itr, &img, NodeBase_TYPE);
    for (uint64_t p; (p = wh_soa_iter_next(&itr, &img)) != 0;) {
        NodeBase nb = NodeBase_from(p);
        uint32_t i = WH_GET(NodeBase, nb, id);
        out->alive[i] = 1;
        out->pos[i * 4] = WH_GET(NodeBase, nb, px);
        out->pos[i * 4 + 1] = WH_GET(NodeBase, nb, py);
        out->pos[i * 4 + 2] = WH_GET(NodeBase, nb, vx);
        out->pos[i * 4 + 3] = WH_GET(NodeBase, nb, vy);
    }
    wh_soa_iter_begin(&itr, &img, Spring_TYPE);
    for (uint64_t p; (p = wh_soa_iter_next(&itr, &img)) != 0;) out->spring[WH_GET(Spring, Spring_from(p), id)] = 1;
    free(owned);
    app_free(c.nodes, dev);
    app_free(c.changed, dev);
    APP_DESTROY(&soa);
    return t;
}

static double run_static(st_ctx c, uint32_t steps, uint32_t iters, int dev, mesh *out, size_t *peak) {
    uint64_t n = (uint64_t)c.w * c.h, ns = 2 * n;
    float **nf[5] = {&c.px, &c.py, &c.vx, &c.vy, &c.m};
    float **sf[5] = {&c.sfx, &c.sfy, &c.rest, &c.k, &c.strength};
    uint32_t **nu[3] = {&c.kind, &c.nactive, &c.reach};
    uint32_t **su[5] = {&c.sp1, &c.sp2, &c.ss1, &c.ss2, &c.sactive};
    for (int k = 0; k < 5; ++k) *nf[k] = (float *)app_alloc(n * 4, dev);
    for (int k = 0; k < 5; ++k) *sf[k] = (float *)app_alloc(ns * 4, dev);
    for (int k = 0; k < 3; ++k) *nu[k] = (uint32_t *)app_alloc(n * 4, dev);
    for (int k = 0; k < 5; ++k) *su[k] = (uint32_t *)app_alloc(ns * 4, dev);
    c.slot = (uint32_t *)app_alloc(n * SLOTS * 4, dev);
    c.changed = (uint32_t *)app_alloc(4, dev);
    *peak = n * (32 + SLOTS * 4) + ns * 40;
    APP_TRY(b_node_init_all(dev, n, c));
    APP_TRY(b_spring_init_all(dev, ns, c));
    app_sync(dev);
    double t0 = app_now();
    for (uint32_t st = 0; st < steps; ++st) {
        APP_TIME_CAP(st, 1, dev, t0)
        for (uint32_t it = 0; it < iters; ++it) {
            APP_TRY(b_spring_compute_all(dev, ns, c));
            APP_TRY(b_node_move_all(dev, n, c));
        }
        APP_TRY(b_bfs_reset_all(dev, n, c));
        BFS_LOOP(n, r, APP_TRY(b_spring_bfs_all(dev, ns, c)))
        APP_TRY(b_node_remove_all(dev, n, c));
    }
    app_sync(dev);
    double t = app_now() - t0;
    mesh_alloc(out, n);
    float *h = (float *)malloc(n * 4);
    uint32_t *u = (uint32_t *)malloc(ns * 4);
    app_to_host(out->alive, c.nactive, n * 4, dev);
    for (int k = 0; k < 4; ++k) {
        app_to_host(h, *nf[k], n * 4, dev);
        for (uint64_t i = 0; i < n; ++i) out->pos[i * 4 + k] = out->alive[i] ? h[i] : 0.0f;
    }
    app_to_host(u, c.sactive, ns * 4, dev);
    for (uint64_t j = 0; j < ns; ++j) out->spring[j] = (uint8_t)u[j];
    free(h);
    free(u);
    for (int k = 0; k < 5; ++k) {
        app_free(*nf[k], dev);
        app_free(*sf[k], dev);
        app_free(*su[k], dev);
    }
    for (int k = 0; k < 3; ++k) app_free(*nu[k], dev);
    app_free(c.slot, dev);
    app_free(c.changed, dev);
    return t;
}

#include "structure_malloc.h"

static uint64_t compare(const char *na, const mesh *a, const char *nb, const mesh *b) {
    uint64_t dn = 0, ds = 0, la = 0, lb = 0, sa = 0, sb = 0;
    for (uint64_t i = 0; i < a->n; ++i) {
        int bad = a->alive[i] != b->alive[i];
        for (int k = 0; k < 4; ++k) bad |= a->pos[i * 4 + k] != b->pos[i * 4 + k];
        dn += bad;
        la += a->alive[i];
        lb += b->alive[i];
    }
    for (uint64_t j = 0; j < a->ns; ++j) {
        ds += a->spring[j] != b->spring[j];
        sa += a->spring[j];
        sb += b->spring[j];
    }
    printf("  check: %s vs %s: nodes %llu / %llu, springs %llu / %llu; %llu nodes and %llu springs differ -> %s\n", na,
           nb, (unsigned long long)la, (unsigned long long)lb, (unsigned long long)sa, (unsigned long long)sb,
           (unsigned long long)dn, (unsigned long long)ds, dn || ds ? "FAILED" : "identical");
    return dn + ds;
}

static void write_picture(const char *path, const mesh *m, uint32_t w, uint32_t h) {
    float maxx = 1, maxy = (float)h;
    for (uint64_t i = 0; i < m->n; ++i)
        if (m->alive[i] && m->pos[i * 4] > maxx) maxx = m->pos[i * 4];
    int W = 1024, H = (int)(1024.0f * (maxy + 2) / (maxx + 2));
    if (H < 16) H = 16;
    if (H > 4096) H = 4096;
    unsigned char *img = (unsigned char *)calloc((size_t)W * H * 3, 1);
    for (uint64_t i = 0; i < m->n; ++i) {
        if (!m->alive[i]) continue;
        int x = (int)((m->pos[i * 4] + 1) / (maxx + 2) * (float)(W - 1)),
            y = (int)((m->pos[i * 4 + 1] + 1) / (maxy + 2) * (float)(H - 1));
        if (x < 0 || y < 0 || x >= W || y >= H) continue;
        unsigned char *p = img + ((size_t)y * W + x) * 3;
        int links = m->spring[2 * i] + m->spring[2 * i + 1];
        p[0] = links ? 80 : 255;
        p[1] = links ? 200 : 80;
        p[2] = 255;
    }
    (void)w;
    app_write_ppm(path, W, H, img);
    free(img);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* a run killed by a time limit keeps its log */
    st_ctx c;
    memset(&c, 0, sizeof c);
    c.w = 1225, c.h = 1225;
    uint32_t steps = 500, iters = 40;
    app_opts o = app_opts_new();
    wh_cli_opt cli[] = {WH_CLI_UINT("w", &c.w, "nodes across"),
                        WH_CLI_UINT("h", &c.h, "nodes down"),
                        WH_CLI_UINT("steps", &steps, "steps, the unit of time reported (--iters iterations each)"),
                        WH_CLI_UINT("iters", &iters, "iterations per step"),
                        APP_CLI_COMMON(&o, "all|warpheap|static|malloc"),
                        APP_CLI_LIMITS(&o),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli,
                 "DynaSOAr's structure benchmark (springs that break under a pull) on the object allocator.");
    app_opts_done(&o);
    int dev = o.dev, check = o.check;
    uint64_t n = (uint64_t)c.w * c.h;
    if (c.w < 3 || c.h < 1 || n > 0x7FFFFFF0ull || iters < 1) {
        fprintf(stderr, "structure: bad size\n");
        return 2;
    }
    /* the pulled side moves 0.3 w over the run: strain enough to break */
    c.pull = 0.3f * (float)c.w / (float)((uint64_t)(steps ? steps : 1) * iters);
    char env[512];
    app_env(env, sizeof env, dev);
    printf("structure: %ux%u nodes, %u steps of %u iterations, pull %g per iteration, %s\n", c.w, c.h, steps, iters,
           c.pull, env);
    mesh a, b, mm;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&mm, 0, sizeof mm);
    app_runs r = app_runs_new(steps);
    app_time_cap_opt(&o);
    g_malloc_heap = app_heap_opt(&o, 0);
    if (app_wants(&o, "warpheap")) app_ran(&r, 0, run_warpheap(c, steps, iters, dev, &a, &r.peak[0]));
    if (check || app_wants(&o, "static")) app_ran(&r, 1, run_static(c, steps, iters, dev, &b, &r.peak[1]));
#if defined(__CUDACC__)
    if (dev && app_wants(&o, "malloc")) app_ran(&r, 2, run_malloc(c, steps, iters, &mm, &r.peak[2]));
#endif
    const char *names[3] = {"warpheap", "static", "malloc"};
    app_print_runs(&r, 3, names, "step");
    int rc = 0;
    if (check && a.alive) rc |= compare("warpheap", &a, "static", &b) != 0;
    if (check && mm.alive) rc |= compare("malloc", &mm, "static", &b) != 0;
    if (o.ppm) write_picture(o.ppm, a.alive ? &a : &b, c.w, c.h);
    if (o.csv) app_csv_runs(o.csv, "structure", &r, 3, names, n, env);
    mesh_free(&a);
    mesh_free(&b);
    mesh_free(&mm);
    return rc;
}
