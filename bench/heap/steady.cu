/* SPDX-License-Identifier: MIT */
/* wh_heap_bench's steady-state workloads, DEFAULT heap: filled, emptied and
 * filled again, the way a program uses a heap, rather than once from empty.
 *   rounds  fill 90% of a heap of 10,066,329,600 bytes (Gallatin's, PPoPP'24)
 *           with one allocation per thread -- one size (16 B, 256 B, 4 KiB),
 *           or log-uniform sizes from 16 B to 4 KiB -- then free everything;
 *           --rounds times.  Allocations/s and frees/s per round, timed on
 *           the host from the launch to the synchronize, and the heap walk
 *           after every fill and every free: live regions, broken
 *           invariants, bytes still counted in use (none after a free).
 *           Each timed kernel is launched once with no work first, so that
 *           the driver's loading of its code is not timed (steady_load).
 *   churn   a heap about 60% full holds 8 objects a thread, log-uniform
 *           sizes; each round every object is, with a probability drawn for
 *           the round (5% to 50%), freed and allocated again with a new size,
 *           frees and allocations mixed in one kernel.  Operations/s,
 *           failures and fragmentation after each round: equation 2
 *           (internal: the mean of (slot - request) / slot over the live
 *           objects, computed here, as slab slots do not record requests) and
 *           equation 3 (external: the heap walk's), section 8 of
 *           register-efficient-gpu-allocators.txt.
 * Writes heap_rounds.csv and heap_churn.csv into the output folder and their
 * tables into heap_bench.md; bench/heap/churn_plot.py draws the churn. */
#include "steady.h"
#include "warpheap/cuda_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned long long ull;
#define STEADY_KIND WH_HEAP_DEFAULT

/* A request of the mixed workloads: log-uniform in [16, 4096] bytes. */
static __host__ __device__ uint32_t steady_size(uint64_t key) {
    float u = (float)(wh_hash64(key) >> 40) * (1.0f / 16777216.0f);
    uint32_t n = (uint32_t)(16.0f * exp2f(8.0f * u));
    return n < 16u ? 16u : (n > 4096u ? 4096u : n);
}

/* Thread t takes one block of `size` bytes (0: steady_size(seed + t)). */
static __global__ void steady_fill(wh_heap h, uint32_t size, uint64_t seed, uint64_t count, void **ptrs, ull *fails) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    void *p = wh_malloc_as(&h, STEADY_KIND, size ? size : steady_size(seed + t));
    ptrs[t] = p;
    if (!p) atomicAdd(fails, 1ull);
}

static __global__ void steady_empty(wh_heap h, uint64_t count, void **ptrs) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) wh_free_as(&h, STEADY_KIND, ptrs[t]); /* NULL: nothing */
}

/* The sum of v over the lanes present, added to *dst by one of them (by
 * each lane before sm_80, which has no warp reduction). */
static __device__ void steady_count(ull *dst, uint32_t v) {
#if __CUDA_ARCH__ >= 800
    uint32_t m = __activemask(), s = __reduce_add_sync(m, v);
    if (wh_lane_id() == wh_leader(m)) atomicAdd(dst, (ull)s);
#else
    if (v) atomicAdd(dst, (ull)v);
#endif
}

/* One churn round: object i = t * per + k is replaced with probability
 * prob / 2^32 (prob = 2^32 - 1: every object, the first fill).  ops: allocations,
 * frees, failed allocations. */
static __global__ void steady_churn_round(wh_heap h, uint32_t per, uint64_t threads, uint64_t seed, uint32_t prob,
                                          void **ptrs, uint32_t *req, ull *ops) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    uint32_t na = 0, nf = 0, nx = 0;
    for (uint32_t k = 0; k < per; ++k) {
        uint64_t i = t * per + k;
        if (prob != 0xFFFFFFFFu && (uint32_t)wh_hash64(seed ^ (i * 0x9E3779B97F4A7C15ull)) > prob) continue;
        void *p = ptrs[i];
        if (p) {
            wh_free_as(&h, STEADY_KIND, p);
            nf++;
        }
        uint32_t n = steady_size(seed + 0x5BD1E995ull * (i + 1u));
        p = wh_malloc_as(&h, STEADY_KIND, n);
        ptrs[i] = p;
        req[i] = p ? n : 0u;
        if (p)
            na++;
        else
            nx++;
    }
    steady_count(&ops[0], na);
    steady_count(&ops[1], nf);
    steady_count(&ops[2], nx);
}

