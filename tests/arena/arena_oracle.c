/* SPDX-License-Identifier: MIT */
/* The overlap oracle of the arena tests (see arena_oracle.h). */
#include "arena_oracle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    uint64_t lo, hi;
    uint32_t slot;
} span;

static int by_lo(const void *x, const void *y) {
    const span *a = (const span *)x, *b = (const span *)y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static uint64_t complain(uint64_t bad, const char *what, uint32_t slot, uint64_t v) {
    if (bad < 8) fprintf(stderr, "arena oracle: slot %u: %s (%" PRIu64 ")\n", slot, what, v);
    return bad + 1;
}

uint64_t wh_arena_oracle(const wh_handle *slots, const uint64_t *bytes, const uint64_t *strides, uint32_t n,
                         uint64_t base, uint64_t region, uint64_t *live, uint64_t *live_bytes) {
    span *sp = (span *)malloc((n ? n : 1) * sizeof *sp);
    uint64_t bad = 0, m = 0, total = 0;
    if (!sp) {
        fprintf(stderr, "arena oracle: out of memory\n");
        return 1;
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (slots[i].ptr == 0) continue;
        uint64_t lo = slots[i].ptr, hi = lo + bytes[i];
        if (lo < base || hi > base + region || hi <= lo)
            bad = complain(bad, "outside the region", i, lo - base);
        else if ((lo - base) % strides[i])
            bad = complain(bad, "not a multiple of its stride", i, strides[i]);
        sp[m++] = (span){lo, hi, i};
        total += bytes[i];
    }
    qsort(sp, m, sizeof *sp, by_lo);
    for (uint64_t j = 1; j < m; ++j)
        if (sp[j].lo < sp[j - 1].hi) bad = complain(bad, "overlaps the slot before it", sp[j].slot, sp[j - 1].slot);
    free(sp);
    if (live) *live = m;
    if (live_bytes) *live_bytes = total;
    return bad;
}
