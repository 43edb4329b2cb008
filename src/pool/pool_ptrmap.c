/* Address -> block descriptor map of the host pool: open addressing with
 * linear probing and backward-shift deletion (no tombstones), Fibonacci
 * hashing.  Sized at create for twice the descriptors, so it never fills.
 * Not from a seed: Futhark keeps cl_mem handles and needs no lookup. */
#include "pool_internal.h"

static uint64_t wh__map_home(const wh_pool *p, uint64_t key) {
    return (key * 0x9E3779B97F4A7C15ull) >> p->map_shift;
}

void wh__map_put(wh_pool *p, uint64_t key, uint32_t val) {
    uint64_t i = wh__map_home(p, key);
    while (p->map_keys[i] != 0 && p->map_keys[i] != key) i = (i + 1) & p->map_mask;
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
}