/* Equation 2 over the live objects: sums of (slot - request) / slot (sum[0]),
 * requested bytes (sum[1]) and live objects (sum[2]). */
static __global__ void steady_frag(wh_heap h, uint64_t n, void *const *ptrs, const uint32_t *req, double *sum) {
    double f = 0, r = 0, live = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        if (!ptrs[i]) continue;
        double slot = (double)wh__slab_size(wh__slab_class_of(&h, req[i]));
        f += (slot - (double)req[i]) / slot;
        r += (double)req[i];
        live += 1.0;
    }
    for (int d = 16; d > 0; d >>= 1) {
        f += __shfl_down_sync(0xFFFFFFFFu, f, d);
        r += __shfl_down_sync(0xFFFFFFFFu, r, d);
        live += __shfl_down_sync(0xFFFFFFFFu, live, d);
    }
    if (wh_lane_id() == 0) {
        atomicAdd(&sum[0], f);
        atomicAdd(&sum[1], r);
        atomicAdd(&sum[2], live);
    }
}

void heap_class_census(const wh_heap *h, heap_census *out) {
    uint32_t np = h->npages;
    uint32_t *info = (uint32_t *)malloc(np * sizeof *info), *used = (uint32_t *)malloc(np * sizeof *used);
    ull part[WH_SLAB_CLASSES] = {0};
    if (!info || !used) {
        fprintf(stderr, "heap_bench: no host memory for the census of %u pages\n", np);
        exit(1);
    }
    WH_CUDA_OR_DIE(cudaMemcpy(info, h->page_info, np * sizeof *info, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(used, h->page_used, np * sizeof *used, cudaMemcpyDeviceToHost));
    memset(out, 0, sizeof *out);
    for (uint32_t p = 0; p < np; ++p) {
        uint32_t c = WH_PAGE_CLASS(info[p]);
        if (info[p] & (WH_PAGE_RUN_HEAD | WH_PAGE_RUN_TAIL) || c >= WH_SLAB_CLASSES) continue;
        if (!used[p])
            out->empty++;
        else if (used[p] == wh__slab_spp(c))
            out->full++;
        else
            out->part++, part[c]++;
    }
    for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c)
        if (part[c] > out->part_most) out->part_most = part[c], out->part_most_class = c;
    free(info);
    free(used);
}

void heap_bench_prof(const wh_heap *h, const char *label) {
#ifdef WH_HEAP_PROFILE
    static const char *names[WH_PROF_COUNT] = WH_PROF_NAMES;
    ull v[WH_PROF_COUNT];
    WH_CUDA_OR_DIE(cudaMemcpy(v, h->ctl->prof, sizeof v, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemset(h->ctl->prof, 0, sizeof v));
    printf("prof    %s:", label);
    for (int i = 0; i < WH_PROF_COUNT; ++i) printf(" %s %llu", names[i], v[i]);
    printf("\n");
    /* the page pool: free pages, whole aligned free runs of the largest
     * segment, and the class pages by live slots */
    uint32_t words = wh_bitmap_level_words(&h->pages, 0), shift = 0;
    for (uint32_t c = 0; c < WH_SLAB_CLASSES; ++c) shift = h->seg_shift[c] > shift ? h->seg_shift[c] : shift;
    uint64_t *pw = (uint64_t *)malloc(words * sizeof *pw);
    if (!pw) {
        fprintf(stderr, "heap_bench: no host memory for the pool census of %u pages\n", h->npages);
        exit(1);
    }
    WH_CUDA_OR_DIE(cudaMemcpy(pw, wh_bitmap_word(&h->pages, 0, 0), words * sizeof *pw, cudaMemcpyDeviceToHost));
    uint64_t free_pages, runs = wh__prof_free_runs(pw, words, shift, &free_pages);
    heap_census cs;
    heap_class_census(h, &cs);
    printf("pool    %s: pages %u free %llu runs_free %llu of %llu pages; class pages held empty %llu full %llu "
           "part %llu\n",
           label, h->npages, (ull)free_pages, (ull)runs, 1ull << shift, cs.empty, cs.full, cs.part);
    free(pw);
#else
    (void)h;
    (void)label;
#endif
}

static double steady_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static FILE *steady_csv(const steady_run *r, const char *name, const char *columns) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", r->out, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "heap_bench: cannot write %s\n", path);
        exit(1);
    }
    fprintf(f, "%s\n%s\n", r->header, columns);
    return f;
}

