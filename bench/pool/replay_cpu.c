/* SPDX-License-Identifier: MIT */
/* RMM's random_allocations (the pattern of pool_bench.c, same sizes and
 * seeds, same passes: a cold one, then 5 / 3 / 1 warm ones for N = 1e3 /
 * 1e4 / 1e5) replayed on the CPU backend, for the default growth (the range,
 * VMM) and for arenas: peak reserved / peak live over all passes and the
 * driver calls the GPU would make (arenas: cudaMalloc / cudaFree; VMM:
 * pieces mapped / unmapped, at a 2 MiB granule) in the cold pass
 * and in the last warm one; and Futhark's loop (2000 iterations).
 * Placement does not depend on the backend, so the ratios are the GPU's;
 * times are not measured here.
 * --seeds=K: instead, the default growth on K traces of the same pattern
 * (seeds 0 .. K-1, 0 being the benchmark's), a cold pass and one warm pass
 * each: mean and worst peak reserved / peak live and modelled driver time.
 * Usage: wh_pool_replay [--md | --seeds=K]   (CSV on stdout, or a markdown table) */
#include "warpheap/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmm_pattern.h"
#include "wh_cli.h"

static void *replay_alloc(void *pool, size_t n) {
    void *p = wh_pool_alloc(pool, n, (wh_stream)(uintptr_t)1);
    if (!p) { fprintf(stderr, "replay: %s\n", wh_last_error()); exit(1); }
    return p;
}
static void replay_free(void *pool, void *p) {
    if (wh_pool_free(pool, p, (wh_stream)(uintptr_t)1) != WH_OK) { fprintf(stderr, "replay: %s\n", wh_last_error()); exit(1); }
}

/* Driver time a pass would spend, modelled from the medians of wh_vmm_cost
 * on a GPU: cuMemCreate ~9 us,
 * cuMemMap 0.7, cuMemSetAccess ~11 a call + ~23 a piece, cuMemUnmap ~21.5,
 * cuMemRelease 8 us + 0.32 us per MiB; a move is unmap + map + access
 * (growths count its access call). */
static double model_us(const wh_pool_stats *a, const wh_pool_stats *b) {
    double creates = (double)(b->arena_allocs - a->arena_allocs), frees = (double)(b->arena_frees - a->arena_frees);
    double grows = (double)(b->growths - a->growths), moves = (double)(b->moves - a->moves);
    double mib = (double)(b->bytes_released - a->bytes_released) / (1024.0 * 1024.0);
    return creates * (9.7 + 0.7 + 23.0) + grows * 11.0 + frees * (21.5 + 8.0) + mib * 0.32 + moves * (21.5 + 0.7 + 23.0);
}

/* --seeds=K: the default growth over K traces (see the top). */
static int over_seeds(int k) {
    const uint64_t ns[] = {1000, 10000, 100000}, maxs[] = {1, 64, 1024};
    printf("| N | max | peak reserved / peak live, mean / worst | modelled driver us/op warm, mean / worst | cold, mean |\n"
           "| ---: | ---: | ---: | ---: | ---: |\n");
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
            double r_sum = 0, r_max = 0, us_sum = 0, us_max = 0, cold_sum = 0;
            for (int sd = 0; sd < k; ++sd) {
                wh_pool_config c = {.backend = WH_POOL_CPU, .vmm_range = 64ull << 30, .vmm_granule = 2u << 20};
                wh_pool *p;
                if (wh_pool_create(&p, &c) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); return 1; }
                uint64_t peak = 0, pl = 0;
                wh_pool_stats z = {0}, a, b;
                uint64_t cold = rmm_random_allocations_seeded(ns[i], maxs[j] << 20, (uint64_t)sd, replay_alloc, replay_free,
                                                              p, &peak);
                wh_pool_get_stats(p, &a);
                uint64_t ops = rmm_random_allocations_seeded(ns[i], maxs[j] << 20, (uint64_t)sd, replay_alloc, replay_free,
                                                             p, &pl);
                wh_pool_get_stats(p, &b);
                if (wh_pool_check(p) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); return 1; }
                double r = (double)b.reserved_peak / (double)(pl > peak ? pl : peak), us = model_us(&a, &b) / (double)ops;
                r_sum += r;
                us_sum += us;
                r_max = r > r_max ? r : r_max;
                us_max = us > us_max ? us : us_max;
                cold_sum += model_us(&z, &a) / (double)cold;
                wh_pool_destroy(p);
            }
            printf("| %llu | %llu MiB | %.3f / %.3f | %.2f / %.2f | %.2f |\n", (unsigned long long)ns[i],
                   (unsigned long long)maxs[j], r_sum / k, r_max, us_sum / k, us_max, cold_sum / k);
            fflush(stdout);
        }
    return 0;
}

