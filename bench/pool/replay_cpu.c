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
 * --trace=FILE: instead, a recorded trace (torch_workload.py --trace: lines
 * "a ID BYTES STREAM" and "f ID STREAM") replayed on the default growth,
 * with every stream idle and with every stream busy (model_busy), under the
 * footprint policies, K traces of each (--seeds, default 1: the sizes as
 * recorded, then each less 0..511 random bytes): mean and worst peak
 * reserved / peak live, the driver's calls, their modelled time and the
 * pool's waits for the streams.
 * Usage: wh_pool_replay [--md] [--seeds=K] [--trace=FILE]   (CSV on stdout, or a markdown table) */
#include "warpheap/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rmm_pattern.h"
#include "wh_cli.h"

static void *replay_alloc(void *pool, size_t n) {
    void *p = wh_pool_alloc(pool, n, (wh_stream)(uintptr_t)1);
    if (!p) {
        fprintf(stderr, "replay: %s\n", wh_last_error());
        exit(1);
    }
    return p;
}
static void replay_free(void *pool, void *p) {
    if (wh_pool_free(pool, p, (wh_stream)(uintptr_t)1) != WH_OK) {
        fprintf(stderr, "replay: %s\n", wh_last_error());
        exit(1);
    }
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
    return creates * (9.7 + 0.7 + 23.0) + grows * 11.0 + frees * (21.5 + 8.0) + mib * 0.32 +
           moves * (21.5 + 0.7 + 23.0);
}

/* A recorded trace (torch_workload.py --trace), in memory: op 'a' or 'f',
 * the ID (dense from 0: the recorder numbers them), bytes, stream. */
typedef struct {
    char op;
    uint32_t stream;
    uint64_t id, bytes;
} trace_ev;

static trace_ev *trace_load(const char *path, uint64_t *n, uint64_t *ids) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return NULL;
    }
    trace_ev *ev = NULL;
    uint64_t cap = 0, line = 0;
    char op;
    unsigned long long id, bytes = 0, stream;
    *n = *ids = 0;
    while (fscanf(f, " %c %llu", &op, &id) == 2) {
        ++line;
        bool ok = op == 'a' ? fscanf(f, "%llu %llu", &bytes, &stream) == 2 && bytes > 0
                            : op == 'f' && fscanf(f, "%llu", &stream) == 1;
        if (!ok || stream > 65535) {
            fprintf(stderr, "replay: %s:%llu: not an 'a ID BYTES STREAM' or 'f ID STREAM' line\n", path,
                    (unsigned long long)line);
            free(ev);
            fclose(f);
            return NULL;
        }
        if (*n == cap) {
            trace_ev *t = realloc(ev, (cap = cap ? 2 * cap : 1 << 16) * sizeof *t);
            if (!t) {
                fprintf(stderr, "replay: no memory for %s\n", path);
                free(ev);
                fclose(f);
                return NULL;
            }
            ev = t;
        }
        ev[(*n)++] = (trace_ev){op, (uint32_t)stream, id, op == 'a' ? bytes : 0};
        *ids = id + 1 > *ids ? id + 1 : *ids;
    }
    bool end = feof(f);
    fclose(f);
    if (!end || *n == 0) {
        fprintf(stderr, "replay: %s:%llu: %s\n", path, (unsigned long long)line + 1,
                *n ? "not a trace line" : "no event");
        free(ev);
        return NULL;
    }
    return ev;
}

/* The busy model: work is queued on every stream at each event (the host
 * runs ahead of the GPU), and stays so until the pool waits.  A query at the
 * event's start says busy; the pool's wait sleeps until a query says idle,
 * which is from WAIT_US after the event's start, and the stream stays idle
 * for the rest of the event (nothing is queued before the next one).  Pool
 * calls take microseconds, well under WAIT_US. */
#define WAIT_US 300.0
typedef struct {
    struct timespec start;
    bool waited;
    uint64_t waits; /* events in which the pool waited */
} busy_model;

static double us_since(const struct timespec *t) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return 1e6 * (double)(now.tv_sec - t->tv_sec) + 1e-3 * (double)(now.tv_nsec - t->tv_nsec);
}

static bool model_busy(wh_stream s, void *user) {
    busy_model *m = user;
    (void)s;
    if (m->waited || us_since(&m->start) >= WAIT_US) {
        m->waits += !m->waited;
        m->waited = true;
        return false;
    }
    return true;
}

typedef struct {
    uint64_t live_peak, waits;
    wh_pool_stats st;
} trace_result;

/* Replay ev on the default growth.  seed 0: the sizes as recorded; else each
 * less a random 0..511 bytes (the recorder rounds to 512), a trace of the
 * same program that places differently.  busy: model_busy, so no free block
 * is READY unless the pool waits for the streams. */
