/* SPDX-License-Identifier: MIT */
/* The stream arena's benchmark: marching cubes over a time series of moving
 * metaballs, each frame's mesh kept for K frames, the oldest freed.
 * Triangle counts change every frame and are known only on the GPU -- the
 * use case of seed gpu-executed-heap.txt ("Example Use-Case").  The example
 * (examples/marching_cubes) shows one way; this program times them all:
 *   (a) worst case: K buffers of cells * max-triangles, no sync;
 *   (b) count on the GPU, read the count back (a host sync per frame),
 *       cudaMallocAsync the exact size, generate;
 *   (c) the stream arena, no sync: the count stays on the GPU and the mesh
 *       replaces the one of frame f - K in ring slot f % K --
 *       as a command in the stream (best fit, or the RING policy), or
 *       reserved by the last block of the counting kernel itself (RING) and
 *       committed later (wh_arena_ring_commit), with plain launches or
 *       several frames per CUDA graph launch; in one cooperative kernel a
 *       frame, the commit in that kernel or in a one-block kernel on a
 *       second stream (WH_ARENA_COMMIT_AHEAD), overlapping the next frame
 *       and handing the arena's lock on to its reserve (wh_arena_ring_baton);
 *       one-pass frames that write into forecast windows and post their
 *       counts to one committer a chain (WH_ARENA_COMMIT_POSTS).
 * Every two-kernel variant runs the same kernels per frame (count, generate):
 *   count    -- per brick of 8x8xBZ cells: the field at its 9x9x(BZ+1) points in
 *               shared memory, the cases, the brick's triangles; the last
 *               block to finish scans the brick totals into brick offsets and
 *               hands the frame's total on (history; (b): pinned host word;
 *               (c): the arena);
 *   generate -- bricks with triangles only: the field again, a block scan,
 *               the triangles at brick offset + thread offset.
 * Reports frames/s (median of --reps runs of --frames frames) and peak memory
 * against the bytes actually needed (the largest sum of K live meshes), writes
 * CSV/markdown, and a PNG of the last frame; every variant's last mesh must
 * be identical.  --profile=1 times the launches and phases instead.
 *
 * Each arena's region is sized from a warm-up pass: the smallest multiple of
 * its high-water mark (from --headroom, steps of 0.02) with which a pass over
 * the same frames fails no allocation.  Algorithm: Lorensen & Cline 1987
 * (tables generated, examples/marching_cubes/mc_tables.c). */
#include <cub/cub.cuh>

#include "mc_field.h"
#include "mc_render.h"
#include "mc_tables.h"
/* Every arena this file's kernels drive is a ring on a LIST core (the best-fit
 * rows run the library's command kernels): TLSF's and the max-heap's code stays
 * out of the reserve and the commit. */
#define WH_BLOCKS_KINDS (1u << WH_BLOCKS_LIST)
#include "warpheap/arena.h"
#include "warpheap/cuda_check.h"
#include "wh_cli.h"
#include "wh_png.h"

#include <algorithm>
#include <functional>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <vector>

#define TRI_BYTES 36u /* three xyz float vertices */

/* A brick: 8x8xBZ cells, 256 threads of BZ/4 cells each (a column in z).
 * BZ is 4, 8 or 16, chosen per grid (--bz; auto: the shallowest whose
 * bricks all fit on the GPU at once, so that small grids use more SMs) and
 * the same for every variant of a run; arrays are sized for BZ_MAX. */
#define BX       8
#define BY       8
#define BZ_MAX   16
#define THREADS  256
#define CPT_MAX  (BZ_MAX * BX * BY / THREADS)
#define PX       (BX + 1)
#define PY       (BY + 1)
#define NPTS_MAX (PX * PY * (BZ_MAX + 1))
__constant__ uint32_t c_bz = BZ_MAX;
static __device__ uint32_t brick_cpt(void) { return c_bz * (BX * BY) / THREADS; }

/* The case tables live in global memory and each block copies what it uses
 * into shared memory: the index is the cell's case, different in every
 * lane, and constant memory serialises a warp's distinct addresses. */
struct mc_gtables {
    uint8_t ntri[256];
    int8_t tri[256][3 * MC_MAX_TRI];
    uint8_t edge[12][2];
};
__device__ mc_gtables g_tab;

static __device__ void load_ntri(uint8_t *ntri) {
    for (int i = threadIdx.x; i < 256; i += THREADS) ntri[i] = g_tab.ntri[i];
}
static __device__ void load_tables(mc_gtables *t) {
    const uint32_t *src = (const uint32_t *)&g_tab;
    uint32_t *dst = (uint32_t *)t;
    for (int i = threadIdx.x; i < (int)(sizeof(mc_gtables) / 4); i += THREADS) dst[i] = src[i];
}

struct args {
    int n = 128, k = 3, frames = 300, reps = 5, balls = 8;
    int bz = 0; /* --bz: brick depth 4, 8 or 16; 0: auto_bz */
    double headroom = 1.02;
    const char *png = "marching_cubes.png", *csv = NULL, *md = NULL;
    bool profile = false; /* --profile: time the frame's parts */
};

/* ---- the two kernels ------------------------------------------------------------- */

/* The field at the brick's points (clamped at the grid's far faces: those
 * values belong to no cell), ball positions once per block. */
static __device__ void load_brick(float *sf, mc_ball *ball, int n, uint32_t frame, int balls, int x0, int y0, int z0) {
    if (threadIdx.x < (unsigned)balls) ball[threadIdx.x] = mc_ball_at((int)threadIdx.x, mc_time(frame));
    __syncthreads();
    float inv = 1.0f / (float)(n - 1);
    const int npts = PX * PY * ((int)c_bz + 1);
    for (int p = threadIdx.x; p < npts; p += THREADS) {
        uint32_t px = min(x0 + p % PX, n - 1), py = min(y0 + p / PX % PY, n - 1), pz = min(z0 + p / (PX * PY), n - 1);
        sf[p] = mc_field(px * inv, py * inv, pz * inv, ball, balls);
    }
    __syncthreads();
}

static_assert(sizeof(mc_gtables) % 4 == 0, "tables copied in words");

static __device__ uint32_t brick_case(const float *sf, int lx, int ly, int lz) {
    uint32_t m = 0;
    for (int c = 0; c < 8; ++c)
        m |= (uint32_t)(sf[((lz + ((c >> 2) & 1)) * PY + ly + ((c >> 1) & 1)) * PX + lx + (c & 1)] > MC_ISO) << c;
    return m;
}

/* The first cell of this block's brick (the grid's; the one-pass kernel's
 * bricks come by ticket instead). */
static __device__ int3 grid_brick(void) {
    return make_int3((int)blockIdx.x * BX, (int)blockIdx.y * BY, (int)(blockIdx.z * c_bz));
}

/* This thread's cell j in the brick at o (local coordinates); false outside the grid. */
static __device__ bool my_cell(int j, int m, int3 o, int *lx, int *ly, int *lz) {
    *lx = threadIdx.x % BX;
    *ly = threadIdx.x / BX % BY;
    *lz = threadIdx.x / (BX * BY) * brick_cpt() + j;
    return o.x + *lx < m && o.y + *ly < m && o.z + *lz < m;
}

static __device__ uint32_t brick_id(void) { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }

/* This thread's cells' cases into cs (0 outside the grid of m cells a side);
 * returns their triangles. */
static __device__ uint32_t brick_cases(const mc_gtables *tab, const float *sf, int m, int3 o, uint32_t *cs) {
    uint32_t mine = 0, cpt = brick_cpt();
    for (int j = 0; j < CPT_MAX; ++j) { /* unrolled: cs stays in registers */
        int lx, ly, lz;
        cs[j] = j < (int)cpt && my_cell(j, m, o, &lx, &ly, &lz) ? brick_case(sf, lx, ly, lz) : 0u;
        mine += tab->ntri[cs[j]];
    }
    return mine;
}

/* Where the frame's triangle total goes once the last block has it. */
struct tail_args {
    uint32_t *frame;    /* device: the frame being made; += 1 here      */
    uint32_t *history;  /* history[frame] = total                       */
    size_t *count_out;  /* or NULL: the total (a device word or a       */
                        /* pinned host word, (b))                        */
    wh_arena_ref arena; /* with span != NULL: replace the mesh in *span */
    wh_arena_span *span;
    uint64_t smem_bytes;       /* dynamic smem for wh_arena_replace_span_block */
                               /* or wh_arena_ring_commit                       */
    bool split;                /* reserve here, commit later (arena/reserve.h) */
    const wh_arena_span *next; /* split: the slot the next frame replaces      */
    uint32_t *reserve_status;  /* split, commit in a kernel that may still run */
                               /* (side stream): poll the lock first (bounded), */
                               /* the reserve's status here for every block;    */
                               /* NULL: neither                                 */
    bool handed;               /* side stream: the previous frame's commit     */
                               /* hands the lock on through the arrival count  */
};

/* The metadata image staged by the arena's block functions. */
extern __shared__ uint64_t arena_smem[];

/* Programmatic dependent launch (sm_90): count lets generate's blocks be
 * scheduled once every count block has posted its total, so they wait
 * resident, not in the launch queue, while the last block scans and
 * allocates; generate waits for count's completion (and its memory) before
 * reading anything count wrote.  Both are no-ops for a plain launch. */
static __device__ void pdl_launch_dependents(void) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
static __device__ void pdl_wait(void) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* The side-stream commit (tail_args.reserve_status): how many times the
 * last block polls the arena's lock (~32 ns apart: it answers as soon as
 * the previous frame's commit unlocks) before it gives the frame up
 * (status WH_ERR_RETRY_LIMIT, a failure counted, the slot untouched) --
 * bounded well below the grid barrier's wait (MC_BARRIER_TRIES), so the
 * other blocks never time out waiting for a last block that waits for a
 * late commit. */
#define MC_LOCK_POLLS (1u << 19)

/* Timestamps inside one-kernel frames (--profile only; g_stamps NULL
 * otherwise: one load and a branch).  Per frame f < ST_FRAMES, ST_SLOTS
 * words of %globaltimer (ns): */
enum {
    ST_START,     /* the first block's start (atomicMin; g_stamps0)    */
    ST_LAST,      /* the last block knows it is last                  */
    ST_RESERVE0,  /* its scan done (the reserve begun before it)      */
    ST_RESERVE1,  /* the reserve done                                 */
    ST_OPEN,      /* the barrier opened                               */
    ST_COMMITTED, /* the last block's in-kernel commit done           */
    ST_END,       /* the latest block's end (atomicMax)               */
    ST_SIDE0,     /* commit_kernel of frame f: start, end             */
    ST_SIDE1,
    ST_FIRST, /* the first block to arrive                        */
    ST_BATON, /* the last block saw the baton, where it polled    */
    ST_SLOTS
};
#define ST_FRAMES 64u
__device__ uint64_t *g_stamps, *g_stamps0;
__device__ uint32_t g_side_seq; /* commit_kernel's frame: launches since the reset */
static __device__ uint64_t globaltimer(void) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
static __device__ void stamp(uint32_t f, int slot) {
    if (g_stamps && f < ST_FRAMES) g_stamps[f * ST_SLOTS + slot] = globaltimer();
}

typedef cub::BlockReduce<uint32_t, THREADS> block_reduce;
typedef cub::BlockScan<uint32_t, THREADS> block_scan;

/* One warp of the last block (every lane): brick_off = the exclusive scan of
 * brick_tris, nb <= 32 N (N a lane).  Returns the total.  A tail whose
 * thread 0 reserves has a warp scan up to 512 bricks (the one-kernel
 * frame's 64^3 grid), so the reserve runs beside it; in a block-wide scan
 * thread 0's loads hold the block back (scan phase 1.25 us against (a)'s
 * 0.87 at 64^3; 1.18 with the warp).  Other tails keep the block scan above
 * 256: for (a) the warp is slower there (1.19 us). */
#define MC_WARP_SCAN_MAX     256u /* 8 a lane */
#define MC_WARP_SCAN_RESERVE 512u /* 16 a lane */
template <int N>
static __device__ uint32_t warp_scan_totals(uint32_t nb, const uint32_t *brick_tris, uint32_t *brick_off) {
    const uint32_t lane = threadIdx.x & 31u;
    uint32_t v[N], mine = 0;
    for (int i = 0; i < N; ++i) {
        uint32_t idx = lane * (uint32_t)N + i;
        v[i] = idx < nb ? __ldcg(&brick_tris[idx]) : 0u;
        mine += v[i];
    }
    uint32_t incl = mine;
    for (uint32_t d = 1; d < 32u; d <<= 1) {
        uint32_t u = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += u;
    }
    uint32_t off = incl - mine;
    for (int i = 0; i < N; ++i) {
        uint32_t idx = lane * (uint32_t)N + i;
        if (idx < nb) brick_off[idx] = off;
        off += v[i];
    }
    return __shfl_sync(0xffffffffu, incl, 31);
}

/* The whole last block: the same for any nb, 2048 a round. */
static __device__ uint32_t block_scan_totals(uint32_t nb, const uint32_t *brick_tris, uint32_t *brick_off,
                                             block_scan::TempStorage &tmp) {
    uint32_t running = 0;
    for (uint32_t base = 0; base < nb; base += THREADS * 8u) {
        uint32_t v[8], agg;
        for (int i = 0; i < 8; ++i) {
            uint32_t idx = base + threadIdx.x * 8u + i;
            v[i] = idx < nb ? __ldcg(&brick_tris[idx]) : 0u;
        }
        __syncthreads(); /* tmp reused */
        block_scan(tmp).ExclusiveSum(v, v, agg);
        for (int i = 0; i < 8; ++i) {
            uint32_t idx = base + threadIdx.x * 8u + i;
            if (idx < nb) brick_off[idx] = running + v[i];
        }
        running += agg;
    }
    return running;
}

/* The arrival word: blocks count in in its low bits; in the one-kernel
 * frame with the commit on a side stream, the previous frame's commit adds
 * its baton (wh_arena_ring_baton) above them -- MC_HANDED: the arena's lock
 * is handed to this frame's reserve; MC_EMPTY: it had nothing to commit.
 * So the last block learns from the add it arrives with, in the same round
 * trip, that the lock is its own and the commit's writes visible
 * (acquire), and reads the plan at once. */
#define MC_BATON_SHIFT 20u
#define MC_ARRIVALS    ((1u << MC_BATON_SHIFT) - 1u)
#define MC_HANDED      (1u << MC_BATON_SHIFT)
#define MC_EMPTY       (2u << MC_BATON_SHIFT)

/* wh_arena_ring_commit by the whole block: frames reservations of the ring
 * of k slots from ring[0] (NOW: the one of *ring), each awaited up to
 * MC_COMMIT_POLLS polls; the lock handed on through an arrival word
 * (MC_HANDED, MC_EMPTY): baton after each frame but the last, last after
 * that (NULL: unlock).  The mode a constant at each call: the kernel keeps
 * only that mode's code. */
#define MC_COMMIT_POLLS (1u << 21) /* ~1 s of 64 ns sleeps and L2 polls */
static __forceinline__ __device__ wh_status mc_commit(wh_arena_commit_mode mode, wh_arena_ref a,
                                                      const wh_arena_span *ring, uint32_t k, uint32_t frames,
                                                      uint64_t smem_bytes, uint32_t *baton, uint32_t *last) {
    wh_arena_commit c;
    memset(&c, 0, sizeof c);
    c.mode = mode;
    c.ring = (wh_arena_span *)ring;
    c.k = k;
    c.frames = frames;
    c.tries = MC_COMMIT_POLLS;
    c.smem = arena_smem;
    c.smem_bytes = smem_bytes;
    wh_arena_ring_baton b = {baton, MC_HANDED, MC_EMPTY}, l = {last, MC_HANDED, MC_EMPTY};
    c.baton = b;
    c.last = l;
    return wh_arena_ring_commit(a, &c);
}

/* A block's arrival (thread 0): post the brick's total and count the
 * block in; returns the word before (last: its arrivals are nb - 1).
 * acq_rel: the total is out before the count (release), and the last
 * block's thread 0 sees every other total and the baton's writes -- and,
 * after a block barrier, so do its other threads (acquire). */
