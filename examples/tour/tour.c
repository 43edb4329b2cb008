/* SPDX-License-Identifier: MIT */
/* wh_tour: the main program of the tour (tour.h).  Prints one table row per
 * measurement, then a summary, and writes tour.csv (one line per row) for the
 * speed-up plot of scripts/demo.sh.
 *   wh_tour [--cpu] [--quick] [--threads=N] [--out=DIR] [--parts=heap,soa,pool,arena] */
#include "tour.h"
#include "warpheap/warpheap.h"
#include "wh_cli.h"

#include <sys/stat.h>
#include <unistd.h>

void tour_fail(const char *part, const char *what) {
    fprintf(stderr, "wh_tour: %s: %s (%s)\n", part, what, wh_last_error());
    exit(1);
}

static void rule(void) { printf("%-18s %-52s %12s  %-26s %12s %9s\n", "", "", "", "", "", ""); }

void tour_report(tour *t, const char *part, const char *workload, double ours_ms, const char *baseline,
                 double base_ms) {
    if (t->nrows == TOUR_MAX_ROWS) return;
    tour_row *r = &t->rows[t->nrows++];
    snprintf(r->part, sizeof r->part, "%s", part);
    snprintf(r->workload, sizeof r->workload, "%s", workload);
    snprintf(r->baseline, sizeof r->baseline, "%s", baseline);
    r->ours_ms = ours_ms;
    r->base_ms = base_ms;
    printf("%-18s %-52s %9.3f ms  %-26s %9.3f ms %8.2fx\n", part, workload, ours_ms, baseline, base_ms,
           base_ms / ours_ms);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    static tour t;
    t.out = ".";
    const char *parts = "heap,soa,pool,arena";
    int force_cpu = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    t.threads = cores > 4 ? (unsigned)cores : 4u;
    wh_cli_opt cli[] = {
        WH_CLI_FLAG("cpu", &force_cpu, "run on the CPU backend even where a GPU is found"),
        WH_CLI_FLAG("quick", &t.quick, "smaller workloads (seconds instead of a minute)"),
        WH_CLI_UINT_D("threads", &t.threads, "CPU backend: threads of the heap workload", "the cores, at least 4"),
        WH_CLI_STRING("out", &t.out, "folder for tour.csv and the pictures"),
        WH_CLI_STRING("parts", &parts, "comma-separated subset of heap,soa,pool,arena"),
        WH_CLI_END};
    wh_cli_parse(argc, argv, cli,
                 "The tour of warpheap's four parts: each part's headline workload against the usual way.");
    if (t.threads < 1 || t.threads > 1024) {
        fprintf(stderr, "wh_tour: --threads: 1 to 1024\n");
        return 2;
    }
    for (const char *p = parts; *p;) { /* every name in --parts is a part */
        size_t len = strcspn(p, ",");
        if (!(len == 4 && (!strncmp(p, "heap", 4) || !strncmp(p, "pool", 4))) && !(len == 3 && !strncmp(p, "soa", 3)) &&
            !(len == 5 && !strncmp(p, "arena", 5))) {
            fprintf(stderr, "wh_tour: --parts: '%.*s' is not one of heap, soa, pool, arena\n", (int)len, p);
            return 2;
        }
        p += len + (p[len] == ',');
    }
    mkdir(t.out, 0777);
    t.gpu = !force_cpu && wh_cuda_available();
    char env[512];
    app_env(env, sizeof env, t.gpu);
    printf("warpheap %s tour on %s (%s backend%s)\n", wh_version_string(), t.gpu ? env : "the CPU",
           t.gpu ? "CUDA" : "CPU",
           t.gpu                 ? ""
           : wh_cuda_available() ? ", --cpu"
                                 : "; no GPU found");
    if (!t.gpu)
        printf("Without a GPU every row compares warpheap's CPU backend with its CPU counterpart; the GPU figures\n"
               "(in-kernel malloc, cudaMallocAsync, stream-ordered frames) need a GPU: run this again on one.\n");
    printf("%-18s %-52s %12s  %-26s %12s %9s\n", "part", "workload", "warpheap", "against", "their time", "speed-up");
    void (*run[4])(tour *) = {tour_heap, tour_soa, tour_pool, tour_arena};
    const char *names[4] = {"heap", "soa", "pool", "arena"};
    for (int i = 0; i < 4; ++i) {
        const char *at = strstr(parts, names[i]);
        size_t len = strlen(names[i]);
        if (at && (at == parts || at[-1] == ',') && (at[len] == ',' || at[len] == 0)) run[i](&t);
    }
    rule();
    printf("summary: %d rows; speed-up = their time / warpheap's time (above 1: warpheap is faster)\n", t.nrows);
    char path[4096];
    snprintf(path, sizeof path, "%s/tour.csv", t.out);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f, "# %s\npart,workload,warpheap_ms,baseline,baseline_ms,speedup\n", t.gpu ? env : "cpu");
    for (int i = 0; i < t.nrows; ++i) {
        const tour_row *r = &t.rows[i];
        printf("  %-18s %-52s %8.2fx against %s\n", r->part, r->workload, r->base_ms / r->ours_ms, r->baseline);
        fprintf(f, "%s,\"%s\",%.6f,%s,%.6f,%.4f\n", r->part, r->workload, r->ours_ms, r->baseline, r->base_ms,
                r->base_ms / r->ours_ms);
    }
    if (fclose(f)) {
        perror(path);
        return 1;
    }
    printf("table: %s\n", path);
    return 0;
}
