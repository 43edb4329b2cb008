/* SPDX-License-Identifier: MIT */
/* Barnes-Hut on the object allocator: DynaSOAr's "barnes-hut" benchmark
 * (Table 1 and section 6 of the DynaSOAr paper, ECOOP 2019): n-body gravity
 * with the bodies stored in a quad tree whose nodes are allocated and freed as
 * the bodies move (tree maintenance by bottom-up and top-down traversals).
 * Classes NodeBase (abstract: parent, slot in the parent, position or centre
 * of mass, mass), BodyNode and TreeNode (4 child slots, each empty, a body or
 * a subtree).  The paper has no static baseline for it (a tree cannot be
 * allocated statically without changing the algorithm).
 *
 * One iteration:
 *   force    (BodyNode) top-down traversal from the root, opening criterion
 *                       size < theta * distance; forces summed in 2^-32 fixed
 *                       point, so the order of the traversal does not matter;
 *                       the force updates the velocity at once
 *   move     (BodyNode) the position; a body that left its node's box clears
 *                       its slot and becomes homeless (to be inserted at the root)
 *   collapse (TreeNode) bottom-up, one round per depth from the deepest: a node
 *                       with no child is destroyed, a node with a single body
 *                       hands it to its parent and is destroyed
 *   insert   (BodyNode) top-down, in rounds: homeless bodies descend as far as
 *                       they can and bid (atomic max of ~id) for the slot they
 *                       end in; the winner takes an empty slot, or splits a
 *                       slot holding a body by creating a TreeNode
 *   summary  (TreeNode) bottom-up, one round per depth: mass and centre of mass
 *                       of the children in slot order
 * Rounds by depth and bids make the tree (which is the canonical quad tree of
 * the positions) and every float independent of thread scheduling.
 *
 * Check (--check): the same run on the CPU backend with one host thread must
 * give bit-identical bodies (the CUDA build compiles without FMA contraction
 * for this), and the final tree must be a valid quad tree of all bodies.  On
 * the GPU a CUDA device-malloc version (barneshut_malloc.h) runs too and must
 * give the same bits.
 *
 *   wh_barneshut [--n=300000] [--iters=4000] [--theta=0.5] [--dt=0.005] [--mode=all|warpheap|malloc]
 *                [--max-seconds=S] [--fit] [--cpu] [--check]
 *                [--ppm=FILE] [--csv=FILE] [--heap-mb=N]
 */
#include "warpheap/soa.h"
#include "wh_app_bench.h"

/* bodies left out of the tree plus failed allocations of the last run (--fit) */
static uint64_t g_short = 0;

#include <math.h>

/* clang-format off */
#define NODEBASE_FIELDS(F) F(uint64_t, parent) F(float, px) F(float, py) F(float, mass) F(uint32_t, slot)
/* clang-format on */
WH_SOA_CLASS(NodeBase, 0, NODEBASE_FIELDS)
/* A homeless body's parent is its cursor: the node its descent has reached.
 * tag: the body's id and its state (bh_tag). */
/* clang-format off */
#define BODY_FIELDS(F) F(float, vx) F(float, vy) F(uint32_t, tag)
/* clang-format on */
WH_SOA_SUBCLASS(BodyNode, 1, NodeBase, BODY_FIELDS)
/* clang-format off */
#define TREE_FIELDS(F) F(uint64_t, c0) F(uint64_t, c1) F(uint64_t, c2) F(uint64_t, c3) \
    F(uint32_t, b0) F(uint32_t, b1) F(uint32_t, b2) F(uint32_t, b3) F(float, x0) F(float, y0) F(uint32_t, depth)
/* clang-format on */
WH_SOA_SUBCLASS(TreeNode, 2, NodeBase, TREE_FIELDS)

#define BH_G     2.0e-6f
#define BH_DAMP  0.01f
#define BH_FIX   4294967296.0f
#define BH_MAXD  24u /* deepest tree level */
#define BH_STACK (3u * BH_MAXD + 8u)
#define BH_LIMIT 1.5f /* positions stay in [-1.5, 1.5]; the root box is [-2, 2) */
enum { BH_IN_TREE = 0, BH_HOMELESS = 1, BH_LOST = 2 };
enum { CTR_MAXDEPTH = 0, CTR_HOMELESS, CTR_LOST, CTR_N };

typedef struct bh_ctx {
    float dt, theta;
    uint32_t depth; /* the depth a bottom-up round works on */
    uint64_t root;
    uint32_t *ctr; /* CTR_N counters */
} bh_ctx;

