/* SPDX-License-Identifier: MIT */
/* SLAB bitmap path: freed slots claimed from a class's bitmap, and pages
 * activated for a class when it has none (DynaSOAr's request coalescing and
 * bitmap rotation, dynasoar-object-allocator.txt section 4.2).  A class takes
 * this path when its bump segments cannot serve (heap/slab_segment.h): the
 * class has none, or no aligned run of free pages is left for one.  One
 * leader claims up to a warp group's slots in one word with one atomic.
 *
 * Activation gate: when a burst of warps finds a class empty at once, letting
 * each activate a page takes one page per warp for a few slots each and runs
 * the page pool dry with plenty of room left (as in the k-d tree builder,
 * and with mixed sizes, where a round's dozen requests of a class would
 * leave a dozen partly used pages).  So a leader that finds the class empty
 * adds the slots it wants to the class's demand, and activates only while
 * the activations in flight beyond a slack cannot cover the demand:
 * (busy - slack) * slots per page < wanted, which the first always passes.
 * The others back off and look for the slots those publish, and after
 * WH__SLAB_GATE_TRIES looks activate anyway: a bounded wait, never a wait on
 * one thread.  A large burst still activates many pages at once, as its
 * demand covers them.  The slack (h->gate_slack: the heap's pages >>
 * WH__SLAB_GATE_SHIFT on the GPU, none in host memory) is there because the
 * demand a leader sees is only that of the leaders waiting with it: without
 * it a class activates about one page at a time, and a mixed-size fill runs
 * at a third of its speed; it holds at most 1/4096 of the heap per class in
 * pages partly used beyond the demand (docs/heap.md has the measurements).
 * A request that finds no free page looks for published or freed slots up
 * to WH__SLAB_TAKE_TRIES times before it fails.
 */
#ifndef WARPHEAP_HEAP_SLAB_BITMAP_H
#define WARPHEAP_HEAP_SLAB_BITMAP_H

#include "warpheap/heap/slab_segment.h"

/* Leader: claim up to `want` slots of class c, activating a page (through the
 * gate) when the class has none.  Word index and *got, or WH_BITMAP_NONE;
 * WH__TAKE_DRY when its first activation found no free page and not
 * `retired`: the caller takes back what the classes' segments hold untouched
 * and the stranded pages (wh__seg_retire_all, a call of its own: inlined
 * here, its registers came on top of the activation's, 83 against 72 in
 * heap_bench's DEFAULT kernel) and calls again with `retired`, which goes
 * on with the second try.
 * Inlined into its one caller, wh__slab_take_got, the call that the leader
 * makes from wh__slab_malloc: the kernel's registers follow the heaviest
 * chain of calls, so no rare path calls another (nested in
 * wh__slab_get_rare with the segment preparation, they take a 1-allocation
 * kernel to 207 registers). */
#define WH__TAKE_DRY 0xFFFFFFFEu
WH__SLAB_RARE WH_HOST_DEVICE uint32_t wh__slab_take(const wh_heap *h, uint32_t c, uint64_t seed, unsigned want,
                                                    uint64_t *got, bool retired) {
    wh_bitmap bmv = wh__slab_bitmap(h, c);
    const wh_bitmap *bm = &bmv;
    WH__PROF(h, WH_PROF_TAKE_CALLS, 1);
    uint32_t w = wh_bitmap_claim(bm, seed, want, got);
    if (w == WH_BITMAP_NONE) {
        uint64_t *gate = &h->ctl->activating[c], demand = (uint64_t)want << 32;
        uint32_t spp = wh__slab_spp_of(h, c), slack = h->gate_slack;
        (void)wh_atomic_fetch_add(gate, demand, WH_RELAXED);
        for (uint32_t tries = retired; w == WH_BITMAP_NONE && tries < WH__SLAB_TAKE_TRIES; ++tries) {
            uint64_t g = wh_atomic_fetch_add(gate, 1ull, WH_RELAXED), busy = (uint32_t)g, wanted = g >> 32;
            if (busy < slack || (busy - slack) * spp < wanted || tries >= WH__SLAB_GATE_TRIES) {
                w = wh__slab_activate(h, bm, c, seed, want, got);
                (void)wh_atomic_fetch_sub(gate, 1ull, WH_RELAXED);
                if (w != WH_BITMAP_NONE) { /* its slots are counted there */
                    (void)wh_atomic_fetch_sub(gate, demand, WH_RELAXED);
                    WH__PROF(h, WH_PROF_ACTIVATIONS, 1);
                    return w;
                }
                /* no free page: the first time, the classes' segments give
                 * back what they hold untouched (a small heap runs dry with
                 * most of it there) and the stranded pages go back (the
                 * caller); then slots may still be published by other
                 * activators or freed by other threads -- look again,
                 * boundedly */
                if (tries == 0) {
                    w = WH__TAKE_DRY;
                    break;
                }
            } else {
                (void)wh_atomic_fetch_sub(gate, 1ull, WH_RELAXED);
                WH__PROF(h, WH_PROF_GATED, 1);
            }
            wh_backoff(tries);
            seed = wh_hash64(seed + tries);
            w = wh_bitmap_claim(bm, seed, want, got);
        }
        (void)wh_atomic_fetch_sub(gate, demand, WH_RELAXED);
    }
    if (w == WH_BITMAP_NONE || w == WH__TAKE_DRY) return w;
    wh__slab_used_add(h, c, w, *got);
    return w;
}

#endif /* WARPHEAP_HEAP_SLAB_BITMAP_H */
