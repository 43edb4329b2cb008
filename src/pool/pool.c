/* SPDX-License-Identifier: MIT */
/* Host pool: create, destroy, trim, stats and the heap walk.
 * The pool's state lives in host memory taken once at create: the block
 * core (core/blocks.h), per-descriptor info and the address map. */
#include "pool_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define WH__DEFAULT_ALIGN    256u
#define WH__DEFAULT_BLOCKS   (1u << 18)
#define WH__DEFAULT_STREAMS  16u
#define WH__DEFAULT_SLACK_PM 100u /* range growth's budget: the peak in use + 1/10 */

static wh_status wh__resolve(wh_pool_config *c) {
    if (c->alignment == 0) c->alignment = WH__DEFAULT_ALIGN;
    if (c->alignment & (c->alignment - 1) || c->alignment > WH_POOL_MAX_ALIGNMENT)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "pool: alignment %zu is not a power of two <= %zu", c->alignment,
                        WH_POOL_MAX_ALIGNMENT);
    if (c->alignment < sizeof(void *)) c->alignment = sizeof(void *);
    if (c->small_arena == 0) c->small_arena = 2u << 20;
    if (c->medium_arena == 0) c->medium_arena = 20u << 20;
    if (c->max_blocks == 0) c->max_blocks = WH__DEFAULT_BLOCKS;
    if (c->max_streams == 0) c->max_streams = WH__DEFAULT_STREAMS;
    if (c->vmm_slack_pm == 0) c->vmm_slack_pm = WH__DEFAULT_SLACK_PM;
    if (c->max_streams > WH__MAX_LANES - 1)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "pool: max_streams %u > %u (streams with a free index of their own)",
                        c->max_streams, WH__MAX_LANES - 1);
    if (c->max_blocks < 2 || c->max_blocks > (1u << 28))
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "pool: max_blocks %u not in [2, 2^28]", c->max_blocks);
    if (c->index != WH_BLOCKS_TLSF && c->index != WH_BLOCKS_MAXHEAP)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "pool: unknown free index kind %d", (int)c->index);
    /* AUTO: host memory only in a build without CUDA; a CUDA build with no
     * usable GPU says so rather than hand out host memory unasked */
    if (c->backend == WH_POOL_AUTO && WH_HAVE_CUDA && !wh_cuda_available())
        return wh__fail(WH_ERR_NO_DEVICE, "pool: no usable GPU for the automatic backend (ask for WH_POOL_CPU "
                                          "to pool host memory)");
    if (c->backend == WH_POOL_AUTO) c->backend = WH_HAVE_CUDA ? WH_POOL_CUDA : WH_POOL_CPU;
    if (c->backend == WH_POOL_CUDA && !wh_cuda_available())
        return wh__fail(WH_ERR_NO_DEVICE, "pool: CUDA backend asked for, but %s",
                        WH_HAVE_CUDA ? "no GPU is usable" : "built without CUDA");
    if (c->backend != WH_POOL_CPU && c->backend != WH_POOL_CUDA)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "pool: unknown backend %d", (int)c->backend);
    if (c->growth != WH_POOL_GROW_DEFAULT && c->growth != WH_POOL_GROW_ARENAS && c->growth != WH_POOL_GROW_VMM)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "pool: unknown growth %d", (int)c->growth);
    if (c->footprint != WH_POOL_FOOTPRINT_TIGHT && c->footprint != WH_POOL_FOOTPRINT_LOOSE)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "pool: unknown footprint %d", (int)c->footprint);
    if (c->vmm_slack_pm > 1000)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "pool: vmm_slack_pm %u is above 1000", c->vmm_slack_pm);
    if (c->max_bytes && c->max_bytes < c->alignment)
        return wh__fail(WH_ERR_TOO_SMALL, "pool: max_bytes %zu below one aligned block", c->max_bytes);
    return WH_OK;
}

static void wh__pool_free_tables(wh_pool *p) {
    for (uint32_t i = 0; i < p->narenas; ++i) wh__nvtx_heap_drop(p, &p->arenas[i]);
    wh__vmm_destroy(p);
    free(p->core);
    free(p->info);
    free(p->map_keys);
    free(p->map_vals);
    free(p->arenas);
    free(p->pending);
    free(p->slots);
    free(p->use_list);
    free(p->xuses);
    free(p);
}

