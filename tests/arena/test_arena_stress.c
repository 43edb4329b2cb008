/* SPDX-License-Identifier: MIT */
/* Stream arena under concurrency on the CPU backend: pthreads allocate and
 * free directly (wh_arena_alloc_warp / wh_arena_free_warp: the lock word and
 * the single-threaded core behind it) with the same loop the GPU test runs,
 * while the main thread enqueues commands on slots of its own.  Then the
 * overlap oracle and the heap walk.  And RING reservations by one thread,
 * committed by another with the lock handed back and forth
 * (test_ring_pipeline).  Runs under ThreadSanitizer in CI. */
#include "arena_oracle.h"
#include "wh_cli.h"
#include "wh_test.h"

#include <stdlib.h>
#include <string.h>

enum { K = 64 };

typedef struct job {
    wh_arena *a;
    uint32_t steps;
    wh_handle *slots;
    uint64_t *bytes, *strides;
    wh_fuzz_counts *counts;
} job;

static void run(unsigned t, void *p) {
    job *j = (job *)p;
    wh_fuzz_thread(wh_arena_device(j->a), 1u, t, K, j->steps, 65536, j->slots, j->bytes, j->strides, &j->counts[t]);
}

/* The ring pipeline of marching cubes' one-kernel frame, in two threads:
 * thread 0 reserves frame after frame (the lock handed on by the last
 * commit through a baton word, or taken at a chain's start; the
 * reservation announced after a fence), thread 1 commits each one as a
 * commit launched ahead does (waits, bounded, for it; the next plan on a
 * scratch copy; the lock handed on, the chain's last commit unlocks) --
 * or, with `chain`, as one committer for a whole chain that keeps its copy
 * of the image from frame to frame (WH_ARENA_COMMIT_AHEAD: it
 * reloads only the reserve's words and only allocates).  A twin arena runs
 * the same replaces as commands: both rings and both block cores end
 * equal, byte for byte, and the walk accounts for every byte. */
enum { RING_K = 3, RING_CHAIN = 16, RING_TRIES = 1 << 26 };
typedef struct ring_job {
    wh_arena *a;
    wh_arena_span ring[RING_K];
    uint32_t frames, baton, timeouts, handed, failed;
    bool chain;
    void *scratch;
    size_t meta;
} ring_job;

static uint64_t ring_count(uint32_t f) {
    return f % 37 == 36 ? 0 : 2000 + (wh_hash64(f) % 6000u) + (f % 29 == 28 ? 60000 : 0);
}
static bool ring_chain_ends(const ring_job *j, uint32_t f) { return (f + 1) % RING_CHAIN == 0 || f + 1 == j->frames; }

static void ring_reserver(ring_job *j) {
    wh_arena_ref r = wh_arena_device(j->a);
    for (uint32_t f = 0; f < j->frames; ++f) {
        wh_arena_ring_ticket tk;
        wh_status st = WH_OK;
        if (f % RING_CHAIN != 0) { /* handed on: wait for the baton, then only read */
            uint32_t b = 0;
            wh_wait w = wh_wait_begin(RING_TRIES);
            while (wh_wait_more(&w) && (b = wh_atomic_load(&j->baton, WH_ACQUIRE)) == 0) wh_wait_backoff(&w, ~0u);
            CHECK(b == 1u);
            if (b != 1u) {
                j->timeouts++;
                return;
            }
            wh_atomic_store(&j->baton, 0u, WH_RELAXED); /* before the announce: the next commit adds after it */
            wh_arena_ring_reserve_read_handed(r, &j->ring[f % RING_K], &tk);
            j->handed++;
        } else {
            st = wh_arena_ring_reserve_begin(r, &j->ring[f % RING_K], RING_TRIES, &tk);
            CHECK(st == WH_OK);
            if (st != WH_OK) {
                j->timeouts++;
                return;
            }
        }
        st = wh_arena_ring_reserve_end_deferred(r, &tk, ring_count(f), 36, &j->ring[(f + 1) % RING_K]);
        j->failed += st != WH_OK;
        wh_fence();
        wh_arena_ring_reserve_publish(r);
    }
}

