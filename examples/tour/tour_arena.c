/* SPDX-License-Identifier: MIT */
/* Tour, stream arena: marching-cubes frames of moving metaballs, whose mesh
 * size only the GPU knows.  The arena way: count kernel, one arena command
 * that reads the count on the GPU and hands out the mesh's memory, generate
 * kernel; no host synchronisation in the frame loop.  The usual way: count
 * kernel, copy the count to the host, synchronise, cudaMallocAsync, generate.
 * Both keep the last three meshes.  On the CPU backend: the arena's ring
 * against malloc/free of each frame's mesh. */
#include "tour.h"
#include "warpheap/arena.h"
#include "mc_field.h"
#include "mc_tables.h"

#define BALLS     8
#define KEEP      3 /* meshes alive at once */
#define TRI_BYTES 36u

typedef struct frame_balls {
    mc_ball b[BALLS];
} frame_balls;

static frame_balls balls_at(uint32_t f) {
    frame_balls fb;
    for (int b = 0; b < BALLS; ++b) fb.b[b] = mc_ball_at(b, mc_time(f));
    return fb;
}
/* The case of cell i of an n^3 grid of samples, v: its corner values. */
WH_INLINE WH_HOST_DEVICE uint32_t cell_case(int n, uint32_t i, const frame_balls *fb, float v[8]) {
    int m = n - 1, x = (int)(i % (uint32_t)m), y = (int)(i / (uint32_t)m % (uint32_t)m),
        z = (int)(i / (uint32_t)m / (uint32_t)m);
    float inv = 1.0f / (float)(n - 1);
    uint32_t c = 0;
    for (int k = 0; k < 8; ++k) {
        v[k] = mc_field((float)(x + (k & 1)) * inv, (float)(y + (k >> 1 & 1)) * inv, (float)(z + (k >> 2 & 1)) * inv,
                        fb->b, BALLS);
        c |= (uint32_t)(v[k] > MC_ISO) << k;
    }
    return c;
}
/* Triangle k of cell i (case c) into out (9 floats). */
WH_INLINE WH_HOST_DEVICE void cell_tri(const mc_tables *t, int n, uint32_t i, const float v[8], uint32_t c, int k,
                                       float *out) {
    int m = n - 1, x = (int)(i % (uint32_t)m), y = (int)(i / (uint32_t)m % (uint32_t)m),
        z = (int)(i / (uint32_t)m / (uint32_t)m);
    float inv = 1.0f / (float)(n - 1);
    for (int j = 0; j < 3; ++j) {
        int e = t->tri[c][3 * k + j], a = t->edge_corner[e][0], b = t->edge_corner[e][1];
        float s = (MC_ISO - v[a]) / (v[b] - v[a]);
        out[3 * j + 0] = ((float)(x + (a & 1)) + s * (float)((b & 1) - (a & 1))) * inv;
        out[3 * j + 1] = ((float)(y + (a >> 1 & 1)) + s * (float)((b >> 1 & 1) - (a >> 1 & 1))) * inv;
        out[3 * j + 2] = ((float)(z + (a >> 2 & 1)) + s * (float)((b >> 2 & 1) - (a >> 2 & 1))) * inv;
    }
}

#if defined(__CUDACC__)
static __global__ void count_kernel(const mc_tables *t, int n, frame_balls fb, unsigned long long *total) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, cells = (uint32_t)((n - 1) * (n - 1) * (n - 1));
    if (i >= cells) return;
    float v[8];
    uint32_t tris = t->ntri[cell_case(n, i, &fb, v)];
    if (tris) atomicAdd(total, (unsigned long long)tris);
}
static __global__ void generate_kernel(const mc_tables *t, int n, frame_balls fb, const wh_arena_span *sp,
                                       unsigned long long *cursor) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, cells = (uint32_t)((n - 1) * (n - 1) * (n - 1));
    if (i >= cells) return;
    float v[8];
    uint32_t c = cell_case(n, i, &fb, v), tris = t->ntri[c];
    if (!tris) return;
    unsigned long long at = atomicAdd(cursor, (unsigned long long)tris);
    for (uint32_t k = 0; k < tris; ++k)
        cell_tri(t, n, i, v, c, (int)k, (float *)wh_arena_span_at(sp, at + k, TRI_BYTES));
}

typedef struct gpu_mc {
    int n, frames;
    uint32_t blocks;
    cudaStream_t s;
    mc_tables *tab;
    unsigned long long *counters; /* [0] total, [1] cursor */
    wh_arena_span *spans;         /* KEEP spans, device memory */
} gpu_mc;