WH_INLINE WH_HOST_DEVICE float bh_unit(uint64_t i, uint64_t k) {
    return (float)(wh_hash64(0xBA27ull + i * 8u + k) >> 40) * (1.0f / 16777216.0f);
}
/* The side of a box at depth d: 4 / 2^d, exact, so a node keeps its depth
 * and not its size (nodes are what fills the heap: every byte counts in the
 * space comparison). */
WH_INLINE WH_HOST_DEVICE float bh_size(uint32_t depth) { return 4.0f / (float)(1u << depth); }
WH_INLINE WH_HOST_DEVICE float tn_size(TreeNode t) { return bh_size(WH_GET(TreeNode, t, depth)); }
WH_INLINE WH_HOST_DEVICE uint64_t *tn_child(TreeNode t, uint32_t q) {
    return q == 0   ? WH_FIELD(TreeNode, t, c0)
           : q == 1 ? WH_FIELD(TreeNode, t, c1)
           : q == 2 ? WH_FIELD(TreeNode, t, c2)
                    : WH_FIELD(TreeNode, t, c3);
}
WH_INLINE WH_HOST_DEVICE uint32_t *tn_bid(TreeNode t, uint32_t q) {
    return q == 0   ? WH_FIELD(TreeNode, t, b0)
           : q == 1 ? WH_FIELD(TreeNode, t, b1)
           : q == 2 ? WH_FIELD(TreeNode, t, b2)
                    : WH_FIELD(TreeNode, t, b3);
}
WH_INLINE WH_HOST_DEVICE uint32_t tn_quadrant(TreeNode t, float x, float y) {
    float h = tn_size(t) * 0.5f;
    return (uint32_t)(x >= WH_GET(TreeNode, t, x0) + h) + 2u * (uint32_t)(y >= WH_GET(TreeNode, t, y0) + h);
}
WH_INLINE WH_HOST_DEVICE bool tn_contains(TreeNode t, float x, float y) {
    float x0 = WH_GET(TreeNode, t, x0), y0 = WH_GET(TreeNode, t, y0), s = tn_size(t);
    return x >= x0 && x < x0 + s && y >= y0 && y < y0 + s;
}
/* Inside the box of slot q of t (where a body in that slot must be). */
WH_INLINE WH_HOST_DEVICE bool tn_in_slot(TreeNode t, uint32_t q, float x, float y) {
    return tn_contains(t, x, y) && tn_quadrant(t, x, y) == q;
}
WH_INLINE WH_HOST_DEVICE void bh_pair(float x, float y, float m, float ox, float oy, float om, int64_t *ax,
                                      int64_t *ay) {
    float dx = ox - x, dy = oy - y;
    float d2 = dx * dx + dy * dy;
    if (d2 == 0.0f) return;
    float dist = sqrtf(d2);
    float f = BH_G * m * om / ((d2 + BH_DAMP) * dist);
    *ax += (int64_t)(f * dx * BH_FIX);
    *ay += (int64_t)(f * dy * BH_FIX);
}
#define BH_BID(id)    (0xFFFFFFFFu - (id))
/* A body's tag: its id in the low 30 bits, its state (BH_IN_TREE,
 * BH_HOMELESS, BH_LOST) in the top two -- one word where two would take
 * 4 more bytes of every body. */
#define BH_ID_BITS    30u
#define BH_MAX_BODIES (1ull << BH_ID_BITS)
WH_INLINE WH_HOST_DEVICE uint32_t bh_tag(uint32_t id, uint32_t state) { return id | state << BH_ID_BITS; }
WH_INLINE WH_HOST_DEVICE uint32_t bh_id(uint32_t tag) { return tag & (uint32_t)(BH_MAX_BODIES - 1u); }
WH_INLINE WH_HOST_DEVICE uint32_t bh_state(uint32_t tag) { return tag >> BH_ID_BITS; }
WH_INLINE WH_HOST_DEVICE void bh_set_state(uint32_t *tag, uint32_t state) { *tag = bh_tag(bh_id(*tag), state); }

/* ---- set-up ------------------------------------------------------------------------- */
/* Body i: a square cloud, denser in the middle, in slow rotation (no
 * transcendental functions: the GPU and the CPU backend start from the same bits). */
