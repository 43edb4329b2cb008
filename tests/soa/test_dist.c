/* SPDX-License-Identifier: MIT */
/* Object heaps across ranks (soa/dist.h) on the in-process transport: 1 to 4
 * ranks as threads, each with its own host heap.  Migrations move objects in
 * every direction, from a rank that sends nothing, all of one rank's objects
 * at once, all to one rank, none at all, and of a class that has no objects;
 * after each the global count and a checksum of every field of every class
 * are as before, every object is on its owner, no id is held twice, and
 * every heap is sound.  A receiver without room and an owner outside the
 * ranks are refused on every rank with nothing moved.  Halo rows, sums and
 * gathers are checked against the whole grid. */
#include "warpheap/soa/dist.h"
#include "wh_test.h"

#include <pthread.h>

typedef struct trip {
    uint32_t a, b, c;
} trip;
/* clang-format off */
#define PART_FIELDS(F) F(uint64_t, id) F(uint32_t, pos) F(uint8_t, tag) F(trip, t) F(uint16_t, h[3])
#define HEAVY_FIELDS(F) F(double, mass)
#define NONE_FIELDS(F) F(uint32_t, x[64])
/* clang-format on */
WH_SOA_CLASS(Part, 0, PART_FIELDS)
WH_SOA_SUBCLASS(Heavy, 1, Part, HEAVY_FIELDS)
WH_SOA_CLASS(Never, 2, NONE_FIELDS) /* has no objects anywhere */

#define POSITIONS 1000u /* pos in [0, POSITIONS): the owner is the band of pos */

typedef struct dctx {
    uint32_t size, rank, step, pattern, bad_owner;
    uint64_t *arrived; /* arrive() counts here */
    uint64_t *misplaced;
} dctx;
enum { P_RANDOM = 0, P_RANK0_TO_LAST, P_ALL_TO_0, P_STAY, P_COUNT };

WH_INLINE uint32_t owner_of(uint32_t pos, uint32_t size) { return (uint32_t)((uint64_t)pos * size / POSITIONS); }
/* Rank r's band of positions: [band_lo(r), band_lo(r + 1)). */
WH_INLINE uint32_t band_lo(uint32_t r, uint32_t size) { return (r * POSITIONS + size - 1u) / size; }
WH_INLINE uint32_t in_band(uint32_t r, uint32_t size, uint64_t x) {
    return band_lo(r, size) + (uint32_t)(x % (band_lo(r + 1u, size) - band_lo(r, size)));
}
WH_INLINE uint32_t part_owner(const wh_soa *s, Part o, const dctx *c) {
    (void)s;
    return c->bad_owner ? c->size : owner_of(WH_GET(Part, o, pos), c->size);
}
WH_INLINE uint32_t heavy_owner(const wh_soa *s, Heavy o, const dctx *c) { return part_owner(s, Heavy_super(o), c); }
WH_INLINE uint32_t never_owner(const wh_soa *s, Never o, const dctx *c) {
    (void)s, (void)o;
    return c->size - 1u;
}
WH_INLINE void part_arrive(const wh_soa *s, Part o, const dctx *c) {
    (void)s;
    wh_atomic_fetch_add(c->arrived, 1ull, WH_RELAXED);
    if (owner_of(WH_GET(Part, o, pos), c->size) != c->rank) wh_atomic_fetch_add(c->misplaced, 1ull, WH_RELAXED);
}
WH_INLINE void heavy_arrive(const wh_soa *s, Heavy o, const dctx *c) { part_arrive(s, Heavy_super(o), c); }
WH_INLINE void never_arrive(const wh_soa *s, Never o, const dctx *c) { (void)s, (void)o, (void)c; }
WH_SOA_DIST_CLASS(Part, part_owner, part_arrive, dctx)
WH_SOA_DIST_CLASS(Heavy, heavy_owner, heavy_arrive, dctx)
WH_SOA_DIST_CLASS(Never, never_owner, never_arrive, dctx)

