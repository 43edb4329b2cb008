/* SPDX-License-Identifier: MIT */
/* Block core free indices compared on the same traces (CPU, one thread):
 * TLSF (core/tlsf.h) against the seed's max-heap (core/maxheap.h).
 *
 * The core never touches the memory it manages, so each trace runs in one
 * synthetic 1 TiB arena: footprint = highest end address ever handed out,
 * and footprint / peak live bytes is the fragmentation the index causes
 * (1.0 = perfect packing).  Time per operation is wall time / operations,
 * best of 5 runs.  Traces:
 *   random-N-M : RMM random_allocations (alloc with p = 0.73 else free a
 *                random live block; sizes uniform in [1, M]; 2N steps, at
 *                most N allocations, live bytes capped at 16 GiB)
 *   futhark-L  : L iterations of a loop body that allocates 6 buffers of
 *                sizes drifting slowly, frees them at the end of the body
 *   mixed      : 1e6 ops, 60% allocs of power-law sizes (64 B .. 4 MiB), live <= 20000
 * Usage: wh_blocks_bench [--csv=FILE] [--md=FILE]
 */
#include "warpheap/core/blocks.h"
#include "wh_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    uint32_t id;
    uint64_t size;
} live_t;
typedef struct {
    double ns_per_op, frag;
    uint64_t ops, fails, peak_live, footprint;
} result_t;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    wh_blocks *c;
    live_t *live;
    uint32_t nlive;
    uint64_t live_bytes, peak_live, footprint, ops, fails;
} run_t;

static void do_alloc(run_t *r, uint64_t size) {
    uint32_t b = wh_blocks_alloc(r->c, size, 0);
    r->ops++;
    if (b == WH_BLOCK_NONE) {
        r->fails++;
        return;
    }
    const wh_block *d = &wh_blocks_desc(r->c)[b];
    if (d->addr + d->size > r->footprint) r->footprint = d->addr + d->size;
    r->live[r->nlive++] = (live_t){b, d->size};
    r->live_bytes += d->size;
    if (r->live_bytes > r->peak_live) r->peak_live = r->live_bytes;
}
static void do_free(run_t *r, uint32_t k) {
    wh_blocks_free(r->c, r->live[k].id, 0);
    r->ops++;
    r->live_bytes -= r->live[k].size;
    r->live[k] = r->live[--r->nlive];
}

static void trace_random(run_t *r, uint64_t n, uint64_t max) {
    uint64_t allocs = 0;
    for (uint64_t i = 0; i < 2 * n; ++i) {
        uint64_t x = wh_hash64(i * 7919 + max), size = 1 + x % max;
        bool alloc = r->nlive == 0 || ((x >> 32) % 100 < 73 && allocs < n && r->live_bytes + size < (16ull << 30));
        if (alloc) {
            do_alloc(r, size);
            allocs++;
        } else if (r->nlive)
            do_free(r, (uint32_t)(wh_hash64(x) % r->nlive));
    }
}
static void trace_futhark(run_t *r, uint64_t iters) {
    for (uint64_t i = 0; i < iters; ++i) {
        for (uint64_t k = 0; k < 6; ++k) do_alloc(r, (1ull << (12 + 2 * k)) + ((i / 64) % 16) * 4096 * (k + 1));
        while (r->nlive) do_free(r, r->nlive - 1);
    }
}
static void trace_mixed(run_t *r) {
    for (uint64_t i = 0; i < 1000000; ++i) {
        uint64_t x = wh_hash64(i ^ 0xABCDEF);
        if ((x % 100 < 60 && r->nlive < 20000) || r->nlive == 0)
            do_alloc(r, 64ull << ((x >> 8) % 17) >> ((x >> 16) % 3));
        else
            do_free(r, (uint32_t)((x >> 24) % r->nlive));
    }
}

