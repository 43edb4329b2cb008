/* SPDX-License-Identifier: MIT */
/* Device heap: the size-class table of the SLAB and DEFAULT heaps -- which
 * class serves a request, a class's slot size, its slots per page, and where
 * its slot bits lie (heap/config.h has the classes' shape).
 */
#ifndef WARPHEAP_HEAP_CLASSES_H
#define WARPHEAP_HEAP_CLASSES_H

#include "warpheap/heap/core.h"

/* Slab class of a request: the smallest class whose slots hold n (1 <= n <= 64 KiB).
 * Above 1 KiB a class is a number of slots per page, m = 63 .. 16, and its
 * slots are the largest multiple of 16 that m of fit a page: the class of n
 * has the most slots of at least n, m = floor(4096 / ceil(n / 16)). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_class(uint64_t n) {
    if (n <= 128u) return n <= 16u ? 0u : (uint32_t)((n - 1u) >> 4);
    if (n <= 4096u && n > 1024u) return WH__SLAB_SPP_END - (WH_SLAB_PAGE / 16u) / (uint32_t)((n + 15u) >> 4);
    uint32_t k = 63u - (uint32_t)wh_clz64(n - 1u); /* 2^k < n <= 2^(k+1), k >= 7 */
    if (k < 10u) return 8u + (k - 7u) * 8u + (uint32_t)(((n - 1u) >> (k - 3u)) & 7u);
    return WH__SLAB_PAGE_C0 + (k - 12u);
}
/* Slot bytes of class c (multiples of 16). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_size(uint32_t c) {
    if (c < 8u) return 16u * (c + 1u);
    if (c < WH__SLAB_SPP_C0) {
        uint32_t k = 7u + (c - 8u) / 8u;
        return (1u << k) + ((c - 8u) % 8u + 1u) * (1u << (k - 3u));
    }
    if (c < WH__SLAB_PAGE_C0) return 16u * ((WH_SLAB_PAGE / 16u) / (WH__SLAB_SPP_END - c));
    return 8192u << (c - WH__SLAB_PAGE_C0);
}
/* Slots per page; the rest of the page (under one slot) is unused. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_spp(uint32_t c) { return WH_SLAB_PAGE / wh__slab_size(c); }
/* Bits per page in the class bitmap: spp rounded up to a power of two, so a
 * bit splits into page and slot by shifts (bits past spp are never set). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_lbpp_of(uint32_t spp) {
    return spp <= 1u ? 0u : 32u - (uint32_t)wh_clz32(spp - 1u);
}
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_lbpp(uint32_t c) { return wh__slab_lbpp_of(wh__slab_spp(c)); }

/* The class a heap serves n from: below WH__SLAB_FINE_PAGES pages (16 MiB)
 * only the powers of two (16 B .. 64 KiB, as many classes as pages to hold
 * them would otherwise run a small heap dry), all of them from there. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_class_of(const wh_heap *h, uint64_t n) {
    uint32_t c = wh__slab_class(n);
    if (h->slab_fine) return c;
    if (c < 8u) return c < 2u ? c : (c < 4u ? 3u : 7u); /* 16, 32, 64, 128 */
    if (c < WH__SLAB_SPP_C0) return c | 7u;             /* 256, 512, 1024 */
    if (c < WH__SLAB_PAGE_C0) return c <= WH__SLAB_SPP_END - 32u ? WH__SLAB_SPP_END - 32u : WH__SLAB_SPP_END - 16u;
    return c; /* 8 .. 64 KiB */
}

/* q / spp for class c's slots per page, by its reciprocal (no division),
 * for the classes with bump segments (spp >= 128): exact for q < 2^20 (a
 * segment's positions, heap_layout.c), because with m = ceil(2^32 / spp) =
 * (2^32 + e) / spp, e < spp <= 4096, q * m / 2^32 exceeds q / spp by
 * q * e / (spp * 2^32) < 1 / spp (test_heap checks every q). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_spp_div(const wh_heap *h, uint32_t c, uint32_t q) {
    return wh_mulhi32(q, h->spp_magic[c]);
}

/* in_page / slot bytes of class c (in_page < WH_SLAB_PAGE = 2^16), and the
 * class's slots per page, by m = size_magic[c] = ceil(2^32 / size) =
 * (2^32 + e) / size, e < size <= 2^16: q * m / 2^32 exceeds q / size by
 * q * e / (size * 2^32) < 1 / size for q <= 2^16, so mulhi(q, m) is exact;
 * q = 2^16 gives the slots per page, m >> 16 (test_heap checks every
 * in_page of every class).  The free's lane part: no division. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_slot_of(const wh_heap *h, uint32_t c, uint32_t in_page) {
    return wh_mulhi32(in_page, h->size_magic[c]);
}
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_spp_of(const wh_heap *h, uint32_t c) { return h->size_magic[c] >> 16; }
/* wh__slab_lbpp(c) from the same constant: the form of the free, its page
 * reclaim and the leader's bitmap path (a division is ~40 instructions; a
 * reclaim made four).  The allocating lanes (wh__got_slot) and the segment
 * paths keep the division: with the table there, a kernel of one 4-KiB
 * allocation a thread (1M threads) ran a quarter slower. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__slab_lbpp_at(const wh_heap *h, uint32_t c) {
    return wh__slab_lbpp_of(wh__slab_spp_of(h, c));
}

/* Word w of class c's slot bitmap at level 0, straight from the heap: for
 * the free path, where a descriptor (indexed by level in the summary walk)
 * would be made in local memory. */
WH_INLINE WH_HOST_DEVICE uint64_t *wh__slab_word(const wh_heap *h, uint32_t c, uint32_t w) {
    WH_ASSERT(((uint64_t)w << 6) < ((uint64_t)h->npages << wh__slab_lbpp_at(h, c)));
    return h->slot_words + h->slot_off[c] + w;
}

/* Class c's slot bitmap (a descriptor made on the fly: no memory access;
 * the slots per page from size_magic, not a division -- a free that fills a
 * word makes one for its summary bit, every other 16-B free-all warp). */
WH_INLINE WH_HOST_DEVICE wh_bitmap wh__slab_bitmap(const wh_heap *h, uint32_t c) {
    wh_bitmap bm;
    (void)wh_bitmap_layout(&bm, wh__slab_word(h, c, 0), (uint64_t)h->npages << wh__slab_lbpp_at(h, c));
    return bm;
}

#endif /* WARPHEAP_HEAP_CLASSES_H */
