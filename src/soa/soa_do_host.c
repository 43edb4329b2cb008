/* SPDX-License-Identifier: MIT */
/* Object allocator, CPU backend of parallel_do (DynaSOAr section 3.7): the
 * iteration-bitmap snapshot and the compact block array by the host form of
 * Alg. 5 (wh_bitmap_indices_host), then the blocks split among host threads.
 * Same semantics as the GPU path: objects created while it runs are not
 * visited, an object may destroy itself. */
#include "soa_internal.h"

#include <pthread.h>
#include <stdlib.h>

/* The loop's chunks go to whoever takes them first (a counter), the caller
 * too, and the caller waits only for chunks being run, never for a helper
 * to start.  Helpers are threads kept asleep between loops and woken for
 * each: with a share fixed per thread, and threads made for every loop
 * (which the scheduler puts at the back of its queue), a helper that ran
 * late held up the whole loop, and beside two busy processes the object
 * allocator's examples ran at 6-8x their time on an idle machine.  A helper
 * that wakes after the last chunk is taken finds none; the job is on the
 * heap, and the last thread to let go of it frees it. */
#define WH__FOR_CHUNKS_PER_THREAD 4u
#define WH__FOR_HELPERS           63u

typedef struct for_job {
    uint64_t n, chunk, nchunks;
    uint64_t next;    /* the next chunk to take             */
    uint64_t done;    /* chunks run (release: their writes) */
    uint32_t refs;    /* threads that hold the job          */
    uint32_t helpers; /* helpers it may still take (lock)   */
    wh__soa_for_fn fn;
    const void *ctx;
} for_job;

static struct {
    pthread_mutex_t call; /* one loop at a time has the helpers  */
    pthread_mutex_t lock; /* job, gen, started                   */
    pthread_cond_t wake;
    for_job *job; /* the loop that takes helpers, or NULL */
    uint64_t gen; /* loops posted                         */
    uint32_t started;
} helpers = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0};

static void for_run(for_job *j) {
    for (;;) {
        uint64_t c = wh_atomic_fetch_add(&j->next, 1, WH_RELAXED);
        if (c >= j->nchunks) return;
        uint64_t k0 = c * j->chunk, k1 = k0 + j->chunk < j->n ? k0 + j->chunk : j->n;
        j->fn(k0, k1, j->ctx);
        (void)wh_atomic_fetch_add(&j->done, 1, WH_RELEASE);
    }
}

static void for_leave(for_job *j) {
    if (wh_atomic_fetch_sub(&j->refs, 1, WH_ACQ_REL) == 1) free(j);
}

static void *helper_main(void *arg) {
    (void)arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&helpers.lock);
    for (;;) {
        while (helpers.gen == seen) pthread_cond_wait(&helpers.wake, &helpers.lock);
        seen = helpers.gen;
        for_job *j = helpers.job;
        if (!j || j->helpers == 0) continue;
        j->helpers--;
        (void)wh_atomic_fetch_add(&j->refs, 1, WH_RELAXED); /* the caller's reference keeps it */
        pthread_mutex_unlock(&helpers.lock);
        for_run(j);
        for_leave(j);
        pthread_mutex_lock(&helpers.lock);
    }
    return NULL;
}

/* Under helpers.lock: at least `want` helpers asleep or at work. */
static void helpers_start(uint32_t want) {
    pthread_attr_t attr;
    if (helpers.started >= want || pthread_attr_init(&attr) != 0) return;
    if (pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0)
        for (pthread_t tid; helpers.started < want && pthread_create(&tid, &attr, helper_main, NULL) == 0;)
            helpers.started++;
    (void)pthread_attr_destroy(&attr);
}

void wh__soa_for_host(uint64_t n, uint32_t threads, wh__soa_for_fn fn, const void *ctx) {
    if (threads < 1) threads = 1;
    if (threads > WH__FOR_HELPERS + 1u) threads = WH__FOR_HELPERS + 1u;
    if (n < threads) threads = (uint32_t)(n ? n : 1);
    /* one thread, no memory for the job, or another loop has the helpers
     * (a loop of another thread, or one started from inside a loop's body):
     * all of it here */
    for_job *j = threads > 1 ? (for_job *)malloc(sizeof *j) : NULL;
    if (j && pthread_mutex_trylock(&helpers.call) != 0) {
        free(j);
        j = NULL;
    }
    if (!j) {
        if (n) fn(0, n, ctx);
        return;
    }
    uint64_t want = (uint64_t)threads * WH__FOR_CHUNKS_PER_THREAD;
    *j = (for_job){.n = n, .chunk = (n + want - 1) / want, .refs = 1, .helpers = threads - 1, .fn = fn, .ctx = ctx};
    j->nchunks = (n + j->chunk - 1) / j->chunk;
    pthread_mutex_lock(&helpers.lock);
    helpers_start(threads - 1);
    helpers.job = j;
    helpers.gen++;
    pthread_cond_broadcast(&helpers.wake);
    pthread_mutex_unlock(&helpers.lock);
    for_run(j);
    /* The chunks the helpers took are running or done: the loop's own work,
     * which ends, so this wait has no other bound.  It sleeps after a few
     * spins, which leaves the core to a helper that waits for one. */
    for (unsigned a = 0; wh_atomic_load(&j->done, WH_ACQUIRE) < j->nchunks; ++a) wh_backoff(a < 64u ? a : 64u);
    pthread_mutex_lock(&helpers.lock);
    helpers.job = NULL; /* no helper takes it from here on */
    pthread_mutex_unlock(&helpers.lock);
    pthread_mutex_unlock(&helpers.call);
    for_leave(j);
}

typedef struct do_args {
    const wh_soa *s;
    uint32_t t;
    wh__soa_range_fn fn;
    const void *ctx;
} do_args;

static void do_range(uint64_t k0, uint64_t k1, const void *p) {
    const do_args *a = (const do_args *)p;
    a->fn(a->s, a->t, (uint32_t)k0, (uint32_t)k1, a->ctx);
}

wh_status wh__soa_do_host(const wh_soa *s, uint32_t t, wh__soa_range_fn fn, const void *ctx, int again) {
    if (!s || t >= s->ntypes || s->on_device) return WH_ERR_INVALID_ARGUMENT;
    uint32_t n;
    if (again) { /* the snapshot stays; one of another type is visited by nobody */
        if (s->do_count[WH__SOA_DO_TYPE] != t + 1u) {
            wh__soa_count(s, WH_SOA_CTR_STALE_DO);
            return WH_OK;
        }
        n = s->do_count[0];
    } else {
        n = wh_bitmap_indices_host(&s->alloc_blocks[t], s->do_blocks);
        uint64_t usable = wh__soa_usable(s->cap[t]);
        for (uint32_t k = 0; k < n; ++k) {
            uint32_t b = s->do_blocks[k];
            s->do_iter[k] = wh_atomic_load(wh__soa_alloc_word(s, b), WH_ACQUIRE) & usable;
        }
        s->do_count[0] = n;
        s->do_count[WH__SOA_DO_TYPE] = t + 1u;
    }
    do_args args = {s, t, fn, ctx};
    wh__soa_for_host(n, s->cpu_threads, do_range, &args);
    return WH_OK;
}
