/* SPDX-License-Identifier: MIT */
/* Stream arena, host side: creation (the block core is laid out on the host
 * and copied to the device, as core/blocks.h allows: it is addressed by offsets),
 * the command entry points of both backends, the status mirror and the heap
 * walk.  Seed gpu-executed-heap.txt, "Address Buffering"; see arena.h for
 * where this departs from the seed. */
#include "arena_internal.h"
#include "warpheap/core/walk.h"

#include <stdlib.h>
#include <string.h>

#if WH_HAVE_CUDA
#include "warpheap/cuda_check.h"
#endif

#define WH_ARENA_DEFAULT_BLOCKS  65536u
#define WH_ARENA_DEFAULT_GRANULE 256u

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1u) / a * a; }

/* Layout of the metadata: state | gen[capacity] | block core. */
static size_t meta_layout(const wh_arena_config *cfg, uint32_t cap, uint64_t *gen_off, uint64_t *core_off) {
    *gen_off = round_up(sizeof(wh__arena_state), 64);
    *core_off = round_up(*gen_off + (uint64_t)cap * sizeof(uint32_t), 64);
    return (size_t)(*core_off + wh_blocks_bytes(cfg->index, 1, cap));
}

/* Build the metadata image in host memory: the state and a core whose one
 * arena is [0, usable) -- offsets, so the image works at any address. */
static wh_status build_image(const wh_arena_config *cfg, uint64_t base, void **out, size_t *bytes) {
    uint32_t cap = cfg->max_blocks ? cfg->max_blocks : WH_ARENA_DEFAULT_BLOCKS;
    uint64_t g = cfg->granule ? cfg->granule : WH_ARENA_DEFAULT_GRANULE;
    if (g < 8 || (g & (g - 1u)) || cap < 2 || cap >= WH_BLOCK_NONE ||
        (cfg->policy != WH_ARENA_BEST_FIT && cfg->policy != WH_ARENA_RING) ||
        (cfg->mirror != WH_ARENA_MIRROR_EVERY && cfg->mirror != WH_ARENA_MIRROR_ON_FAILURE))
        return wh__fail(WH_ERR_INVALID_ARGUMENT,
                        "arena: granule %llu (power of two >= 8), max_blocks %u (>= 2), policy %d, mirror %d",
                        (unsigned long long)g, cap, (int)cfg->policy, (int)cfg->mirror);
    uint64_t usable = cfg->bytes / g * g;
    if (usable == 0)
        return wh__fail(WH_ERR_TOO_SMALL, "arena: %zu bytes is less than one granule (%llu)", cfg->bytes,
                        (unsigned long long)g);
    uint64_t gen_off, core_off;
    size_t n = meta_layout(cfg, cap, &gen_off, &core_off);
    char *img = wh__fault() ? NULL : (char *)calloc(1, n);
    if (!img) return wh__fail(WH_ERR_OUT_OF_MEMORY, "arena: %zu bytes of host memory for metadata", n);
    wh__arena_state *s = (wh__arena_state *)img;
    s->base = base;
    s->bytes = usable;
    s->gen_off = gen_off;
    s->core_off = core_off;
    s->policy = (uint32_t)cfg->policy;
    s->mirror_mode = (uint32_t)cfg->mirror;
    s->ring_hint = WH_BLOCK_NONE;
    s->ring_cursor = 0;
    wh_blocks *c = wh_blocks_init(img + core_off, n - core_off, cfg->index, 1, cap, g);
    if (c) s->ring_head = wh_blocks_add_arena(c, 0, usable, 0);
    if (!c || s->ring_head == WH_BLOCK_NONE) {
        free(img);
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: block core rejected the layout (index kind %d)",
                        (int)cfg->index);
    }
    *out = img;
    *bytes = n;
    return WH_OK;
}

static wh_status create_cpu(wh_arena *a, const wh_arena_config *cfg) {
    if (!cfg->region) {
        size_t g = cfg->granule ? cfg->granule : WH_ARENA_DEFAULT_GRANULE;
        a->region = wh__host_alloc(g < 64 ? 64 : g, cfg->bytes);
        if (!a->region) return wh__fail(WH_ERR_OUT_OF_MEMORY, "arena: %zu bytes of host memory", cfg->bytes);
        a->own_region = true;
    }
    void *img = NULL;
    wh_status st = build_image(cfg, (uint64_t)(uintptr_t)a->region, &img, &a->meta_bytes);
    if (st != WH_OK) return st;
    a->state = (wh__arena_state *)img;
    a->mirror = wh__fault() ? NULL : (wh_arena_stats *)calloc(1, sizeof *a->mirror);
    if (!a->mirror) return wh__fail(WH_ERR_OUT_OF_MEMORY, "arena: status mirror");
    a->state->mirror = (uint64_t)(uintptr_t)a->mirror;
    a->mirror->region_bytes = a->state->bytes;
    return WH_OK;
}

