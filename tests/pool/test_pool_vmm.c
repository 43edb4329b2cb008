/* SPDX-License-Identifier: MIT */
/* Host pool grown as one address range (config.growth = WH_POOL_GROW_VMM) on
 * the CPU backend, where map and unmap are mprotect/madvise: a block handed
 * out over an unmapped hole faults.  Checked: growth maps what a request is
 * short of (not an arena step), free pieces are unmapped when growth would
 * pass the budget and by trim, holes are refilled and written, the heap walk
 * (which compares holes with the mapping) holds after every step, and on a
 * random_allocations-like run peak reserved stays near peak in use. */
#include "warpheap/pool.h"
#include "wh_test.h"
#include "pool_check.h"

#include <string.h>

#define S(k) ((wh_stream)(uintptr_t)(k))
#define GRAN (64u << 10) /* the CPU backend's granule */

static wh_pool *make(size_t max_bytes) {
    return pool_make((wh_pool_config){.backend = WH_POOL_CPU, .max_bytes = max_bytes, .growth = WH_POOL_GROW_VMM});
}

/* Growth fits the request; trim unmaps; a refilled hole is writable. */
static void fit_trim_refill(void) {
    wh_pool *p = make(0);
    CHECK(pool_stats(p).reserved == 0);
    char *a = wh_pool_alloc(p, 3 * GRAN + 1, S(1));
    CHECK(a != NULL);
    CHECK(pool_stats(p).reserved == 4 * GRAN); /* rounded to the granule, no more */
    memset(a, 1, 3 * GRAN + 1);
    char *b[8];
    for (int i = 0; i < 8; ++i) {
        b[i] = wh_pool_alloc(p, 2 * GRAN, S(1));
        CHECK(b[i] != NULL);
        memset(b[i], 2 + i, 2 * GRAN);
        check_ok(p);
    }
    wh_pool_stats s = pool_stats(p);
    CHECK(s.reserved >= s.in_use && s.reserved <= s.in_use + s.in_use / 12 + 2 * GRAN);
    for (int i = 1; i < 7; ++i) CHECK(wh_pool_free(p, b[i], S(1)) == WH_OK);
    check_ok(p);
    CHECK(wh_pool_trim(p, 0) == WH_OK); /* the freed middle goes back ... */
    s = pool_stats(p);
    CHECK(s.reserved <= s.in_use + 4 * GRAN); /* ... but for the two pieces (one growth,
                                                        2 granules each) across its ends */
    CHECK(s.reserved <= s.reserved_peak - 10 * GRAN);
    CHECK(s.arena_frees > 0);
    check_ok(p);
    for (uint32_t i = 0; i < 3 * GRAN + 1; ++i) CHECK(a[i] == 1);
    CHECK(b[0][0] == 2 && b[7][2 * GRAN - 1] == 9);
    for (int i = 1; i < 7; ++i) { /* into the holes again */
        b[i] = wh_pool_alloc(p, 2 * GRAN, S(2));
        CHECK(b[i] != NULL);
        memset(b[i], 2 + i, 2 * GRAN);
    }
    check_ok(p);
    s = pool_stats(p);
    CHECK(s.reserved <= s.in_use + s.in_use / 12 + 2 * GRAN);
    for (int i = 0; i < 8; ++i) CHECK(wh_pool_free(p, b[i], S(2)) == WH_OK);
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    CHECK(wh_pool_free(p, a, S(1)) == WH_ERR_DOUBLE_FREE);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    s = pool_stats(p);
    CHECK_EQ_U64(s.reserved, 0);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* The cap counts mapped bytes; at the cap, free pieces are unmapped to make
 * room, and the failure message has the numbers. */
static void cap(void) {
    wh_pool_config bad = {.backend = WH_POOL_CPU, .growth = WH_POOL_GROW_VMM, .vmm_granule = 3u << 12};
    wh_pool *q = NULL;
    CHECK(wh_pool_create(&q, &bad) == WH_ERR_INVALID_ARGUMENT && q == NULL);
    wh_pool *p = make(16 * GRAN);
    void *x[16];
    int n = 0;
    while (n < 16 && (x[n] = wh_pool_alloc(p, GRAN, S(1))) != NULL) n++;
    CHECK(n == 16);
    CHECK(wh_pool_alloc(p, 1, S(1)) == NULL);
    CHECK(strstr(wh_last_error(), "pool exhausted") != NULL);
    for (int i = 0; i < 16; i += 2) CHECK(wh_pool_free(p, x[i], S(1)) == WH_OK);
    void *big = wh_pool_alloc(p, 2 * GRAN, S(1)); /* no two free neighbours: unmap, map */
    CHECK(big != NULL);
    memset(big, 7, 2 * GRAN);
    CHECK(pool_stats(p).reserved <= 16 * GRAN);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_ERR_IN_USE); /* the odd blocks and big: released all the same */
    CHECK(strstr(wh_last_error(), "9 live allocations") != NULL);
}

