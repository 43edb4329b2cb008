/* Marching cubes over a time series of moving metaballs, each frame's mesh
 * kept for K frames, the oldest freed.  Triangle counts change every frame
 * and are known only on the GPU -- the use case of seed
 * gpu-executed-heap.txt ("Example Use-Case").  One run compares:
 *   (a) worst case: K buffers of cells * max-triangles, no sync;
 *   (b) count on the GPU, read the count back (a host sync per frame),
 *       cudaMallocAsync the exact size, generate;
 *   (c) the stream arena: the count stays on the GPU, wh_arena_free_async /
 *       wh_arena_alloc_strided_async (stride 36 = one triangle) in the stream,
 *       the generate kernel reads the handle; no sync.
 * Reports frames/s (median of --reps runs of --frames frames) and peak memory
 * against the bytes actually needed (the largest sum of K live meshes), writes
 * CSV/markdown, and a PNG of the last frame.
 *
 * The arena's region is sized from a warm-up pass: headroom * the high-water
 * mark of bytes in use (the pass replays the same time series; see docs/arena.md).
 * Algorithm: Lorensen & Cline 1987 (tables generated, mc_tables.c); offsets by
 * CUB's exclusive scan. */
#include <cub/cub.cuh>

#include "mc_field.h"
#include "mc_render.h"
#include "mc_tables.h"
#include "warpheap/arena.h"
#include "warpheap/cuda_check.h"
#include "wh_png.h"

#include <algorithm>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <vector>

#define TRI_BYTES 36u                         /* three xyz float vertices */

__constant__ uint8_t c_ntri[256];
__constant__ int8_t c_tri[256][3 * MC_MAX_TRI];
__constant__ uint8_t c_edge[12][2];

struct args {
    int n = 128, k = 3, frames = 300, reps = 5, balls = 8;
    double headroom = 1.15;
    const char *png = "marching_cubes.png", *csv = NULL, *md = NULL;
};

/* ---- the volume: metaballs on Lissajous paths ----------------------------------- */

/* The frame number lives on the device (frame[0]) so that one captured graph
 * serves every frame. */
static __global__ void field_kernel(float *f, int n, const uint32_t *frame, int balls) {
    __shared__ mc_ball ball[MC_MAX_BALLS];
    if (threadIdx.x < (unsigned)balls) ball[threadIdx.x] = mc_ball_at((int)threadIdx.x, mc_time(*frame));
    __syncthreads();
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint32_t)(n * n * n)) return;
    float inv = 1.0f / (float)(n - 1);
    f[i] = mc_field((i % n) * inv, (i / n % n) * inv, (i / n / n) * inv, ball, balls);
}

__device__ uint32_t cell_case(const float *f, int n, int x, int y, int z) {
    uint32_t m = 0;
    for (int c = 0; c < 8; ++c) {
        int cx = x + (c & 1), cy = y + ((c >> 1) & 1), cz = z + ((c >> 2) & 1);
        m |= (f[(cz * n + cy) * n + cx] > MC_ISO) << c;
    }
    return m;
}

static __global__ void classify_kernel(const float *f, int n, uint32_t *counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, m = (uint32_t)(n - 1);
    if (i >= m * m * m) return;
    counts[i] = c_ntri[cell_case(f, n, i % m, i / m % m, i / m / m)];
}

/* The frame's triangle count, where the allocation command reads it; then
 * on to the next frame. */
static __global__ void total_kernel(const uint32_t *offsets, const uint32_t *counts, uint32_t cells, size_t *count,
                                    uint32_t *history, uint32_t *frame) {
    uint32_t total = offsets[cells - 1] + counts[cells - 1];
    *count = total;
    history[*frame] = total;
    *frame += 1;
}

__device__ float3 edge_point(const float *f, int n, int x, int y, int z, int e) {
    int a = c_edge[e][0], b = c_edge[e][1];
    float3 pa = make_float3(x + (a & 1), y + ((a >> 1) & 1), z + ((a >> 2) & 1));
    float3 pb = make_float3(x + (b & 1), y + ((b >> 1) & 1), z + ((b >> 2) & 1));
    float va = f[((int)pa.z * n + (int)pa.y) * n + (int)pa.x], vb = f[((int)pb.z * n + (int)pb.y) * n + (int)pb.x];
    float s = (MC_ISO - va) / (vb - va), inv = 1.0f / (float)(n - 1);
    return make_float3((pa.x + s * (pb.x - pa.x)) * inv, (pa.y + s * (pb.y - pa.y)) * inv, (pa.z + s * (pb.z - pa.z)) * inv);
}