/* ---- objects, their moves and their sums ------------------------------------------------- */
WH_INLINE uint64_t mix(uint64_t id, uint32_t k) { return wh_hash64(id * 31u + k); }
/* Every field follows from id and pos, so a checksum sees any field that travels wrong. */
WH_INLINE void fill(Part o, uint64_t id, uint32_t pos) {
    WH_GET(Part, o, id) = id;
    WH_GET(Part, o, pos) = pos;
    WH_GET(Part, o, tag) = (uint8_t)mix(id, 1);
    trip t = {(uint32_t)mix(id, 2), (uint32_t)mix(id, 3), (uint32_t)mix(id, 4)};
    WH_GET(Part, o, t) = t;
    for (int k = 0; k < 3; ++k) WH_GET(Part, o, h)[k] = (uint16_t)mix(id, 5u + k);
}
WH_INLINE void part_init(const wh_soa *s, Part o, uint64_t i, const dctx *c) {
    (void)s;
    uint64_t id = (uint64_t)c->rank << 32 | i;
    fill(o, id, in_band(c->rank, c->size, mix(id, 0)));
}
WH_INLINE void heavy_init(const wh_soa *s, Heavy o, uint64_t i, const dctx *c) {
    part_init(s, Heavy_super(o), i | 1ull << 31, c);
    WH_GET(Heavy, o, mass) = (double)(mix(WH_GET(Part, Heavy_super(o), id), 9) % 1000u) / 8.0;
}
/* The next position of an object by the step's pattern. */
WH_INLINE void part_move(const wh_soa *s, Part o, const dctx *c) {
    (void)s;
    uint32_t pos = WH_GET(Part, o, pos), me = owner_of(pos, c->size);
    uint64_t r = mix(WH_GET(Part, o, id), 100u + c->step);
    switch (c->pattern) {
    case P_RANDOM: pos = (uint32_t)(r % POSITIONS); break;
    case P_RANK0_TO_LAST:
        if (me == 0) pos = POSITIONS - 1u;
        break;
    case P_ALL_TO_0: pos = in_band(0, c->size, r); break;
    default: break;
    }
    WH_GET(Part, o, pos) = pos;
}
WH_SOA_PARALLEL_NEW(Part, part_init, dctx)
WH_SOA_PARALLEL_NEW(Heavy, heavy_init, dctx)
WH_SOA_PARALLEL_DO(Part, part_move, dctx)
WH_INLINE void never_init(const wh_soa *s, Never o, uint64_t i, const dctx *c) {
    (void)s, (void)c;
    WH_GET(Never, o, x)[0] = (uint32_t)i;
}
WH_SOA_PARALLEL_NEW(Never, never_init, dctx)

/* Per rank: objects, a checksum of all their fields, objects off their owner. */
typedef struct tally {
    uint64_t objects, sum, misplaced;
} tally;
/* ids (may be NULL): the ids of the heap's objects, at most cap of them. */
static void tally_heap(const wh_soa *s, uint32_t rank, uint32_t size, tally *out, uint64_t *ids, uint64_t cap,
                       uint64_t *nids) {
    memset(out, 0, sizeof *out);
    {
        wh_soa_iter it;
        wh_soa_iter_begin(&it, s, Part_TYPE); /* Heavy objects too */
        for (uint64_t p; (p = wh_soa_iter_next(&it, s)) != 0;) {
            uint32_t t = wh_soa_ptr_type(p);
            Part o = Part_from(p);
            uint64_t id = WH_GET(Part, o, id), h = mix(id, WH_GET(Part, o, pos)) ^ WH_GET(Part, o, tag);
            trip tr = WH_GET(Part, o, t);
            h += mix(tr.a, tr.b) + tr.c;
            for (int k = 0; k < 3; ++k) h += (uint64_t)WH_GET(Part, o, h)[k] << (16 * k);
            if (t == Heavy_TYPE) h += (uint64_t)(WH_GET(Heavy, Heavy_from(p), mass) * 8.0);
            out->objects++;
            out->sum += h;
            out->misplaced += owner_of(WH_GET(Part, o, pos), size) != rank;
            if (ids && *nids < cap) ids[(*nids)++] = id;
        }
    }
}

/* ---- the ranks ---------------------------------------------------------------------------- */
typedef struct group {
    uint32_t size;
    wh_soa_transport **ends;
    pthread_mutex_t lock; /* CHECK's counter is one for all threads */
} group;

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

#define RCHECK(g, cond)                       \
    do {                                      \
        if (!(cond)) {                        \
            pthread_mutex_lock(&(g)->lock);   \
            CHECK(cond);                      \
            pthread_mutex_unlock(&(g)->lock); \
        }                                     \
    } while (0)