static void steady_create(wh_heap *h, const steady_run *r, uint64_t bytes) {
    wh_heap_config cfg = {bytes, STEADY_KIND, r->flags, r->ways, 0, NULL};
    if (wh_heap_create(h, &cfg) != WH_OK) {
        fprintf(stderr, "heap_bench: steady heap of %llu bytes: %s\n", (ull)bytes, wh_last_error());
        exit(1);
    }
}

static void steady_destroy(wh_heap *h) {
    if (wh_heap_destroy(h) != WH_OK) {
        fprintf(stderr, "heap_bench: destroy: %s\n", wh_last_error());
        exit(1);
    }
}

static wh_heap_usage steady_walk(const wh_heap *h) {
    wh_heap_usage u;
    if (wh_heap_stats(h, &u) != WH_OK) {
        fprintf(stderr, "heap_bench: stats: %s\n", wh_last_error());
        exit(1);
    }
    return u;
}

/* The mean slot of the mixed requests in heap h (from 2^20 of them). */
static double steady_mean_slot(const wh_heap *h) {
    double s = 0;
    for (uint64_t i = 0; i < (1u << 20); ++i) s += wh__slab_size(wh__slab_class_of(h, steady_size(i)));
    return s / (double)(1u << 20);
}

static uint32_t steady_blocks(uint64_t threads) { return (uint32_t)((threads + 255u) / 256u); }

/* Launch each timed kernel once with no work (count 0: every thread returns
 * at once), untimed: the driver loads a kernel's code at its first launch
 * (CUDA's lazy loading), which would otherwise add a few milliseconds to the
 * first round's host-timed fill. */
static void steady_load(const wh_heap *h) {
    steady_fill<<<1, 32>>>(*h, 16, 0, 0, NULL, NULL);
    WH_LAUNCH_OR_DIE();
    steady_empty<<<1, 32>>>(*h, 0, NULL);
    WH_LAUNCH_OR_DIE();
    steady_churn_round<<<1, 32>>>(*h, 1, 0, 0, 0, NULL, NULL, NULL);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
}

