/* SPDX-License-Identifier: MIT */
/* Host pool stress on the CPU backend: many threads on one pool, each
 * allocating (plain and tagged, on a few shared streams, sometimes recording
 * a second stream), filling its blocks with an owner pattern and checking it
 * before free, and now and then queueing work on a stream (the CPU backend's
 * stream_busy hook: busy for up to 2 ms; blocks wait on the pending list and
 * in their stream's index meanwhile); one thread also runs the heap walk and
 * trims.  At
 * the end every thread's live blocks are checked for overlap, the walk must
 * account for every byte and the stats must balance; after the last free and
 * a trim nothing may stay reserved. */
#include "warpheap/pool.h"
#include "wh_cli.h"
#include "wh_test.h"

#include <pthread.h>
#include <string.h>

#define MAXLIVE 64u
#define STREAMS 4u

typedef struct {
    unsigned char *p;
    size_t n;
    uint64_t pattern;
} blk;
typedef struct {
    blk live[MAXLIVE];
    uint32_t nlive;
    uint64_t bad, ops, fails;
} thread_state;

static wh_pool *pool;
static uint32_t ops_per_thread;
static thread_state *states;
static uint64_t walk_errors;
static const char *const sites[4] = {"s0", "s1", "s2", "s3"};
/* A stream is busy until its deadline (ns): its work finishes by itself, as
 * on a GPU, so a thread that waits for it is never waiting for another
 * thread -- every wait ends, and how the threads are scheduled changes no
 * outcome. */
static uint64_t busy_until[STREAMS + 1];

static uint64_t now_ns(void) { return (uint64_t)(wh_now_seconds() * 1e9); }

static bool stress_busy(wh_stream s, void *user) {
    (void)user;
    return now_ns() < __atomic_load_n(&busy_until[(uintptr_t)s % (STREAMS + 1)], __ATOMIC_ACQUIRE);
}

/* Pattern in the first and last 256 bytes (the whole block when smaller). */
static void fill(blk *b) {
    size_t head = b->n < 256 ? b->n : 256;
    for (size_t i = 0; i < head; ++i) b->p[i] = (unsigned char)(b->pattern >> (8 * (i & 7)));
    for (size_t i = b->n - head; i < b->n; ++i) b->p[i] = (unsigned char)(b->pattern >> (8 * (i & 7)));
}
static bool intact(const blk *b) {
    size_t head = b->n < 256 ? b->n : 256;
    for (size_t i = 0; i < head; ++i)
        if (b->p[i] != (unsigned char)(b->pattern >> (8 * (i & 7)))) return false;
    for (size_t i = b->n - head; i < b->n; ++i)
        if (b->p[i] != (unsigned char)(b->pattern >> (8 * (i & 7)))) return false;
    return true;
}

static void worker(unsigned t, void *arg) {
    (void)arg;
    thread_state *st = &states[t];
    for (uint32_t i = 0; i < ops_per_thread; ++i) {
        uint64_t r = wh_hash64(((uint64_t)t << 32) + i);
        wh_stream s = (wh_stream)(uintptr_t)(1 + (r >> 40) % STREAMS);
        if (t == 0 && i % 2000 == 1999) {
            if (wh_pool_check(pool) != WH_OK) {
                fprintf(stderr, "walk: %s\n", wh_last_error());
                __atomic_fetch_add(&walk_errors, 1, __ATOMIC_RELAXED);
            }
            wh_pool_trim(pool, 1u << 20);
        }
        if ((r >> 10) % 512 == 0) /* work queued for up to 2 ms */
            __atomic_store_n(&busy_until[1 + (r >> 40) % STREAMS], now_ns() + (r >> 20) % 2000000u, __ATOMIC_RELEASE);
        if ((r % 100) < 55 && st->nlive < MAXLIVE) {
            size_t n = 1 + (r >> 8) % ((r >> 50) & 1 ? 2000 : 200000);
            const void *tag = (r >> 52) % 3 == 0 ? sites[(r >> 54) & 3] : NULL;
            void *p = tag ? wh_pool_alloc_tagged(pool, n, tag, s) : wh_pool_alloc(pool, n, s);
            if (!p) {
                st->fails++;
                continue;
            }
            blk *b = &st->live[st->nlive++];
            *b = (blk){p, n, wh_hash64(r) | 1};
            fill(b);
            if ((r >> 56) % 8 == 0) wh_pool_record_stream(pool, p, (wh_stream)(uintptr_t)(1 + (r >> 58) % STREAMS));
        } else if (st->nlive) {
            uint32_t k = (uint32_t)((r >> 20) % st->nlive);
            if (!intact(&st->live[k])) st->bad++;
            if (wh_pool_free(pool, st->live[k].p, s) != WH_OK) st->bad++;
            st->live[k] = st->live[--st->nlive];
        }
        st->ops++;
    }
}

