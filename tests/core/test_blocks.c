/* SPDX-License-Identifier: MIT */
/* Block core (core/blocks.h), both free indices: randomised allocate/free with a
 * shadow map of granules as the oracle (no overlap, every granule owned by at
 * most one live block), a full heap walk every few operations, and bad input.
 * Ends by freeing everything: each arena must come back as one free block. */
#include "warpheap/core/walk.h"
#include "wh_cli.h"
#include "wh_test.h"

#define GRANULE     16u
#define ARENAS      4u
#define ARENA_BYTES (64u * 1024u)
#define SPACE       (ARENAS * ARENA_BYTES)
#define MAXLIVE     2048u

typedef struct {
    uint32_t id;
    uint64_t addr, size;
} live_t;

static uint32_t shadow[SPACE / GRANULE]; /* owner+1 of each granule, 0 = none */

static void mark(uint64_t addr, uint64_t size, uint32_t owner, uint32_t expect) {
    for (uint64_t g = addr / GRANULE; g < (addr + size) / GRANULE; ++g) {
        CHECK(shadow[g] == expect);
        shadow[g] = owner;
    }
}

static void check_core(const wh_blocks *c, uint32_t nlive, uint64_t live_bytes) {
    wh_blocks_report r;
    bool ok = wh_blocks_check(c, &r);
    if (!ok) fprintf(stderr, "walk failed at line %u block %u\n", r.error, r.bad_block);
    CHECK(ok);
    CHECK_EQ_U64(r.used, nlive);
    CHECK_EQ_U64(r.used_bytes, live_bytes);
    CHECK_EQ_U64(r.used_bytes + r.free_bytes, r.arena_bytes);
}

static void run_random(wh_blocks_kind kind, uint32_t capacity, uint32_t ops, uint64_t seed, bool absorb) {
    uint64_t bytes = wh_blocks_bytes(kind, 2, capacity);
    void *mem = aligned_alloc(64, (bytes + 63) & ~63ull);
    wh_blocks *c = wh_blocks_init(mem, bytes, kind, 2, capacity, GRANULE);
    CHECK(c != NULL);
    if (!c) {
        free(mem);
        return;
    }
    if (absorb) wh_blocks_set_absorb(c, 0); /* index 1 frees merge index 0 blocks */
    uint32_t heads[ARENAS];
    for (uint32_t a = 0; a < ARENAS; ++a) {
        heads[a] = wh_blocks_add_arena(c, (uint64_t)a * ARENA_BYTES, ARENA_BYTES, a & 1u);
        CHECK(heads[a] != WH_BLOCK_NONE);
    }
    static live_t live[MAXLIVE];
    uint32_t nlive = 0;
    uint64_t live_bytes = 0, fails = 0;
    memset(shadow, 0, sizeof shadow);
    for (uint32_t i = 0; i < ops; ++i) {
        uint64_t r = wh_hash64(seed + i);
        uint32_t idx = (uint32_t)(r >> 60) & 1u;
        if ((r % 100) < 55 && nlive < MAXLIVE) {
            uint64_t want = 1 + ((r >> 8) % ((r >> 40) & 1 ? 300 : 9000));
            uint32_t b = wh_blocks_alloc(c, want, idx);
            if (b == WH_BLOCK_NONE) {
                fails++;
                continue;
            }
            const wh_block *d = &wh_blocks_desc(c)[b];
            CHECK(d->size >= want && d->state == WH_BLOCK_USED && d->addr % GRANULE == 0);
            CHECK(d->addr + d->size <= SPACE);
            mark(d->addr, d->size, b + 1, 0);
            live[nlive++] = (live_t){b, d->addr, d->size};
            live_bytes += d->size;
        } else if (nlive > 0) {
            uint32_t k = (uint32_t)((r >> 16) % nlive);
            mark(live[k].addr, live[k].size, 0, live[k].id + 1);
            CHECK(wh_blocks_free(c, live[k].id, idx));
            CHECK(!wh_blocks_free(c, live[k].id, idx) || wh_blocks_desc(c)[live[k].id].state == WH_BLOCK_USED);
            live_bytes -= live[k].size;
            live[k] = live[--nlive];
        }
        if (i % 97 == 0) check_core(c, nlive, live_bytes);
    }
    check_core(c, nlive, live_bytes);
    CHECK(fails < ops);
    while (nlive) { /* drain: every arena whole again */
        live_t *l = &live[--nlive];
        mark(l->addr, l->size, 0, l->id + 1);
        CHECK(wh_blocks_free(c, l->id, 0));
    }
    for (uint32_t i = 0; i < 2; ++i) /* index 1 leftovers merge into 0 */
        for (uint32_t b; (b = wh_blocks_any_free(c, 1)) != WH_BLOCK_NONE;) wh_blocks_move(c, b, 0);
    check_core(c, 0, 0);
    for (uint32_t a = 0; a < ARENAS; ++a) {
        CHECK_EQ_U64(wh_blocks_largest_free(c, 0), ARENA_BYTES);
        CHECK(wh_blocks_remove_arena(c, heads[a]));
    }
    check_core(c, 0, 0);
    CHECK_EQ_U64(c->narenas, 0);
    free(mem);
}

