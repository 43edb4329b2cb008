/* SPDX-License-Identifier: MIT */
/* Bitmap stress on the CPU backend (pthreads), and the shared verdict. */
#include "stress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_test.h"

typedef struct {
    const wh_stress_config *cfg;
    wh_bitmap bm;
    uint32_t *owned, *nowned;
    wh_stress_counts *counts;
} cpu_job;

static void cpu_worker(unsigned i, void *arg) {
    cpu_job *job = (cpu_job *)arg;
    wh_stress_counts c = {0};
    wh_stress_thread(&job->bm, i, job->cfg->ops_per_thread, job->owned + (size_t)i * job->cfg->cap, job->cfg->cap,
                     &job->nowned[i], &c);
    job->counts[i] = c;
}

void wh_stress_verify(const wh_bitmap *bm, const uint32_t *owned, const uint32_t *nowned, uint32_t threads,
                      uint32_t cap, wh_stress_result *res) {
    uint8_t *seen = (uint8_t *)calloc(bm->nbits, 1);
    uint64_t total = 0;
    res->owned_twice = 0;
    for (uint32_t t = 0; t < threads; ++t)
        for (uint32_t k = 0; k < nowned[t]; ++k) {
            uint32_t b = owned[(size_t)t * cap + k];
            if (b >= bm->nbits || seen[b]++ || wh_bitmap_get(bm, b)) res->owned_twice++;
            total++;
        }
    free(seen);
    res->inconsistent = wh_bitmap_check_host(bm);
    res->count = wh_bitmap_count_host(bm);
    res->expected = bm->nbits - total;
}

int wh_stress_cpu(const wh_stress_config *cfg, wh_stress_result *res) {
    memset(res, 0, sizeof *res);
    void *mem = malloc(wh_bitmap_bytes(cfg->nbits));
    cpu_job job = {cfg, {0}, NULL, NULL, NULL};
    job.owned = (uint32_t *)calloc((size_t)cfg->threads * cfg->cap, sizeof(uint32_t));
    job.nowned = (uint32_t *)calloc(cfg->threads, sizeof(uint32_t));
    job.counts = (wh_stress_counts *)calloc(cfg->threads, sizeof(wh_stress_counts));
    if (!mem || !job.owned || !job.nowned || !job.counts ||
        wh_bitmap_init_host(&job.bm, mem, cfg->nbits, true) != WH_OK) {
        fprintf(stderr, "stress: cannot set up %llu bits\n", (unsigned long long)cfg->nbits);
        return 1;
    }
    double t0 = wh_now_seconds();
    wh_run_threads(cfg->threads, cpu_worker, &job);
    res->seconds = wh_now_seconds() - t0;
    res->threads = cfg->threads;
    res->ops = (uint64_t)cfg->threads * cfg->ops_per_thread;
    for (uint32_t t = 0; t < cfg->threads; ++t) {
        wh_stress_counts *c = &job.counts[t];
        res->counts.claims += c->claims;
        res->counts.releases += c->releases;
        res->counts.steals += c->steals;
        res->counts.finds += c->finds;
        res->counts.empty += c->empty;
        res->counts.violations += c->violations;
        res->counts.spans += c->spans;
    }
    wh_stress_verify(&job.bm, job.owned, job.nowned, cfg->threads, cfg->cap, res);
    free(mem);
    free(job.owned);
    free(job.nowned);
    free(job.counts);
    return 0;
}

int wh_stress_ok(const wh_stress_result *r) {
    return r->counts.violations == 0 && r->inconsistent == 0 && r->owned_twice == 0 && r->count == r->expected;
}

void wh_stress_print(const char *backend, const wh_stress_config *cfg, const wh_stress_result *r) {
    printf("%-4s %8u threads %12llu ops %10llu bits  %8.3f s  %9.3g ops/s  "
           "claims %llu releases %llu steals %llu finds %llu empty %llu spans %llu | "
           "violations %llu inconsistent %llu owned-twice %llu count %llu/%llu  %s\n",
           backend, r->threads, (unsigned long long)r->ops, (unsigned long long)cfg->nbits, r->seconds,
           r->seconds > 0 ? (double)r->ops / r->seconds : 0.0, r->counts.claims, r->counts.releases, r->counts.steals,
           r->counts.finds, r->counts.empty, r->counts.spans, r->counts.violations, (unsigned long long)r->inconsistent,
           (unsigned long long)r->owned_twice, (unsigned long long)r->count, (unsigned long long)r->expected,
           wh_stress_ok(r) ? "OK" : "FAIL");
}