static __device__ uint32_t arrive(uint32_t total, uint32_t *brick_tris, uint32_t *done) {
    brick_tris[brick_id()] = total;
    return wh_atomic_fetch_add(done, 1u, WH_ACQ_REL);
}
static __device__ bool arrived_last(uint32_t before, uint32_t nb) { return (before & MC_ARRIVALS) == nb - 1u; }

/* The last block's thread 0, where the commit hands the lock on: whether
 * it did (the baton in the word its block arrived with, else polled,
 * bounded: a commit runs late only if the GPU cannot hold it and the frame
 * at once; the timeout is counted in *stuck).  Anything but MC_HANDED: the
 * reserve takes the lock itself. */
#define MC_BATON_POLLS (1u << 19)
static __device__ bool baton_handed(uint32_t before, uint32_t *done, uint32_t *stuck, uint32_t frame) {
    uint32_t b = before & ~MC_ARRIVALS;
    if (b) return b == MC_HANDED;
    for (uint32_t k = 0; b == 0 && k < MC_BATON_POLLS; ++k) {
        __nanosleep(32);
        b = wh_atomic_load(done, WH_ACQUIRE) & ~MC_ARRIVALS;
    }
    if (b == 0) atomicAdd(stuck, 1u);
    stamp(frame, ST_BATON);
    return b == MC_HANDED;
}

/* The last block's tail (every thread of it, after a barrier that follows
 * thread 0's arrival): scan the brick totals into brick offsets, hand the
 * frame's total on (history, the frame counter, the count word), and with
 * ARENA replace the mesh in *t.span: with t.split only reserve it (thread
 * 0: the span from the plan the last commit made; the block core is
 * brought up to date by a commit after the address is out), else the whole
 * replace by the block (metadata staged in dynamic smem).  The reserve's
 * first half (the lock, the plan's loads) needs no total: thread 0 runs it
 * while warp 1 scans (up to MC_WARP_SCAN_RESERVE bricks), so only the second
 * half, a little arithmetic and the span written, follows the scan.  With
 * t.reserve_status (the commit on a side stream) the lock may still be held
 * by the previous frame's reservation: polled, bounded (MC_LOCK_POLLS); the
 * reserve's status goes to *t.reserve_status for every block -- on failure
 * the slot may still hold an older, live mesh, so no block may write.
 * announce (thread 0; NULL: none): the reservation is left for the caller
 * to publish after the fence that opens its barrier
 * (wh_arena_ring_reserve_publish), true where it must.  arrived (thread
 * 0; NULL: no hand-off): the word its block arrived with -- the baton
 * there or awaited (baton_handed) while warp 1 scans, and if the lock was
 * handed on the reserve only reads.  stuck: a baton that never came.
 * Returns the frame's total. */
template <bool ARENA>
static __device__ uint32_t frame_tail(uint32_t nb, uint32_t frame, uint32_t *brick_tris, uint32_t *brick_off,
                                      uint32_t *done, const tail_args &t, block_scan::TempStorage &tmp,
                                      bool *announce = NULL, const uint32_t *arrived = NULL, uint32_t *stuck = NULL) {
    __shared__ uint32_t total;
    wh_arena_ring_ticket tk;
    wh_status st = WH_OK;
    if (ARENA && t.split && threadIdx.x == 0) {
        if (arrived && baton_handed(*arrived, done, stuck, frame)) {
            wh_arena_ring_reserve_read_handed(t.arena, t.span, &tk);
        } else {
            st = wh_arena_ring_reserve_begin(t.arena, t.span, t.reserve_status ? MC_LOCK_POLLS : 0u, &tk);
        }
    }
    if (nb > (ARENA && t.split ? MC_WARP_SCAN_RESERVE : MC_WARP_SCAN_MAX)) {
        uint32_t running = block_scan_totals(nb, brick_tris, brick_off, tmp);
        if (threadIdx.x == 0) total = running;
    } else if (threadIdx.x / 32u == 1u) {
        uint32_t running = nb <= MC_WARP_SCAN_MAX ? warp_scan_totals<8>(nb, brick_tris, brick_off)
                                                  : warp_scan_totals<16>(nb, brick_tris, brick_off);
        if (threadIdx.x == 32u) total = running;
    }
    __syncthreads();
    uint32_t running = total;
    if (threadIdx.x == 0) {
        *done = 0; /* for the next launch */
        t.history[frame] = running;
        *t.frame = frame + 1u;
        if (t.count_out) *(volatile size_t *)t.count_out = running;
        stamp(frame, ST_RESERVE0);
    }
    if (ARENA && t.split) { /* one thread, a little arithmetic: the critical path */
        if (threadIdx.x == 0) {
            if (st == WH_OK && announce) {
                *announce = true;
                st = wh_arena_ring_reserve_end_deferred(t.arena, &tk, running, TRI_BYTES, t.next);
            } else if (st == WH_OK) {
                st = wh_arena_ring_reserve_end(t.arena, &tk, running, TRI_BYTES, t.next);
            }
            if (t.reserve_status) *t.reserve_status = (uint32_t)st;
        }
    } else if (ARENA) { /* the whole block: metadata staged in smem */
        (void)wh_arena_replace_span_block(t.arena, running, TRI_BYTES, t.span, arena_smem, t.smem_bytes);
    }
    if (threadIdx.x == 0) stamp(frame, ST_RESERVE1);
    return running;
}

/* Count: the brick's triangles into brick_tris; the last block to finish
 * (threadfence + a counter, as CUDA's threadFenceReduction) scans them into
 * brick_off and runs the tail, so no scan or allocation kernel follows.
 * ARENA: compiled with the arena's replace (c, in kernel); (a) and (b) run
 * the instance without it, so its code costs them no registers. */
template <bool ARENA>
static __global__ void __launch_bounds__(THREADS)
    count_kernel(int n, int balls, uint32_t *brick_tris, uint32_t *brick_off, uint32_t *done, tail_args t) {
    __shared__ float sf[NPTS_MAX];
    __shared__ mc_ball ball[MC_MAX_BALLS];
    __shared__ union {
        block_reduce::TempStorage r;
        block_scan::TempStorage s;
    } tmp;
    __shared__ uint8_t ntri[256];
    __shared__ bool last;
    int m = n - 1, cpt = (int)brick_cpt();
    uint32_t frame = *t.frame;
    load_ntri(ntri); /* load_brick syncs */
    load_brick(sf, ball, n, frame, balls, blockIdx.x * BX, blockIdx.y * BY, blockIdx.z * c_bz);
    uint32_t tris = 0;
    for (int j = 0; j < cpt; ++j) {
        int lx, ly, lz;
        if (my_cell(j, m, grid_brick(), &lx, &ly, &lz)) tris += ntri[brick_case(sf, lx, ly, lz)];
    }
    uint32_t total = block_reduce(tmp.r).Sum(tris);
    uint32_t nb = gridDim.x * gridDim.y * gridDim.z;
    if (threadIdx.x == 0) last = arrived_last(arrive(total, brick_tris, done), nb);
    __syncthreads();
    pdl_launch_dependents();
    if (!last) return;
    (void)frame_tail<ARENA>(nb, frame, brick_tris, brick_off, done, t, tmp.s);
}

static __device__ float3 edge_point(const mc_gtables *tab, const float *sf, int n, int x0, int y0, int z0, int lx,
                                    int ly, int lz, int e) {
    int a = tab->edge[e][0], b = tab->edge[e][1];
    int ax = lx + (a & 1), ay = ly + ((a >> 1) & 1), az = lz + ((a >> 2) & 1);
    int bx = lx + (b & 1), by = ly + ((b >> 1) & 1), bz = lz + ((b >> 2) & 1);
    float va = sf[(az * PY + ay) * PX + ax], vb = sf[(bz * PY + by) * PX + bx];
    float s = (MC_ISO - va) / (vb - va), inv = 1.0f / (float)(n - 1);
    float pax = (float)(x0 + ax), pay = (float)(y0 + ay), paz = (float)(z0 + az);
    return make_float3((pax + s * (float)(bx - ax)) * inv, (pay + s * (float)(by - ay)) * inv,
                       (paz + s * (float)(bz - az)) * inv);
}

/* This thread's triangles (cells cs of the brick at x0, y0, z0), from
 * triangle index tri on, into the span (none past its count: an arena
 * window may hold fewer than the frame made). */
static __device__ void emit(const mc_gtables *tab, const float *sf, int n, int x0, int y0, int z0, const uint32_t *cs,
                            const wh_arena_span *sp, uint64_t tri) {
    const int cpt = (int)brick_cpt();
    for (int j = 0; j < CPT_MAX && j < cpt; ++j) { /* unrolled: cs stays in registers */
        int lx, ly, lz;
        my_cell(j, n - 1, make_int3(x0, y0, z0), &lx, &ly, &lz);
        for (int k = 0; k < tab->ntri[cs[j]] && tri < sp->count; ++k, ++tri) { /* a window may end early */
            float *dst = (float *)wh_arena_span_at(sp, tri, TRI_BYTES);
            for (int v = 0; v < 3; ++v) {
                float3 p = edge_point(tab, sf, n, x0, y0, z0, lx, ly, lz, tab->tri[cs[j]][3 * k + v]);
                dst[3 * v] = p.x;
                dst[3 * v + 1] = p.y;
                dst[3 * v + 2] = p.z;
            }
        }
    }
}

/* The commit of a reservation count's tail made (tail_args.split). */
struct commit_args {
    wh_arena_ref arena;
    const wh_arena_span *span; /* NULL: nothing to commit */
    uint64_t smem_bytes;       /* dynamic smem to stage the metadata in */
    uint32_t *baton;           /* commit_kernel: the next frame's arrival   */
                               /* word, the lock handed on; NULL: unlock    */
};

/* Generate, bricks with triangles only.  out: the mesh buffer; or NULL and
 * span: the arena's (a null span: the allocation failed, the frame is
 * dropped, nothing is written).  The early returns are block-uniform.
 * COMMIT: brick 0's block first commits the arena reservation in cm (off
 * the critical path: the span is already out; the other blocks emit). */
template <bool COMMIT>
static __global__ void __launch_bounds__(THREADS)
    generate_kernel(int n, int balls, const uint32_t *frame_ptr, const uint32_t *brick_tris, const uint32_t *brick_off,
                    float *out, const wh_arena_span *span, commit_args cm) {
    __shared__ float sf[NPTS_MAX];
    __shared__ mc_ball ball[MC_MAX_BALLS];
    __shared__ block_scan::TempStorage tmp;
    __shared__ mc_gtables tab;
    pdl_wait(); /* before reading what count wrote */
    uint32_t bid = brick_id();
    if (COMMIT && bid == 0) (void)mc_commit(WH_ARENA_COMMIT_NOW, cm.arena, cm.span, 1u, 1u, cm.smem_bytes, NULL, NULL);
    if (brick_tris[bid] == 0) return;
    wh_arena_span sp;
    if (out) {
        sp = wh_arena_span_of(out);
    } else {
        sp = *span;
        if (!sp.part[0].ptr) return;
    }
    int m = n - 1, x0 = blockIdx.x * BX, y0 = blockIdx.y * BY, z0 = blockIdx.z * c_bz;
    load_tables(&tab);                                           /* load_brick syncs */
    load_brick(sf, ball, n, *frame_ptr - 1u, balls, x0, y0, z0); /* count moved the frame on */
    uint32_t cs[CPT_MAX], mine = brick_cases(&tab, sf, m, grid_brick(), cs), off;
    block_scan(tmp).ExclusiveSum(mine, off);
    emit(&tab, sf, n, x0, y0, z0, cs, &sp, (uint64_t)brick_off[bid] + off);
}

/* Count, allocate and generate in ONE kernel, for grids whose bricks are
 * all resident at once (launched cooperatively, so the runtime refuses a
 * grid that is not): every block computes its field and cases once, posts
 * its total, and waits at a grid barrier that the last block opens after
 * its tail (scan, and with ARENA the replace); then every block writes its
 * triangles from the field still in shared memory.  This is what an
 * allocation the GPU makes itself allows: no second launch, no second pass
 * over the field, no kernel boundary between count and generate.  (b)
 * cannot do it -- its host allocates between the two.  out: the mesh
 * buffer (a), or NULL and the span in t.span (c).  The barrier is an epoch
 * word: each block reads it before it arrives, so the last block's
 * increment is the one it waits for; thread 0 waits (other blocks change
 * it), bounded -- on a timeout the block counts it in *stuck and writes
 * nothing.  SIDE (with ARENA, t.split and t.reserve_status): the last block
 * only reserves; commit_kernel commits on a second stream, overlapping the
 * next frame, and every block reads the reserve's status before it writes.
 * Four blocks an SM (64 registers): 528 resident bricks on 132 SMs, so a
 * 64^3 grid runs bricks of 8x8x8 (auto_bz). */
#define MC_BARRIER_TRIES (1u << 22) /* ~0.5 s of 32 ns sleeps and polls */
static_assert(MC_LOCK_POLLS <= MC_BARRIER_TRIES / 8u, "the lock poll ends well before the barrier's wait");
template <bool ARENA, bool SIDE = false>
static __global__ void __launch_bounds__(THREADS, 4)
    fused_kernel(int n, int balls, uint32_t *brick_tris, uint32_t *brick_off, uint32_t *done, uint32_t *epoch,
                 uint32_t *stuck, tail_args t, float *out) {
    __shared__ float sf[NPTS_MAX];
    __shared__ mc_ball ball[MC_MAX_BALLS];
    __shared__ block_scan::TempStorage tmp;
    __shared__ mc_gtables tab;
    __shared__ bool last, open;
    static_assert(ARENA || !SIDE, "the side-stream commit is the arena's");
    int m = n - 1, x0 = blockIdx.x * BX, y0 = blockIdx.y * BY, z0 = blockIdx.z * c_bz;
    load_tables(&tab);         /* load_brick syncs; written once, before any frame */
    pdl_wait();                /* launched by PDL: the previous frame done, and its memory */
    uint32_t frame = *t.frame; /* the last block moves it on after every block read it */
    if (threadIdx.x == 0 && g_stamps0 && frame < ST_FRAMES)
        atomicMin((unsigned long long *)&g_stamps0[frame], (unsigned long long)globaltimer());
    load_brick(sf, ball, n, frame, balls, x0, y0, z0);
    uint32_t cs[CPT_MAX], mine = brick_cases(&tab, sf, m, grid_brick(), cs), off, total;
    block_scan(tmp).ExclusiveSum(mine, off, total);
    uint32_t nb = gridDim.x * gridDim.y * gridDim.z, bid = brick_id(), e = 0;
    uint32_t before = 0; /* thread 0: the arrival word (the baton) */
    if (threadIdx.x == 0) {
        e = *(volatile uint32_t *)epoch; /* before arriving: the last block adds 1 after */
        before = arrive(total, brick_tris, done);
        last = arrived_last(before, nb);
        if ((before & MC_ARRIVALS) == 0u) stamp(frame, ST_FIRST);
        if (last) stamp(frame, ST_LAST);
        open = true;
    }
    __syncthreads();
    if (last) {
        bool announce = false; /* SIDE: the reservation published after the fence */
        (void)frame_tail<ARENA>(nb, frame, brick_tris, brick_off, done, t, tmp, SIDE ? &announce : NULL,
                                SIDE && t.handed ? &before : NULL, stuck);
        __syncthreads();        /* every thread's offsets and the span ... */
        if (threadIdx.x == 0) { /* ... before the barrier opens: as grid.sync, the CTA */
            __threadfence();    /* barrier then one fence, cumulative over the block */
            atomicExch(epoch, e + 1u);
            if (announce) wh_arena_ring_reserve_publish(t.arena); /* the commit's go, off the path */
            stamp(frame, ST_OPEN);
        }
        if (ARENA && !SIDE && t.split) { /* the core catches up while the others emit */
            (void)mc_commit(WH_ARENA_COMMIT_NOW, t.arena, t.span, 1u, 1u, t.smem_bytes, NULL, NULL);
            if (threadIdx.x == 0) stamp(frame, ST_COMMITTED);
        }
    } else {
        if (threadIdx.x == 0) {
            unsigned k = 0; /* short sleeps: the wait is a few us */
            while (k < MC_BARRIER_TRIES && *(volatile uint32_t *)epoch == e) {
                __nanosleep(32);
                ++k;
            }
            __threadfence(); /* what the last block wrote, after the epoch */
            if (k == MC_BARRIER_TRIES) {
                open = false;
                atomicAdd(stuck, 1u);
            }
        }
        __syncthreads();
    }
    pdl_launch_dependents();         /* the next frame's blocks may come and wait */
    if (!open || total == 0) return; /* block-uniform */
    wh_arena_span sp;
    uint64_t first = (uint64_t)__ldcg(&brick_off[bid]) + off; /* every load from L2 first: one round trip */
    if (out) {
        sp = wh_arena_span_of(out);
    } else { /* written by the last block */
        uint32_t rs = SIDE ? __ldcg(t.reserve_status) : (uint32_t)WH_OK;
        const uint64_t *w = (const uint64_t *)t.span;
        uint64_t *d = (uint64_t *)&sp;
        for (int i = 0; i < (int)(sizeof sp / 8); ++i) d[i] = __ldcg(&w[i]);
        if (rs != (uint32_t)WH_OK) return; /* no span of this frame (side commit): dropped */
        if (!sp.part[0].ptr) return;       /* the allocation failed: frame dropped */
    }
    emit(&tab, sf, n, x0, y0, z0, cs, &sp, first);
    if (g_stamps) { /* uniform: every thread of every block */
        __syncthreads();
        if (threadIdx.x == 0 && frame < ST_FRAMES)
            atomicMax((unsigned long long *)&g_stamps[frame * ST_SLOTS + ST_END], (unsigned long long)globaltimer());
    }
}

