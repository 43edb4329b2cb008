/* SPDX-License-Identifier: MIT */
/* SLAB: size classes on hierarchical bitmaps with bump segments -- the
 * allocation and free of one slot, the fast path of wh_malloc for the SLAB and
 * DEFAULT heaps.  The slabs follow Halloc as summarised in
 * register-efficient-gpu-allocators.txt section 4.5, the request coalescing
 * and bitmap rotation DynaSOAr (dynasoar-object-allocator.txt section 4.2).
 *
 * A warp's same-class requests elect a leader (heap.h), which gets slots for
 * the whole group: nearly always one load and one atomic add on its class's
 * bump segment (wh__slab_get, below); when that cannot serve, the segments'
 * rare paths (heap/slab_segment.h: the next segment, its preparation), and
 * failing them the bitmap path (heap/slab_bitmap.h: freed slots, page
 * activation; pages in heap/slab_page.h).  A free sets the slot's bit in its
 * class bitmap -- one atomic for the lanes of a warp whose slots share a
 * bitmap word -- and the page's last free gives the page back.
 *
 * Segment first: a class hands out its bump segment while that has room, and
 * claims freed slots from its bitmap only when it has none (no segment can be
 * prepared: the pool is dry or fragmented, wh__seg_back_off) -- bump
 * allocation with reuse deferred, as Immix and mimalloc defer theirs.  A page
 * whose slots are all freed goes back to the pool at once, so nothing is
 * lost; only partly used pages wait.
 */
#ifndef WARPHEAP_HEAP_SLAB_H
#define WARPHEAP_HEAP_SLAB_H

#include "warpheap/heap/slab_bitmap.h"
#include "warpheap/heap/secure.h"

/* A free's subtraction from its page's live slots.  On the GPU it is
 * relaxed and goes out with the or that sets the slots' bits, neither
 * waiting for the other: a release would wait for the or first, one more
 * round trip in every free.  So the count may reach zero before a bit is
 * there; the bits decide (the reclaim takes them and acquires the frees'
 * or with a fence), and a reclaim that misses a bit this way strands the
 * page for a sweep (heap/slab_page.h).  On the CPU it is acq_rel, after the
 * or: the free that takes the count to zero then sees every bit, and
 * ThreadSanitizer checks that order. */
#if WH_ON_GPU
#define WH__FREE_SUB_MO WH_RELAXED
#else
#define WH__FREE_SUB_MO WH_ACQ_REL
#endif

/* The calls of the fast paths into the rare ones (see WH__SLAB_RARE).  The
 * take-back when the page pool runs dry, of every class way's segments but
 * `except`'s: called by the allocating leader between the two tries of a
 * preparation or a bitmap path, not from inside them, whose registers it
 * would come on top of; DEFAULT's page-run path (heap.h) is the one rare
 * path that calls it, its own registers being few. */
WH__SLAB_COLD WH_HOST_DEVICE void wh__rare_retire_all(const wh_heap *h, uint32_t except) {
    wh__seg_retire_all(h, except);
}
/* A free's rare work: it filled word w of class c's bitmap (its summary
 * bits), it freed the last slot of page p (the page back to the pool).  The
 * summary first: nothing of it is live across the reclaim, the heavier of
 * the two (the other order costs a free kernel three registers). */
WH__SLAB_COLD WH_HOST_DEVICE void wh__rare_free(const wh_heap *h, uint32_t c, uint32_t w, uint32_t p, bool filled,
                                                bool last) {
    if (filled) {
        wh_bitmap bm = wh__slab_bitmap(h, c);
        (void)wh__bitmap_propagate(&bm, 0, w);
    }
    if (!last) return;
    if (wh__slab_reclaim(h, c, p, WH__RUN_CHUNK)) wh__pages_back(h, 1u);
}

