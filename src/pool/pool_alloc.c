/* SPDX-License-Identifier: MIT */
/* Host pool: allocate and free.  The order of places an
 * allocation looks in is the design: the tag's kept block (Futhark's fast
 * path), the stream's own free blocks, the READY blocks, blocks other streams
 * have finished with, a new arena from the driver, and on exhaustion
 * everything cached (tags flushed, streams waited for, idle arenas trimmed)
 * before it fails with the numbers.  Growth follows the driver's own cost: a
 * cudaMalloc is ~46 us, so small requests share 2 MiB arenas and medium ones
 * 20 MiB arenas; large ones get an arena of their own, rounded to 2 MiB.
 */
#include "pool_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define WH__MIB (1024ull * 1024ull)

/* The slot of address a among the lately released addresses. */
static uint64_t *wh__freed_slot(wh_pool *p, uint64_t a) {
    return &p->freed[(a * 0x9E3779B97F4A7C15ull) >> (64 - WH__FREED_RECENT_BITS)];
}

/* USED block b (not live any more) back into the core, in its free slot. */
void wh__release(wh_pool *p, uint32_t b) {
    uint64_t a = wh__user_addr(p, b);
    wh__map_del(p, a);
    *wh__freed_slot(p, a) = a;
    wh__secure_released(p, b);
    p->info[b].state = WH__FREE_OR_CORE;
    p->slots[p->info[b].free_slot].refs--;
    wh_blocks_free(p->core, b, p->info[b].free_slot);
}

/* Arena for a request: by size class, and at least 1/8 of what is reserved
 * (up to 1 GiB), so that n bytes take O(log n) driver calls while the last
 * arena's unused tail stays under ~12% of the total. */
static uint64_t wh__arena_size(const wh_pool *p, uint64_t size) {
    const uint64_t two = 2 * WH__MIB;
    uint64_t a, grow = p->core->arena_bytes / 8;
    if (size <= WH__MIB)
        a = p->cfg.small_arena;
    else if (size < 10 * WH__MIB)
        a = p->cfg.medium_arena;
    else
        a = size;
    grow = grow > 1024 * WH__MIB ? 1024 * WH__MIB : grow;
    a = a < grow ? grow : a;
    a = a < size ? size : a;
    a = a >= two ? (a + two - 1) & ~(two - 1) : a;
    return wh_blocks_round(p->core, a);
}

static wh_status wh__grow(wh_pool *p, uint64_t size) {
    uint64_t a = wh__arena_size(p, size), cap = p->cfg.max_bytes;
    uint64_t reserved = p->core->arena_bytes;
    if (cap && reserved + a > cap) a = size; /* the cap: only what is needed */
    if (cap && reserved + a > cap) return WH_ERR_OUT_OF_MEMORY;
    void *raw;
    uint64_t base;
    wh_status st = wh__mem_alloc(p, a, &raw, &base);
    if (st != WH_OK) {
        p->refused = a; /* for the exhaustion message */
        return st;
    }
    wh__arena *t = wh__room(p->arenas, p->narenas, &p->arenas_cap, sizeof *t);
    if (!t) {
        wh__mem_free(p, raw);
        return WH_ERR_OUT_OF_MEMORY;
    }
    p->arenas = t;
    uint32_t head = wh_blocks_add_arena(p->core, base, a, WH__READY);
    if (head == WH_BLOCK_NONE) {
        wh__mem_free(p, raw);
        return WH_ERR_OUT_OF_MEMORY;
    }
    wh__poison(p, base, a, true);
    wh__secure_fresh(p, base, a);
    wh__poison_check(p);
    p->arenas[p->narenas] = (wh__arena){raw, a, head, NULL};
    wh__nvtx_heap(p, &p->arenas[p->narenas++]);
    p->st.arena_allocs++;
    p->st.arenas = p->narenas;
    p->st.reserved = p->core->arena_bytes;
    if (p->st.reserved > p->st.reserved_peak) p->st.reserved_peak = p->st.reserved;
    return WH_OK;
}

/* The range places large blocks itself (wh__vmm_alloc). */
static uint32_t wh__find_in(wh_pool *p, uint64_t size, uint64_t align, uint32_t slot) {
    return p->use_vmm ? wh__vmm_alloc(p, size, align, slot) : wh_blocks_alloc_aligned(p->core, size, align, slot);
}

/* align: 0 or at most config.alignment for any block. */
static uint32_t wh__find(wh_pool *p, uint64_t size, uint64_t align, uint32_t slot) {
    uint32_t b = wh__find_in(p, size, align, slot);
    return b != WH_BLOCK_NONE ? b : wh__find_in(p, size, align, WH__READY);
}