/* Global count and checksum, and every id once: on rank 0, through a gather. */
static void check_global(group *g, wh_soa_dist *d, const tally *before, const char *when) {
    uint64_t cap = before->objects + 1u, n = 0, *ids = (uint64_t *)malloc(cap * 8u); /* no rank holds more */
    tally t;
    tally_heap(d->soa, d->rank, g->size, &t, ids, cap, &n);
    uint64_t mine[3] = {t.objects, t.sum, t.misplaced}, sum[3];
    RCHECK(g, wh_soa_dist_sum(d, mine, sum, 3) == WH_OK);
    RCHECK(g, sum[0] == before->objects && sum[1] == before->sum);
    RCHECK(g, sum[2] == 0 || !strcmp(when, "refused"));
    uint64_t *all = d->rank == 0 ? (uint64_t *)malloc(before->objects * 8u + 8u) : NULL;
    size_t total = 0;
    RCHECK(g, wh_soa_dist_gather(d, ids, n * 8u, all, all ? before->objects * 8u : 0, &total) == WH_OK);
    if (d->rank == 0) {
        RCHECK(g, total == before->objects * 8u);
        qsort(all, before->objects, 8u, compare_u64);
        uint64_t twice = 0;
        for (uint64_t i = 1; i < before->objects; ++i) twice += all[i] == all[i - 1];
        RCHECK(g, twice == 0);
    }
    uint64_t bad = 1;
    RCHECK(g, wh_soa_check(d->soa, &bad) == WH_OK && bad == 0);
    if (sum[0] != before->objects || sum[1] != before->sum)
        fprintf(stderr, "  rank %u after %s: %llu objects (%llu before)\n", d->rank, when, (unsigned long long)sum[0],
                (unsigned long long)before->objects);
    free(all);
    free(ids);
}

/* Bands of an h-row grid (uneven when S does not divide h): the ghost rows
 * hold the rows above and below the band, around the torus. */
static void check_halo(group *g, wh_soa_dist *d, uint32_t h) {
    uint32_t S = g->size, me = d->rank, r0 = (uint32_t)((uint64_t)me * h / S),
             r1 = (uint32_t)((uint64_t)(me + 1) * h / S);
    uint32_t w = 5, own = r1 - r0;
    uint32_t *rows = (uint32_t *)calloc((size_t)(own + 2u) * w, 4u);
    for (uint32_t r = 0; r < own; ++r)
        for (uint32_t x = 0; x < w; ++x) rows[(r + 1u) * w + x] = (r0 + r) * 100u + x;
    RCHECK(g, wh_soa_dist_halo_rows(d, rows, w * 4u, own) == WH_OK);
    uint32_t above = (r0 + h - 1u) % h, below = r1 % h;
    for (uint32_t x = 0; x < w; ++x) {
        RCHECK(g, rows[x] == above * 100u + x);
        RCHECK(g, rows[(own + 1u) * w + x] == below * 100u + x);
    }
    free(rows);
}

/* The sums over all ranks of their tallies. */
static tally global_tally(group *g, wh_soa_dist *d) {
    tally t;
    tally_heap(d->soa, d->rank, g->size, &t, NULL, 0, NULL);
    uint64_t mine[2] = {t.objects, t.sum}, all[2] = {0, 0};
    RCHECK(g, wh_soa_dist_sum(d, mine, all, 2) == WH_OK);
    return (tally){all[0], all[1], 0};
}

typedef struct rank_arg {
    group *g;
    uint32_t rank;
} rank_arg;