WH_INLINE WH_HOST_DEVICE void bh_body0(uint64_t i, float *x, float *y, float *m, float *vx, float *vy) {
    float scale = 0.9f * bh_unit(i, 0) + 0.02f;
    *x = (2.0f * bh_unit(i, 1) - 1.0f) * scale;
    *y = (2.0f * bh_unit(i, 3) - 1.0f) * scale;
    *m = 0.5f + bh_unit(i, 2);
    *vx = -*y * 0.05f;
    *vy = *x * 0.05f;
}
WH_INLINE WH_HOST_DEVICE void root_init(const wh_soa *s, TreeNode t, uint64_t i, const bh_ctx *c) {
    (void)s;
    (void)i;
    (void)c;
    WH_GET(TreeNode, t, base.parent) = 0;
    WH_GET(TreeNode, t, base.slot) = 0;
    WH_GET(TreeNode, t, base.px) = WH_GET(TreeNode, t, base.py) = WH_GET(TreeNode, t, base.mass) = 0.0f;
    for (uint32_t q = 0; q < 4; ++q) {
        *tn_child(t, q) = 0;
        *tn_bid(t, q) = 0;
    }
    WH_GET(TreeNode, t, x0) = WH_GET(TreeNode, t, y0) = -2.0f;
    WH_GET(TreeNode, t, depth) = 0;
}
WH_INLINE WH_HOST_DEVICE void body_init(const wh_soa *s, BodyNode b, uint64_t i, const bh_ctx *c) {
    (void)s;
    float x, y, m, vx, vy;
    bh_body0(i, &x, &y, &m, &vx, &vy);
    WH_GET(BodyNode, b, base.px) = x;
    WH_GET(BodyNode, b, base.py) = y;
    WH_GET(BodyNode, b, base.mass) = m;
    WH_GET(BodyNode, b, base.parent) = c->root; /* homeless: the cursor */
    WH_GET(BodyNode, b, base.slot) = 0;
    WH_GET(BodyNode, b, vx) = vx;
    WH_GET(BodyNode, b, vy) = vy;
    WH_GET(BodyNode, b, tag) = bh_tag((uint32_t)i, BH_HOMELESS);
}
WH_SOA_PARALLEL_NEW(TreeNode, root_init, bh_ctx)
WH_SOA_PARALLEL_NEW(BodyNode, body_init, bh_ctx)

/* ---- force: top-down traversal, then the velocity ------------------------------------------ */
/* The force goes straight into the velocity: the traversal reads positions
 * and masses only, so no body's velocity is read while others change theirs,
 * and a body needs no force fields (the same float operations as a separate
 * kick, so the same bits). */
WH_INLINE WH_HOST_DEVICE void bh_kick(float *vx, float *vy, int64_t ax, int64_t ay, float m, float dt) {
    float fx = (float)((double)ax / BH_FIX), fy = (float)((double)ay / BH_FIX);
    *vx += fx / m * dt;
    *vy += fy / m * dt;
}
WH_INLINE WH_HOST_DEVICE void body_force(const wh_soa *s, BodyNode b, const bh_ctx *c) {
    float x = WH_GET(BodyNode, b, base.px), y = WH_GET(BodyNode, b, base.py), m = WH_GET(BodyNode, b, base.mass);
    int64_t ax = 0, ay = 0;
    uint64_t stack[BH_STACK];
    uint32_t top = 0;
    stack[top++] = c->root;
    while (top) { /* bounded: each node is pushed at most once */
        uint64_t p = stack[--top];
        NodeBase o = NodeBase_from(p);
        float om = WH_GET(NodeBase, o, mass);
        if (p == b.p || om == 0.0f) continue;
        float ox = WH_GET(NodeBase, o, px), oy = WH_GET(NodeBase, o, py);
        if (WH_SOA_IS(s, p, TreeNode)) {
            TreeNode t = TreeNode_from(p);
            float dx = ox - x, dy = oy - y, size = tn_size(t);
            if (size * size >= c->theta * c->theta * (dx * dx + dy * dy) && top + 4u <= BH_STACK) {
                for (uint32_t q = 0; q < 4; ++q) {
                    uint64_t ch = *tn_child(t, q);
                    if (ch) stack[top++] = ch;
                }
                continue;
            }
        }
        bh_pair(x, y, m, ox, oy, om, &ax, &ay);
    }
    bh_kick(&WH_GET(BodyNode, b, vx), &WH_GET(BodyNode, b, vy), ax, ay, m, c->dt);
}