/* The commit of a reservation fused_kernel<true, true> makes, on the side
 * stream (one block, WH_ARENA_COMMIT_AHEAD of one frame; the image staged
 * in smem, up to WH__ARENA_STAGE_WORDS words a thread): launched without
 * waiting for its frame's kernel, it waits (thread 0, bounded) until that
 * kernel's last block has reserved the span, then runs the real replace on
 * the block core, the mirror and the next frame's plan while the frame's
 * blocks still emit, and hands the lock on to the next frame's reserve
 * through its arrival word (cm.baton; NULL: it unlocks) -- off the frame's
 * path.  A frame whose reserve failed reserves nothing: the wait runs out
 * and the commit hands on MC_EMPTY.  --profile stamps when the reservation
 * was seen and when the commit ended. */
static __global__ void __launch_bounds__(THREADS, 1) commit_kernel(commit_args cm) {
    uint32_t f = 0;
    if (threadIdx.x == 0 && g_stamps) { /* --profile: when the reservation was seen (the arena's own wait; */
        f = atomicAdd(&g_side_seq, 1u); /* the committer's then answers at its first poll)                */
        if (wh__ring_wait_reserved(cm.arena, cm.span, MC_COMMIT_POLLS)) stamp(f, ST_SIDE0);
    }
    (void)mc_commit(WH_ARENA_COMMIT_AHEAD, cm.arena, cm.span, 1u, 1u, cm.smem_bytes, NULL, cm.baton);
    if (threadIdx.x == 0 && g_stamps) stamp(f, ST_SIDE1);
}

/* The commits of a chain of frames (a pass, or a captured graph) by ONE
 * block on the side stream, launched with the chain's first frame
 * (WH_ARENA_COMMIT_AHEAD of the chain's frames): it waits for each frame's reservation
 * in turn, keeps the arena's image in smem from frame to frame -- so a
 * commit reloads only the words the reserve wrote, and only allocates: the
 * free of the mesh it replaces was made on the copy by the previous
 * commit's plan -- and hands the lock on to the next frame through its
 * arrival word, the chain's last commit unlocking.  One launch a chain
 * instead of one a frame. */
static __global__ void __launch_bounds__(THREADS, 1)
    chain_commit_kernel(commit_args cm, const wh_arena_span *ring, uint32_t k, uint32_t frames) {
    (void)mc_commit(WH_ARENA_COMMIT_AHEAD, cm.arena, ring, k, frames, cm.smem_bytes, cm.baton, NULL);
}

/* ---- one pass: count, scan and write as each brick goes ------------------------------ *
 * For grids of any size (the blocks need not all be resident): a block
 * takes a ticket -- its brick, in the order blocks start, so every brick
 * before it has started -- computes its field and cases once, and learns
 * its triangle offset by a decoupled look-back (Merrill & Garland, "Single-
 * pass Parallel Prefix Scan with Decoupled Look-back", 2016): it posts its
 * total, sums the totals of the bricks before it backwards, a warp 32 at a
 * time, until it meets a brick that posted its inclusive prefix, and posts
 * its own.  Then it writes at once: no grid barrier, no second pass.
 *   (a): into the worst-case buffer.
 *   (c): into the window of the frame's arena reservation, known before
 *     its count and without a lock: the ring's replaces run on a forecast
 *     (arena/forecast.h: a few intervals that follow the block core
 *     exactly).  Ticket 0 is the arena block: while the bricks count, it
 *     runs the previous frame's replace on the forecast, posts it for the
 *     committer, and publishes this frame's window forecast from it.  The
 *     last brick leaves the frame's total for the next frame's arena block
 *     (a chain's last frame posts its own).  The committer
 *     (posts_commit_kernel, one block on a side stream for the chain)
 *     holds the arena's lock, commits the posts in order against the real
 *     block core -- WH_ERR_CORRUPT if the core put a span anywhere but
 *     where the forecast did -- and stamps the forecast exact at the
 *     chain's end, so the next chain's arena block forecasts its first
 *     window too (else the committer publishes it from the real state).  A
 *     frame whose total outgrew its window keeps what fit, and the arena
 *     counts a failure (a dropped frame).  At 16^3 a frame takes 10.1 us
 *     against 6 for (a) one pass, and at 128^3 57.5 against 56.0.  Opening
 *     each window from the plan under the lock in ticket 0 takes 19 us a
 *     frame before its count, 15.8 after its prefix; forecasting the
 *     windows but doing the replace and the post in the last brick, 11.8
 *     (~6 us of one thread's work at the frame's end).
 * The look-back words carry a tag from a launch counter that never resets
 * (onepass_args.seq), so no word needs clearing between frames.  Every
 * wait is bounded (MC_LOOK_TRIES; a timeout counted in *stuck, the
 * brick writes nothing).  Like the side-stream commit, this assumes the
 * committer's block resident beside the frame's (launched first, at the
 * greatest priority). */
#define MC_POSTS 16 /* frames posted ahead of the committer, at most */
/* What the one-pass frames count (onepass_args.stuck): timeouts by wait,
 * forecasts lost (a replace the forecast could not follow: the frames after
 * it get no window until the next chain), the arena block's work (ns, summed). */
enum {
    ONEPASS_STUCK_LOOK,
    ONEPASS_STUCK_WINDOW,
    ONEPASS_STUCK_POST,
    ONEPASS_LOST,
    ONEPASS_POST_NS,
    ONEPASS_POSTS,
    ONEPASS_STUCK_KINDS
};
struct onepass_window {
    wh_arena_span w[2];                 /* where element i goes, by the tag's parity  */
    uint32_t tag[2];                    /* the launch whose window it is              */
    wh_arena_forecast fc;               /* the ring, forecast                         */
    wh_arena_ring_post posts[MC_POSTS]; /* launch q's in posts[q % MC_POSTS] */
    uint32_t consumed;                  /* posts the committer has committed (q + 1)  */
    uint32_t total;                     /* the last frame's triangles, for its post    */
    uint32_t chains_stopped;            /* committers that stopped short              */
    uint32_t chains_unforecast;         /* ... that ended with no valid forecast       */
};
struct onepass_args {
    uint64_t *lb;        /* [bricks]: tag << 34 | flag << 32 | triangles */
    uint32_t *seq;       /* launches so far (never reset)              */
    uint32_t *ticket;    /* tickets                                    */
    uint32_t *stuck;     /* [ONEPASS_STUCK_KINDS] */
    uint3 bricks;        /* the grid of bricks                         */
    onepass_window *win; /* (c)                                         */
    uint32_t k, slot;    /* (c): K slots; this frame replaces slot      */
    bool first, last;    /* (c): the chain's first frame, its last      */
};
#define LB_TOTAL  1ull /* the brick's own total */
#define LB_PREFIX 2ull /* its inclusive prefix  */
static __device__ uint64_t lb_word(uint32_t tag, uint64_t flag, uint32_t v) {
    return (uint64_t)tag << 34 | flag << 32 | v;
}
static __device__ uint32_t lb_tag(uint32_t seq) { return 1u + seq % ((1u << 30) - 1u); }

/* Warp 0 of the block of ticket tk (every lane): post total, look back,
 * post the inclusive prefix; returns the exclusive prefix, or UINT32_MAX
 * after MC_LOOK_TRIES rounds without an answer. */
#define MC_LOOK_TRIES (1u << 20) /* each an L2 round trip: ~1 s */
static __device__ uint32_t look_back(uint64_t *lb, uint32_t tk, uint32_t total, uint32_t tag) {
    const uint32_t lane = threadIdx.x & 31u;
    volatile uint64_t *v = lb;
    if (tk == 0) {
        if (lane == 0) v[0] = lb_word(tag, LB_PREFIX, total);
        return 0;
    }
    if (lane == 0) v[tk] = lb_word(tag, LB_TOTAL, total);
    uint32_t excl = 0;
    int64_t j = (int64_t)tk - 1;
    for (uint32_t k = 0; k < MC_LOOK_TRIES; ++k) {
        int64_t idx = j - (int64_t)lane;
        uint64_t w = idx >= 0 ? v[idx] : lb_word(tag, LB_PREFIX, 0); /* before brick 0: a prefix of 0 */
        uint32_t flag = (uint32_t)(w >> 32) & 3u;
        bool ready = (uint32_t)(w >> 34) == tag && flag != 0;
        uint32_t rmask = __ballot_sync(0xffffffffu, ready);
        uint32_t pmask = __ballot_sync(0xffffffffu, ready && flag == LB_PREFIX);
        uint32_t need = pmask ? ((pmask & (0u - pmask)) << 1) - 1u : 0xffffffffu; /* lanes up to the first prefix */
        if ((rmask & need) != need) {                                             /* uniform */
            __nanosleep(20);
            continue;
        }
        uint32_t part = (need >> lane) & 1u ? (uint32_t)w : 0u;
        for (int d = 16; d > 0; d >>= 1) part += __shfl_xor_sync(0xffffffffu, part, d);
        excl += part;
        if (pmask) {
            if (lane == 0) v[tk] = lb_word(tag, LB_PREFIX, excl + total);
            return excl;
        }
        j -= 32;
    }
    return UINT32_MAX;
}

/* (c), thread 0: wait (bounded) for this launch's window; false on a timeout. */
static __device__ bool onepass_window_of(const onepass_args &o, uint32_t tag, wh_arena_span *w) {
    uint32_t k = 0, *word = &o.win->tag[tag & 1u];
    while (k < MC_LOOK_TRIES && wh_atomic_load(word, WH_ACQUIRE) != tag) {
        __nanosleep(32);
        ++k;
    }
    if (k == MC_LOOK_TRIES) return false;
    *w = o.win->w[tag & 1u];
    return true;
}

/* (c), one thread: the window of the replace of slot, forecast from fc,
 * published for launch tag (release: the window out before the tag). */
static __device__ void onepass_publish_window(onepass_window *win, const wh_arena_forecast *fc, uint32_t slot,
                                              uint32_t tag) {
    wh_arena_ring_forecast_window(fc, slot, TRI_BYTES, &win->w[tag & 1u]);
    __threadfence();
    *(volatile uint32_t *)&win->tag[tag & 1u] = tag;
}

/* (c), one thread: the post of launch pseq (its total all, clamped to its
 * window pw, slot pslot) -- the replace run on the forecast -- and, unless
 * next is 0, the window of the replace of slot nslot for launch tag next,
 * forecast from it and published first (the other buffer: the blocks of
 * launch pseq may still read theirs).  Waits (bounded) until the committer
 * has consumed the post that had the place.  No lock, no commit awaited. */
static __device__ void onepass_post(const onepass_args &o, uint32_t pseq, uint32_t pslot, const wh_arena_span *pw,
                                    uint32_t all, uint32_t nslot, uint32_t next) {
    onepass_window *win = o.win;
    wh_arena_forecast fc = win->fc; /* local: the loads at once, not one by one */
    uint64_t n = all < pw->count ? all : pw->count;
    wh_arena_span fs;
    wh_status fst = wh_arena_ring_forecast_replace(&fc, pslot, n, TRI_BYTES, &fs);
    if (fst == WH_ERR_CORRUPT) atomicAdd(&o.stuck[ONEPASS_LOST], 1u);
    if (next && fc.valid) onepass_publish_window(win, &fc, nslot, next);
    win->fc = fc; /* the next post reads it: after this kernel */
    uint32_t k = 0;
    while (k < MC_LOOK_TRIES && wh_atomic_load(&win->consumed, WH_ACQUIRE) + MC_POSTS < pseq + 1u) {
        __nanosleep(64);
        ++k;
    }
    if (k == MC_LOOK_TRIES) atomicAdd(&o.stuck[ONEPASS_STUCK_POST], 1u);
    wh_arena_ring_post *p = &win->posts[pseq % MC_POSTS];
    p->count = n;
    p->clamped = n < all;
    p->fstatus = (uint32_t)fst;
    p->forecast = fs;
    __threadfence();
    *(volatile uint32_t *)&p->seq = pseq + 1u; /* release */
}

/* (c), the arena block (ticket 0: no brick), thread 0, while the bricks
 * count: the previous frame's post, then this frame's window, forecast --
 * off the frames' path, so that neither the last brick of a frame nor the
 * start of the next waits for it.  A chain's first frame posts nothing
 * (the last frame of a chain posts its own) and forecasts its window only
 * if the forecast is current (no block taken or freed since the last
 * chain's committer left it exact); else the chain's committer publishes
 * it. */
static __device__ void onepass_arena_block(const onepass_args &o, const tail_args &t, uint32_t seq, uint32_t tag) {
    onepass_window *win = o.win;
    uint64_t t0 = globaltimer();
    if (o.first) {
        if (!wh_arena_ring_forecast_current(&win->fc, t.arena)) return;
        wh_arena_forecast fc = win->fc; /* local: the loads at once */
        onepass_publish_window(win, &fc, o.slot, tag);
    } else {
        wh_arena_span pw = win->w[lb_tag(seq - 1u) & 1u];
        onepass_post(o, seq - 1u, (o.slot + o.k - 1u) % o.k, &pw, win->total, o.slot, tag);
    }
    atomicAdd(&o.stuck[ONEPASS_POST_NS], (uint32_t)(globaltimer() - t0));
    atomicAdd(&o.stuck[ONEPASS_POSTS], 1u);
}

