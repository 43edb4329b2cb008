/* SPDX-License-Identifier: MIT */
/* The [DS] benchmark of register-efficient-gpu-allocators.txt section 7,
 * Tables 3 and 4: k-d tree build time per allocator on generated scenes (and
 * OBJ files), with the allocation figures of the build and a check of every
 * tree.  Table 3: heap = 200 x the root's list (BUMP fits); Table 4: heap =
 * 20 x the root's list, so freed memory must be reused.  CUDA's device malloc
 * gets the same bytes through cudaLimitMallocHeapSize, which can only be set
 * before its first use in a context: each phase starts with cudaDeviceReset.
 *
 *   wh_kdtree_bench [--scenes=soup,torus,clustered] [--sizes=20000,...]
 *                   [--obj=FILE] [--reps=5] [--budget=170] [--out=DIR]
 *                   [--phases=200,20] [--tag=kdtree]
 * --phases: heap sizes in multiples of the root's list (200: all kinds incl.
 * BUMP; any other: the kinds that free).  --tag: output file names.
 * --solo: a warm-up build slower than this many ms is the only one timed.
 * --all-reps=1: every build --reps times (else slow builds get fewer).  A
 * row's fails count every build's, and the log line says how many failed.
 * --from-csv=FILE: only rewrite the markdown of a CSV (no GPU needed).
 * --retries=N: retry a failed list allocation N times (not in the results).
 * --free-batch=N: parents' lists freed per warp-wide call (default 1: each at
 * once; an ablation).  --profile: count cycles in allocation, free, node and queue wait
 * (printed per row).  --kinds=BUMP,DEFAULT,...: only these allocators.
 * --ways=N: slab and default heaps with N ways per class (0: by heap size).
 */
#include "kd_build.h"
#include "warpheap/cuda_check.h"
#include "wh_cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KD_MAX_REPS 9

/* A warm-up build slower than this is reported alone (--solo=ms). */
static double g_solo_ms = 10000.0;
/* --all-reps=1: --reps timed builds however long one takes (under --solo). */
static bool g_all_reps = false;
/* Retries of a failed list allocation (--retries=N, default 0). */
static uint32_t g_retries = 0;
static uint32_t g_free_batch = 0, g_profile = 0, g_ways = 0; /* --ways: wh_heap_config.ways */
static char g_kinds[128] = "";

typedef struct kd_kind {
    const char *name;
    kd_alloc alloc;
    wh_heap_kind heap;
} kd_kind;

static const kd_kind KINDS_BIG[] = {{"BUMP", KD_ALLOC_WARPHEAP, WH_HEAP_BUMP},
                                    {"DEFAULT", KD_ALLOC_WARPHEAP, WH_HEAP_DEFAULT},
                                    {"CIRCULAR", KD_ALLOC_WARPHEAP, WH_HEAP_CIRCULAR},
                                    {"cuda-malloc", KD_ALLOC_CUDA, WH_HEAP_DEFAULT}};
static const kd_kind KINDS_SMALL[] = {{"DEFAULT", KD_ALLOC_WARPHEAP, WH_HEAP_DEFAULT},
                                      {"CIRCULAR", KD_ALLOC_WARPHEAP, WH_HEAP_CIRCULAR},
                                      {"cuda-malloc", KD_ALLOC_CUDA, WH_HEAP_DEFAULT}};

typedef struct kd_row {
    char scene[64], kind[16], status[96];
    uint32_t tris, heap_x, reps;
    uint32_t builds, failed_builds; /* warm-up and timed: those with a failed allocation */
    uint64_t heap_bytes;
    kd_build_stats st;
    double ms_median, ms_min;
    long long check_errors; /* -1: not checked */
} kd_row;

typedef struct kd_opts {
    char scenes[256], sizes[256], obj[512], out[512], tag[64];
    uint32_t phases[4];
    int nphases;
    int reps;
    double budget_s;
} kd_opts;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Exhaustive up to 300K triangles; above, 20000 sampled triangles and fewer
 * rays (brute force is O(triangles) per ray). */
static long long check(kd_gpu *g, const kd_scene *s, kd_check_result *r) {
    kd_tree t;
    if (kd_gpu_download(g, &t)) return -1;
    uint32_t rays = s->ntris <= 300000u ? 256u : 16u;
    long long e = (long long)kd_check_tree(s, &t, 300000u, 20000u, rays, 42u, r);
    kd_tree_free(&t);
    return e;
}

