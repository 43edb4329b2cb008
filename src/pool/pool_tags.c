/* SPDX-License-Identifier: MIT */
/* Futhark's tagged free list (seed futhark-tagged-free-list.txt, "Problems
 * and Solutions": free_list_find / opencl_alloc / opencl_free), as the fast
 * path in front of the block core.
 *
 * A tag is the static label of an allocation site, compared by address.  On
 * free, a tagged block is kept for its tag, at most one per tag: a block
 * already kept for that tag goes back (to the block core here, to the driver
 * in the seed).  An allocation with the tag takes the kept block when it is
 * at least the request and less than twice it; otherwise the kept block goes
 * back to the core -- where, unlike with cl_mem, it can be split and merged.
 *
 * Departures: a hash table (1024 entries, never shrinking: tags are few and
 * static) instead of a linear scan; the kept block must belong to the
 * requesting stream; memory pressure flushes the table back to the core, and
 * so does (with VMM growth) a request that outgrew its tag's block.
 *
 * The hot block: an untagged block above 64 KiB, the last one freed, kept
 * until the next allocation, which takes it if it is on the same stream,
 * untagged and of exactly the size the core would give; any other
 * allocation gives it back first, and so does the next such free.  So
 * placement is what it would be without it, but a pool cycling one size
 * skips split and merge (CPU backend: a 1 MiB .. 256 MiB pair ~44 -> ~22 ns).
 * A looser fit, or the tag table's way of keeping it until a request of
 * another size, cost footprint: a held block is not merged, a larger one
 * counts its excess as in use (random_allocations up to 64 MiB 1.144 ->
 * 1.160, Futhark's loop untagged 1.096 -> 1.827).
 */
#include "pool_internal.h"

static uint32_t wh__tag_home(const void *tag) {
    return (uint32_t)(wh_hash64((uint64_t)(uintptr_t)tag) & (WH__TAGS - 1u));
}

/* The entry of tag, or a free entry for it (if insert and room), or NULL. */
static wh__tag_entry *wh__tag_entry_of(wh_pool *p, const void *tag, bool insert) {
    for (uint32_t i = wh__tag_home(tag), n = 0; n < WH__TAGS; ++n, i = (i + 1) & (WH__TAGS - 1u)) {
        wh__tag_entry *e = &p->tags[i];
        if (e->tag == tag) return e;
        if (e->tag == NULL) {
            if (!insert || p->ntags >= WH__TAGS * 3 / 4) return NULL;
            e->tag = tag;
            e->block = WH_BLOCK_NONE;
            p->ntags++;
            return e;
        }
    }
    return NULL;
}

static void wh__tag_drop(wh_pool *p, wh__tag_entry *e) {
    uint32_t b = e->block;
    e->block = WH_BLOCK_NONE;
    p->st.tag_cached--;
    wh__release(p, b);
}

uint32_t wh__tag_take(wh_pool *p, const void *tag, uint64_t size, uint32_t slot) {
    wh__tag_entry *e = wh__tag_entry_of(p, tag, false);
    if (!e || e->block == WH_BLOCK_NONE) return WH_BLOCK_NONE;
    uint32_t b = e->block;
    if (p->info[b].free_slot != slot) return WH_BLOCK_NONE; /* another stream's */
    uint64_t have = wh_blocks_desc(p->core)[b].size;
    /* Outgrown (a loop whose sizes drift up): in one range every kept block
     * goes back, so that they merge before the new ones are placed; dropping
     * only this one left the others pinned around it and doubled the peak of
     * Futhark's loop in the CPU replay (1.827 -> 1.096 of peak live). */
    if (have < size && p->use_vmm) {
        wh__tag_flush(p);
        return WH_BLOCK_NONE;
    }
    if (have < size || have / 2 >= size) { /* not just right */
        wh__tag_drop(p, e);
        return WH_BLOCK_NONE;
    }
    e->block = WH_BLOCK_NONE;
    p->st.tag_cached--;
    return b;
}

/* Keep freed block b (info has its tag and free slot) for its tag. */
bool wh__tag_keep(wh_pool *p, uint32_t b) {
    wh__tag_entry *e = wh__tag_entry_of(p, p->info[b].tag, true);
    if (!e) return false;
    if (e->block != WH_BLOCK_NONE) wh__tag_drop(p, e);
    e->block = b;
    p->info[b].state = WH__TAGGED;
    p->st.tag_cached++;
    return true;
}

uint32_t wh__hot_take(wh_pool *p, uint64_t size, uint32_t slot) {
    uint32_t b = p->hot;
    uint64_t have = wh_blocks_desc(p->core)[b].size;
    p->hot = WH_BLOCK_NONE;
    p->st.tag_cached--;
    if (size && p->info[b].free_slot == slot && have == size) return b;
    wh__release(p, b);
    return WH_BLOCK_NONE;
}

/* The hot block, if any, back to the core. */
static void wh__hot_drop(wh_pool *p) {
    if (p->hot != WH_BLOCK_NONE) (void)wh__hot_take(p, 0, 0); /* size 0: goes back */
}

void wh__hot_keep(wh_pool *p, uint32_t b) {
    wh__hot_drop(p);
    p->hot = b;
    p->info[b].state = WH__TAGGED;
    p->st.tag_cached++;
}

void wh__tag_flush(wh_pool *p) {
    wh__hot_drop(p);
    for (uint32_t i = 0; i < WH__TAGS; ++i)
        if (p->tags[i].tag && p->tags[i].block != WH_BLOCK_NONE) wh__tag_drop(p, &p->tags[i]);
}
