/* SPDX-License-Identifier: MIT */
/* Object allocator: allocation with warp-level request coalescing, and
 * deallocation.
 *
 * Implements DynaSOAr (ECOOP 2019) Alg. 1 (3.5) with the optimisations of 4.2:
 * lanes of a warp that allocate the same type form a group (match_any on the
 * type id); its leader reserves slots for all of them with one atomic per
 * block, looking first for an active block (a bounded number of tries, bitmap
 * rotation by a per-warp seed that changes with every try) and only then
 * initialising a free block (slow path).  Lanes take their slot as the rank-th
 * bit of the leader's reservation.  Alg. 2 (3.6) is wh_soa_free.
 *
 * Independent thread scheduling: the group mask comes from __activemask() at
 * entry and __match_any_sync, the loop runs in lock-step for the whole group
 * (its condition is broadcast from the leader), and nothing waits on memory
 * that a lane of the warp has to write.  Every loop is bounded; exhausting the
 * heap gives null pointers and a counter, never a hang.
 */
#ifndef WARPHEAP_SOA_ALLOC_H
#define WARPHEAP_SOA_ALLOC_H

#include "warpheap/soa/block.h"
#include "warpheap/soa/config.h" /* WH_SOA_COALESCE, _ROTATE, _ACTIVE_LOOKUPS */
/* Rounds of the leader's loop before an allocation gives up. */
#define WH_SOA_ALLOC_ROUNDS 256u

/* A seed that differs between warps and calls (rotation of 4.2). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__soa_seed(void) {
#if !WH_SOA_ROTATE
    return 0; /* ablation: plain find-first-set */
#elif WH_ON_GPU
    uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    return wh_hash64((w << 20) ^ (uint64_t)clock64());
#else
    static __thread uint64_t calls;
    return wh_hash64((uint64_t)(uintptr_t)&calls * 0x9E3779B97F4A7C15ull + ++calls);
#endif
}

/* A bound on the slow paths of one type at once (not in the paper).  When a
 * burst of allocations meets a type with no active block -- sugarscape's
 * agents placed by a parallel_do over the cells -- every group runs through
 * its lookups at the same moment, finds nothing, and opens a fresh block for
 * its few objects: half the slots of the used blocks are empty after that
 * set-up, and blocks stay until their last object dies.  So at
 * most WH_SOA_OPEN_MAX slow paths of a type run at once; a group over the
 * bound pauses and looks again, and finds the blocks the others opened.
 *
 * The bound costs time (game-of-life's 742K new candidates a generation:
 * 1.7 ms an iteration without it, 7.8 with it), and the space it saves
 * matters only when the heap runs short.  So it holds only under pressure:
 * once 1/WH_SOA_OPEN_PRESSURE of the heap's blocks are in use (blocks
 * opened minus blocks given back, two counters read by groups that reach
 * the slow path).  In the second half of its rounds a group ignores it, so
 * the bound never turns into a failed allocation. */
enum { WH__SOA_WAIT = 0, WH__SOA_OPEN_COUNTED, WH__SOA_OPEN_FREE };
/* WH__SOA_WAIT: over the bound, look again; WH__SOA_OPEN_COUNTED: open, with
 * a place in the count (give it back with wh__soa_open_end); WH__SOA_OPEN_FREE:
 * open, outside the bound (no pressure, or the late rounds). */
