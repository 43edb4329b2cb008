/* SPDX-License-Identifier: MIT */
/* Hierarchical bitmap, single-threaded semantics and layout, CPU backend. */
#include "warpheap/bitmap.h"
#include "wh_test.h"

static uint64_t *make(wh_bitmap *bm, uint64_t nbits, bool ones) {
    uint64_t *mem = (uint64_t *)malloc(wh_bitmap_bytes(nbits));
    CHECK(mem != NULL);
    CHECK(wh_bitmap_init_host(bm, mem, nbits, ones) == WH_OK);
    return mem;
}

static void test_layout(void) {
    wh_bitmap bm;
    CHECK(wh_bitmap_layout(&bm, NULL, 0) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_bitmap_layout(&bm, NULL, (uint64_t)WH_BITMAP_MAX_BITS + 1) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_bitmap_layout(&bm, (void *)(uintptr_t)4, 10) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_bitmap_layout(NULL, NULL, 10) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_bitmap_layout(&bm, NULL, 1) == WH_OK && bm.levels == 1);
    CHECK(wh_bitmap_words_for(64) == 1);
    CHECK(wh_bitmap_words_for(65) == 3); /* 2 + 1 summary word */
    CHECK(wh_bitmap_words_for(4096) == 64 + 1);
    CHECK(wh_bitmap_words_for(4097) == 65 + 2 + 1);
    CHECK(wh_bitmap_layout(&bm, NULL, 1ull << 28) == WH_OK && bm.levels == 5);
    CHECK(wh_bitmap_layout(&bm, NULL, WH_BITMAP_MAX_BITS) == WH_OK && bm.levels == 6);
    CHECK(wh_bitmap_level_words(&bm, 5) == 1);
    CHECK(wh_bitmap_bytes(0) == 0);
}

/* Fill, count, check, and draining by find_and_clear gives every bit once. */
static void test_fill_and_drain(uint64_t nbits) {
    wh_bitmap bm;
    uint64_t *mem = make(&bm, nbits, true);
    CHECK_EQ_U64(wh_bitmap_count_host(&bm), nbits);
    CHECK_EQ_U64(wh_bitmap_check_host(&bm), 0);
    uint8_t *seen = (uint8_t *)calloc(nbits, 1);
    uint64_t got = 0;
    for (uint32_t b; (b = wh_bitmap_find_and_clear(&bm, wh_hash64(got))) != WH_BITMAP_NONE; ++got) {
        CHECK(b < nbits);
        if (b < nbits) {
            CHECK(!seen[b]);
            seen[b] = 1;
        }
        if (got > nbits) break;
    }
    CHECK_EQ_U64(got, nbits);
    CHECK_EQ_U64(wh_bitmap_count_host(&bm), 0);
    CHECK_EQ_U64(wh_bitmap_check_host(&bm), 0);
    CHECK(wh_bitmap_try_find_set(&bm, 1) == WH_BITMAP_NONE);
    free(seen);
    free(mem);
}

static void test_single_bits(void) {
    wh_bitmap bm;
    uint64_t nbits = 300000; /* 3 levels + top */
    uint64_t *mem = make(&bm, nbits, false);
    CHECK(bm.levels == 4);
    uint32_t probe[] = {0, 63, 64, 4095, 4096, 262143, 262144, 299999};
    for (unsigned k = 0; k < sizeof probe / sizeof *probe; ++k) {
        uint32_t i = probe[k];
        CHECK(!wh_bitmap_get(&bm, i));
        CHECK(wh_bitmap_try_set(&bm, i));
        CHECK(!wh_bitmap_try_set(&bm, i)); /* already set */
        CHECK(wh_bitmap_get(&bm, i));
        CHECK_EQ_U64(wh_bitmap_check_host(&bm), 0);
        CHECK(wh_bitmap_try_find_set(&bm, wh_hash64(k)) == i); /* the only set bit */
        CHECK(wh_bitmap_try_clear(&bm, i));
        CHECK(!wh_bitmap_try_clear(&bm, i)); /* already clear */
        CHECK_EQ_U64(wh_bitmap_check_host(&bm), 0);
        CHECK(wh_bitmap_set(&bm, i) == WH_OK);
        CHECK(wh_bitmap_clear(&bm, i) == WH_OK);
    }
    CHECK_EQ_U64(wh_bitmap_count_host(&bm), 0);
    /* every upper word is zero again */
    for (uint32_t l = 1; l < bm.levels; ++l)
        for (uint32_t w = 0; w < wh_bitmap_level_words(&bm, l); ++w) CHECK(*wh_bitmap_word(&bm, l, w) == 0);
    free(mem);
}

/* Rotation spreads searches: different seeds find different bits. */
static void test_rotation(void) {
    wh_bitmap bm;
    uint64_t *mem = make(&bm, 1u << 16, true);
    uint32_t first = wh_bitmap_try_find_set(&bm, 0);
    int differ = 0;
    for (uint64_t s = 1; s < 64; ++s) differ += wh_bitmap_try_find_set(&bm, wh_hash64(s)) != first;
    CHECK(differ > 50);
    free(mem);
}