static void ring_committer(ring_job *j) {
    wh_arena_ref r = wh_arena_device(j->a);
    wh_arena_ring_baton b = {&j->baton, 1u, 2u};
    for (uint32_t f = 0; j->chain && f < j->frames; f += RING_CHAIN) { /* a committer a chain */
        uint32_t n = j->frames - f < RING_CHAIN ? j->frames - f : RING_CHAIN;
        wh_arena_commit c = {.mode = WH_ARENA_COMMIT_AHEAD,
                             .ring = j->ring,
                             .k = RING_K,
                             .first = f,
                             .frames = n,
                             .tries = RING_TRIES,
                             .smem = j->scratch,
                             .smem_bytes = 2 * j->meta,
                             .baton = b};
        wh_status st = wh_arena_ring_commit(r, &c);
        j->timeouts += st == WH_ERR_RETRY_LIMIT;
    }
    for (uint32_t f = 0; !j->chain && f < j->frames; ++f) {
        wh_wait w = wh_wait_begin(RING_TRIES);
        while (wh_wait_more(&w) && !wh__ring_pending_for(r.s, &j->ring[f % RING_K])) wh_wait_backoff(&w, ~0u);
        CHECK(wh_wait_more(&w));
        if (!wh_wait_more(&w)) {
            j->timeouts++;
            return;
        }
        wh_arena_commit c = {.mode = WH_ARENA_COMMIT_NOW,
                             .ring = j->ring,
                             .k = RING_K,
                             .first = f,
                             .smem = j->scratch,
                             .smem_bytes = j->meta,
                             .last = ring_chain_ends(j, f) ? wh_arena_ring_unlock_baton() : b};
        (void)wh_arena_ring_commit(r, &c);
    }
}

static void run_ring(unsigned t, void *p) {
    if (t == 0)
        ring_reserver((ring_job *)p);
    else
        ring_committer((ring_job *)p);
}

/* The one-pass frame on a forecast ring (arena/forecast.h) in six threads,
 * as marching cubes' one-pass kernel and its committer run it: thread 1,
 * the committer, takes the lock for each chain of RING_CHAIN frames, makes
 * the forecast and publishes the chain's first window, then commits the
 * frames' posts in order (WH_ARENA_COMMIT_POSTS); four
 * producers write their quarter of frame f's elements through the window
 * published for it; the closer (the kernel's last ticket), once all four
 * are done, clamps the count to the window, runs the replace on the
 * forecast, posts it (once the committer has consumed the post that had its
 * place), publishes the next frame's window at once (at a chain's end,
 * once the committer has stamped the forecast exact, and only if it still
 * is: else the next committer publishes it), then -- once the committer
 * has consumed its post -- reads every element back through the slot.  The producer side never takes the lock.  The twin
 * replays the counts that went through, and the arena counts exactly the
 * failures the forecast announced. */
enum { WIN_PRODUCERS = 4, WIN_THREADS = 2 + WIN_PRODUCERS, WIN_POSTS = 8 };
typedef struct window_job {
    ring_job r;
    wh_arena_forecast fc;
    wh_arena_span w[2]; /* frame f's window in w[f % 2], published by tag[f % 2] = f + 1 */
    wh_arena_ring_post posts[WIN_POSTS];
    uint32_t tag[2], consumed, chains, written, bad, clamped, failing, forecast, chained;
    uint64_t *counts; /* [frames]: what went through the window */
    void *open_scratch;
} window_job;

static uint32_t win_word(uint32_t f, uint64_t i) { return (uint32_t)(f * 2654435761u) ^ (uint32_t)i; }
/* Frame f's count: the pipeline's, every 53rd more than the region holds (clamped). */
static uint64_t win_target(uint32_t f) { return ring_count(f) + (f % 53 == 52 ? 120000u : 0u); }
/* Wait (bounded, as the library waits: wh_wait) until *word reaches want;
 * false on a timeout. */
static bool win_wait(const uint32_t *word, uint32_t want) {
    for (wh_wait w = wh_wait_begin(RING_TRIES); wh_wait_more(&w); wh_wait_backoff(&w, ~0u))
        if (wh_atomic_load(word, WH_ACQUIRE) >= want) return true;
    return false;
}