int steady_rounds(const steady_run *r) {
    static const uint32_t sizes[] = {16, 256, 4096, 0};
    FILE *csv = steady_csv(r, "heap_rounds.csv",
                           "size,round,count,alloc_ms,allocs_per_s,failed,free_ms,frees_per_s,live_after_alloc,"
                           "live_after_free,used_after_free,inconsistencies");
    wh_heap h;
    steady_create(&h, r, r->round_bytes);
    steady_load(&h);
    ull *d_fails;
    int unsound = 0;
    WH_CUDA_OR_DIE(cudaMalloc(&d_fails, sizeof *d_fails));
    fprintf(r->md,
            "\n## Fill 90%%, free all, again: %u rounds, DEFAULT, %llu-byte heap\n\n"
            "One allocation per thread, then one free per thread; host-timed from the launch to the synchronize "
            "(each kernel launched once with no work before, untimed: the driver loads its code then). "
            "Walk: live regions after the fill / after the free, bytes in use after the free, broken invariants.\n\n"
            "| size | round | allocations / s | frees / s | failed | walk |\n|---|---|---|---|---|---|\n",
            r->rounds, (ull)r->round_bytes);
    for (unsigned s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
        double slot = sizes[s] ? (double)sizes[s] : steady_mean_slot(&h);
        uint64_t count = (uint64_t)(0.9 * (double)r->round_bytes / slot);
        void **ptrs;
        WH_CUDA_OR_DIE(cudaMalloc(&ptrs, count * sizeof *ptrs));
        for (uint32_t k = 0; k < r->rounds; ++k) {
            WH_CUDA_OR_DIE(cudaMemset(d_fails, 0, sizeof *d_fails));
            WH_CUDA_OR_DIE(cudaDeviceSynchronize());
            double t0 = steady_now();
            steady_fill<<<steady_blocks(count), 256>>>(h, sizes[s], (uint64_t)k * count, count, ptrs, d_fails);
            WH_LAUNCH_OR_DIE();
            WH_CUDA_OR_DIE(cudaDeviceSynchronize());
            double a_ms = (steady_now() - t0) * 1e3;
            ull fails;
            WH_CUDA_OR_DIE(cudaMemcpy(&fails, d_fails, sizeof fails, cudaMemcpyDeviceToHost));
            char label[64];
            snprintf(label, sizeof label, "default rounds size %u round %u fill", sizes[s], k);
            heap_bench_prof(&h, label);
            wh_heap_usage ua = steady_walk(&h);
            t0 = steady_now();
            steady_empty<<<steady_blocks(count), 256>>>(h, count, ptrs);
            WH_LAUNCH_OR_DIE();
            WH_CUDA_OR_DIE(cudaDeviceSynchronize());
            double f_ms = (steady_now() - t0) * 1e3;
            snprintf(label, sizeof label, "default rounds size %u round %u free", sizes[s], k);
            heap_bench_prof(&h, label);
            wh_heap_usage uf = steady_walk(&h);
            ull bad = ua.inconsistencies + uf.inconsistencies;
            double ar = (double)(count - fails) / (a_ms * 1e-3), fr = (double)(count - fails) / (f_ms * 1e-3);
            fprintf(csv, "%u,%u,%llu,%.4f,%.4g,%llu,%.4f,%.4g,%llu,%llu,%llu,%llu\n", sizes[s], k, (ull)count, a_ms, ar,
                    fails, f_ms, fr, (ull)ua.allocations, (ull)uf.allocations, (ull)uf.used_bytes, bad);
            fflush(csv);
            printf("rounds  default size %4u round %u: %llu allocations %.3f ms (%.3g/s, %llu failed), frees %.3f ms "
                   "(%.3g/s); walk %llu live / %llu live, %llu bytes used, %llu inconsistencies\n",
                   sizes[s], k, (ull)count, a_ms, ar, fails, f_ms, fr, (ull)ua.allocations, (ull)uf.allocations,
                   (ull)uf.used_bytes, bad);
            bool sound = !bad && !uf.allocations && !uf.used_bytes && ua.allocations == count - fails;
            unsound += !sound;
            char name[32];
            snprintf(name, sizeof name, sizes[s] ? "%u B" : "mixed", sizes[s]);
            fprintf(r->md, "| %s | %u | %.3g | %.3g | %llu | %s |\n", name, k, ar, fr, fails,
                    sound ? "sound" : "**LEAK OR INCONSISTENCY** (see heap_rounds.csv)");
        }
        WH_CUDA_OR_DIE(cudaFree(ptrs));
        if (wh_heap_reset(&h) != WH_OK) {
            fprintf(stderr, "heap_bench: reset: %s\n", wh_last_error());
            exit(1);
        }
    }
    WH_CUDA_OR_DIE(cudaFree(d_fails));
    steady_destroy(&h);
    fclose(csv);
    return unsound;
}

