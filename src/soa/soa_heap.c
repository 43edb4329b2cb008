/* SPDX-License-Identifier: MIT */
/* Object allocator, host side: heap creation with the block capacities of
 * DynaSOAr (ECOOP 2019) section 3.2 and the bitmaps of 3.4, statistics, and the
 * invariant check.  Departures are listed in warpheap/soa/heap.h. */
#include "soa_internal.h"

#include <stdlib.h>
#include <string.h>

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Bytes of a heap of n blocks, and where each part starts. */
typedef struct layout {
    size_t counters, blocks, bitmaps, bitmap_bytes, do_blocks, do_iter, do_count, homes, total;
    uint32_t home_mask;
} layout;

/* Home-block entries per type: one per block, a power of two, at most
 * WH_SOA_HOMES. */
static uint32_t homes_for(uint64_t n) {
    uint32_t h = 1;
    while (h < n && h < WH_SOA_HOMES) h <<= 1;
    return h;
}

static layout layout_for(uint64_t n, uint32_t block_bytes, uint32_t ntypes) {
    layout l;
    l.counters = 0;
    l.blocks = WH_SOA_HEADER_AREA; /* counters, aligned */
    l.bitmaps = l.blocks + (size_t)n * block_bytes;
    l.bitmap_bytes = round_up(wh_bitmap_bytes(n), 64);
    l.do_blocks = l.bitmaps + (1u + 2u * ntypes) * l.bitmap_bytes;
    l.do_iter = l.do_blocks + round_up((size_t)n * 4u, 64);
    l.do_count = l.do_iter + (size_t)n * 8u;
    l.homes = l.do_count + 64; /* WH_SOA_DO_COUNTERS words on a line of their own */
    l.home_mask = homes_for(n) - 1u;
    l.total = l.homes + round_up(wh__soa_homes_bytes(ntypes, l.home_mask), 64);
    return l;
}

static wh_status check_types(const wh_soa_config *cfg) {
    if (!cfg->types || cfg->ntypes == 0) return wh__fail(WH_ERR_INVALID_ARGUMENT, "soa: no types");
    if (cfg->ntypes > WH_SOA_MAX_TYPES)
        return wh__fail(WH_ERR_TOO_LARGE, "soa: %u types, at most %u", cfg->ntypes, WH_SOA_MAX_TYPES);
    uint32_t concrete = 0;
    for (uint32_t t = 0; t < cfg->ntypes; ++t) {
        const wh_soa_type_desc *d = &cfg->types[t];
        if (d->id != t)
            return wh__fail(WH_ERR_INVALID_ARGUMENT, "soa: type %u has id %u (must be its index)", t, d->id);
        if (d->size == 0) return wh__fail(WH_ERR_INVALID_ARGUMENT, "soa: type %u has size 0", t);
        if (d->size > WH_SOA_BLOCK_DATA_MAX)
            return wh__fail(WH_ERR_TOO_LARGE, "soa: type %u (%s) is %u bytes, more than a block holds (%u)", t,
                            d->name ? d->name : "?", d->size, WH_SOA_BLOCK_DATA_MAX);
        if (d->parent >= (int32_t)t)
            return wh__fail(WH_ERR_INVALID_ARGUMENT, "soa: type %u: parent must come first", t);
        concrete += !d->abstract;
    }
    if (!concrete) return wh__fail(WH_ERR_INVALID_ARGUMENT, "soa: every type is abstract");
    return WH_OK;
}

/* Rule of 3.2, generalised: data segment max(64 * smallest, largest), at
 * most WH_SOA_BLOCK_DATA_MAX (check_types keeps every type within it). */
static uint32_t plan_types(wh_soa *s, const wh_soa_config *cfg) {
    uint64_t smin = ~0u, smax = 0;
    for (uint32_t t = 0; t < cfg->ntypes; ++t) {
        if (cfg->types[t].abstract) continue;
        if (cfg->types[t].size < smin) smin = cfg->types[t].size;
        if (cfg->types[t].size > smax) smax = cfg->types[t].size;
    }
    uint64_t data = smin * 64u > smax ? smin * 64u : smax;
    data = round_up(data < WH_SOA_BLOCK_DATA_MAX ? data : WH_SOA_BLOCK_DATA_MAX, WH_SOA_BLOCK_ALIGN);
    for (uint32_t t = 0; t < cfg->ntypes; ++t) {
        uint64_t c = cfg->types[t].abstract ? 0 : data / cfg->types[t].size;
        s->cap[t] = (uint8_t)(c > 64 ? 64 : c);
        for (int32_t a = (int32_t)t; a >= 0; a = cfg->types[a].parent) s->subtypes[a] |= (uint16_t)(1u << t);
    }
    return (uint32_t)(WH_SOA_HEADER_BYTES + data);
}

