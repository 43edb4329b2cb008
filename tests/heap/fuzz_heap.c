/* SPDX-License-Identifier: MIT */
/* libFuzzer target: random allocation sequences on a small CPU-backend device
 * heap of every kind that frees, against an oracle of the live blocks.
 *
 * Input: byte 0 picks the kind and heap size, then 4 bytes an operation:
 * allocate (sizes from 1 B to 256 KiB, log-spread, so every kind meets its
 * exhaustion), free, an immediate double free, foreign and misaligned
 * pointers, size 0 and sizes beyond the heap, reset.  After every operation
 * each new block is 16-byte aligned, inside the arena and overlaps no live
 * block, and a freed block still holds the bytes written at allocation;
 * after every fourth and at the end, the heap walk (O(heap), the cost of a
 * run) finds no broken invariant, the live count the oracle's, and the
 * failed, double and foreign counters equal the oracle's.
 *
 * Built two ways: with clang -fsanitize=fuzzer (scripts/fuzz.sh heap), and
 * as a ctest of fixed random inputs (tests/support/fuzz_main.c). */
#include "warpheap/heap.h"
#include "fuzz_oracle.h"

#define MAXLIVE 256u

static const wh_heap_kind kinds[] = {WH_HEAP_DEFAULT,
                                     WH_HEAP_SLAB,
                                     WH_HEAP_CIRCULAR,
                                     WH_HEAP_CIRCULAR_FUSED,
                                     WH_HEAP_CIRCULAR_MULTI,
                                     WH_HEAP_CIRCULAR_FUSED_MULTI,
                                     WH_HEAP_BUMP};

typedef struct world {
    wh_heap h;
    wh_fz_block live[MAXLIVE];
    uint32_t nlive, fills;
    uint64_t failed, double_frees, foreign_frees;
} world;

static void check_world(world *w) {
    wh_heap_usage s;
    if (wh_heap_stats(&w->h, &s) != WH_OK) WH_FZ_DIE("heap walk: %s", wh_last_error());
    if (s.inconsistencies)
        WH_FZ_DIE("%s: heap walk found %llu broken invariants", wh_heap_kind_name(w->h.kind),
                  (unsigned long long)s.inconsistencies);
    if (s.used_bytes + s.free_bytes + s.overhead_bytes != s.heap_bytes) WH_FZ_DIE("bytes not accounted for");
    if (w->h.kind != WH_HEAP_BUMP && s.allocations != w->nlive)
        WH_FZ_DIE("%s: walk sees %llu allocations, oracle %u", wh_heap_kind_name(w->h.kind),
                  (unsigned long long)s.allocations, w->nlive);
    if (s.failed_allocs != w->failed || s.double_frees != w->double_frees || s.foreign_frees != w->foreign_frees)
        WH_FZ_DIE("%s: counters failed/double/foreign %llu/%llu/%llu, oracle %llu/%llu/%llu",
                  wh_heap_kind_name(w->h.kind), (unsigned long long)s.failed_allocs, (unsigned long long)s.double_frees,
                  (unsigned long long)s.foreign_frees, (unsigned long long)w->failed,
                  (unsigned long long)w->double_frees, (unsigned long long)w->foreign_frees);
}

static void do_alloc(world *w, size_t n) {
    uint8_t *p = (uint8_t *)wh_malloc(&w->h, n);
    if (!p) {
        if (n) w->failed++; /* size 0 is no failure: NULL, not counted */
        return;
    }
    if (n == 0 || n > w->h.bytes) WH_FZ_DIE("size %zu accepted", n);
    if ((uintptr_t)p % WH_HEAP_ALIGN || p < w->h.base || p + n > w->h.base + w->h.bytes)
        WH_FZ_DIE("block %p of %zu bytes misaligned or outside the arena", (void *)p, n);
    long o = wh_fz_find_overlap(w->live, w->nlive, p, n);
    if (o >= 0)
        WH_FZ_DIE("%s: [%p, +%zu) overlaps a live block [%p, +%zu)", wh_heap_kind_name(w->h.kind), (void *)p, n,
                  (void *)w->live[o].p, w->live[o].n);
    wh_fz_block *b = &w->live[w->nlive++];
    *b = (wh_fz_block){p, n, (uint8_t)(0x21 + w->fills++)};
    wh_fz_fill(b);
}

static void do_free(world *w, uint32_t k, bool twice) {
    wh_fz_block b = w->live[k];
    if (!wh_fz_intact(&b))
        WH_FZ_DIE("%s: live block [%p, +%zu) overwritten", wh_heap_kind_name(w->h.kind), (void *)b.p, b.n);
    w->live[k] = w->live[--w->nlive];
    wh_free(&w->h, b.p);
    if (twice && w->h.kind != WH_HEAP_BUMP) { /* BUMP never frees, so it cannot tell */
        wh_free(&w->h, b.p);
        w->double_frees++;
    }
}

static void step(world *w, const uint8_t *d) {
    uint8_t op = d[0] % 16;
    uint32_t r = (uint32_t)d[1] | (uint32_t)d[2] << 8 | (uint32_t)d[3] << 16;
    if (op < 8) { /* 1 B .. 256 KiB, log-spread */
        if (w->nlive < MAXLIVE) do_alloc(w, 1u + ((r & 0x3FFFFu) >> (d[3] % 18u)));
    } else if (op < 12 && w->nlive) {
        do_free(w, r % w->nlive, op == 11);
    } else if (op == 12) { /* never handed out */
        int local;
        wh_free(&w->h, &local);
        w->foreign_frees++;
        if (w->nlive) {
            wh_free(&w->h, w->live[r % w->nlive].p + 8); /* misaligned: foreign */
            w->foreign_frees++;
        }
    } else if (op == 13) {
        if (wh_malloc(&w->h, 0) != NULL) WH_FZ_DIE("size 0 gave a block");
        if (wh_malloc(&w->h, (size_t)w->h.bytes + 1u + r) != NULL) WH_FZ_DIE("size beyond the heap gave a block");
        w->failed++;
    } else if (op == 14) {
        wh_free(&w->h, NULL); /* nothing */
    } else if (op == 15 && d[1] == 0) {
        if (wh_heap_reset(&w->h) != WH_OK) WH_FZ_DIE("reset"); /* empty, counters zero */
        w->nlive = 0;
        w->failed = w->double_frees = w->foreign_frees = 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static world w;
    memset(&w, 0, sizeof w);
    wh_heap_kind kind = kinds[data[0] % (sizeof kinds / sizeof *kinds)];
    wh_heap_config cfg = {(data[0] >> 4) & 1 ? 4u << 20 : 1u << 20, kind, WH_HEAP_HOST | WH_HEAP_TRACK, 0, NULL};
    if (wh_heap_create(&w.h, &cfg) != WH_OK) WH_FZ_DIE("create: %s", wh_last_error());
    for (size_t i = 1; i + 4 <= size; i += 4) {
        step(&w, data + i);
        if ((i / 4) % 4 == 3) check_world(&w);
    }
    check_world(&w);
    while (w.nlive) do_free(&w, 0, false);
    check_world(&w);
    wh_heap_destroy(&w.h);
    return 0;
}