/* The seed of a leader's bitmap searches for class c in its group's round n. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__slab_seed(uint32_t c, uint32_t n) { return wh__heap_seed((uint64_t)n << 8 | c); }

/* What a leader got for its group, in one of two forms (info):
 *   bitmap bits (WH__GOT_SEG clear): the slots of bits x + the set bits of y;
 *   segment positions (WH__GOT_SEG): n1 = info & 63 slots from address x on,
 *     the first `left` = info >> 12 & 0x1FFF of them in x's page and the
 *     rest in the next page, past this one's unused tail of
 *     (info >> 25 & 31) * 16 bytes; then n2 = info >> 6 & 63 slots from
 *     address y on (the start of the next segment).
 * WH__GOT_PREP: prep names a segment for the group to set up.  For the
 * leader alone, prep == WH__PREP_BEGIN: the next segment wants a preparer
 * (wh__slab_begin); WH__PREP_BITMAP: no slot, take the bitmap path
 * (wh__slab_take_got); WH__PREP_DRY (from wh__slab_begin), WH__PREP_TDRY
 * (from wh__slab_take_got): the page pool is dry, take back the classes'
 * untouched segments (wh__rare_retire_all) and call that path again.
 * WH__GOT_AGAIN (no slot, bitmap form): look again.
 * A lane's address is a multiply and an add (wh__got_slot): the leader did
 * the one division, by a reciprocal. */
typedef struct wh__slab_got {
    uint64_t x, y;
    uint32_t info, prep;
} wh__slab_got;
#define WH__GOT_SEG     0x80000000u
#define WH__GOT_PREP    0x40000000u
#define WH__GOT_AGAIN   0x20000000u
#define WH__PREP_BEGIN  0xFFFFFFFEu
#define WH__PREP_BITMAP 0xFFFFFFFDu
#define WH__PREP_DRY    0xFFFFFFFCu
#define WH__PREP_TDRY   0xFFFFFFFBu

WH_INLINE WH_HOST_DEVICE wh__slab_got wh__got_none(void) {
    wh__slab_got g = {0, 0, 0, WH_BITMAP_NONE};
    return g;
}
/* Bitmap form: bits `got` of word w (WH_BITMAP_NONE: none). */
WH_INLINE WH_HOST_DEVICE wh__slab_got wh__got_bits(uint32_t w, uint64_t got) {
    wh__slab_got g = wh__got_none();
    if (w != WH_BITMAP_NONE) g.x = (uint64_t)w * 64u, g.y = got;
    return g;
}
/* Segment form: positions q .. q+n1-1 of segment `code` (wh__seg_code),
 * then 0 .. n2-1 of segment code2 (n1 + n2 <= 32 < spp: a page boundary is
 * crossed at most once, or the slots tile their pages). */
WH_INLINE WH_HOST_DEVICE wh__slab_got wh__got_seg(const wh_heap *h, uint32_t c, uint32_t code, uint32_t q, uint32_t n1,
                                                  uint32_t code2, uint32_t n2) {
    uint32_t spp = wh__slab_spp_of(h, c), size = wh__slab_size(c);
    uint32_t j = wh__slab_spp_div(h, c, q), slot = q - j * spp;
    wh__slab_got g = wh__got_none();
    g.x = (uint64_t)(uintptr_t)(h->base + (uint64_t)(wh__seg_p0(code) + j) * WH_SLAB_PAGE + (uint64_t)slot * size);
    if (n2) g.y = (uint64_t)(uintptr_t)(h->base + (uint64_t)wh__seg_p0(code2) * WH_SLAB_PAGE);
    g.info = WH__GOT_SEG | n1 | n2 << 6 | (spp - slot) << 12 | (WH_SLAB_PAGE - spp * size) >> 4 << 25;
    return g;
}
WH_INLINE WH_HOST_DEVICE unsigned wh__got_count(const wh__slab_got *g) {
    return g->info & WH__GOT_SEG ? (g->info & 63u) + (g->info >> 6 & 63u) : (unsigned)wh_popc64(g->y);
}
/* The r-th slot of g (r < wh__got_count). */
WH_INLINE WH_HOST_DEVICE void *wh__got_slot(const wh_heap *h, uint32_t c, const wh__slab_got *g, unsigned r) {
    uint64_t size = wh__slab_size(c);
    if (!(g->info & WH__GOT_SEG)) {
        uint64_t b = g->x + (uint64_t)wh_nth_set_bit64(g->y, r);
        uint32_t l = wh__slab_lbpp(c);
        return h->base + (b >> l) * WH_SLAB_PAGE + (b & ((1ull << l) - 1u)) * size;
    }
    unsigned n1 = g->info & 63u;
    if (r >= n1) return (uint8_t *)(uintptr_t)g->y + (r - n1) * size;
    uint64_t tail = r >= (g->info >> 12 & 0x1FFFu) ? (uint64_t)(g->info >> 25 & 31u) << 4 : 0u;
    return (uint8_t *)(uintptr_t)g->x + r * size + tail;
}

