/* SPDX-License-Identifier: MIT */
/* Object allocator: slot reservation and freeing inside a block, block
 * initialisation, and safe reclamation by block invalidation with rollback.
 *
 * Implements DynaSOAr (ECOOP 2019) sections 3.1, 3.5, 3.6 and appendix A.1,
 * A.2 (Alg. 6-9).  A free block has every slot bit set, so an allocator that
 * picked a stale block fails to reserve in it; a block is deleted only after
 * its deleter *invalidated* it (set every slot bit, flipping all usable slots);
 * a partial invalidation is rolled back.
 *
 * Departure (independent thread scheduling): the active bitmaps are never
 * updated with the paper's spinning set()/clear(), nor is deactivation deferred
 * (A.2), since the spin can wait for a lane of the spinning thread's own warp.
 * Instead "block b is active for type t" is *re-derived* from the block's state
 * by whoever changed it (wh__soa_sync_active): read the state, write the bit to
 * match with an idempotent try_set/try_clear, read the state again, repeat if
 * it changed.  Every state change (fill, first free, invalidation, rollback,
 * initialisation) is followed by such a re-derivation by its author, and the
 * active-bit writes are acquire-release read-modify-writes, so the last write
 * to a bit is followed by a read that sees the final state: at quiescence
 * active[t][b] == (type[b] == t && b not full).  No thread waits for another;
 * a repeat happens only because another thread completed a change.
 */
#ifndef WARPHEAP_SOA_BLOCK_H
#define WARPHEAP_SOA_BLOCK_H

#include "warpheap/soa/heap.h"

/* Bound of the re-derivation and invalidation loops: each repeat needs another
 * thread to have completed a state change of the same block in between. */
#define WH_SOA_RETRY_LIMIT 100000u

/* Whether b should be in active[t]: of type t and not full.  The type is read
 * after the slot word: a block's type changes only while all its bits are set
 * (invalidated), and is written before the slot word is reset (release). */
WH_INLINE WH_HOST_DEVICE bool wh__soa_wants_active(const wh_soa *s, uint32_t b, uint32_t t) {
    uint64_t a = wh_atomic_load(wh__soa_alloc_word(s, b), WH_SEQ_CST);
    uint32_t ty = wh_atomic_load(wh__soa_type_word(s, b), WH_SEQ_CST);
    return a != ~0ull && ty == t;
}

WH_INLINE WH_HOST_DEVICE void wh__soa_sync_active(const wh_soa *s, uint32_t b, uint32_t t) {
    const wh_bitmap *act = &s->active_blocks[t];
    bool want = wh__soa_wants_active(s, b, t);
    for (uint32_t n = 0; n < WH_SOA_RETRY_LIMIT; ++n) {
        if (want)
            (void)wh_bitmap_try_set(act, b);
        else
            (void)wh_bitmap_try_clear(act, b);
        bool now = wh__soa_wants_active(s, b, t);
        if (now == want) return;
        want = now;
    }
    wh__soa_count(s, WH_SOA_CTR_RETRY_LIMIT);
}

WH_INLINE WH_HOST_DEVICE void wh__soa_try_delete(const wh_soa *s, uint32_t b);

/* Free the slots `bits` of block b, whose objects are of type t (Alg. 7, and
 * the rollback of a reservation in a block of another type, A.3).  False,
 * with nothing changed, when a slot of `bits` was not taken (a double free). */
WH_INLINE WH_HOST_DEVICE bool wh__soa_release(const wh_soa *s, uint32_t b, uint64_t bits, uint32_t t) {
    uint64_t prev = wh__atomic_and64(wh__soa_alloc_word(s, b), ~bits, WH_ACQ_REL);
    if ((prev & bits) != bits) { /* the clear changed no bit of a free slot */
        wh__soa_count(s, WH_SOA_CTR_BAD_FREE);
        return false;
    }
    if (prev == ~0ull) wh__soa_sync_active(s, b, t);                            /* was full: active again */
    if ((prev & ~bits) == ~wh__soa_usable(s->cap[t])) wh__soa_try_delete(s, b); /* now empty */
    return true;
}

/* Delete b if it is empty (A.2, Alg. 9, iterative).  Set every slot bit: if
 * that flipped exactly the usable slots of the block's type, the block was
 * empty and is now ours; otherwise a slot was reserved meanwhile, so the bits
 * we flipped are cleared again -- and if that rollback leaves the block empty
 * (its last object went away in between), try again. */
