/* SPDX-License-Identifier: MIT */
/* Host pool benchmark: one binary, one run, against cudaMalloc/cudaFree and
 * cudaMallocAsync/cudaFreeAsync (device default pool, release threshold
 * UINT64_MAX so it keeps memory), all on one non-blocking stream unless said.
 *
 *   latency   : alloc+free pairs of one size, same stream; median over
 *               batches of the mean pair time in a batch (clock_gettime)
 *   random    : RMM's random_allocations (alloc with p = 0.73, else free a
 *               random live block; sizes uniform in [1 B, max]; at most N
 *               allocations in 2N steps; live bytes capped at 16 GiB), run
 *               twice on a fresh allocator: "cold" is the first pass (every
 *               allocator starts empty: cudaMallocAsync's pool trimmed to 0),
 *               "warm" the median of identical later passes (5 for N = 1e3,
 *               3 for 1e4, 1 for 1e5: RMM's steady state, the first pass
 *               being its untimed warm-up).  Not for cudaMalloc, which keeps
 *               nothing (warm = cold).  Peak reserved over all passes.
 *   futhark   : a loop whose body allocates 6 buffers, memsets 4 KiB of
 *               each on the stream and frees them (Futhark's pattern)
 *   streams4  : 4 host threads, each on its own stream, alloc/free with a
 *               window of 16 live blocks, sizes 256 B .. 1 MiB
 * Reports time per operation (alloc or free), peak reserved, peak live.
 * Usage: wh_pool_bench --out=DIR [--quick] [--random-max=MIB [--no-baselines]]
 *   (writes pool_bench.csv, .md; --random-max: only random_allocations with
 *   that max, --no-baselines: only warpheap's default growth there)
 */
