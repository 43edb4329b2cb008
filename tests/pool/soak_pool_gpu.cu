/* SPDX-License-Identifier: MIT */
/* GPU soak of the host pool: several host threads, each with its own CUDA
 * stream, allocate (1 B .. 1 MiB, some tagged), free, now and then on another
 * thread's stream or after wh_pool_record_stream, until --ops operations in
 * all or --budget seconds.  Every 8th block gets a kernel that writes its
 * owner's pattern on the allocating stream; a kernel on the freeing stream
 * checks it just before the free and counts every word that changed on the
 * device: a block handed out while another stream could still use it shows
 * there.  At the end: no corrupt word, stats balanced, the pool's walk sound,
 * and after free-all and trim nothing reserved.  One line of progress a
 * second.   soak_pool_gpu [--ops=N] [--budget=S] [--threads=T] [--growth=arenas|vmm|both] */
#include "warpheap/pool.h"
#include "warpheap/cuda_check.h"
#include "wh_test.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define HELD 16u

__global__ void pattern_kernel(uint32_t *p, size_t words, uint32_t v, unsigned long long *bad, bool check) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
        if (!check)
            p[i] = v + (uint32_t)i;
        else if (p[i] != v + (uint32_t)i)
            atomicAdd(bad, 1ull);
    }
}

typedef struct {
    void *p;
    size_t n;
    uint32_t v;
    bool marked;
} blk;
static wh_pool *pool;
static cudaStream_t *streams;
static unsigned nthreads;
static double budget, t_start;
static unsigned long long target, *d_bad;
static unsigned long long done_ops, failed;

static void pattern(const blk *b, cudaStream_t s, bool check) {
    pattern_kernel<<<8, 256, 0, s>>>((uint32_t *)b->p, b->n / 4, b->v, d_bad, check);
    WH_LAUNCH_OR_DIE();
}

static void worker(unsigned t, void *arg) {
    (void)arg;
    blk held[HELD];
    unsigned n = 0;
    static const char *const tags[4] = {"a", "b", "c", "d"};
    for (uint64_t i = 0;; ++i) {
        if ((i & 1023u) == 0 &&
            (__atomic_load_n(&done_ops, __ATOMIC_RELAXED) >= target || wh_now_seconds() - t_start > budget))
            break;
        uint64_t r = wh_hash64((uint64_t)t << 40 | i);
        cudaStream_t s = streams[t];
        if (n < HELD && (n == 0 || r % 100u < 52u)) {
            size_t size = 1 + (size_t)((r >> 8) % ((r >> 40) % 16u == 0 ? (1u << 20) : 4096u));
            const void *tag = (r >> 44) % 4u == 0 ? tags[(r >> 46) & 3u] : NULL;
            void *p =
                tag ? wh_pool_alloc_tagged(pool, size, tag, (wh_stream)s) : wh_pool_alloc(pool, size, (wh_stream)s);
            if (!p) {
                __atomic_fetch_add(&failed, 1ull, __ATOMIC_RELAXED);
                continue;
            }
            blk b = {p, size, (uint32_t)r | 1u, (r >> 50) % 8u == 0 && size >= 4};
            if (b.marked) pattern(&b, s, false);
            if ((r >> 53) % 16u == 0) { /* another thread's stream reads it too */
                cudaStream_t o = streams[(t + 1) % nthreads];
                WH_CUDA_OR_DIE(cudaStreamSynchronize(s)); /* the pattern is written before o reads it */
                if (b.marked) pattern(&b, o, true);
                CHECK(wh_pool_record_stream(pool, p, (wh_stream)o) == WH_OK);
            }
            held[n++] = b;
        } else if (n) {
            unsigned k = (unsigned)((r >> 20) % n);
            blk b = held[k];
            held[k] = held[--n];
            cudaStream_t fs = (r >> 56) % 8u == 0 ? streams[(t + 1) % nthreads] : s; /* freed elsewhere */
            if (fs != s) WH_CUDA_OR_DIE(cudaStreamSynchronize(s));                   /* its writes came before, on s */
            if (b.marked) pattern(&b, fs, true);
            CHECK(wh_pool_free(pool, b.p, (wh_stream)fs) == WH_OK);
        }
        __atomic_fetch_add(&done_ops, 1ull, __ATOMIC_RELAXED);
    }
    while (n) {
        blk b = held[--n];
        if (b.marked) pattern(&b, streams[t], true);
        CHECK(wh_pool_free(pool, b.p, (wh_stream)streams[t]) == WH_OK);
    }
    WH_CUDA_OR_DIE(cudaStreamSynchronize(streams[t]));
}