int main(int argc, char **argv) {
    bool md = false;
    int seeds = 0;
    wh_cli_opt cli[] = {
        WH_CLI_FLAG("md", &md, "a markdown table instead of CSV"),
        WH_CLI_INT_D("seeds", &seeds, "instead, the default growth on this many traces of the pattern", "none"),
        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "RMM's random_allocations and Futhark's loop replayed on the pool's CPU backend.");
    if (md && wh_cli_given(cli, "seeds")) {
        fprintf(stderr, "%s: --md and --seeds exclude each other\n", argv[0]);
        return WH_CLI_EXIT_USAGE;
    }
    if (wh_cli_given(cli, "seeds")) return over_seeds(seeds > 0 ? seeds : 1);
    const uint64_t ns[] = {1000, 10000, 100000}, maxs[] = {1, 64, 1024};
    if (md) printf("| growth | N | max | peak reserved / peak live | driver calls cold (alloc/free) | last warm pass | "
                   "warm: growths / moves / MiB released | warm: modelled driver us per op |\n"
                   "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    else printf("growth,N,max_mib,reserved_over_live,cold_allocs,cold_frees,warm_allocs,warm_frees,warm_growths,warm_moves,"
                "warm_mib_released,warm_model_us_per_op\n");
    for (int g = 0; g < 2; ++g)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                wh_pool_config c = {.backend = WH_POOL_CPU, .growth = g ? WH_POOL_GROW_ARENAS : WH_POOL_GROW_DEFAULT,
                                    .vmm_range = 64ull << 30, .vmm_granule = 2u << 20};
                wh_pool *p;
                if (wh_pool_create(&p, &c) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); return 1; }
                uint64_t pl = 0, peak = 0;
                int reps = i == 0 ? 5 : i == 1 ? 3 : 1;      /* as pool_bench.c */
                wh_pool_stats a, w0, b;
                uint64_t ops = rmm_random_allocations(ns[i], maxs[j] << 20, replay_alloc, replay_free, p, &peak);
                wh_pool_get_stats(p, &a);
                b = a;
                for (int pass = 0; pass < reps; ++pass) {
                    w0 = b;                                  /* calls of the last pass: b - w0 */
                    ops = rmm_random_allocations(ns[i], maxs[j] << 20, replay_alloc, replay_free, p, &pl);
                    wh_pool_get_stats(p, &b);
                    peak = pl > peak ? pl : peak;
                }
                if (wh_pool_check(p) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); return 1; }
                const char *name = g ? "arenas" : "default (vmm)";
                double r = (double)b.reserved_peak / (double)peak;
                unsigned long long ca = a.arena_allocs, cf = a.arena_frees, wa = b.arena_allocs - w0.arena_allocs,
                                   wf = b.arena_frees - w0.arena_frees, wg = b.growths - w0.growths,
                                   wm = b.moves - w0.moves, wr = (b.bytes_released - w0.bytes_released) >> 20;
                double us = g ? 0.0 : model_us(&w0, &b) / (double)ops;   /* arenas: cudaMalloc, not modelled */
                if (md) printf("| %s | %llu | %llu MiB | %.3f | %llu / %llu | %llu / %llu | %llu / %llu / %llu | %.2f |\n", name,
                               (unsigned long long)ns[i], (unsigned long long)maxs[j], r, ca, cf, wa, wf, wg, wm, wr, us);
                else printf("%s,%llu,%llu,%.4f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.3f\n", g ? "arenas" : "default-vmm",
                            (unsigned long long)ns[i], (unsigned long long)maxs[j], r, ca, cf, wa, wf, wg, wm, wr, us);
                wh_pool_destroy(p);
            }
    /* Futhark's loop, untagged and tagged by site */
    static const char sites[6] = {0};
    for (int g = 0; g < 2; ++g)
        for (int tagged = 0; tagged < 2; ++tagged) {
            wh_pool_config c = {.backend = WH_POOL_CPU, .growth = g ? WH_POOL_GROW_ARENAS : WH_POOL_GROW_DEFAULT,
                                .vmm_granule = 2u << 20};
            wh_pool *p;
            if (wh_pool_create(&p, &c) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); return 1; }
            uint64_t peak = 0;
            void *buf[6];
            for (int i = 0; i < 2000; ++i) {
                uint64_t live = 0;
                for (int k = 0; k < 6; ++k) {
                    buf[k] = tagged ? wh_pool_alloc_tagged(p, futhark_size(i, k), &sites[k], (wh_stream)(uintptr_t)1)
                                    : replay_alloc(p, futhark_size(i, k));
                    if (!buf[k]) { fprintf(stderr, "replay: %s\n", wh_last_error()); return 1; }
                    live += futhark_size(i, k);
                }
                peak = live > peak ? live : peak;
                for (int k = 0; k < 6; ++k) replay_free(p, buf[k]);
            }
            wh_pool_stats st;
            wh_pool_get_stats(p, &st);
            const char *name = g ? "arenas" : "default (vmm)";
            double r = (double)st.reserved_peak / (double)peak;
            if (md) printf("| %s%s | futhark loop | 2000 it. | %.3f | %llu / %llu | |\n", name, tagged ? ", tagged" : "", r,
                           (unsigned long long)st.arena_allocs, (unsigned long long)st.arena_frees);
            else printf("%s%s,futhark,0,%.4f,%llu,%llu,0,0\n", g ? "arenas" : "default-vmm", tagged ? "-tagged" : "", r,
                        (unsigned long long)st.arena_allocs, (unsigned long long)st.arena_frees);
            wh_pool_destroy(p);
        }
    return 0;
}