static void bad_input(wh_blocks_kind kind) {
    uint64_t bytes = wh_blocks_bytes(kind, 1, 3);
    uint64_t *mem = calloc(1, bytes);
    CHECK(wh_blocks_init(mem, bytes - 8, kind, 1, 3, 16) == NULL); /* region too small */
    CHECK(wh_blocks_init(mem, bytes, kind, 1, 3, 24) == NULL);     /* granule not 2^k */
    CHECK(wh_blocks_init(mem, bytes, kind, 0, 3, 16) == NULL);
    wh_blocks *c = wh_blocks_init(mem, bytes, kind, 1, 3, 16);
    CHECK(c != NULL);
    CHECK(wh_blocks_add_arena(c, 8, 1024, 0) == WH_BLOCK_NONE); /* misaligned */
    CHECK(wh_blocks_add_arena(c, 0, 0, 0) == WH_BLOCK_NONE);
    CHECK(wh_blocks_add_arena(c, 0, 1024, 1) == WH_BLOCK_NONE); /* no such index */
    uint32_t a = wh_blocks_add_arena(c, 0, 1024, 0);
    CHECK(a != WH_BLOCK_NONE);
    CHECK(wh_blocks_alloc(c, 0, 0) == WH_BLOCK_NONE);    /* size 0 */
    CHECK(wh_blocks_alloc(c, 1025, 0) == WH_BLOCK_NONE); /* too large */
    CHECK(wh_blocks_alloc(c, UINT64_MAX, 0) == WH_BLOCK_NONE);
    uint32_t x = wh_blocks_alloc(c, 100, 0), y = wh_blocks_alloc(c, 100, 0), z = wh_blocks_alloc(c, 100, 0);
    CHECK(x != WH_BLOCK_NONE && y != WH_BLOCK_NONE && z != WH_BLOCK_NONE);
    /* 3 descriptors: the last split had none left, so z took the whole rest */
    CHECK_EQ_U64(wh_blocks_desc(c)[z].size, 1024 - 2 * 112);
    CHECK(wh_blocks_alloc(c, 16, 0) == WH_BLOCK_NONE); /* exhausted */
    CHECK(!wh_blocks_remove_arena(c, a));              /* still in use */
    CHECK(wh_blocks_free(c, y, 0));
    CHECK(!wh_blocks_free(c, y, 0));  /* double free */
    CHECK(!wh_blocks_free(c, 99, 0)); /* bad id */
    CHECK(wh_blocks_free(c, x, 0) && wh_blocks_free(c, z, 0));
    wh_blocks_report r;
    CHECK(wh_blocks_check(c, &r));
    CHECK_EQ_U64(r.free, 1);
    CHECK(wh_blocks_remove_arena(c, a));
    free(mem);
}

/* A corrupted core must be caught by the walk (the oracle can fail). */
static void walk_detects_corruption(void) {
    uint64_t bytes = wh_blocks_bytes(WH_BLOCKS_TLSF, 1, 16);
    uint64_t *mem = calloc(1, bytes);
    wh_blocks *c = wh_blocks_init(mem, bytes, WH_BLOCKS_TLSF, 1, 16, 16);
    wh_blocks_add_arena(c, 0, 4096, 0);
    uint32_t x = wh_blocks_alloc(c, 64, 0);
    wh_blocks_report r;
    CHECK(wh_blocks_check(c, &r));
    wh_blocks_desc(c)[x].size += 16; /* overlap next */
    CHECK(!wh_blocks_check(c, &r));
    free(mem);
}

int main(int argc, char **argv) {
    uint32_t ops = 200000;
    wh_cli_opt cli[] = {WH_CLI_UINT("ops", &ops, "random operations per run"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Block core, both free indices: random allocate/free against a shadow map.");
    const wh_blocks_kind kinds[3] = {WH_BLOCKS_TLSF, WH_BLOCKS_MAXHEAP, WH_BLOCKS_LIST};
    for (int k = 0; k < 3; ++k) {
        uint32_t n = k == 2 ? ops / 20 : ops; /* LIST: every alloc scans the descriptors */
        run_random(kinds[k], 8192, n, 1234 + k, false);
        run_random(kinds[k], 8192, n, 777 + k, true);
        run_random(kinds[k], 64, ops / 10, 99 + k, false); /* descriptor shortage: no split */
        bad_input(kinds[k]);
    }
    walk_detects_corruption();
    return wh_test_finish("test_blocks");
}
