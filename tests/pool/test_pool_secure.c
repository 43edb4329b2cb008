/* SPDX-License-Identifier: MIT */
/* The pool's hardened mode (config.secure, src/pool/pool_secure.c) on the CPU
 * backend, in both ways of growing: a second free after the memory went to
 * a new owner is a double free and the new owner keeps its block (without
 * the mode that free takes the new owner's block: shown too); an overflow
 * past a block is reported at its free; a write to free memory is found
 * when the memory is handed out again and by wh_pool_check; and a workload
 * of random sizes keeps every byte and check sound.  The deliberate bad
 * writes go around AddressSanitizer, so that an ASan build tests the mode
 * and not ASan. */
#include "warpheap/pool.h"
#include "wh_test.h"
#include "pool_check.h"

#include <string.h>

#if defined(__clang__) || defined(__GNUC__)
#define NO_ASAN __attribute__((no_sanitize("address")))
#else
#define NO_ASAN
#endif

NO_ASAN static void poke(unsigned char *p, size_t i, unsigned char v) { ((volatile unsigned char *)p)[i] = v; }

static wh_pool *secure_pool(wh_pool_growth growth, bool secure) {
    return pool_make((wh_pool_config){.backend = WH_POOL_CPU, .growth = growth, .secure = secure});
}

/* Free a, allocate b of the same size, free a again, trials times. */
static void stale_frees(wh_pool_growth growth) {
    wh_pool *p = secure_pool(growth, true);
    int reused = 0, caught = 0;
    for (int t = 0; t < 64; ++t) {
        size_t n = 1000 + 64 * (size_t)t;
        unsigned char *a = wh_pool_alloc(p, n, NULL);
        CHECK(a && wh_pool_free(p, a, NULL) == WH_OK);
        unsigned char *b = wh_pool_alloc(p, n, NULL);
        CHECK(b != NULL);
        memset(b, 0x5A, n);
        if (b == a) { /* the offset came round: the one case in four it cannot tell */
            CHECK(wh_pool_free(p, b, NULL) == WH_OK);
            continue;
        }
        reused += b < a + 4 * 256 && a < b + 4 * 256; /* same block, another offset */
        wh_status st = wh_pool_free(p, a, NULL);
        CHECK(st == WH_ERR_DOUBLE_FREE);
        caught += st == WH_ERR_DOUBLE_FREE && strstr(wh_last_error(), "stale") != NULL;
        CHECK(wh_pool_usable_size(p, b) == n); /* b is still live, whole */
        for (size_t i = 0; i < n; ++i) CHECK(b[i] == 0x5A);
        check_ok(p);
        CHECK(wh_pool_free(p, b, NULL) == WH_OK);
    }
    CHECK(reused >= 40 && caught == reused); /* blocks come back, and every stale free is caught */
    CHECK(pool_stats(p).corruptions == 0);
    check_ok(p);
    CHECK(wh_pool_destroy(p) == WH_OK);

    /* Without the mode the same second free succeeds and takes b's block. */
    p = secure_pool(growth, false);
    unsigned char *a = wh_pool_alloc(p, 1000, NULL);
    CHECK(a && wh_pool_free(p, a, NULL) == WH_OK);
    unsigned char *b = wh_pool_alloc(p, 1000, NULL);
    CHECK(b == a && wh_pool_free(p, a, NULL) == WH_OK);
    CHECK(wh_pool_usable_size(p, b) == 0); /* b's owner lost it */
    CHECK(wh_pool_destroy(p) == WH_OK);
}