static void gpu_count(gpu_mc *g, const frame_balls *fb) {
    WH_CUDA_OR_DIE(cudaMemsetAsync(g->counters, 0, 2 * sizeof(unsigned long long), g->s));
    count_kernel<<<g->blocks, 256, 0, g->s>>>(g->tab, g->n, *fb, g->counters);
    WH_LAUNCH_OR_DIE();
}
static void gpu_generate(gpu_mc *g, const frame_balls *fb, const wh_arena_span *sp) {
    generate_kernel<<<g->blocks, 256, 0, g->s>>>(g->tab, g->n, *fb, sp, g->counters + 1);
    WH_LAUNCH_OR_DIE();
}
/* The usual way; returns ms per frame and the largest mesh in triangles. */
static double gpu_sync_way(gpu_mc *g, uint64_t *max_tris) {
    void *buf[KEEP] = {NULL, NULL, NULL};
    unsigned long long *total;
    WH_CUDA_OR_DIE(cudaMallocHost(&total, sizeof *total));
    *max_tris = 0;
    double t0 = app_now();
    for (int f = 0; f < g->frames; ++f) {
        frame_balls fb = balls_at((uint32_t)f);
        gpu_count(g, &fb);
        WH_CUDA_OR_DIE(cudaMemcpyAsync(total, g->counters, sizeof *total, cudaMemcpyDeviceToHost, g->s));
        WH_CUDA_OR_DIE(cudaStreamSynchronize(g->s));
        if (*total > *max_tris) *max_tris = *total;
        if (buf[f % KEEP]) WH_CUDA_OR_DIE(cudaFreeAsync(buf[f % KEEP], g->s));
        WH_CUDA_OR_DIE(cudaMallocAsync(&buf[f % KEEP], (size_t)*total * TRI_BYTES + TRI_BYTES, g->s));
        wh_arena_span sp = wh_arena_span_of(buf[f % KEEP]);
        WH_CUDA_OR_DIE(cudaMemcpyAsync(g->spans + f % KEEP, &sp, sizeof sp, cudaMemcpyHostToDevice, g->s));
        gpu_generate(g, &fb, g->spans + f % KEEP);
    }
    WH_CUDA_OR_DIE(cudaStreamSynchronize(g->s));
    double ms = (app_now() - t0) * 1e3 / g->frames;
    for (int k = 0; k < KEEP; ++k) WH_CUDA_OR_DIE(cudaFreeAsync(buf[k], g->s));
    WH_CUDA_OR_DIE(cudaStreamSynchronize(g->s));
    WH_CUDA_OR_DIE(cudaFreeHost(total));
    return ms;
}
static double gpu_arena_way(gpu_mc *g, wh_arena *a) {
    WH_CUDA_OR_DIE(cudaMemsetAsync(g->spans, 0, KEEP * sizeof(wh_arena_span), g->s));
    double t0 = app_now();
    for (int f = 0; f < g->frames; ++f) {
        frame_balls fb = balls_at((uint32_t)f);
        gpu_count(g, &fb);
        if (wh_arena_replace_span_async(a, (const size_t *)g->counters, TRI_BYTES, g->spans + f % KEEP, g->s) != WH_OK)
            tour_fail("stream arena", "wh_arena_replace_span_async");
        gpu_generate(g, &fb, g->spans + f % KEEP);
    }
    WH_CUDA_OR_DIE(cudaStreamSynchronize(g->s));
    return (app_now() - t0) * 1e3 / g->frames;
}
#endif

/* The CPU backend: one thread, the same cells in order. */
static uint64_t cpu_count(const mc_tables *t, int n, const frame_balls *fb) {
    uint64_t total = 0;
    float v[8];
    for (uint32_t i = 0; i < (uint32_t)((n - 1) * (n - 1) * (n - 1)); ++i) total += t->ntri[cell_case(n, i, fb, v)];
    return total;
}
static void cpu_generate(const mc_tables *t, int n, const frame_balls *fb, const wh_arena_span *sp) {
    uint64_t at = 0;
    float v[8];
    for (uint32_t i = 0; i < (uint32_t)((n - 1) * (n - 1) * (n - 1)); ++i) {
        uint32_t c = cell_case(n, i, fb, v);
        for (int k = 0; k < t->ntri[c]; ++k) cell_tri(t, n, i, v, c, k, (float *)wh_arena_span_at(sp, at++, TRI_BYTES));
    }
}
static double cpu_way(const mc_tables *t, int n, int frames, wh_arena *a, uint64_t *max_tris) {
    wh_arena_span ring[KEEP];
    void *buf[KEEP] = {NULL, NULL, NULL};
    memset(ring, 0, sizeof ring);
    double t0 = app_now();
    for (int f = 0; f < frames; ++f) {
        frame_balls fb = balls_at((uint32_t)f);
        size_t tris = (size_t)cpu_count(t, n, &fb);
        if (max_tris && tris > *max_tris) *max_tris = tris;
        wh_arena_span sp;
        if (a) {
            if (wh_arena_replace_span_async(a, &tris, TRI_BYTES, &ring[f % KEEP], NULL) != WH_OK ||
                !ring[f % KEEP].part[0].ptr)
                tour_fail("stream arena", "wh_arena_replace_span_async");
            sp = ring[f % KEEP];
        } else {
            free(buf[f % KEEP]);
            buf[f % KEEP] = malloc(tris * TRI_BYTES + TRI_BYTES);
            if (!buf[f % KEEP]) tour_fail("stream arena", "malloc");
            sp = wh_arena_span_of(buf[f % KEEP]);
        }
        cpu_generate(t, n, &fb, &sp);
    }
    double ms = (app_now() - t0) * 1e3 / frames;
    for (int k = 0; k < KEEP; ++k) free(buf[k]);
    return ms;
}