WH_INLINE WH_HOST_DEVICE unsigned wh__soa_open_begin(const wh_soa *s, uint32_t t, unsigned round) {
#if WH_SOA_OPEN_MAX
    if (round >= WH_SOA_ALLOC_ROUNDS / 2u || wh__soa_blocks_in_use(s) * WH_SOA_OPEN_PRESSURE < s->nblocks)
        return WH__SOA_OPEN_FREE;
    /* Read before adding: in a burst thousands of groups are over the bound,
     * and a read-modify-write each (and its undo) on this one word would
     * queue behind the others at L2 and slow the openers too. */
    uint32_t *open = wh__soa_opening(s, t);
    if (wh_atomic_load(open, WH_RELAXED) < WH_SOA_OPEN_MAX) {
        if (wh_atomic_fetch_add(open, 1u, WH_RELAXED) < WH_SOA_OPEN_MAX) return WH__SOA_OPEN_COUNTED;
        (void)wh_atomic_fetch_sub(open, 1u, WH_RELAXED);
    }
    wh_backoff(round / 8u);
    return WH__SOA_WAIT;
#else
    (void)s, (void)t, (void)round;
    return WH__SOA_OPEN_FREE;
#endif
}
WH_INLINE WH_HOST_DEVICE void wh__soa_open_end(const wh_soa *s, uint32_t t) {
#if WH_SOA_OPEN_MAX
    (void)wh_atomic_fetch_sub(wh__soa_opening(s, t), 1u, WH_RELAXED);
#else
    (void)s, (void)t;
#endif
}

/* One round of the leader: reserve for `want` lanes.  *b and *got describe
 * the reservation; returns false when the slow path found no free block. */
WH_INLINE WH_HOST_DEVICE bool wh__soa_alloc_round(const wh_soa *s, uint32_t t, unsigned want, unsigned round,
                                                  uint64_t seed, uint32_t *b, uint64_t *got) {
    *got = 0;
    *b = WH_BITMAP_NONE;
    /* WH_SOA_ACTIVE_LOOKUPS lookups, then slow path and lookup alternate.
     * (round + 1 > L is round >= L without a pointless ">= 0" when L is 0;
     * round < WH_SOA_ALLOC_ROUNDS, so it cannot wrap.) */
    bool slow = round + 1u > WH_SOA_ACTIVE_LOOKUPS && !((round - WH_SOA_ACTIVE_LOOKUPS) & 1u);
    if (!slow) {
        *b = wh_bitmap_try_find_set(&s->active_blocks[t], seed);
        if (*b != WH_BITMAP_NONE && *b < s->nblocks) *got = wh__soa_reserve(s, *b, t, want, seed);
        return true;
    }
    unsigned go = wh__soa_open_begin(s, t, round);
    if (go == WH__SOA_WAIT) return true; /* over the bound: look again */
    *b = wh__soa_init_block(s, t, want, seed, got);
    if (go == WH__SOA_OPEN_COUNTED) wh__soa_open_end(s, t);
    return *b != WH_BITMAP_NONE;
}

/* Placement keys (not in the paper).  wh_soa_alloc_at(s, t, key) puts the
 * object in the block that the last allocation of type t with the same key
 * opened, while it has room: objects the program keeps together (agents of
 * neighbouring cells: key = the cell's tile) share blocks, so a parallel_do
 * over them touches their cells' data in few cache lines.  The lanes of a
 * warp group by (type, key), and a group spends its first rounds on the
 * key's home block (wh__soa_home): it reserves there; when the home has no
 * room, one group claims the entry (WH__SOA_HOME_OPENING) and opens a fresh
 * block for the key while the others wait for it, so that a burst of
 * groups with one key fills one block instead of opening one each, and
 * keys do not mix in each other's blocks.  After WH_SOA_HOME_ROUNDS rounds,
 * or when no free block is left, the group goes on with Alg. 1's rounds
 * (active blocks of any key).  A home is only a hint: a block that filled,
 * was given back or took another type since refuses the reservation
 * (wh__soa_reserve).  WH_SOA_NO_KEY: no key, Alg. 1 alone. */
#define WH_SOA_NO_KEY        0xFFFFFFFFu
#define WH_SOA_HOME_ROUNDS   32u
#define WH__SOA_HOME_OPENING 0xFFFFFFFEu

/* A keyed group's round on its home (arguments and result as
 * wh__soa_alloc_round's). */