wh_status wh_pool_create(wh_pool **out, const wh_pool_config *cfg) {
    wh__clear_error();
    if (!out) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_create: out is NULL");
    *out = NULL;
    wh_pool_config c = cfg ? *cfg : (wh_pool_config){0};
    wh_status st = wh__resolve(&c);
    if (st != WH_OK) return st;
    wh_pool *p = calloc(1, sizeof *p);
    if (!p) return wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_pool_create: no host memory");
    p->cfg = c;
    uint32_t nindex = 1 + c.max_streams;
    uint64_t bytes = wh_blocks_bytes(c.index, nindex, c.max_blocks);
    p->core = wh__host_alloc(64, bytes);
    p->info = calloc(c.max_blocks, sizeof *p->info);
    if (!p->core || !p->info || !wh__map_init(p) ||
        !wh_blocks_init(p->core, bytes, c.index, nindex, c.max_blocks, c.alignment) || wh__slots_init(p) != WH_OK) {
        wh__pool_free_tables(p);
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_pool_create: no host memory for %u block descriptors", c.max_blocks);
    }
    wh_blocks_set_absorb(p->core, WH__READY); /* a stream may take READY neighbours */
    p->hot = WH_BLOCK_NONE;
    /* Default: the range (VMM).  It is fast enough (6.5x..33x
     * cudaMallocAsync warm on random_allocations) at a fraction of the
     * arenas' footprint: peak reserved / peak live 1.04-1.14
     * against 1.06-1.18 for blocks up to 64 MiB, 1.10 against 4.02 in
     * Futhark's loop.  Separate cudaMalloc arenas never merge, so no arena
     * policy gets there (CPU replay, wh_pool_replay).  Where the driver
     * has no virtual-memory calls, or no address range can be reserved, the
     * default falls back to arenas; asked for explicitly, VMM fails instead. */
    if (c.growth == WH_POOL_GROW_VMM || c.growth == WH_POOL_GROW_DEFAULT) {
        wh_status vs = wh__vmm_create(p);
        if (vs == WH_OK && !(p->arenas = malloc(sizeof *p->arenas))) {
            /* the range is set up and the host is out of memory: not a reason
             * to fall back to arenas (the range's blocks are in the core) */
            wh__pool_free_tables(p); /* the range too */
            return wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_pool_create: no host memory");
        }
        if (vs == WH_OK) { /* the range as one arena: for wh__bad_pointer, the check */
            p->arenas[0] = (wh__arena){NULL, p->vmm.size, p->vmm.head, NULL};
            p->narenas = p->arenas_cap = 1;
            p->use_vmm = true;
            wh__nvtx_heap(p, &p->arenas[0]);
            p->st.arenas = 1;
        } else if (c.growth == WH_POOL_GROW_VMM || (vs != WH_ERR_UNSUPPORTED && vs != WH_ERR_OUT_OF_MEMORY)) {
            wh__pool_free_tables(p);
            return vs;
        } else {
            wh__vmm_destroy(p); /* whatever it set up; arenas from here */
        }
    }
    p->cfg.growth = p->use_vmm ? WH_POOL_GROW_VMM : WH_POOL_GROW_ARENAS;
    p->poison = WH__ASAN && c.backend == WH_POOL_CPU;
    if (pthread_mutex_init(&p->lock, NULL)) {
        wh__pool_free_tables(p);
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_pool_create: pthread_mutex_init failed");
    }
    *out = p;
    return WH_OK;
}

void wh__poison_stop(wh_pool *p) {
    const wh_block *d = wh_blocks_desc(p->core);
    for (uint32_t b = 0; p->poison && b < p->core->capacity; ++b)
        if (d[b].state != WH_BLOCK_SPARE && p->info[b].state != WH__HOLE) wh__poison(p, d[b].addr, d[b].size, false);
    p->poison = false;
}

/* Arena i back to the driver (unpoisoned, no NVTX heap any more; its
 * descriptors may be gone). */
static void wh__arena_free(wh_pool *p, uint32_t i) {
    wh__nvtx_heap_drop(p, &p->arenas[i]);
    wh__poison(p, (uint64_t)(uintptr_t)p->arenas[i].raw, p->arenas[i].size, false);
    wh__mem_free(p, p->arenas[i].raw);
}