/* ---- move; leaving bodies clear their slot ----------------------------------------------- */
WH_INLINE WH_HOST_DEVICE void bh_clamp(float *p, float *v) {
    if (*p < -BH_LIMIT) {
        *p = -BH_LIMIT;
        *v = -*v;
    }
    if (*p > BH_LIMIT) {
        *p = BH_LIMIT;
        *v = -*v;
    }
}
WH_INLINE WH_HOST_DEVICE void body_move(const wh_soa *s, BodyNode b, const bh_ctx *c) {
    (void)s;
    float *px = &WH_GET(BodyNode, b, base.px), *py = &WH_GET(BodyNode, b, base.py);
    float *vx = &WH_GET(BodyNode, b, vx), *vy = &WH_GET(BodyNode, b, vy);
    *px += *vx * c->dt;
    *py += *vy * c->dt;
    bh_clamp(px, vx);
    bh_clamp(py, vy);
    uint32_t *tag = &WH_GET(BodyNode, b, tag);
    if (bh_state(*tag) == BH_LOST) {
        bh_set_state(tag, BH_HOMELESS);
        WH_GET(BodyNode, b, base.parent) = c->root;
        return;
    }
    TreeNode t = TreeNode_from(WH_GET(BodyNode, b, base.parent));
    if (tn_in_slot(t, WH_GET(BodyNode, b, base.slot), *px, *py)) return;
    *tn_child(t, WH_GET(BodyNode, b, base.slot)) = 0;
    WH_GET(BodyNode, b, base.parent) = c->root; /* the cursor, from the top */
    bh_set_state(tag, BH_HOMELESS);
}

/* ---- collapse: bottom-up, one depth per round ----------------------------------------------- */
WH_INLINE WH_HOST_DEVICE void tree_collapse(const wh_soa *s, TreeNode t, const bh_ctx *c) {
    if (WH_GET(TreeNode, t, depth) != c->depth || c->depth == 0) return;
    uint32_t kids = 0;
    uint64_t only = 0;
    for (uint32_t q = 0; q < 4; ++q) {
        uint64_t ch = *tn_child(t, q);
        if (ch) {
            ++kids;
            only = ch;
        }
    }
    if (kids > 1 || (kids == 1 && !WH_SOA_IS(s, only, BodyNode))) return;
    TreeNode parent = TreeNode_from(WH_GET(TreeNode, t, base.parent));
    uint32_t slot = WH_GET(TreeNode, t, base.slot);
    *tn_child(parent, slot) = only; /* the body, or nothing */
    if (only) {
        WH_GET(NodeBase, NodeBase_from(only), parent) = parent.p;
        WH_GET(NodeBase, NodeBase_from(only), slot) = slot;
    }
    WH_SOA_DESTROY(s, t);
}

