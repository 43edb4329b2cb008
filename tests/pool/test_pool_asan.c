/* SPDX-License-Identifier: MIT */
/* AddressSanitizer inside the host pool (CPU backend): with no argument, the
 * requested bytes of every block are usable, in both ways of growing; with
 * "overflow" it writes one byte past a block and with "use-after-free" it
 * reads a freed block, and an ASan build dies there with a report (ctest
 * checks the report's words; registered in ASan builds only). */
#include "warpheap/pool.h"
#include "wh_test.h"
#include "pool_check.h"

#include <string.h>

static volatile unsigned char sink;

static void usable(wh_pool_growth growth) {
    wh_pool *p = pool_make((wh_pool_config){.backend = WH_POOL_CPU, .growth = growth});
    unsigned char *x[64];
    for (int i = 0; i < 64; ++i) {
        size_t n = 1 + wh_hash64((uint64_t)i) % 200000;
        CHECK((x[i] = wh_pool_alloc(p, n, NULL)) != NULL);
        memset(x[i], i, n);
        if (i % 3 == 0) {
            CHECK(wh_pool_free(p, x[i], NULL) == WH_OK);
            x[i] = NULL;
        }
    }
    check_ok(p);
    for (int i = 0; i < 64; ++i) CHECK(wh_pool_free(p, x[i], NULL) == WH_OK);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    wh_pool_destroy(p);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    wh_pool *p = pool_make((wh_pool_config){.backend = WH_POOL_CPU, .growth = WH_POOL_GROW_ARENAS});
    unsigned char *x = wh_pool_alloc(p, 100, NULL), *y = wh_pool_alloc(p, 100, NULL);
    CHECK(x && y);
    if (!strcmp(mode, "overflow")) {
        fprintf(stderr, "writing 1 byte past a block of 100 at %p\n", (void *)x);
        x[100] = 1;
    } else if (!strcmp(mode, "use-after-free")) {
        CHECK(wh_pool_free(p, x, NULL) == WH_OK);
        fprintf(stderr, "reading a freed block at %p\n", (void *)x);
        sink = x[0];
    } else {
        usable(WH_POOL_GROW_ARENAS);
        usable(WH_POOL_GROW_VMM);
    }
    wh_pool_free(p, x, NULL);
    wh_pool_free(p, y, NULL);
    wh_pool_destroy(p);
    return wh_test_finish("test_pool_asan");
}
