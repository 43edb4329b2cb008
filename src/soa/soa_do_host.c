/* SPDX-License-Identifier: MIT */
/* Object allocator, CPU backend of parallel_do (DynaSOAr section 3.7): the
 * iteration-bitmap snapshot and the compact block array by the host form of
 * Alg. 5 (wh_bitmap_indices_host), then the blocks split among host threads.
 * Same semantics as the GPU path: objects created while it runs are not
 * visited, an object may destroy itself. */
#include "soa_internal.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct for_job {
    uint64_t k0, k1;
    wh__soa_for_fn fn;
    const void *ctx;
} for_job;

static void *for_main(void *p) {
    for_job *j = (for_job *)p;
    j->fn(j->k0, j->k1, j->ctx);
    return NULL;
}

void wh__soa_for_host(uint64_t n, uint32_t threads, wh__soa_for_fn fn, const void *ctx) {
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    if (n < threads) threads = (uint32_t)(n ? n : 1);
    pthread_t tid[64];
    for_job job[64];
    bool started[64] = {false};
    for (uint32_t i = 0; i < threads; ++i) {
        job[i] = (for_job){n * i / threads, n * (i + 1) / threads, fn, ctx};
        /* share 0 runs here; so does the share of a thread that failed to start */
        if (i > 0) started[i] = pthread_create(&tid[i], NULL, for_main, &job[i]) == 0;
    }
    for (uint32_t i = 0; i < threads; ++i)
        if (!started[i]) fn(job[i].k0, job[i].k1, ctx);
    for (uint32_t i = 0; i < threads; ++i)
        if (started[i]) pthread_join(tid[i], NULL);
}

typedef struct do_args {
    const wh_soa *s;
    uint32_t t;
    wh__soa_range_fn fn;
    const void *ctx;
} do_args;

static void do_range(uint64_t k0, uint64_t k1, const void *p) {
    const do_args *a = (const do_args *)p;
    a->fn(a->s, a->t, a->s->do_blocks, (uint32_t)k0, (uint32_t)k1, a->ctx);
}

wh_status wh__soa_do_host(const wh_soa *s, uint32_t t, wh__soa_range_fn fn, const void *ctx) {
    if (!s || t >= s->ntypes || s->on_device) return WH_ERR_INVALID_ARGUMENT;
    uint32_t n = wh_bitmap_indices_host(&s->alloc_blocks[t], s->do_blocks);
    uint64_t usable = wh__soa_usable(s->cap[t]);
    for (uint32_t k = 0; k < n; ++k) {
        uint32_t b = s->do_blocks[k];
        uint64_t a = wh_atomic_load(wh__soa_alloc_word(s, b), WH_ACQUIRE);
        wh_atomic_store(wh__soa_iter_word(s, b), a & usable, WH_RELAXED);
    }
    *s->do_count = n;
    do_args args = {s, t, fn, ctx};
    wh__soa_for_host(n, s->cpu_threads, do_range, &args);
    return WH_OK;
}