/* ---- insert: top-down, bids for slots ---------------------------------------------------------- */
WH_INLINE WH_HOST_DEVICE void body_bid(const wh_soa *s, BodyNode b, const bh_ctx *c) {
    if (bh_state(WH_GET(BodyNode, b, tag)) != BH_HOMELESS) return;
    float x = WH_GET(BodyNode, b, base.px), y = WH_GET(BodyNode, b, base.py);
    TreeNode t = TreeNode_from(WH_GET(BodyNode, b, base.parent)); /* the cursor */
    for (uint32_t d = 0; d <= BH_MAXD + 1u; ++d) {                /* descend through subtrees */
        uint64_t ch = *tn_child(t, tn_quadrant(t, x, y));
        if (!ch || !WH_SOA_IS(s, ch, TreeNode)) break;
        t = TreeNode_from(ch);
    }
    WH_GET(BodyNode, b, base.parent) = t.p;
    (void)wh_atomic_fetch_max(tn_bid(t, tn_quadrant(t, x, y)), BH_BID(bh_id(WH_GET(BodyNode, b, tag))), WH_RELAXED);
    (void)c;
}
WH_INLINE WH_HOST_DEVICE void body_place(const wh_soa *s, BodyNode b, const bh_ctx *c) {
    if (bh_state(WH_GET(BodyNode, b, tag)) != BH_HOMELESS) return;
    float x = WH_GET(BodyNode, b, base.px), y = WH_GET(BodyNode, b, base.py);
    TreeNode t = TreeNode_from(WH_GET(BodyNode, b, base.parent)); /* the cursor */
    uint32_t q = tn_quadrant(t, x, y);
    uint32_t *bid = tn_bid(t, q);
    if (wh_atomic_load(bid, WH_RELAXED) != BH_BID(bh_id(WH_GET(BodyNode, b, tag)))) {
        (void)wh_atomic_fetch_add(&c->ctr[CTR_HOMELESS], 1u, WH_RELAXED); /* lost the bid: next round */
        return;
    }
    wh_atomic_store(bid, 0u, WH_RELAXED);
    uint64_t *slot = tn_child(t, q);
    if (!*slot) {    /* empty: take it */
        *slot = b.p; /* the cursor t becomes the parent */
        WH_GET(BodyNode, b, base.slot) = q;
        bh_set_state(&WH_GET(BodyNode, b, tag), BH_IN_TREE);
        return;
    }
    /* a body: split the slot with a new TreeNode and move that body into it */
    uint32_t depth = WH_GET(TreeNode, t, depth) + 1u;
    TreeNode n = depth > BH_MAXD ? TreeNode_from(0) : WH_SOA_NEW(s, TreeNode);
    if (TreeNode_is_null(n)) { /* too deep (or no memory): left out this iteration */
        bh_set_state(&WH_GET(BodyNode, b, tag), BH_LOST);
        (void)wh_atomic_fetch_add(&c->ctr[CTR_LOST], 1u, WH_RELAXED);
        return;
    }
    float h = tn_size(t) * 0.5f;
    WH_GET(TreeNode, n, x0) = WH_GET(TreeNode, t, x0) + (float)(q & 1u) * h;
    WH_GET(TreeNode, n, y0) = WH_GET(TreeNode, t, y0) + (float)(q >> 1) * h;
    WH_GET(TreeNode, n, depth) = depth;
    WH_GET(TreeNode, n, base.parent) = t.p;
    WH_GET(TreeNode, n, base.slot) = q;
    WH_GET(TreeNode, n, base.mass) = 0.0f;
    for (uint32_t k = 0; k < 4; ++k) {
        *tn_child(n, k) = 0;
        *tn_bid(n, k) = 0;
    }
    NodeBase other = NodeBase_from(*slot);
    uint32_t oq = tn_quadrant(n, WH_GET(NodeBase, other, px), WH_GET(NodeBase, other, py));
    *tn_child(n, oq) = other.p;
    WH_GET(NodeBase, other, parent) = n.p;
    WH_GET(NodeBase, other, slot) = oq;
    *slot = n.p;
    (void)wh_atomic_fetch_max(&c->ctr[CTR_MAXDEPTH], depth, WH_RELAXED);
    (void)wh_atomic_fetch_add(&c->ctr[CTR_HOMELESS], 1u, WH_RELAXED); /* still homeless: descends next round */
}

/* ---- summary: bottom-up, one depth per round ------------------------------------------------ */
WH_INLINE WH_HOST_DEVICE void tree_summary(const wh_soa *s, TreeNode t, const bh_ctx *c) {
    (void)s;
    if (WH_GET(TreeNode, t, depth) != c->depth) return;
    float m = 0.0f, mx = 0.0f, my = 0.0f;
    for (uint32_t q = 0; q < 4; ++q) {
        uint64_t ch = *tn_child(t, q);
        if (!ch) continue;
        NodeBase o = NodeBase_from(ch);
        float om = WH_GET(NodeBase, o, mass);
        m += om;
        mx += om * WH_GET(NodeBase, o, px);
        my += om * WH_GET(NodeBase, o, py);
    }
    WH_GET(TreeNode, t, base.mass) = m;
    float h = tn_size(t) * 0.5f;
    WH_GET(TreeNode, t, base.px) = m > 0.0f ? mx / m : WH_GET(TreeNode, t, x0) + h;
    WH_GET(TreeNode, t, base.py) = m > 0.0f ? my / m : WH_GET(TreeNode, t, y0) + h;
}
WH_SOA_PARALLEL_DO(BodyNode, body_force, bh_ctx)
WH_SOA_PARALLEL_DO(BodyNode, body_move, bh_ctx)
WH_SOA_PARALLEL_DO(TreeNode, tree_collapse, bh_ctx)
WH_SOA_PARALLEL_DO(BodyNode, body_bid, bh_ctx)
WH_SOA_PARALLEL_DO(BodyNode, body_place, bh_ctx)
WH_SOA_PARALLEL_DO(TreeNode, tree_summary, bh_ctx)

/* ---- driver ----------------------------------------------------------------------------------- */
static void ctr_get(const bh_ctx *c, uint32_t *h, int dev) { app_to_host(h, c->ctr, CTR_N * 4, dev); }
static void ctr_set(bh_ctx *c, const uint32_t *h, int dev) { app_to_dev(c->ctr, h, CTR_N * 4, dev); }

