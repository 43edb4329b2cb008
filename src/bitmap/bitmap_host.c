/* SPDX-License-Identifier: MIT */
/* Hierarchical bitmap, host side: fill, count, consistency check and the CPU
 * version of indices() (DynaSOAr 4.1.5, Alg. 5).  All run on a bitmap in host
 * memory with no operation in flight; the device versions are bitmap_cuda.cu. */
#include "warpheap/bitmap.h"

wh_status wh_bitmap_init_host(wh_bitmap *bm, void *mem, uint64_t nbits, bool ones) {
    wh__clear_error();
    if (!mem) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_bitmap_init_host: memory is NULL");
    wh_status st = wh_bitmap_layout(bm, mem, nbits);
    if (st != WH_OK) return st;
    for (uint32_t l = 0; l < bm->levels; ++l)
        for (uint32_t i = 0, n = wh_bitmap_level_words(bm, l); i < n; ++i)
            *wh_bitmap_word(bm, l, i) = wh_bitmap_fill_word(bm, l, i, ones);
    return WH_OK;
}

uint64_t wh_bitmap_count_host(const wh_bitmap *bm) {
    return wh_bitmap_count_words(bm, 0, wh_bitmap_level_words(bm, 0));
}

uint64_t wh_bitmap_check_host(const wh_bitmap *bm) {
    uint64_t bad = 0;
    for (uint32_t l = 0; l < bm->levels; ++l) {
        uint32_t bits = wh_bitmap_level_bits(bm, l), words = wh_bitmap_level_words(bm, l);
        for (uint32_t i = 0; i < words; ++i) {
            uint64_t w = *wh_bitmap_word(bm, l, i);
            /* bits past the end of the level must be zero */
            if (i == words - 1 && bits % 64u) bad += (uint64_t)wh_popc64(w >> (bits % 64u));
            if (l == 0) continue;
            for (uint32_t b = 0; b < 64u && i * 64u + b < bits; ++b) {
                bool summary = (w >> b) & 1u;
                bool nonzero = *wh_bitmap_word(bm, l - 1, i * 64u + b) != 0;
                bad += summary != nonzero;
            }
        }
    }
    return bad;
}

/* Depth-first walk from the top word: a container is read only if its summary
 * bit is set, so empty regions cost one bit each at the level above. */
uint32_t wh_bitmap_indices_host(const wh_bitmap *bm, uint32_t *out) {
    uint64_t pending[WH_BITMAP_MAX_LEVELS]; /* unvisited bits of the word per level */
    uint32_t base[WH_BITMAP_MAX_LEVELS];    /* word index of that word              */
    uint32_t n = 0;
    int l = (int)bm->levels - 1;
    base[l] = 0;
    pending[l] = *wh_bitmap_word(bm, (uint32_t)l, 0);
    while (l < (int)bm->levels) {
        if (!pending[l]) {
            ++l;
            continue;
        } /* this word is done: back up */
        uint32_t b = (uint32_t)wh_ffs64(pending[l]) - 1u;
        pending[l] &= pending[l] - 1u;
        uint32_t idx = base[l] * 64u + b;
        if (l == 0) {
            out[n++] = idx;
            continue;
        }
        --l; /* descend into container idx */
        base[l] = idx;
        pending[l] = *wh_bitmap_word(bm, (uint32_t)l, idx);
    }
    return n;
}

wh_bitmap wh_bitmap_rebase(const wh_bitmap *bm, void *mem) {
    wh_bitmap r = *bm;
    r.words = (uint64_t *)mem;
    return r;
}