/* out: the mesh buffer; or NULL and slot: the arena handle (null: the
 * allocation failed, the frame is dropped, nothing is written). */
static __global__ void generate_kernel(const float *f, int n, const uint32_t *offsets, const uint32_t *counts,
                                       float *out, const wh_handle *slot) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, m = (uint32_t)(n - 1);
    if (i >= m * m * m || counts[i] == 0) return;
    if (!out && slot) out = (float *)wh_handle_ptr(slot);
    if (!out) return;                                  /* no buffer: nothing to write */
    int x = i % m, y = i / m % m, z = i / m / m;
    uint32_t c = cell_case(f, n, x, y, z);
    float *t = out + 9ull * offsets[i];
    for (int k = 0; k < 3 * c_ntri[c]; ++k) {
        float3 p = edge_point(f, n, x, y, z, c_tri[c][k]);
        t[3 * k] = p.x; t[3 * k + 1] = p.y; t[3 * k + 2] = p.z;
    }
}

/* ---- one frame, shared part -------------------------------------------------------- */

struct ctx {
    int n, k, balls;
    uint32_t cells;
    float *field;
    uint32_t *counts, *offsets, *history;   /* history[frame]: triangles */
    uint32_t *frame;                        /* device: the frame being made */
    size_t *tri_count;                      /* [k]: the count the allocation reads */
    void *scan_tmp;
    size_t scan_bytes;
    cudaStream_t s;
};

static unsigned blocks_for(uint32_t n) { return (n + 255) / 256; }

/* Field, cases, offsets, and the count into tri_count[k]. */
static void count_frame(ctx &c, int k) {
    uint32_t pts = (uint32_t)(c.n * c.n * c.n);
    field_kernel<<<blocks_for(pts), 256, 0, c.s>>>(c.field, c.n, c.frame, c.balls);
    WH_LAUNCH_OR_DIE();
    classify_kernel<<<blocks_for(c.cells), 256, 0, c.s>>>(c.field, c.n, c.counts);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cub::DeviceScan::ExclusiveSum(c.scan_tmp, c.scan_bytes, c.counts, c.offsets, c.cells, c.s));
    total_kernel<<<1, 1, 0, c.s>>>(c.offsets, c.counts, c.cells, &c.tri_count[k], c.history, c.frame);
    WH_LAUNCH_OR_DIE();
}

static void generate(ctx &c, float *out, const wh_handle *slot) {
    generate_kernel<<<blocks_for(c.cells), 256, 0, c.s>>>(c.field, c.n, c.offsets, c.counts, out, slot);
    WH_LAUNCH_OR_DIE();
}

/* ---- the three variants ---------------------------------------------------------------- *
 * Each run makes frames [0, frames).  (a) and (c) never wait for the GPU, so
 * a frame is also captured once as a CUDA graph per ring slot k and replayed;
 * (b) waits in every frame, so only its counting part can be a graph. */

static void reset_frames(ctx &c) { WH_CUDA_OR_DIE(cudaMemsetAsync(c.frame, 0, sizeof(uint32_t), c.s)); }

static void frame_worst(ctx &c, int k, float **bufs) {
    count_frame(c, k);
    generate(c, bufs[k], NULL);
}

/* One command per frame: free the mesh of frame f - K in slot k, allocate
 * this frame's (count read on the GPU, stride one triangle) into it. */
static void frame_arena(ctx &c, int k, wh_arena *a, wh_handle *slots) {
    count_frame(c, k);
    if (wh_arena_replace_async(a, &c.tri_count[k], TRI_BYTES, &slots[k], c.s) != WH_OK) {
        fprintf(stderr, "arena: %s\n", wh_last_error());       /* enqueueing failed */
        exit(1);
    }
    generate(c, NULL, &slots[k]);
}

struct sync_state {
    float *buf[16];
    size_t bytes[16];
    size_t *h_count;                        /* pinned */
    uint64_t live, peak;
    cudaGraphExec_t count_graph;            /* count_frame(0) + the copy to h_count */
};