static void window_committer(window_job *j) {
    ring_job *rj = &j->r;
    for (uint32_t f = 0; f < rj->frames; f += RING_CHAIN) {
        uint32_t n = rj->frames - f < RING_CHAIN ? rj->frames - f : RING_CHAIN;
        wh_arena_ring_posts p = {j->posts,     WIN_POSTS,      f,     &j->consumed, 36, &j->fc,
                                 &j->w[f % 2], &j->tag[f % 2], f + 1u};
        wh_arena_commit c = {.mode = WH_ARENA_COMMIT_POSTS,
                             .ring = rj->ring,
                             .k = RING_K,
                             .first = f % RING_K,
                             .frames = n,
                             .tries = RING_TRIES,
                             .smem = j->open_scratch,
                             .smem_bytes = rj->meta,
                             .posts = &p};
        wh_status st = wh_arena_ring_commit(wh_arena_device(rj->a), &c);
        if (st == WH_ERR_RETRY_LIMIT) {
            rj->timeouts++;
            return;
        }
        wh_atomic_fetch_add(&j->chains, 1u, WH_RELEASE); /* the chain over (a stream's join) */
    }
}

static void window_producer(window_job *j, unsigned q) {
    for (uint32_t f = 0; f < j->r.frames; ++f) {
        if (!win_wait(&j->tag[f % 2], f + 1u)) {
            j->r.timeouts++;
            return;
        }
        const wh_arena_span *w = &j->w[f % 2];
        uint64_t t = win_target(f), n = t < w->count ? t : w->count, lo = n * q / WIN_PRODUCERS,
                 hi = n * (q + 1u) / WIN_PRODUCERS;
        for (uint64_t i = lo; i < hi; ++i) *(uint32_t *)wh_arena_span_at(w, i, 36) = win_word(f, i);
        wh_atomic_fetch_add(&j->written, 1u, WH_RELEASE);
    }
}

static void window_closer(window_job *j) {
    ring_job *rj = &j->r;
    for (uint32_t f = 0; f < rj->frames; ++f) {
        if (!win_wait(&j->tag[f % 2], f + 1u) || !win_wait(&j->written, WIN_PRODUCERS * (f + 1u)) ||
            !win_wait(&j->consumed, f + 1u > WIN_POSTS ? f + 1u - WIN_POSTS : 0u)) {
            rj->timeouts++;
            return;
        }
        const wh_arena_span *w = &j->w[f % 2];
        uint64_t t = win_target(f), n = t < w->count ? t : w->count;
        j->counts[f] = n;
        wh_arena_ring_post *p = &j->posts[f % WIN_POSTS];
        p->count = n;
        p->clamped = n < t;
        p->fstatus = (uint32_t)wh_arena_ring_forecast_replace(&j->fc, f % RING_K, n, 36, &p->forecast);
        j->clamped += p->fstatus == WH_OK && p->clamped;
        j->failing += p->fstatus != WH_OK;
        wh_atomic_store(&p->seq, f + 1u, WH_RELEASE);
        if (!ring_chain_ends(rj, f) && j->fc.valid) { /* the next frame's window, now */
            wh_arena_ring_forecast_window(&j->fc, (f + 1) % RING_K, 36, &j->w[(f + 1) % 2]);
            wh_atomic_store(&j->tag[(f + 1) % 2], f + 2u, WH_RELEASE);
            j->forecast++;
        }
        if (!win_wait(&j->consumed, f + 1u)) {
            rj->timeouts++;
            return;
        } /* committed: the slot is written */
        if (ring_chain_ends(rj, f) && !win_wait(&j->chains, f / RING_CHAIN + 1u)) {
            rj->timeouts++;
            return;
        }
        if (ring_chain_ends(rj, f) && f + 1u < rj->frames &&                  /* the next chain's first window: */
            wh_arena_ring_forecast_current(&j->fc, wh_arena_device(rj->a))) { /* here, or the committer's       */
            wh_arena_ring_forecast_window(&j->fc, (f + 1) % RING_K, 36, &j->w[(f + 1) % 2]);
            wh_atomic_store(&j->tag[(f + 1) % 2], f + 2u, WH_RELEASE);
            j->chained++;
        }
        const wh_arena_span *sp = &rj->ring[f % RING_K];
        if (sp->part[0].ptr) { /* through the slot: what was written */
            CHECK(sp->count == n);
            for (uint64_t i = 0; i < n; ++i) j->bad += *(uint32_t *)wh_arena_span_at(sp, i, 36) != win_word(f, i);
        }
    }
}

static void run_window(unsigned t, void *p) {
    window_job *j = (window_job *)p;
    if (t == 0)
        window_closer(j);
    else if (t == 1)
        window_committer(j);
    else
        window_producer(j, t - 2u);
}