template <bool ARENA>
static __global__ void __launch_bounds__(THREADS, 4)
    onepass_kernel(int n, int balls, onepass_args o, tail_args t, float *out) {
    __shared__ float sf[NPTS_MAX];
    __shared__ mc_ball ball[MC_MAX_BALLS];
    __shared__ block_scan::TempStorage tmp;
    __shared__ mc_gtables tab;
    __shared__ uint32_t s_tk, s_prefix;
    __shared__ wh_arena_span s_win;
    __shared__ bool s_win_ok;
    int m = n - 1;
    load_tables(&tab);                                          /* load_brick syncs; written once, before any frame */
    pdl_wait();                                                 /* the previous frame done, and its memory */
    uint32_t frame = *t.frame, seq = *o.seq, tag = lb_tag(seq); /* both read before the ticket (acq_rel) */
    uint32_t nb = o.bricks.x * o.bricks.y * o.bricks.z;
    const uint32_t A = ARENA ? 1u : 0u; /* (c): ticket 0 is the arena block */
    if (threadIdx.x == 0) {
        s_tk = wh_atomic_fetch_add(o.ticket, 1u, WH_ACQ_REL);
        s_win_ok = !ARENA; /* (c): the window, if it is there already (the previous */
        if (ARENA && wh_atomic_load(&o.win->tag[tag & 1u], WH_ACQUIRE) == tag) { /* frame published it): read */
            s_win = o.win->w[tag & 1u]; /* while the field is computed                       */
            s_win_ok = true;
        }
    }
    __syncthreads();
    const bool early = s_win_ok;
    if (ARENA && s_tk == 0) { /* uniform */
        if (threadIdx.x == 0) onepass_arena_block(o, t, seq, tag);
        return;
    }
    const uint32_t tk = s_tk - A; /* the brick */
    int3 b = make_int3((int)(tk % o.bricks.x) * BX, (int)(tk / o.bricks.x % o.bricks.y) * BY,
                       (int)(tk / (o.bricks.x * o.bricks.y) * c_bz));
    load_brick(sf, ball, n, frame, balls, b.x, b.y, b.z);
    uint32_t cs[CPT_MAX], mine = brick_cases(&tab, sf, m, b, cs), off, total;
    block_scan(tmp).ExclusiveSum(mine, off, total);
    if (threadIdx.x < 32) {
        uint32_t excl = look_back(o.lb, tk, total, tag);
        if (threadIdx.x == 0) s_prefix = excl;
    } else if (ARENA && threadIdx.x == 32 && !early) { /* (c): the window awaited beside the look-back */
        s_win_ok = onepass_window_of(o, tag, &s_win);
    }
    __syncthreads();
    /* the next frame's blocks may come and wait once every block has
     * started and has its window (earlier, at a chain's start, they could
     * fill the SMs before the committer has one to publish the window on) */
    pdl_launch_dependents();
    const uint32_t prefix = s_prefix;
    const bool ok = prefix != UINT32_MAX && s_win_ok; /* block-uniform */
    if (threadIdx.x == 0) {
        if (prefix == UINT32_MAX) atomicAdd(&o.stuck[ONEPASS_STUCK_LOOK], 1u);
        if (!s_win_ok) atomicAdd(&o.stuck[ONEPASS_STUCK_WINDOW], 1u);
    }
    if (threadIdx.x == 0 && tk == nb - 1u) { /* the last ticket: the frame's total (0 if unknown) */
        uint32_t all = ok ? prefix + total : 0u;
        *o.ticket = 0; /* every ticket taken */
        *o.seq = seq + 1u;
        t.history[frame] = all;
        *t.frame = frame + 1u;
        if (ARENA) o.win->total = all; /* for the next frame's arena block, which posts it */
        if (ARENA && o.last && s_win_ok) onepass_post(o, seq, o.slot, &s_win, all, 0u, 0u); /* a chain's last: */
    }                              /* posts its own, while the other threads write */
    if (!ok || total == 0) return; /* block-uniform */
    wh_arena_span sp = ARENA ? s_win : wh_arena_span_of(out);
    emit(&tab, sf, n, b.x, b.y, b.z, cs, &sp, (uint64_t)prefix + off);
}

/* The commits of a chain of one-pass frames (one block on the side
 * stream, launched with the chain's first frame): the arena's lock for the
 * chain, the forecast and frame 0's window made from the real state and
 * published with frame 0's launch tag, then each frame's post committed in
 * order, the image kept in smem (WH_ARENA_COMMIT_POSTS).  The
 * launch counter is read before frame 0 can move it: frame 0 moves it only
 * once it has this window. */
static __global__ void __launch_bounds__(THREADS, 1)
    posts_commit_kernel(commit_args cm, wh_arena_span *ring, uint32_t k, uint32_t frames, onepass_window *win,
                        const uint32_t *op_seq) {
    __shared__ uint32_t seq0;
    if (threadIdx.x == 0) seq0 = *(volatile const uint32_t *)op_seq;
    __syncthreads();
    uint32_t tag0 = lb_tag(seq0);
    wh_arena_ring_posts p = {
        win->posts,           MC_POSTS, seq0, &win->consumed, TRI_BYTES, &win->fc, &win->w[tag0 & 1u],
        &win->tag[tag0 & 1u], tag0};
    wh_arena_commit c;
    memset(&c, 0, sizeof c);
    c.mode = WH_ARENA_COMMIT_POSTS;
    c.ring = ring;
    c.k = k;
    c.frames = frames;
    c.tries = MC_COMMIT_POLLS;
    c.smem = arena_smem;
    c.smem_bytes = cm.smem_bytes;
    c.posts = &p;
    wh_status st = wh_arena_ring_commit(cm.arena, &c);
    if (threadIdx.x == 0 && st == WH_ERR_RETRY_LIMIT) /* no lock, or a post that never came (else the */
        atomicAdd(&win->chains_stopped, 1u);          /* last post's status)                          */
    if (threadIdx.x == 0 && !win->fc.valid) atomicAdd(&win->chains_unforecast, 1u);
}

/* ---- one frame ---------------------------------------------------------------------- */

struct ctx {
    int n, k, balls;
    uint32_t cells, nbricks, bz; /* bricks of 8 x 8 x bz cells */
    dim3 grid;
    uint32_t *brick_tris, *brick_off, *done, *history; /* history[frame]: triangles */
    uint32_t *frame;                                   /* device: the frame being made */
    size_t *tri_count;                                 /* [k]: the count a command reads */
    uint32_t *epoch, *stuck;                           /* fused_kernel's barrier, its timeouts */
    uint32_t *reserve_status;                          /* the side commit's frames: the reserve's */
    cudaStream_t s;
    cudaStream_t side;      /* the commits of the side-stream rows */
    cudaEvent_t fork, join; /* s -> side at frame 0; side -> s at the end */
    int side_priority;      /* the commit kernel's: the device's greatest */
    uint64_t *lb;           /* onepass_kernel: look-back words, a brick each */
    uint32_t *op_seq;       /* its launches so far */
    uint32_t *op_stuck;     /* its timeouts, by wait (ONEPASS_STUCK_*) */
    onepass_window *win;    /* its open window (c) */
};

static cudaError_t launch_count(ctx &c, const tail_args &t) {
    if (t.span)
        count_kernel<true><<<c.grid, THREADS, t.smem_bytes, c.s>>>(c.n, c.balls, c.brick_tris, c.brick_off, c.done, t);
    else
        count_kernel<false><<<c.grid, THREADS, 0, c.s>>>(c.n, c.balls, c.brick_tris, c.brick_off, c.done, t);
    return cudaGetLastError();
}
static void count(ctx &c, const tail_args &t) { WH_CUDA_OR_DIE(launch_count(c, t)); }
static tail_args tail(ctx &c) {
    tail_args t = {};
    t.frame = c.frame;
    t.history = c.history;
    return t;
}
/* Whether generate follows count by programmatic dependent launch: set by
 * pdl_probe (sm_90 and a frame that ran, plain and captured), used by the
 * variants that never sync -- in (b) a host round trip separates the two. */
static bool g_pdl = false;

static cudaError_t launch_generate(ctx &c, float *out, const wh_arena_span *span, bool pdl,
                                   const commit_args &cm = commit_args()) {
    size_t smem = cm.span ? cm.smem_bytes : 0;
    if (!pdl) {
        if (cm.span)
            generate_kernel<true>
                <<<c.grid, THREADS, smem, c.s>>>(c.n, c.balls, c.frame, c.brick_tris, c.brick_off, out, span, cm);
        else
            generate_kernel<false>
                <<<c.grid, THREADS, 0, c.s>>>(c.n, c.balls, c.frame, c.brick_tris, c.brick_off, out, span, cm);
        return cudaGetLastError();
    }
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = c.grid;
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = c.s;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    if (cm.span)
        return cudaLaunchKernelEx(&cfg, generate_kernel<true>, c.n, c.balls, (const uint32_t *)c.frame,
                                  (const uint32_t *)c.brick_tris, (const uint32_t *)c.brick_off, out, span, cm);
    return cudaLaunchKernelEx(&cfg, generate_kernel<false>, c.n, c.balls, (const uint32_t *)c.frame,
                              (const uint32_t *)c.brick_tris, (const uint32_t *)c.brick_off, out, span, cm);
}
static void generate(ctx &c, float *out, const wh_arena_span *span, bool pdl = g_pdl,
                     const commit_args &cm = commit_args()) {
    WH_CUDA_OR_DIE(launch_generate(c, out, span, pdl, cm));
}

/* A warpheap call: on failure report wh_last_error() and exit.  A destroy's
 * WH_ERR_IN_USE reports the frames a ring keeps live to the end, released
 * with the arena: not a failure here. */
static void ok_or_die(wh_status st, const char *prefix = "") {
    if (st != WH_OK && st != WH_ERR_IN_USE) {
        fprintf(stderr, "%s%s\n", prefix, wh_last_error());
        exit(1);
    }
}

static void reset_frames(ctx &c) { WH_CUDA_OR_DIE(cudaMemsetAsync(c.frame, 0, sizeof(uint32_t), c.s)); }

/* (a) */
static void frame_worst(ctx &c, int f, float **bufs) {
    count(c, tail(c));
    generate(c, bufs[f % c.k], NULL);
}

/* (c), a command per frame: free the mesh of frame f - K in slot k,
 * allocate this frame's (count read on the GPU, stride one triangle). */
static void frame_arena_cmd(ctx &c, int f, wh_arena *a, wh_arena_span *spans) {
    int k = f % c.k;
    tail_args t = tail(c);
    t.count_out = &c.tri_count[k];
    count(c, t);
    ok_or_die(wh_arena_replace_span_async(a, &c.tri_count[k], TRI_BYTES, &spans[k], c.s), "arena: ");
    generate(c, NULL, &spans[k]);
}

/* Dynamic smem to stage the arena's metadata in a kernel's last block: all
 * of it if it is at most max bytes, else 0 (the replace runs in place). */
static size_t staged_smem(wh_arena *a, size_t max) {
    return wh_arena_meta_bytes(a) <= max ? wh_arena_meta_bytes(a) : 0;
}
/* count_kernel: up to 48 KiB (its static smem, ~6 KiB, comes on top of it). */
static size_t count_arena_smem(wh_arena *a) { return staged_smem(a, 48 * 1024); }

/* The tail of frame f for (c) in a kernel: the last block replaces the mesh
 * in spans[f % K], with smem_bytes of staging; split: only reserves it (the
 * commit plans for spans[(f + 1) % K], the next frame's slot). */
static tail_args arena_tail(ctx &c, int f, wh_arena *a, wh_arena_span *spans, size_t smem_bytes, bool split) {
    tail_args t = tail(c);
    t.arena = wh_arena_device(a);
    t.span = &spans[f % c.k];
    t.smem_bytes = smem_bytes;
    t.split = split;
    t.next = &spans[(f + 1) % c.k];
    return t;
}

/* generate_kernel: up to 48 KiB of staging for the commit (its static smem is ~10 KiB). */
static size_t generate_arena_smem(wh_arena *a) { return staged_smem(a, 48 * 1024); }

/* (c), in the kernel: the counting kernel's last block reserves the mesh
 * (the address at once), generate's first block commits it; with
 * !split (the profile's 'before') the last block does the whole replace. */
static void frame_arena_kernel(ctx &c, int f, wh_arena *a, wh_arena_span *spans, bool split = true) {
    if (!split) {
        count(c, arena_tail(c, f, a, spans, count_arena_smem(a), false));
        generate(c, NULL, &spans[f % c.k]);
        return;
    }
    count(c, arena_tail(c, f, a, spans, 0, true));
    commit_args cm = {};
    cm.arena = wh_arena_device(a);
    cm.span = &spans[f % c.k];
    cm.smem_bytes = generate_arena_smem(a);
    generate(c, NULL, &spans[f % c.k], g_pdl, cm);
}

/* One cooperative kernel per frame (fused_kernel) where every brick fits on
 * the GPU at once: set by fused_probe; (c) also needs fused_arena_fits. */
static bool g_fused = false;

/* g_fused_pdl: one-kernel frames launched by PDL after each other (the
 * next frame's blocks come while this one's emit and wait, resident, in
 * griddepcontrol.wait), where fused_probe saw it run. */
static bool g_fused_pdl = false;
template <bool ARENA, bool SIDE = false> static cudaError_t launch_fused(ctx &c, const tail_args &t, float *out) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[2];
    at[0].id = cudaLaunchAttributeCooperative; /* refused, not hung, if the grid does not fit */
    at[0].val.cooperative = 1;
    at[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[1].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = c.grid;
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = ARENA ? t.smem_bytes : 0;
    cfg.stream = c.s;
    cfg.attrs = at;
    cfg.numAttrs = g_fused_pdl ? 2 : 1;
    return cudaLaunchKernelEx(&cfg, fused_kernel<ARENA, SIDE>, c.n, c.balls, c.brick_tris, c.brick_off, c.done, c.epoch,
                              c.stuck, t, out);
}

/* (a), fused */
static void frame_fused_worst(ctx &c, int f, float **bufs) {
    WH_CUDA_OR_DIE(launch_fused<false>(c, tail(c), bufs[f % c.k]));
}

/* (c), fused: the last block replaces the mesh before it opens the barrier
 * (metadata staged in smem when it is small: the kernel's own smem is ~12 KiB). */
static size_t fused_arena_smem(wh_arena *a) { return staged_smem(a, 16 * 1024); }
static void frame_fused_arena(ctx &c, int f, wh_arena *a, wh_arena_span *spans, bool split = true) {
    WH_CUDA_OR_DIE(launch_fused<true>(c, arena_tail(c, f, a, spans, fused_arena_smem(a), split), NULL));
}

/* Whether every brick of the grid is resident at once for this instance
 * (side: fused_kernel<true, true>). */
static bool fused_fits(const ctx &c, bool arena, size_t smem, bool side = false) {
    int dev = 0, sms = 0, per_sm = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (side)
        WH_CUDA_OR_DIE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_kernel<true, true>, THREADS, smem));
    else if (arena)
        WH_CUDA_OR_DIE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_kernel<true>, THREADS, smem));
    else
        WH_CUDA_OR_DIE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_kernel<false>, THREADS, smem));
    bool fits = (uint64_t)per_sm * (uint64_t)sms >= c.nbricks;
    if (!fits)
        printf("fused kernel%s: off (%u bricks, %d blocks per SM x %d SMs)\n",
               side    ? " (c, side commit)"
               : arena ? " (c)"
                       : "",
               c.nbricks, per_sm, sms);
    return fits;
}
static bool fused_arena_fits(const ctx &c, wh_arena *a) { return g_fused && fused_fits(c, true, fused_arena_smem(a)); }

/* (c), fused, the commit on a side stream: fused_kernel<true, true> only
 * reserves in its last block (no staging smem: it commits nothing) and
 * leaves the reserve's status for its blocks; commit_kernel of frame f, on
 * c.side after the earlier commits (stream order) and not after frame f's
 * kernel, waits for f's reservation and commits it while f's blocks emit.
 * Frame f's kernel does not wait for commit f - 1 either: commit f - 1
 * keeps the lock and adds its baton to the word f's blocks arrive on, so
 * f's last block knows from its own arrival that the lock is its and reads
 * the plan at once (frame 0 of a chain takes the lock itself, bounded:
 * wh_arena_ring_reserve_begin; the chain's last commit unlocks, so the
 * arena takes other commands between passes).  Frame 0 of a pass or a
 * captured graph forks c.side from c.s (so no commit runs before the work
 * queued ahead of the pass), and the pass or graph ends with side_join.
 * The commit at the priority of c.side (the device's greatest), so its
 * block goes first when it and a frame's blocks wait for an SM; graphs keep
 * it with cudaGraphInstantiateFlagUseNodePriority.  An example, not a
 * library call: a commit kernel that waits for another kernel needs both
 * resident at once, which a GPU running other work need not grant (then
 * the waits run out and frames drop, counted). */
