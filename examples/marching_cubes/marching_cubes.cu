/* SPDX-License-Identifier: MIT */
/* Marching cubes with the stream arena: meshes whose size only the GPU
 * knows, kept for K frames, with no host sync.  Seed gpu-executed-heap.txt,
 * "Example Use-Case"; algorithm Lorensen & Cline 1987 (mc_tables.c).
 *
 * Every frame runs two kernels on one stream:
 *   count    -- a thread per cell: its case and triangles; a block sum per
 *               block; the last block to finish scans the block sums and
 *               reserves the frame's mesh in the arena (one thread,
 *               wh_arena_ring_reserve_thread): the span that replaces the
 *               mesh of frame f - K in ring slot f % K, from the plan the
 *               previous commit made -- the address is out at once;
 *   generate -- block 0 first commits the reservation (WH_ARENA_COMMIT_NOW:
 *               the block core catches up while the other blocks write);
 *               every thread writes its cell's triangles through the span.
 * The arena is a RING arena on a LIST core: meshes die in the order they
 * were made, so next fit keeps the free space in one piece and a region a
 * few granules above K meshes serves every frame.  The host only enqueues;
 * wh_arena_status tells, without a sync, whether a frame was dropped.
 *
 * The mesh of each live frame is checked against the host reference
 * (mc_ref.c: the same cells in the same order, so the same bytes).  The
 * comparison with other allocators is the benchmark (bench/arena).
 *
 * Why this way: of the arena's ways to run this pipeline, the in-kernel
 * ring is the fastest on large grids (160^3 and up in the benchmark's
 * report), within a tenth of the fastest at 128^3, and the one a user can
 * copy into two kernels of their own.  On small grids, where a frame is a
 * few microseconds and launches dominate, the one-pass pipeline (forecasts
 * and posts, WH_ARENA_COMMIT_POSTS; bench/arena/mc_bench.cu) is up to twice
 * as fast, at the price of a committer block beside the producers. */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

/* The kernels here drive only a LIST core: TLSF's and the max-heap's code
 * stays out of them (core/blocks.h).  Before anything includes warpheap. */
#define WH_BLOCKS_KINDS (1u << WH_BLOCKS_LIST)
#include "mc_ref.h"
#include "mc_render.h"
#include "warpheap/arena.h"
#include "warpheap/cuda_check.h"
#include "wh_cli.h"
#include "wh_png.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

#define THREADS 256
#define K       3 /* live meshes */

__constant__ uint8_t c_ntri[256];
__constant__ int8_t c_tri[256][3 * MC_MAX_TRI];
__constant__ uint8_t c_edge[12][2];

typedef cub::BlockReduce<uint32_t, THREADS> block_reduce;
typedef cub::BlockScan<uint32_t, THREADS> block_scan;

struct frame_args {
    int n, balls;
    uint32_t frame;
    const mc_ball *ball;              /* [frames][balls], from the host */
    uint32_t *block_tris, *block_off; /* per block: triangles, offset   */
    uint32_t *done;                   /* blocks of count that finished  */
    uint32_t *tris;                   /* [frames]: each frame's total   */
    uint32_t *reserved;               /* [frames]: the reserve's status */
    wh_arena_ref arena;
    wh_arena_span *ring; /* K slots */
    uint64_t smem_bytes; /* the image the commit stages */
};

/* This thread's cell (x fastest, as mc_ref.c), its case, and the field at
 * its corners; false past the last cell. */
static __device__ bool my_cell(const frame_args &a, const mc_ball *ball, int *xyz, float *v, uint32_t *cs) {
    uint32_t m = (uint32_t)a.n - 1u, i = blockIdx.x * THREADS + threadIdx.x;
    if (i >= m * m * m) return false;
    xyz[0] = (int)(i % m), xyz[1] = (int)(i / m % m), xyz[2] = (int)(i / m / m);
    float inv = 1.0f / (float)(a.n - 1);
    *cs = 0;
    for (int c = 0; c < 8; ++c) {
        int px = xyz[0] + (c & 1), py = xyz[1] + ((c >> 1) & 1), pz = xyz[2] + ((c >> 2) & 1);
        v[c] = mc_field((float)px * inv, (float)py * inv, (float)pz * inv, ball, a.balls);
        *cs |= (uint32_t)(v[c] > MC_ISO) << c;
    }
    return true;
}