static void frame_sync(ctx &c, int f, sync_state &st, bool graph) {
    int k = f % c.k;
    if (graph) {
        WH_CUDA_OR_DIE(cudaGraphLaunch(st.count_graph, c.s));
    } else {
        count_frame(c, 0);
        WH_CUDA_OR_DIE(cudaMemcpyAsync(st.h_count, &c.tri_count[0], sizeof(size_t), cudaMemcpyDeviceToHost, c.s));
    }
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));               /* the host sync of variant (b) */
    if (st.buf[k]) WH_CUDA_OR_DIE(cudaFreeAsync(st.buf[k], c.s));
    st.live -= st.bytes[k];
    st.bytes[k] = *st.h_count * TRI_BYTES;
    st.buf[k] = NULL;
    if (st.bytes[k]) WH_CUDA_OR_DIE(cudaMallocAsync((void **)&st.buf[k], st.bytes[k], c.s));
    st.live += st.bytes[k];
    st.peak = std::max(st.peak, st.live);
    generate(c, st.buf[k], NULL);
}

static void free_sync(ctx &c, sync_state &st) {
    for (int k = 0; k < c.k; ++k) {
        if (st.buf[k]) WH_CUDA_OR_DIE(cudaFreeAsync(st.buf[k], c.s));
        st.buf[k] = NULL;
        st.live -= st.bytes[k];
        st.bytes[k] = 0;
    }
}

/* Capture make(k) once per slot k. */
template <typename F> static std::vector<cudaGraphExec_t> capture(ctx &c, F make) {
    std::vector<cudaGraphExec_t> g(c.k);
    for (int k = 0; k < c.k; ++k) {
        cudaGraph_t graph;
        WH_CUDA_OR_DIE(cudaStreamBeginCapture(c.s, cudaStreamCaptureModeRelaxed));
        make(k);
        WH_CUDA_OR_DIE(cudaStreamEndCapture(c.s, &graph));
        WH_CUDA_OR_DIE(cudaGraphInstantiate(&g[k], graph, 0));
        WH_CUDA_OR_DIE(cudaGraphDestroy(graph));
    }
    return g;
}

static void replay(ctx &c, int frames, const std::vector<cudaGraphExec_t> &g) {
    reset_frames(c);
    for (int f = 0; f < frames; ++f) WH_CUDA_OR_DIE(cudaGraphLaunch(g[f % c.k], c.s));
}

/* ---- timing, memory, output ---------------------------------------------------------- */

struct result {
    const char *name;
    double fps, ms;
    uint64_t peak, reserved;                /* peak in use; reserved (what the variant holds) */
    uint64_t dropped;
};

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
    for (int i = 1; i < argc; ++i) {
        const char *v = strchr(argv[i], '=');
        if (!v) continue;
        ++v;
        if (!strncmp(argv[i], "--n=", 4)) a.n = atoi(v);
        else if (!strncmp(argv[i], "--k=", 4)) a.k = atoi(v);
        else if (!strncmp(argv[i], "--frames=", 9)) a.frames = atoi(v);
        else if (!strncmp(argv[i], "--reps=", 7)) a.reps = atoi(v);
        else if (!strncmp(argv[i], "--balls=", 8)) a.balls = atoi(v);
        else if (!strncmp(argv[i], "--headroom=", 11)) a.headroom = atof(v);
        else if (!strncmp(argv[i], "--png=", 6)) a.png = v;
        else if (!strncmp(argv[i], "--csv=", 6)) a.csv = v;
        else if (!strncmp(argv[i], "--md=", 5)) a.md = v;
    }
    a.n = std::max(8, std::min(a.n, 320));
    a.k = std::max(1, std::min(a.k, 16));
    a.balls = std::max(1, std::min(a.balls, MC_MAX_BALLS));
    a.frames = std::max(a.frames, a.k + 1);
    a.reps = std::max(1, a.reps);
}


static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* The last frame's mesh, copied to the host (ntri triangles at ptr). */
static std::vector<float> fetch_mesh(const void *ptr, uint32_t ntri) {
    std::vector<float> h((size_t)ntri * 9);
    if (ptr && ntri) WH_CUDA_OR_DIE(cudaMemcpy(h.data(), ptr, (size_t)ntri * TRI_BYTES, cudaMemcpyDeviceToHost));
    return h;
}