WH_INLINE WH_HOST_DEVICE bool wh__soa_home_round(const wh_soa *s, uint32_t t, uint32_t *home, unsigned want,
                                                 unsigned round, uint64_t seed, uint32_t *b, uint64_t *got) {
    uint32_t h = wh_atomic_load(home, WH_ACQUIRE);
    *b = h;
    *got = h < s->nblocks ? wh__soa_reserve(s, h, t, want, seed) : 0;
    if (*got) return true;
    if (h == WH__SOA_HOME_OPENING || !wh_atomic_cas(home, &h, WH__SOA_HOME_OPENING, WH_ACQ_REL, WH_RELAXED)) {
        wh_backoff(round); /* another group opens the key's block */
        return true;
    }
    /* the claim is ours: Alg. 1's slow path (its round WH_SOA_ACTIVE_LOOKUPS
     * is the first slow path), and the entry names the block it opened */
    bool room = wh__soa_alloc_round(s, t, want, WH_SOA_ACTIVE_LOOKUPS, seed, b, got);
    wh_atomic_store(home, *got ? *b : WH_BITMAP_NONE, WH_RELEASE);
    return room;
}

/* Allocate an object of type t, placed by key (WH_SOA_NO_KEY: anywhere); 0
 * when the heap is exhausted (or t is abstract).  Call from converged or
 * divergent code alike. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_soa_alloc_at(const wh_soa *s, uint32_t t, uint32_t key) {
#if WH_SOA_COALESCE
    uint32_t group = wh_match_any64(wh_active_mask(), (uint64_t)key << 32 | t);
#else
    uint32_t group = 1u << wh_lane_id(); /* ablation: each lane alone */
#endif
    unsigned n = (unsigned)wh_popc32(group), rank = wh_rank(group), leader = wh_leader(group);
    bool lead = wh_lane_id() == leader;
    if (t >= s->ntypes || s->cap[t] == 0) return 0; /* uniform in the group */
    uint32_t *home = key == WH_SOA_NO_KEY ? NULL : wh__soa_home(s, t, key);
    unsigned r0 = home ? WH_SOA_HOME_ROUNDS : 0u, last = WH_SOA_ALLOC_ROUNDS + r0; /* r0: rounds on the home */
    uint64_t result = 0, seed = wh__soa_seed();
    unsigned done = 0, no_room = 0, round = 0;
    for (; done < n && round < last && no_room < 2u; ++round) {
        uint32_t b = WH_BITMAP_NONE;
        uint64_t got = 0;
        uint32_t room = 1;
        if (lead) {
            room = round < r0 ? wh__soa_home_round(s, t, home, n - done, round, seed, &b, &got)
                              : wh__soa_alloc_round(s, t, n - done, round - r0, seed, &b, &got);
            seed = WH_SOA_ROTATE ? wh_hash64(seed + round) : 0;
        }
        b = wh_shfl32(group, b, leader);
        got = wh_shfl64(group, got, leader);
        room = wh_shfl32(group, room, leader);
        if (!room) { /* a slow path found no free block */
            ++no_room;
            if (round < r0) round = r0 - 1; /* no block for the key: Alg. 1 */
        }
        if (!got) continue;
        unsigned k = (unsigned)wh_popc64(got);
        WH_ASSERT(b < s->nblocks && k <= n - done); /* a block of the heap, at most what was asked */
        if (rank >= done && rank < done + k)
            result = wh_soa_ptr_make(wh__soa_block(s, b), t, s->cap[t], (uint32_t)wh_nth_set_bit64(got, rank - done));
        done += k;
    }
    if (lead && done < n) /* one count per lane left without */
        (void)wh_atomic_fetch_add(&s->counters[round >= last ? WH_SOA_CTR_RETRY_LIMIT : WH_SOA_CTR_FAILED_ALLOCS],
                                  (uint64_t)(n - done), WH_RELAXED);
    return result;
}

/* Allocate an object of type t anywhere (Alg. 1). */
WH_INLINE WH_HOST_DEVICE uint64_t wh_soa_alloc(const wh_soa *s, uint32_t t) {
    return wh_soa_alloc_at(s, t, WH_SOA_NO_KEY);
}