int steady_churn(const steady_run *r) {
    const uint32_t per = 8;
    FILE *csv = steady_csv(r, "heap_churn.csv",
                           "round,replace,allocs,frees,failed,ms,ops_per_s,live,requested_bytes,used_bytes,"
                           "internal_frag,external_frag,inconsistencies");
    wh_heap h;
    steady_create(&h, r, r->churn_bytes);
    steady_load(&h);
    uint64_t objects = (uint64_t)(0.6 * (double)r->churn_bytes / steady_mean_slot(&h));
    uint64_t threads = objects / per, n = threads * per;
    void **ptrs;
    uint32_t *req;
    ull *ops;
    double *sum;
    WH_CUDA_OR_DIE(cudaMalloc(&ptrs, n * sizeof *ptrs));
    WH_CUDA_OR_DIE(cudaMalloc(&req, n * sizeof *req));
    WH_CUDA_OR_DIE(cudaMalloc(&ops, 3 * sizeof *ops));
    WH_CUDA_OR_DIE(cudaMalloc(&sum, 3 * sizeof *sum));
    WH_CUDA_OR_DIE(cudaMemset(ptrs, 0, n * sizeof *ptrs));
    fprintf(r->md,
            "\n## Churn: %u rounds, DEFAULT, %llu-byte heap, %llu threads x %u objects\n\n"
            "Round 0 allocates every object; each later round replaces each object with the round's probability. "
            "Internal fragmentation: equation 2 over the live objects; external: equation 3 (the walk). "
            "Every round: heap_churn.csv; plot: heap_churn.png.\n\n"
            "| round | replaced | operations / s | failed | live | requested / heap | internal | external | walk |\n"
            "|---|---|---|---|---|---|---|---|---|\n",
            r->churn_rounds, (ull)r->churn_bytes, (ull)threads, per);
    ull failed_total = 0, bad_total = 0;
    double rate_min = 0, rate_max = 0;
    for (uint32_t k = 0; k <= r->churn_rounds; ++k) {
        double p = k ? 0.05 + 0.45 * (double)(wh_hash64(k) >> 11) / 9007199254740992.0 : 1.0;
        uint32_t prob = k ? (uint32_t)(p * 4294967295.0) : 0xFFFFFFFFu;
        WH_CUDA_OR_DIE(cudaMemset(ops, 0, 3 * sizeof *ops));
        WH_CUDA_OR_DIE(cudaDeviceSynchronize());
        double t0 = steady_now();
        steady_churn_round<<<steady_blocks(threads), 256>>>(h, per, threads, wh_hash64(k + 1u), prob, ptrs, req, ops);
        WH_LAUNCH_OR_DIE();
        WH_CUDA_OR_DIE(cudaDeviceSynchronize());
        double ms = (steady_now() - t0) * 1e3;
        char label[64];
        snprintf(label, sizeof label, "default churn round %u", k);
        heap_bench_prof(&h, label);
        ull o[3];
        double f[3];
        WH_CUDA_OR_DIE(cudaMemcpy(o, ops, sizeof o, cudaMemcpyDeviceToHost));
        WH_CUDA_OR_DIE(cudaMemset(sum, 0, 3 * sizeof *sum));
        steady_frag<<<1024, 256>>>(h, n, ptrs, req, sum);
        WH_LAUNCH_OR_DIE();
        WH_CUDA_OR_DIE(cudaMemcpy(f, sum, sizeof f, cudaMemcpyDeviceToHost));
        wh_heap_usage u = steady_walk(&h);
        double rate = (double)(o[0] + o[1]) / (ms * 1e-3), internal = f[2] > 0 ? f[0] / f[2] : 0;
        if (k) { /* the fill is no churn */
            rate_min = rate_min == 0 || rate < rate_min ? rate : rate_min;
            rate_max = rate > rate_max ? rate : rate_max;
        }
        bool sound = !u.inconsistencies && u.allocations == (uint64_t)f[2];
        failed_total += o[2];
        bad_total += !sound;
        fprintf(csv, "%u,%.4f,%llu,%llu,%llu,%.4f,%.4g,%llu,%.0f,%llu,%.5f,%.5f,%llu\n", k, p, o[0], o[1], o[2], ms,
                rate, (ull)u.allocations, f[1], (ull)u.used_bytes, internal, u.external_frag, (ull)u.inconsistencies);
        fflush(csv);
        printf(
            "churn   default round %3u: replace %.2f, %llu allocations %llu frees %llu failed, %.3f ms (%.3g ops/s); "
            "%llu live, internal %.4f external %.4f, %llu inconsistencies\n",
            k, p, o[0], o[1], o[2], ms, rate, (ull)u.allocations, internal, u.external_frag, (ull)u.inconsistencies);
        if (k <= 2 || k % 10 == 0)
            fprintf(r->md, "| %u | %.2f | %.3g | %llu | %llu | %.3f | %.4f | %.4f | %s |\n", k, p, rate, o[2],
                    (ull)u.allocations, f[1] / (double)r->churn_bytes, internal, u.external_frag,
                    sound ? "sound" : "**INCONSISTENT**");
    }
    /* everything back: nothing may stay in use */
    steady_empty<<<steady_blocks(n), 256>>>(h, n, ptrs);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    wh_heap_usage u = steady_walk(&h);
    fprintf(r->md,
            "\nChurn rounds 1-%u: %.3g to %.3g operations / s, %llu failed allocations, %llu rounds with an "
            "unsound walk; after freeing everything: %llu live, %llu bytes in use, %llu inconsistencies.\n",
            r->churn_rounds, rate_min, rate_max, failed_total, bad_total, (ull)u.allocations, (ull)u.used_bytes,
            (ull)u.inconsistencies);
    printf("churn   default: all freed: %llu live, %llu bytes used, %llu inconsistencies\n", (ull)u.allocations,
           (ull)u.used_bytes, (ull)u.inconsistencies);
    WH_CUDA_OR_DIE(cudaFree(ptrs));
    WH_CUDA_OR_DIE(cudaFree(req));
    WH_CUDA_OR_DIE(cudaFree(ops));
    WH_CUDA_OR_DIE(cudaFree(sum));
    steady_destroy(&h);
    fclose(csv);
    return (int)bad_total + (u.allocations || u.used_bytes || u.inconsistencies);
}
