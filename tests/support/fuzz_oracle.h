/* SPDX-License-Identifier: MIT */
/* What the fuzz targets know of live allocations: address, size and a fill
 * byte written at allocation.  A new block must overlap no live one, and a
 * block's bytes must be intact when it is freed. */
#ifndef WH_FUZZ_ORACLE_H
#define WH_FUZZ_ORACLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wh_fz_block {
    uint8_t *p;
    size_t n;
    uint8_t fill;
} wh_fz_block;

/* Stop the run: libFuzzer keeps the input that got here. */
#define WH_FZ_DIE(...)                                \
    do {                                              \
        fprintf(stderr, "fuzz oracle: " __VA_ARGS__); \
        fputc('\n', stderr);                          \
        abort();                                      \
    } while (0)

static inline bool wh_fz_overlap(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    return a < b + bn && b < a + an;
}

/* The index of a live block that [p, p+n) overlaps, or -1. */
static inline long wh_fz_find_overlap(const wh_fz_block *live, uint32_t nlive, const uint8_t *p, size_t n) {
    for (uint32_t i = 0; i < nlive; ++i)
        if (wh_fz_overlap(p, n ? n : 1, live[i].p, live[i].n ? live[i].n : 1)) return (long)i;
    return -1;
}

static inline void wh_fz_fill(wh_fz_block *b) { memset(b->p, b->fill, b->n); }

static inline bool wh_fz_intact(const wh_fz_block *b) {
    for (size_t i = 0; i < b->n; ++i)
        if (b->p[i] != b->fill) return false;
    return true;
}

#endif
