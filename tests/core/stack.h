/* SPDX-License-Identifier: MIT */
/* The parts stack, shared by test_stack.c (CPU backend) and test_stack_gpu.cu:
 * guarded blocks carved from one host pool, the work each worker (a pthread or
 * a GPU thread) does in the device heap and the object heap, the walks of
 * every part, the bad regions each part must refuse without writing a byte,
 * and the teardown.  The tests read and fill memory through a stack_mem (memcpy
 * and memset on the host, their CUDA forms on the GPU). */
#ifndef WH_TEST_STACK_H
#define WH_TEST_STACK_H

#include "warpheap/arena.h"
#include "warpheap/heap.h"
#include "warpheap/pool.h"
#include "warpheap/soa.h"
#include "wh_test.h"

#define STACK_FILL  0xA5        /* every byte of a block before its part is made */
#define STACK_GUARD 4096u       /* bytes before and after each region            */
#define STACK_HELD  4u          /* blocks or objects a worker holds at a time    */
#define STACK_RUN   (40u << 10) /* a page run of DEFAULT (above 32 KiB)       */

/* Worker counters: [allocations, failures, bad], added atomically. */
enum { STACK_ALLOCS, STACK_FAILS, STACK_BAD, STACK_COUNTERS };

/* ---- the work, the same on a pthread and a GPU thread ----------------------- */

/* Request r of worker `who`: mostly a few slab classes, one in 32 a page run. */
WH_INLINE WH_HOST_DEVICE uint32_t stack_size(uint32_t who, uint32_t r) {
    uint64_t x = wh_hash64((uint64_t)who << 32 | r);
    return x % 32u == 0 ? STACK_RUN : 8u << ((x >> 8) % 9u); /* 8 B .. 2 KiB */
}

/* `rounds` times: take STACK_HELD blocks, tag their first and last words,
 * check that each lies in the arena, 16-byte aligned, and still holds its tags
 * when it is freed (another worker's block overlapping it would not). */
WH_INLINE WH_HOST_DEVICE void stack_heap_work(const wh_heap *h, uint32_t who, uint32_t rounds, uint64_t *c) {
    uint64_t got = 0, fails = 0, bad = 0;
    for (uint32_t r = 0; r < rounds; ++r) {
        uint32_t *held[STACK_HELD];
        for (uint32_t k = 0; k < STACK_HELD; ++k) {
            uint32_t n = stack_size(who, r * STACK_HELD + k);
            uint32_t *p = (uint32_t *)wh_malloc(h, n);
            held[k] = p;
            if (!p) {
                fails++;
                continue;
            }
            got++;
            bad += (uint8_t *)p < h->base || (uint8_t *)p + n > h->base + h->bytes || (uintptr_t)p % WH_HEAP_ALIGN;
            p[0] = p[n / 4u - 1u] = who;
        }
        for (uint32_t k = 0; k < STACK_HELD; ++k) {
            uint32_t n = stack_size(who, r * STACK_HELD + k), *p = held[k];
            if (p) bad += p[0] != who || p[n / 4u - 1u] != who;
            wh_free(h, p);
        }
    }
    (void)wh_atomic_fetch_add(&c[STACK_ALLOCS], got, WH_RELAXED);
    (void)wh_atomic_fetch_add(&c[STACK_FAILS], fails, WH_RELAXED);
    (void)wh_atomic_fetch_add(&c[STACK_BAD], bad, WH_RELAXED);
}

/* clang-format off */
#define STACK_NODE_FIELDS(F) F(uint64_t, key) F(uint32_t, life)
/* clang-format on */
WH_SOA_CLASS(StackNode, 0, STACK_NODE_FIELDS)

/* The same in the object heap: STACK_HELD objects a round, keyed, each block
 * inside the heap's blocks, every key intact and every destroy accepted. */