static void *rank_main(void *arg_) {
    rank_arg *a = (rank_arg *)arg_;
    group *g = a->g;
    uint32_t me = a->rank, S = g->size;
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Part), WH_SOA_TYPE(Heavy), WH_SOA_TYPE(Never)};
    /* rank 1's heap is smaller: the test of a receiver without room fills it */
    size_t bytes = me == 1 ? (size_t)1 << 20 : (size_t)8 << 20;
    wh_soa_config cfg = {bytes, types, 3, false, 2, NULL, false};
    wh_soa soa;
    wh_soa_dist d;
    uint64_t arrived = 0, misplaced = 0;
    dctx c = {S, me, 0, P_RANDOM, 0, &arrived, &misplaced};
    RCHECK(g, wh_soa_create(&soa, &cfg) == WH_OK);
    RCHECK(g, wh_soa_dist_create(&d, &soa, g->ends[me]) == WH_OK);
    uint32_t nparts = 900u + 37u * me, nheavy = me == 0 ? 0 : 50u * me; /* rank 0 has no Heavy */
    RCHECK(g, Part_parallel_new_part_init(&soa, nparts, c) == WH_OK);
    RCHECK(g, Heavy_parallel_new_heavy_init(&soa, nheavy, c) == WH_OK);
    tally before = global_tally(g, &d);
    check_global(g, &d, &before, "creation");
    check_halo(g, &d, 7u);
    check_halo(g, &d, S);

    /* every pattern twice, each a move then the three classes' migrations */
    for (uint32_t step = 0; step < 2u * P_COUNT; ++step) {
        c.step = step;
        c.pattern = step % P_COUNT;
        RCHECK(g, Part_parallel_do_part_move(&soa, c) == WH_OK); /* Heavy objects too: a subclass */
        before = global_tally(g, &d);                            /* the moves changed pos */
        uint64_t got0 = arrived;
        wh_soa_dist_stats s0 = d.stats;
        RCHECK(g, Part_dist_migrate(&d, c) == WH_OK);
        RCHECK(g, Heavy_dist_migrate(&d, c) == WH_OK);
        RCHECK(g, Never_dist_migrate(&d, c) == WH_OK);
        RCHECK(g, arrived - got0 == d.stats.received - s0.received);
        RCHECK(g, misplaced == 0);
        if (S > 1 && step == 0) RCHECK(g, d.stats.sent > s0.sent && d.stats.received > s0.received);
        if (S > 1 && c.pattern == P_STAY) RCHECK(g, d.stats.sent == s0.sent && d.stats.received == s0.received);
        if (S > 1 && c.pattern == P_RANK0_TO_LAST && me != 0) RCHECK(g, d.stats.sent == s0.sent);
        if (S > 1 && c.pattern == P_RANK0_TO_LAST && me == 0) {
            tally t;
            tally_heap(&soa, me, S, &t, NULL, 0, NULL);
            RCHECK(g, t.objects == 0); /* all of them left */
        }
        check_global(g, &d, &before, "a migration");
        if (S > 1 && c.pattern == P_ALL_TO_0 && me == 0) {
            tally t;
            tally_heap(&soa, me, S, &t, NULL, 0, NULL);
            RCHECK(g, t.objects == before.objects); /* every object is here now */
        }
    }

    /* refusals: nothing moves, every rank gets the same error */
    if (S > 1) {
        c.bad_owner = 1;
        RCHECK(g, Part_dist_migrate(&d, c) == WH_ERR_INVALID_ARGUMENT);
        if (me == 0) printf("  %u ranks, an owner out of range: %s\n", S, wh_last_error());
        c.bad_owner = 0;
        check_global(g, &d, &before, "a bad owner");
        /* everything to rank 1, whose heap the Never objects fill first */
        if (me == 1) RCHECK(g, Never_parallel_new_never_init(&soa, 8192, c) == WH_ERR_OUT_OF_MEMORY);
        wh_soa_dist_stats s0 = d.stats;
        uint64_t got0 = arrived;
        wh_soa_iter it;
        wh_soa_iter_begin(&it, &soa, Part_TYPE);
        for (uint64_t p; (p = wh_soa_iter_next(&it, &soa)) != 0;)
            WH_GET(Part, Part_from(p), pos) = in_band(1, S, WH_GET(Part, Part_from(p), id));
        before = global_tally(g, &d);
        wh_status st = Part_dist_migrate(&d, c);
        RCHECK(g, st == WH_ERR_OUT_OF_MEMORY);
        if (me == 0) printf("  %u ranks, all to rank 1: %s\n", S, wh_last_error());
        RCHECK(g, d.stats.refused == s0.refused + 1 && d.stats.sent == s0.sent && arrived == got0);
        check_global(g, &d, &before, "refused");
    }
    RCHECK(g, wh_soa_dist_destroy(&d) == WH_OK);
    wh_status gone = wh_soa_destroy(&soa);
    RCHECK(g, gone == WH_OK || gone == WH_ERR_IN_USE); /* objects live to the end */
    wh_soa_transport_destroy(g->ends[me]);
    return NULL;
}

static void run_ranks(uint32_t S) {
    group g;
    memset(&g, 0, sizeof g);
    pthread_mutex_init(&g.lock, NULL);
    g.size = S;
    g.ends = (wh_soa_transport **)calloc(S, sizeof *g.ends);
    CHECK(wh_soa_transport_threads(S, false, g.ends) == WH_OK);
    pthread_t th[8];
    rank_arg args[8];
    for (uint32_t r = 0; r < S; ++r) {
        args[r] = (rank_arg){&g, r};
        pthread_create(&th[r], NULL, rank_main, &args[r]);
    }
    for (uint32_t r = 0; r < S; ++r) pthread_join(th[r], NULL);
    free(g.ends);
    pthread_mutex_destroy(&g.lock);
    printf("  %u rank(s): migrations, refusals and gathers checked\n", S);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Object heaps across ranks on the in-process transport (CPU backend).");
    for (uint32_t S = 1; S <= 4; ++S) run_ranks(S);
    return wh_test_finish("test_dist");
}
