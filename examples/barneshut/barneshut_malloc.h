/* SPDX-License-Identifier: MIT */
/* Barnes-Hut (DynaSOAr's barnes-hut, Table 1) on CUDA's device malloc, GPU
 * only: the paper's "other allocators".  Bodies and tree nodes are malloc'd
 * structs (array of structures) with a common header; the do-alls run over an
 * array of body pointers (bodies live for the whole run) and an array of
 * tree-node pointers, rebuilt after the collapse rounds and after insertion
 * (atomic appends); collapsed nodes are freed after the rebuild.  Same rules,
 * rounds and bids as the warpheap version in barneshut.c (included from it),
 * so --check requires bit-identical bodies. */
#if defined(__CUDACC__)
typedef struct bm_node {
    uint32_t tree, slot;
    struct bm_node *parent;
    float px, py, mass;
} bm_node;
typedef struct bm_tree {
    bm_node h;
    bm_node *c[4];
    uint32_t bid[4];
    float x0, y0; /* the side: bh_size(depth) */
    uint32_t depth, dead;
} bm_tree;
typedef struct bm_body {
    bm_node h; /* homeless: h.parent is the cursor */
    float vx, vy;
    uint32_t tag; /* id and state: bh_tag */
} bm_body;
typedef struct bm_ctx {
    bh_ctx c; /* dt, theta, depth, counters */
    bm_tree *root;
    bm_body **bodies;
    uint32_t nb, cap;
    bm_tree **items, **next, **fresh, **dead;
    uint32_t *cnt; /* n, n_next, n_fresh, n_dead */
    unsigned long long *fails;
} bm_ctx;
#define BM_I() uint32_t i = blockIdx.x * blockDim.x + threadIdx.x