/* Claims of several bits at once (the coalesced form). */
static void test_claim(void) {
    wh_bitmap bm;
    uint64_t *mem = make(&bm, 200, true);
    uint64_t got, total = 0;
    CHECK(wh_bitmap_claim(&bm, 7, 0, &got) == WH_BITMAP_NONE && got == 0); /* nothing wanted */
    uint32_t w = wh_bitmap_claim(&bm, 7, 10, &got);
    CHECK(w != WH_BITMAP_NONE && wh_popc64(got) == 10);
    total += 10;
    while ((w = wh_bitmap_claim(&bm, wh_hash64(total), 64, &got)) != WH_BITMAP_NONE) {
        CHECK(got != 0);
        total += (uint64_t)wh_popc64(got);
        if (total > 200) break;
    }
    CHECK_EQ_U64(total, 200);
    CHECK_EQ_U64(wh_bitmap_check_host(&bm), 0);
    /* give a whole word back in one operation */
    CHECK(wh_bitmap_or_word(&bm, 1, ~0ull) == 0);
    CHECK_EQ_U64(wh_bitmap_count_host(&bm), 64);
    CHECK_EQ_U64(wh_bitmap_check_host(&bm), 0);
    free(mem);
}

static void test_indices(void) {
    wh_bitmap bm;
    uint64_t nbits = 1u << 20;
    uint64_t *mem = make(&bm, nbits, false);
    uint32_t expect[2000], n = 0;
    for (uint32_t i = 5; i < nbits && n < 2000; i += 523 + (i % 7) * 1000) {
        CHECK(wh_bitmap_try_set(&bm, i));
        expect[n++] = i;
    }
    uint32_t *out = (uint32_t *)malloc(n * sizeof *out);
    CHECK_EQ_U64(wh_bitmap_indices_host(&bm, out), n);
    for (uint32_t k = 0; k < n; ++k) CHECK(out[k] == expect[k]); /* ascending */
    free(out);
    free(mem);
    /* empty and full */
    uint32_t one;
    mem = make(&bm, 1, false);
    CHECK(wh_bitmap_indices_host(&bm, &one) == 0);
    CHECK(wh_bitmap_try_set(&bm, 0) && wh_bitmap_indices_host(&bm, &one) == 1 && one == 0);
    free(mem);
}

/* The retrying clear waits for another thread's set, and gives up at its bound. */
static wh_bitmap shared_bm;
static void setter(unsigned i, void *arg) {
    (void)arg;
    if (i == 0) {
        for (volatile int k = 0; k < 200000; ++k) {}
        CHECK(wh_bitmap_set(&shared_bm, 77) == WH_OK);
    } else {
        CHECK(wh_bitmap_clear(&shared_bm, 77) == WH_OK); /* waits for thread 0 */
    }
}
static void test_retrying(void) {
    uint64_t *mem = make(&shared_bm, 1000, false);
    wh_run_threads(2, setter, NULL);
    CHECK(!wh_bitmap_get(&shared_bm, 77));
    CHECK_EQ_U64(wh_bitmap_check_host(&shared_bm), 0);
    /* nobody will ever set bit 5: the bounded retry reports it */
    CHECK(wh_bitmap_clear(&shared_bm, 5) == WH_ERR_RETRY_LIMIT);
    free(mem);
}

/* An empty one-level bitmap answers at once, not after the retry bound. */
static void test_empty_small(void) {
    wh_bitmap bm;
    uint64_t got;
    uint64_t *mem = make(&bm, 40, false);
    double t0 = wh_now_seconds();
    for (int k = 0; k < 1000; ++k) {
        CHECK(wh_bitmap_find_and_clear(&bm, (uint64_t)k) == WH_BITMAP_NONE);
        CHECK(wh_bitmap_claim(&bm, (uint64_t)k, 8, &got) == WH_BITMAP_NONE && got == 0);
    }
    CHECK(wh_now_seconds() - t0 < 0.5); /* 2000 bounded spins would take minutes */
    CHECK(wh_bitmap_try_set(&bm, 39));
    CHECK(wh_bitmap_find_and_clear(&bm, 5) == 39);
    free(mem);
}

/* 2^28 bits: the required minimum largest size. */
static void test_large(void) {
    wh_bitmap bm;
    uint64_t nbits = 1ull << 28;
    uint64_t *mem = make(&bm, nbits, false);
    CHECK(wh_bitmap_try_set(&bm, (uint32_t)nbits - 1));
    CHECK(wh_bitmap_try_set(&bm, 12345678));
    CHECK(wh_bitmap_find_and_clear(&bm, 3) != WH_BITMAP_NONE);
    CHECK(wh_bitmap_find_and_clear(&bm, 9) != WH_BITMAP_NONE);
    CHECK(wh_bitmap_find_and_clear(&bm, 1) == WH_BITMAP_NONE);
    CHECK_EQ_U64(wh_bitmap_count_host(&bm), 0);
    free(mem);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Hierarchical bitmap, single-threaded semantics and layout, CPU backend.");
    test_layout();
    uint64_t sizes[] = {1, 2, 63, 64, 65, 127, 4096, 4097, 262145};
    for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; ++k) test_fill_and_drain(sizes[k]);
    test_single_bits();
    test_rotation();
    test_claim();
    test_indices();
    test_retrying();
    test_empty_small();
    test_large();
    return wh_test_finish("test_bitmap");
}