#if WH_HAVE_CUDA
static wh_status create_cuda(wh_arena *a, const wh_arena_config *cfg) {
    if (!cfg->region) {
        WH_CUDA_TRY(wh__fault() ? cudaErrorMemoryAllocation : cudaMalloc(&a->region, cfg->bytes));
        a->own_region = true;
    }
    WH_CUDA_TRY(wh__fault() ? cudaErrorMemoryAllocation
                            : cudaHostAlloc((void **)&a->mirror, sizeof *a->mirror, cudaHostAllocMapped));
    memset(a->mirror, 0, sizeof *a->mirror);
    void *d_mirror = NULL;
    WH_CUDA_TRY(cudaHostGetDevicePointer(&d_mirror, a->mirror, 0));
    void *img = NULL;
    wh_status st = build_image(cfg, (uint64_t)(uintptr_t)a->region, &img, &a->meta_bytes);
    if (st != WH_OK) return st;
    ((wh__arena_state *)img)->mirror = (uint64_t)(uintptr_t)d_mirror;
    a->mirror->region_bytes = ((wh__arena_state *)img)->bytes;
    cudaError_t e = wh__fault() ? cudaErrorMemoryAllocation : cudaMalloc((void **)&a->state, a->meta_bytes);
    if (e == cudaSuccess) e = cudaMemcpy(a->state, img, a->meta_bytes, cudaMemcpyHostToDevice);
    free(img);
    if (e != cudaSuccess) return wh__fail(WH_ERR_CUDA, "arena: metadata: %s", cudaGetErrorString(e));
    return WH_OK;
}
#endif

static void release(wh_arena *a) {
    if (a->backend == WH_ARENA_CPU) {
        free(a->state);
        free(a->mirror);
        if (a->own_region) free(a->region);
    } else {
#if WH_HAVE_CUDA
        if (a->state) (void)cudaFree(a->state);
        if (a->mirror) (void)cudaFreeHost(a->mirror);
        if (a->own_region && a->region) (void)cudaFree(a->region);
#endif
    }
    free(a);
}

wh_status wh_arena_create(wh_arena **out, const wh_arena_config *cfg) {
    wh__clear_error();
    if (!out || !cfg) return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: NULL argument");
    *out = NULL;
    if (cfg->bytes == 0) return wh__fail(WH_ERR_TOO_SMALL, "arena: region of 0 bytes");
    if ((uint64_t)cfg->bytes > WH_ARENA_MAX_BYTES)
        return wh__fail(WH_ERR_TOO_LARGE, "arena: region of %zu bytes, more than an arena addresses (%llu)", cfg->bytes,
                        (unsigned long long)WH_ARENA_MAX_BYTES);
    uint64_t g = cfg->granule ? cfg->granule : WH_ARENA_DEFAULT_GRANULE;
    if (cfg->region && ((uintptr_t)cfg->region & (g - 1u)))
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: region %p not aligned to the granule %llu", cfg->region,
                        (unsigned long long)g);
    /* AUTO: host memory only in a build without CUDA (see pool.c) */
    if (cfg->backend == WH_ARENA_AUTO && WH_HAVE_CUDA && !wh_cuda_available())
        return wh__fail(WH_ERR_NO_DEVICE, "arena: no usable GPU for the automatic backend (ask for WH_ARENA_CPU "
                                          "to run commands on the host)");
    wh_arena *a = (wh_arena *)calloc(1, sizeof *a);
    if (!a) return wh__fail(WH_ERR_OUT_OF_MEMORY, "arena: host memory");
    a->region = cfg->region;
    a->backend = cfg->backend;
    if (a->backend == WH_ARENA_AUTO) a->backend = WH_HAVE_CUDA ? WH_ARENA_CUDA : WH_ARENA_CPU;
    wh_status st;
    if (a->backend == WH_ARENA_CPU) {
        st = create_cpu(a, cfg);
    } else {
#if WH_HAVE_CUDA
        st = wh_cuda_available() ? create_cuda(a, cfg) : wh__fail(WH_ERR_NO_DEVICE, "arena: no GPU");
#else
        st = wh__fail(WH_ERR_NO_DEVICE, "arena: built without CUDA");
#endif
    }
    if (st != WH_OK) {
        release(a);
        return st;
    }
    *out = a;
    return WH_OK;
}

/* Live blocks, from the state (a copy of its header on the GPU, once the
 * device is idle); 0 when it cannot be read. */
