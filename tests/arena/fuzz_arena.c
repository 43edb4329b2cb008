/* SPDX-License-Identifier: MIT */
/* libFuzzer target: random command sequences on a small CPU-backend stream
 * arena, against an oracle of the live handles.
 *
 * Input: byte 0 picks the policy (best fit or ring), the free index and the
 * descriptor count, then 4 bytes a command: allocate (strides from 1 to
 * 4096 bytes, counts up to the region), a batch, replace, free, a batch of
 * frees, a copy of a freed handle freed again, a forged handle, size 0.
 * After every command: its status is the one the oracle expects (OK, or out
 * of memory / too large for a failed allocation, which leaves a null
 * handle); live handles lie in the region at multiples of their stride and
 * overlap no other (arena_oracle.c); a freed block still holds the bytes
 * written at allocation; the heap walk passes and counts the oracle's live
 * blocks.
 *
 * Built two ways: with clang -fsanitize=fuzzer (scripts/fuzz.sh arena), and
 * as a ctest of fixed random inputs (tests/support/fuzz_main.c). */
#include "arena_oracle.h"
#include "fuzz_oracle.h"

#define NSLOTS 64u
#define REGION (256u << 10)

typedef struct world {
    wh_arena *a;
    uintptr_t base;
    wh_handle slot[NSLOTS], stale;
    uint64_t bytes[NSLOTS], stride[NSLOTS];
    uint8_t fill[NSLOTS];
    uint32_t fills;
} world;

static wh_status take_status(world *w) {
    wh_status st = wh_arena_status(w->a);
    if (wh_arena_clear_status_async(w->a, NULL) != WH_OK || wh_arena_status(w->a) != WH_OK) WH_FZ_DIE("clear status");
    return st;
}

static wh_fz_block block_of(const world *w, uint32_t s) {
    return (wh_fz_block){(uint8_t *)wh_handle_ptr(&w->slot[s]), w->bytes[s], w->fill[s]};
}

/* After an allocation into slot s: a null handle with a failure, or a block to fill. */
static void allocated(world *w, uint32_t s, uint64_t count, uint64_t stride, wh_status st) {
    w->bytes[s] = count * stride;
    w->stride[s] = stride;
    if (!w->slot[s].ptr) {
        if (st != WH_ERR_OUT_OF_MEMORY && st != WH_ERR_TOO_LARGE)
            WH_FZ_DIE("failed allocation of %llu x %llu: %s", (unsigned long long)count, (unsigned long long)stride,
                      wh_strerror(st));
        return;
    }
    if (st != WH_OK && st != WH_ERR_OUT_OF_MEMORY && st != WH_ERR_TOO_LARGE) WH_FZ_DIE("status %d", (int)st);
    w->fill[s] = (uint8_t)(0x31 + w->fills++);
    wh_fz_block b = block_of(w, s);
    wh_fz_fill(&b);
}

static void freeing(world *w, uint32_t s) {
    wh_fz_block b = block_of(w, s);
    if (!wh_fz_intact(&b)) WH_FZ_DIE("slot %u: block overwritten", s);
    w->stale = w->slot[s];
}

static void check_world(world *w) {
    uint64_t live = 0, live_bytes = 0;
    if (wh_arena_oracle(w->slot, w->bytes, w->stride, NSLOTS, w->base, REGION, &live, &live_bytes))
        WH_FZ_DIE("live handles overlap or lie outside the region");
    wh_blocks_report rep;
    if (wh_arena_check(w->a, &rep) != WH_OK) WH_FZ_DIE("walk: %s", wh_last_error());
    if (rep.used != live || rep.used_bytes < live_bytes)
        WH_FZ_DIE("walk: %u used blocks, oracle %llu", (unsigned)rep.used, (unsigned long long)live);
}