static void place(wh_soa *s, uint8_t *mem, const layout *l) {
    s->mem = mem;
    s->counters = (uint64_t *)(mem + l->counters);
    s->blocks = mem + l->blocks;
    wh_bitmap_layout(&s->free_blocks, mem + l->bitmaps, s->nblocks);
    for (uint32_t t = 0; t < s->ntypes; ++t) {
        wh_bitmap_layout(&s->alloc_blocks[t], mem + l->bitmaps + (1 + t) * l->bitmap_bytes, s->nblocks);
        wh_bitmap_layout(&s->active_blocks[t], mem + l->bitmaps + (1 + s->ntypes + t) * l->bitmap_bytes, s->nblocks);
    }
    s->do_blocks = (uint32_t *)(mem + l->do_blocks);
    s->do_iter = (uint64_t *)(mem + l->do_iter);
    s->do_count = (uint32_t *)(mem + l->do_count);
    s->homes = (uint32_t *)(mem + l->homes);
    s->home_mask = l->home_mask;
}

static void init_host(wh_soa *s) {
    memset(s->counters, 0, WH_SOA_HEADER_AREA); /* counters and wh__soa_opening */
    memset(s->do_count, 0, WH_SOA_DO_COUNTERS * sizeof *s->do_count);
    memset(s->homes, 0xFF, wh__soa_homes_bytes(s->ntypes, s->home_mask)); /* no home block */
    for (uint32_t b = 0; b < s->nblocks; ++b) {
        *wh__soa_alloc_word(s, b) = ~0ull; /* free: no slot can be reserved */
        *wh__soa_type_word(s, b) = ~0u;
    }
    wh_bitmap_init_host(&s->free_blocks, s->free_blocks.words, s->nblocks, true);
    for (uint32_t t = 0; t < s->ntypes; ++t) {
        wh_bitmap_init_host(&s->alloc_blocks[t], s->alloc_blocks[t].words, s->nblocks, false);
        wh_bitmap_init_host(&s->active_blocks[t], s->active_blocks[t].words, s->nblocks, false);
    }
}

/* The heap's memory: the caller's region, or fresh device or host memory. */
static wh_status take_mem(const wh_soa_config *cfg, size_t bytes, void **mem) {
    *mem = cfg->region;
    if (cfg->region) return WH_OK;
    if (cfg->on_device) return wh__soa_dev_alloc(mem, bytes);
    *mem = wh__host_alloc(256, bytes);
    return *mem ? WH_OK : wh__fail(WH_ERR_OUT_OF_MEMORY, "soa: %zu bytes of host memory", bytes);
}
/* ... and back: a region stays with the caller. */
static wh_status give_mem(const wh_soa *s) {
    if (s->in_region) return WH_OK;
    if (s->on_device) return wh__soa_dev_free(s->mem);
    free(s->mem);
    return WH_OK;
}