/* Builds with -DWH_HEAP_PROFILE (the heap's event counters, heap/core.h):
 * the counters of the checked first build, one line. */
static void print_heap_prof(const kd_kind *k, const wh_heap *h) {
#ifdef WH_HEAP_PROFILE
    static const char *names[WH_PROF_COUNT] = WH_PROF_NAMES;
    unsigned long long v[WH_PROF_COUNT];
    if (k->alloc != KD_ALLOC_WARPHEAP || (k->heap != WH_HEAP_DEFAULT && k->heap != WH_HEAP_SLAB)) return;
    WH_CUDA_OR_DIE(cudaMemcpy(v, h->ctl->prof, sizeof v, cudaMemcpyDeviceToHost));
    printf("    heap prof %s:", k->name);
    for (int i = 0; i < WH_PROF_COUNT; ++i) printf(" %s %llu", names[i], v[i]);
    printf("\n");
#else
    (void)k;
    (void)h;
#endif
}

static void give_back(kd_gpu *g, const kd_kind *k, wh_heap *h) {
    if (k->alloc == KD_ALLOC_CUDA)
        kd_gpu_release(g);
    else if (wh_heap_reset(h) != WH_OK)
        fprintf(stderr, "heap reset: %s\n", wh_last_error());
}

/* One allocator on one scene: a checked warm-up build, then timed builds. */
static void run_kind(kd_gpu *g, const kd_scene *s, const kd_kind *k, uint64_t heap_bytes, int reps, int do_check,
                     kd_row *row) {
    kd_build_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.alloc = k->alloc;
    cfg.alloc_retries = g_retries;
    cfg.free_batch = g_free_batch;
    cfg.profile = g_profile;
    snprintf(row->kind, sizeof row->kind, "%s", k->name);
    row->check_errors = -1;
    if (k->alloc == KD_ALLOC_WARPHEAP) {
        wh_heap_config hc;
        memset(&hc, 0, sizeof hc);
        hc.bytes = heap_bytes;
        hc.kind = k->heap;
        hc.ways = hc.kind == WH_HEAP_DEFAULT || hc.kind == WH_HEAP_SLAB ? g_ways : 0u;
        if (wh_heap_create(&cfg.heap, &hc) != WH_OK) {
            snprintf(row->status, sizeof row->status, "no heap: %s", wh_last_error());
            return;
        }
    }
    if (kd_gpu_build(g, &cfg, &row->st)) snprintf(row->status, sizeof row->status, "root list failed");
    if (do_check) {
        kd_check_result cr;
        row->check_errors = check(g, s, &cr);
        if (row->check_errors)
            fprintf(stderr, "  CHECK FAILED: structure %llu box %llu bad %llu dup %llu missing %llu rays %llu/%llu\n",
                    (unsigned long long)cr.bad_structure, (unsigned long long)cr.box_mismatch,
                    (unsigned long long)cr.bad_refs, (unsigned long long)cr.dup_refs, (unsigned long long)cr.missing,
                    (unsigned long long)cr.ray_mismatch, (unsigned long long)cr.rays);
    }
    print_heap_prof(k, &cfg.heap);
    give_back(g, k, &cfg.heap);
    /* Slow builds get fewer repetitions so the whole table fits its budget
     * (unless --all-reps); a build that ran out of heap is reported as
     * is (its time is mostly the allocator's bounded retries before giving
     * up).  A timed build that fails allocations adds them to the row's
     * count: its time is not comparable either. */
    row->builds = 1;
    row->failed_builds = row->st.alloc_failures != 0;
    if (row->st.alloc_failures || row->st.ms > g_solo_ms) {
        reps = 0;
        row->reps = 1;
        row->ms_median = row->ms_min = row->st.ms;
    } else if (!g_all_reps) {
        if (row->st.ms > 1000.0f)
            reps = 1;
        else if (row->st.ms > 300.0f && reps > 3)
            reps = 3;
    }
    double ms[KD_MAX_REPS];
    if (reps) row->reps = 0;
    for (int r = 0; r < reps && !row->status[0]; ++r) {
        kd_build_stats st;
        (void)kd_gpu_build(g, &cfg, &st);
        ms[row->reps++] = st.ms;
        row->builds++;
        row->failed_builds += st.alloc_failures != 0;
        row->st.alloc_failures += st.alloc_failures;
        if (st.alloc_fail_max > row->st.alloc_fail_max) row->st.alloc_fail_max = st.alloc_fail_max;
        give_back(g, k, &cfg.heap);
    }
    if (reps && row->reps) {
        qsort(ms, row->reps, sizeof ms[0], cmp_double);
        row->ms_median = ms[row->reps / 2];
        row->ms_min = ms[0];
    }
    if (k->alloc == KD_ALLOC_WARPHEAP) (void)wh_heap_destroy(&cfg.heap);
    if (!row->status[0] && row->st.alloc_failures) snprintf(row->status, sizeof row->status, "alloc failures");
    if (!row->status[0] && (row->st.timeouts || row->st.node_overflow))
        snprintf(row->status, sizeof row->status, "timeout/overflow");
    if (!row->status[0] && row->check_errors > 0) snprintf(row->status, sizeof row->status, "CHECK FAILED");
    if (!row->status[0]) snprintf(row->status, sizeof row->status, "ok");
}