wh_status wh_pool_destroy(wh_pool *p) {
    wh__clear_error();
    if (!p) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_destroy: pool is NULL");
    pthread_mutex_lock(&p->lock);
    uint64_t live = p->st.allocs - p->st.frees, bytes = p->st.in_use;
    (void)wh__wait_streams(p);
    wh__pending_poll(p);                                /* their events go back first */
    if (p->use_vmm) wh__vmm_retire_poll(p, UINT64_MAX); /* every old address goes now */
    for (uint32_t i = 0; i < p->npending; ++i)
        for (uint32_t k = 0; k < p->pending[i].nev; ++k) wh__event_release(p, &p->pending[i].ev[k]);
    wh__poison_stop(p);
    for (uint32_t i = 0; i < p->narenas; ++i) wh__nvtx_heap_drop(p, &p->arenas[i]); /* the range's too */
    for (uint32_t i = 0; i < p->narenas && !p->use_vmm; ++i) wh__mem_free(p, p->arenas[i].raw);
    wh__events_destroy(p);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_destroy(&p->lock);
    wh__pool_free_tables(p);
    if (live)
        return wh__fail(WH_ERR_IN_USE, "pool destroyed with %llu live allocation%s (%llu bytes)",
                        (unsigned long long)live, live == 1 ? "" : "s", (unsigned long long)bytes);
    return WH_OK;
}

/* Give whole free arenas back until at most keep bytes stay cached.  Only
 * arenas in READY: a free block in a stream's index may still be in use by
 * work queued on that stream before its free. */
void wh__trim_arenas(wh_pool *p, uint64_t keep) {
    if (p->use_vmm) return; /* one range: wh__vmm_release */
    const wh_block *d = wh_blocks_desc(p->core);
    for (uint32_t i = p->narenas; i-- > 0;) {
        if (p->core->arena_bytes - p->st.in_use <= keep) break;
        uint32_t h = p->arenas[i].head;
        if (d[h].state != WH_BLOCK_FREE || d[h].index != WH__READY) continue;
        if (!wh_blocks_remove_arena(p->core, h)) continue;
        wh__arena_free(p, i);
        p->arenas[i] = p->arenas[--p->narenas];
        p->st.arena_frees++;
    }
    p->st.arenas = p->narenas;
    p->st.reserved = p->core->arena_bytes;
}

wh_status wh_pool_trim(wh_pool *p, size_t keep_bytes) {
    wh__clear_error();
    if (!p) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_trim: pool is NULL");
    pthread_mutex_lock(&p->lock);
    wh__tag_flush(p);
    (void)wh__wait_streams(p);
    wh__pending_poll(p);
    wh__reclaim(p);
    if (p->use_vmm) {
        uint64_t target = p->st.in_use + keep_bytes;
        wh__vmm_release(p, target < p->st.in_use ? UINT64_MAX : target, true);
        p->st.reserved = wh__reserved(p);
    }
    wh__trim_arenas(p, keep_bytes);
    pthread_mutex_unlock(&p->lock);
    return WH_OK;
}

wh_status wh_pool_get_stats(wh_pool *p, wh_pool_stats *s) {
    wh__clear_error();
    if (!p || !s) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_get_stats: NULL argument");
    pthread_mutex_lock(&p->lock);
    *s = p->st;
    s->reserved = wh__reserved(p);
    s->cached = s->reserved - s->in_use;
    s->retired = p->vmm.retired_bytes;
    s->largest_free = 0;
    for (uint32_t i = 0; i < wh__nlanes(p); ++i) {
        uint64_t l = wh_blocks_largest_free(p->core, i);
        if (l > s->largest_free) s->largest_free = l;
    }
    pthread_mutex_unlock(&p->lock);
    return WH_OK;
}

wh_status wh_pool_reset_peak(wh_pool *p) {
    wh__clear_error();
    if (!p) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_reset_peak: pool is NULL");
    pthread_mutex_lock(&p->lock);
    p->st.in_use_peak = p->st.in_use;
    p->st.reserved_peak = wh__reserved(p);
    pthread_mutex_unlock(&p->lock);
    return WH_OK;
}

wh_pool_backend wh_pool_get_backend(const wh_pool *p) { return p ? p->cfg.backend : WH_POOL_AUTO; }