int main(int argc, char **argv) {
    if (!wh_cuda_available()) {
        printf("soak_pool_gpu: no GPU, skipped\n");
        return WH_TEST_SKIP;
    }
    double ops = 1e6;
    const char *growth = "both";
    budget = 10;
    nthreads = 8;
    static const struct option opts[] = {
        {"ops", required_argument, NULL, 'o'},     {"budget", required_argument, NULL, 'b'},
        {"threads", required_argument, NULL, 't'}, {"growth", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (c == 'o')
            ops = atof(optarg);
        else if (c == 'b')
            budget = atof(optarg);
        else if (c == 't')
            nthreads = (unsigned)atoi(optarg);
        else if (c == 'g' && (!strcmp(optarg, "arenas") || !strcmp(optarg, "vmm") || !strcmp(optarg, "both")))
            growth = optarg;
        else {
            fprintf(c == 'h' ? stdout : stderr,
                    "usage: %s [--ops=N] [--budget=SECONDS] [--threads=T] [--growth=arenas|vmm|both]\n", argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    if (nthreads < 2 || nthreads > 32) {
        fprintf(stderr, "--threads: 2 .. 32\n");
        return 2;
    }
    target = (unsigned long long)ops;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int g = 0; g < 2; ++g) {
        if (strcmp(growth, "both") && strcmp(growth, g ? "vmm" : "arenas")) continue;
        wh_pool_config c = {};
        c.backend = WH_POOL_CUDA;
        c.max_bytes = 2ull << 30;
        c.growth = g ? WH_POOL_GROW_VMM : WH_POOL_GROW_ARENAS;
        CHECK(wh_pool_create(&pool, &c) == WH_OK);
        streams = (cudaStream_t *)calloc(nthreads, sizeof *streams);
        for (unsigned t = 0; t < nthreads; ++t)
            WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&streams[t], cudaStreamNonBlocking));
        WH_CUDA_OR_DIE(cudaMalloc(&d_bad, sizeof *d_bad));
        WH_CUDA_OR_DIE(cudaMemset(d_bad, 0, sizeof *d_bad));
        done_ops = failed = 0;
        t_start = wh_now_seconds();
        wh_run_threads(nthreads, worker, NULL);
        WH_CUDA_OR_DIE(cudaDeviceSynchronize());
        double dt = wh_now_seconds() - t_start;
        unsigned long long bad = 0;
        WH_CUDA_OR_DIE(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
        wh_pool_stats st;
        CHECK(wh_pool_get_stats(pool, &st) == WH_OK);
        printf("%s: %u threads, %.3g operations in %.1f s (%.3g/s), %llu failed, %llu corrupt words, "
               "reserved peak %.1f MiB\n",
               g ? "vmm" : "arenas", nthreads, (double)done_ops, dt, (double)done_ops / dt, failed, bad,
               (double)st.reserved_peak / 1048576.0);
        CHECK_EQ_U64(bad, 0);
        CHECK_EQ_U64(st.allocs, st.frees);
        CHECK_EQ_U64(st.in_use, 0);
        CHECK(wh_pool_check(pool) == WH_OK);
        CHECK(wh_pool_trim(pool, 0) == WH_OK);
        CHECK(wh_pool_get_stats(pool, &st) == WH_OK);
        CHECK_EQ_U64(st.reserved, 0);
        CHECK(wh_pool_destroy(pool) == WH_OK);
        for (unsigned t = 0; t < nthreads; ++t) WH_CUDA_OR_DIE(cudaStreamDestroy(streams[t]));
        free(streams);
        WH_CUDA_OR_DIE(cudaFree(d_bad));
    }
    return wh_test_finish("soak_pool_gpu");
}