/* Leader, all but the fast path of wh__slab_get (a call on the GPU): the
 * bump segments (v: the way's state as loaded, or as the fast path's add
 * returned it when `added`); failing them, the bitmap path -- freed slots,
 * then page activation (WH__PREP_BITMAP).  top: the class bitmap's top word
 * for a class without segments (wh__slab_get loads it only there), else 0:
 * when nonzero, freed slots are claimed first.  n: the group's round, for the
 * seed of the bitmap searches. */
WH__SLAB_COLD WH_HOST_DEVICE wh__slab_got wh__slab_get_rare(const wh_heap *h, uint32_t c, uint32_t way, uint32_t n,
                                                            unsigned want, uint64_t top, uint64_t v, bool added) {
    if (top && !added) {
        uint64_t got = 0;
        wh_bitmap bm = wh__slab_bitmap(h, c);
        uint32_t w = wh_bitmap_claim(&bm, wh__slab_seed(c, n), want, &got);
        if (w != WH_BITMAP_NONE) {
            wh__slab_used_add(h, c, w, got);
            WH__PROF(h, WH_PROF_FREED_CLAIMS, 1);
            return wh__got_bits(w, got);
        }
    }
    uint64_t b1 = 0;
    uint32_t x2 = 0;
    bool begin = false;
    unsigned k = wh__seg_take(h, c, way, want, v, added, &b1, &x2, &begin), n2 = x2 >> 24 & 127u;
    wh__slab_got g = wh__got_none();
    if (k) g = wh__got_seg(h, c, (uint32_t)(b1 >> 32), (uint32_t)b1, k - n2, x2 & 0xFFFFFFu, n2);
    if (begin)
        g.prep = WH__PREP_BEGIN;
    else if (!k)
        g.prep = WH__PREP_BITMAP;
    return g;
}

/* Leader, when g asks for it (WH__PREP_BITMAP): the bitmap path.  Called
 * from wh__slab_malloc, not from the other rare paths: nested in them, its
 * registers would come on top of theirs.  WH__PREP_TDRY: call again with
 * `retired` after the take-back (wh__slab_take). */
WH__SLAB_COLD WH_HOST_DEVICE wh__slab_got wh__slab_take_got(const wh_heap *h, uint32_t c, uint32_t n, unsigned want,
                                                            bool retired) {
    uint64_t got = 0;
    uint32_t w = wh__slab_take(h, c, wh__slab_seed(c, n), want, &got, retired);
    wh__slab_got g = wh__got_bits(w == WH__TAKE_DRY ? WH_BITMAP_NONE : w, got);
    if (w == WH__TAKE_DRY) g.prep = WH__PREP_TDRY;
    return g;
}

/* Leader: up to `want` slots of class c for its group.  The fast path, taken
 * by nearly every request: room for all of them in the current segment
 * before its end (segment first), so one add and no
 * rotation.  A load, an add and the segment form: no bitmap descriptor, no division,
 * no loop (the general path issues ~865 warp-instructions per 16-B
 * allocation, BUMP ~130).  Everything else:
 * wh__slab_get_rare. */
WH_INLINE WH_HOST_DEVICE wh__slab_got wh__slab_get(const wh_heap *h, uint32_t c, uint32_t way, uint32_t n,
                                                   unsigned want) {
    uint64_t *st = wh__seg_state(h, c, way);
    /* both loads issued before either is waited for: one round trip (the
     * class bitmap's top word only for a class without segments) */
    bool seg = wh__seg_on(h, c);
    uint64_t top = !seg ? wh_atomic_load(h->slot_words + h->slot_top[c], WH_RELAXED) : 0;
    uint64_t v = seg ? wh_atomic_load(st, WH_RELAXED) : 0;
    /* (no current segment: a capacity of 0) */
    if (top || wh__seg_s(v) + want >= wh__seg_cap(h, c, wh__seg_r0(v)))
        return wh__slab_get_rare(WH__RARE(h), c, way, n, want, top, v, false);
    WH__PROF(h, WH_PROF_SEG_CALLS, 1);
    /* acquire: as in wh__seg_take */
    uint64_t old = wh__atomic_add64(st, (uint64_t)want, WH_ACQUIRE), s = wh__seg_s(old);
    WH_ASSERT(s + want < (1ull << WH__SEG_S_BITS));     /* the add never carries into r1 */
    if (s + want >= wh__seg_cap(h, c, wh__seg_r0(old))) /* it ran out meanwhile */
        return wh__slab_get_rare(WH__RARE(h), c, way, n, want, 0, old, true);
    wh__slab_got g = wh__got_seg(h, c, (uint32_t)wh__seg_r0(old), (uint32_t)s, want, 0, 0);
    if (wh__seg_wants_next(h, c, way, old)) g.prep = WH__PREP_BEGIN;
    return g;
}

