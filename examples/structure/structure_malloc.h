/* SPDX-License-Identifier: MIT */
/* Structure (DynaSOAr's "structure", Table 1 and section 6) on CUDA's device
 * malloc, GPU only: the paper's "other allocators".  Nodes and springs are
 * malloc'd structs (array of structures); the do-alls run over arrays of
 * object pointers -- free nodes, pulled nodes, springs -- compacted after
 * each do-all that destroys (wh_app_plist.h).  Same rules as structure.c,
 * which includes this file, so --check requires a bit-identical final mesh. */
#if defined(__CUDACC__)
#include "wh_app_plist.h"

typedef struct sm_spring sm_spring;
typedef struct sm_node {
    uint32_t dead; /* first in both structs: app_plist marks it */
    uint32_t kind, reach, id;
    float px, py, vx, vy, mass, pull;
    sm_spring *s[SLOTS];
} sm_node;
struct sm_spring {
    uint32_t dead, slot1, slot2, id;
    sm_node *p1, *p2;
    float rest, k, strength, fx, fy;
};

typedef struct sm_ctx {
    st_ctx c;                        /* sizes, pull, changed flag */
    sm_node **by_id;                 /* node i, for the springs and the export */
    uint32_t *alive, *salive;        /* per node id, per spring id */
    app_plist nodes, pulls, springs; /* free nodes, pulled nodes, springs */
    unsigned long long *fails;
} sm_ctx;
#define SM_I() uint32_t i = blockIdx.x * blockDim.x + threadIdx.x

static __global__ void sm_new_nodes(sm_ctx m, uint64_t n) {
    SM_I();
    if (i >= n) return;
    sm_node *o = (sm_node *)app_dev_malloc(sizeof(sm_node), m.fails);
    m.by_id[i] = o;
    m.alive[i] = o != NULL;
    if (!o) return;
    o->dead = 0;
    o->kind = st_kind(&m.c, i);
    o->reach = o->kind == K_NODE ? 0u : ST_FAR;
    o->id = i;
    st_node0(i, m.c.w, &o->px, &o->py, &o->mass);
    o->vx = o->vy = 0.0f;
    o->pull = m.c.pull;
    for (uint32_t k = 0; k < SLOTS; ++k) o->s[k] = NULL;
    if (o->kind == K_NODE) app_plist_add(&m.nodes, o, m.fails);
    if (o->kind == K_PULL) app_plist_add(&m.pulls, o, m.fails);
}
/* Node i makes its springs to the right (slot 0) and below (slot 1). */
static __global__ void sm_new_springs(sm_ctx m, uint64_t n) {
    SM_I();
    if (i >= n || !m.by_id[i]) return;
    for (uint32_t d = 0; d < 2; ++d) {
        uint32_t j = i * 2u + d, a, b;
        if (!st_spring_ends(&m.c, j, &a, &b) || !m.by_id[b]) continue;
        sm_spring *sp = (sm_spring *)app_dev_malloc(sizeof(sm_spring), m.fails);
        if (!sp) continue;
        sp->dead = 0;
        sp->slot1 = d;
        sp->slot2 = d + 2u;
        sp->id = j;
        sp->p1 = m.by_id[a];
        sp->p2 = m.by_id[b];
        sp->rest = 1.0f;
        st_spring0(j, &sp->k, &sp->strength);
        sp->fx = sp->fy = 0.0f;
        sp->p1->s[d] = sp;
        sp->p2->s[d + 2u] = sp;
        m.salive[j] = 1;
        app_plist_add(&m.springs, sp, m.fails);
    }
}
static __global__ void sm_spring_compute(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.springs)) return;
    sm_spring *sp = (sm_spring *)m.springs.items[i];
    sm_node *a = sp->p1, *b = sp->p2;
    float f = st_tension(a->px, a->py, b->px, b->py, sp->rest, sp->k, &sp->fx, &sp->fy);
    if (f > sp->strength) { /* broken */
        a->s[sp->slot1] = NULL;
        b->s[sp->slot2] = NULL;
        m.salive[sp->id] = 0;
        app_plist_kill(sp);
    }
}
static __global__ void sm_node_move(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.nodes)) return;
    sm_node *o = (sm_node *)m.nodes.items[i];
    float fx = 0.0f, fy = 0.0f;
    for (uint32_t k = 0; k < SLOTS; ++k) {
        const sm_spring *sp = o->s[k];
        if (!sp) continue;
        if (sp->p1 == o) {
            fx += sp->fx;
            fy += sp->fy;
        } else {
            fx -= sp->fx;
            fy -= sp->fy;
        }
    }
    st_integrate(&o->px, &o->py, &o->vx, &o->vy, o->mass, fx, fy);
}
static __global__ void sm_pull_move(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.pulls)) return;
    sm_node *o = (sm_node *)m.pulls.items[i];
    o->px += o->pull;
}
static __global__ void sm_bfs_reset(sm_ctx m) {
    SM_I();
    if (i < APP_PLIST_N(m.nodes)) ((sm_node *)m.nodes.items[i])->reach = 0;
}
static __global__ void sm_spring_bfs(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.springs)) return;
    sm_spring *sp = (sm_spring *)m.springs.items[i];
    st_spread(&sp->p1->reach, &sp->p2->reach, m.c.changed);
}
/* An unreached node destroys the springs of its slots 0 and 1 and itself
 * (its other springs belong to unreached neighbours, which destroy them). */