/* parallel_new's packing (a departure from the paper, whose parallel_new is
 * one `new` per thread).  A full grid of `new`s races for active blocks: a
 * group that loses its lookups takes a fresh block for its 32 objects, and
 * the batch ends with many blocks part-filled that nothing fills again when
 * the objects live for the whole run (sugarscape's 692K cells on a GPU:
 * 56% of the used blocks' slots empty, against 11% on one CPU thread).  So
 * objects [k cap, k cap + cnt) of a batch take one fresh block together, by
 * one slow path with want = cnt: the block holds slots 0..cnt-1 (rotation
 * 0), and a batch of n objects fills n / cap blocks to the last slot.
 * Returns the block, or WH_BITMAP_NONE when no free block is left; then
 * wh__soa_chunk_object allocates each object alone, into active blocks. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__soa_new_chunk(const wh_soa *s, uint32_t t, unsigned cnt, uint64_t *got) {
    return wh__soa_init_block(s, t, cnt, wh__soa_seed(), got);
}

/* Object r (< cnt) of a chunk that wh__soa_new_chunk placed in block b. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__soa_chunk_object(const wh_soa *s, uint32_t t, uint32_t b, uint64_t got,
                                                       unsigned r) {
    if (b == WH_BITMAP_NONE) return wh_soa_alloc(s, t);
    return wh_soa_ptr_make(wh__soa_block(s, b), t, s->cap[t], (uint32_t)wh_nth_set_bit64(got, r));
}

/* The block of object pointer p if p can be an object of this heap: a type
 * of the heap that can have objects, that type's capacity, a slot below it,
 * and the address of one of the heap's blocks.  WH_BITMAP_NONE otherwise. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__soa_block_checked(const wh_soa *s, uint64_t p) {
    uint32_t t = wh_soa_ptr_type(p);
    if (t >= s->ntypes || !s->cap[t] || wh_soa_ptr_cap(p) != s->cap[t] || wh_soa_ptr_slot(p) >= s->cap[t])
        return WH_BITMAP_NONE;
    uint64_t addr = (uint64_t)(uintptr_t)wh_soa_ptr_block(p), base = (uint64_t)(uintptr_t)s->blocks;
    if (addr < base) return WH_BITMAP_NONE;
    uint64_t b = (addr - base) / s->block_bytes;
    if (b >= s->nblocks || b * s->block_bytes != addr - base) return WH_BITMAP_NONE;
    return (uint32_t)b;
}

/* Destroy the object p (any type: the type is in the pointer); WH_OK, also
 * for the null pointer.  A pointer this heap never handed out (another
 * heap's, forged, or in a block that was never of its type) is refused with
 * WH_ERR_FOREIGN_POINTER, an object already destroyed with
 * WH_ERR_DOUBLE_FREE; each is counted (wh_soa_stats) and changes nothing.
 * A zeroed or destroyed heap gives WH_ERR_INVALID_ARGUMENT.
 * A second free after the slot was handed out again frees the new object:
 * no allocator without per-object generations can tell the two apart. */
WH_INLINE WH_HOST_DEVICE wh_status wh_soa_free(const wh_soa *s, uint64_t p) {
    if (!p) return WH_OK;
    if (!s->counters) return WH_ERR_INVALID_ARGUMENT; /* a zeroed or destroyed heap */
    uint32_t b = wh__soa_block_checked(s, p), t = wh_soa_ptr_type(p);
    /* the type word shares the slot word's line: the check costs one load */
    uint32_t ty = b == WH_BITMAP_NONE ? ~0u : wh_atomic_load(wh__soa_type_word(s, b), WH_ACQUIRE);
    if (ty != t) {
        bool freed = ty == (t | WH_SOA_TYPE_FREED); /* its block went back: its last object was freed */
        wh__soa_count(s, freed ? WH_SOA_CTR_BAD_FREE : WH_SOA_CTR_FOREIGN_FREE);
        return freed ? WH_ERR_DOUBLE_FREE : WH_ERR_FOREIGN_POINTER;
    }
    return wh__soa_release(s, b, 1ull << wh_soa_ptr_slot(p), t) ? WH_OK : WH_ERR_DOUBLE_FREE;
}

#endif /* WARPHEAP_SOA_ALLOC_H */
