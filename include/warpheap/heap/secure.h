/* SPDX-License-Identifier: MIT */
/* Device heap, hardened mode (WH_HEAP_SECURE; SLAB and DEFAULT kinds): every
 * free byte of the arena holds a pattern -- the arena is filled at create
 * and reset, a slot or a page run when it is freed -- and an allocation
 * checks the first WH__HEAP_CHECK bytes it gets.  A write to freed memory,
 * or past a request into the free memory after it, is then counted in
 * wh_heap_usage.corruptions when that memory is handed out again.
 *
 * Costs: a free writes the whole slot or run (one thread; a run of megabytes
 * takes long), an allocation reads up to WH__HEAP_CHECK bytes, and heap
 * create fills the arena.  Not caught: a read after free, a write into a
 * slot's or run's rounding (inside what the heap handed out), a write after
 * free past the first WH__HEAP_CHECK bytes, and corruptions of memory not
 * reused before the end.  The other kinds keep headers or neighbours in
 * free memory; create refuses the flag for them.
 */
#ifndef WARPHEAP_HEAP_SECURE_H
#define WARPHEAP_HEAP_SECURE_H

#include "warpheap/heap/core.h"

#define WH__HEAP_FREED_BYTE 0xDFu
#define WH__HEAP_FREED      0xDFDFDFDFDFDFDFDFull
#define WH__HEAP_CHECK      1024u

/* Fill [p, p + n) of memory this thread owns (n rounded up to 8: slots and
 * runs are 16-byte aligned and at least that large). */
WH__SLAB_COLD WH_HOST_DEVICE void wh__secure_fill(void *p, uint64_t n) {
    uint64_t *w = (uint64_t *)p;
    for (uint64_t i = 0; i < (n + 7u) / 8u; ++i) w[i] = WH__HEAP_FREED;
}

/* A slot or run of n bytes was just handed out: its first bytes must still
 * hold the pattern. */
WH__SLAB_COLD WH_HOST_DEVICE void wh__secure_taken(const wh_heap *h, const void *p, uint64_t n) {
    const uint64_t *w = (const uint64_t *)p;
    uint64_t words = (n < WH__HEAP_CHECK ? n : WH__HEAP_CHECK) / 8u;
    for (uint64_t i = 0; i < words; ++i)
        if (w[i] != WH__HEAP_FREED) {
            wh__heap_count(&h->ctl->corruptions);
            return;
        }
}

#endif /* WARPHEAP_HEAP_SECURE_H */