/* Leader, when g asks for it (WH__PREP_BEGIN): begin preparing the next
 * segment of class c's way.  A segment to set up: g.prep, WH__GOT_PREP.  If
 * g holds no slot: the bitmap path when no aligned run of pages is left,
 * else look again (WH__GOT_AGAIN: another preparer came first, or its
 * segment is there by now).  WH__PREP_DRY: the page pool is dry and the
 * flag ours; the caller takes back the other class ways' segments and calls
 * again with g as returned. */
WH__SLAB_COLD WH_HOST_DEVICE wh__slab_got wh__slab_begin(const wh_heap *h, uint32_t c, uint32_t way, uint32_t n,
                                                         wh__slab_got g) {
    int began = wh__seg_begin(h, c, way, wh__slab_seed(c, n), &g.prep, g.prep == WH__PREP_DRY);
    if (began == WH__SEG_DRY) {
        g.prep = WH__PREP_DRY;
    } else if (g.prep != WH_BITMAP_NONE) {
        g.info |= WH__GOT_PREP;
    } else if (wh__got_count(&g) == 0) {
        if (began >= 0) {
            g.info |= WH__GOT_AGAIN;
        } else {
            WH__PROF(h, WH_PROF_SEG_FALLBACK, 1);
            g.prep = WH__PREP_BITMAP;
        }
    }
    return g;
}

/* Allocate one slot of class c for every lane of group (same class).  A
 * class with neither a slot nor a page left hands the group on to the next
 * larger class the heap serves, up to the class of `max` bytes (the kind's
 * largest slab request): the pages other classes hold partly used still have
 * room, and a larger slot, its tail unused, is better than NULL (no failure
 * while room remains). */