static uint64_t live_blocks(const wh_arena *a) {
    wh__arena_state s;
    if (a->backend == WH_ARENA_CPU) {
        s = *a->state;
    } else {
#if WH_HAVE_CUDA
        if (cudaMemcpy(&s, a->state, sizeof s, cudaMemcpyDeviceToHost) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
#else
        return 0;
#endif
    }
    return s.allocs - s.frees;
}

wh_status wh_arena_destroy(wh_arena *a) {
    wh__clear_error();
    if (!a) return WH_OK;
#if WH_HAVE_CUDA
    if (a->backend == WH_ARENA_CUDA) WH_CUDA_TRY(cudaDeviceSynchronize());
#endif
    uint64_t live = live_blocks(a);
    release(a);
    if (live)
        return wh__fail(WH_ERR_IN_USE, "arena destroyed with %llu live allocation%s", (unsigned long long)live,
                        live == 1 ? "" : "s");
    return WH_OK;
}

wh_arena_ref wh_arena_device(const wh_arena *a) {
    wh_arena_ref r = {a ? a->state : NULL};
    return r;
}
wh_arena_backend wh_arena_get_backend(const wh_arena *a) { return a->backend; }
size_t wh_arena_meta_bytes(const wh_arena *a) { return a ? a->meta_bytes : 0; }
void *wh_arena_base(const wh_arena *a) { return a->region; }

/* ---- commands ------------------------------------------------------------------ */

#if !WH_HAVE_CUDA
static wh_status no_cuda(void) { return wh__fail(WH_ERR_NO_DEVICE, "arena: built without CUDA"); }
#endif

static wh_status enqueue_alloc(wh_arena *a, const size_t *counts, size_t stride, uint32_t n, wh_handle *slots,
                               wh_stream s) {
    wh__clear_error();
    if (!a || !counts || !slots) return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: NULL argument");
    if (n == 0) return WH_OK;
    if (a->backend == WH_ARENA_CPU) {
        (void)s;
        (void)wh__arena_cmd_alloc(a->state, counts, stride, n, slots); /* outcome: in the status */
        return WH_OK;
    }
#if WH_HAVE_CUDA
    return wh__arena_launch_alloc(a->state, counts, stride, n, slots, s);
#else
    return no_cuda();
#endif
}

wh_status wh_arena_alloc_async(wh_arena *a, const size_t *d_bytes, wh_handle *d_slot, wh_stream s) {
    return enqueue_alloc(a, d_bytes, 1, 1, d_slot, s);
}
wh_status wh_arena_alloc_strided_async(wh_arena *a, const size_t *d_count, size_t stride, wh_handle *d_slot,
                                       wh_stream s) {
    return enqueue_alloc(a, d_count, stride, 1, d_slot, s);
}
wh_status wh_arena_alloc_batch_async(wh_arena *a, const size_t *d_counts, size_t stride, uint32_t n, wh_handle *d_slots,
                                     wh_stream s) {
    return enqueue_alloc(a, d_counts, stride, n, d_slots, s);
}

wh_status wh_arena_free_batch_async(wh_arena *a, wh_handle *d_slots, uint32_t n, wh_stream s) {
    wh__clear_error();
    if (!a || !d_slots) return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: NULL argument");
    if (n == 0) return WH_OK;
    if (a->backend == WH_ARENA_CPU) {
        (void)s;
        (void)wh__arena_cmd_free(a->state, d_slots, n);
        return WH_OK;
    }
#if WH_HAVE_CUDA
    return wh__arena_launch_free(a->state, d_slots, n, s);
#else
    return no_cuda();
#endif
}
wh_status wh_arena_free_async(wh_arena *a, wh_handle *d_slot, wh_stream s) {
    return wh_arena_free_batch_async(a, d_slot, 1, s);
}

wh_status wh_arena_replace_async(wh_arena *a, const size_t *d_count, size_t stride, wh_handle *d_slot, wh_stream s) {
    wh__clear_error();
    if (!a || !d_count || !d_slot) return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: NULL argument");
    if (a->backend == WH_ARENA_CPU) {
        (void)s;
        (void)wh__arena_cmd_replace(a->state, d_count, stride, d_slot);
        return WH_OK;
    }
#if WH_HAVE_CUDA
    return wh__arena_launch_replace(a->state, d_count, stride, d_slot, s);
#else
    return no_cuda();
#endif
}

wh_status wh_arena_replace_span_async(wh_arena *a, const size_t *d_count, size_t stride, wh_arena_span *d_slot,
                                      wh_stream s) {
    wh__clear_error();
    if (!a || !d_count || !d_slot) return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: NULL argument");
    if (a->backend == WH_ARENA_CPU) {
        (void)s;
        (void)wh__arena_cmd_replace_span(a->state, *d_count, stride, d_slot);
        return WH_OK;
    }
#if WH_HAVE_CUDA
    return wh__arena_launch_replace_span(a->state, d_count, stride, d_slot, s);
#else
    return no_cuda();
#endif
}

/* Clear (clear true) or flush: a command that writes the mirror now. */
static wh_status enqueue_mirror(wh_arena *a, bool clear, wh_stream s) {
    wh__clear_error();
    if (!a) return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: NULL argument");
    if (a->backend == WH_ARENA_CPU) {
        (void)s;
        if (!wh__arena_cmd_mirror(a->state, clear)) return wh__fail(WH_ERR_RETRY_LIMIT, "arena: lock");
        return WH_OK;
    }
#if WH_HAVE_CUDA
    return wh__arena_launch_mirror(a->state, clear, s);
#else
    return no_cuda();
#endif
}

wh_status wh_arena_clear_status_async(wh_arena *a, wh_stream s) { return enqueue_mirror(a, true, s); }
wh_status wh_arena_flush_async(wh_arena *a, wh_stream s) { return enqueue_mirror(a, false, s); }

/* ---- status, stats, walk ---------------------------------------------------------- */

/* A consistent snapshot of the mirror: retry while a command is writing it
 * (bounded: a writer holds it for a few stores). */
wh_status wh_arena_stats_get(const wh_arena *a, wh_arena_stats *out) {
    wh__clear_error();
    if (!a || !out) return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: NULL argument");
    const volatile wh_arena_stats *m = (const volatile wh_arena_stats *)a->mirror;
    for (wh_wait w = wh_wait_begin(1u << 20); wh_wait_more(&w); wh_wait_backoff(&w, ~0u)) {
        uint32_t before = __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE);
        if (before & 1u) continue;
        out->seq = before;
        out->first_status = m->first_status;
        out->last_status = m->last_status;
        out->pad = 0;
        out->region_bytes = m->region_bytes;
        out->used_bytes = m->used_bytes;
        out->peak_used = m->peak_used;
        out->live_blocks = m->live_blocks;
        out->allocs = m->allocs;
        out->frees = m->frees;
        out->failures = m->failures;
        out->commands = m->commands;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&m->seq, __ATOMIC_RELAXED) == before) { return WH_OK; }
    }
    return wh__fail(WH_ERR_RETRY_LIMIT, "arena: status mirror kept changing");
}