static bool wh__others_hold_free(const wh_pool *p) {
    return wh__free_bytes(p) > wh_blocks_index(p->core, WH__READY)->free_bytes;
}

/* Wait for every stream (the lock released meanwhile), then take what their
 * work freed. */
static void wh__wait_and_poll(wh_pool *p) {
    (void)wh__wait_streams(p);
    wh__pending_poll(p);
    wh__reclaim(p);
}

/* Everything short of failing: other streams, the driver, then all caches. */
static uint32_t wh__find_slow(wh_pool *p, uint64_t size, uint64_t align, uint32_t slot) {
    uint32_t b = WH_BLOCK_NONE;
    if (p->npending || wh__others_hold_free(p)) {
        wh__pending_poll(p);
        wh__reclaim(p);
        if ((b = wh__find(p, size, align, slot)) != WH_BLOCK_NONE) return b;
    }
    if (p->use_vmm) { /* the range: map what is short */
        if ((b = wh__vmm_grow_find(p, size, align, slot)) != WH_BLOCK_NONE) return b;
        p->st.retries++;
        wh__tag_flush(p);
        wh__wait_and_poll(p);
        if ((b = wh__find(p, size, align, slot)) != WH_BLOCK_NONE) return b;
        wh__vmm_release(p, 0, false); /* every free piece, then once more */
        return wh__vmm_grow_find(p, size, align, slot);
    }
    uint64_t grow = size + wh__align_pad(p, align); /* a new arena fits it aligned */
    /* idle whole arenas are all smaller than grow: give them back first */
    if (wh__free_bytes(p) >= grow) wh__trim_arenas(p, 0);
    if (wh__grow(p, grow) == WH_OK && (b = wh__find(p, size, align, slot)) != WH_BLOCK_NONE) return b;
    p->st.retries++;
    wh__tag_flush(p); /* exhaustion: trim, retry */
    wh__wait_and_poll(p);
    if ((b = wh__find(p, size, align, slot)) != WH_BLOCK_NONE) return b;
    wh__trim_arenas(p, 0);
    if (wh__grow(p, grow) == WH_OK) b = wh__find(p, size, align, slot);
    return b;
}

/* The numbers a user needs to tell a full device from a fragmented pool or
 * from too few block descriptors (config.max_blocks). */
static wh_status wh__exhausted(wh_pool *p, uint64_t bytes) {
    uint64_t largest = 0;
    uint32_t blocks = p->core->nused;
    for (uint32_t i = 0; i < wh__nlanes(p); ++i) {
        uint64_t l = wh_blocks_largest_free(p->core, i);
        largest = l > largest ? l : largest;
        blocks += wh_blocks_index(p->core, i)->nfree;
    }
    char cap[48] = "none", refused[96] = "";
    if (p->cfg.max_bytes) snprintf(cap, sizeof cap, "%" PRIu64 " B", (uint64_t)p->cfg.max_bytes);
    if (p->refused)
        snprintf(refused, sizeof refused, "; the %s refused %" PRIu64 " B",
                 p->cfg.backend == WH_POOL_CPU ? "host" : "driver", p->refused);
    return wh__fail(WH_ERR_OUT_OF_MEMORY,
                    "pool exhausted: request %" PRIu64 " B, reserved %" PRIu64 " B in %u arenas, in use %" PRIu64
                    " B, cached %" PRIu64 " B, largest free %" PRIu64 " B, pending %u, cap %s, blocks %u/%u, "
                    "streams still busy %u%s",
                    bytes, wh__reserved(p), p->narenas, p->st.in_use, wh__reserved(p) - p->st.in_use, largest,
                    p->npending, cap, blocks, p->core->capacity, p->busy_streams, refused);
}

