/* SPDX-License-Identifier: MIT */
/* Device heap: create, reset, destroy and stats.  Heaps in host memory (the
 * CPU backend, or WH_HEAP_HOST) are handled here; device heaps by
 * heap_cuda.cu.  A heap in the caller's region is laid out here for both. */
#include "heap_internal.h"

#include <stdlib.h>
#include <string.h>

static bool on_host(const wh_heap *h) { return !WH_HAVE_CUDA || (h->flags & WH_HEAP_HOST); }

/* Empty heap: metadata zero, all pages free, the circular pre-split. */
static void init_host(wh_heap *h) {
    memset(h->meta_alloc, 0, h->meta_bytes);
    memcpy((void *)h->dev, h, sizeof *h);
    if (h->kind == WH_HEAP_SLAB || h->kind == WH_HEAP_DEFAULT) {
        (void)wh_bitmap_init_host(&h->pages, h->pages.words, h->npages, true);
        for (uint32_t k = 0; k < wh__whole_words(h->npages); ++k) h->page_whole[k] = wh__whole_empty(h->npages, k);
    }
    if (h->flags & WH_HEAP_SECURE) memset(h->base, WH__HEAP_FREED_BYTE, h->bytes); /* heap/secure.h */
    for (uint32_t k = 0; k < h->subheaps; ++k)
        h->cursors[(size_t)k * WH_CURSOR_STRIDE] = (uint64_t)k * h->subheap_units;
    if (h->end) {
        for (uint32_t k = 0; k < wh__circ_init_count(h); ++k) wh__circ_init_chunk(h, k);
        wh__circ_init_sentinel(h);
    }
}

/* The caller's build record against the library's (heap/config.h). */
static wh_status check_build(const wh_heap_build *caller) {
    static const wh_heap_build lib = WH__HEAP_BUILD;
    static const char *const names[] = {
        "WH_VERSION",        "sizeof(wh_heap)",         "sizeof(wh_heap_ctl)", "WH_SLAB_PAGE_SHIFT",
        "WH_SLAB_CLASSES",   "WH_SEG_WAYS_MAX",         "WH__SEG_MIN_SPP",     "WH__SEG_MAX_TILED",
        "WH__SEG_MIN_PAGES", "WH__SEG_TILED_MIN_PAGES", "WH__SLAB_FINE_PAGES"};
    enum { n = sizeof names / sizeof names[0] };
    _Static_assert(n * sizeof(uint32_t) == sizeof lib, "one name per field");
    if (!caller) return wh__fail(WH_ERR_INVALID_ARGUMENT, "heap: no build record (call wh_heap_create)");
    uint32_t a[n], b[n];
    memcpy(a, caller, sizeof a);
    memcpy(b, &lib, sizeof b);
    for (size_t k = 0; k < n; ++k)
        if (a[k] != b[k])
            return wh__fail(WH_ERR_UNSUPPORTED,
                            "heap: the caller was compiled with %s = %u, the library with %u: rebuild against "
                            "the headers of the library it links",
                            names[k], a[k], b[k]);
    return WH_OK;
}

/* A heap in the caller's region: the arena at its start, the metadata
 * behind it (wh__heap_plan_region); nothing to free at destroy. */
static wh_status create_in_region(wh_heap *h, const wh_heap_config *cfg, size_t *arena) {
    size_t meta_off = 0;
    memset(h, 0, sizeof *h); /* as a failed plan leaves it */
    wh_status st = wh__region_check("heap", cfg->region, cfg->bytes, WH_HEAP_REGION_ALIGN,
                                    WH_HAVE_CUDA && !(cfg->flags & WH_HEAP_HOST));
    if (st == WH_OK) st = wh__heap_plan_region(h, cfg, arena, &meta_off);
    if (st != WH_OK) return st;
    if (!WH_HAVE_CUDA) h->flags |= WH_HEAP_HOST;
    h->flags |= WH__HEAP_REGION;
    h->arena_alloc = cfg->region;
    h->meta_alloc = (uint8_t *)cfg->region + meta_off;
    wh__heap_bind(h, h->arena_alloc, h->meta_alloc);
    if (!on_host(h)) {
#if WH_HAVE_CUDA
        st = wh__heap_init_device(h);
        if (st != WH_OK) memset(h, 0, sizeof *h);
        return st;
#endif
    }
    init_host(h);
    return WH_OK;
}