wh_status wh_arena_status(const wh_arena *a) {
    if (!a) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_arena_status: arena is NULL");
    wh_arena_stats st;
    wh_status e = wh_arena_stats_get(a, &st);
    return e != WH_OK ? e : (wh_status)st.first_status;
}

static wh_status check_image(const wh__arena_state *s, wh_blocks_report *r) {
    wh_blocks *c = wh__arena_core((wh__arena_state *)s);
    if (!wh_blocks_check(c, r))
        return wh__fail(WH_ERR_CORRUPT, "arena: block core check failed at line %u, block %u", r->error, r->bad_block);
    if (s->lock != 0) return wh__fail(WH_ERR_CORRUPT, "arena: lock held with no command running");
    if (s->policy == WH_ARENA_RING && s->ring_cursor > s->bytes)
        return wh__fail(WH_ERR_CORRUPT, "arena: ring cursor %llu past the region (%llu)",
                        (unsigned long long)s->ring_cursor, (unsigned long long)s->bytes);
    if (r->arenas != 1 || r->arena_bytes != s->bytes)
        return wh__fail(WH_ERR_CORRUPT, "arena: %u core arenas, %llu bytes, region %llu", r->arenas,
                        (unsigned long long)r->arena_bytes, (unsigned long long)s->bytes);
    if (s->allocs - s->frees != r->used || s->peak_used < r->used_bytes)
        return wh__fail(WH_ERR_CORRUPT, "arena: %llu allocs - %llu frees != %u live blocks (peak %llu, used %llu)",
                        (unsigned long long)s->allocs, (unsigned long long)s->frees, r->used,
                        (unsigned long long)s->peak_used, (unsigned long long)r->used_bytes);
    return WH_OK;
}

wh_status wh_arena_check(wh_arena *a, wh_blocks_report *report) {
    wh__clear_error();
    wh_blocks_report local;
    wh_blocks_report *r = report ? report : &local;
    if (!a) return wh__fail(WH_ERR_INVALID_ARGUMENT, "arena: NULL argument");
    if (a->backend == WH_ARENA_CPU) return check_image(a->state, r);
#if WH_HAVE_CUDA
    WH_CUDA_TRY(cudaDeviceSynchronize());
    void *img = malloc(a->meta_bytes);
    if (!img) return wh__fail(WH_ERR_OUT_OF_MEMORY, "arena: check: host copy");
    cudaError_t e = cudaMemcpy(img, a->state, a->meta_bytes, cudaMemcpyDeviceToHost);
    wh_status st = e == cudaSuccess ? check_image((wh__arena_state *)img, r)
                                    : wh__fail(WH_ERR_CUDA, "arena: check: %s", cudaGetErrorString(e));
    free(img);
    return st;
#else
    return no_cuda();
#endif
}
