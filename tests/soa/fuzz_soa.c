/* SPDX-License-Identifier: MIT */
/* libFuzzer target: random object sequences on a small CPU-backend object
 * heap of three classes (one a subclass), against an oracle of the live
 * objects.
 *
 * Input: byte 0 picks the heap size, then 4 bytes an operation: new of a
 * class, destroy, an immediate double destroy, forged and foreign pointers,
 * parallel_new of a batch, and an enumeration (device_do's iterator) of a
 * class.  After every operation: wh_soa_check finds every bitmap and block
 * consistent, the objects per type and the bad-free counters equal the
 * oracle's, and an object's id field is intact when it is destroyed.  The
 * enumeration must visit exactly the oracle's live objects of the class and
 * its subclasses, each once.
 *
 * Built two ways: with clang -fsanitize=fuzzer (scripts/fuzz.sh soa), and as
 * a ctest of fixed random inputs (tests/support/fuzz_main.c). */
#include "warpheap/soa.h"
#include "fuzz_oracle.h"

/* clang-format off */
#define FA_FIELDS(F) F(uint64_t, id)
/* clang-format on */
WH_SOA_CLASS(FA, 0, FA_FIELDS)
/* clang-format off */
#define FB_FIELDS(F) F(uint32_t, extra[4])
/* clang-format on */
WH_SOA_SUBCLASS(FB, 1, FA, FB_FIELDS)
/* clang-format off */
#define FC_FIELDS(F) F(uint64_t, id) F(uint8_t, pad[200])
/* clang-format on */
WH_SOA_CLASS(FC, 2, FC_FIELDS)

#define MAXLIVE 4096u

typedef struct {
    uint64_t p, id;
} obj;
typedef struct world {
    wh_soa s;
    obj live[MAXLIVE];
    uint32_t nlive;
    uint64_t next_id, bad_frees, foreign_frees;
} world;

/* The id field: FA's for FA and FB (inherited), FC's own. */
static uint64_t *id_of(uint64_t p) {
    return wh_soa_ptr_type(p) == FC_TYPE ? &WH_GET(FC, FC_from(p), id) : &WH_GET(FA, FA_from(p), id);
}

static void add(world *w, uint64_t p) {
    if (w->nlive == MAXLIVE) WH_FZ_DIE("oracle full");
    for (uint32_t i = 0; i < w->nlive; ++i)
        if (w->live[i].p == p) WH_FZ_DIE("object %#llx handed out twice", (unsigned long long)p);
    *id_of(p) = w->next_id;
    w->live[w->nlive++] = (obj){p, w->next_id++};
}

typedef struct {
    uint64_t first;
} init_ctx;
WH_INLINE WH_HOST_DEVICE void fa_init(const wh_soa *s, FA o, uint64_t i, const init_ctx *c) {
    (void)s;
    WH_GET(FA, o, id) = c->first + i;
}
WH_SOA_PARALLEL_NEW(FA, fa_init, init_ctx)

static void check_world(world *w) {
    uint64_t bad = 0;
    if (wh_soa_check(&w->s, &bad) != WH_OK || bad) WH_FZ_DIE("wh_soa_check: %llu violations", (unsigned long long)bad);
    wh_soa_stats st;
    if (wh_soa_stats_get(&w->s, &st) != WH_OK) WH_FZ_DIE("stats");
    uint64_t per[3] = {0, 0, 0};
    for (uint32_t i = 0; i < w->nlive; ++i) per[wh_soa_ptr_type(w->live[i].p)]++;
    for (uint32_t t = 0; t < 3; ++t)
        if (st.objects[t] != per[t])
            WH_FZ_DIE("type %u: %llu objects, oracle %llu", t, (unsigned long long)st.objects[t],
                      (unsigned long long)per[t]);
    if (st.counters[WH_SOA_CTR_BAD_FREE] != w->bad_frees || st.counters[WH_SOA_CTR_FOREIGN_FREE] != w->foreign_frees)
        WH_FZ_DIE("bad/foreign frees %llu/%llu, oracle %llu/%llu", (unsigned long long)st.counters[WH_SOA_CTR_BAD_FREE],
                  (unsigned long long)st.counters[WH_SOA_CTR_FOREIGN_FREE], (unsigned long long)w->bad_frees,
                  (unsigned long long)w->foreign_frees);
}

static void destroy(world *w, uint32_t k, bool twice) {
    obj o = w->live[k];
    if (*id_of(o.p) != o.id) WH_FZ_DIE("object %#llx: id overwritten", (unsigned long long)o.p);
    w->live[k] = w->live[--w->nlive];
    if (wh_soa_free(&w->s, o.p) != WH_OK) WH_FZ_DIE("destroy of a live object refused");
    if (twice) {
        if (wh_soa_free(&w->s, o.p) != WH_ERR_DOUBLE_FREE) WH_FZ_DIE("double destroy not refused");
        w->bad_frees++;
    }
}