static int trace_replay(const trace_ev *ev, uint64_t n, uint64_t ids, uint64_t seed, bool busy, wh_pool_footprint fp,
                        uint32_t slack_pm, trace_result *out) {
    busy_model m = {0};
    wh_pool_config c = {.backend = WH_POOL_CPU,
                        .vmm_range = 64ull << 30,
                        .vmm_granule = 2u << 20,
                        .stream_busy = busy ? model_busy : NULL,
                        .stream_busy_user = &m,
                        .stream_wait_ms = (uint32_t)(4 * WAIT_US / 1000) + 1,
                        .footprint = fp,
                        .vmm_slack_pm = slack_pm};
    wh_pool *p;
    void **ptr = calloc(ids, sizeof *ptr);
    uint64_t *bytes = calloc(ids, sizeof *bytes), live = 0, x = seed * 0x9E3779B97F4A7C15ull + 1;
    if (!ptr || !bytes || wh_pool_create(&p, &c) != WH_OK) {
        fprintf(stderr, "replay: %s\n", ptr && bytes ? wh_last_error() : "no memory");
        free(ptr), free(bytes);
        return 1;
    }
    int rc = 0;
    out->live_peak = 0;
    for (uint64_t i = 0; i < n && rc == 0; ++i) {
        const trace_ev *e = &ev[i];
        if (busy) clock_gettime(CLOCK_MONOTONIC, &m.start), m.waited = false;
        wh_stream s = (wh_stream)(uintptr_t)(e->stream + 1);
        if (e->op == 'a') {
            uint64_t b = e->bytes;
            if (seed) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                b = b > 512 ? b - x % 512 : b;
            }
            if (ptr[e->id]) {
                fprintf(stderr, "replay: event %llu: ID %llu allocated twice\n", (unsigned long long)i,
                        (unsigned long long)e->id);
                rc = 1;
                break;
            }
            if (!(ptr[e->id] = wh_pool_alloc(p, b, s))) {
                fprintf(stderr, "replay: event %llu: %s\n", (unsigned long long)i, wh_last_error());
                rc = 1;
                break;
            }
            bytes[e->id] = b;
            live += b;
            out->live_peak = live > out->live_peak ? live : out->live_peak;
        } else if (!ptr[e->id]) {
            fprintf(stderr, "replay: event %llu: ID %llu freed but not live\n", (unsigned long long)i,
                    (unsigned long long)e->id);
            rc = 1;
        } else if (wh_pool_free(p, ptr[e->id], s) != WH_OK) {
            fprintf(stderr, "replay: %s\n", wh_last_error());
            rc = 1;
        } else {
            ptr[e->id] = NULL;
            live -= bytes[e->id];
        }
    }
    if (rc == 0 && wh_pool_check(p) != WH_OK) {
        fprintf(stderr, "replay: %s\n", wh_last_error());
        rc = 1;
    }
    wh_pool_get_stats(p, &out->st);
    out->waits = m.waits;
    for (uint64_t i = 0; i < ids; ++i)
        if (ptr[i]) (void)wh_pool_free(p, ptr[i], (wh_stream)(uintptr_t)1);
    free(ptr);
    free(bytes);
    wh_pool_destroy(p);
    return rc;
}