static __global__ void sm_node_remove(sm_ctx m) {
    SM_I();
    if (i >= APP_PLIST_N(m.nodes)) return;
    sm_node *o = (sm_node *)m.nodes.items[i];
    if (o->reach != 0) return;
    for (uint32_t k = 0; k < 2; ++k) {
        sm_spring *sp = o->s[k];
        if (sp) {
            m.salive[sp->id] = 0;
            app_plist_kill(sp);
        }
    }
    m.alive[o->id] = 0;
    app_plist_kill(o);
}
static __global__ void sm_export(sm_ctx m, uint64_t n, float *pos) {
    SM_I();
    if (i >= n) return;
    const sm_node *o = m.alive[i] ? m.by_id[i] : NULL;
    pos[i * 4] = o ? o->px : 0.0f;
    pos[i * 4 + 1] = o ? o->py : 0.0f;
    pos[i * 4 + 2] = o ? o->vx : 0.0f;
    pos[i * 4 + 3] = o ? o->vy : 0.0f;
}
/* by_id of a removed node points to freed memory: only live ones are read. */
static __global__ void sm_free_anchors(sm_ctx m, uint64_t n) {
    SM_I();
    if (i < n && m.alive[i] && m.by_id[i]->kind == K_ANCHOR) free(m.by_id[i]);
}
static void sm_bfs_round(sm_ctx *m, unsigned gs) {
    sm_spring_bfs<<<gs, 256>>>(*m);
    WH_LAUNCH_OR_DIE();
}

