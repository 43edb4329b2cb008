/* SPDX-License-Identifier: MIT */
/* Object allocator benchmarks (DynaSOAr, ECOOP 2019, section 6):
 *   pdo  -- parallel_do time for a fixed set of objects as the heap grows
 *           (Fig. 14b): the enumeration must not scale with the heap.
 *   ls   -- Linux Scalability (6.4, Fig. 14a): 16,384 threads allocate k
 *           64-byte objects each, a second kernel frees them all; checks that
 *           the heap is empty again.  (The original DynaSOAr does not finish
 *           it on a Hopper GPU.)
 * CSV rows go to --csv=FILE.  One C source; compiled as CUDA when available.
 *
 *   wh_soa_bench [--objects=1000000] [--heaps=64,128,...] [--reps=20] [--ls-k=1,4,16,64] [--cpu] [--csv=FILE]
 */
#include "warpheap/soa.h"
#include "wh_app.h"
#include "wh_cli.h"

#define SMALL_FIELDS(F) F(float, x) F(float, y) F(uint32_t, n) F(uint32_t, pad)
WH_SOA_CLASS(Small, 0, SMALL_FIELDS)
#define OBJ64_FIELDS(F) F(uint64_t, w[8])
WH_SOA_CLASS(Obj64, 1, OBJ64_FIELDS)

typedef struct b_ctx {
    wh_soa soa;
    uint64_t *ptrs;
    uint32_t k;
} b_ctx;

WH_INLINE WH_HOST_DEVICE void small_init(const wh_soa *s, Small o, uint64_t i, const b_ctx *c) {
    (void)s;
    (void)c;
    WH_GET(Small, o, x) = (float)i;
    WH_GET(Small, o, y) = 0.0f;
    WH_GET(Small, o, n) = 0;
}
WH_INLINE WH_HOST_DEVICE void small_touch(const wh_soa *s, Small o, const b_ctx *c) {
    (void)s;
    (void)c;
    WH_GET(Small, o, y) += WH_GET(Small, o, x);
    WH_GET(Small, o, n) += 1u;
}
WH_SOA_PARALLEL_NEW(Small, small_init, b_ctx)
WH_SOA_PARALLEL_DO(Small, small_touch, b_ctx)

WH_INLINE WH_HOST_DEVICE void ls_alloc(uint64_t i, const b_ctx *c) {
    for (uint32_t j = 0; j < c->k; ++j) {
        uint64_t p = wh_soa_alloc(&c->soa, Obj64_TYPE);
        if (p) WH_GET(Obj64, Obj64_from(p), w)[0] = i;
        c->ptrs[i * c->k + j] = p;
    }
}
WH_INLINE WH_HOST_DEVICE void ls_free(uint64_t i, const b_ctx *c) {
    for (uint32_t j = 0; j < c->k; ++j) wh_soa_free(&c->soa, c->ptrs[i * c->k + j]);
}
WH_SOA_PARALLEL_FOR(ls_alloc_all, b_ctx, ls_alloc)
WH_SOA_PARALLEL_FOR(ls_free_all, b_ctx, ls_free)

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench_pdo(int dev, uint64_t objects, const char *heaps, int reps, FILE *csv, const char *env) {
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Small), WH_SOA_TYPE(Obj64)};
    printf("parallel_do over %llu objects as the heap grows (median of %d)\n", (unsigned long long)objects, reps);
    for (const char *p = heaps; *p;) {
        long long mb = atoll(p);
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
        wh_soa_config cfg = {(size_t)mb << 20, types, 2, dev != 0, 0, NULL, false};
        b_ctx c;
        memset(&c, 0, sizeof c);
        if (wh_soa_create(&c.soa, &cfg) != WH_OK) {
            printf("  %lld MiB: %s\n", mb, wh_last_error());
            continue;
        }
        wh_status st = Small_parallel_new_small_init(&c.soa, objects, c);
        if (st != WH_OK) {
            printf("  %lld MiB: %s\n", mb, wh_last_error());
            wh_soa_destroy(&c.soa);
            continue;
        }
        APP_TRY(Small_parallel_do_small_touch(&c.soa, c)); /* warm-up */
        double *t = (double *)malloc((size_t)reps * sizeof(double));
        for (int r = 0; r < reps; ++r) {
            app_sync(dev);
            double t0 = app_now();
            APP_TRY(Small_parallel_do_small_touch(&c.soa, c));
            app_sync(dev);
            t[r] = app_now() - t0;
        }
        qsort(t, (size_t)reps, sizeof(double), cmp_d);
        printf("  heap %6lld MiB  %9u blocks  parallel_do %8.4f ms\n", mb, c.soa.nblocks, 1e3 * t[reps / 2]);
        if (csv)
            fprintf(csv, "pdo,%lld,%u,%llu,%.6f,%s\n", mb, c.soa.nblocks, (unsigned long long)objects,
                    1e3 * t[reps / 2], env);
        free(t);
        APP_DESTROY(&c.soa);
    }
}