/* The arena of every ring test: a RING of 4 MiB on the CPU backend. */
static wh_arena_config ring_config(void) {
    wh_arena_config cfg = {.bytes = 4u << 20,
                           .max_blocks = 64,
                           .backend = WH_ARENA_CPU,
                           .policy = WH_ARENA_RING,
                           .mirror = WH_ARENA_MIRROR_ON_FAILURE,
                           .index = WH_BLOCKS_LIST};
    return cfg;
}

/* A twin arena of the same configuration runs the frames' replaces as
 * commands (counts[f], or ring_count(f) without counts): both rings and both
 * block cores must end equal, byte for byte, and the walk account for every
 * byte. */
static void ring_twin(ring_job *j, const uint64_t *counts) {
    wh_arena_config cfg = ring_config();
    wh_arena *twin = NULL;
    CHECK(wh_arena_create(&twin, &cfg) == WH_OK);
    if (!twin) return;
    wh_arena_span r_ring[RING_K];
    memset(r_ring, 0, sizeof r_ring);
    for (uint32_t f = 0; f < j->frames; ++f) {
        size_t n = (size_t)(counts ? counts[f] : ring_count(f));
        CHECK(wh_arena_replace_span_async(twin, &n, 36, &r_ring[f % RING_K], NULL) == WH_OK);
    }
    uint64_t rbase = (uintptr_t)wh_arena_base(twin), base = (uintptr_t)wh_arena_base(j->a);
    for (int i = 0; i < RING_K; ++i)
        for (int p = 0; p < 2; ++p) {
            const wh_handle *x = &r_ring[i].part[p], *y = &j->ring[i].part[p];
            CHECK((x->ptr ? x->ptr - rbase : 0) == (y->ptr ? y->ptr - base : 0) && x->block == y->block &&
                  x->gen == y->gen);
        }
    wh__arena_state *rs = wh_arena_device(twin).s, *s = wh_arena_device(j->a).s;
    CHECK(memcmp((char *)rs + rs->gen_off, (char *)s + s->gen_off, j->meta - s->gen_off) == 0);
    wh_blocks_report rep;
    CHECK(wh_arena_check(j->a, &rep) == WH_OK);
    wh_arena_destroy(twin);
}

static void test_ring_pipeline(uint32_t frames, bool chain) {
    wh_arena_config cfg = ring_config();
    ring_job j;
    memset(&j, 0, sizeof j);
    j.frames = frames;
    j.chain = chain;
    CHECK(wh_arena_create(&j.a, &cfg) == WH_OK);
    if (!j.a) return;
    j.meta = wh_arena_meta_bytes(j.a);
    j.scratch = malloc(2 * j.meta);
    double t0 = wh_now_seconds();
    wh_run_threads(2, run_ring, &j);
    double dt = wh_now_seconds() - t0;
    CHECK_EQ_U64(j.timeouts, 0);
    CHECK(wh_atomic_load(&wh_arena_device(j.a).s->lock, WH_RELAXED) == 0u); /* the last commit unlocked */
    ring_twin(&j, NULL);
    wh__arena_state *s = wh_arena_device(j.a).s;
    uint64_t live = 0;
    for (int i = 0; i < RING_K; ++i) live += j.ring[i].part[0].ptr != 0;
    CHECK(j.handed >= frames - frames / RING_CHAIN - 1u && j.failed > 0);
    /* the kept copy: most commits only allocate (not the first of a chain, nor after a failure or a slow path) */
    CHECK(chain ? s->warm_commits > frames / 2 : s->warm_commits == 0);
    printf("ring pipeline%s: %u frames, %u with the lock handed on, %u failed, %llu commits that only allocated, "
           "%llu live spans, %.3f s\n",
           chain ? " (a committer a chain)" : "", frames, j.handed, j.failed, (unsigned long long)s->warm_commits,
           (unsigned long long)live, dt);
    free(j.scratch);
    wh_arena_destroy(j.a);
}