WH_INLINE WH_HOST_DEVICE void stack_soa_work(const wh_soa *s, uint32_t who, uint32_t rounds, uint64_t *c) {
    uint64_t got = 0, fails = 0, bad = 0;
    const uint8_t *lo = s->blocks, *hi = s->blocks + (uint64_t)s->nblocks * s->block_bytes;
    for (uint32_t r = 0; r < rounds; ++r) {
        StackNode held[STACK_HELD];
        for (uint32_t k = 0; k < STACK_HELD; ++k) {
            held[k] = WH_SOA_NEW(s, StackNode);
            if (StackNode_is_null(held[k])) {
                fails++;
                continue;
            }
            got++;
            bad += wh_soa_ptr_block(held[k].p) < lo || wh_soa_ptr_block(held[k].p) >= hi;
            WH_GET(StackNode, held[k], key) = (uint64_t)who << 32 | (r * STACK_HELD + k);
        }
        for (uint32_t k = 0; k < STACK_HELD; ++k) {
            if (StackNode_is_null(held[k])) continue;
            bad += WH_GET(StackNode, held[k], key) != ((uint64_t)who << 32 | (r * STACK_HELD + k));
            bad += WH_SOA_DESTROY(s, held[k]) != WH_OK;
        }
    }
    (void)wh_atomic_fetch_add(&c[STACK_ALLOCS], got, WH_RELAXED);
    (void)wh_atomic_fetch_add(&c[STACK_FAILS], fails, WH_RELAXED);
    (void)wh_atomic_fetch_add(&c[STACK_BAD], bad, WH_RELAXED);
}

/* parallel_new makes objects of life i % 2, and each parallel_do step ages
 * them: life 0 destroys itself.  Two steps leave none. */
WH_INLINE WH_HOST_DEVICE void stack_born(const wh_soa *s, StackNode o, uint64_t i, const uint32_t *unused) {
    (void)s, (void)unused;
    WH_GET(StackNode, o, key) = i;
    WH_GET(StackNode, o, life) = (uint32_t)(i % 2u);
}
WH_INLINE WH_HOST_DEVICE void stack_age(const wh_soa *s, StackNode o, const uint32_t *unused) {
    (void)unused;
    if (WH_GET(StackNode, o, life)-- == 0) (void)WH_SOA_DESTROY(s, o);
}
WH_SOA_PARALLEL_NEW(StackNode, stack_born, uint32_t)
WH_SOA_PARALLEL_DO(StackNode, stack_age, uint32_t)

/* ---- host side ------------------------------------------------------------- */

/* How a test touches its memory: dst or src on the host, the other in the
 * pool's memory. */
typedef struct stack_mem {
    void (*read)(void *dst, const void *src, size_t n);
    void (*fill)(void *dst, int byte, size_t n);
} stack_mem;

/* A region of `bytes` from the pool, `align` aligned, STACK_GUARD bytes on
 * either side; the whole block filled with STACK_FILL. */
typedef struct stack_block {
    uint8_t *block, *region;
    size_t bytes;
} stack_block;

static stack_block stack_carve(wh_pool *pool, const stack_mem *m, size_t bytes, size_t align) {
    stack_block b = {NULL, NULL, bytes};
    b.block = (uint8_t *)wh_pool_alloc_aligned(pool, bytes + 2u * STACK_GUARD, align, NULL);
    CHECK(b.block != NULL);
    if (!b.block) {
        fprintf(stderr, "pool: %s\n", wh_last_error());
        exit(1);
    }
    b.region = b.block + STACK_GUARD;
    m->fill(b.block, STACK_FILL, bytes + 2u * STACK_GUARD);
    return b;
}

/* Bytes of [p, p + n) that are no longer STACK_FILL. */
static uint64_t stack_changed(const stack_mem *m, const uint8_t *p, size_t n) {
    uint8_t *copy = (uint8_t *)malloc(n);
    uint64_t changed = 0;
    if (!copy) exit(1);
    m->read(copy, p, n);
    for (size_t i = 0; i < n; ++i) changed += copy[i] != STACK_FILL;
    free(copy);
    return changed;
}

/* Guard bytes of b its part wrote. */
static uint64_t stack_guard_damage(const stack_mem *m, const stack_block *b) {
    return stack_changed(m, b->block, STACK_GUARD) + stack_changed(m, b->region + b->bytes, STACK_GUARD);
}

/* A refused create: the status, a message naming the cause, printed. */
static void stack_refused(wh_status got, wh_status want, const char *cause, const char *what) {
    CHECK(got == want);
    CHECK(strstr(wh_last_error(), cause) != NULL);
    printf("  %s: %s\n", what, wh_last_error());
}

/* The bad regions every backend can tell: misaligned, too small, 0 bytes,
 * wrapping the address space.  Each is
 * refused with its cause and leaves a zeroed handle; no byte of a block
 * changes (its guards included). */
