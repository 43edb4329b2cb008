/* SPDX-License-Identifier: MIT */
/* The CPU backend's parallel loop (wh__soa_for_host, under parallel_do,
 * parallel_new and WH_SOA_PARALLEL_FOR): every index visited exactly once
 * -- for many loops in a row (helpers that wake late into the next loop),
 * with loops started from several threads at once and from inside a loop's
 * body (those run on their calling thread), and at the edges (n of 0 and 1,
 * one thread, more threads than indices or than helpers).  Run under
 * ThreadSanitizer in CI (label stress). */
#include "warpheap/soa.h"
#include "wh_test.h"

#include <stdlib.h>

static unsigned nested_bad; /* inner loops that missed or repeated an index */

typedef struct visits {
    uint32_t *count; /* per index */
    uint64_t n;
    bool nest; /* the loop's first chunk runs a loop of its own */
} visits;

static void visit(uint64_t k0, uint64_t k1, const void *p) {
    const visits *v = (const visits *)p;
    for (uint64_t i = k0; i < k1; ++i) (void)wh_atomic_fetch_add(&v->count[i], 1u, WH_RELAXED);
    if (v->nest && k0 == 0) {
        uint32_t inner[100] = {0};
        visits w = {inner, 100, false};
        wh__soa_for_host(100, 4, visit, &w);
        for (unsigned i = 0; i < 100; ++i)
            if (inner[i] != 1) (void)wh_atomic_fetch_add(&nested_bad, 1u, WH_RELAXED);
    }
}

/* One loop of n indices on `threads` threads; false unless each was visited once. */
static bool once(uint64_t n, uint32_t threads, bool nest) {
    uint32_t *count = (uint32_t *)calloc(n ? n : 1, sizeof *count);
    visits v = {count, n, nest};
    wh__soa_for_host(n, threads, visit, &v);
    bool ok = true;
    for (uint64_t i = 0; i < n; ++i) ok = ok && count[i] == 1;
    free(count);
    return ok;
}

static void loops(unsigned t, void *arg) {
    unsigned *bad = (unsigned *)arg;
    for (unsigned r = 0; r < 300; ++r)
        if (!once(1 + (r * 7919u + t * 104729u) % 5000u, 1 + r % 8, r % 17 == 0))
            (void)wh_atomic_fetch_add(bad, 1u, WH_RELAXED);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "The CPU backend's parallel loop: every index once, under concurrency.");
    CHECK(once(0, 4, false));
    CHECK(once(1, 4, false));
    CHECK(once(1000, 1, false));
    CHECK(once(3, 64, false));
    CHECK(once(100000, 200, false)); /* more threads than helpers */
    CHECK(once(100000, 4, true));
    unsigned bad = 0;
    loops(0, &bad); /* many loops in a row, one caller */
    CHECK_EQ_U64(bad, 0);
    wh_run_threads(4, loops, &bad); /* four callers at once */
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(nested_bad, 0);
    return wh_test_finish("test_soa_for");
}