/* Enumerate class t (and subclasses): exactly the oracle's objects. */
static void enumerate(world *w, uint32_t t) {
    uint64_t expect = 0, seen = 0, sum = 0, want = 0;
    for (uint32_t i = 0; i < w->nlive; ++i)
        if ((w->s.subtypes[t] >> wh_soa_ptr_type(w->live[i].p)) & 1u) {
            expect++;
            want += w->live[i].p * 31 + w->live[i].id;
        }
    wh_soa_iter it;
    wh_soa_iter_begin(&it, &w->s, t);
    for (uint64_t p; (p = wh_soa_iter_next(&it, &w->s)) != 0;) {
        seen++;
        sum += p * 31 + *id_of(p);
    }
    if (seen != expect || sum != want)
        WH_FZ_DIE("enumeration of type %u: %llu objects, oracle %llu", t, (unsigned long long)seen,
                  (unsigned long long)expect);
}

static void step(world *w, const uint8_t *d) {
    uint8_t op = d[0] % 16;
    uint32_t r = (uint32_t)d[1] | (uint32_t)d[2] << 8 | (uint32_t)d[3] << 16;
    if (op < 7) { /* new */
        uint32_t t = r % 3u;
        uint64_t p = w->nlive < MAXLIVE ? wh_soa_alloc(&w->s, t) : 0;
        if (p) {
            if (wh_soa_ptr_type(p) != t) WH_FZ_DIE("new of type %u gave type %u", t, wh_soa_ptr_type(p));
            add(w, p);
        }
    } else if (op < 11 && w->nlive) {
        destroy(w, r % w->nlive, op == 10);
    } else if (op == 11) { /* never handed out */
        uint64_t base = (uint64_t)(uintptr_t)w->s.blocks, any = w->nlive ? w->live[r % w->nlive].p : 0;
        uint64_t forged[] = {r | 1ull << 63, base | (uint64_t)FC_TYPE << WH_SOA_TYPE_SHIFT,
                             any ? any ^ 1ull << WH_SOA_CAP_SHIFT : 1, any ? any + WH_SOA_BLOCK_ALIGN : 2};
        for (unsigned k = 0; k < 4; ++k) {
            if (wh_soa_free(&w->s, forged[k]) != WH_ERR_FOREIGN_POINTER) WH_FZ_DIE("forged pointer %u accepted", k);
            w->foreign_frees++;
        }
    } else if (op == 12 || op == 13) {
        enumerate(w, r % 3u);
    } else if (op == 14) { /* parallel_new: ids first .. first + n - 1 */
        uint64_t n = 1 + r % 200u;
        if (w->nlive + n > MAXLIVE) return;
        init_ctx c = {w->next_id};
        wh_status st = FA_parallel_new_fa_init(&w->s, n, c);
        if (st != WH_OK && st != WH_ERR_OUT_OF_MEMORY) WH_FZ_DIE("parallel_new: %s", wh_strerror(st));
        wh_soa_iter it;
        wh_soa_iter_begin(&it, &w->s, FA_TYPE);
        uint64_t made = 0;
        for (uint64_t p; (p = wh_soa_iter_next(&it, &w->s)) != 0;) {
            uint64_t id = *id_of(p);
            if (wh_soa_ptr_type(p) != FA_TYPE || id < c.first || id >= c.first + n) continue;
            w->live[w->nlive++] = (obj){p, id};
            made++;
        }
        w->next_id += n;
        if (st == WH_OK && made != n)
            WH_FZ_DIE("parallel_new made %llu of %llu", (unsigned long long)made, (unsigned long long)n);
    } else if (op == 15) {
        if (wh_soa_free(&w->s, 0) != WH_OK) WH_FZ_DIE("destroy of null");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static world w;
    memset(&w, 0, sizeof w);
    w.next_id = 1;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(FA), WH_SOA_TYPE(FB), WH_SOA_TYPE(FC)};
    wh_soa_config cfg = {(size_t)(16u + 48u * (data[0] & 3)) << 10, t, 3, false, 1u + (data[0] >> 2 & 3), NULL, false};
    if (wh_soa_create(&w.s, &cfg) != WH_OK) WH_FZ_DIE("create: %s", wh_last_error());
    for (size_t i = 1; i + 4 <= size; i += 4) {
        step(&w, data + i);
        check_world(&w);
    }
    while (w.nlive) destroy(&w, 0, false);
    check_world(&w);
    wh_soa_stats st;
    wh_soa_stats_get(&w.s, &st);
    if (st.free_blocks != st.blocks) WH_FZ_DIE("blocks left after every object was destroyed");
    wh_soa_destroy(&w.s);
    return 0;
}