static __device__ void load_balls(const frame_args &a, mc_ball *ball) {
    if (threadIdx.x < (unsigned)a.balls) ball[threadIdx.x] = a.ball[a.frame * a.balls + threadIdx.x];
    __syncthreads();
}

/* Count, then the last block scans and reserves the frame's mesh. */
static __global__ void __launch_bounds__(THREADS) count_kernel(frame_args a) {
    __shared__ mc_ball ball[MC_MAX_BALLS];
    __shared__ union {
        block_reduce::TempStorage r;
        block_scan::TempStorage s;
    } tmp;
    __shared__ bool last;
    load_balls(a, ball);
    int xyz[3];
    float v[8];
    uint32_t cs = 0, mine = my_cell(a, ball, xyz, v, &cs) ? c_ntri[cs] : 0u;
    uint32_t sum = block_reduce(tmp.r).Sum(mine);
    if (threadIdx.x == 0) { /* release: the sum out before the count; acquire: the last sees every sum */
        a.block_tris[blockIdx.x] = sum;
        last = wh_atomic_fetch_add(a.done, 1u, WH_ACQ_REL) == gridDim.x - 1u;
    }
    __syncthreads();
    if (!last) return;
    uint32_t running = 0;
    for (uint32_t base = 0; base < gridDim.x; base += THREADS) { /* the block sums, scanned */
        uint32_t b = base + threadIdx.x, t = b < gridDim.x ? __ldcg(&a.block_tris[b]) : 0u, off, agg;
        __syncthreads(); /* tmp reused */
        block_scan(tmp.s).ExclusiveSum(t, off, agg);
        if (b < gridDim.x) a.block_off[b] = running + off;
        running += agg;
    }
    if (threadIdx.x == 0) {
        *a.done = 0; /* for the next frame */
        a.tris[a.frame] = running;
        /* the span for `running` triangles into slot f % K; the commit plans for the next slot */
        a.reserved[a.frame] = (uint32_t)wh_arena_ring_reserve_thread(a.arena, running, MC_TRI_BYTES,
                                                                     &a.ring[a.frame % K], &a.ring[(a.frame + 1) % K]);
    }
}

/* Block 0 commits; every thread writes its cell's triangles. */
static __global__ void __launch_bounds__(THREADS) generate_kernel(frame_args a) {
    extern __shared__ uint64_t arena_smem[];
    __shared__ mc_ball ball[MC_MAX_BALLS];
    __shared__ block_scan::TempStorage tmp;
    if (blockIdx.x == 0) { /* nothing in flight (a failed reserve): nothing to do */
        wh_arena_commit c;
        memset(&c, 0, sizeof c);
        c.mode = WH_ARENA_COMMIT_NOW;
        c.ring = a.ring;
        c.k = K;
        c.first = a.frame % K;
        c.smem = arena_smem;
        c.smem_bytes = a.smem_bytes;
        (void)wh_arena_ring_commit(a.arena, &c);
    }
    load_balls(a, ball);
    int xyz[3];
    float v[8];
    uint32_t cs = 0, mine = my_cell(a, ball, xyz, v, &cs) ? c_ntri[cs] : 0u, off;
    block_scan(tmp).ExclusiveSum(mine, off);
    /* a failed reserve leaves the slot as it was (maybe an older, live mesh): write nothing */
    if (a.reserved[a.frame] != WH_OK || mine == 0) return;
    wh_arena_span sp = a.ring[a.frame % K];
    uint64_t first = (uint64_t)a.block_off[blockIdx.x] + off;
    float inv = 1.0f / (float)(a.n - 1);
    for (uint32_t t = 0; t < mine; ++t) {
        float *tri = (float *)wh_arena_span_at(&sp, first + t, MC_TRI_BYTES);
        for (int e = 0; e < 3; ++e) { /* the vertex on edge c_tri[cs][3t + e], as mc_ref.c's edge_point */
            int ed = c_tri[cs][3 * t + e], ca = c_edge[ed][0], cb = c_edge[ed][1];
            float s = (MC_ISO - v[ca]) / (v[cb] - v[ca]);
            for (int d = 0; d < 3; ++d) {
                int pa = xyz[d] + ((ca >> d) & 1), pb = xyz[d] + ((cb >> d) & 1);
                tri[3 * e + d] = ((float)pa + s * (float)(pb - pa)) * inv;
            }
        }
    }
}