static __device__ uint32_t bm_quadrant(const bm_tree *t, float x, float y) {
    float h = bh_size(t->depth) * 0.5f;
    return (uint32_t)(x >= t->x0 + h) + 2u * (uint32_t)(y >= t->y0 + h);
}
static __device__ bool bm_in_slot(const bm_tree *t, uint32_t q, float x, float y) {
    float s = bh_size(t->depth);
    return x >= t->x0 && x < t->x0 + s && y >= t->y0 && y < t->y0 + s && bm_quadrant(t, x, y) == q;
}
static __device__ bm_tree *bm_new_tree(bm_ctx *m, bm_tree *parent, uint32_t q) {
    bm_tree *t = (bm_tree *)malloc(sizeof(bm_tree));
    if (!t) {
        atomicAdd(m->fails, 1ull);
        return NULL;
    }
    uint32_t f = atomicAdd(&m->cnt[2], 1u);
    if (f >= m->cap) {
        free(t);
        atomicAdd(m->fails, 1ull);
        return NULL;
    }
    m->fresh[f] = t;
    t->h.tree = 1;
    t->h.parent = parent ? &parent->h : NULL;
    t->h.slot = q;
    t->h.px = t->h.py = t->h.mass = 0.0f;
    for (uint32_t k = 0; k < 4; ++k) {
        t->c[k] = NULL;
        t->bid[k] = 0;
    }
    t->dead = 0;
    if (!parent) {
        t->x0 = t->y0 = -2.0f;
        t->depth = 0;
        return t;
    }
    float h = bh_size(parent->depth) * 0.5f;
    t->x0 = parent->x0 + (float)(q & 1u) * h;
    t->y0 = parent->y0 + (float)(q >> 1) * h;
    t->depth = parent->depth + 1u;
    return t;
}
static __global__ void bm_make_root(bm_ctx m, bm_tree **out) { *out = bm_new_tree(&m, NULL, 0); }
static __global__ void bm_init(bm_ctx m) {
    BM_I();
    if (i >= m.nb) return;
    bm_body *b = (bm_body *)malloc(sizeof(bm_body));
    m.bodies[i] = b;
    if (!b) {
        atomicAdd(m.fails, 1ull);
        return;
    }
    bh_body0(i, &b->h.px, &b->h.py, &b->h.mass, &b->vx, &b->vy);
    b->h.tree = 0;
    b->h.parent = &m.root->h;
    b->h.slot = 0; /* homeless: the cursor */
    b->tag = bh_tag(i, BH_HOMELESS);
}
static __global__ void bm_force(bm_ctx m) {
    BM_I();
    if (i >= m.nb) return;
    bm_body *b = m.bodies[i];
    float x = b->h.px, y = b->h.py, mass = b->h.mass;
    int64_t ax = 0, ay = 0;
    const bm_node *stack[BH_STACK];
    uint32_t top = 0;
    stack[top++] = &m.root->h;
    while (top) {
        const bm_node *o = stack[--top];
        if (o == &b->h || o->mass == 0.0f) continue;
        if (o->tree) {
            const bm_tree *t = (const bm_tree *)o;
            float dx = o->px - x, dy = o->py - y;
            float size = bh_size(t->depth);
            if (size * size >= m.c.theta * m.c.theta * (dx * dx + dy * dy) && top + 4u <= BH_STACK) {
                for (uint32_t q = 0; q < 4; ++q)
                    if (t->c[q]) stack[top++] = t->c[q];
                continue;
            }
        }
        bh_pair(x, y, mass, o->px, o->py, o->mass, &ax, &ay);
    }
    bh_kick(&b->vx, &b->vy, ax, ay, mass, m.c.dt);
}
static __global__ void bm_move(bm_ctx m) {
    BM_I();
    if (i >= m.nb) return;
    bm_body *b = m.bodies[i];
    b->h.px += b->vx * m.c.dt;
    b->h.py += b->vy * m.c.dt;
    bh_clamp(&b->h.px, &b->vx);
    bh_clamp(&b->h.py, &b->vy);
    if (bh_state(b->tag) == BH_LOST) {
        bh_set_state(&b->tag, BH_HOMELESS);
        b->h.parent = &m.root->h;
        return;
    }
    bm_tree *t = (bm_tree *)b->h.parent;
    if (bm_in_slot(t, b->h.slot, b->h.px, b->h.py)) return;
    t->c[b->h.slot] = NULL;
    b->h.parent = &m.root->h; /* the cursor, from the top */
    bh_set_state(&b->tag, BH_HOMELESS);
}
static __global__ void bm_collapse(bm_ctx m) {
    BM_I();
    if (i >= m.cnt[0]) return;
    bm_tree *t = m.items[i];
    if (t->dead || t->depth != m.c.depth || m.c.depth == 0) return;
    uint32_t kids = 0;
    bm_node *only = NULL;
    for (uint32_t q = 0; q < 4; ++q)
        if (t->c[q]) {
            ++kids;
            only = t->c[q];
        }
    if (kids > 1 || (kids == 1 && only->tree)) return;
    bm_tree *parent = (bm_tree *)t->h.parent;
    parent->c[t->h.slot] = only;
    if (only) {
        only->parent = &parent->h;
        only->slot = t->h.slot;
    }
    t->dead = 1;
    uint32_t d = atomicAdd(&m.cnt[3], 1u);
    if (d < m.cap)
        m.dead[d] = t;
    else
        atomicAdd(m.fails, 1ull);
}
static __global__ void bm_bid(bm_ctx m) {
    BM_I();
    if (i >= m.nb) return;
    bm_body *b = m.bodies[i];
    if (bh_state(b->tag) != BH_HOMELESS) return;
    bm_tree *t = (bm_tree *)b->h.parent; /* the cursor */
    for (uint32_t d = 0; d <= BH_MAXD + 1u; ++d) {
        bm_node *ch = t->c[bm_quadrant(t, b->h.px, b->h.py)];
        if (!ch || !ch->tree) break;
        t = (bm_tree *)ch;
    }
    b->h.parent = &t->h;
    atomicMax(&t->bid[bm_quadrant(t, b->h.px, b->h.py)], BH_BID(bh_id(b->tag)));
}
static __global__ void bm_place(bm_ctx m) {
    BM_I();
    if (i >= m.nb) return;
    bm_body *b = m.bodies[i];
    if (bh_state(b->tag) != BH_HOMELESS) return;
    bm_tree *t = (bm_tree *)b->h.parent; /* the cursor */
    uint32_t q = bm_quadrant(t, b->h.px, b->h.py);
    if (atomicAdd(&t->bid[q], 0u) != BH_BID(bh_id(b->tag))) {
        atomicAdd(&m.c.ctr[CTR_HOMELESS], 1u);
        return;
    }
    atomicExch(&t->bid[q], 0u);
    if (!t->c[q]) {
        t->c[q] = &b->h; /* the cursor t becomes the parent */
        b->h.slot = q;
        bh_set_state(&b->tag, BH_IN_TREE);
        return;
    }
    bm_tree *n = t->depth + 1u > BH_MAXD ? NULL : bm_new_tree(&m, t, q);
    if (!n) {
        bh_set_state(&b->tag, BH_LOST);
        atomicAdd(&m.c.ctr[CTR_LOST], 1u);
        return;
    }
    bm_node *other = t->c[q];
    uint32_t oq = bm_quadrant(n, other->px, other->py);
    n->c[oq] = other;
    other->parent = &n->h;
    other->slot = oq;
    t->c[q] = &n->h;
    atomicMax(&m.c.ctr[CTR_MAXDEPTH], n->depth);
    atomicAdd(&m.c.ctr[CTR_HOMELESS], 1u);
}
static __global__ void bm_summary(bm_ctx m) {
    BM_I();
    if (i >= m.cnt[0]) return;
    bm_tree *t = m.items[i];
    if (t->depth != m.c.depth) return;
    float mass = 0.0f, mx = 0.0f, my = 0.0f;
    for (uint32_t q = 0; q < 4; ++q) {
        const bm_node *o = t->c[q];
        if (!o) continue;
        mass += o->mass;
        mx += o->mass * o->px;
        my += o->mass * o->py;
    }
    t->h.mass = mass;
    float h = bh_size(t->depth) * 0.5f;
    t->h.px = mass > 0.0f ? mx / mass : t->x0 + h;
    t->h.py = mass > 0.0f ? my / mass : t->y0 + h;
}
static __global__ void bm_compact(bm_ctx m) {
    BM_I();
    uint32_t n = m.cnt[0], nf = m.cnt[2];
    uint32_t k;
    if (i < n && !m.items[i]->dead) {
        if ((k = atomicAdd(&m.cnt[1], 1u)) < m.cap)
            m.next[k] = m.items[i];
        else
            atomicAdd(m.fails, 1ull);
    }
    if (i < nf && i < m.cap) {
        if ((k = atomicAdd(&m.cnt[1], 1u)) < m.cap)
            m.next[k] = m.fresh[i];
        else
            atomicAdd(m.fails, 1ull);
    }
}
static __global__ void bm_free_dead(bm_ctx m) {
    BM_I();
    if (i < m.cnt[3] && i < m.cap) free(m.dead[i]);
}
static __global__ void bm_swap(bm_ctx m) {
    m.cnt[0] = min(m.cnt[1], m.cap);
    m.cnt[1] = m.cnt[2] = m.cnt[3] = 0;
}
static __global__ void bm_export(bm_ctx m, float *out) {
    BM_I();
    if (i >= m.nb) return;
    bm_body *b = m.bodies[i];
    uint32_t id = bh_id(b->tag);
    float *r = out + (uint64_t)id * BH_ROW;
    r[0] = (float)id;
    r[1] = b->h.px;
    r[2] = b->h.py;
    r[3] = b->vx;
    r[4] = b->vy;
    r[5] = b->h.mass;
    free(b);
}
static __global__ void bm_free_items(bm_ctx m) {
    BM_I();
    if (i < m.cnt[0]) free(m.items[i]);
}
static void bm_settle(bm_ctx *m) {
    unsigned g = (m->cap + 255u) / 256u;
    bm_compact<<<g, 256>>>(*m);
    WH_LAUNCH_OR_DIE();
    bm_free_dead<<<g, 256>>>(*m);
    WH_LAUNCH_OR_DIE();
    bm_swap<<<1, 1>>>(*m);
    WH_LAUNCH_OR_DIE();
    bm_tree **t = m->items;
    m->items = m->next;
    m->next = t;
}
static uint32_t bm_rebuild(bm_ctx *m, uint64_t *rounds) {
    unsigned gb = (m->nb + 255u) / 256u, gt = (m->cap + 255u) / 256u;
    uint32_t h[CTR_N];
    ctr_get(&m->c, h, 1);
    uint32_t lost = 0;
    for (uint64_t r = 0;; ++r) {
        if (r > (uint64_t)m->nb * (BH_MAXD + 1u) + 64u) {
            fprintf(stderr, "barneshut malloc: insertion did not finish\n");
            exit(1);
        }
        h[CTR_HOMELESS] = 0;
        h[CTR_LOST] = 0;
        ctr_set(&m->c, h, 1);
        bm_bid<<<gb, 256>>>(*m);
        WH_LAUNCH_OR_DIE();
        bm_place<<<gb, 256>>>(*m);
        WH_LAUNCH_OR_DIE();
        ctr_get(&m->c, h, 1);
        lost += h[CTR_LOST];
        ++*rounds;
        if (!h[CTR_HOMELESS]) break;
    }
    bm_settle(m); /* the new nodes join the array */
    for (int d = (int)h[CTR_MAXDEPTH]; d >= 0; --d) {
        m->c.depth = (uint32_t)d;
        bm_summary<<<gt, 256>>>(*m);
        WH_LAUNCH_OR_DIE();
    }
    return lost;
}
static double run_malloc(uint64_t n, int iters, bh_ctx c, bodies *out, size_t *peak) {
    size_t heap = budget_heap(0, (size_t)n * 256 + ((size_t)64 << 20)); /* the pointer lists are not counted */
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
    bm_ctx m;
    memset(&m, 0, sizeof m);
    m.c = c;
    m.nb = (uint32_t)n;
    m.cap = (uint32_t)(2 * n + 64); /* tree nodes: at most one per split */
    m.c.ctr = (uint32_t *)app_alloc(CTR_N * 4, 1);
    WH_CUDA_OR_DIE(cudaMalloc(&m.bodies, n * 8));
    bm_tree ***lists[4] = {&m.items, &m.next, &m.fresh, &m.dead};
    for (int k = 0; k < 4; ++k) WH_CUDA_OR_DIE(cudaMalloc(lists[k], (size_t)m.cap * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&m.cnt, 16));
    WH_CUDA_OR_DIE(cudaMemset(m.cnt, 0, 16));
    WH_CUDA_OR_DIE(cudaMalloc(&m.fails, 8));
    WH_CUDA_OR_DIE(cudaMemset(m.fails, 0, 8));
    *peak = heap + n * 8 + (size_t)m.cap * 32; /* reserved: malloc heap and pointer arrays */
    bm_tree **d_root;
    WH_CUDA_OR_DIE(cudaMalloc(&d_root, 8));
    bm_make_root<<<1, 1>>>(m, d_root);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaMemcpy(&m.root, d_root, 8, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaFree(d_root));
    if (!m.root) {
        fprintf(stderr, "barneshut malloc: no root\n");
        exit(1);
    }
    bm_settle(&m);
    unsigned gb = (unsigned)((n + 255) / 256), gt = (m.cap + 255u) / 256u;
    bm_init<<<gb, 256>>>(m);
    WH_LAUNCH_OR_DIE();
    uint64_t rounds = 0;
    uint32_t lost = bm_rebuild(&m, &rounds);
    int dev = 1;
    app_sync(dev);
    double t0 = app_now();
    for (int it = 0; it < iters; ++it) {
        APP_TIME_CAP(it, 1, dev, t0)
        bm_force<<<gb, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        bm_move<<<gb, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        uint32_t h[CTR_N];
        ctr_get(&m.c, h, 1);
        for (int d = (int)h[CTR_MAXDEPTH]; d >= 1; --d) {
            m.c.depth = (uint32_t)d;
            bm_collapse<<<gt, 256>>>(m);
            WH_LAUNCH_OR_DIE();
        }
        bm_settle(&m); /* the collapsed nodes are freed */
        lost = bm_rebuild(&m, &rounds);
    }
    app_sync(dev);
    double t = app_now() - t0;
    unsigned long long fails = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&fails, m.fails, 8, cudaMemcpyDeviceToHost));
    g_short = lost + fails;
    printf("  malloc: %llu insertion rounds, %u bodies left out, %llu failed allocations\n", (unsigned long long)rounds,
           lost, fails);
    float *d_out;
    WH_CUDA_OR_DIE(cudaMalloc(&d_out, n * BH_ROW * 4));
    bm_export<<<gb, 256>>>(m, d_out);
    WH_LAUNCH_OR_DIE();
    out->n = n;
    out->r = (float *)malloc(n * BH_ROW * sizeof(float));
    app_to_host(out->r, d_out, n * BH_ROW * 4, 1);
    WH_CUDA_OR_DIE(cudaFree(d_out));
    bm_free_items<<<gt, 256>>>(m);
    WH_LAUNCH_OR_DIE();
    for (int k = 0; k < 4; ++k) WH_CUDA_OR_DIE(cudaFree(*lists[k]));
    WH_CUDA_OR_DIE(cudaFree(m.bodies));
    WH_CUDA_OR_DIE(cudaFree(m.cnt));
    WH_CUDA_OR_DIE(cudaFree(m.fails));
    app_free(m.c.ctr, 1);
    return t;
}
#endif
