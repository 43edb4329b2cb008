/* SPDX-License-Identifier: MIT */
/* Object allocator stress: many threads allocate objects of three types (a
 * class, its subclass with a smaller capacity, and an unrelated small class;
 * half of them with placement keys), stamp each with a tag, check and destroy
 * random ones; at the end every held object still carries its tag (no slot
 * was given twice), the heap invariants hold, parallel_do visits every live
 * object exactly once and none twice.
 *
 * The per-thread loop is WH_HOST_DEVICE: a pthread of the CPU backend and a
 * GPU thread (with heavy divergence: each lane draws its own operation) run the
 * same code. */
#ifndef WH_SOA_STRESS_H
#define WH_SOA_STRESS_H

#include "warpheap/soa.h"
#include "wh_test.h"

/* clang-format off */
#define SA_FIELDS(F) F(uint64_t, tag) F(uint32_t, visits)
/* clang-format on */
WH_SOA_CLASS(SA, 0, SA_FIELDS)
/* clang-format off */
#define SB_FIELDS(F) F(uint64_t, b1) F(uint64_t, b2) F(uint32_t, b3)
/* clang-format on */
WH_SOA_SUBCLASS(SB, 1, SA, SB_FIELDS)
/* clang-format off */
#define SC_FIELDS(F) F(uint32_t, tag32) F(uint32_t, visits)
/* clang-format on */
WH_SOA_CLASS(SC, 2, SC_FIELDS)

static const wh_soa_type_desc soa_stress_types[] = {WH_SOA_TYPE(SA), WH_SOA_TYPE(SB), WH_SOA_TYPE(SC)};

typedef struct soa_stress_counts {
    unsigned long long allocs, frees, fails, corrupt;
} soa_stress_counts;

WH_INLINE WH_HOST_DEVICE uint64_t soa_stress_tag(uint64_t tid, uint32_t i) { return wh_hash64((tid << 32) | i) | 1u; }

/* Write the tag of a fresh object (type from its pointer). */
WH_INLINE WH_HOST_DEVICE void soa_stress_stamp(const wh_soa *s, uint64_t p, uint64_t tag) {
    if (WH_SOA_IS(s, p, SA)) {
        WH_GET(SA, SA_from(p), tag) = tag;
        WH_GET(SA, SA_from(p), visits) = 0;
        if (wh_soa_ptr_type(p) == SB_TYPE) WH_GET(SB, SB_from(p), b1) = ~tag;
    } else {
        WH_GET(SC, SC_from(p), tag32) = (uint32_t)tag;
        WH_GET(SC, SC_from(p), visits) = 0;
    }
}
WH_INLINE WH_HOST_DEVICE bool soa_stress_intact(const wh_soa *s, uint64_t p, uint64_t tag) {
    if (WH_SOA_IS(s, p, SA)) {
        if (WH_GET(SA, SA_from(p), tag) != tag) return false;
        return wh_soa_ptr_type(p) != SB_TYPE || WH_GET(SB, SB_from(p), b1) == ~tag;
    }
    return WH_GET(SC, SC_from(p), tag32) == (uint32_t)tag;
}

/* ops operations; held[0..*n) / tags: the objects this thread owns. */
WH_INLINE WH_HOST_DEVICE void soa_stress_thread(const wh_soa *s, uint64_t tid, uint32_t ops, uint64_t *held,
                                                uint64_t *tags, uint32_t cap, uint32_t *n, soa_stress_counts *c) {
    uint32_t h = *n;
    for (uint32_t i = 0; i < ops; ++i) {
        uint64_t r = wh_hash64(tid * 0x100000001ull + i);
        if ((r % 100u) < 55u && h < cap) {
            /* half the allocations with one of a few placement keys: homes
             * raced for, filled, given back and re-typed under their users */
            uint32_t key = (r >> 40) & 1u ? (uint32_t)(r >> 48) % 6u : WH_SOA_NO_KEY;
            uint64_t p = wh_soa_alloc_at(s, (uint32_t)((r >> 8) % 3u), key);
            if (!p) {
                c->fails++;
                continue;
            }
            uint64_t tag = soa_stress_tag(tid, i);
            soa_stress_stamp(s, p, tag);
            held[h] = p;
            tags[h++] = tag;
            c->allocs++;
        } else if (h > 0) {
            uint32_t k = (uint32_t)((r >> 32) % h);
            if (!soa_stress_intact(s, held[k], tags[k])) c->corrupt++;
            wh_soa_free(s, held[k]);
            held[k] = held[--h];
            tags[k] = tags[h];
            c->frees++;
        }
    }
    for (uint32_t k = 0; k < h; ++k)
        if (!soa_stress_intact(s, held[k], tags[k])) c->corrupt++;
    *n = h;
}

