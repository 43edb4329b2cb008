/* SPDX-License-Identifier: MIT */
/* Object allocator: 32-bit object references.
 *
 * A field that points to another object (a spring's ends, a node's springs)
 * may hold a wh_soa_ref instead of an object pointer: half the bytes in its
 * SOA array, as an index into static arrays takes, so a do-all that follows
 * references reads half as much for them.  Not in DynaSOAr, whose pointers
 * (section 3.3) are 64-bit; a reference turns into one with a multiply-add
 * and no memory access beyond the heap descriptor's capacities:
 *     bits 10..31  block index + 1   (0 is the null reference)
 *     bits  6..9   type id           (WH_SOA_MAX_TYPES types)
 *     bits  0..5   slot
 * So references reach the first WH_SOA_REF_BLOCKS blocks of a heap: a heap
 * made with wh_soa_config.refs has no more (wh_soa_create refuses a larger
 * one), and only such a heap's objects may be referenced.
 */
#ifndef WARPHEAP_SOA_REF_H
#define WARPHEAP_SOA_REF_H

#include "warpheap/soa/heap.h"

typedef uint32_t wh_soa_ref;
#define WH_SOA_NULL_REF        0u
#define WH_SOA_REF_BLOCKS      ((1u << 22) - 1u)
#define WH_SOA_REF_BLOCK_SHIFT 10u
#define WH_SOA_REF_TYPE_SHIFT  6u

/* The reference of object pointer p (0: the null reference). */
WH_INLINE WH_HOST_DEVICE wh_soa_ref wh_soa_ref_of(const wh_soa *s, uint64_t p) {
    if (!p) return WH_SOA_NULL_REF;
    uint32_t b = wh__soa_block_of(s, p);
    WH_ASSERT(s->refs && b < WH_SOA_REF_BLOCKS);
    return (b + 1u) << WH_SOA_REF_BLOCK_SHIFT | wh_soa_ptr_type(p) << WH_SOA_REF_TYPE_SHIFT | wh_soa_ptr_slot(p);
}

/* The object pointer of reference r (0 for the null reference).  The null
 * reference clears each part of the pointer (its type and slot are 0 already)
 * instead of selecting 0 for the whole: a field's address then folds to a
 * multiply-add from r, with no 64-bit select between it and the decoding. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_soa_ref_ptr(const wh_soa *s, wh_soa_ref r) {
    uint32_t t = (r >> WH_SOA_REF_TYPE_SHIFT) & (WH_SOA_MAX_TYPES - 1u);
    uint64_t live = 0u - (uint64_t)(r != 0u); /* all ones, or none for the null reference */
    uint64_t block = (uint64_t)(uintptr_t)wh__soa_block(s, (r >> WH_SOA_REF_BLOCK_SHIFT) - 1u) & live;
    return wh_soa_ptr_make((const void *)(uintptr_t)block, t, 1u + ((s->cap[t] - 1u) & (uint32_t)live), r & 63u);
}

#endif /* WARPHEAP_SOA_REF_H */