/* off: where the pointer lies in the block (wh__secure_offset); 0 for a kept block. */
static void wh__make_live(wh_pool *p, uint32_t b, uint64_t bytes, uint32_t off, const void *tag, uint32_t slot) {
    wh__info *in = &p->info[b];
    uint64_t size = wh_blocks_desc(p->core)[b].size;
    bool fresh = in->state == WH__FREE_OR_CORE;
    *in = (wh__info){.tag = tag,
                     .requested = bytes,
                     .off = off,
                     .state = WH__LIVE,
                     .alloc_slot = (uint16_t)slot,
                     .free_slot = (uint16_t)slot};
    if (fresh) {
        uint64_t a = wh__user_addr(p, b), *f = wh__freed_slot(p, a);
        wh__map_put(p, a, b);
        if (*f == a) *f = 0;   /* live again */
        p->slots[slot].refs++; /* a kept block has its ref on slot already */
    }
    wh__secure_live(p, b);
    wh__poison(p, wh__user_addr(p, b), bytes, false);
    if (p->nvtx) wh__nvtx_block(p, wh__user_addr(p, b), bytes);
    p->st.allocs++;
    p->st.in_use += size;
    p->st.requested += bytes;
    if (p->st.in_use > p->st.in_use_peak) p->st.in_use_peak = p->st.in_use;
}

/* Untagged requests up to 64 KiB act as if tagged by their power-of-two size
 * class: a block freed on a stream comes straight back to the next request
 * of its class on that stream, skipping split and merge.  Larger blocks go
 * back to the core by the next allocation (the hot block, pool_tags.c):
 * held blocks cannot merge, and on RMM's random_allocations with sizes up
 * to 1 MiB, classes up to 1 MiB raised peak reserved / peak live from 1.08
 * to 1.15 (CPU backend). */
#define WH__IMPLICIT_MAX (1u << 16)
static const char wh__class_tags[64];
static const char wh__large_tag[1]; /* untagged, above WH__IMPLICIT_MAX */

static const void *wh__implicit_tag(uint64_t size) {
    return size <= WH__IMPLICIT_MAX ? (const void *)&wh__class_tags[wh_log2_64(size)] : (const void *)wh__large_tag;
}

/* slot: the stream's, pinned by the caller (the slow path may release the lock). */
static wh_status wh__alloc_on(wh_pool *p, size_t bytes, uint64_t align, const void *tag, uint32_t slot, void **out) {
    uint32_t lane = wh__lane(p, slot);
    if (!wh__map_reserve(p)) /* before anything changes */
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "pool: no host memory for the address map (%" PRIu64 " entries)",
                        p->map_count);
    uint64_t want = bytes + wh__secure_extra(p, align > p->cfg.alignment ? align : 0);
    uint64_t size = want < bytes ? 0 : wh_blocks_round(p->core, want);
    if (size == 0 || size > (UINT64_MAX >> 2) || (p->cfg.max_bytes && size > p->cfg.max_bytes))
        return wh__fail(WH_ERR_TOO_LARGE, "pool: request of %zu B is beyond %" PRIu64 " B", bytes,
                        p->cfg.max_bytes ? (uint64_t)p->cfg.max_bytes : (UINT64_MAX >> 2));
    if (align <= p->cfg.alignment)
        align = 0;
    else if (size > UINT64_MAX / 4 - align)
        return wh__fail(WH_ERR_TOO_LARGE, "pool: %zu B at %" PRIu64, bytes, align);
    if (!tag && !align) tag = wh__implicit_tag(size);
    uint32_t b = WH_BLOCK_NONE; /* kept blocks: any address, so none when aligned */
    if (p->hot != WH_BLOCK_NONE) b = wh__hot_take(p, tag == wh__large_tag ? size : 0, slot);
    if (b == WH_BLOCK_NONE && tag && tag != wh__large_tag && !align && !p->cfg.secure)
        b = wh__tag_take(p, tag, size, slot);
    if (b != WH_BLOCK_NONE) p->st.tag_hits++;
    if (b == WH_BLOCK_NONE) b = wh__find(p, size, align, lane);
    p->refused = 0;
    if (b == WH_BLOCK_NONE) b = wh__find_slow(p, size, align, lane);
    if (b == WH_BLOCK_NONE) return wh__exhausted(p, bytes);
    wh__make_live(p, b, bytes, wh__secure_offset(p, align), tag, slot);
    *out = (void *)(uintptr_t)wh__user_addr(p, b);
    return WH_OK;
}

static wh_status wh__alloc_locked(wh_pool *p, size_t bytes, uint64_t align, const void *tag, wh_stream s, void **out) {
    uint32_t slot;
    wh_status st = wh__slot_of(p, s, &slot);
    if (st != WH_OK) return st;
    p->slots[slot].pins++; /* no other stream takes the slot meanwhile */
    st = wh__alloc_on(p, bytes, align, tag, slot, out);
    p->slots[slot].pins--;
    return st;
}