static int by_addr(const void *a, const void *b) {
    const blk *x = a, *y = b;
    return x->p < y->p ? -1 : x->p > y->p;
}

int main(int argc, char **argv) {
    unsigned threads = 16;
    ops_per_thread = 60000;
    wh_cli_opt cli[] = {WH_CLI_UINT("threads", &threads, "threads on one pool"),
                        WH_CLI_UINT("ops", &ops_per_thread, "operations per thread"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Host pool stress on the CPU backend: many threads on one pool.");
    for (int kind = 0; kind < 4; ++kind) { /* TLSF, max-heap, TLSF in one range (VMM), 2 lanes for 4 streams */
        wh_pool_config c = {.backend = WH_POOL_CPU,
                            .index = kind == 1 ? WH_BLOCKS_MAXHEAP : WH_BLOCKS_TLSF,
                            .max_blocks = 1u << 14,
                            .max_streams = kind == 3 ? 2 : 8,
                            .stream_busy = stress_busy,
                            .stream_wait_ms = 5000,
                            .growth = kind == 2 ? WH_POOL_GROW_VMM : WH_POOL_GROW_ARENAS};
        CHECK(wh_pool_create(&pool, &c) == WH_OK);
        states = calloc(threads, sizeof *states);
        walk_errors = 0;
        double t0 = wh_now_seconds();
        wh_run_threads(threads, worker, NULL);
        double dt = wh_now_seconds() - t0;
        uint64_t ops = 0, bad = 0, nlive = 0, live_bytes = 0;
        blk *all = calloc((size_t)threads * MAXLIVE, sizeof *all);
        for (unsigned t = 0; t < threads; ++t) {
            ops += states[t].ops;
            bad += states[t].bad;
            for (uint32_t k = 0; k < states[t].nlive; ++k) {
                if (!intact(&states[t].live[k])) bad++;
                all[nlive++] = states[t].live[k];
                live_bytes += wh_pool_usable_size(pool, states[t].live[k].p);
            }
        }
        for (unsigned k = 0; k <= STREAMS; ++k) busy_until[k] = 0; /* every stream idle again */
        qsort(all, nlive, sizeof *all, by_addr);
        uint64_t overlaps = 0;
        for (uint64_t k = 1; k < nlive; ++k) overlaps += all[k - 1].p + all[k - 1].n > all[k].p;
        wh_pool_stats s;
        wh_pool_get_stats(pool, &s);
        printf("%s: %u threads, %" PRIu64 " ops in %.2f s, %" PRIu64 " live, reserved %" PRIu64 " B, peak %" PRIu64
               " B, tag hits %" PRIu64 ", pending %" PRIu64 "\n",
               (const char *[]){"tlsf", "max-heap", "tlsf-vmm", "tlsf, 2 lanes"}[kind], threads, ops, dt, nlive,
               s.reserved, s.reserved_peak, s.tag_hits, s.pending);
        CHECK_EQ_U64(bad, 0);
        CHECK_EQ_U64(overlaps, 0);
        CHECK_EQ_U64(walk_errors, 0);
        CHECK_EQ_U64(s.in_use, live_bytes);
        CHECK_EQ_U64(s.allocs - s.frees, nlive);
        CHECK(s.allocs > ops / 4 && s.frees > ops / 4);
        CHECK(wh_pool_check(pool) == WH_OK);
        for (uint64_t k = 0; k < nlive; ++k) CHECK(wh_pool_free(pool, all[k].p, (wh_stream)(uintptr_t)1) == WH_OK);
        CHECK(wh_pool_trim(pool, 0) == WH_OK);
        wh_pool_get_stats(pool, &s);
        CHECK_EQ_U64(s.in_use, 0);
        CHECK_EQ_U64(s.reserved, 0);
        CHECK_EQ_U64(s.pending, 0);
        CHECK(wh_pool_check(pool) == WH_OK);
        CHECK(wh_pool_destroy(pool) == WH_OK);
        free(all);
        free(states);
    }
    return wh_test_finish("test_pool_stress");
}