static double mean_bytes(const kd_build_stats *s) { return s->allocs ? (double)s->bytes / (double)s->allocs : 0.0; }
static double sd_bytes(const kd_build_stats *s) {
    if (!s->allocs) return 0.0;
    double m = mean_bytes(s), v = (double)s->bytes_sq / (double)s->allocs - m * m;
    return v > 0.0 ? sqrt(v) : 0.0;
}

static void print_row(const kd_row *r) {
    printf("%-12s %9u  %3ux  %-11s %9.2f ms (min %.2f, %u reps)  nodes %llu refs/tri %.2f allocs %llu "
           "mean %.1f B sd %.1f B fails %llu (%u of %u builds, the largest %llu B) check %s  %s\n",
           r->scene, r->tris, r->heap_x, r->kind, r->ms_median, r->ms_min, r->reps, (unsigned long long)r->st.nodes,
           r->tris ? (double)r->st.refs / r->tris : 0.0, (unsigned long long)r->st.allocs, mean_bytes(&r->st),
           sd_bytes(&r->st), (unsigned long long)r->st.alloc_failures, r->failed_builds, r->builds,
           (unsigned long long)r->st.alloc_fail_max, r->check_errors < 0 ? "-" : (r->check_errors ? "FAIL" : "ok"),
           r->status);
    const kd_build_stats *s = &r->st;
    if (g_profile && s->prof[KD_CYC_NODE]) {
        double splits = (double)(s->nodes > 1u ? (s->nodes - 1u) / 2u : 1u), node = (double)s->prof[KD_CYC_NODE];
        double alloc = (double)s->prof[KD_CYC_ALLOC], fr = (double)s->prof[KD_CYC_FREE];
        double wait = (double)s->prof[KD_CYC_WAIT], lists = (double)s->prof[KD_FREED_LISTS];
        printf("    profile: node %.0f cyc/task, alloc %.0f cyc/split (%.1f%% of node time, %llu > 20K cyc), "
               "free %.0f cyc/list (%.1f%%, %llu calls for %llu lists), queue wait %.1f%% of warp time\n",
               node / (double)(s->nodes ? s->nodes : 1u), alloc / splits, 100.0 * alloc / node,
               (unsigned long long)s->prof[KD_SLOW_ALLOCS], fr / (lists > 0.0 ? lists : 1.0), 100.0 * fr / node,
               (unsigned long long)s->prof[KD_FREE_CALLS], (unsigned long long)s->prof[KD_FREED_LISTS],
               100.0 * wait / (wait + node));
        printf("    per class (calls: mean cycles of the calling lane):");
        for (uint32_t k = 0; k < KD_PCLASSES; ++k) {
            if (!s->alloc_n[k] && !s->free_n[k]) continue;
            if (k + 1u < KD_PCLASSES)
                printf(" %uB", wh__slab_size(k));
            else
                printf(" run");
            printf(" alloc %llu:%.0f free %llu:%.0f;", (unsigned long long)s->alloc_n[k],
                   s->alloc_n[k] ? (double)s->alloc_cyc[k] / (double)s->alloc_n[k] : 0.0,
                   (unsigned long long)s->free_n[k],
                   s->free_n[k] ? (double)s->free_cyc[k] / (double)s->free_n[k] : 0.0);
        }
        printf("\n");
    }
    fflush(stdout);
}