/* --trace=FILE (see the top): each stream model and policy, K traces of it. */
static int over_trace(const char *path, int k, bool md) {
    static const struct {
        bool busy;
        wh_pool_footprint fp;
        uint32_t slack_pm;
        const char *name;
    } rows[] = {
        {false, WH_POOL_FOOTPRINT_TIGHT, 100, "idle (work done at once), default"},
        {true, WH_POOL_FOOTPRINT_LOOSE, 100, "busy, footprint loose"},
        {true, WH_POOL_FOOTPRINT_TIGHT, 100, "busy, default (tight, slack 100)"},
        {true, WH_POOL_FOOTPRINT_TIGHT, 30, "busy, slack 30 (the plug-in's)"},
    };
    uint64_t n, ids;
    trace_ev *ev = trace_load(path, &n, &ids);
    if (!ev) return 1;
    if (md)
        printf("| streams, policy | traces | peak live MiB | peak reserved / peak live, mean / worst | pieces mapped / "
               "released, mean | moves, mean | waits for the streams, mean | modelled driver ms, mean |\n"
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    else
        printf("streams,footprint,slack_pm,seed,events,live_peak,in_use_peak,reserved_peak,mapped,released,moves,waits,"
               "model_ms\n");
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; ++r) {
        double r_sum = 0, r_max = 0, maps = 0, rels = 0, moves = 0, waits = 0, ms = 0, live = 0;
        for (int sd = 0; sd < k; ++sd) {
            trace_result t;
            wh_pool_stats z = {0};
            if (trace_replay(ev, n, ids, (uint64_t)sd, rows[r].busy, rows[r].fp, rows[r].slack_pm, &t)) {
                free(ev);
                return 1;
            }
            double q = (double)t.st.reserved_peak / (double)t.live_peak, m = model_us(&z, &t.st) / 1000.0;
            r_sum += q, r_max = q > r_max ? q : r_max, live += (double)t.live_peak;
            maps += (double)t.st.arena_allocs, rels += (double)t.st.arena_frees, moves += (double)t.st.moves, ms += m;
            waits += (double)t.waits;
            if (!md)
                printf("%s,%s,%u,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.2f\n", rows[r].busy ? "busy" : "idle",
                       rows[r].fp == WH_POOL_FOOTPRINT_TIGHT ? "tight" : "loose", rows[r].slack_pm, sd,
                       (unsigned long long)n, (unsigned long long)t.live_peak, (unsigned long long)t.st.in_use_peak,
                       (unsigned long long)t.st.reserved_peak, (unsigned long long)t.st.arena_allocs,
                       (unsigned long long)t.st.arena_frees, (unsigned long long)t.st.moves,
                       (unsigned long long)t.waits, m);
        }
        if (md)
            printf("| %s | %d | %.0f | %.3f / %.3f | %.0f / %.0f | %.0f | %.0f | %.1f |\n", rows[r].name, k,
                   live / k / (1024.0 * 1024.0), r_sum / k, r_max, maps / k, rels / k, moves / k, waits / k, ms / k);
        fflush(stdout);
    }
    free(ev);
    return 0;
}