/* parallel_do bodies: count visits (atomically: a double visit must show). */
typedef struct soa_visit_ctx {
    uint64_t *total;
} soa_visit_ctx;
WH_INLINE WH_HOST_DEVICE void soa_visit_a(const wh_soa *s, SA o, const soa_visit_ctx *c) {
    (void)s;
    (void)wh_atomic_fetch_add(&WH_GET(SA, o, visits), 1u, WH_RELAXED);
    (void)wh_atomic_fetch_add(c->total, 1ull, WH_RELAXED);
}
WH_INLINE WH_HOST_DEVICE void soa_visit_c(const wh_soa *s, SC o, const soa_visit_ctx *c) {
    (void)s;
    (void)wh_atomic_fetch_add(&WH_GET(SC, o, visits), 1u, WH_RELAXED);
    (void)wh_atomic_fetch_add(c->total, 1ull, WH_RELAXED);
}
/* Churn: an odd-tagged SC replaces itself by a new SC (tag 0, not visited by
 * this do-all), an even one only counts.  Tests "created objects are not
 * visited" and "an object may destroy itself". */
WH_INLINE WH_HOST_DEVICE void soa_churn_c(const wh_soa *s, SC o, const soa_visit_ctx *c) {
    (void)wh_atomic_fetch_add(c->total, 1ull, WH_RELAXED);
    if (!(WH_GET(SC, o, tag32) & 1u)) return;
    SC n = WH_SOA_NEW(s, SC);
    if (!SC_is_null(n)) {
        WH_GET(SC, n, tag32) = 0;
        WH_GET(SC, n, visits) = 0;
    }
    WH_SOA_DESTROY(s, o);
}

WH_SOA_PARALLEL_DO(SA, soa_visit_a, soa_visit_ctx)
WH_SOA_PARALLEL_DO(SC, soa_visit_c, soa_visit_ctx)
WH_SOA_PARALLEL_DO(SC, soa_churn_c, soa_visit_ctx)

/* parallel_do_again, right after SC's do-all visited sc objects (and SA's
 * class holds sa): SC's snapshot visits them all again; after SA's
 * preparation, SC's again visits nothing and counts WH_SOA_CTR_STALE_DO
 * once; SA (two concrete types, two snapshots) prepares as parallel_do does.
 * take() reads the visit counter of vc and zeroes it. */
static void soa_again_check(wh_soa *s, soa_visit_ctx vc, uint64_t sc, uint64_t sa, uint64_t (*take)(uint64_t *)) {
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(s, &st) == WH_OK);
    uint64_t stale = st.counters[WH_SOA_CTR_STALE_DO];
    (void)take(vc.total);
    CHECK(SC_parallel_do_again_soa_visit_c(s, vc) == WH_OK);
    CHECK_EQ_U64(take(vc.total), sc);
    CHECK(SC_parallel_do_again_soa_visit_c(s, vc) == WH_OK);
    CHECK_EQ_U64(take(vc.total), sc);
    CHECK(SA_parallel_do_soa_visit_a(s, vc) == WH_OK);
    CHECK_EQ_U64(take(vc.total), sa);
    CHECK(SC_parallel_do_again_soa_visit_c(s, vc) == WH_OK); /* the snapshot is SB's */
    CHECK_EQ_U64(take(vc.total), 0);
    CHECK(wh_soa_stats_get(s, &st) == WH_OK);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_STALE_DO], stale + 1);
    CHECK(SA_parallel_do_again_soa_visit_a(s, vc) == WH_OK);
    CHECK_EQ_U64(take(vc.total), sa);
    CHECK(SC_parallel_do_soa_visit_c(s, vc) == WH_OK);
    CHECK_EQ_U64(take(vc.total), sc);
}

/* End-of-run verdict shared by the CPU and GPU stress tests (host side). */
static void check_heap(wh_soa *s, const char *when) {
    uint64_t bad = 1;
    CHECK(wh_soa_check(s, &bad) == WH_OK);
    if (bad) fprintf(stderr, "%s: %llu heap invariants broken\n", when, (unsigned long long)bad);
    CHECK_EQ_U64(bad, 0);
}

#endif