static wh_status wh__try_alloc(wh_pool *p, size_t bytes, size_t align, const void *tag, wh_stream s, void **out) {
    wh__clear_error();
    if (!out) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_alloc: out is NULL");
    *out = NULL;
    if (!p) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_alloc: pool is NULL");
    if (align & (align - 1))
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_alloc_aligned: %zu is not a power of two", align);
    if (bytes == 0) {
        pthread_mutex_lock(&p->lock);
        p->st.failures++;
        pthread_mutex_unlock(&p->lock);
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_alloc: size 0");
    }
    pthread_mutex_lock(&p->lock);
    wh_status st = wh__alloc_locked(p, bytes, align, tag, s, out);
    if (st != WH_OK) p->st.failures++;
    pthread_mutex_unlock(&p->lock);
    return st;
}

wh_status wh_pool_try_alloc(wh_pool *p, size_t bytes, const void *tag, wh_stream s, void **out) {
    return wh__try_alloc(p, bytes, 0, tag, s, out);
}

void *wh_pool_alloc_aligned(wh_pool *p, size_t bytes, size_t alignment, wh_stream s) {
    void *ptr;
    if (alignment == 0) {
        (void)wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_alloc_aligned: alignment 0 (a power of two is needed)");
        return NULL;
    }
    if (alignment > WH_POOL_MAX_ALIGNMENT) {
        (void)wh__fail(WH_ERR_TOO_LARGE, "wh_pool_alloc_aligned: alignment %zu is past the largest alignment, %llu B",
                       alignment, (unsigned long long)WH_POOL_MAX_ALIGNMENT);
        return NULL;
    }
    return wh__try_alloc(p, bytes, alignment, NULL, s, &ptr) == WH_OK ? ptr : NULL;
}

void *wh_pool_alloc(wh_pool *p, size_t bytes, wh_stream s) {
    void *ptr;
    return wh_pool_try_alloc(p, bytes, NULL, s, &ptr) == WH_OK ? ptr : NULL;
}

void *wh_pool_alloc_tagged(wh_pool *p, size_t bytes, const void *tag, wh_stream s) {
    void *ptr;
    return wh_pool_try_alloc(p, bytes, tag, s, &ptr) == WH_OK ? ptr : NULL;
}

/* ptr is no block the pool knows.  Inside a free block of an arena: a double
 * free when it is an address released lately, else a foreign pointer (never
 * handed out, or freed so long ago that the record is gone).  Inside a used
 * block (an interior pointer; an address released before and covered by a
 * later allocation): a foreign pointer. */
static wh_status wh__bad_pointer(wh_pool *p, const void *ptr, const char *what) {
    uint64_t a = (uint64_t)(uintptr_t)ptr;
    const wh_block *d = wh_blocks_desc(p->core);
    for (uint32_t i = 0; i < p->narenas; ++i) {
        uint32_t b = p->arenas[i].head;
        if (a < d[b].addr || a >= d[b].addr + p->arenas[i].size) continue;
        for (uint32_t k = 0; b != WH_BLOCK_NONE && k < p->core->capacity; ++k, b = d[b].next) {
            if (a < d[b].addr || a >= d[b].addr + d[b].size) continue;
            if (d[b].state == WH_BLOCK_FREE && *wh__freed_slot(p, a) == a)
                return wh__fail(WH_ERR_DOUBLE_FREE, "%s: %p was already freed", what, ptr);
            if (d[b].state == WH_BLOCK_USED && wh__secure_stale(p, b, a))
                return wh__fail(WH_ERR_DOUBLE_FREE,
                                "%s: %p is a stale pointer: freed before, its memory now belongs to the "
                                "allocation at %p (a double free after reuse)",
                                what, ptr, (void *)(uintptr_t)wh__user_addr(p, b));
        }
        return wh__fail(WH_ERR_FOREIGN_POINTER,
                        "%s: %p is inside an arena but not an allocation of this pool (never handed out, an "
                        "interior pointer, or freed long ago)",
                        what, ptr);
    }
    return wh__fail(WH_ERR_FOREIGN_POINTER, "%s: %p was not allocated by this pool", what, ptr);
}

static wh_status wh__lookup_live(wh_pool *p, const void *ptr, const char *what, uint32_t *b) {
    *b = wh__map_get(p, (uint64_t)(uintptr_t)ptr);
    if (*b == WH_BLOCK_NONE) return wh__bad_pointer(p, ptr, what);
    if (p->info[*b].state != WH__LIVE) return wh__fail(WH_ERR_DOUBLE_FREE, "%s: %p was already freed", what, ptr);
    return WH_OK;
}