static void write_results(const args &a, const ctx &c, const result *r, int nr, uint64_t needed, double headroom) {
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
    printf("\n%s, driver %s (CUDA driver API %d), runtime %d, %s, commit %s\n", prop.name, driver, drv, rt, date, commit);
    printf("grid %d^3 (%u cells), K=%d live frames, %d frames x %d runs, %d balls; needed peak %.2f MiB\n", a.n,
           c.cells, a.k, a.frames, a.reps, a.balls, needed / 1048576.0);
    printf("%-28s %10s %9s %12s %12s %9s %8s\n", "variant", "frames/s", "ms/frame", "peak MiB", "reserved MiB",
           "res/need", "dropped");
    for (int i = 0; i < nr; ++i)
        printf("%-28s %10.0f %9.4f %12.2f %12.2f %9.3f %8llu\n", r[i].name, r[i].fps, r[i].ms, r[i].peak / 1048576.0,
               r[i].reserved / 1048576.0, (double)r[i].reserved / (double)needed, (unsigned long long)r[i].dropped);
    printf("(c)/(b) frames/s: %.2fx with plain launches, %.2fx with graphs; arena headroom %.2f\n", r[4].fps / r[2].fps,
           r[5].fps / r[3].fps, headroom);
    if (a.csv) {
        FILE *f = fopen(a.csv, "a");
        if (!f) { perror(a.csv); exit(1); }
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0)
            fprintf(f, "gpu,driver,cuda_runtime,date,commit,n,k,frames,reps,balls,variant,fps,ms_per_frame,"
                       "peak_bytes,reserved_bytes,needed_bytes,reserved_over_needed,dropped,arena_headroom\n");
        for (int i = 0; i < nr; ++i)
            fprintf(f, "\"%s\",%s,%d,%s,%s,%d,%d,%d,%d,%d,\"%s\",%.1f,%.5f,%llu,%llu,%llu,%.4f,%llu,%.2f\n", prop.name,
                    driver, rt, date, commit, a.n, a.k, a.frames, a.reps, a.balls, r[i].name, r[i].fps, r[i].ms,
                    (unsigned long long)r[i].peak, (unsigned long long)r[i].reserved, (unsigned long long)needed,
                    (double)r[i].reserved / (double)needed, (unsigned long long)r[i].dropped, headroom);
        fclose(f);
    }
    if (a.md) {
        FILE *f = fopen(a.md, "a");
        if (!f) { perror(a.md); exit(1); }
        fprintf(f, "\n### %d^3 grid, K=%d, %d frames, median of %d runs\n\n%s, driver %s, CUDA runtime %d, %s, commit %s. "
                   "Needed: %.2f MiB (largest sum of %d live meshes).\n\n"
                   "| variant | frames/s | ms/frame | peak in use (MiB) | reserved (MiB) | reserved / needed | dropped |\n"
                   "|---|---:|---:|---:|---:|---:|---:|\n",
                a.n, a.k, a.frames, a.reps, prop.name, driver, rt, date, commit, needed / 1048576.0, a.k);
        for (int i = 0; i < nr; ++i)
            fprintf(f, "| %s | %.0f | %.4f | %.2f | %.2f | %.3f | %llu |\n", r[i].name, r[i].fps, r[i].ms,
                    r[i].peak / 1048576.0, r[i].reserved / 1048576.0, (double)r[i].reserved / (double)needed,
                    (unsigned long long)r[i].dropped);
        fprintf(f, "\n(c)/(b) frames/s: **%.2fx** with plain launches, **%.2fx** with graphs. Arena region = %.2f x "
                   "the warm-up high-water mark.\n", r[4].fps / r[2].fps, r[5].fps / r[3].fps, headroom);
        fclose(f);
    }
}

static void setup(ctx &c, const args &a, mc_tables &t) {
    if (mc_tables_build(&t)) { fprintf(stderr, "tables: a case needs more than %d triangles\n", MC_MAX_TRI); exit(1); }
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(c_ntri, t.ntri, sizeof t.ntri));
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(c_tri, t.tri, sizeof t.tri));
    WH_CUDA_OR_DIE(cudaMemcpyToSymbol(c_edge, t.edge_corner, sizeof t.edge_corner));
    c.n = a.n; c.k = a.k; c.balls = a.balls;
    c.cells = (uint32_t)(a.n - 1) * (uint32_t)(a.n - 1) * (uint32_t)(a.n - 1);
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    WH_CUDA_OR_DIE(cudaMalloc(&c.field, (size_t)a.n * a.n * a.n * sizeof(float)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.counts, c.cells * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.offsets, c.cells * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.history, (size_t)a.frames * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.tri_count, (size_t)a.k * sizeof(size_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&c.frame, sizeof(uint32_t)));
    c.scan_tmp = NULL;
    WH_CUDA_OR_DIE(cub::DeviceScan::ExclusiveSum(c.scan_tmp, c.scan_bytes, c.counts, c.offsets, c.cells, c.s));
    WH_CUDA_OR_DIE(cudaMalloc(&c.scan_tmp, c.scan_bytes));
}