template <typename... P, typename... A>
static cudaError_t launch_side(ctx &c, size_t smem, void (*kernel)(P...), A... args) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributePriority;
    at[0].val.priority = c.side_priority;
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = c.side;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}
static cudaError_t launch_commit(ctx &c, const commit_args &cm) {
    return launch_side(c, cm.smem_bytes, commit_kernel, cm);
}
static cudaError_t launch_chain_commit(ctx &c, const commit_args &cm, const wh_arena_span *spans, int n) {
    return launch_side(c, cm.smem_bytes, chain_commit_kernel, cm, spans, (uint32_t)c.k, (uint32_t)n);
}
/* c.s waits for every commit enqueued on c.side so far (end of a pass;
 * before cudaStreamEndCapture). */
static void side_join(ctx &c) {
    WH_CUDA_OR_DIE(cudaEventRecord(c.join, c.side));
    WH_CUDA_OR_DIE(cudaStreamWaitEvent(c.s, c.join, 0));
}
/* join: the pass's or the graph's last frame (side_join after it).
 * g_handoff: the lock handed from commit to reserve (false: every reserve
 * takes it, every commit unlocks -- the rows that show what it saves). */
static bool g_handoff = true;
/* g_chain: one chain_commit_kernel for the chain's n frames, launched with
 * frame 0 (false: a commit_kernel a frame). */
static bool g_chain = false;
static void frame_fused_side(ctx &c, int f, wh_arena *a, wh_arena_span *spans, int n) {
    bool join = f == n - 1;
    tail_args t = arena_tail(c, f, a, spans, 0, true);
    t.reserve_status = c.reserve_status;
    t.handed = g_handoff && f != 0; /* the chain: frame 0 locks, its last commit unlocks */
    if (f == 0) {                   /* captured: pulls c.side into the capture */
        WH_CUDA_OR_DIE(cudaEventRecord(c.fork, c.s));
        WH_CUDA_OR_DIE(cudaStreamWaitEvent(c.side, c.fork, 0));
    }
    commit_args cm = {};
    cm.arena = wh_arena_device(a);
    cm.span = &spans[f % c.k];
    cm.smem_bytes = fused_arena_smem(a);           /* the staging the in-kernel commit gets */
    cm.baton = g_handoff && !join ? c.done : NULL; /* the next frame's reserve gets the lock */
    if (g_chain && f == 0) {                       /* ahead of the chain's first frame */
        cm.baton = c.done;
        WH_CUDA_OR_DIE(launch_chain_commit(c, cm, spans, n));
        WH_LAUNCH_OR_DIE();
    }
    WH_CUDA_OR_DIE((launch_fused<true, true>(c, t, NULL)));
    WH_LAUNCH_OR_DIE();
    if (!g_chain) {
        WH_CUDA_OR_DIE(launch_commit(c, cm));
        WH_LAUNCH_OR_DIE();
    }
    if (join) side_join(c);
}
static bool fused_side_fits(const ctx &c) { return g_fused && fused_fits(c, true, 0, true); }

/* One pass a frame (onepass_kernel), any grid: a block a brick, by PDL
 * after the previous frame where pdl_probe saw it run. */
template <bool ARENA> static cudaError_t launch_onepass(ctx &c, const tail_args &t, float *out, int f = 0, int n = 1) {
    onepass_args o = {c.lb,
                      c.op_seq,
                      c.done,
                      c.op_stuck,
                      make_uint3(c.grid.x, c.grid.y, c.grid.z),
                      c.win,
                      (uint32_t)c.k,
                      (uint32_t)(f % c.k),
                      f == 0,
                      f == n - 1};
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = dim3(c.nbricks + (ARENA ? 1u : 0u)); /* (c): and the arena block */
    cfg.blockDim = dim3(THREADS);
    cfg.stream = c.s;
    cfg.attrs = at;
    cfg.numAttrs = g_pdl ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, onepass_kernel<ARENA>, c.n, c.balls, o, t, out);
}
/* (a), one pass */
static void frame_onepass_worst(ctx &c, int f, float **bufs) {
    WH_CUDA_OR_DIE(launch_onepass<false>(c, tail(c), bufs[f % c.k]));
    WH_LAUNCH_OR_DIE();
}
/* (c), one pass, frame f's mesh in spans[f % K], written into the window
 * forecast for it; one posts_commit_kernel for the chain's n frames on
 * c.side, launched with frame 0 (it publishes frame 0's window, commits
 * the frames' posts in order, holds the arena's lock for the chain; c.s
 * rejoins c.side after the last frame). */
static void frame_onepass_arena(ctx &c, int f, wh_arena *a, wh_arena_span *spans, int n) {
    if (f == 0) {
        WH_CUDA_OR_DIE(cudaEventRecord(c.fork, c.s));
        WH_CUDA_OR_DIE(cudaStreamWaitEvent(c.side, c.fork, 0));
        commit_args cm = {};
        cm.arena = wh_arena_device(a);
        cm.smem_bytes = fused_arena_smem(a);
        WH_CUDA_OR_DIE(launch_side(c, cm.smem_bytes, posts_commit_kernel, cm, spans, (uint32_t)c.k, (uint32_t)n, c.win,
                                   (const uint32_t *)c.op_seq));
        WH_LAUNCH_OR_DIE();
    }
    tail_args t = tail(c);
    t.arena = wh_arena_device(a); /* the arena block asks whether the forecast is current */
    WH_CUDA_OR_DIE(launch_onepass<true>(c, t, NULL, f, n));
    WH_LAUNCH_OR_DIE();
    if (f == n - 1) side_join(c);
}

/* fused_kernel's barrier timeouts so far (0 when cooperative launch holds). */
static uint32_t fused_stuck(ctx &c) {
    uint32_t n = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&n, c.stuck, sizeof n, cudaMemcpyDeviceToHost));
    return n;
}

/* A probe's trial: one frame enqueued by launch from frame 0 and synced,
 * then one captured in a graph, replayed and synced.  The first error
 * (cleared from the runtime), or cudaSuccess. */
static cudaError_t try_frame(ctx &c, const std::function<cudaError_t()> &launch) {
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaError_t e = cudaMemsetAsync(c.frame, 0, sizeof(uint32_t), c.s);
    if (e == cudaSuccess) e = launch();
    if (e == cudaSuccess) e = cudaStreamSynchronize(c.s);
    if (e == cudaSuccess) e = cudaStreamBeginCapture(c.s, cudaStreamCaptureModeRelaxed);
    if (e == cudaSuccess) {
        cudaError_t e1 = launch();
        e = cudaStreamEndCapture(c.s, &graph);
        if (e == cudaSuccess) e = e1;
    }
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
    if (e == cudaSuccess) e = cudaGraphLaunch(exec, c.s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c.s);
    if (exec) (void)cudaGraphExecDestroy(exec);
    if (graph) (void)cudaGraphDestroy(graph);
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e;
}

/* Whether the grid fits (fused_fits) and a cooperative launch runs plainly
 * and captured in a graph (one (a) frame into buf). */
static void fused_probe(ctx &c, float *buf) {
    const char *off = getenv("MC_NO_FUSED");
    if (off && *off) {
        printf("fused kernel: off (MC_NO_FUSED)\n");
        return;
    }
    if (!fused_fits(c, false, 0)) return;
    cudaError_t e = try_frame(c, [&] { return launch_fused<false>(c, tail(c), buf); });
    if (e != cudaSuccess) {
        printf("fused kernel: off (%s)\n", cudaGetErrorString(e));
        return;
    }
    if (uint32_t n = fused_stuck(c)) {
        printf("fused kernel: off (%u barrier timeouts in the probe)\n", n);
        return;
    }
    g_fused = true;
    printf("fused kernel: on (%u bricks, cooperative launch, plain and in a graph)\n", c.nbricks);
    const char *nopdl = getenv("MC_NO_FUSED_PDL");
    if (nopdl && *nopdl) {
        printf("fused kernel by PDL: off (MC_NO_FUSED_PDL)\n");
        return;
    }
    g_fused_pdl = true; /* two frames back to back, plain and captured */
    e = try_frame(c, [&] {
        cudaError_t e1 = launch_fused<false>(c, tail(c), buf);
        return e1 != cudaSuccess ? e1 : launch_fused<false>(c, tail(c), buf);
    });
    g_fused_pdl = e == cudaSuccess && fused_stuck(c) == 0;
    printf("fused kernel by PDL: %s%s\n", g_fused_pdl ? "on" : "off: ", g_fused_pdl ? "" : cudaGetErrorString(e));
}

/* (b) */
struct sync_state {
    float *buf[16];
    size_t bytes[16];
    volatile size_t *h_count; /* pinned, mapped: the count kernel writes it */
    size_t *d_count;          /* its device address */
    uint64_t live, peak;
    cudaGraphExec_t count_graph; /* the count kernel, as a graph */
};

static void frame_sync(ctx &c, int f, sync_state &st, bool graph) {
    int k = f % c.k;
    if (graph) {
        WH_CUDA_OR_DIE(cudaGraphLaunch(st.count_graph, c.s));
    } else {
        tail_args t = tail(c);
        t.count_out = st.d_count;
        count(c, t);
    }
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s)); /* the host sync of variant (b) */
    if (st.buf[k]) WH_CUDA_OR_DIE(cudaFreeAsync(st.buf[k], c.s));
    st.live -= st.bytes[k];
    st.bytes[k] = *st.h_count * TRI_BYTES;
    st.buf[k] = NULL;
    if (st.bytes[k]) WH_CUDA_OR_DIE(cudaMallocAsync((void **)&st.buf[k], st.bytes[k], c.s));
    st.live += st.bytes[k];
    st.peak = std::max(st.peak, st.live);
    generate(c, st.buf[k], NULL, false);
}

static void free_sync(ctx &c, sync_state &st) {
    for (int k = 0; k < c.k; ++k) {
        if (st.buf[k]) WH_CUDA_OR_DIE(cudaFreeAsync(st.buf[k], c.s));
        st.buf[k] = NULL;
        st.live -= st.bytes[k];
        st.bytes[k] = 0;
    }
}

/* Try count + generate with PDL, plainly and as a captured graph, into buf;
 * on any error leave g_pdl off and say why. */
static void pdl_probe(ctx &c, float *buf) {
    int dev = 0, major = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    const char *off = getenv("MC_NO_PDL");
    if (major < 9 || (off && *off)) {
        printf("PDL: off (%s)\n", major < 9 ? "before sm_90" : "MC_NO_PDL");
        return;
    }
    cudaError_t e = try_frame(c, [&] {
        cudaError_t e1 = launch_count(c, tail(c));
        return e1 != cudaSuccess ? e1 : launch_generate(c, buf, NULL, true);
    });
    g_pdl = e == cudaSuccess;
    printf("PDL: %s%s\n", g_pdl ? "on" : "off: ", g_pdl ? "" : cudaGetErrorString(e));
}

/* Frames [0, g) captured as one graph; replayed frames / g times (frames is a
 * multiple of g, and g of K, so every replay turns the ring over alike). */
static cudaGraphExec_t capture(ctx &c, int g, const std::function<void(int)> &make, unsigned long long flags = 0) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    WH_CUDA_OR_DIE(cudaStreamBeginCapture(c.s, cudaStreamCaptureModeRelaxed));
    for (int f = 0; f < g; ++f) make(f);
    WH_CUDA_OR_DIE(cudaStreamEndCapture(c.s, &graph));
    WH_CUDA_OR_DIE(cudaGraphInstantiate(&exec, graph, flags));
    WH_CUDA_OR_DIE(cudaGraphDestroy(graph));
    return exec;
}

static void replay(ctx &c, int frames, int g, cudaGraphExec_t exec) {
    reset_frames(c);
    for (int f = 0; f < frames; f += g) WH_CUDA_OR_DIE(cudaGraphLaunch(exec, c.s));
}

/* ---- timing, memory, output ---------------------------------------------------------- */

struct result {
    const char *name;
    double fps, ms;
    uint64_t peak, reserved; /* peak in use; reserved (what the variant holds) */
    uint64_t dropped;
    double headroom; /* arena region / warm-up high-water mark; 0: no arena */
};

/* Progress on the terminal: a row as soon as it is measured. */
static void shown(const result &x) {
    printf("  %-100s %9.0f frames/s%s\n", x.name, x.fps, x.dropped ? "  (dropped frames)" : "");
    fflush(stdout);
}