static wh_status wh__free_locked(wh_pool *p, void *ptr, wh_stream s) {
    uint32_t b, slot;
    wh_status st = wh__lookup_live(p, ptr, "wh_pool_free", &b);
    if (st == WH_OK) st = wh__slot_of(p, s, &slot);
    if (st != WH_OK) return st;
    wh__info *in = &p->info[b];
    wh_status guard = wh__secure_freeing(p, b, ptr); /* freed all the same */
    uint32_t lane = wh__lane(p, slot);
    /* the streams to wait for; none when freed where allocated, on a lane, never recorded elsewhere */
    bool others = in->uses || in->alloc_slot != slot || lane != slot;
    uint32_t uses = others ? wh__uses_of(p, b, slot, p->use_list) : 0; /* own order covers slot's work */
    if (uses && (st = wh__defer(p, b, p->use_list, uses)) != WH_OK) return st;
    if (in->uses) wh__uses_drop(p, b);
    p->slots[in->free_slot].refs--;
    p->slots[lane].refs++;
    in->free_slot = (uint16_t)lane;
    wh__poison(p, wh_blocks_desc(p->core)[b].addr, wh_blocks_desc(p->core)[b].size, true);
    if (p->nvtx) wh__nvtx_block_drop(p, wh__user_addr(p, b));
    p->st.frees++;
    p->st.in_use -= wh_blocks_desc(p->core)[b].size;
    p->st.requested -= in->requested;
    if (uses) {
        if (p->npending >= WH__PENDING_POLL) wh__pending_poll(p);
    } else if (p->cfg.secure || !in->tag) {
        wh__release(p, b);
    } else if (in->tag == wh__large_tag) {
        wh__hot_keep(p, b);
    } else if (!wh__tag_keep(p, b)) {
        wh__release(p, b);
    }
    return guard;
}

wh_status wh_pool_free(wh_pool *p, void *ptr, wh_stream s) {
    wh__clear_error();
    if (!p) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_free: pool is NULL");
    if (!ptr) return WH_OK;
    pthread_mutex_lock(&p->lock);
    wh_status st = wh__free_locked(p, ptr, s);
    pthread_mutex_unlock(&p->lock);
    return st;
}

wh_status wh_pool_record_stream(wh_pool *p, void *ptr, wh_stream s) {
    wh__clear_error();
    if (!p || !ptr) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_record_stream: NULL argument");
    pthread_mutex_lock(&p->lock);
    uint32_t b, slot;
    wh_status st = wh__lookup_live(p, ptr, "wh_pool_record_stream", &b);
    if (st == WH_OK) st = wh__slot_of(p, s, &slot);
    if (st == WH_OK) st = wh__use(p, b, slot);
    pthread_mutex_unlock(&p->lock);
    return st;
}

/* Bytes the owner of live block b may use: the block, or (config.secure)
 * the request, the guard right after it. */
static size_t wh__usable(const wh_pool *p, uint32_t b) {
    return p->cfg.secure ? (size_t)p->info[b].requested : (size_t)wh_blocks_desc(p->core)[b].size;
}

static const void *wh__user_tag(const void *tag) {
    const char *t = tag;
    bool implicit = t == wh__large_tag || (t >= wh__class_tags && t < wh__class_tags + sizeof wh__class_tags);
    return implicit ? NULL : tag;
}

wh_status wh_pool_live_blocks(wh_pool *p, wh_pool_block *out, size_t cap, size_t *count) {
    wh__clear_error();
    if (!p || !count || (cap && !out)) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_live_blocks: NULL argument");
    pthread_mutex_lock(&p->lock);
    size_t n = 0;
    for (uint32_t b = 0; b < p->core->capacity; ++b) {
        const wh__info *in = &p->info[b];
        if (in->state != WH__LIVE) continue;
        if (n < cap)
            out[n] = (wh_pool_block){(void *)(uintptr_t)wh__user_addr(p, b), wh__usable(p, b), (size_t)in->requested,
                                     p->slots[in->alloc_slot].stream, wh__user_tag(in->tag)};
        n++;
    }
    pthread_mutex_unlock(&p->lock);
    *count = n;
    return WH_OK;
}

size_t wh_pool_usable_size(wh_pool *p, const void *ptr) {
    if (!p || !ptr) return 0;
    pthread_mutex_lock(&p->lock);
    uint32_t b = wh__map_get(p, (uint64_t)(uintptr_t)ptr);
    size_t n = b != WH_BLOCK_NONE && p->info[b].state == WH__LIVE ? wh__usable(p, b) : 0;
    pthread_mutex_unlock(&p->lock);
    return n;
}