static double run_malloc(st_ctx c, uint32_t steps, uint32_t iters, mesh *out, size_t *peak) {
    const int dev = 1;
    uint64_t n = (uint64_t)c.w * c.h, ns = 2 * n;
    /* --heap-mb counts the heap and by_id (warpheap's budget counts its node
     * array); like the other apps, not the do-all lists nor the export flags. */
    size_t heap = budget_heap(n * 8, (size_t)n * 512 + ((size_t)64 << 20));
    size_t arrays = n * (8 + 4 + 8 * 3) + ns * (4 + 8 * 3); /* by_id, alive, lists; salive, spring list */
    if (!heap) {
        fprintf(stderr, "structure malloc: no heap left in the budget\n");
        exit(3);
    }
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
    sm_ctx m;
    memset(&m, 0, sizeof m);
    m.c = c;
    m.c.changed = (uint32_t *)app_alloc(4, dev);
    WH_CUDA_OR_DIE(cudaMalloc(&m.by_id, n * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&m.alive, n * 4));
    WH_CUDA_OR_DIE(cudaMalloc(&m.salive, ns * 4));
    WH_CUDA_OR_DIE(cudaMemset(m.salive, 0, ns * 4));
    WH_CUDA_OR_DIE(cudaMalloc(&m.fails, 8));
    WH_CUDA_OR_DIE(cudaMemset(m.fails, 0, 8));
    app_plist_alloc(&m.nodes, (uint32_t)n);
    app_plist_alloc(&m.pulls, c.h);
    app_plist_alloc(&m.springs, (uint32_t)ns);
    *peak = heap + arrays; /* reserved: malloc heap and the arrays */
    unsigned gn = (unsigned)((n + 255) / 256), gs = (unsigned)((ns + 255) / 256), gp = (c.h + 255u) / 256u;
    sm_new_nodes<<<gn, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    sm_new_springs<<<gn, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    app_plist_settle(&m.nodes);
    app_plist_settle(&m.pulls);
    app_plist_settle(&m.springs);
    c.changed = m.c.changed; /* BFS_LOOP reads c.changed */
    app_sync(dev);
    double t0 = app_now();
    for (uint32_t st = 0; st < steps; ++st) {
        APP_TIME_CAP(st, 1, dev, t0)
        for (uint32_t it = 0; it < iters; ++it) {
            sm_spring_compute<<<gs, 256>>>(m);
            WH_LAUNCH_OR_DIE();
            app_plist_settle(&m.springs);
            sm_node_move<<<gn, 256>>>(m);
            WH_LAUNCH_OR_DIE();
            sm_pull_move<<<gp, 256>>>(m);
            WH_LAUNCH_OR_DIE();
        }
        sm_bfs_reset<<<gn, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        BFS_LOOP(n, r, sm_bfs_round(&m, gs))
        sm_node_remove<<<gn, 256>>>(m);
        WH_LAUNCH_OR_DIE();
        app_plist_settle(&m.springs);
        app_plist_settle(&m.nodes);
    }
    app_sync(dev);
    double t = app_now() - t0;
    unsigned long long fails = app_dev_count(m.fails);
    printf("  malloc: %llu failed allocations\n", fails);
    mesh_alloc(out, n);
    float *d_pos;
    WH_CUDA_OR_DIE(cudaMalloc(&d_pos, n * 16));
    sm_export<<<gn, 256>>>(m, n, d_pos);
    WH_LAUNCH_OR_DIE();
    app_to_host(out->pos, d_pos, n * 16, dev);
    app_to_host(out->alive, m.alive, n * 4, dev);
    uint32_t *u = (uint32_t *)malloc(ns * 4);
    app_to_host(u, m.salive, ns * 4, dev);
    for (uint64_t j = 0; j < ns; ++j) out->spring[j] = (uint8_t)u[j];
    free(u);
    sm_free_anchors<<<gn, 256>>>(m, n);
    WH_LAUNCH_OR_DIE();
    app_plist_free_items<<<gs, 256>>>(m.springs);
    WH_LAUNCH_OR_DIE();
    app_plist_free_items<<<gn, 256>>>(m.nodes);
    WH_LAUNCH_OR_DIE();
    app_plist_free_items<<<gp, 256>>>(m.pulls);
    WH_LAUNCH_OR_DIE();
    app_sync(dev);
    WH_CUDA_OR_DIE(cudaFree(d_pos));
    app_plist_free(&m.nodes);
    app_plist_free(&m.pulls);
    app_plist_free(&m.springs);
    WH_CUDA_OR_DIE(cudaFree(m.by_id));
    WH_CUDA_OR_DIE(cudaFree(m.alive));
    WH_CUDA_OR_DIE(cudaFree(m.salive));
    WH_CUDA_OR_DIE(cudaFree(m.fails));
    app_free(m.c.changed, dev);
    if (fails) {
        fprintf(stderr, "structure malloc: %llu failed allocations\n", fails);
        exit(3);
    }
    return t;
}
#endif
