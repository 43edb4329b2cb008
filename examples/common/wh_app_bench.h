/* SPDX-License-Identifier: MIT */
/* Benchmark scaffolding shared by the object-allocator examples: the options
 * every app takes (--mode, --csv, --ppm, --cpu, --check; --max-seconds and
 * --heap-mb), declared once as pieces of each app's wh_cli table; the time
 * cap of a timed loop, the heap's use, peak and invariant
 * check, and the result lines (stdout and CSV) of the variants.  Kept apart from wh_app.h because only the apps that
 * time variants against each other need it; it holds file-scope state (one
 * program, one set of options).  Header-only C that also compiles as CUDA. */
#ifndef WH_APP_BENCH_H
#define WH_APP_BENCH_H

#include "wh_app.h"
#include "wh_cli.h"
#include "warpheap/soa.h"
#if defined(__CUDACC__)
#include <nvtx3/nvToolsExt.h>
#endif

/* --max-seconds=S (benchmarks): stop a timed loop after about S seconds; the
 * iterations done are reported.  A look at the clock waits for the device, and
 * a wait drains the launch queue: the next launches then each wait on the
 * host, which costs most an app of many short kernels per iteration (a
 * parallel_do is two).  So the loop looks about every APP_CAP_LOOK_S
 * seconds, at a multiple of `every`, with the number of iterations between
 * looks taken from the loop's rate so far. */
#define APP_CAP_LOOK_S 0.05
static __attribute__((unused)) double g_max_s = 0;
static __attribute__((unused)) long long g_done = -1;
static __attribute__((unused)) long long g_cap_next = 0; /* iteration of the next look */
/* --heap-mb=N: a budget of N MiB for all the device memory of a variant (its
 * heap plus the arrays it keeps beside it), for space-efficiency runs; 0: every
 * heap sized from the problem. */
static __attribute__((unused)) size_t g_malloc_heap = 0;
/* The heap left in the budget after `extra` bytes of arrays (0 when none is:
 * that variant then fails to create its heap, which is the answer). */
static __attribute__((unused)) size_t budget_heap(size_t extra, size_t dflt) {
    if (!g_malloc_heap) return dflt;
    return g_malloc_heap > extra + ((size_t)1 << 20) ? g_malloc_heap - extra : 0;
}
/* --window=LO:HI (profilers): iterations LO .. HI-1 of each timed loop run
 * inside an NVTX range named "wh_window", which `ncu --nvtx --nvtx-include
 * wh_window/` selects (bench/soa/breakdown.py); run HI + 1 iterations so that
 * the range closes before the loop's end. */
static __attribute__((unused)) long long g_win_lo = 0, g_win_hi = 0;
static inline void app_window(long long it) {
#if defined(__CUDACC__)
    if (g_win_hi <= g_win_lo) return;
    if (it == g_win_lo) nvtxRangePushA("wh_window");
    if (it == g_win_hi) nvtxRangePop();
#else
    (void)it;
#endif
}
/* Whether the timed loop that started at t0 has used up --max-seconds before
 * iteration `it` (then g_done = it). */
static inline int app_time_up(long long it, long long every, int dev, double t0) {
    if (it == 0) g_cap_next = 0; /* a new loop */
    if (g_max_s <= 0 || it == 0 || it % every || it < g_cap_next) return 0;
    app_sync(dev);
    double spent = app_now() - t0;
    if (spent > g_max_s) {
        g_done = it;
        return 1;
    }
    double n = spent > 0 ? APP_CAP_LOOK_S / (spent / (double)it) : 0; /* iterations in APP_CAP_LOOK_S */
    g_cap_next = it + (n > (double)every ? (long long)n : every);
    return 0;
}
/* A statement at the top of the timed loop (it uses `break`, so it stays a
 * macro): the profiling window, and the time cap. */
#define APP_TIME_CAP(it, every, dev, t0) \
    app_window(it);                      \
    if (app_time_up((long long)(it), (long long)(every), (dev), (t0))) break;

/* The placement key of cell (row-major, w wide): its n x n tile, so that
 * agents created in nearby cells share blocks (wh_soa_alloc_at); n = 0: no
 * key.  A chain of cells (traffic's streets) is a grid 1 wide: tiles are
 * runs of n cells. */
WH_INLINE WH_HOST_DEVICE uint32_t app_tile_key(uint32_t cell, uint32_t w, uint32_t n) {
    if (!n) return WH_SOA_NO_KEY;
    return cell / w / n * ((w + n - 1u) / n) + cell % w / n;
}