/* Homeless bodies into the tree, then the summaries.  Returns the bodies left out. */
static uint32_t bh_rebuild(wh_soa *soa, bh_ctx *c, uint64_t n, int dev, uint64_t *rounds) {
    uint32_t h[CTR_N];
    ctr_get(c, h, dev);
    uint32_t lost = 0;
    for (uint64_t r = 0;; ++r) {
        if (r > n * (BH_MAXD + 1u) + 64u) {
            fprintf(stderr, "barneshut: insertion did not finish\n");
            exit(1);
        }
        h[CTR_HOMELESS] = 0;
        h[CTR_LOST] = 0;
        ctr_set(c, h, dev);
        APP_TRY(BodyNode_parallel_do_body_bid(soa, *c));
        APP_TRY(BodyNode_parallel_do_body_place(soa, *c));
        ctr_get(c, h, dev);
        lost += h[CTR_LOST];
        ++*rounds;
        if (!h[CTR_HOMELESS]) break;
    }
    for (int d = (int)h[CTR_MAXDEPTH]; d >= 0; --d) {
        c->depth = (uint32_t)d;
        APP_TRY(TreeNode_parallel_do_tree_summary(soa, *c));
    }
    return lost;
}

typedef struct bodies {
    float *r;
    uint64_t n;
} bodies; /* rows id, px, py, vx, vy, m sorted by id */
#define BH_ROW 6

/* Walk the tree in a host image: every body once, inside its box, links consistent. */
static uint64_t tree_check(const wh_soa *img, const wh_soa *soa, uint64_t root, uint64_t n_expect, uint32_t lost,
                           uint64_t *tnodes) {
    uint64_t bad = 0, bodies_seen = 0;
    uint64_t stack[BH_STACK + 8]; /* DFS pushes at most 3 per level beyond the path */
    size_t top = 0;
#define BH_HOST(p)                                                                                         \
    (((p) & ~WH_SOA_ADDR_MASK) |                                                                           \
     (uint64_t)(uintptr_t)((uint8_t *)img->mem + ((uint8_t *)wh_soa_ptr_block(p) - (uint8_t *)soa->mem)) | \
     wh_soa_ptr_slot(p))
    stack[top++] = root;
    *tnodes = 0;
    while (top) {
        uint64_t p = stack[--top];
        TreeNode t = TreeNode_from(BH_HOST(p));
        ++*tnodes;
        for (uint32_t q = 0; q < 4; ++q) {
            uint64_t ch = *tn_child(t, q);
            if (!ch) continue;
            NodeBase o = NodeBase_from(BH_HOST(ch));
            bad += WH_GET(NodeBase, o, parent) != p || WH_GET(NodeBase, o, slot) != q;
            if (WH_SOA_IS(img, ch, TreeNode)) {
                if (top < BH_STACK + 8)
                    stack[top++] = ch;
                else
                    ++bad;
            } else {
                ++bodies_seen;
                bad += !tn_contains(t, WH_GET(NodeBase, o, px), WH_GET(NodeBase, o, py)) ||
                       tn_quadrant(t, WH_GET(NodeBase, o, px), WH_GET(NodeBase, o, py)) != q;
            }
        }
    }
    bad += bodies_seen + lost != n_expect;
    return bad;
}