WH_INLINE WH_HOST_DEVICE void wh__soa_try_delete(const wh_soa *s, uint32_t b) {
    uint64_t *aw = wh__soa_alloc_word(s, b);
    for (uint32_t n = 0; n < WH_SOA_RETRY_LIMIT; ++n) {
        uint64_t prev = wh__atomic_or64(aw, ~0ull, WH_ACQ_REL);
        uint64_t flipped = ~prev;
        if (!flipped) return; /* full, or someone else invalidated it */
        /* We hold some bits: nobody can delete or re-type b now, so its type is stable. */
        uint32_t t = wh_atomic_load(wh__soa_type_word(s, b), WH_ACQUIRE);
        uint64_t pad = ~wh__soa_usable(s->cap[t]);
        if (prev == pad) { /* it was empty: b is ours */
            /* a later free of one of its objects finds it freed (soa/alloc.h) */
            wh_atomic_store(wh__soa_type_word(s, b), t | WH_SOA_TYPE_FREED, WH_RELEASE);
            wh__soa_sync_active(s, b, t); /* full now: leaves active[t] */
            (void)wh_bitmap_try_clear(&s->alloc_blocks[t], b);
            (void)wh_bitmap_try_set(&s->free_blocks, b);
            wh__soa_count(s, WH_SOA_CTR_BLOCKS_FREED);
            return;
        }
        uint64_t before = wh__atomic_and64(aw, ~flipped, WH_ACQ_REL); /* rollback */
        wh__soa_sync_active(s, b, t);                                 /* our invalidation made it look full */
        if ((before & ~flipped) != pad) return;                       /* still has objects */
    }
    wh__soa_count(s, WH_SOA_CTR_RETRY_LIMIT);
}

/* The first `want` bits (1..64) of `free`, counted from bit position rot on,
 * wrapping: bitmap rotation (4.2) spreads warps over different slots. */
WH_INLINE WH_HOST_DEVICE uint64_t wh__soa_pick_bits(uint64_t free, unsigned want, unsigned rot) {
    uint64_t r = wh_rotr64(free, rot), rest = r;
    for (unsigned k = 0; k < want && rest; ++k) rest &= rest - 1;
    return wh_rotl64(r ^ rest, rot);
}

/* Reserve up to want free slots of block b for type t (Alg. 6, coalesced).
 * Returns the slots reserved, 0 if none (block full, invalidated, or of
 * another type -- then the reservation is rolled back). */
WH_INLINE WH_HOST_DEVICE uint64_t wh__soa_reserve(const wh_soa *s, uint32_t b, uint32_t t, unsigned want,
                                                  uint64_t seed) {
    uint64_t *aw = wh__soa_alloc_word(s, b);
    uint64_t a = wh_atomic_load(aw, WH_RELAXED);
    for (unsigned n = 0; n < 64u && ~a; ++n) { /* each repeat: others took slots */
        uint64_t take = wh__soa_pick_bits(~a, want, (unsigned)(seed >> (6u * (n % 10u))));
        uint64_t prev = wh__atomic_or64(aw, take, WH_ACQ_REL);
        uint64_t got = take & ~prev;
        if (got) {
            uint32_t ty = wh_atomic_load(wh__soa_type_word(s, b), WH_ACQUIRE);
            if (ty != t) { /* re-typed under us: roll back */
                wh__soa_release(s, b, got, ty);
                return 0;
            }
            if ((prev | got) == ~0ull) wh__soa_sync_active(s, b, t); /* we filled it */
            return got;
        }
        a = prev | take;
    }
    return 0;
}

/* Slow path: take a free block, make it a block of type t holding the first
 * `want` slots for the caller.  Returns the block or WH_BITMAP_NONE (no free
 * block).  The block is reachable by others only after the slot word is
 * reset, and it cannot become empty before the caller frees its objects. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__soa_init_block(const wh_soa *s, uint32_t t, unsigned want, uint64_t seed,
                                                     uint64_t *got) {
    *got = 0;
    uint32_t b = wh_bitmap_find_and_clear(&s->free_blocks, seed);
    if (b == WH_BITMAP_NONE) return b;
    WH_ASSERT(b < s->nblocks);
    uint32_t cap = s->cap[t];
    uint64_t mine = wh__soa_pick_bits(wh__soa_usable(cap), want < cap ? want : cap, 0);
    wh_atomic_store(wh__soa_type_word(s, b), t, WH_RELAXED);
    wh_atomic_store(wh__soa_alloc_word(s, b), ~wh__soa_usable(cap) | mine, WH_RELEASE);
    (void)wh_bitmap_try_set(&s->alloc_blocks[t], b);
    wh__soa_sync_active(s, b, t);
    wh__soa_count(s, WH_SOA_CTR_SLOW_PATH);
    *got = mine;
    return b;
}

#endif /* WARPHEAP_SOA_BLOCK_H */