/* One row: frames of an n^3 grid both ways. */
static void arena_row(tour *t, const mc_tables *tabp, int n, int frames) {
    const mc_tables tab = *tabp;
    uint64_t max_tris = 0;
    double theirs = 0, ours = 0;
    const char *base = "malloc/free per frame";
#if defined(__CUDACC__)
    gpu_mc g;
    if (t->gpu) {
        g.n = n;
        g.frames = frames;
        g.blocks = (uint32_t)(((n - 1) * (n - 1) * (n - 1) + 255) / 256);
        WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&g.s, cudaStreamNonBlocking));
        WH_CUDA_OR_DIE(cudaMalloc(&g.tab, sizeof tab));
        WH_CUDA_OR_DIE(cudaMemcpy(g.tab, &tab, sizeof tab, cudaMemcpyHostToDevice));
        WH_CUDA_OR_DIE(cudaMalloc(&g.counters, 2 * sizeof(unsigned long long)));
        WH_CUDA_OR_DIE(cudaMalloc(&g.spans, KEEP * sizeof(wh_arena_span)));
        gpu_sync_way(&g, &max_tris); /* warm-up, and the largest mesh */
        theirs = gpu_sync_way(&g, &max_tris);
        base = "sync + cudaMallocAsync";
    } else
#endif
    {
        cpu_way(&tab, n, frames, NULL, &max_tris);
        theirs = cpu_way(&tab, n, frames, NULL, NULL);
    }
    wh_arena *a = NULL;
    wh_arena_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.bytes = (size_t)(2 * KEEP * (max_tris + 1) * TRI_BYTES + (1u << 20));
    cfg.backend = t->gpu ? WH_ARENA_CUDA : WH_ARENA_CPU;
    cfg.policy = WH_ARENA_RING;
    if (wh_arena_create(&a, &cfg) != WH_OK) tour_fail("stream arena", "wh_arena_create");
#if defined(__CUDACC__)
    if (t->gpu) {
        gpu_arena_way(&g, a); /* warm-up */
        ours = gpu_arena_way(&g, a);
    } else
#endif
    {
        cpu_way(&tab, n, frames, a, NULL); /* warm-up: the ring's pages touched once */
        ours = cpu_way(&tab, n, frames, a, NULL);
    }
    wh_arena_stats st;
    if (wh_arena_stats_get(a, &st) != WH_OK) tour_fail("stream arena", "wh_arena_stats_get");
    if (st.first_status != WH_OK || st.failures) tour_fail("stream arena", "a frame found no room in the arena");
    wh_status ds = wh_arena_destroy(a); /* the last meshes are live: IN_USE */
    if (ds != WH_OK && ds != WH_ERR_IN_USE) tour_fail("stream arena", "wh_arena_destroy");
#if defined(__CUDACC__)
    if (t->gpu) {
        WH_CUDA_OR_DIE(cudaFree(g.tab));
        WH_CUDA_OR_DIE(cudaFree(g.counters));
        WH_CUDA_OR_DIE(cudaFree(g.spans));
        WH_CUDA_OR_DIE(cudaStreamDestroy(g.s));
    }
#endif
    char what[72];
    snprintf(what, sizeof what, "marching cubes %d^3, %d frames, time per frame", n, frames);
    tour_report(t, "stream arena", what, ours, base, theirs);
}

void tour_arena(tour *t) {
    static mc_tables tab;
    if (mc_tables_build(&tab)) tour_fail("stream arena", "the marching-cubes tables");
    int frames = t->gpu ? (t->quick ? 60 : 400) : (t->quick ? 12 : 40);
    int sizes[2] = {t->gpu ? 32 : 24, t->gpu ? 64 : 40};
    for (int k = t->quick ? 1 : 0; k < 2; ++k) arena_row(t, &tab, sizes[k], frames);
}
