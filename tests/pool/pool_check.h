/* The pool's heap walk as a test check, with its message on failure. */
#ifndef WH_TEST_POOL_CHECK_H
#define WH_TEST_POOL_CHECK_H

#include "warpheap/pool.h"
#include "wh_test.h"

static inline void check_ok(wh_pool *p) {
    wh_status st = wh_pool_check(p);
    if (st != WH_OK) fprintf(stderr, "%s\n", wh_last_error());
    CHECK(st == WH_OK);
}

#endif