template <typename F> static double median_seconds(ctx &c, int reps, F run_once) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
        timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        run_once();
        WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
        clock_gettime(CLOCK_MONOTONIC, &b);
        t.push_back((double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

static uint64_t needed_peak(const std::vector<uint32_t> &hist, int k) {
    uint64_t best = 0;
    for (size_t f = 0; f < hist.size(); ++f) {
        uint64_t sum = 0;
        for (int j = 0; j < k && (size_t)j <= f; ++j) sum += hist[f - j];
        best = std::max(best, sum * TRI_BYTES);
    }
    return best;
}

static void parse(int argc, char **argv, args &a) {
    int profile = a.profile;
    wh_cli_opt cli[] = {
        WH_CLI_INT("n", &a.n, "grid points per side, 8 .. 320"),
        WH_CLI_INT("k", &a.k, "frames a mesh stays live, 1 .. 16"),
        WH_CLI_INT("frames", &a.frames, "frames per run (rounded to whole graph launches)"),
        WH_CLI_INT("reps", &a.reps, "timed runs per variant (the median is reported)"),
        WH_CLI_INT("balls", &a.balls, "metaballs, 1 .. 16"),
        WH_CLI_DOUBLE("headroom", &a.headroom, "smallest arena region over the warm-up's high-water mark"),
        WH_CLI_STRING("png", &a.png, "picture of the last frame (empty: none)"),
        WH_CLI_STRING("csv", &a.csv, "append the result rows to this CSV file"),
        WH_CLI_STRING("md", &a.md, "append the result table to this markdown file"),
        WH_CLI_INT("profile", &profile, "1: time the parts of a frame instead of the comparison"),
        WH_CLI_INT_D("bz", &a.bz, "brick depth in cells: 4, 8 or 16", "0: chosen per grid"),
        WH_CLI_END};
    wh_cli_parse(argc, argv, cli,
                 "Marching cubes with GPU-computed mesh sizes: worst-case buffers, a host sync per "
                 "frame, and the stream arena.");
    a.profile = profile != 0;
    if (a.bz != 0 && a.bz != 4 && a.bz != 8 && a.bz != 16) {
        fprintf(stderr, "--bz=%d: a brick is 4, 8 or 16 cells deep (0: chosen per grid)\n", a.bz);
        exit(2);
    }
    a.n = std::max(8, std::min(a.n, 320));
    a.k = std::max(1, std::min(a.k, 16));
    a.balls = std::max(1, std::min(a.balls, MC_MAX_BALLS));
    a.reps = std::max(1, a.reps);
    a.headroom = std::max(1.0, a.headroom);
}

/* Frames per graph launch: a multiple of K near 30. */
static int graph_frames(const args &a) { return a.k * std::max(1, 30 / a.k); }

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* A mesh of ntri triangles, copied to the host: from ptr, or from a span. */
static std::vector<float> fetch_mesh(const void *ptr, uint32_t ntri) {
    std::vector<float> h((size_t)ntri * 9);
    if (ptr && ntri) WH_CUDA_OR_DIE(cudaMemcpy(h.data(), ptr, (size_t)ntri * TRI_BYTES, cudaMemcpyDeviceToHost));
    return h;
}
static std::vector<float> fetch_span(const wh_arena_span *d_span) {
    wh_arena_span sp;
    WH_CUDA_OR_DIE(cudaMemcpy(&sp, d_span, sizeof sp, cudaMemcpyDeviceToHost));
    if (!sp.part[0].ptr) return std::vector<float>();
    std::vector<float> h = fetch_mesh(wh_handle_ptr(&sp.part[0]), (uint32_t)sp.count0);
    std::vector<float> rest = fetch_mesh(wh_handle_ptr(&sp.part[1]), (uint32_t)(sp.count - sp.count0));
    h.insert(h.end(), rest.begin(), rest.end());
    return h;
}

/* The best of the rows whose name starts with prefix. */
static double best_fps(const result *r, int nr, const char *prefix) {
    double best = 0;
    for (int i = 0; i < nr; ++i)
        if (!strncmp(r[i].name, prefix, strlen(prefix)) && r[i].dropped == 0) best = std::max(best, r[i].fps);
    return best;
}

static void write_results(const args &a, const ctx &c, const result *r, int nr, uint64_t needed) {
    cudaDeviceProp prop;
    int dev = 0, rt = 0, drv = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaGetDeviceProperties(&prop, dev));
    WH_CUDA_OR_DIE(cudaRuntimeGetVersion(&rt));
    WH_CUDA_OR_DIE(cudaDriverGetVersion(&drv));
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    const char *driver = env_or("WH_GPU_DRIVER", "?"), *commit = env_or("WH_COMMIT", "?");
    double ratio = best_fps(r, nr, "(c)") / best_fps(r, nr, "(b)");
    printf("\n%s, driver %s (CUDA driver API %d), runtime %d, %s, commit %s\n", prop.name, driver, drv, rt, date,
           commit);
    printf("grid %d^3 (%u cells, %u bricks of 8x8x%u), K=%d live frames, %d frames x %d runs, %d balls; needed peak "
           "%.2f MiB\n",
           a.n, c.cells, c.nbricks, c.bz, a.k, a.frames, a.reps, a.balls, needed / 1048576.0);
    printf("%-62s %10s %9s %12s %12s %9s %8s %8s\n", "variant", "frames/s", "ms/frame", "peak MiB", "reserved MiB",
           "res/need", "dropped", "headroom");
    for (int i = 0; i < nr; ++i)
        printf("%-62s %10.0f %9.4f %12.2f %12.2f %9.3f %8llu %8.2f\n", r[i].name, r[i].fps, r[i].ms,
               r[i].peak / 1048576.0, r[i].reserved / 1048576.0, (double)r[i].reserved / (double)needed,
               (unsigned long long)r[i].dropped, r[i].headroom);
    printf("best (c) / best (b) frames/s (rows that dropped nothing): %.2fx\n", ratio);
    if (a.csv) {
        FILE *f = fopen(a.csv, "a");
        if (!f) {
            perror(a.csv);
            exit(1);
        }
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0)
            fprintf(f, "gpu,driver,cuda_runtime,date,commit,n,k,frames,reps,balls,bz,variant,fps,ms_per_frame,"
                       "peak_bytes,reserved_bytes,needed_bytes,reserved_over_needed,dropped,arena_headroom\n");
        for (int i = 0; i < nr; ++i)
            fprintf(f, "\"%s\",%s,%d,%s,%s,%d,%d,%d,%d,%d,%u,\"%s\",%.1f,%.5f,%llu,%llu,%llu,%.4f,%llu,%.2f\n",
                    prop.name, driver, rt, date, commit, a.n, a.k, a.frames, a.reps, a.balls, c.bz, r[i].name, r[i].fps,
                    r[i].ms, (unsigned long long)r[i].peak, (unsigned long long)r[i].reserved,
                    (unsigned long long)needed, (double)r[i].reserved / (double)needed,
                    (unsigned long long)r[i].dropped, r[i].headroom);
        fclose(f);
    }
    if (a.md) {
        FILE *f = fopen(a.md, "a");
        if (!f) {
            perror(a.md);
            exit(1);
        }
        fprintf(f,
                "\n### %d^3 grid, K=%d, %d frames, median of %d runs, bricks of 8x8x%u cells\n\n%s, driver %s, "
                "CUDA runtime %d, %s, commit %s. Needed: %.2f MiB (largest sum of %d live meshes).\n\n"
                "| variant | frames/s | ms/frame | peak in use (MiB) | reserved (MiB) | reserved / needed | dropped | "
                "arena headroom |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
                a.n, a.k, a.frames, a.reps, c.bz, prop.name, driver, rt, date, commit, needed / 1048576.0, a.k);
        for (int i = 0; i < nr; ++i) {
            char h[32] = "-"; /* no arena */
            if (r[i].headroom > 0) snprintf(h, sizeof h, "%.2f", r[i].headroom);
            fprintf(f, "| %s | %.0f | %.4f | %.2f | %.2f | %.3f | %llu | %s |\n", r[i].name, r[i].fps, r[i].ms,
                    r[i].peak / 1048576.0, r[i].reserved / 1048576.0, (double)r[i].reserved / (double)needed,
                    (unsigned long long)r[i].dropped, h);
        }
        fprintf(f,
                "\nBest (c) / best (b) frames/s (rows that dropped nothing): **%.2fx**. Generate launched by PDL "
                "after count in (a) and (c): %s. One-kernel rows (count, allocation and generate in one cooperative "
                "kernel; only where every brick is resident at once): %s.\n",
                ratio, g_pdl ? "yes" : "no (probe failed)", g_fused ? "yes" : "no");
        fclose(f);
    }
}

static dim3 brick_grid(uint32_t m, uint32_t bz) {
    return dim3((m + BX - 1) / BX, (m + BY - 1) / BY, (m + bz - 1) / bz);
}

/* The shallowest brick (4, 8, 16 cells deep) whose bricks are all resident
 * at once in the one-kernel frame (c, side commit): a small grid then uses
 * more SMs and each thread fewer cells.  Larger grids keep BZ_MAX. */
static uint32_t auto_bz(uint32_t m) {
    int dev = 0, sms = 0, per_sm = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    WH_CUDA_OR_DIE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_kernel<true, true>, THREADS, 0));
    for (uint32_t bz = 4; bz < BZ_MAX; bz *= 2) {
        dim3 g = brick_grid(m, bz);
        if ((uint64_t)g.x * g.y * g.z <= (uint64_t)per_sm * (uint64_t)sms) return bz;
    }
    return BZ_MAX;
}

/* The stack limit set once, before any kernel runs, to what the largest
 * stack frame of these kernels needs: a launch that needs more than the
 * limit has the driver grow local memory first, which waits for the device
 * to idle -- and with a committer spinning on the side stream for a frame
 * that launch would run, the two wait for each other (the one-pass kernels
 * need 1232 bytes of stack against the default 1024, and hang so without
 * this). */
static void stack_for_kernels(void) {
    const void *k[] = {(const void *)onepass_kernel<true>,     (const void *)onepass_kernel<false>,
                       (const void *)fused_kernel<true, true>, (const void *)fused_kernel<true>,
                       (const void *)fused_kernel<false>,      (const void *)commit_kernel,
                       (const void *)chain_commit_kernel,      (const void *)posts_commit_kernel,
                       (const void *)generate_kernel<true>,    (const void *)generate_kernel<false>,
                       (const void *)count_kernel<true>,       (const void *)count_kernel<false>};
    wh_cuda_stack_for(k, (int)(sizeof k / sizeof k[0]));
}