/* The pool's bookkeeping against the core's, under the lock. */
static wh_status wh__check_locked(wh_pool *p) {
    wh_blocks_report r;
    if (!wh_blocks_check(p->core, &r))
        return wh__fail(WH_ERR_CORRUPT, "pool: block core check failed at core/walk.h:%u, block %u", r.error,
                        r.bad_block);
    const wh_block *d = wh_blocks_desc(p->core);
    uint64_t n[WH__RETIRED + 1] = {0}, live_bytes = 0, requested = 0, mapped = 0, arena_sum = 0;
    for (uint32_t b = 0; b < p->core->capacity; ++b) {
        uint32_t s = p->info[b].state;
        if ((s != WH__FREE_OR_CORE) != (d[b].state == WH_BLOCK_USED))
            return wh__fail(WH_ERR_CORRUPT, "pool: block %u: pool state %u, core state %u", b, s, d[b].state);
        n[s <= WH__RETIRED ? s : WH__FREE_OR_CORE]++;
        if (s == WH__LIVE) {
            live_bytes += d[b].size;
            requested += p->info[b].requested;
        }
        if ((s == WH__HOLE || s == WH__RETIRED) && !p->use_vmm)
            return wh__fail(WH_ERR_CORRUPT, "pool: hole or retired block %u without a range", b);
        if (s != WH__FREE_OR_CORE && s != WH__HOLE && s != WH__RETIRED && wh__map_get(p, wh__user_addr(p, b)) != b)
            return wh__fail(WH_ERR_CORRUPT, "pool: block %u at 0x%" PRIx64 " missing from the address map", b,
                            wh__user_addr(p, b));
    }
    for (uint64_t i = 0; i <= p->map_mask; ++i) mapped += p->map_keys[i] != 0;
    if (mapped != p->map_count || 2 * mapped > p->map_mask + 1)
        return wh__fail(WH_ERR_CORRUPT,
                        "pool: the address map holds %" PRIu64 " keys, counted %" PRIu64 ", in %" PRIu64 " entries",
                        mapped, p->map_count, p->map_mask + 1);
    for (uint32_t i = 0; i < p->narenas; ++i) arena_sum += p->arenas[i].size;
    uint32_t tagged = p->hot != WH_BLOCK_NONE;
    if (tagged && p->info[p->hot].state != WH__TAGGED)
        return wh__fail(WH_ERR_CORRUPT, "pool: the hot block %u is not kept", p->hot);
    for (uint32_t i = 0; i < WH__TAGS; ++i)
        if (p->tags[i].tag && p->tags[i].block != WH_BLOCK_NONE) {
            tagged++;
            if (p->info[p->tags[i].block].state != WH__TAGGED)
                return wh__fail(WH_ERR_CORRUPT, "pool: tag entry %u holds a block that is not kept", i);
        }
    if (live_bytes != p->st.in_use || requested != p->st.requested || n[WH__TAGGED] != tagged ||
        tagged != p->st.tag_cached || n[WH__PENDING] != p->npending ||
        mapped + n[WH__HOLE] + n[WH__RETIRED] != r.used || r.used != p->core->nused || arena_sum != r.arena_bytes ||
        r.arena_bytes != p->core->arena_bytes || p->narenas != r.arenas || p->st.allocs - p->st.frees != n[WH__LIVE])
        return wh__fail(
            WH_ERR_CORRUPT,
            "pool: stats disagree with the heap walk: in use %" PRIu64 "/%" PRIu64 ", live %" PRIu64 "/%" PRIu64
            ", tagged %" PRIu64 "/%u, pending %" PRIu64 "/%u, mapped %" PRIu64 "/%u, arenas %" PRIu64 "/%" PRIu64,
            live_bytes, p->st.in_use, n[WH__LIVE], p->st.allocs - p->st.frees, n[WH__TAGGED], tagged, n[WH__PENDING],
            p->npending, mapped + n[WH__HOLE] + n[WH__RETIRED], r.used, arena_sum, r.arena_bytes);
    wh_status st = wh__check_slots(p);
    if (st == WH_OK && p->use_vmm) st = wh__vmm_check(p);
    return st == WH_OK ? wh__secure_check(p) : st;
}

wh_status wh_pool_check(wh_pool *p) {
    wh__clear_error();
    if (!p) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_pool_check: pool is NULL");
    pthread_mutex_lock(&p->lock);
    wh_status st = wh__check_locked(p);
    pthread_mutex_unlock(&p->lock);
    return st;
}