static void step(world *w, const uint8_t *d) {
    uint8_t op = d[0] % 16;
    uint32_t s = d[1] % NSLOTS;
    uint64_t stride = wh_test_stride(d[2]), count = 1 + ((uint64_t)d[3] << 8 | d[2]) % (REGION / stride + 2);
    size_t n = (size_t)count;
    if (op < 5 && !w->slot[s].ptr) { /* one allocation */
        wh_arena_alloc_strided_async(w->a, &n, stride, &w->slot[s], NULL);
        allocated(w, s, count, stride, take_status(w));
    } else if (op < 7) { /* a batch into the empty slots from s on */
        uint32_t j = 0;
        size_t counts[8];
        while (j < 8 && s + j < NSLOTS && !w->slot[s + j].ptr) {
            counts[j] = 1 + (n >> j) % 4096u;
            ++j;
        }
        if (!j) return;
        wh_arena_alloc_batch_async(w->a, counts, stride, j, &w->slot[s], NULL);
        wh_status st = take_status(w);
        for (uint32_t k = 0; k < j; ++k) allocated(w, s + k, counts[k], stride, w->slot[s + k].ptr ? WH_OK : st);
    } else if (op < 8) { /* replace: free if full, then allocate */
        if (w->slot[s].ptr) freeing(w, s);
        wh_arena_replace_async(w->a, &n, stride, &w->slot[s], NULL);
        allocated(w, s, count, stride, take_status(w));
    } else if (op < 11 && w->slot[s].ptr) { /* free */
        freeing(w, s);
        wh_arena_free_async(w->a, &w->slot[s], NULL);
        if (w->slot[s].ptr || take_status(w) != WH_OK) WH_FZ_DIE("free");
    } else if (op == 11) { /* free a run of full slots */
        uint32_t j = 0;
        while (j < 8 && s + j < NSLOTS && w->slot[s + j].ptr) freeing(w, s + j++);
        wh_arena_free_batch_async(w->a, &w->slot[s], j, NULL);
        wh_status st = take_status(w);
        if (j && st != WH_OK) WH_FZ_DIE("batch free: %s", wh_strerror(st));
    } else if (op == 12 && w->stale.ptr) { /* a copy of a freed handle */
        wh_handle h = w->stale;
        wh_arena_free_async(w->a, &h, NULL);
        wh_status st = take_status(w);
        if (st != WH_ERR_DOUBLE_FREE) WH_FZ_DIE("stale handle freed: %s", wh_strerror(st)); /* its generation is old */
    } else if (op == 13) { /* forged: outside the region, bad descriptor, old generation */
        wh_handle h = w->slot[s].ptr ? w->slot[s] : (wh_handle){w->base + 64, 3, 0};
        wh_status want = WH_ERR_FOREIGN_POINTER;
        if (d[2] % 3 == 0)
            h.ptr = w->base + REGION + 64u * d[3];
        else if (d[2] % 3 == 1)
            h.block = 1u << 30 | d[3];
        else if (w->slot[s].ptr)
            h.gen += 1 + d[3], want = WH_ERR_DOUBLE_FREE;
        else
            return;
        wh_arena_free_async(w->a, &h, NULL);
        wh_status st = take_status(w);
        if (st != want) WH_FZ_DIE("forged handle: %s", wh_strerror(st));
    } else if (op == 14) { /* size 0: refused, nothing allocated */
        wh_handle h;
        size_t zero = 0;
        wh_arena_alloc_strided_async(w->a, &zero, stride, &h, NULL);
        if (h.ptr || take_status(w) != WH_ERR_INVALID_ARGUMENT) WH_FZ_DIE("size 0");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static world w;
    memset(&w, 0, sizeof w);
    bool ring = data[0] & 1;
    wh_blocks_kind index = ring && (data[0] & 2) ? WH_BLOCKS_LIST : (data[0] & 4) ? WH_BLOCKS_MAXHEAP : WH_BLOCKS_TLSF;
    wh_arena_config cfg = {.bytes = REGION,
                           .max_blocks = 16u << (data[0] >> 3 & 3),
                           .index = index,
                           .backend = WH_ARENA_CPU,
                           .policy = ring ? WH_ARENA_RING : WH_ARENA_BEST_FIT};
    if (wh_arena_create(&w.a, &cfg) != WH_OK) WH_FZ_DIE("create: %s", wh_last_error());
    w.base = (uintptr_t)wh_arena_base(w.a);
    for (size_t i = 1; i + 4 <= size; i += 4) {
        step(&w, data + i);
        check_world(&w);
    }
    for (uint32_t s = 0; s < NSLOTS; ++s)
        if (w.slot[s].ptr) {
            freeing(&w, s);
            wh_arena_free_async(w.a, &w.slot[s], NULL);
        }
    check_world(&w);
    wh_arena_destroy(w.a);
    return 0;
}