static void stack_bad_regions(const stack_mem *m, const stack_block *hb, uint32_t heap_flags, const stack_block *sb,
                              bool soa_device, const stack_block *ab, wh_arena_backend backend) {
    wh_heap h;
    wh_heap_config hc;
    memset(&hc, 0, sizeof hc);
    hc.bytes = hb->bytes;
    hc.kind = WH_HEAP_DEFAULT;
    hc.flags = heap_flags;
    hc.region = hb->region + 16;
    stack_refused(wh_heap_create(&h, &hc), WH_ERR_INVALID_ARGUMENT, "not aligned to 256", "heap, misaligned");
    CHECK(h.meta_alloc == NULL && wh_heap_destroy(&h) == WH_OK);
    hc.region = hb->region;
    hc.bytes = WH_SLAB_PAGE; /* one page and no room for its metadata */
    stack_refused(wh_heap_create(&h, &hc), WH_ERR_TOO_SMALL, "smallest default heap", "heap, too small");
    hc.kind = WH_HEAP_CIRCULAR;
    hc.bytes = 4096;
    stack_refused(wh_heap_create(&h, &hc), WH_ERR_TOO_SMALL, "smallest circular heap", "circular heap, too small");
    hc.kind = WH_HEAP_DEFAULT;
    hc.bytes = 0;
    stack_refused(wh_heap_create(&h, &hc), WH_ERR_TOO_SMALL, "0 bytes", "heap, 0 bytes");
    hc.region = (void *)(~(uintptr_t)0 & ~(uintptr_t)(WH_HEAP_REGION_ALIGN - 1u));
    hc.bytes = 1u << 20;
    stack_refused(wh_heap_create(&h, &hc), WH_ERR_INVALID_ARGUMENT, "wraps", "heap, wrapping");

    wh_soa s;
    wh_soa_type_desc types[] = {WH_SOA_TYPE(StackNode)};
    wh_soa_config sc = {sb->bytes, types, 1, soa_device, 2, sb->region + 8, false};
    stack_refused(wh_soa_create(&s, &sc), WH_ERR_INVALID_ARGUMENT, "not aligned to 64", "object heap, misaligned");
    CHECK(s.mem == NULL);
    sc.region = sb->region;
    sc.bytes = 512;
    stack_refused(wh_soa_create(&s, &sc), WH_ERR_TOO_SMALL, "cannot hold one block", "object heap, too small");
    sc.bytes = 0;
    stack_refused(wh_soa_create(&s, &sc), WH_ERR_TOO_SMALL, "0 bytes", "object heap, 0 bytes");

    wh_arena *a = NULL;
    wh_arena_config ac = {ab->bytes,         ab->region + 16,      0, 0, WH_BLOCKS_TLSF, backend,
                          WH_ARENA_BEST_FIT, WH_ARENA_MIRROR_EVERY};
    stack_refused(wh_arena_create(&a, &ac), WH_ERR_INVALID_ARGUMENT, "not aligned", "arena, misaligned");
    CHECK(a == NULL);

    const stack_block *all[3] = {hb, sb, ab};
    for (int i = 0; i < 3; ++i) CHECK_EQ_U64(stack_changed(m, all[i]->block, all[i]->bytes + 2u * STACK_GUARD), 0);
}

/* Every part made in its region: the heap's arena at the region's start and
 * its metadata behind it, the object heap and the arena in theirs. */