static void setup(ctx &c, const args &a, mc_tables &t) {
    stack_for_kernels();
    if (mc_tables_build(&t)) {
        fprintf(stderr, "tables: a case needs more than %d triangles\n", MC_MAX_TRI);
        exit(1);
    }
    mc_gtables g;
    memcpy(g.ntri, t.ntri, sizeof g.ntri);
    memcpy(g.tri, t.tri, sizeof g.tri);
    memcpy(g.edge, t.edge_corner, sizeof g.edge);
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(g_tab, &g, sizeof g));
    c.n = a.n;
    c.k = a.k;
    c.balls = a.balls;
    uint32_t m = (uint32_t)(a.n - 1);
    c.cells = m * m * m;
    c.bz = a.bz ? (uint32_t)a.bz : auto_bz(m);
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(c_bz, &c.bz, sizeof c.bz));
    c.grid = brick_grid(m, c.bz);
    c.nbricks = c.grid.x * c.grid.y * c.grid.z;
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    WH_CUDA_OR_DIE(cudaMalloc(&c.brick_tris, c.nbricks * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.brick_off, c.nbricks * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.done, sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMemset(c.done, 0, sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.history, (size_t)a.frames * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.tri_count, (size_t)a.k * sizeof(size_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.frame, sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.epoch, 2 * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMemset(c.epoch, 0, 2 * sizeof(uint32_t)));
    c.stuck = c.epoch + 1;
    WH_CUDA_OR_DIE(cudaMalloc(&c.reserve_status, sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMemset(c.reserve_status, 0, sizeof(uint32_t)));
    int least = 0;
    WH_CUDA_OR_DIE(cudaDeviceGetStreamPriorityRange(&least, &c.side_priority));
    WH_CUDA_OR_DIE(cudaStreamCreateWithPriority(&c.side, cudaStreamNonBlocking, c.side_priority));
    WH_CUDA_OR_DIE(cudaEventCreateWithFlags(&c.fork, cudaEventDisableTiming));
    WH_CUDA_OR_DIE(cudaEventCreateWithFlags(&c.join, cudaEventDisableTiming));
    WH_CUDA_OR_DIE(cudaMalloc(&c.lb, c.nbricks * sizeof(uint64_t)));
    WH_CUDA_OR_DIE(cudaMemset(c.lb, 0, c.nbricks * sizeof(uint64_t))); /* tag 0: no launch's */
    WH_CUDA_OR_DIE(cudaMalloc(&c.op_seq, (1 + ONEPASS_STUCK_KINDS) * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMemset(c.op_seq, 0, (1 + ONEPASS_STUCK_KINDS) * sizeof(uint32_t)));
    c.op_stuck = c.op_seq + 1;
    WH_CUDA_OR_DIE(cudaMalloc(&c.win, sizeof(onepass_window)));
    WH_CUDA_OR_DIE(cudaMemset(c.win, 0, sizeof(onepass_window)));
}

/* The side stream, its events and the status word (the end of main). */
static void teardown_side(ctx &c) {
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.side));
    WH_CUDA_OR_DIE(cudaEventDestroy(c.fork));
    WH_CUDA_OR_DIE(cudaEventDestroy(c.join));
    WH_CUDA_OR_DIE(cudaStreamDestroy(c.side));
    WH_CUDA_OR_DIE(cudaFree(c.reserve_status));
}

typedef std::function<void(wh_arena *)> arena_pass;

/* A counter of the device state once the stream is done: RING reservations
 * the plan served (planned), commits that only allocated (warm_commits). */
static uint64_t arena_counter(ctx &c, wh_arena *arena, size_t offset) {
    uint64_t n = 0;
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    WH_CUDA_OR_DIE(cudaMemcpy(&n, (char *)wh_arena_device(arena).s + offset, sizeof n, cudaMemcpyDeviceToHost));
    return n;
}
static uint64_t arena_planned(ctx &c, wh_arena *arena) {
    return arena_counter(c, arena, offsetof(wh__arena_state, planned));
}

/* The arena's counters once the stream is done (a flush first: with
 * WH_ARENA_MIRROR_ON_FAILURE the mirror is otherwise as of the last failure). */
static void fresh_stats(ctx &c, wh_arena *arena, wh_arena_stats *st) {
    ok_or_die(wh_arena_flush_async(arena, c.s));
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    ok_or_die(wh_arena_stats_get(arena, st));
}

/* Size an arena of this policy from a warm-up pass in a generous one: the
 * smallest headroom (from a.headroom, in steps of 2%) over its high-water
 * mark with which a whole pass runs without a failed allocation. */
static wh_arena *sized_arena(ctx &c, const args &a, wh_arena_policy policy, wh_arena_mirror mirror, uint64_t generous,
                             wh_arena_span *spans, const arena_pass &pass, double *headroom) {
    wh_arena_config cfg = {};
    cfg.bytes = generous;
    cfg.backend = WH_ARENA_CUDA;
    cfg.policy = policy;
    cfg.mirror = mirror;
    cfg.index = policy == WH_ARENA_RING ? WH_BLOCKS_LIST : WH_BLOCKS_TLSF; /* the ring walks: no index */
    cfg.max_blocks = 64; /* K meshes of <= 2 extents and the free blocks between */
    wh_arena *arena = NULL;
    wh_arena_stats st;
    double high = 0; /* the warm-up's high-water mark */
    for (int attempt = -1; attempt < 100; ++attempt) {
        double h = a.headroom + 0.02 * attempt;
        if (attempt >= 0) cfg.bytes = (size_t)(high * h);
        WH_CUDA_OR_DIE(cudaMemset(spans, 0, c.k * sizeof(wh_arena_span)));
        ok_or_die(wh_arena_create(&arena, &cfg));
        pass(arena);
        fresh_stats(c, arena, &st);
        if (attempt < 0) {
            if (st.failures) {
                fprintf(stderr, "arena: the warm-up failed (%llu)\n", (unsigned long long)st.failures);
                exit(1);
            }
            high = (double)st.peak_used;
        } else if (st.failures == 0) {
            *headroom = h;
            return arena;
        } else {
            printf("arena (%s): %.2f x the high-water mark drops %llu frames, trying more\n",
                   policy == WH_ARENA_RING ? "ring" : "best fit", h, (unsigned long long)st.failures);
        }
        ok_or_die(wh_arena_destroy(arena));
    }
    fprintf(stderr, "arena: no headroom up to 3x worked\n");
    exit(1);
}

/* ---- --profile: where a frame's time goes ---------------------------------------------- *
 * Each item runs `reps` times back to back in the stream between two CUDA
 * events (GPU timeline, so a host that enqueues slower than the GPU runs
 * shows up as the host's launch rate), or by the wall clock where the host
 * waits (sync, cudaMallocAsync).  One run answers: the launch floor (empty
 * kernels, plain and in a graph), each kernel alone, what the last-block
 * tail and a host-mapped count cost, what a replace costs by command and in
 * the counting kernel with the mirror written by every command or only on
 * failure, and the host round trip of (b). */
static __global__ void empty_kernel(void) {}

template <typename F> static double event_us(ctx &c, int reps, F body) {
    cudaEvent_t e0, e1;
    WH_CUDA_OR_DIE(cudaEventCreate(&e0));
    WH_CUDA_OR_DIE(cudaEventCreate(&e1));
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    WH_CUDA_OR_DIE(cudaEventRecord(e0, c.s));
    for (int i = 0; i < reps; ++i) body(i);
    WH_CUDA_OR_DIE(cudaEventRecord(e1, c.s));
    WH_CUDA_OR_DIE(cudaEventSynchronize(e1));
    float ms = 0;
    WH_CUDA_OR_DIE(cudaEventElapsedTime(&ms, e0, e1));
    WH_CUDA_OR_DIE(cudaEventDestroy(e0));
    WH_CUDA_OR_DIE(cudaEventDestroy(e1));
    return 1e3 * ms / reps;
}
template <typename F> static double wall_us(ctx &c, int reps, F body) {
    timespec t0, t1;
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < reps; ++i) body(i);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (1e6 * (double)(t1.tv_sec - t0.tv_sec) + 1e-3 * (double)(t1.tv_nsec - t0.tv_nsec)) / reps;
}

/* Per frame: G frames captured as a graph, replayed reps / G times from frame 0. */
static double graph_us(ctx &c, int reps, int G, const std::function<void(int)> &make, unsigned long long flags = 0) {
    cudaGraphExec_t ge = capture(c, G, make, flags);
    reset_frames(c);
    double us = event_us(c, reps / G, [&](int) { WH_CUDA_OR_DIE(cudaGraphLaunch(ge, c.s)); }) / G;
    WH_CUDA_OR_DIE(cudaGraphExecDestroy(ge));
    return us;
}

static void profile_row(FILE *md, const char *what, double us, const char *note) {
    printf("  %-66s %9.2f us  %s\n", what, us, note);
    if (md) fprintf(md, "| %s | %.2f | %s |\n", what, us, note);
}

/* Where a one-kernel frame's time goes: G frames captured as a graph and
 * replayed once with the timestamps on (ST_*), the mean of each phase over
 * frames 1..G-2 (frame 0 follows a reset; G-1 has no successor). */
static void profile_stamps(ctx &c, int G, const char *what, const std::function<void(int)> &make,
                           unsigned long long flags, FILE *md) {
    const size_t n = (size_t)ST_FRAMES * ST_SLOTS;
    uint64_t *d, *d0, *none = NULL;
    WH_CUDA_OR_DIE(cudaMalloc(&d, n * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&d0, ST_FRAMES * 8));
    WH_CUDA_OR_DIE(cudaMemset(d, 0, n * 8));
    WH_CUDA_OR_DIE(cudaMemset(d0, 0xFF, ST_FRAMES * 8));
    cudaGraphExec_t ge = capture(c, std::min(G, (int)ST_FRAMES), make, flags);
    uint32_t zero = 0;
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(g_side_seq, &zero, 4));
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(g_stamps, &d, 8));
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(g_stamps0, &d0, 8));
    reset_frames(c);
    WH_CUDA_OR_DIE(cudaGraphLaunch(ge, c.s));
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(g_stamps, &none, 8));
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(g_stamps0, &none, 8));
    WH_CUDA_OR_DIE(cudaGraphExecDestroy(ge));
    std::vector<uint64_t> h(n), h0(ST_FRAMES);
    WH_CUDA_OR_DIE(cudaMemcpy(h.data(), d, n * 8, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(h0.data(), d0, ST_FRAMES * 8, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaFree(d));
    WH_CUDA_OR_DIE(cudaFree(d0));
    for (uint32_t f = 0; f < ST_FRAMES; ++f) h[f * ST_SLOTS + ST_START] = h0[f];
    /* mean of stamp b of frame f + db minus stamp a of frame f, in us; 0 where either is missing */
    auto mean = [&](int a, int b, int db) {
        double sum = 0;
        int k = 0;
        for (int f = 1; f + 1 < std::min(G, (int)ST_FRAMES); ++f) {
            uint64_t x = h[f * ST_SLOTS + a], y = h[(f + db) * ST_SLOTS + b];
            if (!x || !y || x == ~0ull || y == ~0ull) continue;
            sum += ((double)y - (double)x) * 1e-3;
            ++k;
        }
        return k ? sum / k : 0.0;
    };
    if (getenv("MC_STAMPS_ALL")) /* every frame: first and last arrival, the baton, the commit */
        for (int f = 1; f + 1 < std::min(G, (int)ST_FRAMES); ++f) {
            const uint64_t *x = &h[f * ST_SLOTS], *p = &h[(f - 1) * ST_SLOTS];
            auto us = [](uint64_t a, uint64_t b) {
                return a && b && a != ~0ull && b != ~0ull ? ((double)b - (double)a) * 1e-3 : -1.0;
            };
            printf("    frame %2d: start->first %.2f, ->last %.2f, ->baton seen %.2f, ->scan done %.2f; "
                   "previous commit done %.2f after start\n",
                   f, us(x[ST_START], x[ST_FIRST]), us(x[ST_START], x[ST_LAST]),
                   x[ST_BATON] ? us(x[ST_START], x[ST_BATON]) : 0.0, us(x[ST_START], x[ST_RESERVE0]),
                   us(x[ST_START], p[ST_SIDE1]));
        }
    double ph[] = {mean(ST_START, ST_START, 1),       mean(ST_START, ST_LAST, 0),    mean(ST_LAST, ST_RESERVE0, 0),
                   mean(ST_RESERVE0, ST_RESERVE1, 0), mean(ST_RESERVE1, ST_OPEN, 0), mean(ST_OPEN, ST_END, 0),
                   mean(ST_OPEN, ST_COMMITTED, 0),    mean(ST_END, ST_START, 1),     mean(ST_END, ST_SIDE0, 0),
                   mean(ST_SIDE0, ST_SIDE1, 0),       mean(ST_SIDE1, ST_RESERVE0, 1)};
    printf("  stamps, %s: period %.2f | start->first arrival %.2f | start->last %.2f, scan %.2f, reserve %.2f, open "
           "%.2f, open->end %.2f, "
           "commit in kernel %.2f | end->next start %.2f | side commit: end->start %.2f, takes %.2f, "
           "done before the next reserve by %.2f us\n",
           what, ph[0], mean(ST_START, ST_FIRST, 0), ph[1], ph[2], ph[3], ph[4], ph[5], ph[6], ph[7], ph[8], ph[9],
           ph[10]);
    if (md)
        fprintf(md, "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", what,
                ph[0], ph[1], ph[2], ph[3], ph[4], ph[5], ph[6], ph[7], ph[8], ph[9], ph[10]);
}

/* The (c) in-kernel frame of the profile: plain launches, a graph of G
 * frames and, where it fits, one cooperative kernel; with the whole replace
 * in count's last block ("before") or reserve/commit. */
static void profile_arena_frames(ctx &c, int R, int G, wh_arena *ar, wh_arena_span *spans, bool reserve, const char *m,
                                 FILE *md) {
    const char *note = reserve ? "reserve/commit" : "before";
    char what[160], fused_note[64];
    reset_frames(c);
    double us = event_us(c, R, [&](int f) { frame_arena_kernel(c, f, ar, spans, reserve); });
    snprintf(what, sizeof what, "(c) frame, %s, plain, %s",
             reserve ? "reserve in count's last block, commit in generate" : "replace in count's last block", m);
    profile_row(md, what, us, note);
    us = graph_us(c, R, G, [&](int f) { frame_arena_kernel(c, f, ar, spans, reserve); });
    snprintf(what, sizeof what, "%s, graph of G frames, %s",
             reserve ? "(c) frame, reserve/commit" : "(c) frame in kernel", m);
    profile_row(md, what, us, note);
    if (!fused_arena_fits(c, ar)) return;
    us = graph_us(c, R, G, [&](int f) { frame_fused_arena(c, f, ar, spans, reserve); });
    snprintf(what, sizeof what, "(c) frame as one cooperative kernel%s, graph of G frames, %s",
             reserve ? ", reserve/commit" : "", m);
    snprintf(fused_note, sizeof fused_note, "%s; fused_kernel", note);
    profile_row(md, what, us, fused_note);
    if (!reserve || !fused_side_fits(c)) return;
    us = graph_us(
        c, R, G, [&](int f) { frame_fused_side(c, f, ar, spans, G); }, cudaGraphInstantiateFlagUseNodePriority);
    snprintf(what, sizeof what,
             "(c) frame as one cooperative kernel, reserve, commit on a side stream, graph of G frames, %s", m);
    profile_row(md, what, us, "reserve/commit; fused_kernel + commit_kernel on a 2nd stream");
}

/* The profile's arena: a generous RING region (K worst-case meshes), the
 * slots cleared; and its end: no command may have failed. */
static wh_arena *profile_arena(ctx &c, uint64_t worst, wh_arena_mirror mirror, wh_arena_span *spans) {
    wh_arena_config cfg = {};
    cfg.bytes = (size_t)c.k * worst;
    cfg.backend = WH_ARENA_CUDA;
    cfg.policy = WH_ARENA_RING;
    cfg.mirror = mirror;
    cfg.index = WH_BLOCKS_LIST;
    cfg.max_blocks = 64;
    wh_arena *ar = NULL;
    ok_or_die(wh_arena_create(&ar, &cfg));
    WH_CUDA_OR_DIE(cudaMemset(spans, 0, c.k * sizeof(wh_arena_span)));
    return ar;
}
static void profile_arena_end(ctx &c, wh_arena *ar) {
    wh_arena_stats st;
    fresh_stats(c, ar, &st);
    if (st.failures) {
        fprintf(stderr, "profile: the arena failed %llu commands\n", (unsigned long long)st.failures);
        exit(1);
    }
    ok_or_die(wh_arena_destroy(ar));
}

static void profile(ctx &c, const args &a, uint64_t worst) {
    const int R = a.frames, G = graph_frames(a);
    FILE *md = NULL;
    if (a.md && !(md = fopen(a.md, "a"))) {
        perror(a.md);
        exit(1);
    }
    printf("profile: grid %d^3, %u bricks of 8x8x%u, %d back-to-back repetitions per item, PDL %s\n", a.n, c.nbricks,
           c.bz, R, g_pdl ? "on" : "off");
    if (md)
        fprintf(md,
                "\n### Profile, %d^3 grid (%u bricks of 8x8x%u), %d repetitions per item, PDL %s\n\n"
                "| item | us each | what it shows |\n|---|---:|---|\n",
                a.n, c.nbricks, c.bz, R, g_pdl ? "on" : "off");
    float *buf;
    WH_CUDA_OR_DIE(cudaMalloc(&buf, worst));
    { /* the launch floor */
        double us = event_us(c, R, [&](int) {
            empty_kernel<<<1, 32, 0, c.s>>>();
            WH_LAUNCH_OR_DIE();
        });
        profile_row(md, "empty kernel <<<1,32>>>, plain launches", us, "host launch rate / floor");
        us = event_us(c, R, [&](int) {
            empty_kernel<<<c.grid, THREADS, 0, c.s>>>();
            WH_LAUNCH_OR_DIE();
        });
        profile_row(md, "empty kernel, frame's grid, plain launches", us, "");
        us = graph_us(c, R, G, [&](int) {
            empty_kernel<<<c.grid, THREADS, 0, c.s>>>();
            WH_LAUNCH_OR_DIE();
            empty_kernel<<<c.grid, THREADS, 0, c.s>>>();
            WH_LAUNCH_OR_DIE();
        });
        profile_row(md, "two empty kernels (frame's grid) per frame, graph of G frames", us, "graph floor of a frame");
    }
    { /* the kernels alone */
        reset_frames(c);
        double us = event_us(c, R, [&](int) { count(c, tail(c)); });
        profile_row(md, "count alone (field, cases, last-block scan), plain", us, "(a)'s first kernel");
        size_t *h_count, *d_count;
        WH_CUDA_OR_DIE(cudaHostAlloc((void **)&h_count, sizeof(size_t), cudaHostAllocMapped));
        WH_CUDA_OR_DIE(cudaHostGetDevicePointer((void **)&d_count, (void *)h_count, 0));
        reset_frames(c);
        us = event_us(c, R, [&](int) {
            tail_args t = tail(c);
            t.count_out = d_count;
            count(c, t);
        });
        profile_row(md, "count writing the total to a pinned host word, plain", us, "(b)'s count kernel");
        reset_frames(c);
        us = event_us(c, R, [&](int) {
            tail_args t = tail(c);
            t.count_out = &c.tri_count[0];
            count(c, t);
        });
        profile_row(md, "count writing the total to a device word, plain", us, "(c) by command");
        us = event_us(c, R, [&](int) { generate(c, buf, NULL, false); });
        profile_row(md, "generate alone (same frame again), plain", us, "");
        float *bufs[16]; /* every slot the one buffer: K <= 16 */
        for (int k = 0; k < c.k; ++k) bufs[k] = buf;
        reset_frames(c);
        us = event_us(c, R, [&](int f) { frame_worst(c, f, bufs); });
        profile_row(md, "(a) frame = count + generate, plain launches", us, g_pdl ? "generate by PDL" : "");
        us = graph_us(c, R, G, [&](int f) { frame_worst(c, f, bufs); });
        profile_row(md, "(a) frame, graph of G frames", us, "");
        bool pdl = g_pdl;
        g_pdl = false;
        us = graph_us(c, R, G, [&](int f) { frame_worst(c, f, bufs); });
        g_pdl = pdl;
        profile_row(md, "(a) frame, graph of G frames, no PDL", us, "what PDL saves");
        if (g_fused) {
            us = graph_us(c, R, G, [&](int f) { frame_fused_worst(c, f, bufs); });
            profile_row(md, "(a) frame as one cooperative kernel, graph of G frames", us, "fused_kernel");
        }
        /* (b)'s host part: a sync after a count; a free + malloc pair */
        reset_frames(c);
        us = wall_us(c, R, [&](int) {
            tail_args t = tail(c);
            t.count_out = d_count;
            count(c, t);
            WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
        });
        profile_row(md, "(b) count + cudaStreamSynchronize, wall clock", us, "the host round trip with the kernel");
        us = wall_us(c, R, [&](int) { WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s)); });
        profile_row(md, "cudaStreamSynchronize of an idle stream, wall clock", us, "");
        void *p = NULL;
        WH_CUDA_OR_DIE(cudaMallocAsync(&p, 1 << 20, c.s));
        us = wall_us(c, R, [&](int i) {
            WH_CUDA_OR_DIE(cudaFreeAsync(p, c.s));
            WH_CUDA_OR_DIE(cudaMallocAsync(&p, (size_t)(1 << 20) + (size_t)(i % 7) * 4096, c.s));
        });
        WH_CUDA_OR_DIE(cudaFreeAsync(p, c.s));
        profile_row(md, "cudaFreeAsync + cudaMallocAsync (pool warm), wall clock", us, "host calls only");
        WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
        WH_CUDA_OR_DIE(cudaFreeHost(h_count));
    }
    /* the arena: a generous RING region, each mirror mode */
    wh_arena_span *spans;
    WH_CUDA_OR_DIE(cudaMalloc(&spans, c.k * sizeof(wh_arena_span)));
    for (int mode = 0; mode < 2; ++mode) {
        wh_arena *ar = profile_arena(c, worst, mode ? WH_ARENA_MIRROR_ON_FAILURE : WH_ARENA_MIRROR_EVERY, spans);
        const char *m = mode ? "mirror on failure" : "mirror every command";
        char what[160];
        reset_frames(c);
        for (int k = 0; k < c.k; ++k) {
            tail_args t = tail(c);
            t.count_out = &c.tri_count[k];
            count(c, t);
        }
        double us = event_us(c, R, [&](int i) {
            ok_or_die(wh_arena_replace_span_async(ar, &c.tri_count[i % c.k], TRI_BYTES, &spans[i % c.k], c.s));
        });
        snprintf(what, sizeof what, "replace command alone (1 thread), %s", m);
        profile_row(md, what, us, "");
        /* before: the whole replace in count's last block (staged in smem) */
        profile_arena_frames(c, R, G, ar, spans, false, m, md);
        reset_frames(c);
        us = event_us(c, R, [&](int f) { count(c, arena_tail(c, f, ar, spans, count_arena_smem(ar), false)); });
        snprintf(what, sizeof what, "count with the replace in its last block alone, %s", m);
        profile_row(md, what, us, "minus 'count alone' = the in-kernel replace");
        /* now: reserve in count's last block (plan), commit after the address is out */
        profile_arena_frames(c, R, G, ar, spans, true, m, md);
        printf("  (reservations the plan served so far: %llu)\n", (unsigned long long)arena_planned(c, ar));
        profile_arena_end(c, ar);
    }
    if (g_fused) { /* where the one-kernel frames' time goes: timestamps */
        if (md)
            fprintf(md,
                    "\n### One-kernel frames, timestamps (%%globaltimer, us, mean over frames 1..%d of one graph)\n\n"
                    "| frame | period | start -> last block | scan | reserve | open barrier | open -> last block's end "
                    "| commit in kernel | end -> next start | side commit: end -> its start | side commit takes "
                    "| side commit done before the next reserve "
                    "|\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                    std::min(G, (int)ST_FRAMES) - 2);
        float *wb[16]; /* every slot the one buffer: K <= 16 */
        for (int k = 0; k < c.k; ++k) wb[k] = buf;
        profile_stamps(
            c, G, "(a) one kernel", [&](int f) { frame_fused_worst(c, f, wb); }, 0, md);
        wh_arena *ar = profile_arena(c, worst, WH_ARENA_MIRROR_ON_FAILURE, spans);
        if (fused_arena_fits(c, ar)) {
            auto in_kernel = [&](int f) { frame_fused_arena(c, f, ar, spans, true); };
            (void)graph_us(c, G, G, in_kernel); /* warm: the plan in place */
            profile_stamps(c, G, "(c) one kernel, commit in the kernel", in_kernel, 0, md);
        }
        if (fused_side_fits(c)) {
            auto side = [&](int f) { frame_fused_side(c, f, ar, spans, G); };
            (void)graph_us(c, G, G, side, cudaGraphInstantiateFlagUseNodePriority);
            profile_stamps(c, G, "(c) one kernel, commit on a side stream", side,
                           cudaGraphInstantiateFlagUseNodePriority, md);
            g_handoff = false;
            (void)graph_us(c, G, G, side, cudaGraphInstantiateFlagUseNodePriority);
            profile_stamps(c, G, "(c) one kernel, commit on a side stream, lock every frame", side,
                           cudaGraphInstantiateFlagUseNodePriority, md);
            g_handoff = true;
            g_chain = true;
            (void)graph_us(c, G, G, side, cudaGraphInstantiateFlagUseNodePriority);
            profile_stamps(c, G, "(c) one kernel, one committer a chain", side, cudaGraphInstantiateFlagUseNodePriority,
                           md);
            g_chain = false;
        }
        profile_arena_end(c, ar);
    }
    WH_CUDA_OR_DIE(cudaFree(spans));
    WH_CUDA_OR_DIE(cudaFree(buf));
    if (md) fclose(md);
}

