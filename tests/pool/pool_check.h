/* SPDX-License-Identifier: MIT */
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

/* A pool of config c (created, checked) and its stats (checked). */
static inline wh_pool *pool_make(wh_pool_config c) {
    wh_pool *p = NULL;
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    return p;
}
static inline wh_pool_stats pool_stats(wh_pool *p) {
    wh_pool_stats s;
    CHECK(wh_pool_get_stats(p, &s) == WH_OK);
    return s;
}

#endif