WH_INLINE WH_HOST_DEVICE void *wh__slab_malloc(const wh_heap *h, uint32_t c, uint64_t max, uint32_t group) {
    unsigned leader = wh_leader(group), rank = wh_rank(group), count = (unsigned)wh_popc32(group), done = 0;
    bool is_leader = wh_lane_id() == leader;
    uint32_t way = wh__seg_way(h); /* the same in every lane: one SM */
    void *mine = (void *)0;
    for (uint32_t n = 0; n < WH_HEAP_RETRY_LIMIT && done < count; ++n) { /* uniform in group */
        wh__slab_got g = wh__got_none();
        if (is_leader) {
            WH__PROF_T(t);
            g = wh__slab_get(h, c, way, n, count - done);
            /* what g asks for next: at most a preparation, its second
             * search after a take-back, the bitmap path and its second
             * try -- one call site each, and the take-back's its own call
             * from here, where few values are live */
            WH_PRAGMA_UNROLL1
            for (uint32_t k = 0; k < 4u; ++k) {
                uint32_t pr = g.prep;
                if (pr == WH__PREP_DRY || pr == WH__PREP_TDRY) /* a preparer keeps its own way's */
                    wh__rare_retire_all(WH__RARE(h), pr == WH__PREP_DRY ? wh__seg_index(c, way) : WH__SEG_ALL);
                if (pr == WH__PREP_BEGIN || pr == WH__PREP_DRY)
                    g = wh__slab_begin(WH__RARE(h), c, way, n, g);
                else if (pr == WH__PREP_BITMAP || pr == WH__PREP_TDRY)
                    g = wh__slab_take_got(WH__RARE(h), c, n, count - done, pr == WH__PREP_TDRY);
                else
                    break;
            }
            WH__PROF(h, WH_PROF_LEADER_CYCLES, WH__PROF_CLOCK() - t);
        }
        g.x = wh_shfl64(group, g.x, leader);
        g.info = wh_shfl32(group, g.info, leader);
        /* the rest only where the form has it (info is the same in all the group) */
        if (!(g.info & WH__GOT_SEG) || g.info >> 6 & 63u) g.y = wh_shfl64(group, g.y, leader);
        unsigned took = wh__got_count(&g);
        if (took == 0 && !(g.info & (WH__GOT_PREP | WH__GOT_AGAIN))) { /* no slot and no page */
            if (wh__slab_size(c) >= max) break;                        /* the class of max: the largest served */
            c = wh__slab_class_of(h, (uint64_t)wh__slab_size(c) + 1u);
            if (is_leader) WH__PROF(h, WH_PROF_UP_CLASS, 1);
            continue;
        }
        if (g.info & WH__GOT_PREP) { /* the next segment: all of us */
            WH__PROF_T(t0);
            g.prep = wh_shfl32(group, g.prep, leader);
            wh__seg_setup(h, c, way, g.prep, rank, count);
            wh_syncwarp(group);
            if (is_leader) {
                WH__PROF(h, WH_PROF_SETUP_CYCLES, WH__PROF_CLOCK() - t0);
                wh__seg_finish(WH__RARE(h), c, way, g.prep);
                WH__PROF(h, WH_PROF_PREP_CYCLES, WH__PROF_CLOCK() - t0);
            }
        }
        WH_ASSERT(took <= count - done); /* a leader gets at most what its group asked for */
        if (rank >= done && rank < done + took) {
            mine = wh__got_slot(h, c, &g, rank - done);
            /* a slot of class c: inside the arena, on a slot boundary of its page */
            WH_ASSERT((uint8_t *)mine >= h->base &&
                      (uint64_t)((uint8_t *)mine - h->base) < (uint64_t)h->npages * WH_SLAB_PAGE &&
                      ((uint64_t)((uint8_t *)mine - h->base) & (WH_SLAB_PAGE - 1u)) % wh__slab_size(c) == 0 &&
                      ((uint64_t)((uint8_t *)mine - h->base) & (WH_SLAB_PAGE - 1u)) / wh__slab_size(c) <
                          wh__slab_spp_of(h, c));
        }
        done += took;
    }
    return mine;
}

/* Free of a slot, the part each lane does alone: whether in_page of page
 * (whose info is `info`) is a slot of its class that a segment has handed
 * out; false: no slab slot (the caller decides).  *b: the slot's bit in its
 * class bitmap.  The hardened mode checks and fills the slot here, before its
 * bit says it is free. */
WH_INLINE WH_HOST_DEVICE bool wh__slab_free_lane(const wh_heap *h, uint32_t info, uint32_t page, uint64_t in_page,
                                                 uint64_t *b) {
    uint32_t c = WH_PAGE_CLASS(info), way = WH_PAGE_WAY(info);
    if (c >= WH_SLAB_CLASSES || way >= h->seg_ways) return false;
    /* in_page starts a slot where the offset before it lies in another:
     * no slot size, which a class of 1 to 4 KiB computes by a division */
    uint32_t slot = wh__slab_slot_of(h, c, (uint32_t)in_page), spp = wh__slab_spp_of(h, c);
    if ((in_page && wh__slab_slot_of(h, c, (uint32_t)in_page - 1u) == slot) || slot >= spp) return false;
    /* a slot a segment has not handed out yet has its bit clear like a live
     * one: only the state tells it apart (a free of it is foreign) */
    uint64_t v = wh_atomic_load(wh__seg_state(h, c, way), WH_RELAXED);
    uint64_t lo, from = wh__seg_from(h, c, page, v, &lo);
    if (lo + slot >= from) return false;
    *b = ((uint64_t)page << wh__slab_lbpp_of(spp)) + slot;
    if (h->flags & WH_HEAP_SECURE) { /* the pattern before the slot is free: not over a free one */
        if (wh_atomic_load(wh__slab_word(h, c, (uint32_t)(*b >> 6)), WH_ACQUIRE) & (1ull << (*b & 63u))) {
            wh__heap_count(&h->ctl->double_frees);
            *b = ~0ull; /* handled */
            return true;
        }
        wh__secure_fill(h->base + ((uint64_t)page << WH_SLAB_PAGE_SHIFT) + in_page, wh__slab_size(c));
    }
    return true;
}

