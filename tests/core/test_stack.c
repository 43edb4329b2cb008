/* SPDX-License-Identifier: MIT */
/* The parts stacked on one reservation, CPU backend: a host pool hands out
 * three guarded blocks; a device heap (every kind in turn, then DEFAULT), an
 * object heap and a stream arena are made in them (their `region`); pthreads
 * allocate and free in all three at once; every part's walk is sound, no
 * guard byte changed, and teardown leaves the pool consistent.  Bad regions
 * (misaligned, too small, 0 bytes, wrapping, too large, device memory asked
 * of host memory) are refused with their cause named and leave the blocks as
 * they were; a NULL region is the heap's own memory, as before. */
#include "stack.h"

#include <string.h>

#define HEAP_BYTES    (8u << 20)
#define SOA_BYTES     (2u << 20)
#define ARENA_BYTES   (1u << 20)
#define HEAP_WORKERS  4u
#define SOA_WORKERS   2u
#define ROUNDS        500u
#define ARENA_ROUNDS  256u
#define ARENA_MAX_U32 4000u

static void host_read(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
static void host_fill(void *dst, int byte, size_t n) { memset(dst, byte, n); }
static const stack_mem host_mem = {host_read, host_fill};

typedef struct work {
    wh_heap *heap;
    wh_soa *soa;
    wh_arena *arena;
    const stack_block *arena_block;
    uint64_t heap_c[STACK_COUNTERS], soa_c[STACK_COUNTERS], arena_bad;
} work;

/* Whether slot holds count words, inside the arena's block, word i = tag ^ i. */
static bool arena_slot_ok(const wh_handle *slot, const stack_block *b, size_t count, uint32_t tag) {
    const uint32_t *p = (const uint32_t *)wh_handle_ptr(slot);
    if (!p || (const uint8_t *)p < b->region || (const uint8_t *)(p + count) > b->region + b->bytes) return false;
    for (size_t i = 0; i < count; ++i)
        if (p[i] != (tag ^ (uint32_t)i)) return false;
    return true;
}

/* Commands in program order: two slots turn over, each freed and allocated
 * again with a new size and filled, the other checked meanwhile. */
static void arena_work(work *w) {
    wh_handle slot[2] = {wh_handle_null(), wh_handle_null()};
    size_t count[2] = {0, 0};
    for (uint32_t r = 0; r < ARENA_ROUNDS; ++r) {
        uint32_t k = r % 2u, tag = r << 16;
        if (count[1u - k]) w->arena_bad += !arena_slot_ok(&slot[1u - k], w->arena_block, count[1u - k], tag - 65536u);
        if (count[k] && wh_arena_free_async(w->arena, &slot[k], NULL) != WH_OK) w->arena_bad++;
        count[k] = 1u + (size_t)(wh_hash64(r) % ARENA_MAX_U32);
        if (wh_arena_alloc_strided_async(w->arena, &count[k], sizeof(uint32_t), &slot[k], NULL) != WH_OK)
            w->arena_bad++;
        uint32_t *p = (uint32_t *)wh_handle_ptr(&slot[k]);
        for (size_t i = 0; p && i < count[k]; ++i) p[i] = tag ^ (uint32_t)i;
        w->arena_bad += !arena_slot_ok(&slot[k], w->arena_block, count[k], tag);
    }
    for (uint32_t k = 0; k < 2u; ++k)
        if (wh_arena_free_async(w->arena, &slot[k], NULL) != WH_OK) w->arena_bad++;
}

static void worker(unsigned i, void *arg) {
    work *w = (work *)arg;
    if (i < HEAP_WORKERS)
        stack_heap_work(w->heap, i, ROUNDS, w->heap_c);
    else if (i < HEAP_WORKERS + SOA_WORKERS)
        stack_soa_work(w->soa, i, ROUNDS, w->soa_c);
    else
        arena_work(w);
}

/* Every heap kind in a region aligned to WH_HEAP_REGION_ALIGN only: made,
 * used by one thread, walked, destroyed, the block's guards intact. */
static void every_kind(const stack_block *hb) {
    stack_block b = {hb->block, hb->region + WH_HEAP_REGION_ALIGN, hb->bytes - WH_HEAP_REGION_ALIGN};
    for (uint32_t k = 0; k < WH_HEAP_KIND_COUNT; ++k) {
        wh_heap h;
        wh_heap_config cfg = {.bytes = b.bytes, .kind = (wh_heap_kind)k, .flags = WH_HEAP_HOST, .region = b.region};
        wh_status st = wh_heap_create(&h, &cfg);
        CHECK(st == WH_OK);
        if (st != WH_OK) {
            fprintf(stderr, "%s: %s\n", wh_heap_kind_name((wh_heap_kind)k), wh_last_error());
            continue;
        }
        CHECK(h.base == b.region && (uint8_t *)h.ctl + h.meta_bytes <= b.region + b.bytes);
        void *p[64];
        for (int i = 0; i < 64; ++i) {
            p[i] = wh_malloc(&h, 100);
            CHECK(p[i] && (uint8_t *)p[i] >= h.base && (uint8_t *)p[i] + 100 <= h.base + h.bytes);
            if (p[i]) memset(p[i], i, 100);
        }
        if (k != WH_HEAP_BUMP && k != WH_HEAP_WRAP)
            for (int i = 0; i < 64; ++i) wh_free(&h, p[i]);
        wh_heap_usage u;
        CHECK(wh_heap_stats(&h, &u) == WH_OK);
        CHECK_EQ_U64(u.inconsistencies, 0);
        CHECK(wh_heap_destroy(&h) == WH_OK);
        printf("  %s heap in the region: %llu-byte arena\n", wh_heap_kind_name((wh_heap_kind)k),
               (unsigned long long)u.heap_bytes);
    }
    CHECK_EQ_U64(stack_guard_damage(&host_mem, hb), 0);
}

/* Cases only a host run makes: a heap larger than any heap addresses, device
 * memory asked of host memory, and NULL regions (the parts' own memory). */
static void host_cases(const stack_block *hb, const stack_block *sb) {
    wh_heap h;
    wh_heap_config hc = {.bytes = WH_HEAP_MAX_BYTES + WH_SLAB_PAGE,
                         .kind = WH_HEAP_DEFAULT,
                         .flags = WH_HEAP_HOST,
                         .region = hb->region};
    stack_refused(wh_heap_create(&h, &hc), WH_ERR_TOO_LARGE, "at most", "heap, too large");
    wh_soa s;
    wh_soa_type_desc types[] = {WH_SOA_TYPE(StackNode)};
    wh_soa_config sc = {sb->bytes, types, 1, true, 2, sb->region, false};
    bool gpu = wh_cuda_available();
    stack_refused(wh_soa_create(&s, &sc), gpu ? WH_ERR_INVALID_ARGUMENT : WH_ERR_NO_DEVICE,
                  gpu ? "is host memory" : "device region", "device object heap on host memory");
    if (gpu) {
        hc.bytes = hb->bytes;
        hc.flags = 0;
        stack_refused(wh_heap_create(&h, &hc), WH_ERR_INVALID_ARGUMENT, "is host memory", "device heap on host memory");
    }
    CHECK_EQ_U64(stack_changed(&host_mem, hb->block, hb->bytes + 2u * STACK_GUARD), 0);
    CHECK_EQ_U64(stack_changed(&host_mem, sb->block, sb->bytes + 2u * STACK_GUARD), 0);

    hc = (wh_heap_config){.bytes = 1u << 20, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST};
    CHECK(wh_heap_create(&h, &hc) == WH_OK);
    CHECK(h.bytes == hc.bytes && (h.base + h.bytes <= hb->block || h.base >= hb->region + hb->bytes + STACK_GUARD));
    CHECK(wh_heap_destroy(&h) == WH_OK);
    sc = (wh_soa_config){1u << 20, types, 1, false, 2, NULL, false};
    CHECK(wh_soa_create(&s, &sc) == WH_OK);
    CHECK(wh_soa_destroy(&s) == WH_OK);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "The parts stacked on one host pool reservation (CPU backend).");
    wh_pool *pool = NULL;
    wh_pool_config pc;
    memset(&pc, 0, sizeof pc);
    pc.backend = WH_POOL_CPU;
    pc.max_bytes = 32u << 20;
    CHECK(wh_pool_create(&pool, &pc) == WH_OK);
    if (!pool) return wh_test_finish("test_stack");
    stack_block hb = stack_carve(pool, &host_mem, HEAP_BYTES, WH_SLAB_PAGE);
    stack_block sb = stack_carve(pool, &host_mem, SOA_BYTES, WH_SOA_REGION_ALIGN);
    stack_block ab = stack_carve(pool, &host_mem, ARENA_BYTES, 256);
    wh_pool_stats ps;
    CHECK(wh_pool_get_stats(pool, &ps) == WH_OK);
    CHECK(ps.arenas == 1 && ps.reserved <= pc.max_bytes);
    printf("pool: %llu bytes reserved in %llu arena for the three blocks\n", (unsigned long long)ps.reserved,
           (unsigned long long)ps.arenas);

    printf("bad regions:\n");
    host_cases(&hb, &sb);
    stack_bad_regions(&host_mem, &hb, WH_HEAP_HOST, &sb, false, &ab, WH_ARENA_CPU);
    printf("every heap kind:\n");
    every_kind(&hb);

    printf("the stack:\n");
    wh_heap heap;
    wh_soa soa;
    wh_arena *arena = NULL;
    stack_make(&heap, &hb, WH_HEAP_HOST, &soa, &sb, false, &arena, &ab, WH_ARENA_CPU);
    work w = {&heap, &soa, arena, &ab, {0}, {0}, 0};
    wh_run_threads(HEAP_WORKERS + SOA_WORKERS + 1u, worker, &w);
    printf("  heap: %llu allocations, %llu failed; objects: %llu, %llu failed; arena: %u rounds\n",
           (unsigned long long)w.heap_c[STACK_ALLOCS], (unsigned long long)w.heap_c[STACK_FAILS],
           (unsigned long long)w.soa_c[STACK_ALLOCS], (unsigned long long)w.soa_c[STACK_FAILS], ARENA_ROUNDS);
    CHECK_EQ_U64(w.heap_c[STACK_ALLOCS], HEAP_WORKERS * ROUNDS * STACK_HELD);
    CHECK_EQ_U64(w.heap_c[STACK_BAD], 0);
    CHECK_EQ_U64(w.soa_c[STACK_ALLOCS], SOA_WORKERS * ROUNDS * STACK_HELD);
    CHECK_EQ_U64(w.soa_c[STACK_BAD], 0);
    CHECK_EQ_U64(w.arena_bad, 0);
    stack_soa_bulk(&soa);
    stack_walks(&heap, &soa, arena, pool, w.heap_c[STACK_FAILS]);
    stack_block *blocks[3] = {&hb, &sb, &ab};
    stack_unmake(&host_mem, pool, &heap, &soa, arena, blocks);
    CHECK(wh_pool_destroy(pool) == WH_OK);
    return wh_test_finish("test_stack");
}