/* --kinds: is this allocator in the comma-separated list? */
static int kind_selected(const char *name) {
    size_t n = strlen(name);
    for (const char *p = g_kinds; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

/* Both phases of one scene: 200x (Table 3) and 20x (Table 4) the root list. */
static void write_outputs(const kd_opts *o, const kd_row *rows, int n, const char *meta);

static int run_scene(const kd_scene *s, const char *name, const kd_opts *o, kd_row *rows, int nrows, int max_rows,
                     const char *meta) {
    for (int phase = 0; phase < o->nphases; ++phase) {
        uint32_t factor = o->phases[phase];
        uint64_t bytes = kd_root_bytes(s->ntris) * factor;
        if (bytes < (1u << 20)) bytes = 1u << 20;
        const kd_kind *kinds = factor == 200u ? KINDS_BIG : KINDS_SMALL;
        int nk = factor == 200u ? 4 : 3;
        WH_CUDA_OR_DIE(cudaDeviceReset());
        WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)bytes));
        kd_gpu g;
        uint32_t cap = s->ntris > 100000000u ? 0x3fffffffu : 8u * s->ntris + 4096u;
        if (kd_gpu_create(&g, s, cap)) return nrows;
        int first = nrows; /* the phase's first (checked) row */
        for (int k = 0; k < nk && nrows < max_rows; ++k) {
            if (g_kinds[0] && !kind_selected(kinds[k].name)) continue;
            kd_row *r = &rows[nrows++];
            memset(r, 0, sizeof *r);
            snprintf(r->scene, sizeof r->scene, "%s", name);
            r->tris = s->ntris;
            r->heap_x = factor;
            r->heap_bytes = bytes;
            /* Large scenes: the first kind of a phase is checked, the others
             * must give the same tree (same node, leaf and reference counts). */
            int do_check = s->ntris <= 300000u || r == rows + first;
            run_kind(&g, s, &kinds[k], bytes, o->reps, do_check, r);
            if (!do_check && r->st.alloc_failures == 0 && rows[first].st.alloc_failures == 0) {
                const kd_build_stats *a = &rows[first].st, *b = &r->st;
                if (a->nodes != b->nodes || a->leaves != b->leaves || a->refs != b->refs)
                    snprintf(r->status, sizeof r->status, "CHECK FAILED (tree differs)");
            }
            print_row(r);
            write_outputs(o, rows, nrows, meta); /* partial results survive a timeout */
        }
        kd_gpu_destroy(&g);
    }
    return nrows;
}

static const kd_row *find(const kd_row *rows, int n, const char *scene, uint32_t tris, uint32_t x, const char *kind) {
    for (int i = 0; i < n; ++i)
        if (!strcmp(rows[i].scene, scene) && rows[i].tris == tris && rows[i].heap_x == x && !strcmp(rows[i].kind, kind))
            return &rows[i];
    return NULL;
}

static void fmt_ms(char *buf, size_t n, const kd_row *r) {
    if (!r)
        snprintf(buf, n, "-");
    else if (r->st.alloc_failures && r->reps && r->st.alloc_fail_max)
        snprintf(buf, n, "%.2f (%llu allocs failed, the largest %.1f KiB)", r->ms_median,
                 (unsigned long long)r->st.alloc_failures, (double)r->st.alloc_fail_max / 1024.0);
    else if (r->st.alloc_failures && r->reps)
        snprintf(buf, n, "%.2f (%llu allocs failed)", r->ms_median, (unsigned long long)r->st.alloc_failures);
    else if (strcmp(r->status, "ok") && r->reps)
        snprintf(buf, n, "%.2f (%s)", r->ms_median, r->status);
    else if (strcmp(r->status, "ok"))
        snprintf(buf, n, "%s", r->status);
    else
        snprintf(buf, n, "%.2f", r->ms_median);
}

static void write_md(const kd_opts *o, const kd_row *rows, int n, const char *meta);