/* --seeds=K: the default growth over K traces (see the top). */
static int over_seeds(int k) {
    const uint64_t ns[] = {1000, 10000, 100000}, maxs[] = {1, 64, 1024};
    printf("| N | max | peak reserved / peak live, mean / worst | modelled driver us/op warm, mean / worst | cold, "
           "mean |\n"
           "| ---: | ---: | ---: | ---: | ---: |\n");
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
            double r_sum = 0, r_max = 0, us_sum = 0, us_max = 0, cold_sum = 0;
            for (int sd = 0; sd < k; ++sd) {
                wh_pool_config c = {.backend = WH_POOL_CPU, .vmm_range = 64ull << 30, .vmm_granule = 2u << 20};
                wh_pool *p;
                if (wh_pool_create(&p, &c) != WH_OK) {
                    fprintf(stderr, "%s\n", wh_last_error());
                    return 1;
                }
                uint64_t peak = 0, pl = 0;
                wh_pool_stats z = {0}, a, b;
                uint64_t cold = rmm_random_allocations_seeded(ns[i], maxs[j] << 20, (uint64_t)sd, replay_alloc,
                                                              replay_free, p, &peak);
                wh_pool_get_stats(p, &a);
                uint64_t ops = rmm_random_allocations_seeded(ns[i], maxs[j] << 20, (uint64_t)sd, replay_alloc,
                                                             replay_free, p, &pl);
                wh_pool_get_stats(p, &b);
                if (wh_pool_check(p) != WH_OK) {
                    fprintf(stderr, "%s\n", wh_last_error());
                    return 1;
                }
                double r = (double)b.reserved_peak / (double)(pl > peak ? pl : peak),
                       us = model_us(&a, &b) / (double)ops;
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
    const char *trace = NULL;
    wh_cli_opt cli[] = {
        WH_CLI_STRING("trace", &trace, "instead, replay this recorded trace (torch_workload.py --trace)"),
        WH_CLI_FLAG("md", &md, "a markdown table instead of CSV"),
        WH_CLI_INT_D("seeds", &seeds, "instead, the default growth on this many traces of the pattern", "none"),
        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "RMM's random_allocations and Futhark's loop replayed on the pool's CPU backend.");
    if (trace) return over_trace(trace, wh_cli_given(cli, "seeds") ? (seeds > 0 ? seeds : 1) : 1, md);
    if (md && wh_cli_given(cli, "seeds")) {
        fprintf(stderr, "%s: --md and --seeds exclude each other\n", argv[0]);
        return WH_CLI_EXIT_USAGE;
    }
    if (wh_cli_given(cli, "seeds")) return over_seeds(seeds > 0 ? seeds : 1);
    const uint64_t ns[] = {1000, 10000, 100000}, maxs[] = {1, 64, 1024};
    if (md)
        printf("| growth | N | max | peak reserved / peak live | driver calls cold (alloc/free) | last warm pass | "
               "warm: growths / moves / MiB released | warm: modelled driver us per op |\n"
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    else
        printf(
            "growth,N,max_mib,reserved_over_live,cold_allocs,cold_frees,warm_allocs,warm_frees,warm_growths,warm_moves,"
            "warm_mib_released,warm_model_us_per_op\n");
    for (int g = 0; g < 2; ++g)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                wh_pool_config c = {.backend = WH_POOL_CPU,
                                    .growth = g ? WH_POOL_GROW_ARENAS : WH_POOL_GROW_DEFAULT,
                                    .vmm_range = 64ull << 30,
                                    .vmm_granule = 2u << 20};
                wh_pool *p;
                if (wh_pool_create(&p, &c) != WH_OK) {
                    fprintf(stderr, "%s\n", wh_last_error());
                    return 1;
                }
                uint64_t pl = 0, peak = 0;
                int reps = i == 0 ? 5 : i == 1 ? 3 : 1; /* as pool_bench.c */
                wh_pool_stats a, w0, b;
                uint64_t ops = rmm_random_allocations(ns[i], maxs[j] << 20, replay_alloc, replay_free, p, &peak);
                wh_pool_get_stats(p, &a);
                b = a;
                for (int pass = 0; pass < reps; ++pass) {
                    w0 = b; /* calls of the last pass: b - w0 */
                    ops = rmm_random_allocations(ns[i], maxs[j] << 20, replay_alloc, replay_free, p, &pl);
                    wh_pool_get_stats(p, &b);
                    peak = pl > peak ? pl : peak;
                }
                if (wh_pool_check(p) != WH_OK) {
                    fprintf(stderr, "%s\n", wh_last_error());
                    return 1;
                }
                const char *name = g ? "arenas" : "default (vmm)";
                double r = (double)b.reserved_peak / (double)peak;
                unsigned long long ca = a.arena_allocs, cf = a.arena_frees, wa = b.arena_allocs - w0.arena_allocs,
                                   wf = b.arena_frees - w0.arena_frees, wg = b.growths - w0.growths,
                                   wm = b.moves - w0.moves, wr = (b.bytes_released - w0.bytes_released) >> 20;
                double us = g ? 0.0 : model_us(&w0, &b) / (double)ops; /* arenas: cudaMalloc, not modelled */
                if (md)
                    printf("| %s | %llu | %llu MiB | %.3f | %llu / %llu | %llu / %llu | %llu / %llu / %llu | %.2f |\n",
                           name, (unsigned long long)ns[i], (unsigned long long)maxs[j], r, ca, cf, wa, wf, wg, wm, wr,
                           us);
                else
                    printf("%s,%llu,%llu,%.4f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.3f\n", g ? "arenas" : "default-vmm",
                           (unsigned long long)ns[i], (unsigned long long)maxs[j], r, ca, cf, wa, wf, wg, wm, wr, us);
                wh_pool_destroy(p);
            }
    /* Futhark's loop, untagged and tagged by site */
    static const char sites[6] = {0};
    for (int g = 0; g < 2; ++g)
        for (int tagged = 0; tagged < 2; ++tagged) {
            wh_pool_config c = {.backend = WH_POOL_CPU,
                                .growth = g ? WH_POOL_GROW_ARENAS : WH_POOL_GROW_DEFAULT,
                                .vmm_granule = 2u << 20};
            wh_pool *p;
            if (wh_pool_create(&p, &c) != WH_OK) {
                fprintf(stderr, "%s\n", wh_last_error());
                return 1;
            }
            uint64_t peak = 0;
            void *buf[6];
            for (int i = 0; i < 2000; ++i) {
                uint64_t live = 0;
                for (int k = 0; k < 6; ++k) {
                    buf[k] = tagged ? wh_pool_alloc_tagged(p, futhark_size(i, k), &sites[k], (wh_stream)(uintptr_t)1)
                                    : replay_alloc(p, futhark_size(i, k));
                    if (!buf[k]) {
                        fprintf(stderr, "replay: %s\n", wh_last_error());
                        return 1;
                    }
                    live += futhark_size(i, k);
                }
                peak = live > peak ? live : peak;
                for (int k = 0; k < 6; ++k) replay_free(p, buf[k]);
            }
            wh_pool_stats st;
            wh_pool_get_stats(p, &st);
            const char *name = g ? "arenas" : "default (vmm)";
            double r = (double)st.reserved_peak / (double)peak;
            if (md)
                printf("| %s%s | futhark loop | 2000 it. | %.3f | %llu / %llu | |\n", name, tagged ? ", tagged" : "", r,
                       (unsigned long long)st.arena_allocs, (unsigned long long)st.arena_frees);
            else
                printf("%s%s,futhark,0,%.4f,%llu,%llu,0,0\n", g ? "arenas" : "default-vmm", tagged ? "-tagged" : "", r,
                       (unsigned long long)st.arena_allocs, (unsigned long long)st.arena_frees);
            wh_pool_destroy(p);
        }
    return 0;
}