static void overflow(wh_pool_growth growth) {
    wh_pool *p = secure_pool(growth, true);
    unsigned char *x = wh_pool_alloc(p, 100, NULL), *y = wh_pool_alloc(p, 100, NULL);
    CHECK(x && y);
    memset(x, 1, 100); /* every requested byte is usable */
    check_ok(p);
    poke(x, 100, 7); /* one byte past the request */
    CHECK(wh_pool_check(p) == WH_ERR_CORRUPT && strstr(wh_last_error(), "overflow"));
    CHECK(wh_pool_free(p, x, NULL) == WH_ERR_CORRUPT);
    CHECK(strstr(wh_last_error(), "byte 0 past its 100 requested bytes") != NULL);
    CHECK(wh_pool_usable_size(p, x) == 0);     /* freed all the same */
    CHECK(wh_pool_free(p, y, NULL) == WH_OK);  /* the pool goes on */
    CHECK(pool_stats(p).corruptions == 2);     /* the check's find and the free's */
    CHECK(wh_pool_check(p) == WH_ERR_CORRUPT); /* the record stays */
    unsigned char *z = wh_pool_alloc(p, 5000, NULL);
    CHECK(z && wh_pool_free(p, z, NULL) == WH_OK);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

static void write_after_free(wh_pool_growth growth) {
    wh_pool *p = secure_pool(growth, true);
    unsigned char *x = wh_pool_alloc(p, 4096, NULL);
    CHECK(x && wh_pool_free(p, x, NULL) == WH_OK);
    check_ok(p);
    poke(x, 10, 0); /* the owner writes after its free */
    CHECK(wh_pool_check(p) == WH_ERR_CORRUPT);
    CHECK(strstr(wh_last_error(), "write after free") != NULL);
    CHECK(strstr(wh_last_error(), "1 corruption found") != NULL);
    CHECK(wh_pool_destroy(p) == WH_OK);

    /* found also when the memory is handed out again, before any check */
    p = secure_pool(growth, true);
    x = wh_pool_alloc(p, 4096, NULL);
    CHECK(x && wh_pool_free(p, x, NULL) == WH_OK);
    poke(x, 10, 0);
    unsigned char *y = wh_pool_alloc(p, 4096, NULL);
    CHECK(y != NULL && pool_stats(p).corruptions == 1);
    CHECK(wh_pool_free(p, y, NULL) == WH_OK);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

/* Random sizes, tags and alignments: contents intact, every pointer aligned,
 * no false report, the check sound throughout. */
static void workload(wh_pool_growth growth) {
    wh_pool *p = secure_pool(growth, true);
    enum { N = 256 };
    unsigned char *x[N] = {0};
    size_t len[N] = {0};
    static const char tag;
    for (uint64_t t = 0; t < 6000; ++t) {
        uint64_t r = wh_hash64(t + 1);
        unsigned i = (unsigned)(r % N);
        if (x[i]) {
            for (size_t k = 0; k < len[i]; k += 61) CHECK(x[i][k] == (unsigned char)i);
            CHECK(wh_pool_free(p, x[i], NULL) == WH_OK);
            x[i] = NULL;
            continue;
        }
        len[i] = 1 + (r >> 8) % ((r >> 40) % 4 == 0 ? 3000000u : 20000u);
        size_t align = (r >> 50) % 8 == 0 ? (size_t)4096 << ((r >> 54) % 4) : 0;
        x[i] = align                ? wh_pool_alloc_aligned(p, len[i], align, NULL)
               : (r >> 45) % 2 == 0 ? wh_pool_alloc_tagged(p, len[i], &tag, NULL)
                                    : wh_pool_alloc(p, len[i], NULL);
        CHECK(x[i] != NULL);
        CHECK((uintptr_t)x[i] % (align ? align : 256) == 0);
        memset(x[i], (int)i, len[i]);
        if (t % 997 == 0) check_ok(p);
    }
    for (unsigned i = 0; i < N; ++i) CHECK(wh_pool_free(p, x[i], NULL) == WH_OK);
    check_ok(p);
    CHECK(pool_stats(p).corruptions == 0 && pool_stats(p).tag_cached == 0);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    CHECK(pool_stats(p).reserved == 0);
    CHECK(wh_pool_destroy(p) == WH_OK);
}

int main(void) {
    const wh_pool_growth growths[] = {WH_POOL_GROW_ARENAS, WH_POOL_GROW_VMM};
    for (int g = 0; g < 2; ++g) {
        stale_frees(growths[g]);
        overflow(growths[g]);
        write_after_free(growths[g]);
        workload(growths[g]);
    }
    return wh_test_finish("test_pool_secure");
}