static double run(uint64_t n, int iters, bh_ctx c, size_t heap, int dev, uint32_t threads, bodies *out, size_t *peak,
                  uint64_t *bad_tree) {
    wh_soa_type_desc types[] = {WH_SOA_ABSTRACT_TYPE(NodeBase), WH_SOA_TYPE(BodyNode), WH_SOA_TYPE(TreeNode)};
    wh_soa_config cfg = {heap, types, 3, dev != 0, threads, NULL, false};
    wh_soa soa;
    APP_TRY(wh_soa_create(&soa, &cfg));
    c.ctr = (uint32_t *)app_alloc(CTR_N * 4, dev);
    APP_TRY(TreeNode_parallel_new_root_init(&soa, 1, c));
    { /* the root's pointer: the only TreeNode so far */
        wh_soa img;
        void *owned;
        APP_TRY(wh_soa_host_image(&soa, &img, &owned));
        wh_soa_iter it;
        wh_soa_iter_begin(&it, &img, TreeNode_TYPE);
        uint64_t p = wh_soa_iter_next(&it, &img);
        c.root = (p & ~WH_SOA_ADDR_MASK) |
                 (uint64_t)(uintptr_t)((uint8_t *)soa.mem + ((uint8_t *)wh_soa_ptr_block(p) - (uint8_t *)img.mem)) |
                 wh_soa_ptr_slot(p);
        free(owned);
    }
    APP_TRY(BodyNode_parallel_new_body_init(&soa, n, c));
    uint64_t rounds = 0;
    uint32_t lost = bh_rebuild(&soa, &c, n, dev, &rounds);
    *peak = app_heap_used(&soa);
    int every = iters / 20 + 1 < 16 ? iters / 20 + 1 : 16; /* peak-memory samples */
    app_sync(dev);
    double t0 = app_now(), paused = 0;
    for (int it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 1, dev, t0 + paused)
        APP_TRY(BodyNode_parallel_do_body_force(&soa, c));
        APP_TRY(BodyNode_parallel_do_body_move(&soa, c));
        uint32_t h[CTR_N];
        ctr_get(&c, h, dev);
        for (int d = (int)h[CTR_MAXDEPTH]; d >= 1; --d) {
            c.depth = (uint32_t)d;
            APP_TRY(TreeNode_parallel_do_tree_collapse(&soa, c));
        }
        lost = bh_rebuild(&soa, &c, n, dev, &rounds);
        if (it % every == 0) app_sample_peak(&soa, peak, &paused);
    }
    app_sync(dev);
    double t = app_now() - t0 - paused;
    app_heap_check(&soa, "barneshut");
    wh_soa img;
    void *owned;
    APP_TRY(wh_soa_host_image(&soa, &img, &owned));
    uint64_t tnodes = 0;
    *bad_tree = tree_check(&img, &soa, c.root, n, lost, &tnodes);
    out->r = (float *)malloc(n * BH_ROW * sizeof(float));
    out->n = 0;
    wh_soa_iter itr;
    wh_soa_iter_begin(&itr, &img, BodyNode_TYPE);
    for (uint64_t p; (p = wh_soa_iter_next(&itr, &img)) != 0 && out->n < n;) {
        BodyNode b = BodyNode_from(p);
        uint32_t id = bh_id(WH_GET(BodyNode, b, tag));
        float *r = out->r + (uint64_t)id * BH_ROW;
        r[0] = (float)id;
        r[1] = WH_GET(BodyNode, b, base.px);
        r[2] = WH_GET(BodyNode, b, base.py);
        r[3] = WH_GET(BodyNode, b, vx);
        r[4] = WH_GET(BodyNode, b, vy);
        r[5] = WH_GET(BodyNode, b, base.mass);
        ++out->n;
    }
    uint32_t h[CTR_N];
    ctr_get(&c, h, dev);
    {
        wh_soa_stats fs;
        APP_TRY(wh_soa_stats_get(&soa, &fs));
        g_short = lost + fs.counters[WH_SOA_CTR_FAILED_ALLOCS] + fs.counters[WH_SOA_CTR_RETRY_LIMIT];
    }
    printf("  %s: %llu tree nodes, depth %u, %llu insertion rounds, %u bodies left out, tree check: %llu problems\n",
           dev ? "gpu" : "cpu", (unsigned long long)tnodes, h[CTR_MAXDEPTH], (unsigned long long)rounds, lost,
           (unsigned long long)*bad_tree);
    free(owned);
    app_free(c.ctr, dev);
    APP_DESTROY(&soa);
    return t;
}

#include "barneshut_malloc.h"

static uint64_t compare(const char *na, const bodies *a, const char *nb, const bodies *b) {
    uint64_t diff = a->n != b->n;
    double maxd = 0;
    for (uint64_t i = 0; i < a->n * BH_ROW && i < b->n * BH_ROW; ++i) {
        diff += a->r[i] != b->r[i];
        double d = fabs((double)a->r[i] - (double)b->r[i]);
        if (d > maxd) maxd = d;
    }
    printf("  check: %s vs %s: %llu / %llu bodies, %llu values differ, max diff %.3g -> %s\n", na, nb,
           (unsigned long long)a->n, (unsigned long long)b->n, (unsigned long long)diff, maxd,
           diff ? "FAILED" : "identical");
    return diff;
}

