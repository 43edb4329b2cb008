/* SPDX-License-Identifier: MIT */
/* Object pointers of the object allocator ("fake pointers").
 *
 * Implements DynaSOAr (Springer & Masuhara, ECOOP 2019) section 3.3, Fig. 6:
 * an object pointer is the 64-byte aligned address of its block, with the
 * object's slot in the 6 low bits and the runtime type and block capacity in
 * the high bits, so a field address needs no memory access beyond the field.
 *
 * Departure: the bit budget.  The paper keeps 35 address bits (24 GB GPUs, no
 * virtual memory).  Today device pointers are unified virtual addresses: on
 * x86-64 Linux cudaMalloc returns addresses near 2^47 even on an 80 GB GPU, so
 * 35 bits would truncate every pointer.  Here:
 *     bits 56..63  type id        (8 bits; the heap allows WH_SOA_MAX_TYPES)
 *     bits 50..55  capacity - 1   (6 bits: capacities 1..64)
 *     bits  6..49  block address  (50-bit addresses: 1 PiB of VA, 64 B aligned)
 *     bits  0..5   slot
 * wh_soa_create checks that the whole heap lies below 2^50 and fails with
 * WH_ERR_UNSUPPORTED otherwise.  The null object pointer is 0.
 */
#ifndef WARPHEAP_SOA_POINTER_H
#define WARPHEAP_SOA_POINTER_H

#include "warpheap/warpheap.h"

#define WH_SOA_ADDR_BITS   50u
#define WH_SOA_ADDR_MASK   ((1ull << WH_SOA_ADDR_BITS) - 1ull)
#define WH_SOA_BLOCK_ALIGN 64u
#define WH_SOA_CAP_SHIFT   50u
#define WH_SOA_TYPE_SHIFT  56u
/* The block address bits of a pointer. */
#define WH__SOA_BLOCK_MASK (WH_SOA_ADDR_MASK & ~(uint64_t)(WH_SOA_BLOCK_ALIGN - 1u))

/* Each part is masked to its bits, which changes no valid pointer: the
 * compiler then knows the parts apart, and a field address of a pointer made
 * in the same function (a do-all's object, a reference's) folds to a
 * multiply-add from the parts instead of decoding 64 bits. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_soa_ptr_make(const void *block, uint32_t type, uint32_t cap, uint32_t slot) {
    uint64_t b = (uint64_t)(uintptr_t)block;
    WH_ASSERT(cap >= 1u && cap <= 64u && slot < 64u && b == (b & WH__SOA_BLOCK_MASK));
    return ((uint64_t)type << WH_SOA_TYPE_SHIFT) | ((uint64_t)((cap - 1u) & 63u) << WH_SOA_CAP_SHIFT) |
           (b & WH__SOA_BLOCK_MASK) | (uint64_t)(slot & 63u);
}
WH_INLINE WH_HOST_DEVICE uint32_t wh_soa_ptr_type(uint64_t p) { return (uint32_t)(p >> WH_SOA_TYPE_SHIFT); }
WH_INLINE WH_HOST_DEVICE uint32_t wh_soa_ptr_cap(uint64_t p) { return (uint32_t)((p >> WH_SOA_CAP_SHIFT) & 63u) + 1u; }
WH_INLINE WH_HOST_DEVICE uint32_t wh_soa_ptr_slot(uint64_t p) { return (uint32_t)(p & 63u); }
WH_INLINE WH_HOST_DEVICE uint8_t *wh_soa_ptr_block(uint64_t p) {
    return (uint8_t *)(uintptr_t)(p & WH__SOA_BLOCK_MASK);
}

/* Bytes of block header before the data segment (bitmaps and type). */
#define WH_SOA_HEADER_BYTES 64u

/* Address of a field: the field's SOA array starts at cap * its offset in the
 * class's layout struct (a multiple of its alignment, whatever cap is), and the
 * object's value is element slot of it.  Inherited fields have the same layout
 * offset in every subclass, so a base-class accessor works on any subclass. */
WH_INLINE WH_HOST_DEVICE void *wh_soa_field(uint64_t p, size_t layout_offset, size_t size) {
    return wh_soa_ptr_block(p) + WH_SOA_HEADER_BYTES + (size_t)wh_soa_ptr_cap(p) * layout_offset +
           (size_t)wh_soa_ptr_slot(p) * size;
}

#endif /* WARPHEAP_SOA_POINTER_H */