wh_status wh_heap_create_built(wh_heap *h, const wh_heap_config *cfg_in, const wh_heap_build *caller) {
    wh__clear_error();
    wh_status built = check_build(caller);
    if (built != WH_OK) {
        if (h) memset(h, 0, sizeof *h);
        return built;
    }
    size_t arena = 0;
    wh_heap_config cfg_local, *cfg = NULL;
    if (cfg_in) {
        cfg_local = *cfg_in;
        cfg = &cfg_local;
#if WH_HAVE_CUDA
        if (wh__circ_multi(cfg->kind) && !cfg->subheaps && !(cfg->flags & WH_HEAP_HOST))
            cfg->subheaps = wh__heap_device_sms();
#endif
        if (h && cfg->region) return create_in_region(h, cfg, &arena);
    }
    wh_status st = wh__heap_plan(h, cfg, &arena);
    if (st != WH_OK) return st;
    if (!WH_HAVE_CUDA) h->flags |= WH_HEAP_HOST;
    if (!on_host(h)) {
#if WH_HAVE_CUDA
        return wh__heap_create_device(h, arena);
#endif
    }
    h->arena_alloc = wh__host_alloc(WH_SLAB_PAGE, arena);
    h->meta_alloc = wh__host_alloc(256, h->meta_bytes);
    if (!h->arena_alloc || !h->meta_alloc) {
        size_t meta = h->meta_bytes;
        free(h->arena_alloc);
        free(h->meta_alloc);
        memset(h, 0, sizeof *h);
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "heap: cannot allocate %zu + %zu host bytes", arena, meta);
    }
    wh__heap_bind(h, h->arena_alloc, h->meta_alloc);
    init_host(h);
    return WH_OK;
}

wh_status wh_heap_reset(wh_heap *h) {
    wh__clear_error();
    if (!h || !h->meta_alloc) return wh__fail(WH_ERR_INVALID_ARGUMENT, "heap: reset of no heap");
    if (!on_host(h)) {
#if WH_HAVE_CUDA
        return wh__heap_init_device(h);
#endif
    }
    init_host(h);
    return WH_OK;
}

/* Live bytes are known only with WH_HEAP_TRACK (a counter; no walk), and
 * matter only for kinds that free: BUMP and WRAP are released by destroy. */
wh_status wh_heap_destroy(wh_heap *h) {
    wh__clear_error();
    if (!h) return wh__fail(WH_ERR_INVALID_ARGUMENT, "heap: destroy of NULL");
    if (!h->meta_alloc) return WH_OK;
    uint64_t live = 0;
    wh_status st = WH_OK;
    bool track = (h->flags & WH_HEAP_TRACK) && h->kind != WH_HEAP_BUMP && h->kind != WH_HEAP_WRAP;
    if (!on_host(h)) {
#if WH_HAVE_CUDA
        if (track) live = wh__heap_in_use_device(h);
        st = wh__heap_destroy_device(h);
#endif
    } else {
        if (track) live = h->ctl->in_use;
        if (!(h->flags & WH__HEAP_REGION)) {
            free(h->arena_alloc);
            free(h->meta_alloc);
        }
        memset(h, 0, sizeof *h);
    }
    if (st == WH_OK && live)
        return wh__fail(WH_ERR_IN_USE, "heap destroyed with %llu bytes in use", (unsigned long long)live);
    return st;
}

wh_status wh_heap_trim(const wh_heap *h) {
    wh__clear_error();
    if (!h || !h->meta_alloc) return wh__fail(WH_ERR_INVALID_ARGUMENT, "heap: trim of no heap");
    if (h->kind != WH_HEAP_SLAB && h->kind != WH_HEAP_DEFAULT) return WH_OK; /* no pages to give back */
    if (!on_host(h)) {
#if WH_HAVE_CUDA
        return wh__heap_trim_device(h);
#endif
    }
    wh__seg_trim(h);
    return WH_OK;
}

wh_status wh_heap_stats(const wh_heap *h, wh_heap_usage *s) {
    wh__clear_error();
    if (!h || !s || !h->meta_alloc) return wh__fail(WH_ERR_INVALID_ARGUMENT, "heap: stats of no heap");
    if (!on_host(h)) {
#if WH_HAVE_CUDA
        return wh__heap_stats_device(h, s);
#endif
    }
    wh__heap_walk(h, s);
    return WH_OK;
}