static void write_picture(const char *path, const bodies *s) {
    int w = 900, h = 900;
    unsigned char *img = (unsigned char *)calloc((size_t)w * h * 3, 1);
    for (uint64_t i = 0; i < s->n; ++i) {
        const float *r = s->r + i * BH_ROW;
        int x = (int)((r[1] + 1.5f) / 3.0f * (float)(w - 1)), y = (int)((r[2] + 1.5f) / 3.0f * (float)(h - 1));
        if (x < 0 || y < 0 || x >= w || y >= h) continue;
        unsigned char *p = img + ((size_t)y * w + x) * 3;
        p[0] = (unsigned char)(p[0] + 60 > 255 ? 255 : p[0] + 60);
        p[1] = (unsigned char)(p[1] + 40 > 255 ? 255 : p[1] + 40);
        p[2] = 255;
    }
    app_write_ppm(path, w, h, img);
    free(img);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* a run killed by a time limit keeps its log */
    uint64_t n = 300000;
    int iters = 4000, fit = 0;
    bh_ctx c;
    memset(&c, 0, sizeof c);
    c.dt = 0.005f;
    c.theta = 0.5f;
    app_opts o = app_opts_new();
    wh_cli_opt cli[] = {
        WH_CLI_UINT("n", &n, "bodies"),
        WH_CLI_INT("iters", &iters, "iterations"),
        WH_CLI_DOUBLE("theta", &c.theta, "opening criterion: a node is opened when its size >= theta x distance"),
        WH_CLI_DOUBLE("dt", &c.dt, "time step"),
        WH_CLI_FLAG("fit", &fit, "exit 3 when a body or an allocation was lost (the problem does not fit)"),
        APP_CLI_COMMON(&o, "all|warpheap|malloc"),
        APP_CLI_LIMITS(&o),
        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "DynaSOAr's barnes-hut benchmark (a quad tree of bodies) on the object allocator.");
    app_opts_done(&o);
    int dev = o.dev, check = o.check;
    g_malloc_heap = app_heap_opt(&o, 0);
    size_t heap = g_malloc_heap ? g_malloc_heap : (size_t)n * 400 + ((size_t)16 << 20);
    if (n < 1 || n > BH_MAX_BODIES || iters < 0) {
        fprintf(stderr, "barneshut: bad size\n");
        return 2;
    }
    char env[512];
    app_env(env, sizeof env, dev);
    printf("barneshut: %llu bodies, %d iterations, theta %g, dt %g, heap %zu MiB, %s\n", (unsigned long long)n, iters,
           c.theta, c.dt, heap >> 20, env);
    bodies a = {0, 0}, b = {0, 0};
    size_t peak = 0, peak_b = 0;
    uint64_t bad_a = 0, bad_b = 0;
    int rc = 0;
    app_time_cap_opt(&o);
    double t = -1;
    long long done = iters;
    if (app_wants(&o, "warpheap")) {
        t = run(n, iters, c, heap, dev, 0, &a, &peak, &bad_a);
        app_take_done(&done);
        app_print_run("warpheap", t, done, "iteration", peak, "");
        rc |= bad_a != 0;
        if (fit && g_short) {
            printf("  warpheap: %llu bodies or allocations short -> does not fit\n", (unsigned long long)g_short);
            rc |= 3;
        }
    }
    double t_m = -1;
    size_t peak_m = 0;
    long long done_m = iters;
#if defined(__CUDACC__)
    bodies mm = {0, 0};
    if (dev && app_wants(&o, "malloc")) {
        t_m = run_malloc(n, iters, c, &mm, &peak_m);
        app_take_done(&done_m);
        app_print_run("malloc", t_m, done_m, "iteration", peak_m, " (reserved)");
        if (fit && g_short) {
            printf("  malloc: %llu bodies or allocations short -> does not fit\n", (unsigned long long)g_short);
            rc |= 3;
        }
        if (check && a.r) rc |= compare("malloc", &mm, "gpu", &a) != 0;
        free(mm.r);
    }
#endif
    if (check && a.r) { /* the reference: CPU backend, one host thread */
        run(n, iters, c, heap, 0, 1, &b, &peak_b, &bad_b);
        rc |= bad_b != 0;
        rc |= compare(dev ? "gpu" : "cpu (4 threads)", &a, "cpu (1 thread)", &b) != 0;
    }
    if (o.ppm && a.r) write_picture(o.ppm, &a);
    if (o.csv) {
        const char *names[2] = {"warpheap", "malloc"};
        app_runs r = {{t, t_m, -1}, {done, done_m, 0}, {peak, peak_m, 0}};
        app_csv_runs(o.csv, "barneshut", &r, 2, names, n, env);
    }
    free(a.r);
    free(b.r);
    return rc;
}