/* Size the arena from a warm-up pass in a generous one: the smallest
 * headroom (from a.headroom, in steps of 5%) over its high-water mark with
 * which a whole pass runs without a failed allocation. */
static wh_arena *sized_arena(ctx &c, const args &a, uint64_t generous, wh_handle *slots, double *headroom) {
    wh_arena_config cfg = {};
    cfg.bytes = generous;
    cfg.backend = WH_ARENA_CUDA;
    wh_arena *arena = NULL;
    if (wh_arena_create(&arena, &cfg) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); exit(1); }
    reset_frames(c);
    for (int f = 0; f < a.frames; ++f) frame_arena(c, f % c.k, arena, slots);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    wh_arena_stats st;
    wh_arena_stats_get(arena, &st);
    wh_arena_destroy(arena);
    uint64_t high = st.peak_used;
    for (double h = a.headroom; h < 3.0; h += 0.05) {
        WH_CUDA_OR_DIE(cudaMemset(slots, 0, c.k * sizeof(wh_handle)));
        cfg.bytes = (size_t)((double)high * h);
        if (wh_arena_create(&arena, &cfg) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); exit(1); }
        reset_frames(c);
        for (int f = 0; f < a.frames; ++f) frame_arena(c, f % c.k, arena, slots);
        WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
        wh_arena_stats_get(arena, &st);
        if (st.failures == 0) { *headroom = h; return arena; }
        printf("arena: %.2f x the high-water mark drops %llu frames, trying more\n", h, (unsigned long long)st.failures);
        wh_arena_destroy(arena);
    }
    fprintf(stderr, "arena: no headroom up to 3x worked\n");
    exit(1);
}

