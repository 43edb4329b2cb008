/* SPDX-License-Identifier: MIT */
/* The DEFAULT heap's page runs as the k-d tree uses them: the
 * builder's large reference lists are page runs, allocated and freed among
 * slab pages.  A run takes exactly its pages (a 68-page list 68, not 128)
 * and may cross 64-page words of the page bitmap: with every page given to
 * 64 KiB slab slots and then a window of them freed across word boundaries,
 * runs that fit the window must be found (they failed before: Table 4 at 2M
 * triangles).  Every state is checked by the heap walk.  CPU backend. */
#include "warpheap/heap.h"
#include "wh_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PAGES 200u

static void walk_ok(const wh_heap *h, uint64_t live, uint64_t used) {
    wh_heap_usage s;
    CHECK(wh_heap_stats(h, &s) == WH_OK);
    CHECK_EQ_U64(s.inconsistencies, 0);
    CHECK_EQ_U64(s.allocations, live);
    CHECK_EQ_U64(s.used_bytes, used);
}

static uint32_t page_of(const wh_heap *h, const void *p) {
    return (uint32_t)(((const uint8_t *)p - h->base) >> WH_SLAB_PAGE_SHIFT);
}

/* A run of exactly n pages (no rounding to whole words). */
static void test_exact(void) {
    wh_heap h;
    wh_heap_config cfg = {(uint64_t)PAGES * WH_SLAB_PAGE, WH_HEAP_DEFAULT, WH_HEAP_HOST, 0, NULL};
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    uint32_t np = h.npages;
    void *a = wh_malloc(&h, 68u * WH_SLAB_PAGE - 100u); /* 68 pages */
    CHECK(a != NULL);
    walk_ok(&h, 1, 68ull * WH_SLAB_PAGE);
    void *b = wh_malloc(&h, (uint64_t)(np - 68u) * WH_SLAB_PAGE); /* exactly the rest */
    CHECK(b != NULL);
    walk_ok(&h, 2, (uint64_t)np * WH_SLAB_PAGE);
    CHECK(wh_malloc(&h, 1000) == NULL); /* full */
    wh_free(&h, a);
    wh_free(&h, b);
    walk_ok(&h, 0, 0);
    void *c = wh_malloc(&h, (uint64_t)np * WH_SLAB_PAGE); /* the whole heap */
    CHECK(c != NULL);
    wh_free(&h, c);
    walk_ok(&h, 0, 0);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* Runs in a window of free pages that crosses word boundaries. */
static void test_window(uint32_t lo, uint32_t hi, uint32_t n) {
    wh_heap h;
    wh_heap_config cfg = {(uint64_t)PAGES * WH_SLAB_PAGE, WH_HEAP_DEFAULT, WH_HEAP_HOST, 0, NULL};
    CHECK(wh_heap_create(&h, &cfg) == WH_OK);
    uint32_t np = h.npages;
    void **slot = (void **)calloc(np, sizeof(void *));
    for (uint32_t k = 0; k < np; ++k) { /* one 64 KiB slot per page */
        void *p = wh_malloc(&h, WH_SLAB_PAGE);
        CHECK(p != NULL);
        if (p) slot[page_of(&h, p)] = p;
    }
    CHECK(wh_malloc(&h, WH_SLAB_PAGE) == NULL);
    for (uint32_t k = lo; k < hi; ++k) {
        wh_free(&h, slot[k]);
        slot[k] = NULL;
    }
    walk_ok(&h, np - (hi - lo), (uint64_t)(np - (hi - lo)) * WH_SLAB_PAGE);
    CHECK(wh_malloc(&h, (uint64_t)(hi - lo + 1u) * WH_SLAB_PAGE) == NULL); /* one page too many */
    void *r = wh_malloc(&h, (uint64_t)n * WH_SLAB_PAGE - 16u);
    CHECK(r != NULL);
    if (r) CHECK(page_of(&h, r) >= lo && page_of(&h, r) + n <= hi);
    walk_ok(&h, np - (hi - lo) + 1u, (uint64_t)(np - (hi - lo) + n) * WH_SLAB_PAGE);
    wh_free(&h, r);
    for (uint32_t k = 0; k < np; ++k) wh_free(&h, slot[k]);
    walk_ok(&h, 0, 0);
    free(slot);
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "The DEFAULT heap's page runs as the k-d tree uses them.");
    test_exact();
    test_window(40, 100, 60);  /* a small run across words 0-1, exact fit */
    test_window(50, 150, 70);  /* a large run over words 0-1-2 */
    test_window(60, 190, 130); /* larger than two words, exact fit */
    test_window(120, 135, 9);  /* small, across words 1-2 */
    return wh_test_finish("test_kd_runs");
}