#include "warpheap/pool.h"
#include "warpheap/cuda_check.h"
#include "rmm_pattern.h"
#include "wh_cli.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct alloc_if {
    const char *name;
    void *(*alloc)(struct alloc_if *a, size_t n, cudaStream_t s, const void *tag);
    void (*release)(struct alloc_if *a, void *p, cudaStream_t s);
    void (*reset)(struct alloc_if *a);             /* empty caches, zero peaks */
    uint64_t (*peak_reserved)(struct alloc_if *a); /* 0: unknown               */
    wh_pool *pool;
    cudaMemPool_t mp;
    bool tagged;
    wh_pool_growth growth;
    bool secure; /* config.secure: the hardened mode */
} alloc_if;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the three allocators --------------------------------------------------- */
static void *cm_alloc(alloc_if *a, size_t n, cudaStream_t s, const void *t) {
    (void)a;
    (void)s;
    (void)t;
    void *p = NULL;
    if (cudaMalloc(&p, n) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}
static void cm_free(alloc_if *a, void *p, cudaStream_t s) {
    (void)a;
    (void)s;
    WH_CUDA_OR_DIE(cudaFree(p));
}
static void cm_reset(alloc_if *a) { (void)a; }
static uint64_t cm_peak(alloc_if *a) {
    (void)a;
    return 0;
}

static void *ca_alloc(alloc_if *a, size_t n, cudaStream_t s, const void *t) {
    (void)a;
    (void)t;
    void *p = NULL;
    if (cudaMallocAsync(&p, n, s) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}
static void ca_free(alloc_if *a, void *p, cudaStream_t s) {
    (void)a;
    WH_CUDA_OR_DIE(cudaFreeAsync(p, s));
}
static void ca_reset(alloc_if *a) {
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    WH_CUDA_OR_DIE(cudaMemPoolTrimTo(a->mp, 0));
    uint64_t zero = 0;
    WH_CUDA_OR_DIE(cudaMemPoolSetAttribute(a->mp, cudaMemPoolAttrReservedMemHigh, &zero));
    WH_CUDA_OR_DIE(cudaMemPoolSetAttribute(a->mp, cudaMemPoolAttrUsedMemHigh, &zero));
}
static uint64_t ca_peak(alloc_if *a) {
    uint64_t v = 0;
    WH_CUDA_OR_DIE(cudaMemPoolGetAttribute(a->mp, cudaMemPoolAttrReservedMemHigh, &v));
    return v;
}

static void *wh_alloc_(alloc_if *a, size_t n, cudaStream_t s, const void *t) {
    return a->tagged && t ? wh_pool_alloc_tagged(a->pool, n, t, s) : wh_pool_alloc(a->pool, n, s);
}
static void wh_free_(alloc_if *a, void *p, cudaStream_t s) {
    if (wh_pool_free(a->pool, p, s) != WH_OK) {
        fprintf(stderr, "wh_pool_free: %s\n", wh_last_error());
        exit(1);
    }
}
static void wh_reset(alloc_if *a) {
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    if (a->pool && wh_pool_destroy(a->pool) != WH_OK) {
        fprintf(stderr, "wh_pool_destroy: %s\n", wh_last_error());
        exit(1);
    }
    wh_pool_config c = {.backend = WH_POOL_CUDA, .growth = a->growth, .secure = a->secure};
    if (wh_pool_create(&a->pool, &c) != WH_OK) {
        fprintf(stderr, "%s\n", wh_last_error());
        exit(1);
    }
}
static uint64_t wh_peak(alloc_if *a) {
    wh_pool_stats s;
    wh_pool_get_stats(a->pool, &s);
    return s.reserved_peak;
}

/* ---- output ------------------------------------------------------------------- */
static FILE *csv, *md;

static void row(const char *bench, const char *alloc, const char *param, uint64_t ops, double ns_per_op,
                uint64_t peak_reserved, uint64_t peak_live) {
    fprintf(csv, "%s,%s,%s,%llu,%.1f,%llu,%llu\n", bench, alloc, param, (unsigned long long)ops, ns_per_op,
            (unsigned long long)peak_reserved, (unsigned long long)peak_live);
    fflush(csv);
}

/* ---- latency by size -------------------------------------------------------------- */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double latency(alloc_if *a, size_t n, cudaStream_t s, int batches, int per_batch) {
    static const char site[] = "latency";
    double *t = malloc(sizeof(double) * (size_t)batches);
    for (int w = 0; w < 3; ++w) a->release(a, a->alloc(a, n, s, site), s); /* warm up */
    for (int b = 0; b < batches; ++b) {
        double t0 = now();
        for (int i = 0; i < per_batch; ++i) {
            void *p = a->alloc(a, n, s, site);
            if (!p) {
                fprintf(stderr, "%s: alloc %zu failed\n", a->name, n);
                exit(1);
            }
            a->release(a, p, s);
        }
        t[b] = (now() - t0) / per_batch;
    }
    qsort(t, (size_t)batches, sizeof *t, cmp_double);
    double med = t[batches / 2];
    free(t);
    return med * 1e9;
}

/* ---- RMM random_allocations (rmm_pattern.h) -------------------------------------- */

typedef struct {
    alloc_if *a;
    cudaStream_t s;
} rmm_ctx;
static void *rmm_alloc(void *c, size_t n) {
    rmm_ctx *x = c;
    return x->a->alloc(x->a, n, x->s, NULL);
}
static void rmm_release(void *c, void *p) {
    rmm_ctx *x = c;
    x->a->release(x->a, p, x->s);
}

static void random_allocations(alloc_if *a, uint64_t n, uint64_t max, cudaStream_t s, double *ns, uint64_t *peak_live,
                               uint64_t *ops_out) {
    rmm_ctx ctx = {a, s};
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    double t0 = now();
    uint64_t ops = rmm_random_allocations(n, max, rmm_alloc, rmm_release, &ctx, peak_live);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    *ns = (now() - t0) * 1e9 / (double)ops;
    *ops_out = ops;
}

/* ---- Futhark's allocation in a loop ------------------------------------------------ */
static const char *const sites[6] = {"a", "b", "c", "d", "e", "f"};

static double futhark_loop(alloc_if *a, int iters, cudaStream_t s, uint64_t *peak_live) {
    void *buf[6];
    double t0 = now();
    *peak_live = 0;
    for (int i = 0; i < iters; ++i) {
        uint64_t live = 0;
        for (int k = 0; k < 6; ++k) {
            size_t n = futhark_size(i, k);
            buf[k] = a->alloc(a, n, s, sites[k]);
            if (!buf[k]) {
                fprintf(stderr, "%s: futhark alloc failed\n", a->name);
                exit(1);
            }
            WH_CUDA_OR_DIE(cudaMemsetAsync(buf[k], k, 4096, s));
            live += n;
        }
        if (live > *peak_live) *peak_live = live;
        for (int k = 0; k < 6; ++k) a->release(a, buf[k], s);
    }
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    return (now() - t0) * 1e9 / (12.0 * iters);
}

/* ---- four streams at once ---------------------------------------------------------- */
typedef struct {
    alloc_if *a;
    int ops;
    unsigned t;
} job;

static void *streams_thread(void *arg) {
    job *j = arg;
    cudaStream_t s;
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *win[16] = {0};
    for (int i = 0; i < j->ops; ++i) {
        uint64_t x = wh_hash64(((uint64_t)j->t << 32) + (uint64_t)i);
        int k = (int)(x % 16);
        if (win[k]) {
            j->a->release(j->a, win[k], s);
            win[k] = NULL;
        } else
            win[k] = j->a->alloc(j->a, 256 + (x >> 8) % (1u << 20), s, NULL);
    }
    for (int k = 0; k < 16; ++k)
        if (win[k]) j->a->release(j->a, win[k], s);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    if (j->a->pool) wh_pool_forget_stream(j->a->pool, s);
    WH_CUDA_OR_DIE(cudaStreamDestroy(s));
    return NULL;
}

static double four_streams(alloc_if *a, int ops_per_thread) {
    pthread_t th[4];
    job jobs[4];
    double t0 = now();
    for (unsigned t = 0; t < 4; ++t) {
        jobs[t] = (job){a, ops_per_thread, t};
        if (pthread_create(&th[t], NULL, streams_thread, &jobs[t])) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    }
    for (int t = 0; t < 4; ++t) pthread_join(th[t], NULL);
    return (now() - t0) * 1e9 / (4.0 * ops_per_thread);
}

static void header(void) {
    struct cudaDeviceProp prop;
    int drv = 0, rt = 0;
    WH_CUDA_OR_DIE(cudaGetDeviceProperties(&prop, 0));
    WH_CUDA_OR_DIE(cudaDriverGetVersion(&drv));
    WH_CUDA_OR_DIE(cudaRuntimeGetVersion(&rt));
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    const char *commit = getenv("WH_COMMIT") ? getenv("WH_COMMIT") : "unknown";
    fprintf(csv, "# gpu=%s,driver=%d,runtime=%d,date=%s,commit=%s\n", prop.name, drv, rt, date, commit);
    fprintf(csv, "bench,allocator,param,ops,ns_per_op,peak_reserved_bytes,peak_live_bytes\n");
    fprintf(md, "# warpheap host pool benchmark\n\n%s, driver %d, runtime %d, %s, commit %s\n\n", prop.name, drv, rt,
            date, commit);
}

int main(int argc, char **argv) {
    const char *out = NULL;
    bool quick = false, no_base = false;
    uint64_t only_max = 0;
    wh_cli_opt cli[] = {
        WH_CLI_STRING("out", &out, "directory of pool_bench.csv and pool_bench.md (required)"),
        WH_CLI_FLAG("quick", &quick, "a shorter run: fewer latency pairs, random_allocations up to N = 1e4"),
        WH_CLI_UINT_D("random-max", &only_max, "only random_allocations, with this largest size in MiB",
                      "0: every test"),
        WH_CLI_FLAG("no-baselines", &no_base, "with --random-max: only warpheap's default growth"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Host pool benchmark against cudaMalloc and cudaMallocAsync.");
    if (!out || !wh_cuda_available()) {
        fprintf(stderr, "usage: wh_pool_bench --out=DIR (needs a GPU)\n");
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/pool_bench.csv", out);
    csv = fopen(path, "w");
    snprintf(path, sizeof path, "%s/pool_bench.md", out);
    md = fopen(path, "w");
    if (!csv || !md) {
        perror("open output");
        return 1;
    }
    header();

    cudaStream_t s;
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    alloc_if cm = {"cudaMalloc", cm_alloc, cm_free, cm_reset, cm_peak, NULL, NULL, false, WH_POOL_GROW_DEFAULT, false};
    alloc_if ca = {"cudaMallocAsync",    ca_alloc, ca_free, ca_reset, ca_peak, NULL, NULL, false,
                   WH_POOL_GROW_DEFAULT, false};
    /* warpheap: the default growth (the range, VMM, unless the driver lacks it) */
    alloc_if wp = {"warpheap", wh_alloc_, wh_free_, wh_reset, wh_peak, NULL, NULL, false, WH_POOL_GROW_DEFAULT, false};
    alloc_if wt = {"warpheap-tagged",    wh_alloc_, wh_free_, wh_reset, wh_peak, NULL, NULL, true,
                   WH_POOL_GROW_DEFAULT, false};
    alloc_if wa = {"warpheap-arenas",   wh_alloc_, wh_free_, wh_reset, wh_peak, NULL, NULL, false,
                   WH_POOL_GROW_ARENAS, false};
    alloc_if wat = {"warpheap-arenas-tagged", wh_alloc_, wh_free_, wh_reset, wh_peak, NULL, NULL, true,
                    WH_POOL_GROW_ARENAS,      false};
    WH_CUDA_OR_DIE(cudaDeviceGetDefaultMemPool(&ca.mp, 0));
    uint64_t keep = UINT64_MAX;
    WH_CUDA_OR_DIE(cudaMemPoolSetAttribute(ca.mp, cudaMemPoolAttrReleaseThreshold, &keep));
    wh_reset(&wp);
    wh_reset(&wt);
    wh_reset(&wa);
    wh_reset(&wat);
    alloc_if *all[6] = {&cm, &ca, &wp, &wt, &wa, &wat};
    wh_pool_stats s0; /* a fresh range counts as one arena, arenas as none */
    wh_pool_get_stats(wp.pool, &s0);
    fprintf(md, "Default growth on this machine: %s.\n\n",
            s0.arenas == 1 ? "VMM (one address range)" : "cudaMalloc arenas");

    /* latency by size */
    if (only_max) goto random;
    size_t sizes[] = {256, 4096, 65536, 1u << 20, 16u << 20, 256u << 20};
    fprintf(md, "## alloc+free pair, same stream (median of batch means, us)\n\n| size | cudaMalloc | cudaMallocAsync "
                "| warpheap | warpheap-tagged | warpheap-arenas | warpheap-arenas-tagged |\n| ---: | ---: | ---: | "
                "---: | ---: | ---: | ---: |\n");
    for (int i = 0; i < 6; ++i) {
        fprintf(md, "| %zu |", sizes[i]);
        for (int k = 0; k < 6; ++k) {
            bool slow = k == 0;
            double ns = latency(all[k], sizes[i], s, slow ? 7 : 31, slow ? 5 : (quick ? 200 : 2000));
            char param[32];
            snprintf(param, sizeof param, "%zu", sizes[i]);
            row("latency_pair", all[k]->name, param, 0, ns, 0, 0);
            fprintf(md, " %.3f |", ns / 1000.0);
        }
        fprintf(md, "\n");
    }

random:
    /* random_allocations */
    fprintf(
        md,
        "\n## RMM random_allocations (ns per operation, cold = first pass / warm = median of identical later passes; "
        "peak reserved / peak live over all)\n\n"
        "warpheap: the default growth, one address range grown with the driver's virtual-memory calls (VMM); "
        "warpheap-arenas: cudaMalloc arenas (config.growth = WH_POOL_GROW_ARENAS).\n\n"
        "| N | max | cudaMalloc | cudaMallocAsync cold / warm | warpheap cold / warm | speed-up vs async cold / warm | "
        "warpheap-arenas cold / warm | async reserved/live | warpheap reserved/live | arenas reserved/live |\n"
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    uint64_t ns_[] = {1000, 10000, 100000}, maxs[] = {1, 64, 1024};
    char drv[9][160];
    int nd = 0;
    alloc_if *ra[4] = {&cm, &ca, &wp, &wa};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            uint64_t n = ns_[i], mx = maxs[j] << 20;
            if ((quick && n > 10000) || (only_max && maxs[j] != only_max)) continue;
            double r[4][2] = {{0}};
            uint64_t pr[4] = {0}, pl = 0, ops = 0;
            for (int k = 0; k < 4; ++k) {
                if ((k == 0 && n > 1000) || (no_base && k != 2)) continue; /* cudaMalloc: ~0.1-1 ms a call */
                ra[k]->reset(ra[k]);
                /* warm: median of `reps` identical passes after the cold one (a
                 * pass of N = 1000 lasts ~1 ms: one pass is noise) */
                int reps = k == 0 ? 0 : n <= 1000 ? 5 : n <= 10000 ? 3 : 1;
                double w[5];
                random_allocations(ra[k], n, mx, s, &r[k][0], &pl, &ops);
                for (int pass = 0; pass < reps; ++pass) random_allocations(ra[k], n, mx, s, &w[pass], &pl, &ops);
                qsort(w, (size_t)reps, sizeof *w, cmp_double);
                r[k][1] = reps ? w[reps / 2] : 0;
                pr[k] = ra[k]->peak_reserved(ra[k]);
                if (k == 2 && nd < 9) { /* where warpheap's time went */
                    wh_pool_stats st;
                    wh_pool_get_stats(ra[k]->pool, &st);
                    double all_ops = (double)ops * (reps + 1);
                    snprintf(drv[nd++], sizeof drv[0], "| %llu | %llu MiB | %.2f | %.3f | %.3f | %.3f |\n",
                             (unsigned long long)n, (unsigned long long)maxs[j], st.driver_ns / 1e3 / all_ops,
                             st.arena_allocs / all_ops, st.arena_frees / all_ops, st.moves / all_ops);
                }
                for (int pass = 0; pass < (reps ? 2 : 1); ++pass) {
                    char param[64];
                    snprintf(param, sizeof param, "N=%llu max=%lluMiB %s", (unsigned long long)n,
                             (unsigned long long)maxs[j], pass ? "warm" : "cold");
                    row("random_allocations", ra[k]->name, param, ops, r[k][pass], pr[k], pl);
                }
                printf("random_allocations N=%llu max=%llu MiB %s: %.0f / %.0f ns per op, reserved/live %.3f\n",
                       (unsigned long long)n, (unsigned long long)maxs[j], ra[k]->name, r[k][0], r[k][1],
                       pr[k] ? (double)pr[k] / (double)pl : 0.0);
                fflush(stdout);
                ra[k]->reset(ra[k]); /* give the memory back before the next one */
            }
            char cmcol[32] = "-";
            if (r[0][0] > 0) snprintf(cmcol, sizeof cmcol, "%.0f", r[0][0]);
            fprintf(md,
                    "| %llu | %llu MiB | %s | %.0f / %.0f | %.0f / %.0f | %.1fx / %.1fx | %.0f / %.0f | %.3f | %.3f | "
                    "%.3f |\n",
                    (unsigned long long)n, (unsigned long long)maxs[j], cmcol, r[1][0], r[1][1], r[2][0], r[2][1],
                    r[1][0] / r[2][0], r[1][1] / r[2][1], r[3][0], r[3][1], (double)pr[1] / (double)pl,
                    (double)pr[2] / (double)pl, (double)pr[3] / (double)pl);
        }

    fprintf(md, "\nwarpheap's driver calls (default growth, all passes): time in them and pieces per operation\n\n"
                "| N | max | driver us/op | pieces created/op | released/op | moved/op |\n| ---: | ---: | ---: | ---: "
                "| ---: | ---: |\n");
    for (int i = 0; i < nd; ++i) fputs(drv[i], md);
    if (only_max) goto done;

    /* Futhark's loop */
    fprintf(md, "\n## Futhark loop: 6 allocations + memset + 6 frees per iteration (ns per operation)\n\n| allocator | "
                "ns/op | peak reserved / peak live |\n| --- | ---: | ---: |\n");
    for (int k = 0; k < 6; ++k) {
        all[k]->reset(all[k]);
        uint64_t pl;
        double ns = futhark_loop(all[k], k == 0 ? 50 : 2000, s, &pl);
        uint64_t pr = all[k]->peak_reserved(all[k]);
        row("futhark_loop", all[k]->name, "6 sites", k == 0 ? 600 : 24000, ns, pr, pl);
        fprintf(md, "| %s | %.0f | %.3f |\n", all[k]->name, ns, pr ? (double)pr / (double)pl : 1.0);
        all[k]->reset(all[k]);
    }

    /* four streams */
    fprintf(
        md,
        "\n## four host threads, one stream each (ns per operation, wall)\n\n| allocator | ns/op |\n| --- | ---: |\n");
    alloc_if *fs[4] = {&cm, &ca, &wp, &wa};
    for (int k = 0; k < 4; ++k) {
        fs[k]->reset(fs[k]);
        double ns = four_streams(fs[k], k == 0 ? 200 : (quick ? 5000 : 50000));
        row("four_streams", fs[k]->name, "4 threads", 0, ns, fs[k]->peak_reserved(fs[k]), 0);
        fprintf(md, "| %s | %.0f |\n", fs[k]->name, ns);
    }

    /* the hardened mode's cost (config.secure) against the default */
    alloc_if ws = wp;
    ws.name = "warpheap-secure";
    ws.secure = true;
    ws.pool = NULL;
    wh_reset(&ws);
    fprintf(md, "\n## hardened mode (config.secure) against the default\n\n"
                "| test | warpheap | warpheap-secure | secure / default |\n| --- | ---: | ---: | ---: |\n");
    size_t ssizes[] = {256, 65536, 1u << 20, 64u << 20};
    for (int i = 0; i < 4; ++i) {
        double ns[2];
        alloc_if *two[2] = {&wp, &ws};
        for (int k = 0; k < 2; ++k) {
            two[k]->reset(two[k]);
            ns[k] = latency(two[k], ssizes[i], s, 31, quick ? 200 : 2000);
            char param[32];
            snprintf(param, sizeof param, "%zu", ssizes[i]);
            row("secure_latency_pair", two[k]->name, param, 0, ns[k], 0, 0);
        }
        fprintf(md, "| alloc+free pair, %zu B (us) | %.3f | %.3f | %.2f |\n", ssizes[i], ns[0] / 1000.0, ns[1] / 1000.0,
                ns[1] / ns[0]);
    }
    {
        double ns[2], peak[2];
        alloc_if *two[2] = {&wp, &ws};
        for (int k = 0; k < 2; ++k) {
            uint64_t pl, ops = 0;
            two[k]->reset(two[k]);
            double cold;
            random_allocations(two[k], 10000, 64u << 20, s, &cold, &pl, &ops);
            random_allocations(two[k], 10000, 64u << 20, s, &ns[k], &pl, &ops);
            peak[k] = (double)two[k]->peak_reserved(two[k]) / (double)pl;
            row("secure_random_allocations", two[k]->name, "N=10000 max=64MiB warm", ops, ns[k],
                two[k]->peak_reserved(two[k]), pl);
        }
        fprintf(md, "| random_allocations N=10000, max 64 MiB, warm (ns/op) | %.0f | %.0f | %.2f |\n", ns[0], ns[1],
                ns[1] / ns[0]);
        fprintf(md, "| same, peak reserved / peak live | %.3f | %.3f | %.2f |\n", peak[0], peak[1], peak[1] / peak[0]);
        for (int k = 0; k < 2; ++k) {
            uint64_t pl;
            two[k]->reset(two[k]);
            ns[k] = futhark_loop(two[k], 2000, s, &pl);
        }
        fprintf(md, "| Futhark loop, untagged (ns/op) | %.0f | %.0f | %.2f |\n", ns[0], ns[1], ns[1] / ns[0]);
    }
    wh_pool_destroy(ws.pool);
done:
    for (int k = 2; k < 6; ++k) wh_pool_destroy(all[k]->pool);
    WH_CUDA_OR_DIE(cudaStreamDestroy(s));
    fclose(csv);
    fclose(md);
    printf("wrote %s/pool_bench.csv and .md\n", out);
    return 0;
}
