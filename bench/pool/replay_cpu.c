/* RMM's random_allocations (the pattern of pool_bench.c, same sizes and
 * seeds) replayed on the CPU backend, for each way of growing: peak reserved
 * / peak live and the driver calls the GPU would make (arenas: cudaMalloc /
 * cudaFree; VMM: pieces mapped / unmapped, at the H100's 2 MiB granule),
 * in a cold and an identical warm pass.  Placement does not depend on the
 * backend, so the ratios are the GPU's; times are not measured here.
 * Usage: wh_pool_replay [--md]   (CSV on stdout, or a markdown table) */
#include "warpheap/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { void *p; size_t n; } blk;

static void pass(wh_pool *pool, uint64_t n, uint64_t max, uint64_t *peak_live) {
    const uint64_t cap = 16ull << 30;
    blk *live = malloc(sizeof(blk) * n);
    uint64_t nlive = 0, allocs = 0, bytes = 0;
    wh_stream s = (wh_stream)(uintptr_t)1;
    for (uint64_t i = 0; i < 2 * n; ++i) {
        uint64_t x = wh_hash64(i * 0x9E37 + max), size = 1 + x % max;
        bool do_alloc = nlive == 0 || ((x >> 33) % 100 < 73 && allocs < n && bytes + size < cap);
        void *p = do_alloc ? wh_pool_alloc(pool, size, s) : NULL;
        if (do_alloc && !p) { fprintf(stderr, "replay: %s\n", wh_last_error()); exit(1); }
        if (do_alloc) {
            live[nlive++] = (blk){p, size};
            allocs++;
            bytes += size;
            if (bytes > *peak_live) *peak_live = bytes;
        } else if (nlive) {
            uint64_t k = wh_hash64(x) % nlive;
            if (wh_pool_free(pool, live[k].p, s) != WH_OK) { fprintf(stderr, "replay: %s\n", wh_last_error()); exit(1); }
            bytes -= live[k].n;
            live[k] = live[--nlive];
        }
    }
    while (nlive) wh_pool_free(pool, live[--nlive].p, s);
    free(live);
}

int main(int argc, char **argv) {
    bool md = argc > 1 && !strcmp(argv[1], "--md");
    const uint64_t ns[] = {1000, 10000, 100000}, maxs[] = {1, 64, 1024};
    if (md) printf("| growth | N | max | peak reserved / peak live | driver calls cold (alloc/free) | warm |\n"
                   "| --- | ---: | ---: | ---: | ---: | ---: |\n");
    else printf("growth,N,max_mib,reserved_over_live,cold_allocs,cold_frees,warm_allocs,warm_frees\n");
    for (int g = 0; g < 2; ++g)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                wh_pool_config c = {.backend = WH_POOL_CPU, .growth = g ? WH_POOL_GROW_VMM : WH_POOL_GROW_ARENAS,
                                    .vmm_range = 64ull << 30, .vmm_granule = 2u << 20};
                wh_pool *p;
                if (wh_pool_create(&p, &c) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); return 1; }
                uint64_t pl = 0;
                wh_pool_stats a, b;
                pass(p, ns[i], maxs[j] << 20, &pl);
                wh_pool_get_stats(p, &a);
                pass(p, ns[i], maxs[j] << 20, &pl);
                wh_pool_get_stats(p, &b);
                if (wh_pool_check(p) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); return 1; }
                const char *name = g ? "vmm" : "arenas";
                double r = (double)b.reserved_peak / (double)pl;
                unsigned long long ca = a.arena_allocs, cf = a.arena_frees, wa = b.arena_allocs - a.arena_allocs,
                                   wf = b.arena_frees - a.arena_frees;
                if (md) printf("| %s | %llu | %llu MiB | %.3f | %llu / %llu | %llu / %llu |\n", name,
                               (unsigned long long)ns[i], (unsigned long long)maxs[j], r, ca, cf, wa, wf);
                else printf("%s,%llu,%llu,%.4f,%llu,%llu,%llu,%llu\n", name, (unsigned long long)ns[i],
                            (unsigned long long)maxs[j], r, ca, cf, wa, wf);
                wh_pool_destroy(p);
            }
    return 0;
}