/* RMM's random_allocations shape: peak reserved against peak in use. */
static void random_run(void) {
    wh_pool *p = make(0);
    enum { N = 6000 };
    static void *live[N];
    uint32_t nlive = 0, allocs = 0;
    for (uint64_t i = 0; i < 2 * N; ++i) {
        uint64_t x = wh_hash64(i + 77), size = 1 + x % (1u << 20);
        if (nlive == 0 || ((x >> 33) % 100 < 73 && allocs < N)) {
            live[nlive] = wh_pool_alloc(p, size, S(1));
            CHECK(live[nlive] != NULL);
            memset(live[nlive], 0x5a, size < 4096 ? size : 4096);
            ((char *)live[nlive])[size - 1] = 1; /* the far end is mapped too */
            nlive++;
            allocs++;
        } else {
            uint32_t k = (uint32_t)(wh_hash64(x) % nlive);
            CHECK(wh_pool_free(p, live[k], S(1)) == WH_OK);
            live[k] = live[--nlive];
        }
        if (i % 997 == 0) check_ok(p);
    }
    wh_pool_stats s = pool_stats(p);
    double ratio = (double)s.reserved_peak / (double)s.in_use_peak;
    printf("random_allocations (CPU, VMM): peak reserved / peak in use = %.3f, %llu pieces mapped, %llu unmapped\n",
           ratio, (unsigned long long)s.arena_allocs, (unsigned long long)s.arena_frees);
    CHECK(ratio < 1.15);
    while (nlive) CHECK(wh_pool_free(p, live[--nlive], S(1)) == WH_OK);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    CHECK_EQ_U64(pool_stats(p).reserved, 0);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* Large blocks that churn near a live-bytes cap: over the budget, growth
 * moves whole pieces from free blocks to where the request needs them
 * instead of unmapping them and mapping new ones.  Every live block carries
 * its owner's mark at both ends, checked before it is freed: a piece moved
 * out from under a live block faults (PROT_NONE) or loses the mark. */
static void moves(void) {
    wh_pool *p =
        pool_make((wh_pool_config){.backend = WH_POOL_CPU, .growth = WH_POOL_GROW_VMM, .vmm_range = 32ull << 30});
    enum { N = 3000 };
    static uint64_t *live[N];
    static uint64_t sizes[N];
    uint32_t nlive = 0;
    uint64_t bytes = 0, cap = 8ull << 30;
    for (uint64_t i = 0; i < 2 * N; ++i) {
        uint64_t x = wh_hash64(i * 31 + 5), size = 64 + (x % (768ull << 20)) / 8 * 8;
        if (nlive == 0 || ((x >> 33) % 100 < 60 && bytes + size < cap)) {
            uint64_t *b = wh_pool_alloc(p, size, S(1));
            CHECK(b != NULL);
            if (!b) break;
            b[0] = b[size / 8 - 1] = i;
            sizes[nlive] = size;
            live[nlive++] = b;
            bytes += size;
        } else {
            uint32_t k = (uint32_t)(wh_hash64(x) % nlive);
            uint64_t *b = live[k], n = sizes[k] / 8;
            CHECK(b[0] == b[n - 1]);
            CHECK(wh_pool_free(p, b, S(1)) == WH_OK);
            bytes -= sizes[k];
            live[k] = live[--nlive];
            sizes[k] = sizes[nlive];
        }
        if (i % 499 == 0) check_ok(p);
    }
    wh_pool_stats s = pool_stats(p);
    double ratio = (double)s.reserved_peak / (double)s.in_use_peak;
    printf("moves (CPU, VMM, blocks to 768 MiB): peak reserved / peak in use = %.3f, %llu pieces moved, "
           "%llu mapped, %llu unmapped\n",
           ratio, (unsigned long long)s.moves, (unsigned long long)s.arena_allocs, (unsigned long long)s.arena_frees);
    CHECK(s.moves > 0);
    CHECK(ratio < 1.2);
    check_ok(p);
    while (nlive) {
        nlive--;
        CHECK(live[nlive][0] == live[nlive][sizes[nlive] / 8 - 1]);
        CHECK(wh_pool_free(p, live[nlive], S(1)) == WH_OK);
    }
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    CHECK_EQ_U64(pool_stats(p).reserved, 0);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* Where a large block goes in a free block: where the rest stays in whole
 * pieces.  One growth of 300 MiB maps pieces of 112, 112 and 76 MiB; freed,
 * they are one free block.  A block of 70 MiB at its start would share the
 * first piece and leave 188 MiB of whole pieces; at its end it shares the
 * 76-MiB piece and leaves 224.  trim then unmaps every whole free piece. */
static void placement(void) {
    const uint64_t M = 1ull << 20;
    wh_pool *p = make(0);
    char *big = wh_pool_alloc(p, 300 * M, S(1));
    CHECK(big != NULL);
    CHECK_EQ_U64(pool_stats(p).arena_allocs, 3); /* three pieces */
    CHECK(wh_pool_free(p, big, S(1)) == WH_OK);
    char *a = wh_pool_alloc(p, 70 * M, S(1));
    CHECK(a == big + 230 * M); /* at the end of the 76-MiB piece */
    a[0] = 1;
    a[70 * M - 1] = 2;
    check_ok(p);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    CHECK_EQ_U64(pool_stats(p).reserved, 76 * M); /* the two 112-MiB pieces went back */
    CHECK(a[0] == 1 && a[70 * M - 1] == 2);
    check_ok(p);
    CHECK(wh_pool_free(p, a, S(1)) == WH_OK);
    char *b = wh_pool_alloc(p, 10 * M, S(1)); /* small blocks: at the start */
    CHECK(b == big + 224 * M);
    CHECK(wh_pool_free(p, b, S(1)) == WH_OK);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    CHECK_EQ_U64(pool_stats(p).reserved, 0);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

int main(int argc, char **argv) {
    wh_test_no_options(
        argc, argv, "Host pool grown as one address range (config.growth = WH_POOL_GROW_VMM) on the CPU backend,....");
    fit_trim_refill();
    cap();
    placement();
    random_run();
    moves();
    return wh_test_finish("test_pool_vmm");
}