static int bench_ls(int dev, const char *ks, FILE *csv, const char *env) {
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Obj64)};
    /* a heap for 16384 * 64 objects of 64 B, plus bitmaps */
    types[0].id = 0;
    uint32_t threads = 16384;
    int rc = 0;
    printf("linux scalability: %u threads, 64-byte objects\n", threads);
    for (const char *p = ks; *p;) {
        uint32_t k = (uint32_t)atoi(p);
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
        b_ctx c;
        memset(&c, 0, sizeof c);
        wh_soa_config cfg = {
            (size_t)threads * k * 64u * 5u / 4u + ((size_t)4 << 20), types, 1, dev != 0, 0, NULL, false};
        APP_TRY(wh_soa_create(&c.soa, &cfg));
        c.k = k;
        c.ptrs = (uint64_t *)app_alloc((size_t)threads * k * 8, dev);
        app_sync(dev);
        double t0 = app_now();
        APP_TRY(ls_alloc_all(dev, threads, c));
        app_sync(dev);
        double t1 = app_now();
        APP_TRY(ls_free_all(dev, threads, c));
        app_sync(dev);
        double t2 = app_now();
        wh_soa_stats st;
        uint64_t bad = 1;
        APP_TRY(wh_soa_stats_get(&c.soa, &st));
        APP_TRY(wh_soa_check(&c.soa, &bad));
        int ok = st.free_blocks == st.blocks && bad == 0 && st.counters[WH_SOA_CTR_RETRY_LIMIT] == 0;
        printf("  k=%4u  alloc %8.3f ms  free %8.3f ms  (%.2f ns/alloc)  failed %llu  heap empty again: %s\n", k,
               1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e9 * (t1 - t0) / ((double)threads * k),
               (unsigned long long)st.counters[WH_SOA_CTR_FAILED_ALLOCS], ok ? "yes" : "NO");
        if (csv)
            fprintf(csv, "ls,%u,%u,%.6f,%.6f,%llu,%d,%s\n", threads, k, 1e3 * (t1 - t0), 1e3 * (t2 - t1),
                    (unsigned long long)st.counters[WH_SOA_CTR_FAILED_ALLOCS], ok, env);
        rc |= !ok;
        app_free(c.ptrs, dev);
        APP_DESTROY(&c.soa);
    }
    return rc;
}

int main(int argc, char **argv) {
    int cpu = 0, reps = 20;
    uint64_t objects = 0;
    const char *heaps = NULL, *ks = NULL, *csvp = NULL;
    wh_cli_opt cli[] = {
        WH_CLI_UINT_D("objects", &objects, "objects of the parallel_do test", "1000000 on the GPU, 20000 on the CPU"),
        WH_CLI_STRING_D("heaps", &heaps, "heap sizes of the parallel_do test in MiB, comma-separated",
                        "64,128,...,16384 on the GPU, 8,16,32,64 on the CPU"),
        WH_CLI_INT("reps", &reps, "timed runs of each parallel_do"),
        WH_CLI_STRING_D("ls-k", &ks, "objects per thread of Linux scalability, comma-separated",
                        "1,4,16,64 on the GPU, 1,4 on the CPU"),
        WH_CLI_FLAG("cpu", &cpu, "run on the CPU backend even where a GPU is found"),
        WH_CLI_STRING("csv", &csvp, "append the result rows to this CSV file"),
        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Object allocator benchmarks: parallel_do as the heap grows, and Linux scalability.");
    int dev = wh_cuda_available() && !cpu;
    if (!wh_cli_given(cli, "objects")) objects = dev ? 1000000 : 20000;
    if (!heaps) heaps = dev ? "64,128,256,512,1024,2048,4096,8192,16384" : "8,16,32,64";
    if (!ks) ks = dev ? "1,4,16,64" : "1,4";
    char env[512];
    app_env(env, sizeof env, dev);
    printf("wh_soa_bench: %s\n", env);
    FILE *csv = csvp ? fopen(csvp, "a") : NULL;
    if (reps < 1) reps = 1;
    bench_pdo(dev, objects, heaps, reps, csv, env);
    int rc = bench_ls(dev, ks, csv, env);
    if (csv) fclose(csv);
    return rc;
}