static void write_outputs(const kd_opts *o, const kd_row *rows, int n, const char *meta) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s.csv", o->out, o->tag);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s", meta);
        fprintf(f, "scene,tris,heap_x,heap_bytes,allocator,build_ms_median,build_ms_min,reps,nodes,leaves,refs,"
                   "refs_per_tri,allocs,mean_alloc_B,sd_alloc_B,alloc_failures,depth,check_errors,status\n");
        for (int i = 0; i < n; ++i) {
            const kd_row *r = &rows[i];
            fprintf(f, "%s,%u,%u,%llu,%s,%.3f,%.3f,%u,%llu,%llu,%llu,%.3f,%llu,%.1f,%.1f,%llu,%u,%lld,%s\n", r->scene,
                    r->tris, r->heap_x, (unsigned long long)r->heap_bytes, r->kind, r->ms_median, r->ms_min, r->reps,
                    (unsigned long long)r->st.nodes, (unsigned long long)r->st.leaves, (unsigned long long)r->st.refs,
                    r->tris ? (double)r->st.refs / r->tris : 0.0, (unsigned long long)r->st.allocs, mean_bytes(&r->st),
                    sd_bytes(&r->st), (unsigned long long)r->st.alloc_failures, r->st.depth, r->check_errors,
                    r->status);
        }
        fclose(f);
    }
    write_md(o, rows, n, meta);
}

static void write_md(const kd_opts *o, const kd_row *rows, int n, const char *meta) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s.md", o->out, o->tag);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "# k-d tree build (register-efficient paper, Tables 3-4)\n\n```\n%s```\n\n", meta);
    for (int ph = 0; ph < o->nphases; ++ph) {
        uint32_t x = o->phases[ph];
        int phase = x != 200u;
        const kd_kind *kinds = phase ? KINDS_SMALL : KINDS_BIG;
        int nk = phase ? 3 : 4;
        fprintf(f, "## Heap = %ux the root's list%s\n\n", x,
                phase ? " (freed memory must be reused; Table 4)" : " (Table 3)");
        fprintf(f, "| scene | N_tris | N_ref | N_alloc | mean B | sd B |");
        for (int k = 0; k < nk; ++k) fprintf(f, " %s ms |", kinds[k].name);
        fprintf(f, " cuda-malloc / DEFAULT |%s\n", phase ? "" : " DEFAULT / BUMP |");
        fprintf(f, "|---|---:|---:|---:|---:|---:|");
        for (int k = 0; k < nk; ++k) fprintf(f, "---:|");
        fprintf(f, "---:|%s\n", phase ? "" : "---:|");
        for (int i = 0; i < n; ++i) {
            const kd_row *r = &rows[i];
            if (r->heap_x != x || strcmp(r->kind, kinds[0].name)) continue;
            const kd_row *d = find(rows, n, r->scene, r->tris, x, "DEFAULT");
            /* The allocation figures of a complete build (no failure). */
            static const char *prefer[4] = {"BUMP", "cuda-malloc", "DEFAULT", "CIRCULAR"};
            const kd_row *ref = r;
            for (int q = 3; q >= 0; --q) {
                const kd_row *c = find(rows, n, r->scene, r->tris, x, prefer[q]);
                if (c && !strcmp(c->status, "ok")) ref = c;
            }
            fprintf(f, "| %s | %u | %.2f | %llu | %.1f | %.1f |", r->scene, r->tris,
                    r->tris ? (double)ref->st.refs / r->tris : 0.0, (unsigned long long)ref->st.allocs,
                    mean_bytes(&ref->st), sd_bytes(&ref->st));
            for (int k = 0; k < nk; ++k) {
                char buf[200];
                fmt_ms(buf, sizeof buf, find(rows, n, r->scene, r->tris, x, kinds[k].name));
                fprintf(f, " %s |", buf);
            }
            const kd_row *c = find(rows, n, r->scene, r->tris, x, "cuda-malloc");
            const kd_row *b = find(rows, n, r->scene, r->tris, x, "BUMP");
            int dok = d && !strcmp(d->status, "ok");
            if (dok && c && !strcmp(c->status, "ok"))
                fprintf(f, " %.3gx |", c->ms_median / d->ms_median);
            else
                fprintf(f, " - |");
            if (!phase) {
                if (dok && b && !strcmp(b->status, "ok"))
                    fprintf(f, " %.3gx |", d->ms_median / b->ms_median);
                else
                    fprintf(f, " - |");
            }
            fprintf(f, "\n");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "Build times: median of the timed builds after a checked warm-up (CUDA events, root list "
               "allocation to the last leaf). N_ref: leaf references per triangle; N_alloc, mean, sd: the "
               "reference lists allocated by the build (16-byte padded), from a build without failures. A build "
               "with failed allocations made those nodes leaves (a coarser tree, still checked): its time is "
               "not comparable. Ratios only between complete builds.\n");
    fclose(f);
}