static void stack_make(wh_heap *h, const stack_block *hb, uint32_t heap_flags, wh_soa *s, const stack_block *sb,
                       bool soa_device, wh_arena **a, const stack_block *ab, wh_arena_backend backend) {
    wh_heap_config hc = {
        .bytes = hb->bytes, .kind = WH_HEAP_DEFAULT, .flags = heap_flags | WH_HEAP_TRACK, .region = hb->region};
    wh_status st = wh_heap_create(h, &hc);
    CHECK(st == WH_OK);
    CHECK(strcmp(wh_last_error(), "") == 0);
    static wh_soa_type_desc types[] = {WH_SOA_TYPE(StackNode)};
    wh_soa_config sc = {sb->bytes, types, 1, soa_device, 2, sb->region, false};
    if (st == WH_OK) st = wh_soa_create(s, &sc);
    CHECK(st == WH_OK);
    wh_arena_config ac = {ab->bytes,         ab->region,           0, 0, WH_BLOCKS_TLSF, backend,
                          WH_ARENA_BEST_FIT, WH_ARENA_MIRROR_EVERY};
    if (st == WH_OK) st = wh_arena_create(a, &ac);
    CHECK(st == WH_OK);
    if (st != WH_OK) {
        fprintf(stderr, "stack: %s\n", wh_last_error());
        exit(1);
    }
    CHECK(h->base == hb->region && h->bytes <= hb->bytes);
    CHECK((uint8_t *)h->ctl >= h->base + h->bytes && (uint8_t *)h->ctl + h->meta_bytes <= hb->region + hb->bytes);
    CHECK(s->mem == sb->region && s->mem_bytes <= sb->bytes);
    CHECK(wh_arena_base(*a) == ab->region);
    printf("  heap: %llu-byte arena and %zu bytes of metadata in a %zu-byte region\n", (unsigned long long)h->bytes,
           h->meta_bytes, hb->bytes);
}

/* Every part's walk, quiet: sound, and nothing live. */
static void stack_walks(const wh_heap *h, const wh_soa *s, wh_arena *a, wh_pool *pool, uint64_t heap_fails) {
    wh_heap_usage u;
    CHECK(wh_heap_stats(h, &u) == WH_OK);
    CHECK_EQ_U64(u.inconsistencies, 0);
    CHECK_EQ_U64(u.allocations, 0);
    CHECK_EQ_U64(u.failed_allocs, heap_fails);
    CHECK_EQ_U64(u.double_frees + u.foreign_frees, 0);
    CHECK_EQ_U64(u.heap_bytes, h->bytes);
    uint64_t violations = 1, objects = 1, slots = 1;
    CHECK(wh_soa_check(s, &violations) == WH_OK);
    CHECK_EQ_U64(violations, 0);
    CHECK(wh_soa_usage(s, &objects, &slots) == WH_OK);
    CHECK_EQ_U64(objects, 0);
    wh_blocks_report r;
    CHECK(wh_arena_check(a, &r) == WH_OK);
    CHECK_EQ_U64(r.used, 0);
    CHECK(wh_arena_status(a) == WH_OK);
    CHECK(wh_pool_check(pool) == WH_OK);
}

/* The object heap's bulk path in its region: parallel_new, two parallel_do
 * steps that destroy every object. */
static void stack_soa_bulk(const wh_soa *s) {
    uint64_t objects = 0, slots = 0;
    CHECK(StackNode_parallel_new_stack_born(s, 1000, 0) == WH_OK);
    CHECK(wh_soa_usage(s, &objects, &slots) == WH_OK);
    CHECK_EQ_U64(objects, 1000);
    CHECK(StackNode_parallel_do_stack_age(s, 0) == WH_OK);
    CHECK(wh_soa_usage(s, &objects, &slots) == WH_OK);
    CHECK_EQ_U64(objects, 500);
    CHECK(StackNode_parallel_do_stack_age(s, 0) == WH_OK);
}

/* Down the stack: the parts (none touches its region's guards, and none
 * frees its region), then the pool's blocks; the pool stays consistent. */
static void stack_unmake(const stack_mem *m, wh_pool *pool, wh_heap *h, wh_soa *s, wh_arena *a,
                         stack_block *blocks[3]) {
    CHECK(wh_arena_destroy(a) == WH_OK);
    CHECK(wh_soa_destroy(s) == WH_OK);
    CHECK(wh_heap_destroy(h) == WH_OK);
    for (int i = 0; i < 3; ++i) {
        CHECK_EQ_U64(stack_guard_damage(m, blocks[i]), 0);
        CHECK(wh_pool_usable_size(pool, blocks[i]->block) >= blocks[i]->bytes + 2u * STACK_GUARD);
    }
    CHECK(wh_pool_check(pool) == WH_OK);
    for (int i = 0; i < 3; ++i) CHECK(wh_pool_free(pool, blocks[i]->block, NULL) == WH_OK);
    wh_pool_stats st;
    CHECK(wh_pool_get_stats(pool, &st) == WH_OK);
    CHECK_EQ_U64(st.in_use, 0);
    CHECK(wh_pool_check(pool) == WH_OK);
}

#endif