int main(int argc, char **argv) {
    args a;
    parse(argc, argv, a);
    const int G = graph_frames(a);
    a.frames = std::max(a.frames, G) / G * G;
    if (!wh_cuda_available()) {
        printf("marching_cubes: no GPU\n");
        return 77;
    }
    mc_tables t;
    ctx c;
    setup(c, a, t);
    const uint64_t worst = (uint64_t)c.cells * (uint64_t)t.max_tri * TRI_BYTES;
    enum { NR0 = 10, NR = 20 }; /* rows always run; with the fused kernel and one pass */
    result r[NR];
    int nr = NR0;
    std::vector<std::vector<float>> mesh_fused; /* the fused rows' last meshes */
    uint32_t last = (uint32_t)a.frames - 1;
    int K = a.k;
    char gname[9][128];
    snprintf(gname[0], sizeof gname[0], "(a) worst case, graph of %d frames", G);
    snprintf(gname[1], sizeof gname[1], "(c) arena in kernel, ring, graph of %d frames", G);
    snprintf(gname[2], sizeof gname[2], "(c) arena in kernel, ring, mirror on failure, graph of %d frames", G);
    snprintf(gname[3], sizeof gname[3], "(a) worst case, one kernel, graph of %d frames", G);
    snprintf(gname[4], sizeof gname[4], "(c) arena in one kernel, ring, mirror on failure, graph of %d frames", G);
    snprintf(gname[5], sizeof gname[5],
             "(c) arena in one kernel, commit on a side stream, ring, mirror on failure, graph of %d frames", G);
    snprintf(gname[6], sizeof gname[6],
             "(c) arena in one kernel, one committer a chain, ring, mirror on failure, graph of %d frames", G);
    snprintf(gname[7], sizeof gname[7], "(a) worst case, one pass, graph of %d frames", G);
    snprintf(gname[8], sizeof gname[8],
             "(c) arena in one pass, open window, one committer a chain, ring, mirror on failure, graph of %d frames",
             G);

    /* (a) worst-case buffers */
    std::vector<float *> bufs(K);
    for (int k = 0; k < K; ++k) WH_CUDA_OR_DIE(cudaMalloc(&bufs[k], worst));
    pdl_probe(c, bufs[0]);
    fused_probe(c, bufs[0]);
    if (a.profile) {
        profile(c, a, worst);
        int rc = fused_stuck(c) ? 1 : 0;
        teardown_side(c);
        return rc;
    }
    auto plain_a = [&] {
        reset_frames(c);
        for (int f = 0; f < a.frames; ++f) frame_worst(c, f, bufs.data());
    };
    plain_a(); /* warm-up */
    double sec = median_seconds(c, a.reps, plain_a);
    shown(r[0] = result{"(a) worst case", a.frames / sec, 1e3 * sec / a.frames, (uint64_t)K * worst,
                        (uint64_t)K * worst, 0, 0});
    cudaGraphExec_t ga = capture(c, G, [&](int f) { frame_worst(c, f, bufs.data()); });
    replay(c, a.frames, G, ga);
    sec = median_seconds(c, a.reps, [&] { replay(c, a.frames, G, ga); });
    shown(r[1] =
              result{gname[0], a.frames / sec, 1e3 * sec / a.frames, (uint64_t)K * worst, (uint64_t)K * worst, 0, 0});
    std::vector<uint32_t> hist(a.frames);
    WH_CUDA_OR_DIE(cudaMemcpy(hist.data(), c.history, a.frames * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    const uint64_t needed = needed_peak(hist, K);
    std::vector<float> mesh_a = fetch_mesh(bufs[last % K], hist[last]);
    WH_CUDA_OR_DIE(cudaGraphExecDestroy(ga));
    if (g_fused) { /* (a) as one kernel a frame */
        ga = capture(c, G, [&](int f) { frame_fused_worst(c, f, bufs.data()); });
        replay(c, a.frames, G, ga);
        sec = median_seconds(c, a.reps, [&] { replay(c, a.frames, G, ga); });
        shown(r[nr++] = result{gname[3], a.frames / sec, 1e3 * sec / a.frames, (uint64_t)K * worst, (uint64_t)K * worst,
                               0, 0});
        mesh_fused.push_back(fetch_mesh(bufs[last % K], hist[last]));
        WH_CUDA_OR_DIE(cudaGraphExecDestroy(ga));
    }
    ga = capture(c, G, [&](int f) { frame_onepass_worst(c, f, bufs.data()); }); /* (a), one pass: any grid */
    replay(c, a.frames, G, ga);
    sec = median_seconds(c, a.reps, [&] { replay(c, a.frames, G, ga); });
    shown(r[nr++] =
              result{gname[7], a.frames / sec, 1e3 * sec / a.frames, (uint64_t)K * worst, (uint64_t)K * worst, 0, 0});
    mesh_fused.push_back(fetch_mesh(bufs[last % K], hist[last]));
    WH_CUDA_OR_DIE(cudaGraphExecDestroy(ga));
    for (int k = 0; k < K; ++k) WH_CUDA_OR_DIE(cudaFree(bufs[k]));

    /* (b) read the count back (pinned, mapped: the count kernel writes it),
     * cudaMallocAsync from a pool that keeps its memory */
    cudaMemPool_t pool;
    int dev = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaDeviceGetDefaultMemPool(&pool, dev));
    uint64_t big = UINT64_MAX, zero = 0, reserved_high = 0;
    WH_CUDA_OR_DIE(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &big));
    sync_state st;
    memset(&st, 0, sizeof st);
    WH_CUDA_OR_DIE(cudaHostAlloc((void **)&st.h_count, sizeof(size_t), cudaHostAllocMapped));
    WH_CUDA_OR_DIE(cudaHostGetDevicePointer((void **)&st.d_count, (void *)st.h_count, 0));
    st.count_graph = capture(c, 1, [&](int) {
        tail_args tb = tail(c);
        tb.count_out = st.d_count;
        count(c, tb);
    });
    for (int g = 0; g < 2; ++g) {
        auto run_b = [&] {
            free_sync(c, st);
            reset_frames(c);
            for (int f = 0; f < a.frames; ++f) frame_sync(c, f, st, g);
        };
        run_b(); /* warm-up */
        WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
        WH_CUDA_OR_DIE(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
        st.peak = 0;
        sec = median_seconds(c, a.reps, run_b);
        WH_CUDA_OR_DIE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reserved_high));
        shown(r[2 + g] = result{g ? "(b) sync + mallocAsync, count as graph" : "(b) sync + mallocAsync", a.frames / sec,
                                1e3 * sec / a.frames, st.peak, reserved_high, 0, 0});
    }
    std::vector<float> mesh_b = fetch_mesh(st.buf[last % K], hist[last]);
    free_sync(c, st);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    WH_CUDA_OR_DIE(cudaGraphExecDestroy(st.count_graph));
    WH_CUDA_OR_DIE(cudaFreeHost((void *)st.h_count));
    WH_CUDA_OR_DIE(cudaMemPoolTrimTo(pool, 0));

    /* (c) the stream arena: best fit; ring; ring with the mirror written only
     * on failure -- each sized by its own warm-up */
    wh_arena_span *spans;
    WH_CUDA_OR_DIE(cudaMalloc(&spans, K * sizeof(wh_arena_span)));
    std::vector<float> mesh_c[NR0 - 4];
    int bad = 0;
    for (int v = 0; v < 3; ++v) {
        wh_arena_policy pol = v ? WH_ARENA_RING : WH_ARENA_BEST_FIT;
        wh_arena_mirror mir = v == 2 ? WH_ARENA_MIRROR_ON_FAILURE : WH_ARENA_MIRROR_EVERY;
        auto pass_cmd = [&](wh_arena *ar) {
            reset_frames(c);
            for (int f = 0; f < a.frames; ++f) frame_arena_cmd(c, f, ar, spans);
        };
        double headroom = 0;
        wh_arena *arena = sized_arena(c, a, pol, mir, (uint64_t)K * worst, spans, pass_cmd, &headroom);
        wh_arena_stats as;
        uint64_t failed = 0;
        auto measure = [&](int row, const char *name, const std::function<void()> &run) {
            fresh_stats(c, arena, &as);
            failed = as.failures;
            sec = median_seconds(c, a.reps, run);
            fresh_stats(c, arena, &as);
            shown(r[row] = result{name, a.frames / sec, 1e3 * sec / a.frames, as.peak_used, as.region_bytes,
                                  as.failures - failed, headroom});
            if (row < NR0)
                mesh_c[row - 4] = fetch_span(&spans[last % K]);
            else
                mesh_fused.push_back(fetch_span(&spans[last % K]));
        };
        if (v < 2)
            measure(4 + v, v ? "(c) arena command, ring" : "(c) arena command, best fit", [&] { pass_cmd(arena); });
        if (v) {
            int row = v == 1 ? 6 : 8;
            auto pass_kernel = [&] {
                reset_frames(c);
                for (int f = 0; f < a.frames; ++f) frame_arena_kernel(c, f, arena, spans);
            };
            pass_kernel(); /* warm-up */
            measure(row, v == 1 ? "(c) arena in kernel, ring" : "(c) arena in kernel, ring, mirror on failure",
                    pass_kernel);
            cudaGraphExec_t gc = capture(c, G, [&](int f) { frame_arena_kernel(c, f, arena, spans); });
            replay(c, a.frames, G, gc);
            measure(row + 1, gname[v], [&] { replay(c, a.frames, G, gc); });
            WH_CUDA_OR_DIE(cudaGraphExecDestroy(gc));
            if (v == 2 && fused_arena_fits(c, arena)) { /* count, replace, generate: one kernel */
                gc = capture(c, G, [&](int f) { frame_fused_arena(c, f, arena, spans); });
                replay(c, a.frames, G, gc);
                measure(nr++, gname[4], [&] { replay(c, a.frames, G, gc); });
                WH_CUDA_OR_DIE(cudaGraphExecDestroy(gc));
            }
            if (v == 2 && fused_side_fits(c)) { /* the same, the commit on a side stream */
                auto pass_side = [&] {
                    reset_frames(c);
                    for (int f = 0; f < a.frames; ++f) /* the last commit inside the timing */
                        frame_fused_side(c, f, arena, spans, a.frames);
                };
                g_handoff = false; /* the lock taken every frame */
                pass_side();
                measure(nr++,
                        "(c) arena in one kernel, commit on a side stream, lock every frame, ring, mirror on failure",
                        pass_side);
                g_handoff = true;

                static const char *plain[2] = {
                    "(c) arena in one kernel, commit on a side stream, ring, mirror on failure",
                    "(c) arena in one kernel, one committer a chain, ring, mirror on failure"};
                for (int chain = 0; chain < 2; ++chain) { /* a commit a frame; one a chain */
                    g_chain = chain != 0;
                    pass_side(); /* warm-up */
                    measure(nr++, plain[chain], pass_side);
                    gc = capture(
                        c, G, [&](int f) { frame_fused_side(c, f, arena, spans, G); }, /* rejoined in the capture */
                        cudaGraphInstantiateFlagUseNodePriority);
                    replay(c, a.frames, G, gc);
                    measure(nr++, gname[5 + chain], [&] { replay(c, a.frames, G, gc); });
                    WH_CUDA_OR_DIE(cudaGraphExecDestroy(gc));
                }
                g_chain = false;
            }
            if (v == 2) { /* one pass, the window open before the count */
                auto pass_one = [&] {
                    reset_frames(c);
                    for (int f = 0; f < a.frames; ++f) frame_onepass_arena(c, f, arena, spans, a.frames);
                };
                pass_one(); /* warm-up */
                measure(nr++, "(c) arena in one pass, open window, one committer a chain, ring, mirror on failure",
                        pass_one);
                gc = capture(
                    c, G, [&](int f) { frame_onepass_arena(c, f, arena, spans, G); },
                    cudaGraphInstantiateFlagUseNodePriority);
                replay(c, a.frames, G, gc);
                measure(nr++, gname[8], [&] { replay(c, a.frames, G, gc); });
                WH_CUDA_OR_DIE(cudaGraphExecDestroy(gc));
            }
        }
        printf("arena (%s): region %.2f MiB = %.2f x the warm-up's high-water mark, status '%s', %llu failures, "
               "%llu commands, %llu reservations served by the plan, %llu commits that only allocated\n",
               v ? (v == 2 ? "ring, mirror on failure" : "ring") : "best fit", as.region_bytes / 1048576.0, headroom,
               wh_strerror((wh_status)as.first_status), (unsigned long long)as.failures,
               (unsigned long long)as.commands, (unsigned long long)arena_planned(c, arena),
               (unsigned long long)arena_counter(c, arena, offsetof(wh__arena_state, warm_commits)));
        std::vector<wh_arena_span> hs(K); /* free the parts that are there */
        WH_CUDA_OR_DIE(cudaMemcpy(hs.data(), spans, K * sizeof(wh_arena_span), cudaMemcpyDeviceToHost));
        for (int k = 0; k < K; ++k)
            for (int p = 0; p < 2; ++p)
                if (hs[k].part[p].ptr) ok_or_die(wh_arena_free_async(arena, &spans[k].part[p], c.s));
        wh_blocks_report rep;
        if (wh_arena_check(arena, &rep) != WH_OK || rep.used != 0) {
            fprintf(stderr, "arena walk: %s\n", wh_last_error());
            bad = 1;
        }
        ok_or_die(wh_arena_destroy(arena));
    }

    bool same = mesh_a == mesh_b;
    for (int i = 0; i < NR0 - 4; ++i) same = same && mesh_c[i] == mesh_a;
    for (size_t i = 0; i < mesh_fused.size(); ++i) same = same && mesh_fused[i] == mesh_a;
    if (uint32_t n = fused_stuck(c)) {
        fprintf(stderr, "fused kernel: %u barrier timeouts\n", n);
        bad = 1;
    }
    uint32_t chains[2];
    WH_CUDA_OR_DIE(cudaMemcpy(chains, &c.win->chains_stopped, sizeof chains, cudaMemcpyDeviceToHost));
    printf("one pass: %u chains stopped short, %u ended unforecast\n", chains[0], chains[1]);
    uint32_t ost[ONEPASS_STUCK_KINDS];
    WH_CUDA_OR_DIE(cudaMemcpy(ost, c.op_stuck, sizeof ost, cudaMemcpyDeviceToHost));
    printf("one pass: %u forecasts lost; the arena block %.2f us on average (%u)\n", ost[ONEPASS_LOST],
           ost[ONEPASS_POSTS] ? 1e-3 * ost[ONEPASS_POST_NS] / ost[ONEPASS_POSTS] : 0.0, ost[ONEPASS_POSTS]);
    if (ost[ONEPASS_STUCK_LOOK] || ost[ONEPASS_STUCK_WINDOW] || ost[ONEPASS_STUCK_POST]) {
        fprintf(stderr, "one pass: timeouts: look-back %u, window %u, post %u\n", ost[ONEPASS_STUCK_LOOK],
                ost[ONEPASS_STUCK_WINDOW], ost[ONEPASS_STUCK_POST]);
        bad = 1;
    }
    printf("last frame: %u triangles; meshes of (a), (b), every (c) %s\n", hist[last], same ? "identical" : "DIFFER");
    write_results(a, c, r, nr, needed);
    teardown_side(c);
    if (a.png && *a.png) {
        const int w = 960, hh = 960;
        std::vector<uint8_t> rgb((size_t)w * hh * 3);
        mc_render(mesh_a.data(), hist[last], rgb.data(), w, hh, 0.6f);
        if (wh_png_write_rgb(a.png, rgb.data(), w, hh)) {
            fprintf(stderr, "cannot write %s\n", a.png);
            bad = 1;
        } else
            printf("picture: %s\n", a.png);
    }
    return same && !bad ? 0 : 1;
}