/* Free of slots, the part a group does together: the lanes of `group` free
 * slots of class c whose bits b lie in one word of its bitmap (wh__paged_free
 * matched them; a group of one lane where they do not).  The leader sets all
 * their bits with one atomic or -- wh_bitmap_or_word's, on the word's address
 * straight from the heap (wh__slab_word) -- and takes their count off their
 * page's live slots with one subtraction (one a page where the word spans
 * pages: under 64 slots a page); the page's last free reclaims it.  A lane
 * whose bit was set already, or whose slot a lower lane of the group frees
 * too, is a double free.  A warp that frees what it allocated together --
 * neighbouring slots of one segment -- makes two atomics instead of two per
 * lane. */
WH_INLINE WH_HOST_DEVICE void wh__slab_free_group(const wh_heap *h, uint32_t c, uint32_t page, uint64_t b,
                                                  uint32_t group) {
    unsigned leader = wh_leader(group);
    bool is_leader = wh_lane_id() == leader, alone = !(group & (group - 1u)); /* alone: no collective */
    uint32_t w = (uint32_t)(b >> 6);
    uint64_t bit = 1ull << (b & 63u), all = alone ? bit : wh_reduce_or64(group, bit);
    bool dup = false;
    if ((unsigned)wh_popc64(all) != (unsigned)wh_popc32(group)) /* two lanes free one slot (uniform) */
        dup = wh_lane_id() != wh_leader(wh_match_any64(group, b));
    /* one subtraction for the lanes of each page: a word under 64 slots a
     * page spans pages, and its lanes match on theirs (a 4-KiB free-all: 2
     * atomics a warp on the counts, not 32 on two words) */
    uint32_t mates = alone || wh__slab_spp_of(h, c) > 32u ? group : wh_match_any64(group, page); /* uniform in group */
    bool counter = wh_lane_id() == wh_leader(mates);
    uint32_t n = alone ? 1u : (uint32_t)wh_popc32(mates);
    /* The or (release: the slots' last uses before the bits that hand them
     * out again) and the subtraction go out together (WH__FREE_SUB_MO): the
     * subtraction counts every lane of the page, and the lanes the or finds
     * freeing a free slot are added back after. */
    uint64_t prev = is_leader ? wh__atomic_or64(wh__slab_word(h, c, w), all, WH_RELEASE) : 0;
    uint32_t old = counter ? wh_atomic_fetch_sub(&h->page_used[page], n, WH__FREE_SUB_MO) : 0;
    if (!alone) prev = wh_shfl64(group, prev, leader);
    bool ok = !dup && !(prev & bit), filled = is_leader && prev == 0;
    bool last = counter && old == n;
    if (!ok) wh__heap_count(&h->ctl->double_frees);
    uint32_t bad = alone ? (uint32_t)!ok : (uint32_t)wh_popc32(wh_ballot(mates, !ok)); /* lanes that freed nothing */
    /* Back up by those lanes.  A double free reclaims no
     * page: other double frees of the page may still be on their way, and
     * an or of theirs landing after the reclaim would set a bit of a page
     * given back.  So where this add takes the count to zero, the page is
     * stranded (the sweep takes it back); the subtraction's zero, this add
     * still to come, was no page's last free. */
    if (bad && counter) {
        if (wh_atomic_fetch_add(&h->page_used[page], bad, WH_ACQ_REL) + bad == 0u) wh__page_strand(h, page);
        last = false;
    }
    if (counter && (h->flags & WH_HEAP_TRACK)) wh__heap_track(h, -(int64_t)(n - bad) * (int64_t)wh__slab_size(c));
    /* The rare work, in one call at the end: the word was empty (its summary
     * bits), the page's last slot was freed (the page back).  After the
     * group's collectives, as a call in one lane splits the warp, and a split
     * warp meets each collective after it twice, on the slow divergent
     * path; last, so that nothing is live across it. */
    if (filled || last) wh__rare_free(WH__RARE(h), c, w, page, filled, last);
}

#endif /* WARPHEAP_HEAP_SLAB_H */