static void test_window_pipeline(uint32_t frames) {
    wh_arena_config cfg = ring_config();
    window_job j;
    memset(&j, 0, sizeof j);
    j.r.frames = frames;
    CHECK(wh_arena_create(&j.r.a, &cfg) == WH_OK);
    if (!j.r.a) return;
    j.r.meta = wh_arena_meta_bytes(j.r.a);
    j.open_scratch = malloc(j.r.meta);
    j.counts = (uint64_t *)calloc(frames, sizeof *j.counts);
    double t0 = wh_now_seconds();
    wh_run_threads(WIN_THREADS, run_window, &j);
    double dt = wh_now_seconds() - t0;
    CHECK_EQ_U64(j.r.timeouts, 0);
    CHECK_EQ_U64(j.bad, 0);
    CHECK(wh_atomic_load(&wh_arena_device(j.r.a).s->lock, WH_RELAXED) == 0u);
    ring_twin(&j.r, j.counts);
    wh_arena_stats st; /* exactly the failures the forecast announced: no WH_ERR_CORRUPT */
    CHECK(wh_arena_flush_async(j.r.a, NULL) == WH_OK && wh_arena_stats_get(j.r.a, &st) == WH_OK);
    CHECK(st.failures == (uint64_t)j.clamped + j.failing && st.first_status != WH_ERR_CORRUPT);
    /* every window forecast but the first: the forecast stays exact from chain to chain */
    CHECK(j.forecast == frames - (frames + RING_CHAIN - 1u) / RING_CHAIN && j.chained == (frames - 1u) / RING_CHAIN);
    CHECK(j.clamped > 0 && j.failing > 0);
    printf("window pipeline: %u frames, %u on a forecast window (%u a chain's first), %u clamped, %u failing as "
           "forecast, %.3f s\n",
           frames, j.forecast + j.chained, j.chained, j.clamped, j.failing, dt);
    free(j.counts);
    free(j.open_scratch);
    wh_arena_destroy(j.r.a);
}

int main(int argc, char **argv) {
    unsigned threads = 8;
    uint32_t steps = 20000, frames = 3000;
    wh_cli_opt cli[] = {WH_CLI_UINT("threads", &threads, "threads allocating and freeing directly"),
                        WH_CLI_UINT("steps", &steps, "operations per thread"),
                        WH_CLI_UINT("frames", &frames, "frames of each ring and window pipeline"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Stream arena under concurrency on the CPU backend.");
    size_t region = 64u << 20;
    wh_arena *a = NULL;
    wh_arena_config cfg = {.bytes = region, .max_blocks = 1u << 16, .backend = WH_ARENA_CPU};
    if (wh_arena_create(&a, &cfg) != WH_OK) {
        fprintf(stderr, "%s\n", wh_last_error());
        return 1;
    }
    uint32_t n = threads * K;
    wh_handle *slots = (wh_handle *)calloc(n, sizeof *slots);
    uint64_t *bytes = (uint64_t *)calloc(n, sizeof *bytes), *strides = (uint64_t *)calloc(n, sizeof *strides);
    wh_fuzz_counts *counts = (wh_fuzz_counts *)calloc(threads, sizeof *counts);
    job j = {a, steps, slots, bytes, strides, counts};
    double t0 = wh_now_seconds();
    wh_run_threads(threads, run, &j);
    double dt = wh_now_seconds() - t0;

    wh_fuzz_counts sum = {0, 0, 0, 0};
    for (unsigned t = 0; t < threads; ++t) {
        sum.allocs += counts[t].allocs;
        sum.frees += counts[t].frees;
        sum.failed_allocs += counts[t].failed_allocs;
        sum.failed_frees += counts[t].failed_frees;
    }
    uint64_t live = 0;
    CHECK_EQ_U64(wh_arena_oracle(slots, bytes, strides, n, (uintptr_t)wh_arena_base(a), region, &live, NULL), 0);
    wh_blocks_report rep;
    wh_status st = wh_arena_check(a, &rep);
    CHECK(st == WH_OK);
    if (st != WH_OK) fprintf(stderr, "%s\n", wh_last_error());
    CHECK_EQ_U64(rep.used, live);
    CHECK_EQ_U64(sum.allocs - sum.frees, live);
    CHECK_EQ_U64(sum.failed_frees, 0);
    CHECK_EQ_U64(sum.failed_allocs, 0); /* 64 MiB holds 512 blocks of <= 64 KiB */
    CHECK(wh_arena_status(a) == WH_OK);
    wh_arena_free_batch_async(a, slots, n, NULL);
    CHECK(wh_arena_check(a, &rep) == WH_OK && rep.used == 0 && rep.free == 1);
    printf("arena stress: %u threads, %llu allocs + %llu frees in %.3f s\n", threads, (unsigned long long)sum.allocs,
           (unsigned long long)sum.frees, dt);
    wh_arena_destroy(a);
    free(slots);
    free(bytes);
    free(strides);
    free(counts);
    test_ring_pipeline(frames, false);
    test_ring_pipeline(frames, true);
    test_window_pipeline(frames);
    return wh_test_finish("test_arena_stress");
}