static void metadata(char *buf, size_t n, const char *commit) {
    cudaDeviceProp p;
    int dev = 0, rt = 0, drv = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaGetDeviceProperties(&p, dev));
    WH_CUDA_OR_DIE(cudaRuntimeGetVersion(&rt));
    WH_CUDA_OR_DIE(cudaDriverGetVersion(&drv));
    const char *driver = getenv("WH_GPU_DRIVER");
    char date[64];
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    snprintf(
        buf, n,
        "# gpu: %s (%d SMs)\n# driver: %s (CUDA driver API %d.%d)\n# cuda runtime: %d.%d\n# date: %s\n# commit: %s\n",
        p.name, p.multiProcessorCount, driver ? driver : "?", drv / 1000, (drv % 1000) / 10, rt / 1000,
        (rt % 1000) / 10, date, commit);
}

/* --from-csv=FILE: the markdown again from a CSV this program wrote (no GPU
 * needed); sd is rebuilt from mean and sd. */
static int md_from_csv(kd_opts *o, const char *csv) {
    FILE *f = fopen(csv, "r");
    if (!f) return 1;
    static kd_row rows[512];
    char line[1024], meta[1024] = "";
    int n = 0;
    while (fgets(line, sizeof line, f) && n < 512) {
        if (line[0] == '#') {
            strncat(meta, line, sizeof meta - strlen(meta) - 1);
            continue;
        }
        kd_row *r = &rows[n];
        memset(r, 0, sizeof *r);
        unsigned long long hb, nodes, leaves, refs, allocs, fails;
        double rpt, mean, sd;
        unsigned depth;
        long long ce;
        if (sscanf(line, "%63[^,],%u,%u,%llu,%15[^,],%lf,%lf,%u,%llu,%llu,%llu,%lf,%llu,%lf,%lf,%llu,%u,%lld,%95[^\n]",
                   r->scene, &r->tris, &r->heap_x, &hb, r->kind, &r->ms_median, &r->ms_min, &r->reps, &nodes, &leaves,
                   &refs, &rpt, &allocs, &mean, &sd, &fails, &depth, &ce, r->status) != 19)
            continue; /* the header */
        r->heap_bytes = hb;
        r->st.nodes = nodes;
        r->st.leaves = leaves;
        r->st.refs = refs;
        r->st.allocs = allocs;
        r->st.bytes = (uint64_t)(mean * (double)allocs + 0.5);
        r->st.bytes_sq = (uint64_t)((sd * sd + mean * mean) * (double)allocs);
        r->st.alloc_failures = fails;
        r->st.depth = depth;
        r->check_errors = ce;
        int seen = 0;
        for (int p = 0; p < o->nphases; ++p) seen |= o->phases[p] == r->heap_x;
        if (!seen && o->nphases < 4) o->phases[o->nphases++] = r->heap_x;
        ++n;
    }
    fclose(f);
    write_md(o, rows, n, meta);
    printf("%d rows from %s -> %s/%s.md\n", n, csv, o->out, o->tag);
    return n ? 0 : 1;
}