int main(int argc, char **argv) {
    args a;
    parse(argc, argv, a);
    if (!wh_cuda_available()) { printf("marching_cubes: no GPU\n"); return 77; }
    mc_tables t;
    ctx c;
    setup(c, a, t);
    const uint64_t worst = (uint64_t)c.cells * (uint64_t)t.max_tri * TRI_BYTES;
    result r[6];
    uint32_t last = (uint32_t)a.frames - 1;
    int K = a.k;

    /* (a) worst-case buffers */
    std::vector<float *> bufs(K);
    for (int k = 0; k < K; ++k) WH_CUDA_OR_DIE(cudaMalloc(&bufs[k], worst));
    auto plain_a = [&] { reset_frames(c); for (int f = 0; f < a.frames; ++f) frame_worst(c, f % K, bufs.data()); };
    plain_a();                                                                /* warm-up */
    double sec = median_seconds(c, a.reps, plain_a);
    r[0] = {"(a) worst case", a.frames / sec, 1e3 * sec / a.frames, (uint64_t)K * worst, (uint64_t)K * worst, 0};
    std::vector<cudaGraphExec_t> ga = capture(c, [&](int k) { frame_worst(c, k, bufs.data()); });
    replay(c, a.frames, ga);
    sec = median_seconds(c, a.reps, [&] { replay(c, a.frames, ga); });
    r[1] = {"(a) worst case, graph", a.frames / sec, 1e3 * sec / a.frames, (uint64_t)K * worst, (uint64_t)K * worst, 0};
    std::vector<uint32_t> hist(a.frames);
    WH_CUDA_OR_DIE(cudaMemcpy(hist.data(), c.history, a.frames * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    const uint64_t needed = needed_peak(hist, K);
    std::vector<float> mesh_a = fetch_mesh(bufs[last % K], hist[last]);
    for (int k = 0; k < K; ++k) WH_CUDA_OR_DIE(cudaGraphExecDestroy(ga[k]));
    for (int k = 0; k < K; ++k) WH_CUDA_OR_DIE(cudaFree(bufs[k]));

    /* (b) read the count back, cudaMallocAsync (pool keeps its memory) */
    cudaMemPool_t pool;
    int dev = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaDeviceGetDefaultMemPool(&pool, dev));
    uint64_t big = UINT64_MAX, zero = 0, reserved_high = 0;
    WH_CUDA_OR_DIE(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &big));
    sync_state st;
    memset(&st, 0, sizeof st);
    WH_CUDA_OR_DIE(cudaMallocHost(&st.h_count, sizeof(size_t)));
    std::vector<cudaGraphExec_t> gb = capture(c, [&](int) {
        count_frame(c, 0);
        WH_CUDA_OR_DIE(cudaMemcpyAsync(st.h_count, &c.tri_count[0], sizeof(size_t), cudaMemcpyDeviceToHost, c.s));
    });
    st.count_graph = gb[0];
    for (int g = 0; g < 2; ++g) {
        auto run_b = [&] { free_sync(c, st); reset_frames(c); for (int f = 0; f < a.frames; ++f) frame_sync(c, f, st, g); };
        run_b();                                                              /* warm-up */
        WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
        WH_CUDA_OR_DIE(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
        st.peak = 0;
        sec = median_seconds(c, a.reps, run_b);
        WH_CUDA_OR_DIE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reserved_high));
        r[2 + g] = {g ? "(b) sync + mallocAsync, graph" : "(b) sync + mallocAsync", a.frames / sec,
                    1e3 * sec / a.frames, st.peak, reserved_high, 0};
    }
    std::vector<float> mesh_b = fetch_mesh(st.buf[last % K], hist[last]);
    free_sync(c, st);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    for (int k = 0; k < K; ++k) WH_CUDA_OR_DIE(cudaGraphExecDestroy(gb[k]));
    WH_CUDA_OR_DIE(cudaMemPoolTrimTo(pool, 0));

    /* (c) the stream arena */
    wh_handle *slots;
    WH_CUDA_OR_DIE(cudaMalloc(&slots, K * sizeof(wh_handle)));
    double headroom = 0;
    wh_arena *arena = sized_arena(c, a, (uint64_t)K * worst, slots, &headroom);
    wh_arena_stats as;
    auto plain_c = [&] { reset_frames(c); for (int f = 0; f < a.frames; ++f) frame_arena(c, f % K, arena, slots); };
    sec = median_seconds(c, a.reps, plain_c);
    wh_arena_stats_get(arena, &as);
    r[4] = {"(c) stream arena", a.frames / sec, 1e3 * sec / a.frames, as.peak_used, as.region_bytes, as.failures};
    std::vector<cudaGraphExec_t> gc = capture(c, [&](int k) { frame_arena(c, k, arena, slots); });
    replay(c, a.frames, gc);
    sec = median_seconds(c, a.reps, [&] { replay(c, a.frames, gc); });
    wh_arena_stats_get(arena, &as);
    r[5] = {"(c) stream arena, graph", a.frames / sec, 1e3 * sec / a.frames, as.peak_used, as.region_bytes,
            as.failures - r[4].dropped};
    printf("arena: region %.2f MiB = %.2f x the warm-up's high-water mark, status '%s', %llu failures, %llu commands\n",
           as.region_bytes / 1048576.0, headroom, wh_strerror((wh_status)as.first_status),
           (unsigned long long)as.failures, (unsigned long long)as.commands);
    wh_handle h;
    WH_CUDA_OR_DIE(cudaMemcpy(&h, &slots[last % K], sizeof h, cudaMemcpyDeviceToHost));
    std::vector<float> mesh_c = fetch_mesh(wh_handle_ptr(&h), h.ptr ? hist[last] : 0);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(c.s));
    if (wh_arena_free_batch_async(arena, slots, (uint32_t)K, c.s) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); return 1; }
    wh_blocks_report rep;
    int bad = 0;
    if (wh_arena_check(arena, &rep) != WH_OK || rep.used != 0) { fprintf(stderr, "arena walk: %s\n", wh_last_error()); bad = 1; }
    for (int k = 0; k < K; ++k) WH_CUDA_OR_DIE(cudaGraphExecDestroy(gc[k]));
    wh_arena_destroy(arena);

    bool same = mesh_a == mesh_b && mesh_a == mesh_c;
    printf("last frame: %u triangles; meshes of (a), (b), (c) %s\n", hist[last], same ? "identical" : "DIFFER");
    write_results(a, c, r, 6, needed, headroom);
    if (a.png && *a.png) {
        const int w = 960, hh = 960;
        std::vector<uint8_t> rgb((size_t)w * hh * 3);
        mc_render(mesh_a.data(), hist[last], rgb.data(), w, hh, 0.6f);
        if (wh_png_write_rgb(a.png, rgb.data(), w, hh)) { fprintf(stderr, "cannot write %s\n", a.png); bad = 1; }
        else printf("picture: %s\n", a.png);
    }
    return same && !bad ? 0 : 1;
}