int main(int argc, char **argv) {
    int n = 64, frames = 300, balls = 8;
    const char *png = "";
    wh_cli_opt cli[] = {
        WH_CLI_INT("n", &n, "grid points per side, 8 .. 256"), WH_CLI_INT("frames", &frames, "frames, at least 3"),
        WH_CLI_STRING("png", &png, "render the last frame into this PNG file (empty: none)"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Marching cubes on the GPU, each frame's mesh allocated by the stream arena.");
    if (n < 8 || n > 256 || frames < K) {
        fprintf(stderr, "marching_cubes: --n in [8,256], --frames >= %d\n", K);
        return 1;
    }
    if (!wh_cuda_available()) {
        printf("marching_cubes: no GPU, skipped\n");
        return 77;
    }
    mc_tables t;
    mc_grid g;
    if (mc_tables_build(&t) || mc_grid_init(&g, n)) {
        fprintf(stderr, "marching_cubes: tables or host memory\n");
        return 1;
    }
    /* the host reference's counts: each frame's triangles, and the region K live meshes need */
    std::vector<uint64_t> ref_tris(frames);
    std::vector<mc_ball> balls_all((size_t)frames * balls);
    for (int f = 0; f < frames; ++f) {
        ref_tris[f] = mc_ref_count(&g, &t, (uint32_t)f, balls);
        mc_balls((uint32_t)f, balls, &balls_all[(size_t)f * balls]);
    }
    uint64_t need, bytes = mc_ring_bytes(ref_tris.data(), frames, K, &need);

    wh_arena *arena;
    wh_arena_config cfg = {.bytes = (size_t)bytes, /* a few granules above K meshes */
                           .max_blocks = 64,       /* a small image to stage */
                           .index = WH_BLOCKS_LIST,
                           .policy = WH_ARENA_RING,
                           .mirror = WH_ARENA_MIRROR_ON_FAILURE};
    if (wh_arena_create(&arena, &cfg) != WH_OK) {
        fprintf(stderr, "marching_cubes: %s\n", wh_last_error());
        return 1;
    }
    frame_args a;
    memset(&a, 0, sizeof a);
    uint32_t cells = g.cells, blocks = (cells + THREADS - 1) / THREADS;
    a.n = n, a.balls = balls, a.arena = wh_arena_device(arena), a.smem_bytes = wh_arena_meta_bytes(arena);
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(c_ntri, t.ntri, sizeof t.ntri));
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(c_tri, t.tri, sizeof t.tri));
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(c_edge, t.edge_corner, sizeof t.edge_corner));
    WH_CUDA_OR_DIE(cudaMalloc((void **)&a.ball, balls_all.size() * sizeof(mc_ball)));
    WH_CUDA_OR_DIE(cudaMemcpy((void *)a.ball, balls_all.data(), balls_all.size() * sizeof(mc_ball), cudaMemcpyDefault));
    WH_CUDA_OR_DIE(cudaMalloc(&a.block_tris, 2 * blocks * sizeof(uint32_t)));
    a.block_off = a.block_tris + blocks;
    WH_CUDA_OR_DIE(cudaMalloc(&a.tris, 2 * (size_t)frames * sizeof(uint32_t) + sizeof(uint32_t)));
    a.reserved = a.tris + frames;
    a.done = a.reserved + frames;
    WH_CUDA_OR_DIE(cudaMalloc(&a.ring, K * sizeof(wh_arena_span)));
    WH_CUDA_OR_DIE(cudaMemset(a.done, 0, sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMemset(a.ring, 0, K * sizeof(wh_arena_span))); /* null spans: nothing to free */
    WH_CUDA_OR_DIE(
        cudaFuncSetAttribute(generate_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)a.smem_bytes));

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int f = 0; f < frames; ++f) { /* no sync in the loop */
        a.frame = (uint32_t)f;
        count_kernel<<<blocks, THREADS>>>(a);
        WH_LAUNCH_OR_DIE();
        generate_kernel<<<blocks, THREADS, a.smem_bytes>>>(a);
        WH_LAUNCH_OR_DIE();
    }
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

    /* the check: every frame's count, and each live mesh, byte for byte, against the reference */
    int bad = wh_arena_status(arena) != WH_OK;
    std::vector<uint32_t> tris(frames);
    WH_CUDA_OR_DIE(cudaMemcpy(tris.data(), a.tris, frames * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    for (int f = 0; f < frames; ++f) bad |= tris[f] != ref_tris[f];
    wh_arena_span ring[K];
    WH_CUDA_OR_DIE(cudaMemcpy(ring, a.ring, sizeof ring, cudaMemcpyDeviceToHost));
    std::vector<float> mesh, ref;
    for (int f = frames - K; f < frames; ++f) {
        const wh_arena_span *sp = &ring[f % K];
        uint64_t mesh_bytes = ref_tris[f] * MC_TRI_BYTES, n0 = sp->count0 < sp->count ? sp->count0 : sp->count;
        mesh.assign(mesh_bytes / sizeof(float), 0.f);
        ref.assign(mesh_bytes / sizeof(float), 0.f);
        if (sp->count != ref_tris[f] || !sp->part[0].ptr) {
            bad = 1;
            continue;
        }
        WH_CUDA_OR_DIE(cudaMemcpy(mesh.data(), wh_handle_ptr(&sp->part[0]), n0 * MC_TRI_BYTES, cudaMemcpyDefault));
        if (n0 < sp->count) /* the span's second extent */
            WH_CUDA_OR_DIE(cudaMemcpy(&mesh[n0 * 9], wh_handle_ptr(&sp->part[1]), (sp->count - n0) * MC_TRI_BYTES,
                                      cudaMemcpyDefault));
        wh_arena_span plain = wh_arena_span_of(ref.data());
        mc_ref_count(&g, &t, (uint32_t)f, balls);
        mc_ref_generate(&g, &t, &plain);
        bad |= memcmp(mesh.data(), ref.data(), mesh_bytes) != 0;
    }
    wh_arena_stats st;
    if (wh_arena_stats_get(arena, &st) != WH_OK) bad = 1;
    printf("marching_cubes: %d^3, %d frames, %.0f frames/s; last frame %u triangles; arena %.2f MiB (%.3f x the "
           "bytes K meshes need), %llu failures, status %s; every count and the last %d meshes %s the reference\n",
           n, frames, frames / sec, tris[frames - 1], st.region_bytes / 1048576.0, (double)st.region_bytes / need,
           (unsigned long long)st.failures, wh_strerror(wh_arena_status(arena)), K, bad ? "do NOT match" : "match");
    if (*png) {
        const int w = 960, h = 960;
        std::vector<uint8_t> rgb((size_t)w * h * 3);
        mc_render(mesh.data(), tris[frames - 1], rgb.data(), w, h, 0.6f); /* the last frame's, read back above */
        if (wh_png_write_rgb(png, rgb.data(), w, h)) bad = 1;
    }
    for (int k = 0; k < K; ++k) /* free the live meshes, then the arena */
        if (ring[k].part[0].ptr)
            if (wh_arena_free_batch_async(arena, a.ring[k].part, ring[k].part[1].ptr ? 2u : 1u, NULL) != WH_OK) bad = 1;
    if (wh_arena_destroy(arena) != WH_OK) bad = 1; /* WH_ERR_IN_USE if a mesh were left */
    WH_CUDA_OR_DIE(cudaFree((void *)a.ball));
    WH_CUDA_OR_DIE(cudaFree(a.block_tris));
    WH_CUDA_OR_DIE(cudaFree(a.tris));
    WH_CUDA_OR_DIE(cudaFree(a.ring));
    mc_grid_free(&g);
    return bad;
}