int main(int argc, char **argv) {
    kd_opts o;
    memset(&o, 0, sizeof o);
    const char *scenes = "soup,torus,clustered", *sizes_opt = "20000,200000,2000000,10000000", *obj = "", *out = ".";
    const char *kinds = "", *tag = "kdtree", *phases_opt = "200,20", *from = NULL;
    int all_reps = 0;
    o.reps = 5;
    o.budget_s = 170;
    wh_cli_opt cli[] = {
        WH_CLI_STRING("scenes", &scenes, "generated scenes, comma-separated"),
        WH_CLI_STRING("sizes", &sizes_opt, "triangles of each generated scene, comma-separated"),
        WH_CLI_STRING("obj", &obj, "an OBJ file to build a tree of too"),
        WH_CLI_STRING("out", &out, "directory of the CSV and markdown files"),
        WH_CLI_INT("reps", &o.reps, "timed builds per row, 1 .. 9"),
        WH_CLI_INT("all-reps", &all_reps, "1: every build --reps times, however slow"),
        WH_CLI_DOUBLE("budget", &o.budget_s, "seconds after which the remaining scenes are skipped"),
        WH_CLI_DOUBLE("solo", &g_solo_ms, "a warm-up build slower than this many ms is the only one timed"),
        WH_CLI_UINT("retries", &g_retries, "retries of a failed list allocation"),
        WH_CLI_UINT_D("free-batch", &g_free_batch, "parents' lists freed per warp-wide call", "0: one, each at once"),
        WH_CLI_UINT("profile", &g_profile, "1: count cycles in allocation, free, node and queue wait"),
        WH_CLI_UINT_D("ways", &g_ways, "slab and default heaps with this many ways per class", "0: by heap size"),
        WH_CLI_STRING_D("kinds", &kinds, "only these allocators, comma-separated (e.g. BUMP,DEFAULT)", "all"),
        WH_CLI_STRING("tag", &tag, "name of the output files"),
        WH_CLI_STRING("phases", &phases_opt, "heap sizes in multiples of the root's list, comma-separated"),
        WH_CLI_STRING("from-csv", &from, "only rewrite the markdown of this CSV file (no GPU needed)"),
        WH_CLI_END};
    wh_cli_parse(argc, argv, cli,
                 "k-d tree build time per allocator on generated scenes (and OBJ files), every "
                 "tree checked.");
    snprintf(o.scenes, sizeof o.scenes, "%s", scenes);
    snprintf(o.sizes, sizeof o.sizes, "%s", sizes_opt);
    snprintf(o.obj, sizeof o.obj, "%s", obj);
    snprintf(o.out, sizeof o.out, "%s", out);
    g_all_reps = all_reps != 0;
    if (o.reps < 1) o.reps = 1;
    if (o.reps > KD_MAX_REPS) o.reps = KD_MAX_REPS;
    snprintf(g_kinds, sizeof g_kinds, "%s", kinds);
    snprintf(o.tag, sizeof o.tag, "%s", tag);
    char phases[64];
    snprintf(phases, sizeof phases, "%s", phases_opt);
    for (char *p = strtok(phases, ","); p && o.nphases < 4; p = strtok(NULL, ","))
        if (atoi(p) > 0) o.phases[o.nphases++] = (uint32_t)atoi(p);
    if (from) {
        o.nphases = 0;
        return md_from_csv(&o, from);
    }
    if (!wh_cuda_available()) {
        fprintf(stderr, "wh_kdtree_bench: no GPU\n");
        return 77;
    }
    char meta[1024];
    metadata(meta, sizeof meta, getenv("WH_COMMIT") ? getenv("WH_COMMIT") : "?");
    printf("%s", meta);
    enum { MAX_ROWS = 512 };
    kd_row *rows = (kd_row *)calloc(MAX_ROWS, sizeof(kd_row));
    int n = 0;
    double start = now_s();
    if (o.obj[0]) {
        kd_scene s;
        if (kd_obj_read(&s, o.obj))
            fprintf(stderr, "cannot read %s\n", o.obj);
        else {
            n = run_scene(&s, "obj", &o, rows, n, MAX_ROWS, meta);
            kd_scene_free(&s);
        }
    }
    /* Sizes outer, scenes inner: if the budget runs out, every scene has its
     * small sizes. */
    char sizes[256];
    snprintf(sizes, sizeof sizes, "%s", o.sizes);
    for (char *sz = strtok(sizes, ","); sz; sz = strtok(NULL, ",")) {
        uint32_t ntris = (uint32_t)strtoul(sz, NULL, 10);
        char scenes[256], *save = NULL;
        snprintf(scenes, sizeof scenes, "%s", o.scenes);
        for (char *name = strtok_r(scenes, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
            if (now_s() - start > o.budget_s) {
                printf("%-12s %9u  skipped: time budget of %.0f s spent\n", name, ntris, o.budget_s);
                continue;
            }
            kd_scene s;
            if (kd_scene_generate(&s, name, ntris, 1234u)) {
                fprintf(stderr, "cannot make scene %s %u\n", name, ntris);
                continue;
            }
            n = run_scene(&s, name, &o, rows, n, MAX_ROWS, meta);
            kd_scene_free(&s);
        }
    }
    write_outputs(&o, rows, n, meta);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += strstr(rows[i].status, "CHECK FAILED") != NULL || rows[i].st.timeouts > 0;
    printf("%d rows, %d with a failed check or timeout, %.1f s\n", n, bad, now_s() - start);
    free(rows);
    return bad ? 1 : 0;
}
