/* SPDX-License-Identifier: MIT */
/* Object allocator stress on the CPU backend: 16 threads run mixed
 * new/destroy of three types on one heap (two heap sizes: a roomy one and one
 * where allocations fail for want of blocks), then: every held object intact
 * (no slot given twice), no pointer held twice, heap invariants (wh_soa_check),
 * per-type object counts, no retry-limit or bad-free counter, and parallel_do
 * visiting every live object exactly once, also while objects replace
 * themselves.  Run under ThreadSanitizer in CI (label stress). */
#include "soa_stress.h"
#include "wh_cli.h"
#include "wh_test.h"

#include <stdlib.h>

typedef struct run {
    wh_soa *s;
    uint32_t ops, cap;
    uint64_t *held, *tags;
    uint32_t *n;
    soa_stress_counts *c;
} run;

static uint64_t take_total(uint64_t *t) {
    uint64_t v = *t;
    *t = 0;
    return v;
}
static void worker(unsigned i, void *p) {
    run *r = (run *)p;
    soa_stress_thread(r->s, i, r->ops, r->held + (size_t)i * r->cap, r->tags + (size_t)i * r->cap, r->cap, &r->n[i],
                      &r->c[i]);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void stress(size_t bytes, unsigned threads, uint32_t ops, uint32_t cap, int expect_fails) {
    wh_soa s;
    wh_soa_config cfg = {bytes, soa_stress_types, 3, false, 4, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    run r = {&s,
             ops,
             cap,
             calloc((size_t)threads * cap, 8),
             calloc((size_t)threads * cap, 8),
             calloc(threads, 4),
             calloc(threads, sizeof(soa_stress_counts))};
    double t0 = wh_now_seconds();
    wh_run_threads(threads, worker, &r);
    double dt = wh_now_seconds() - t0;

    soa_stress_counts tot = {0, 0, 0, 0};
    uint64_t held = 0, per_type[3] = {0, 0, 0};
    uint64_t *all = malloc((size_t)threads * cap * 8);
    for (unsigned i = 0; i < threads; ++i) {
        tot.allocs += r.c[i].allocs;
        tot.frees += r.c[i].frees;
        tot.fails += r.c[i].fails;
        tot.corrupt += r.c[i].corrupt;
        for (uint32_t k = 0; k < r.n[i]; ++k) {
            uint64_t p = r.held[(size_t)i * cap + k];
            all[held++] = p;
            per_type[wh_soa_ptr_type(p)]++;
        }
    }
    printf("soa stress cpu: %u threads, %llu allocs, %llu frees, %llu failed, %llu held, %u blocks, %.3f s\n", threads,
           tot.allocs, tot.frees, tot.fails, (unsigned long long)held, s.nblocks, dt);
    CHECK(tot.allocs > 0 && tot.frees > 0);
    CHECK_EQ_U64(tot.corrupt, 0);
    if (expect_fails)
        CHECK(tot.fails > 0);
    else
        CHECK_EQ_U64(tot.fails, 0);
    qsort(all, held, 8, cmp_u64);
    uint64_t twice = 0;
    for (uint64_t k = 1; k < held; ++k) twice += all[k] == all[k - 1];
    CHECK_EQ_U64(twice, 0);
    check_heap(&s, "after stress");
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    for (int t = 0; t < 3; ++t) CHECK_EQ_U64(st.objects[t], per_type[t]);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_RETRY_LIMIT], 0);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_BAD_FREE], 0);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_FAILED_ALLOCS], tot.fails);

    /* parallel_do: SA visits SA and SB objects, SC its own; each exactly once */
    uint64_t total = 0;
    soa_visit_ctx vc = {&total};
    CHECK(SA_parallel_do_soa_visit_a(&s, vc) == WH_OK);
    CHECK_EQ_U64(total, per_type[0] + per_type[1]);
    total = 0;
    CHECK(SC_parallel_do_soa_visit_c(&s, vc) == WH_OK);
    CHECK_EQ_U64(total, per_type[2]);
    uint64_t wrong = 0, odd = 0;
    for (uint64_t k = 0; k < held; ++k) {
        uint64_t p = all[k];
        uint32_t v = WH_SOA_IS(&s, p, SA) ? WH_GET(SA, SA_from(p), visits) : WH_GET(SC, SC_from(p), visits);
        wrong += v != 1;
        if (wh_soa_ptr_type(p) == SC_TYPE) odd += WH_GET(SC, SC_from(p), tag32) & 1u;
    }
    CHECK_EQ_U64(wrong, 0);

    /* churn: odd SCs replace themselves; the new ones are not visited */
    total = 0;
    CHECK(SC_parallel_do_soa_churn_c(&s, vc) == WH_OK);
    CHECK_EQ_U64(total, per_type[2]);
    check_heap(&s, "after churn");
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    if (!expect_fails) CHECK_EQ_U64(st.objects[SC_TYPE], per_type[2]);
    total = 0;
    CHECK(SC_parallel_do_soa_visit_c(&s, vc) == WH_OK);
    CHECK_EQ_U64(total, st.objects[SC_TYPE]);
    (void)odd;
    soa_again_check(&s, vc, st.objects[SC_TYPE], per_type[0] + per_type[1], take_total);
    uint64_t extra = wh_soa_alloc(&s, SC_TYPE); /* made after the snapshot: not visited again */
    CHECK(SC_parallel_do_again_soa_visit_c(&s, vc) == WH_OK);
    CHECK_EQ_U64(take_total(&total), st.objects[SC_TYPE]);
    if (extra) CHECK(wh_soa_free(&s, extra) == WH_OK);

    /* free everything: the heap returns to all blocks free */
    for (uint64_t k = 0; k < held; ++k)
        if (wh_soa_ptr_type(all[k]) != SC_TYPE || !(WH_GET(SC, SC_from(all[k]), tag32) & 1u)) wh_soa_free(&s, all[k]);
    /* remaining SCs (the churned replacements) are found by device_do */
    wh_soa_iter it;
    wh_soa_iter_begin(&it, &s, SC_TYPE);
    uint64_t p, left = 0;
    uint64_t *rest = malloc((st.objects[SC_TYPE] + 1) * 8);
    while ((p = wh_soa_iter_next(&it, &s)) != 0) rest[left++] = p;
    for (uint64_t k = 0; k < left; ++k) wh_soa_free(&s, rest[k]);
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    CHECK_EQ_U64(st.free_blocks, st.blocks);
    check_heap(&s, "after freeing all");
    free(rest);
    free(all);
    free(r.held);
    free(r.tags);
    free(r.n);
    free(r.c);
    wh_soa_destroy(&s);
}

int main(int argc, char **argv) {
    unsigned threads = 16;
    uint32_t ops = 100000;
    wh_cli_opt cli[] = {WH_CLI_UINT("threads", &threads, "threads on one heap"),
                        WH_CLI_UINT("ops", &ops, "operations per thread"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Object allocator stress on the CPU backend: mixed new/destroy of three types.");
    stress(64u << 20, threads, ops, 512, 0); /* roomy: no allocation may fail */
    stress(96u << 10, threads, ops, 512, 1); /* tight: exhaustion, blocks recycled */
    return wh_test_finish("test_soa_stress");
}
