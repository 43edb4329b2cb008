/* SPDX-License-Identifier: MIT */
/* The device heap's hardened mode (WH_HEAP_SECURE, heap/secure.h) on the CPU
 * backend: a write to a freed slot or page run, and a write past a request
 * into the free slot after it, are counted as corruptions when that memory
 * is handed out again (without the flag they pass unseen); a workload of
 * mixed sizes gives no false report; double frees stay double frees; the
 * kinds with headers in free memory refuse the flag.  The heaps have fewer
 * than 16 pages (no bump segments), so exhausting a class hands out every
 * slot, the written one included. */
#include "warpheap/heap.h"
#include "wh_test.h"

#include <string.h>

static wh_heap make(wh_heap_kind kind, uint64_t bytes, uint32_t flags) {
    wh_heap h;
    wh_heap_config cfg = {.bytes = bytes, .kind = kind, .flags = WH_HEAP_HOST | WH_HEAP_TRACK | flags};
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    return h;
}

static wh_heap_usage usage(const wh_heap *h) {
    wh_heap_usage s;
    CHECK(wh_heap_stats(h, &s) == WH_OK);
    CHECK_EQ_U64(s.inconsistencies, 0);
    return s;
}

/* Take objects of n bytes until the heap refuses; free them all. */
static uint64_t exhaust(const wh_heap *h, uint64_t n) {
    enum { MAX = 1 << 16 };
    static void *got[MAX];
    uint64_t k = 0;
    while (k < MAX && (got[k] = wh_malloc(h, n)) != NULL) ++k;
    CHECK(k < MAX);
    for (uint64_t i = 0; i < k; ++i) wh_free(h, got[i]);
    return k;
}

/* free p, write byte `at` of it, exhaust the class: the corruptions seen. */
static uint64_t write_after_free(uint32_t flags, uint64_t n, uint64_t at) {
    wh_heap h = make(WH_HEAP_DEFAULT, 8u << 16, flags);
    unsigned char *p = wh_malloc(&h, n);
    CHECK(p != NULL);
    memset(p, 0x11, n);
    wh_free(&h, p);
    p[at] = 0x22;
    CHECK(exhaust(&h, n) > 0);
    wh_heap_usage s = usage(&h);
    CHECK_EQ_U64(s.allocations, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
    return s.corruptions;
}

static void caught(void) {
    CHECK_EQ_U64(write_after_free(WH_HEAP_SECURE, 100, 5), 1);      /* a slot of 112 B   */
    CHECK_EQ_U64(write_after_free(WH_HEAP_SECURE, 16, 0), 1);       /* the smallest slot */
    CHECK_EQ_U64(write_after_free(WH_HEAP_SECURE, 40000, 1000), 1); /* a page run        */
    CHECK_EQ_U64(write_after_free(0, 100, 5), 0);                   /* unseen without it */

    /* past a request into the next, free slot */
    wh_heap h = make(WH_HEAP_DEFAULT, 8u << 16, WH_HEAP_SECURE);
    unsigned char *a = wh_malloc(&h, 64), *b = NULL;
    CHECK(a != NULL);
    memset(a, 0x33, 64 + 8); /* 8 bytes over, into whatever follows */
    while ((b = wh_malloc(&h, 64)) != NULL && b != a + 64) {}
    CHECK(b == a + 64 && usage(&h).corruptions == 1);
    CHECK(wh_heap_destroy(&h) == WH_ERR_IN_USE); /* the slots taken on the way */
}

static void no_false_reports(void) {
    wh_heap h = make(WH_HEAP_DEFAULT, 15u << 16, WH_HEAP_SECURE);
    enum { N = 512 };
    unsigned char *x[N] = {0};
    uint64_t len[N] = {0}, live = 0;
    for (uint64_t t = 0; t < 40000; ++t) {
        uint64_t r = wh_hash64(t + 7), i = r % N;
        if (x[i]) {
            for (uint64_t k = 0; k < len[i]; k += 37) CHECK(x[i][k] == (unsigned char)i);
            wh_free(&h, x[i]);
            x[i] = NULL;
            live--;
            continue;
        }
        len[i] = 1 + (r >> 12) % ((r >> 40) % 16 == 0 ? 100000u : 3000u);
        if ((x[i] = wh_malloc(&h, len[i])) == NULL) continue; /* full for a moment */
        memset(x[i], (int)i, len[i]);
        live++;
    }
    wh_heap_usage s = usage(&h);
    CHECK_EQ_U64(s.allocations, live);
    CHECK_EQ_U64(s.corruptions, 0);
    for (unsigned i = 0; i < N; ++i) wh_free(&h, x[i]);
    s = usage(&h);
    CHECK_EQ_U64(s.allocations, 0);
    CHECK_EQ_U64(s.corruptions + s.double_frees + s.foreign_frees, 0);
    /* reset fills the arena again */
    unsigned char *p = wh_malloc(&h, 100);
    CHECK(p != NULL);
    wh_free(&h, p);
    p[0] = 1;
    CHECK(wh_heap_reset(&h) == WH_OK);
    CHECK(exhaust(&h, 100) > 0 && usage(&h).corruptions == 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

static void double_free(void) {
    wh_heap h = make(WH_HEAP_SLAB, 8u << 16, WH_HEAP_SECURE);
    void *p = wh_malloc(&h, 48);
    CHECK(p != NULL);
    wh_free(&h, p);
    wh_free(&h, p);
    wh_heap_usage s = usage(&h);
    CHECK_EQ_U64(s.double_frees, 1);
    CHECK_EQ_U64(s.corruptions, 0);
    CHECK(exhaust(&h, 48) > 0 && usage(&h).corruptions == 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

static void refused(void) {
    const wh_heap_kind others[] = {WH_HEAP_BUMP,           WH_HEAP_WRAP,           WH_HEAP_CIRCULAR,
                                   WH_HEAP_CIRCULAR_MULTI, WH_HEAP_CIRCULAR_FUSED, WH_HEAP_CIRCULAR_FUSED_MULTI};
    for (unsigned k = 0; k < sizeof others / sizeof others[0]; ++k) {
        wh_heap h;
        wh_heap_config cfg = {.bytes = 1u << 20, .kind = others[k], .flags = WH_HEAP_HOST | WH_HEAP_SECURE};
        CHECK(wh_heap_create(&h, &cfg) == WH_ERR_UNSUPPORTED);
        CHECK(strstr(wh_last_error(), "WH_HEAP_SECURE") != NULL);
    }
}

int main(void) {
    caught();
    no_false_reports();
    double_free();
    refused();
    return wh_test_finish("test_heap_secure");
}