/* The options every app reads the same way: app_opts_new gives their
 * defaults, APP_CLI_COMMON and APP_CLI_LIMITS put them into the app's wh_cli
 * table, app_opts_done derives the rest after wh_cli_parse. */
typedef struct app_opts {
    const char *mode, *csv, *ppm, *window;
    int cpu, check;
    unsigned place;             /* --place (APP_CLI_PLACE); 0: no keys */
    double max_seconds;         /* --max-seconds; 0: no cap */
    unsigned long long heap_mb; /* --heap-mb; 0: heaps sized from the problem */
    int dev, all, pair;         /* derived: on the GPU; --mode=all; --mode=pair */
} app_opts;
static inline app_opts app_opts_new(void) {
    app_opts o;
    memset(&o, 0, sizeof o);
    o.mode = "all";
    return o;
}
/* --mode (MODES: the variants this app has, e.g. "all|warpheap|static|malloc"),
 * --csv, --ppm, --cpu, --check. */
#define APP_CLI_COMMON(o, modes)                                                                      \
    WH_CLI_STRING("mode", &(o)->mode, "the variants to run: " modes),                                 \
        WH_CLI_STRING("csv", &(o)->csv, "append the result rows to this CSV file"),                   \
        WH_CLI_STRING("ppm", &(o)->ppm, "write a picture of the final state to this PPM file"),       \
        WH_CLI_FLAG("cpu", &(o)->cpu, "run on the CPU backend even where a GPU is found"),            \
        WH_CLI_FLAG("check", &(o)->check, "compare the variants' results (exit 1 when they differ)"), \
        WH_CLI_STRING("window", &(o)->window, "LO:HI: iterations LO..HI-1 in an NVTX range (profilers)")
/* --place, of the cellular automata whose agents are created in cells. */
#define APP_CLI_PLACE(o, what) \
    WH_CLI_UINT_D("place", &(o)->place, "placement keys: the " what " share blocks (app_tile_key)", "0: no keys")
/* --max-seconds and --heap-mb, of the apps whose variants are timed and sized. */
#define APP_CLI_LIMITS(o)                                                                                      \
    WH_CLI_DOUBLE_D("max-seconds", &(o)->max_seconds,                                                          \
                    "stop each timed loop after about this many seconds; --check runs uncapped", "0: no cap"), \
        WH_CLI_UINT_D("heap-mb", &(o)->heap_mb, "MiB of device memory for each variant's heap and arrays",     \
                      "0: sized from the problem")
static inline void app_opts_done(app_opts *o) {
    if (o->window &&
        (sscanf(o->window, "%lld:%lld", &g_win_lo, &g_win_hi) != 2 || g_win_lo < 0 || g_win_hi <= g_win_lo)) {
        fprintf(stderr, "--window=%s: expected LO:HI with 0 <= LO < HI\n", o->window);
        exit(2);
    }
    o->dev = wh_cuda_available() && !o->cpu;
    o->all = !strcmp(o->mode, "all");
    o->pair = !strcmp(o->mode, "pair");
}
/* Whether --mode names this variant or asks for all of them. */
static inline int app_wants(const app_opts *o, const char *variant) { return o->all || !strcmp(o->mode, variant); }
/* --heap-mb in bytes; `dflt` when it is not given (or 0). */
static inline size_t app_heap_opt(const app_opts *o, size_t dflt) {
    return o->heap_mb > 0 ? (size_t)o->heap_mb << 20 : dflt;
}
/* --max-seconds; a check needs every iteration, so it runs uncapped. */
static inline void app_time_cap_opt(const app_opts *o) { g_max_s = o->check ? 0.0 : o->max_seconds; }
/* The results of up to three capped variants: seconds (-1: it did not run),
 * iterations done (fewer when the time cap stopped it) and peak heap bytes. */
typedef struct app_runs {
    double ts[3];
    long long done[3];
    size_t peak[3];
} app_runs;
static inline app_runs app_runs_new(long long iters) {
    app_runs r;
    for (int k = 0; k < 3; ++k) r.ts[k] = -1, r.done[k] = iters, r.peak[k] = 0;
    return r;
}
/* After a variant: the iterations it did, if the time cap stopped it early. */
static inline void app_take_done(long long *done) {
    if (g_done >= 0) *done = g_done, g_done = -1;
}
/* Record variant k's time (its peak was written by the run itself). */
static inline void app_ran(app_runs *r, int k, double t) {
    r->ts[k] = t;
    app_take_done(&r->done[k]);
}