wh_status wh_soa_create(wh_soa *soa, const wh_soa_config *cfg) {
    wh__clear_error();
    if (!soa || !cfg) return wh__fail(WH_ERR_INVALID_ARGUMENT, "soa: null argument");
    memset(soa, 0, sizeof *soa);
    wh_status st = check_types(cfg);
    if (st == WH_OK && cfg->region)
        st = wh__region_check("soa", cfg->region, cfg->bytes, WH_SOA_REGION_ALIGN, cfg->on_device);
    if (st != WH_OK) return st;
    wh_soa s;
    memset(&s, 0, sizeof s);
    s.ntypes = cfg->ntypes;
    s.block_bytes = plan_types(&s, cfg);
    /* the most blocks that fit, bitmaps and scratch included */
    uint64_t lo = 0, hi = cfg->bytes / s.block_bytes;
    if (hi > WH_BITMAP_MAX_BITS) hi = WH_BITMAP_MAX_BITS;
    while (lo < hi) {
        uint64_t mid = (lo + hi + 1) / 2;
        if (layout_for(mid, s.block_bytes, s.ntypes).total <= cfg->bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo < 1)
        return wh__fail(WH_ERR_TOO_SMALL, "soa: %zu bytes cannot hold one block of %u bytes and its bitmaps",
                        cfg->bytes, s.block_bytes);
    if (cfg->refs && lo > WH_SOA_REF_BLOCKS)
        return wh__fail(WH_ERR_TOO_LARGE,
                        "soa: %zu bytes make %llu blocks of %u bytes; 32-bit references (refs) reach %u of them "
                        "(at most about %llu bytes)",
                        cfg->bytes, (unsigned long long)lo, s.block_bytes, WH_SOA_REF_BLOCKS,
                        (unsigned long long)WH_SOA_REF_BLOCKS * s.block_bytes);
    s.nblocks = (uint32_t)lo;
    s.refs = cfg->refs;
    layout l = layout_for(lo, s.block_bytes, s.ntypes);
    s.mem_bytes = l.total;
    s.cpu_threads = cfg->cpu_threads ? cfg->cpu_threads : 4u;
    s.on_device = cfg->on_device;
    s.in_region = cfg->region != NULL;
    void *mem = NULL;
    if ((st = take_mem(cfg, l.total, &mem)) != WH_OK) return st;
    place(&s, (uint8_t *)mem, &l);
    if ((uint64_t)(uintptr_t)mem + l.total > (1ull << WH_SOA_ADDR_BITS)) {
        (void)give_mem(&s);
        return wh__fail(WH_ERR_UNSUPPORTED, "soa: heap at %p ends past the %u address bits of an object pointer", mem,
                        WH_SOA_ADDR_BITS);
    }
    if (cfg->on_device) {
        s.do_threads = wh__soa_dev_threads();
        s.do_early = wh__soa_dev_early();
        if ((st = wh__soa_dev_init(&s)) != WH_OK) {
            (void)give_mem(&s);
            return st;
        }
    } else {
        init_host(&s);
    }
    *soa = s;
    return WH_OK;
}

wh_status wh_soa_destroy(wh_soa *soa) {
    wh__clear_error();
    if (!soa || !soa->mem) return wh__fail(WH_ERR_INVALID_ARGUMENT, "soa: destroy of no heap");
    uint64_t objects = 0, slots = 0;
    (void)wh_soa_usage(soa, &objects, &slots);
    wh__clear_error();
    wh_status st = give_mem(soa);
    memset(soa, 0, sizeof *soa);
    if (st == WH_OK && objects)
        return wh__fail(WH_ERR_IN_USE, "object heap destroyed with %llu live objects", (unsigned long long)objects);
    return st;
}

static void rebase(wh_soa *img, const wh_soa *s, uint8_t *mem) {
    ptrdiff_t d = mem - (uint8_t *)s->mem;
    img->mem = mem;
    img->counters = (uint64_t *)((uint8_t *)s->counters + d);
    img->blocks = s->blocks + d;
    img->free_blocks = wh_bitmap_rebase(&s->free_blocks, (uint8_t *)s->free_blocks.words + d);
    for (uint32_t t = 0; t < s->ntypes; ++t) {
        img->alloc_blocks[t] = wh_bitmap_rebase(&s->alloc_blocks[t], (uint8_t *)s->alloc_blocks[t].words + d);
        img->active_blocks[t] = wh_bitmap_rebase(&s->active_blocks[t], (uint8_t *)s->active_blocks[t].words + d);
    }
    img->do_blocks = (uint32_t *)((uint8_t *)s->do_blocks + d);
    img->do_iter = (uint64_t *)((uint8_t *)s->do_iter + d);
    img->do_count = (uint32_t *)((uint8_t *)s->do_count + d);
    img->homes = (uint32_t *)((uint8_t *)s->homes + d);
}

/* A copy of the heap in fresh host memory.  Aligned like the heap (256 B):
 * object pointers carry their slot in the low 6 bits of the block address, so
 * blocks of the copy must be 64-byte aligned too. */
wh_status wh__soa_image_copy(const wh_soa *soa, wh_soa *img, void **owned) {
    *img = *soa;
    *owned = NULL;
    void *h = aligned_alloc(256, round_up(soa->mem_bytes, 256));
    if (!h) return wh__fail(WH_ERR_OUT_OF_MEMORY, "soa: host copy of %zu bytes", soa->mem_bytes);
    wh_status st = WH_OK;
    if (soa->on_device)
        st = wh__soa_dev_to_host(h, soa->mem, soa->mem_bytes);
    else
        memcpy(h, soa->mem, soa->mem_bytes);
    if (st != WH_OK) {
        free(h);
        return st;
    }
    rebase(img, soa, (uint8_t *)h);
    *owned = h;
    return WH_OK;
}

wh_status wh_soa_host_image(const wh_soa *soa, wh_soa *img, void **owned) {
    wh__clear_error();
    if (soa->on_device) return wh__soa_image_copy(soa, img, owned);
    *img = *soa;
    *owned = NULL;
    return WH_OK;
}

uint64_t wh_soa_image_ptr(const wh_soa *soa, const wh_soa *img, uint64_t p) {
    if (!p) return 0;
    uint64_t addr = (uint64_t)(uintptr_t)((uint8_t *)img->mem + ((uint8_t *)wh_soa_ptr_block(p) - (uint8_t *)soa->mem));
    return (p & ~WH_SOA_ADDR_MASK) | addr | wh_soa_ptr_slot(p);
}

uint64_t wh__soa_failed_allocs(const wh_soa *soa) {
    uint64_t v = 0;
    if (!soa->on_device) return wh_atomic_load(&soa->counters[WH_SOA_CTR_FAILED_ALLOCS], WH_ACQUIRE);
    if (wh__soa_dev_to_host(&v, &soa->counters[WH_SOA_CTR_FAILED_ALLOCS], sizeof v) != WH_OK) return ~0ull;
    return v;
}

wh_status wh_soa_stats_get(const wh_soa *soa, wh_soa_stats *st) {
    wh__clear_error();
    if (!soa || !st) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_stats_get: NULL argument");
    wh_soa s;
    void *owned;
    wh_status e = wh_soa_host_image(soa, &s, &owned);
    if (e != WH_OK) return e;
    memset(st, 0, sizeof *st);
    st->blocks = s.nblocks;
    for (uint32_t c = 0; c < WH_SOA_CTR_COUNT; ++c) st->counters[c] = s.counters[c];
    uint64_t objects = 0;
    for (uint32_t b = 0; b < s.nblocks; ++b) {
        if (wh_bitmap_get(&s.free_blocks, b)) {
            st->free_blocks++;
            continue;
        }
        uint32_t t = *wh__soa_type_word(&s, b);
        if (t >= s.ntypes) continue;
        uint64_t n = (uint64_t)wh_popc64(*wh__soa_alloc_word(&s, b) & wh__soa_usable(s.cap[t]));
        st->used_blocks[t]++;
        st->objects[t] += n;
        st->slots += s.cap[t];
        objects += n;
    }
    st->fragmentation = st->slots ? 1.0 - (double)objects / (double)st->slots : 0.0;
    free(owned);
    return WH_OK;
}

/* Broken invariants of block b (see wh_soa_check). */
static uint64_t check_block(const wh_soa *s, uint32_t b) {
    uint64_t a = *wh__soa_alloc_word(s, b);
    uint32_t ty = *wh__soa_type_word(s, b), in_alloc = 0, in_active = 0, bad = 0;
    for (uint32_t t = 0; t < s->ntypes; ++t) {
        bool al = wh_bitmap_get(&s->alloc_blocks[t], b), ac = wh_bitmap_get(&s->active_blocks[t], b);
        in_alloc += al;
        in_active += ac;
        if ((al || ac) && t != ty) bad++; /* listed under a wrong type */
    }
    if (wh_bitmap_get(&s->free_blocks, b)) return bad + (a != ~0ull) + in_alloc + in_active;
    if (ty >= s->ntypes || !s->cap[ty]) return bad + 1; /* allocated but untyped */
    uint64_t pad = ~wh__soa_usable(s->cap[ty]);
    bad += in_alloc != 1;                                           /* lost: neither free nor listed */
    bad += (a & pad) != pad;                                        /* padding slot handed out */
    bad += (a & ~pad) == 0;                                         /* empty block not reclaimed */
    bad += (a != ~0ull) != wh_bitmap_get(&s->active_blocks[ty], b); /* active iff not full */
    return bad;
}

wh_status wh_soa_check(const wh_soa *soa, uint64_t *violations) {
    wh__clear_error();
    if (!soa || !violations) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_check: NULL argument");
    wh_soa s;
    void *owned;
    wh_status e = wh_soa_host_image(soa, &s, &owned);
    if (e != WH_OK) return e;
    uint64_t bad = wh_bitmap_check_host(&s.free_blocks);
    for (uint32_t t = 0; t < s.ntypes; ++t)
        bad += wh_bitmap_check_host(&s.alloc_blocks[t]) + wh_bitmap_check_host(&s.active_blocks[t]);
    uint64_t used = 0;
    for (uint32_t b = 0; b < s.nblocks; ++b) {
        bad += check_block(&s, b);
        used += !wh_bitmap_get(&s.free_blocks, b);
    }
    for (uint32_t t = 0; t < s.ntypes; ++t) bad += *wh__soa_opening(&s, t) != 0; /* at quiescence none open */
    /* the pressure the slow-path bound reads: blocks opened minus given back */
    bad += used != wh__soa_blocks_in_use(&s);
    *violations = bad;
    free(owned);
    return WH_OK;
}

#if !WH_HAVE_CUDA
wh_status wh__soa_dev_alloc(void **mem, size_t bytes) {
    (void)mem;
    (void)bytes;
    return wh__fail(WH_ERR_NO_DEVICE, "soa: device heap requested, built without CUDA");
}
static wh_status no_cuda(void) { return wh__fail(WH_ERR_NO_DEVICE, "soa: device heap, built without CUDA"); }
wh_status wh__soa_dev_free(void *mem) {
    (void)mem;
    return no_cuda();
}
wh_status wh__soa_dev_to_host(void *dst, const void *src, size_t bytes) {
    (void)dst;
    (void)src;
    (void)bytes;
    return no_cuda();
}
wh_status wh__soa_dev_copy(void *dst, const void *src, size_t bytes) {
    (void)dst;
    (void)src;
    (void)bytes;
    return no_cuda();
}
wh_status wh__soa_dev_zero(void *dst, size_t bytes) {
    (void)dst;
    (void)bytes;
    return no_cuda();
}
wh_status wh__soa_dev_init(const wh_soa *soa) {
    (void)soa;
    return no_cuda();
}
uint32_t wh__soa_dev_threads(void) { return 0; }
uint32_t wh__soa_dev_early(void) { return 0; }
#endif

/* Live objects and slots of allocated blocks, for host heaps (the device
 * form is in soa_cuda.cu). */
static void usage_host(const wh_soa *s, uint64_t *objects, uint64_t *slots) {
    uint64_t o = 0, n = 0;
    for (uint32_t b = 0; b < s->nblocks; ++b) {
        if (wh_bitmap_get(&s->free_blocks, b)) continue;
        uint32_t t = wh_atomic_load(wh__soa_type_word(s, b), WH_RELAXED);
        if (t >= s->ntypes || !s->cap[t]) continue;
        o += (uint64_t)wh_popc64(wh_atomic_load(wh__soa_alloc_word(s, b), WH_RELAXED) & wh__soa_usable(s->cap[t]));
        n += s->cap[t];
    }
    *objects = o;
    *slots = n;
}

wh_status wh_soa_usage(const wh_soa *soa, uint64_t *objects, uint64_t *slots) {
    wh__clear_error();
    if (!soa || !objects || !slots) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_usage: NULL argument");
    if (soa->on_device) return wh__soa_dev_usage(soa, objects, slots);
    usage_host(soa, objects, slots);
    return WH_OK;
}
#if !WH_HAVE_CUDA
wh_status wh__soa_dev_usage(const wh_soa *soa, uint64_t *objects, uint64_t *slots) {
    (void)soa;
    (void)objects;
    (void)slots;
    return no_cuda();
}
#endif