static result_t run(wh_blocks_kind kind, const char *trace, uint64_t n, uint64_t max) {
    const uint32_t cap = 1u << 20;
    uint64_t bytes = wh_blocks_bytes(kind, 1, cap);
    void *mem = aligned_alloc(64, (bytes + 63) & ~63ull);
    live_t *live = malloc(sizeof(live_t) * cap);
    result_t best = {0};
    for (int rep = 0; rep < 5; ++rep) {
        run_t r = {.c = wh_blocks_init(mem, bytes, kind, 1, cap, 256), .live = live};
        wh_blocks_add_arena(r.c, 1ull << 20, 1ull << 40, 0);
        double t0 = now();
        if (!strcmp(trace, "random"))
            trace_random(&r, n, max);
        else if (!strcmp(trace, "futhark"))
            trace_futhark(&r, n);
        else
            trace_mixed(&r);
        double dt = now() - t0;
        result_t res = {1e9 * dt / (double)r.ops,
                        (double)(r.footprint - (1ull << 20)) / (double)r.peak_live,
                        r.ops,
                        r.fails,
                        r.peak_live,
                        r.footprint - (1ull << 20)};
        if (rep == 0 || res.ns_per_op < best.ns_per_op) best = res;
    }
    free(live);
    free(mem);
    return best;
}

int main(int argc, char **argv) {
    const char *csvp = NULL, *mdp = NULL;
    wh_cli_opt cli[] = {WH_CLI_STRING("csv", &csvp, "write the results to this CSV file"),
                        WH_CLI_STRING_D("md", &mdp, "write the markdown table to this file", "stdout"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "The block core's free indices, TLSF against the max-heap, on the same traces.");
    FILE *csv = csvp ? fopen(csvp, "w") : NULL, *md = mdp ? fopen(mdp, "w") : stdout;
    if ((csvp && !csv) || !md) {
        perror("open");
        return 1;
    }
    if (csv) fprintf(csv, "trace,index,ops,ns_per_op,footprint_over_peak_live,peak_live_bytes,fails\n");
    fprintf(md, "| trace | TLSF ns/op | max-heap ns/op | TLSF footprint/peak live | max-heap footprint/peak live |\n");
    fprintf(md, "| --- | ---: | ---: | ---: | ---: |\n");
    struct {
        const char *t;
        uint64_t n, max;
        char name[32];
    } traces[16];
    int nt = 0;
    uint64_t ns[] = {1000, 10000, 100000}, ms[] = {1, 64, 1024};
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            traces[nt].t = "random";
            traces[nt].n = ns[a];
            traces[nt].max = ms[b] << 20;
            snprintf(traces[nt].name, sizeof traces[nt].name, "random-%llu-%lluMiB", (unsigned long long)ns[a],
                     (unsigned long long)ms[b]);
            nt++;
        }
    traces[nt].t = "futhark";
    traces[nt].n = 20000;
    snprintf(traces[nt++].name, 32, "futhark-20000");
    traces[nt].t = "mixed";
    snprintf(traces[nt++].name, 32, "mixed-1e6");
    for (int i = 0; i < nt; ++i) {
        result_t t = run(WH_BLOCKS_TLSF, traces[i].t, traces[i].n, traces[i].max);
        result_t h = run(WH_BLOCKS_MAXHEAP, traces[i].t, traces[i].n, traces[i].max);
        if (csv) {
            fprintf(csv, "%s,tlsf,%llu,%.1f,%.4f,%llu,%llu\n", traces[i].name, (unsigned long long)t.ops, t.ns_per_op,
                    t.frag, (unsigned long long)t.peak_live, (unsigned long long)t.fails);
            fprintf(csv, "%s,maxheap,%llu,%.1f,%.4f,%llu,%llu\n", traces[i].name, (unsigned long long)h.ops,
                    h.ns_per_op, h.frag, (unsigned long long)h.peak_live, (unsigned long long)h.fails);
        }
        fprintf(md, "| %s | %.1f | %.1f | %.3f | %.3f |\n", traces[i].name, t.ns_per_op, h.ns_per_op, t.frag, h.frag);
    }
    if (csv) fclose(csv);
    if (md != stdout) fclose(md);
    return 0;
}
