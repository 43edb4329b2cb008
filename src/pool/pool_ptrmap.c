/* SPDX-License-Identifier: MIT */
/* Address -> block descriptor map of the host pool: open addressing with
 * linear probing and backward-shift deletion (no tombstones), Fibonacci
 * hashing.  It starts small and doubles before it is half full (at most
 * twice the descriptors): sized for every descriptor at create, its 6 MiB
 * would be touched a page at a time by the first passes of
 * random_allocations (a page fault per new page: 600 ns an operation at
 * N = 1e3 on the CPU backend against 130 once all are touched), and probes
 * would miss the cache.
 * Not from a seed: Futhark keeps cl_mem handles and needs no lookup. */
#include "pool_internal.h"

#include <stdlib.h>

static uint64_t wh__map_home(const wh_pool *p, uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> p->map_shift; }

/* Point the map at new tables of 2^bits entries, empty.  False (the map as
 * it was) without host memory. */
static bool wh__map_tables(wh_pool *p, uint32_t bits) {
    uint64_t n = 1ull << bits;
    uint64_t *keys = calloc(n, sizeof *keys);
    uint32_t *vals = calloc(n, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    free(p->map_keys);
    free(p->map_vals);
    p->map_keys = keys;
    p->map_vals = vals;
    p->map_mask = n - 1;
    p->map_shift = 64 - bits;
    p->map_count = 0;
    return true;
}

bool wh__map_init(wh_pool *p) { return wh__map_tables(p, WH__MAP_MIN_BITS); }

/* Room for one more key: the map doubles past half full.  False only when
 * it cannot grow and has no room left (one slot stays empty so that probes
 * end). */
bool wh__map_reserve(wh_pool *p) {
    uint64_t n = p->map_mask + 1;
    if (2 * (p->map_count + 1) <= n) return true;
    uint64_t *keys = p->map_keys;
    uint32_t *vals = p->map_vals;
    p->map_keys = NULL; /* kept by wh__map_tables' success only */
    p->map_vals = NULL;
    if (!wh__map_tables(p, 65 - p->map_shift)) {
        p->map_keys = keys;
        p->map_vals = vals;
        return p->map_count + 1 < n;
    }
    for (uint64_t i = 0; i < n; ++i)
        if (keys[i]) wh__map_put(p, keys[i], vals[i]);
    free(keys);
    free(vals);
    return true;
}

/* Insert or update; the caller made room (wh__map_reserve). */
void wh__map_put(wh_pool *p, uint64_t key, uint32_t val) {
    uint64_t i = wh__map_home(p, key);
    while (p->map_keys[i] != 0 && p->map_keys[i] != key) i = (i + 1) & p->map_mask;
    p->map_count += p->map_keys[i] == 0;
    p->map_keys[i] = key;
    p->map_vals[i] = val;
}

uint32_t wh__map_get(const wh_pool *p, uint64_t key) {
    if (key == 0) return WH_BLOCK_NONE;
    for (uint64_t i = wh__map_home(p, key);; i = (i + 1) & p->map_mask) {
        if (p->map_keys[i] == key) return p->map_vals[i];
        if (p->map_keys[i] == 0) return WH_BLOCK_NONE;
    }
}

/* Remove key; later entries of its probe run move back into the hole. */
void wh__map_del(wh_pool *p, uint64_t key) {
    uint64_t i = wh__map_home(p, key);
    while (p->map_keys[i] != key) {
        if (p->map_keys[i] == 0) return;
        i = (i + 1) & p->map_mask;
    }
    for (uint64_t j = (i + 1) & p->map_mask; p->map_keys[j] != 0; j = (j + 1) & p->map_mask) {
        uint64_t h = wh__map_home(p, p->map_keys[j]);
        /* move j to the hole i unless its home lies cyclically in (i, j] */
        bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (stays) continue;
        p->map_keys[i] = p->map_keys[j];
        p->map_vals[i] = p->map_vals[j];
        i = j;
    }
    p->map_keys[i] = 0;
    p->map_count--;
}