/* ms per iteration of a run that did `done` iterations (none: the whole time). */
static inline double app_ms_per(double t, long long done) { return 1e3 * t / (done ? done : 1); }
/* "  NAME  T s  DONE UNITs  MS ms/UNIT  peak memory P MiB" (capped runs). */
static inline void app_print_run(const char *name, double t, long long done, const char *unit, size_t peak,
                                 const char *tail) {
    printf("  %-9s %10.3f s  %6lld %ss %10.4f ms/%s  peak memory %.2f MiB%s\n", name, t, done, unit,
           app_ms_per(t, done), unit, peak / 1048576.0, tail);
}
/* The rows of the variants that ran. */
static inline void app_print_runs(const app_runs *r, int k_n, const char *const *names, const char *unit) {
    for (int k = 0; k < k_n; ++k)
        if (r->ts[k] >= 0) app_print_run(names[k], r->ts[k], r->done[k], unit, r->peak[k], "");
}
/* CSV: app,variant,size,iterations,seconds,ms per iteration,peak bytes,env. */
static inline void app_csv_runs(const char *csv, const char *app, const app_runs *r, int k_n, const char *const *names,
                                unsigned long long size, const char *env) {
    FILE *f = fopen(csv, "a");
    if (!f) return;
    for (int k = 0; k < k_n; ++k)
        if (r->ts[k] >= 0)
            fprintf(f, "%s,%s,%llu,%lld,%.6f,%.6f,%zu,%s\n", app, names[k], size, r->done[k], r->ts[k],
                    app_ms_per(r->ts[k], r->done[k]), r->peak[k], env);
    fclose(f);
}

/* The apps without peak memory: stdout rows; done[k] = iterations variant k
 * did (fewer than asked when --max-seconds stopped it). */
static inline void app_print_times(int k_n, const char *const *names, const double *ts, const long long *done) {
    for (int k = 0; k < k_n; ++k)
        if (ts[k] >= 0)
            printf("  %-9s %10.3f s  %6lld iterations %10.4f ms/iteration\n", names[k], ts[k], done[k],
                   app_ms_per(ts[k], done[k]));
}
/* CSV: app,variant,size,iterations done,seconds,ms per iteration,env. */
static inline void app_csv_times(const char *csv, const char *app, int k_n, const char *const *names,
                                 unsigned long long size, const long long *done, const double *ts, const char *env) {
    FILE *f = fopen(csv, "a");
    if (!f) return;
    for (int k = 0; k < k_n; ++k)
        if (ts[k] >= 0)
            fprintf(f, "%s,%s,%llu,%lld,%.6f,%.6f,%s\n", app, names[k], size, done[k], ts[k],
                    app_ms_per(ts[k], done[k]), env);
    fclose(f);
}

/* Bytes of the heap's blocks in use (whole blocks: what a variant occupies). */
static inline size_t app_heap_used(const wh_soa *soa) {
    wh_soa_stats st;
    APP_TRY(wh_soa_stats_get(soa, &st));
    return (size_t)(st.blocks - st.free_blocks) * soa->block_bytes;
}
/* Raise *peak to the heap's use now.  Sampling is not the variant's work, so
 * its time goes to *paused, which the timed loop subtracts. */
static inline void app_sample_peak(const wh_soa *soa, size_t *peak, double *paused) {
    double p0 = app_now();
    size_t u = app_heap_used(soa);
    if (u > *peak) *peak = u;
    *paused += app_now() - p0;
}
/* After a run: a heap whose invariants broke fails the program (`who` names it). */
static inline void app_heap_check(const wh_soa *soa, const char *who) {
    uint64_t bad = 0;
    APP_TRY(wh_soa_check(soa, &bad));
    if (bad) {
        fprintf(stderr, "%s: %llu heap invariants broken\n", who, (unsigned long long)bad);
        exit(1);
    }
}
/* The "warpheap heap:" line; `failed`: with the count of failed allocations. */
static inline void app_print_heap(const wh_soa *soa, int failed) {
    wh_soa_stats st;
    APP_TRY(wh_soa_stats_get(soa, &st));
    printf("  warpheap heap: %u blocks of %u B, %llu used, fragmentation %.3f", soa->nblocks, soa->block_bytes,
           (unsigned long long)(st.blocks - st.free_blocks), st.fragmentation);
    if (failed) printf(", %llu failed allocations", (unsigned long long)st.counters[WH_SOA_CTR_FAILED_ALLOCS]);
    printf("\n");
}

#endif
