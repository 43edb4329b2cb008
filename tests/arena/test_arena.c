/* SPDX-License-Identifier: MIT */
/* Stream arena on the CPU backend: the command code of arena.h run by the
 * calling host thread in program (= stream) order.
 *  - bad input: every bad request gives a null handle and a clear status,
 *    and the arena stays usable (heap walk, then a good allocation);
 *  - alignment by count/stride;
 *  - long random command sequences (single, strided, batched allocations,
 *    single and batched frees) checked every few hundred commands by the
 *    overlap oracle and the heap walk, for both free indices;
 *  - the device-side warp functions, run by one host thread. */
#include "arena_oracle.h"
#include "wh_cli.h"
#include "wh_test.h"

static wh_arena *make_policy(size_t bytes, uint32_t blocks, wh_blocks_kind kind, wh_arena_policy policy) {
    wh_arena *a = NULL;
    wh_arena_config cfg = {
        .bytes = bytes, .max_blocks = blocks, .index = kind, .backend = WH_ARENA_CPU, .policy = policy};
    wh_status st = wh_arena_create(&a, &cfg);
    CHECK(st == WH_OK);
    if (st != WH_OK) {
        fprintf(stderr, "%s\n", wh_last_error());
        exit(1);
    }
    return a;
}
static wh_arena *make(size_t bytes, uint32_t blocks, wh_blocks_kind kind) {
    return make_policy(bytes, blocks, kind, WH_ARENA_BEST_FIT);
}

static void expect_walk_ok(wh_arena *a) {
    wh_blocks_report r;
    wh_status st = wh_arena_check(a, &r);
    CHECK(st == WH_OK);
    if (st != WH_OK) fprintf(stderr, "walk: %s\n", wh_last_error());
}

/* The status of one command, then clear it for the next. */
static wh_status take_status(wh_arena *a) {
    wh_status st = wh_arena_status(a);
    CHECK(wh_arena_clear_status_async(a, NULL) == WH_OK);
    CHECK(wh_arena_status(a) == WH_OK);
    return st;
}

static void test_create_errors(void) {
    wh_arena *a = (wh_arena *)1;
    wh_arena_config cfg = {.bytes = 0, .backend = WH_ARENA_CPU};
    CHECK(wh_arena_create(&a, &cfg) == WH_ERR_TOO_SMALL);
    CHECK(a == NULL);
    cfg.bytes = 100; /* less than a 256-byte granule */
    CHECK(wh_arena_create(&a, &cfg) == WH_ERR_TOO_SMALL);
    cfg.bytes = 4096;
    cfg.granule = 48; /* not a power of two */
    CHECK(wh_arena_create(&a, &cfg) == WH_ERR_INVALID_ARGUMENT);
    cfg.granule = 0;
    cfg.region = (void *)(uintptr_t)0x1008; /* not granule aligned */
    CHECK(wh_arena_create(&a, &cfg) == WH_ERR_INVALID_ARGUMENT);
    cfg.region = NULL;
    size_t huge[] = {SIZE_MAX, SIZE_MAX - 255, (size_t)WH_ARENA_MAX_BYTES + 1};
    for (unsigned k = 0; k < 3; ++k) { /* sizes past what an arena addresses */
        cfg.bytes = huge[k];
        CHECK(wh_arena_create(&a, &cfg) == WH_ERR_TOO_LARGE);
        CHECK(a == NULL);
    }
    printf("  huge: %s\n", wh_last_error());
    cfg.bytes = 4096;
    CHECK(wh_arena_create(NULL, &cfg) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_arena_create(&a, NULL) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_arena_destroy(NULL) == WH_OK);
}

static void test_bad_requests(void) {
    wh_arena *a = make(1 << 20, 64, WH_BLOCKS_TLSF), *other = make(1 << 16, 16, WH_BLOCKS_TLSF);
    wh_handle h, keep, copy;
    size_t n;

    n = 0; /* size 0 */
    wh_arena_alloc_async(a, &n, &h, NULL);
    CHECK(h.ptr == 0);
    CHECK(take_status(a) == WH_ERR_INVALID_ARGUMENT);
    n = 10; /* stride 0 */
    wh_arena_alloc_strided_async(a, &n, 0, &h, NULL);
    CHECK(h.ptr == 0 && take_status(a) == WH_ERR_INVALID_ARGUMENT);
    n = (1 << 20) + 1; /* larger than the region */
    wh_arena_alloc_async(a, &n, &h, NULL);
    CHECK(h.ptr == 0 && take_status(a) == WH_ERR_TOO_LARGE);
    n = SIZE_MAX / 2; /* count * stride overflows */
    wh_arena_alloc_strided_async(a, &n, 16, &h, NULL);
    CHECK(h.ptr == 0 && take_status(a) == WH_ERR_TOO_LARGE);
    n = (1 << 20) - 100; /* fits, but not with its padding */
    wh_arena_alloc_strided_async(a, &n, 1, &h, NULL);
    CHECK(h.ptr != 0 && take_status(a) == WH_OK);
    wh_arena_free_async(a, &h, NULL);
    CHECK(h.ptr == 0 && take_status(a) == WH_OK);
    n = (1 << 20) / 36;                                /* fits, but not with 36 - gcd(36, 256) = 32 */
    wh_arena_alloc_strided_async(a, &n, 36, &h, NULL); /* bytes of padding */
    CHECK(h.ptr == 0 && take_status(a) == WH_ERR_TOO_LARGE);

    n = 1000;
    wh_arena_alloc_async(a, &n, &keep, NULL);
    CHECK(keep.ptr != 0 && take_status(a) == WH_OK);
    copy = keep;
    wh_arena_free_async(a, &keep, NULL);
    CHECK(keep.ptr == 0 && take_status(a) == WH_OK);
    wh_arena_free_async(a, &keep, NULL); /* the slot is null now */
    CHECK(take_status(a) == WH_ERR_INVALID_ARGUMENT);
    wh_arena_free_async(a, &copy, NULL); /* a copy of the freed handle */
    CHECK(copy.ptr != 0 && take_status(a) == WH_ERR_DOUBLE_FREE);

    wh_arena_alloc_async(a, &n, &keep, NULL); /* reuses the descriptor: new generation */
    CHECK(keep.ptr != 0);
    wh_arena_free_async(a, &copy, NULL);
    CHECK(take_status(a) == WH_ERR_DOUBLE_FREE);

    wh_handle f; /* a handle of another arena */
    wh_arena_alloc_async(other, &n, &f, NULL);
    CHECK(f.ptr != 0);
    wh_arena_free_async(a, &f, NULL);
    CHECK(f.ptr != 0 && take_status(a) == WH_ERR_FOREIGN_POINTER);
    wh_handle forged = keep; /* inside the region, past its block */
    forged.ptr += 4096;
    wh_arena_free_async(a, &forged, NULL);
    CHECK(take_status(a) == WH_ERR_FOREIGN_POINTER);
    forged = keep;
    forged.block = 1u << 30;
    wh_arena_free_async(a, &forged, NULL);
    CHECK(take_status(a) == WH_ERR_FOREIGN_POINTER);
    expect_walk_ok(a);

    wh_arena_stats st; /* first failure is sticky */
    n = 0;
    wh_arena_alloc_async(a, &n, &h, NULL);
    n = 1 << 30;
    wh_arena_alloc_async(a, &n, &h, NULL);
    CHECK(wh_arena_stats_get(a, &st) == WH_OK);
    CHECK(st.first_status == WH_ERR_INVALID_ARGUMENT && st.last_status == WH_ERR_TOO_LARGE);
    CHECK(take_status(a) == WH_ERR_INVALID_ARGUMENT);

    wh_arena_free_async(a, &keep, NULL);
    wh_arena_free_async(other, &f, NULL);
    CHECK(take_status(a) == WH_OK && take_status(other) == WH_OK);
    expect_walk_ok(a);
    expect_walk_ok(other);
    wh_arena_destroy(a);
    wh_arena_destroy(other);
}

/* Fill the arena until it says OUT_OF_MEMORY (bytes) or runs out of
 * descriptors; free one block; the arena serves again. */
static void test_exhaustion(wh_blocks_kind kind) {
    enum { N = 64 };
    wh_arena *a = make(N * 16384, 48, kind);
    wh_handle h[2 * N];
    size_t n = 16384 - 200;
    uint32_t got = 0;
    for (uint32_t i = 0; i < 2 * N; ++i) {
        wh_arena_alloc_async(a, &n, &h[i], NULL);
        got += h[i].ptr != 0;
    }
    CHECK(got > 0 && got < 2 * N);
    CHECK(take_status(a) == WH_ERR_OUT_OF_MEMORY);
    uint64_t bytes[2 * N], strides[2 * N];
    for (int i = 0; i < 2 * N; ++i) {
        bytes[i] = n;
        strides[i] = 1;
    }
    CHECK_EQ_U64(wh_arena_oracle(h, bytes, strides, 2 * N, (uintptr_t)wh_arena_base(a), N * 16384, NULL, NULL), 0);
    expect_walk_ok(a);
    wh_arena_free_async(a, &h[got / 2], NULL);
    CHECK(take_status(a) == WH_OK);
    wh_arena_alloc_async(a, &n, &h[got / 2], NULL);
    CHECK(h[got / 2].ptr != 0 && take_status(a) == WH_OK);
    wh_arena_free_batch_async(a, h, 2 * N, NULL); /* the null ones report INVALID_ARGUMENT */
    CHECK(take_status(a) == WH_ERR_INVALID_ARGUMENT);
    wh_blocks_report r;
    CHECK(wh_arena_check(a, &r) == WH_OK);
    CHECK(r.used == 0 && r.free == 1 && r.largest_free == N * 16384);
    wh_arena_destroy(a);
}

static void test_strides(void) {
    wh_arena *a = make(4 << 20, 256, WH_BLOCKS_TLSF);
    uintptr_t base = (uintptr_t)wh_arena_base(a);
    wh_handle h[64];
    for (uint32_t i = 0; i < 64; ++i) {
        size_t count = 1 + i;
        uint64_t stride = wh_test_stride(i);
        wh_arena_alloc_strided_async(a, &count, stride, &h[i], NULL);
        CHECK(h[i].ptr != 0);
        if (!h[i].ptr) continue;
        CHECK((h[i].ptr - base) % stride == 0);
        CHECK(h[i].ptr % (stride < 256 && (stride & (stride - 1)) == 0 ? stride : 4) == 0);
        memset(wh_handle_ptr(&h[i]), (int)i, count * stride); /* the memory is really there */
    }
    CHECK(take_status(a) == WH_OK);
    expect_walk_ok(a);
    wh_arena_free_batch_async(a, h, 64, NULL);
    CHECK(take_status(a) == WH_OK);
    wh_arena_destroy(a);
}

/* A random sequence of commands on nslots slots; the test mirrors which
 * slots hold a handle (it knows the outcome at once on the CPU backend,
 * but asks the arena only through the slots and the status). */
/* The arena's integer helpers against plain 64-bit arithmetic, on both
 * sides of 2^32 (their 32-bit fast path and the general one). */
static void test_arith(void) {
    uint64_t r = 0x5EED;
    for (int i = 0; i < 20000; ++i) {
        r = wh_hash64(r + (uint64_t)i);
        uint64_t a = i & 1 ? r : r >> 32, b = 1 + (i & 2 ? (r >> 7) % 100000 : (r >> 3) % (1ull << 40));
        CHECK(wh__arena_div(a, b) == a / b && wh__arena_mod(a, b) == a % b);
        uint64_t up = wh__arena_align_up(a >> 1, b);
        CHECK(up % b == 0 && up >= a >> 1 && up - (a >> 1) < b);
        uint64_t g = 1ull << (r % 21); /* a power-of-two granule */
        uint64_t x = b, y = g;
        while (y) {
            uint64_t t = x % y;
            x = y;
            y = t;
        } /* Euclid */
        CHECK(wh__arena_gcd(b, g) == x);
    }
}

static void test_random_commands(wh_blocks_kind kind, wh_arena_policy policy, uint32_t commands, uint64_t seed) {
    enum { NSLOTS = 512, BATCH = 16 };
    size_t region = 8u << 20;
    wh_arena *a = make_policy(region, 4096, kind, policy);
    uintptr_t base = (uintptr_t)wh_arena_base(a);
    static wh_handle slots[NSLOTS];
    static uint64_t bytes[NSLOTS], strides[NSLOTS];
    static size_t counts[BATCH];
    memset(slots, 0, sizeof slots);
    uint64_t allocs = 0, frees = 0, ooms = 0, checks = 0;
    for (uint32_t i = 0; i < commands; ++i) {
        uint64_t r = wh_hash64(seed * 1000003u + i);
        uint32_t s = (uint32_t)(r % NSLOTS), op = (uint32_t)((r >> 20) % 10u);
        uint64_t stride = wh_test_stride(r >> 24);
        if (op < 6 && slots[s].ptr == 0) { /* one allocation */
            counts[0] = 1 + (size_t)((r >> 32) % (65536 / stride + 1));
            wh_arena_alloc_strided_async(a, counts, stride, &slots[s], NULL);
            bytes[s] = counts[0] * stride;
            strides[s] = stride;
            if (slots[s].ptr)
                allocs++;
            else
                ooms++;
        } else if (op < 7 && s + BATCH <= NSLOTS) { /* a batch into empty slots */
            uint32_t j = 0;
            while (j < BATCH && slots[s + j].ptr == 0) ++j;
            for (uint32_t k = 0; k < j; ++k) {
                counts[k] = 1 + (size_t)(wh_hash64(r + k) % 2048);
                bytes[s + k] = counts[k] * stride;
                strides[s + k] = stride;
            }
            wh_arena_alloc_batch_async(a, counts, stride, j, &slots[s], NULL);
            for (uint32_t k = 0; k < j; ++k) {
                if (slots[s + k].ptr)
                    allocs++;
                else
                    ooms++;
            }
        } else if (op < 9 && slots[s].ptr != 0) { /* one free */
            wh_arena_free_async(a, &slots[s], NULL);
            CHECK(slots[s].ptr == 0);
            frees++;
        } else if (s + BATCH <= NSLOTS) { /* free a run of full slots */
            uint32_t j = 0;
            while (j < BATCH && slots[s + j].ptr != 0) ++j;
            wh_arena_free_batch_async(a, &slots[s], j, NULL);
            frees += j;
        }
        if (i % 500 == 499 || i + 1 == commands) {
            uint64_t live = 0, live_bytes = 0;
            CHECK_EQ_U64(wh_arena_oracle(slots, bytes, strides, NSLOTS, base, region, &live, &live_bytes), 0);
            wh_blocks_report rep;
            CHECK(wh_arena_check(a, &rep) == WH_OK);
            CHECK_EQ_U64(rep.used, live);
            CHECK(rep.used_bytes >= live_bytes);
            wh_arena_stats st;
            CHECK(wh_arena_stats_get(a, &st) == WH_OK);
            CHECK_EQ_U64(st.live_blocks, live);
            CHECK_EQ_U64(st.allocs, allocs);
            CHECK_EQ_U64(st.frees, frees);
            checks++;
        }
    }
    wh_status st = take_status(a);
    CHECK(st == WH_OK || (st == WH_ERR_OUT_OF_MEMORY && ooms > 0));
    wh_arena_free_batch_async(a, slots, NSLOTS, NULL); /* nulls among them: INVALID_ARGUMENT */
    wh_blocks_report rep;
    CHECK(wh_arena_check(a, &rep) == WH_OK);
    CHECK(rep.used == 0 && rep.free == 1 && rep.largest_free == region);
    printf("random commands (%s%s): %u commands, %llu allocs, %llu frees, %llu out of memory, %llu checks\n",
           kind == WH_BLOCKS_TLSF   ? "tlsf"
           : kind == WH_BLOCKS_LIST ? "list"
                                    : "max-heap",
           policy == WH_ARENA_RING ? ", ring" : "", commands, (unsigned long long)allocs, (unsigned long long)frees,
           (unsigned long long)ooms, (unsigned long long)checks);
    CHECK(allocs > commands / 4 && frees > commands / 8);
    wh_arena_destroy(a);
}

/* Replace: null slot -> allocate; full slot -> old block freed, new one in;
 * a bad handle -> the status, the slot untouched; a ring keeps K live. */
static void test_replace(void) {
    wh_arena *a = make(4 << 20, 64, WH_BLOCKS_TLSF); /* 3 live of <= 216 KiB */
    wh_handle ring[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (uint32_t f = 0; f < 300; ++f) {
        size_t n = 1000 + (f * 7919u) % 5000;
        wh_arena_replace_async(a, &n, 36, &ring[f % 3], NULL);
        CHECK(ring[f % 3].ptr != 0);
    }
    CHECK(take_status(a) == WH_OK);
    wh_blocks_report r;
    CHECK(wh_arena_check(a, &r) == WH_OK && r.used == 3);
    wh_handle old = ring[0], bad = ring[1];
    size_t n = 500;
    wh_arena_replace_async(a, &n, 1, &ring[0], NULL);
    CHECK(ring[0].ptr != 0 && ring[0].ptr != old.ptr + 1);
    wh_arena_free_async(a, &old, NULL); /* replaced: already freed */
    CHECK(take_status(a) == WH_ERR_DOUBLE_FREE);
    bad.gen ^= 1u; /* forged generation */
    wh_handle keep = bad;
    wh_arena_replace_async(a, &n, 1, &bad, NULL);
    CHECK(take_status(a) == WH_ERR_DOUBLE_FREE);
    CHECK(bad.ptr == keep.ptr && bad.gen == keep.gen);
    n = 0; /* bad size: old one freed, slot null */
    wh_arena_replace_async(a, &n, 1, &ring[2], NULL);
    CHECK(ring[2].ptr == 0 && take_status(a) == WH_ERR_INVALID_ARGUMENT);
    wh_arena_free_batch_async(a, ring, 2, NULL);
    CHECK(take_status(a) == WH_OK);
    CHECK(wh_arena_check(a, &r) == WH_OK && r.used == 0 && r.free == 1);
    wh_arena_destroy(a);
}

/* RING policy, spans: a FIFO ring of K meshes whose sizes drift and jump
 * (stride 36, a triangle), in a region only a few granules above the most
 * bytes K live spans need.  Every replace must succeed; each frame the parts
 * go through the overlap oracle (a part = its own allocation), the counts of
 * the parts add up, and the heap walk passes.  The same sequence with one
 * extent per mesh (wh_arena_replace_async) is also run, to show why spans:
 * it needs about (K+1)/K x and fails in this region (printed, not required). */
static void test_ring_spans(uint32_t k, uint32_t frames, uint64_t seed) {
    enum { MAXK = 8 };
    const uint64_t stride = 36, g = 256, pad = 32; /* pad: 36 - gcd(36, 256) */
    uint64_t *cnt = (uint64_t *)malloc(frames * sizeof *cnt), most = 0;
    for (uint32_t f = 0; f < frames; ++f) { /* drift plus noise, now and then a jump */
        uint64_t r = wh_hash64(seed * 7919u + f);
        cnt[f] =
            20000 + 300u * (f % 200 < 100 ? f % 200 : 200 - f % 200) + r % 3000 + ((r >> 20) % 17 == 0 ? 20000 : 0);
    }
    for (uint32_t f = 0; f < frames; ++f) {
        uint64_t live = 0;
        for (uint32_t j = 0; j < k && j <= f; ++j) live += (cnt[f - j] * stride + pad + g - 1) / g * g;
        if (live > most) most = live;
    }
    size_t region = (size_t)(most + 2u * (k + 1u) * g);
    wh_arena *a = make_policy(region, 256, WH_BLOCKS_TLSF, WH_ARENA_RING);
    wh_arena_span ring[MAXK];
    memset(ring, 0, sizeof ring);
    wh_handle parts[2 * MAXK];
    uint64_t bytes[2 * MAXK], strides[2 * MAXK];
    uint64_t split = 0;
    for (uint32_t f = 0; f < frames; ++f) {
        size_t n = (size_t)cnt[f];
        wh_arena_span *sp = &ring[f % k];
        CHECK(wh_arena_replace_span_async(a, &n, stride, sp, NULL) == WH_OK);
        CHECK(sp->part[0].ptr != 0 && sp->count == n && sp->count0 <= n);
        CHECK((sp->count0 < n) == (sp->part[1].ptr != 0));
        split += sp->part[1].ptr != 0;
        CHECK(wh_arena_span_at(sp, n - 1, stride) != NULL);
        for (uint32_t j = 0; j < k; ++j) {
            parts[2 * j] = ring[j].part[0];
            parts[2 * j + 1] = ring[j].part[1];
            bytes[2 * j] = ring[j].count0 * stride;
            bytes[2 * j + 1] = (ring[j].count - ring[j].count0) * stride;
            strides[2 * j] = strides[2 * j + 1] = stride;
        }
        uint64_t live = 0;
        CHECK_EQ_U64(wh_arena_oracle(parts, bytes, strides, 2 * k, (uintptr_t)wh_arena_base(a), region, &live, NULL),
                     0);
        if (f % 16 == 0) expect_walk_ok(a);
    }
    CHECK(take_status(a) == WH_OK);
    wh_arena_stats st;
    CHECK(wh_arena_stats_get(a, &st) == WH_OK && st.failures == 0);
    for (uint32_t j = 0; j < k; ++j)
        CHECK(wh_arena_free_batch_async(a, ring[j].part, ring[j].part[1].ptr ? 2 : 1, NULL) == WH_OK);
    CHECK(take_status(a) == WH_OK);
    wh_blocks_report rep;
    CHECK(wh_arena_check(a, &rep) == WH_OK && rep.used == 0 && rep.free == 1);
    wh_arena_destroy(a);

    /* one extent per mesh, same region: next fit alone */
    a = make_policy(region, 256, WH_BLOCKS_TLSF, WH_ARENA_RING);
    wh_handle one[MAXK];
    memset(one, 0, sizeof one);
    for (uint32_t f = 0; f < frames; ++f) {
        size_t n = (size_t)cnt[f];
        CHECK(wh_arena_replace_async(a, &n, stride, &one[f % k], NULL) == WH_OK);
    }
    CHECK(wh_arena_stats_get(a, &st) == WH_OK);
    expect_walk_ok(a);
    printf("ring spans, K=%u: %u frames in %.4f x the most live bytes, %llu split; one extent per mesh: %llu of "
           "%u failed\n",
           k, frames, (double)region / (double)most, (unsigned long long)split, (unsigned long long)st.failures,
           frames);
    wh_arena_destroy(a);
    free(cnt);
}

/* The status of a command on a, cleared only if set (a clear is a command:
 * it would make a reservation plan stale). */
static wh_status status_if_any(wh_arena *a) {
    wh_status st = wh_arena_status(a);
    if (st != WH_OK) CHECK(wh_arena_clear_status_async(a, NULL) == WH_OK);
    return st;
}

/* wh_arena_ring_commit by one thread, each mode as the tests drive it. */
static wh_status commit_now(wh_arena_ref r, wh_arena_span *slot, void *scratch, size_t bytes,
                            wh_arena_ring_baton last) {
    wh_arena_commit c = {
        .mode = WH_ARENA_COMMIT_NOW, .ring = slot, .k = 1, .smem = scratch, .smem_bytes = bytes, .last = last};
    return wh_arena_ring_commit(r, &c);
}
static wh_status commit_ahead(wh_arena_ref r, wh_arena_span *ring, uint32_t k, uint32_t first, uint32_t frames,
                              void *scratch, size_t bytes, uint32_t tries, wh_arena_ring_baton baton,
                              wh_arena_ring_baton last) {
    wh_arena_commit c = {.mode = WH_ARENA_COMMIT_AHEAD,
                         .ring = ring,
                         .k = k,
                         .first = first,
                         .frames = frames,
                         .tries = tries,
                         .smem = scratch,
                         .smem_bytes = bytes,
                         .baton = baton,
                         .last = last};
    return wh_arena_ring_commit(r, &c);
}

/* RING reservations (arena/reserve.h): the same FIFO ring of K spans run by
 * wh_arena_replace_span_async in one arena and by reserve + commit in a
 * twin.  Every frame: the same status, the same span (offsets, descriptor,
 * generation, counts), the same generations and block core byte for byte;
 * the planned (fast) path taken whenever the plan is current.  The region
 * is tight enough that some replaces split and some fail (the slow path);
 * a zero count now and then, a flush (a command between two reserves: the
 * plan goes stale) now and then, now and then another stride, and for a
 * while small blocks with holes between them (more free blocks than a plan
 * records: the reserve must see where its answer may lie past them). */
/* Frame f's count: drift plus noise, now and then a jump, every 50th zero. */
static uint64_t reserve_count(uint64_t seed, uint32_t f) {
    uint64_t r = wh_hash64(seed * 7919u + f);
    if (f % 50 == 49) return 0;
    return 20000 + 300u * (f % 200 < 100 ? f % 200 : 200 - f % 200) + r % 3000 + ((r >> 20) % 13 == 0 ? 15000 : 0);
}

/* The arena of the RING reserve tests: 1/16 short of the most bytes K live
 * spans of reserve_count need (some replaces split, some fail), both cores. */
static wh_arena_config ring_test_config(uint32_t k, uint32_t frames, uint64_t seed) {
    uint64_t most = 0; /* as in test_ring_spans */
    for (uint32_t f = 0; f < frames; ++f) {
        uint64_t live = 0;
        for (uint32_t j = 0; j < k && j <= f; ++j)
            live += (reserve_count(seed, f - j) * 36u + 32u + 255u) / 256u * 256u;
        if (live > most) most = live;
    }
    wh_arena_config cfg = {.bytes = (size_t)(most - most / 16u),
                           .max_blocks = 64,
                           .backend = WH_ARENA_CPU,
                           .policy = WH_ARENA_RING,
                           .mirror = WH_ARENA_MIRROR_ON_FAILURE,
                           .index = k % 2 ? WH_BLOCKS_LIST : WH_BLOCKS_TLSF};
    return cfg;
}

/* The same span in two arenas: offsets from each base, descriptors, counts. */
static void expect_same_span(const wh_arena_span *x, uint64_t xbase, const wh_arena_span *y, uint64_t ybase) {
    for (int p = 0; p < 2; ++p) {
        CHECK((x->part[p].ptr ? x->part[p].ptr - xbase : 0) == (y->part[p].ptr ? y->part[p].ptr - ybase : 0));
        CHECK(x->part[p].block == y->part[p].block && x->part[p].gen == y->part[p].gen);
    }
    CHECK(x->count0 == y->count0 && x->count == y->count);
}

static void test_ring_reserve(uint32_t k, uint32_t frames, uint64_t seed) {
    enum { MAXK = 8 };
    wh_arena_config cfg = ring_test_config(k, frames, seed);
    wh_arena *ref = NULL, *a = NULL;
    CHECK(wh_arena_create(&ref, &cfg) == WH_OK && wh_arena_create(&a, &cfg) == WH_OK);
    if (!ref || !a) return;
    wh__arena_state *rs = wh_arena_device(ref).s, *s = wh_arena_device(a).s;
    size_t meta = wh_arena_meta_bytes(a);
    uint64_t *scratch = (uint64_t *)malloc(meta);
    wh_arena_span r_ring[MAXK], ring[MAXK];
    wh_handle r_small[12], small[12];
    memset(r_small, 0, sizeof r_small);
    memset(small, 0, sizeof small);
    memset(r_ring, 0, sizeof r_ring);
    memset(ring, 0, sizeof ring);
    uint64_t fast = 0, split = 0, failed = 0, stale = 0, other = 0, truncated = 0,
             rbase = (uintptr_t)wh_arena_base(ref), base = (uintptr_t)wh_arena_base(a), handoffs = 0, quoted = 0;
    bool handed = false; /* the previous commit handed the lock on */
    uint32_t baton = 0, baton2 = 0;
    for (uint32_t f = 0; f < frames; ++f) {
        size_t n = (size_t)reserve_count(seed, f);
        uint64_t stride = 36;
        if (f % 61 == 60) { /* the same bytes in 12-byte elements */
            stride = 12;
            n *= 3;
            other++;
        }
        if (f % 500 == 200 || f % 500 == 350) { /* holes: 12 small blocks, every other one freed */
            bool second = f % 500 == 350;       /* then, 150 frames on, the rest */
            for (int i = 0; i < 12 && !second; ++i) {
                size_t b = 512;
                CHECK(wh_arena_alloc_async(ref, &b, &r_small[i], NULL) == WH_OK);
                CHECK(wh_arena_alloc_async(a, &b, &small[i], NULL) == WH_OK);
            }
            for (int i = 0; i < 12; ++i) {
                if ((i % 2 == 1) == second && small[i].ptr) {
                    CHECK(wh_arena_free_async(ref, &r_small[i], NULL) == WH_OK);
                    CHECK(wh_arena_free_async(a, &small[i], NULL) == WH_OK);
                }
            }
            (void)status_if_any(ref);
            (void)status_if_any(a);
            stale++;
        }
        if (f % 97 == 96) { /* a command between: the plan is stale */
            CHECK(wh_arena_flush_async(ref, NULL) == WH_OK && wh_arena_flush_async(a, NULL) == WH_OK);
            stale++;
        }
        /* odd frames: the reserve in two halves, begin before the count is known (as a kernel's last block
         * overlaps it with the scan), end after; every fourth frame begin's own halves apart (the lock taken
         * by one block of a kernel, the state read by another); in a chain, the state read under the lock the
         * last commit handed on */
        wh_arena_ring_ticket tk;
        wh_status got = WH_OK;
        if (handed) { /* the last commit kept the lock for this reserve */
            CHECK(wh_atomic_load(&baton, WH_ACQUIRE) == 1u && wh_atomic_load(&s->lock, WH_RELAXED) == 1u);
            wh_arena_ring_reserve_read_handed(wh_arena_device(a), &ring[f % k], &tk);
            handoffs++;
        } else if (f % 4 == 3) {
            got = wh__ring_reserve_lock(wh_arena_device(a), 3);
            if (got == WH_OK) wh__ring_reserve_read(wh_arena_device(a), &ring[f % k], &tk);
        } else if (f % 2) {
            got = wh_arena_ring_reserve_begin(wh_arena_device(a), &ring[f % k], 0, &tk);
        }
        CHECK(got == WH_OK);
        CHECK(wh_arena_replace_span_async(ref, &n, stride, &r_ring[f % k], NULL) == WH_OK);
        wh_status want = status_if_any(ref);
        if ((f % 2 || handed) && stride == tk.pl.q_stride && n - 1u < tk.fit) { /* the quote answers: as the plan */
            wh_arena_span ps, q;
            memset(&q, 0, sizeof q);
            q.part[0] = tk.pl.q_h0;
            q.part[1] = wh_handle_null();
            q.count0 = q.count = n;
            wh_arena_ring_ticket full; /* handed: the quote's words only in tk */
            wh__ring_reserve_read(wh_arena_device(a), &ring[f % k], &full);
            CHECK(full.current && full.fit == tk.fit && wh__span_same(&full.old, &tk.old));
            CHECK(wh__plan_span(&full.pl, full.base, full.bytes, n, stride, &ps) && wh__span_same(&ps, &q));
            quoted++;
        }
        if (f % 4 == 1 && !handed) { /* deferred: announced after the caller's fence */
            got = wh_arena_ring_reserve_end_deferred(wh_arena_device(a), &tk, n, stride, &ring[(f + 1) % k]);
            CHECK(!wh__ring_pending_for(s, &ring[f % k]));
            wh_fence();
            wh_arena_ring_reserve_publish(wh_arena_device(a));
        } else {
            got = f % 2 || handed
                      ? wh_arena_ring_reserve_end(wh_arena_device(a), &tk, n, stride, &ring[(f + 1) % k])
                      : wh_arena_ring_reserve_thread(wh_arena_device(a), n, stride, &ring[f % k], &ring[(f + 1) % k]);
        }
        fast += s->pending.fast;
        truncated += s->plan.valid && !s->plan.complete;
        /* in flight (lock held, failed or not) for its own slot only: a commit launched ahead waits for this */
        CHECK(wh__ring_pending_for(s, &ring[f % k]));
        CHECK(k == 1 || !wh__ring_pending_for(s, &ring[(f + 1) % k]));
        /* chains of frames: the commit hands the lock to the next reserve, unless a command comes between
         * (a failure's status is cleared by one) */
        uint32_t g = f + 1;
        handed = g < frames && f % 5 != 4 && want == WH_OK && g % 97 != 96 && g % 500 != 200 && g % 500 != 350;
        wh_arena_ring_baton b = {&baton, 1u, 2u}, b2 = {&baton2, 1u, 2u};
        baton = baton2 = 0;
        CHECK(commit_now(wh_arena_device(a), &ring[f % k], scratch, meta, handed ? b : wh_arena_ring_unlock_baton()) ==
              WH_OK);
        CHECK(!wh__ring_pending_for(s, &ring[f % k]));
        CHECK(wh_atomic_load(&s->lock, WH_RELAXED) == (handed ? 1u : 0u) && baton == (handed ? 1u : 0u));
        CHECK(!s->pending.active && commit_now(wh_arena_device(a), &ring[f % k], NULL, 0, b2) == WH_OK &&
              baton2 == 2u); /* nothing in flight: `empty` */
        CHECK(wh_atomic_load(&s->lock, WH_RELAXED) == (handed ? 1u : 0u));
        CHECK(got == want && status_if_any(a) == want);
        failed += want != WH_OK;
        const wh_arena_span *x = &r_ring[f % k], *y = &ring[f % k];
        split += y->part[1].ptr != 0;
        expect_same_span(x, rbase, y, base);
        CHECK(memcmp((char *)rs + rs->gen_off, (char *)s + s->gen_off, meta - s->gen_off) == 0);
        if (!handed && f % 15 == 4) expect_walk_ok(a); /* the lock free: between chains */
    }
    wh_arena_stats x, y;
    CHECK(wh_arena_flush_async(ref, NULL) == WH_OK && wh_arena_flush_async(a, NULL) == WH_OK);
    CHECK(wh_arena_stats_get(ref, &x) == WH_OK && wh_arena_stats_get(a, &y) == WH_OK);
    CHECK(x.allocs == y.allocs && x.frees == y.frees && x.failures == y.failures && x.commands == y.commands);
    CHECK(x.used_bytes == y.used_bytes && x.peak_used == y.peak_used && x.live_blocks == y.live_blocks);
    printf("ring reserve, K=%u: %u frames, %llu by the plan, %llu split, %llu failed, %llu stale plans, %llu other "
           "strides, %llu truncated plans, %llu with the lock handed on, %llu by the quote\n",
           k, frames, (unsigned long long)fast, (unsigned long long)split, (unsigned long long)failed,
           (unsigned long long)stale, (unsigned long long)other, (unsigned long long)truncated,
           (unsigned long long)handoffs, (unsigned long long)quoted);
    /* the plan serves every frame that did not follow a failure or a stale plan */
    /* ... and with more free blocks than recorded, every one whose answer is among those recorded */
    CHECK(fast + 2u * failed + stale + 2u * other + truncated + 1u >= frames);
    CHECK(truncated > 0 && handoffs > frames / 2u && quoted > frames / 4u);
    CHECK((k == 1 || split > 0) && failed > frames / 50u); /* zero counts and some out of memory */
    expect_walk_ok(a);
    free(scratch);
    wh_arena_destroy(ref);
    wh_arena_destroy(a);
}

/* Forecasts and posts (WH_ARENA_COMMIT_POSTS), one thread playing producer
 * and committer: the FIFO ring of test_ring_reserve, each frame's elements
 * written through the window the forecast gives, the replace run on the
 * forecast and posted, then committed by a chain of one post -- against a
 * twin that replaces with the count the window let through.  Every frame:
 * the same status (plus WH_ERR_OUT_OF_MEMORY where the count was clamped),
 * the same span as the twin's and as the forecast's, every element written
 * through the window read back through the slot, the same generations.  A
 * command that allocates nothing (flush, clear) leaves the forecast exact;
 * small blocks allocated and freed outside the ring (holes) do not: a chain
 * of no post makes it again from the real state and publishes the first
 * window, which must be the forecast's -- and while the holes leave more free
 * blocks than a plan records, the forecast is invalid and the frame is a
 * command in both arenas. */
static uint32_t window_word(uint32_t f, uint64_t i) { return (uint32_t)(f * 2654435761u) ^ (uint32_t)i; }

static void make_holes(wh_arena *a, wh_handle *small, bool second) {
    for (int i = 0; i < 12 && !second; ++i) {
        size_t b = 512;
        CHECK(wh_arena_alloc_async(a, &b, &small[i], NULL) == WH_OK);
    }
    for (int i = 0; i < 12; ++i)
        if ((i % 2 == 1) == second && small[i].ptr) CHECK(wh_arena_free_async(a, &small[i], NULL) == WH_OK);
    (void)status_if_any(a);
}

static void test_ring_posts(uint32_t k, uint32_t frames, uint64_t seed) {
    enum { NP = 4 };
    wh_arena_config cfg = ring_test_config(k, frames, seed);
    wh_arena *ref = NULL, *a = NULL;
    CHECK(wh_arena_create(&ref, &cfg) == WH_OK && wh_arena_create(&a, &cfg) == WH_OK);
    if (!ref || !a) return;
    wh_arena_ref r = wh_arena_device(a);
    wh__arena_state *rs = wh_arena_device(ref).s, *s = r.s;
    size_t meta = wh_arena_meta_bytes(a);
    uint64_t *scratch = (uint64_t *)malloc(meta);
    wh_arena_span r_ring[WH_ARENA_FORECAST_SLOTS], ring[WH_ARENA_FORECAST_SLOTS], win;
    wh_handle small[12], r_small[12];
    wh_arena_ring_post post[NP];
    wh_arena_forecast fc;
    memset(r_ring, 0, sizeof r_ring);
    memset(ring, 0, sizeof ring);
    memset(small, 0, sizeof small);
    memset(r_small, 0, sizeof r_small);
    memset(post, 0, sizeof post);
    memset(&fc, 0, sizeof fc);
    uint32_t consumed = 0, flag = 0;
    wh_arena_ring_posts posts = {post, NP, 0, &consumed, 36, &fc, &win, &flag, 0};
    wh_arena_commit c = {.mode = WH_ARENA_COMMIT_POSTS,
                         .ring = ring,
                         .k = k,
                         .tries = 1,
                         .smem = scratch,
                         .smem_bytes = meta,
                         .posts = &posts};
    uint64_t rbase = (uintptr_t)wh_arena_base(ref), base = (uintptr_t)wh_arena_base(a);
    uint64_t remade = 0, unforecast = 0, two = 0, clamped = 0, failed = 0, holes = 0;
    for (uint32_t f = 0; f < frames; ++f) {
        uint32_t slot = f % k;
        size_t n = (size_t)reserve_count(seed, f);
        holes += f % 500 >= 200 && f % 500 < 350; /* more free blocks than a plan records */
        if (f % 97 == 96) CHECK(wh_arena_flush_async(ref, NULL) == WH_OK && wh_arena_flush_async(a, NULL) == WH_OK);
        if (f % 500 == 200 || f % 500 == 350) {
            make_holes(ref, r_small, f % 500 == 350);
            make_holes(a, small, f % 500 == 350);
        }
        c.first = slot;
        posts.f0 = f;
        if (!wh_arena_ring_forecast_current(&fc, r)) { /* a chain of no post: the forecast from the real state */
            flag = 0;
            posts.w_value = f + 1u;
            c.frames = 0;
            CHECK(wh_arena_ring_commit(r, &c) == WH_OK && consumed == f && flag == f + 1u);
            remade++;
            CHECK(wh_arena_ring_forecast_current(&fc, r) == (fc.valid != 0));
            CHECK(!fc.valid || (fc.nfree <= WH_ARENA_FORECAST_FREE && fc.k == k)); /* what it follows */
            wh_arena_span fw;
            wh_arena_ring_forecast_window(&fc, slot, 36, &fw); /* the committer's window, forecast */
            CHECK(!fc.valid || (fw.part[0].ptr == win.part[0].ptr && fw.part[1].ptr == win.part[1].ptr &&
                                fw.count0 == win.count0 && fw.count == win.count));
        }
        if (!fc.valid) { /* more free blocks than it follows: a command in both arenas */
            unforecast++;
            CHECK(wh_arena_replace_span_async(ref, &n, 36, &r_ring[slot], NULL) == WH_OK);
            CHECK(wh_arena_replace_span_async(a, &n, 36, &ring[slot], NULL) == WH_OK);
            CHECK(status_if_any(ref) == status_if_any(a));
            expect_same_span(&r_ring[slot], rbase, &ring[slot], base);
            continue;
        }
        wh_arena_span w, fs;
        wh_arena_ring_forecast_window(&fc, slot, 36, &w);
        uint64_t np = n < w.count ? n : w.count; /* what the producers could write */
        for (uint64_t i = 0; i < np; ++i) *(uint32_t *)wh_arena_span_at(&w, i, 36) = window_word(f, i);
        two += np > w.count0;
        wh_status fst = wh_arena_ring_forecast_replace(&fc, slot, np, 36, &fs);
        CHECK(fst != WH_ERR_CORRUPT); /* it follows the ring it was made from */
        wh_arena_ring_post *p = &post[f % NP];
        p->count = np;
        p->clamped = np < n;
        p->fstatus = (uint32_t)fst;
        p->forecast = fs;
        wh_atomic_store(&p->seq, f + 1u, WH_RELEASE);
        c.frames = 1;
        wh_status got = wh_arena_ring_commit(r, &c);
        CHECK(consumed == f + 1u && wh_arena_ring_forecast_current(&fc, r)); /* stamped exact */
        size_t nr = (size_t)np;
        CHECK(wh_arena_replace_span_async(ref, &nr, 36, &r_ring[slot], NULL) == WH_OK);
        wh_status want = status_if_any(ref);
        wh_status expect = want != WH_OK ? want : np < n ? WH_ERR_OUT_OF_MEMORY : WH_OK;
        CHECK(got == expect && status_if_any(a) == expect);
        clamped += got == WH_ERR_OUT_OF_MEMORY;
        failed += want != WH_OK;
        const wh_arena_span *x = &r_ring[slot], *y = &ring[slot];
        expect_same_span(x, rbase, y, base);
        if (want == WH_OK) { /* where the forecast said; what went through the window is in the slot */
            CHECK(y->part[0].ptr == fs.part[0].ptr && y->part[1].ptr == fs.part[1].ptr && y->count0 == fs.count0);
            CHECK(y->count == np);
            for (uint64_t i = 0; i < np; i += 1u + i % 7u)
                CHECK(*(uint32_t *)wh_arena_span_at(y, i, 36) == window_word(f, i));
            if (np) CHECK(*(uint32_t *)wh_arena_span_at(y, np - 1u, 36) == window_word(f, np - 1u));
        }
        CHECK(memcmp((char *)rs + rs->gen_off, (char *)s + s->gen_off, meta - s->gen_off) == 0);
        if (f % 15 == 4) expect_walk_ok(a);
    }
    printf("ring posts, K=%u: %u frames, forecast made %llu times, %llu frames unforecast, %llu over two extents, "
           "%llu clamped, %llu failed\n",
           k, frames, (unsigned long long)remade, (unsigned long long)unforecast, (unsigned long long)two,
           (unsigned long long)clamped, (unsigned long long)failed);
    /* the forecast follows every frame outside the holes' stretches */
    CHECK(remade > 1 && unforecast > 0 && unforecast <= holes && (k == 1 || two > 0) && clamped > 0 && failed > 0);
    expect_walk_ok(a);
    free(scratch);
    wh_arena_destroy(ref);
    wh_arena_destroy(a);
}

/* A post that is not the core's answer (a forecast gone wrong): the commit
 * writes the core's span to the slot all the same, so the ring stays in
 * order, but reports WH_ERR_CORRUPT (counted, mirrored): the elements were
 * written elsewhere.  An invalid forecast, or one asked past its slots,
 * gives an empty window and WH_ERR_CORRUPT from a replace; POSTS without
 * posts or without room for the image is refused; a post that never comes
 * stops the chain (WH_ERR_RETRY_LIMIT, counted) and frees the lock. */
static void test_ring_posts_wrong(void) {
    wh_arena *a = NULL;
    wh_arena_config cfg = {.bytes = 1 << 20,
                           .max_blocks = 64,
                           .backend = WH_ARENA_CPU,
                           .policy = WH_ARENA_RING,
                           .mirror = WH_ARENA_MIRROR_ON_FAILURE};
    CHECK(wh_arena_create(&a, &cfg) == WH_OK);
    if (!a) return;
    wh_arena_ref r = wh_arena_device(a);
    size_t meta = wh_arena_meta_bytes(a);
    void *scratch = malloc(meta);
    wh_arena_span ring[2], win, fw, fs;
    wh_arena_ring_post post[2];
    wh_arena_forecast fc;
    memset(ring, 0, sizeof ring);
    memset(post, 0, sizeof post);
    memset(&fc, 0, sizeof fc);
    wh_arena_ring_forecast_window(&fc, 0, 36, &fw);
    CHECK(fw.count == 0 && wh_arena_ring_forecast_replace(&fc, 0, 10, 36, &fw) == WH_ERR_CORRUPT);
    CHECK(!wh_arena_ring_forecast_current(&fc, r));
    uint32_t consumed = 0, flag = 0;
    wh_arena_ring_posts posts = {post, 2, 0, &consumed, 36, &fc, &win, &flag, 1};
    wh_arena_commit c = {
        .mode = WH_ARENA_COMMIT_POSTS, .ring = ring, .k = 2, .tries = 3, .smem = scratch, .smem_bytes = meta};
    CHECK(wh_arena_ring_commit(r, &c) == WH_ERR_INVALID_ARGUMENT); /* no posts */
    c.posts = &posts;
    c.smem_bytes = 8;
    CHECK(wh_arena_ring_commit(r, &c) == WH_ERR_INVALID_ARGUMENT); /* no room for the image */
    c.smem_bytes = meta;
    CHECK(wh_arena_ring_commit(r, &c) == WH_OK && flag == 1u && fc.valid && win.count > 1000);
    CHECK(wh_arena_ring_forecast_current(&fc, r));
    wh_arena_ring_forecast_window(&fc, 0, 36, &fw);
    CHECK(fw.part[0].ptr == win.part[0].ptr && fw.count == win.count);
    CHECK(wh_arena_ring_forecast_replace(&fc, 0, 1000, 36, &fs) == WH_OK);
    uint64_t real = fs.part[0].ptr;
    fs.part[0].ptr += 256; /* the writes went 256 bytes further */
    post[0].count = 1000;
    post[0].fstatus = WH_OK;
    post[0].forecast = fs;
    post[0].seq = 1;
    c.frames = 1;
    CHECK(wh_arena_ring_commit(r, &c) == WH_ERR_CORRUPT);
    CHECK(ring[0].count == 1000 && ring[0].part[0].ptr == real && consumed == 1u); /* the core's span */
    CHECK(wh_arena_status(a) == WH_ERR_CORRUPT);                                   /* mirrored by the commit */
    CHECK(wh_arena_clear_status_async(a, NULL) == WH_OK);
    posts.f0 = 1; /* post 1 never comes */
    c.first = 1;
    CHECK(wh_arena_ring_commit(r, &c) == WH_ERR_RETRY_LIMIT && consumed == 1u);
    CHECK(wh_atomic_load(&r.s->lock, WH_RELAXED) == 0u);
    CHECK(wh_arena_flush_async(a, NULL) == WH_OK && wh_arena_status(a) == WH_ERR_RETRY_LIMIT);
    CHECK(wh_arena_clear_status_async(a, NULL) == WH_OK);
    CHECK(wh_arena_ring_forecast_replace(&fc, 2, 10, 36, &fs) == WH_ERR_CORRUPT && !fc.valid); /* no slot 2 */
    expect_walk_ok(a);
    free(scratch);
    wh_arena_destroy(a);
}

/* A reserve whose begin cannot take the lock (a commit missing or late):
 * WH_ERR_RETRY_LIMIT after its bounded tries, counted, the slot untouched,
 * no reservation in flight, end does nothing; once the lock is free the
 * next reserve works. */
static void test_ring_begin_locked(void) {
    wh_arena *a = NULL;
    wh_arena_config cfg = {.bytes = 1 << 20, .max_blocks = 64, .backend = WH_ARENA_CPU, .policy = WH_ARENA_RING};
    CHECK(wh_arena_create(&a, &cfg) == WH_OK);
    if (!a) return;
    wh_arena_ref r = wh_arena_device(a);
    wh_arena_span ring[2];
    memset(ring, 0, sizeof ring);
    CHECK(wh_arena_ring_reserve_thread(r, 1000, 36, &ring[0], &ring[1]) == WH_OK); /* holds the lock */
    wh_arena_span before = ring[1];
    wh_arena_ring_ticket tk;
    CHECK(wh_arena_ring_reserve_begin(r, &ring[1], 5, &tk) == WH_ERR_RETRY_LIMIT);
    CHECK(wh_arena_ring_reserve_end(r, &tk, 1000, 36, &ring[0]) == WH_ERR_RETRY_LIMIT);
    CHECK(memcmp(&before, &ring[1], sizeof before) == 0 && !wh__ring_pending_for(r.s, &ring[1]));
    CHECK(wh__ring_pending_for(r.s, &ring[0])); /* the first one still in flight */
    CHECK(commit_now(r, &ring[0], NULL, 0, wh_arena_ring_unlock_baton()) == WH_OK);
    wh_arena_stats st; /* a failure without the lock: seen at the next command */
    CHECK(wh_arena_flush_async(a, NULL) == WH_OK);
    CHECK(wh_arena_status(a) == WH_ERR_RETRY_LIMIT && wh_arena_stats_get(a, &st) == WH_OK && st.failures == 1);
    CHECK(wh_arena_clear_status_async(a, NULL) == WH_OK);
    CHECK(wh_arena_ring_reserve_begin(r, &ring[1], 5, &tk) == WH_OK);
    CHECK(wh_arena_ring_reserve_end(r, &tk, 2000, 36, &ring[0]) == WH_OK && ring[1].count == 2000);
    CHECK(commit_now(r, &ring[1], NULL, 0, wh_arena_ring_unlock_baton()) == WH_OK && wh_arena_status(a) == WH_OK);
    expect_walk_ok(a);
    wh_arena_destroy(a);
}

/* WH_ARENA_COMMIT_AHEAD's edges, by one thread: bad input (no ring, k = 0)
 * changes nothing; no frame is WH_OK; a frame whose reservation never comes
 * passes `empty` on and reports WH_ERR_RETRY_LIMIT; frames committed one
 * chain of one at a time, with f0 picking the slot, match a twin that ran
 * the same replaces as commands (the stress test runs long chains). */
static void test_ring_chain_edges(void) {
    enum { K = 3, FRAMES = 40 };
    wh_arena_config cfg = {
        .bytes = 1 << 20, .max_blocks = 64, .backend = WH_ARENA_CPU, .policy = WH_ARENA_RING, .index = WH_BLOCKS_LIST};
    wh_arena *a = NULL, *ref = NULL;
    CHECK(wh_arena_create(&a, &cfg) == WH_OK && wh_arena_create(&ref, &cfg) == WH_OK);
    if (!a || !ref) return;
    wh_arena_ref r = wh_arena_device(a);
    size_t meta = wh_arena_meta_bytes(a);
    void *scratch = malloc(2 * meta);
    wh_arena_span ring[K], r_ring[K];
    memset(ring, 0, sizeof ring);
    memset(r_ring, 0, sizeof r_ring);
    uint32_t baton = 0;
    wh_arena_ring_baton b = {&baton, 1u, 2u}, none = wh_arena_ring_unlock_baton();
    CHECK(commit_ahead(r, NULL, K, 0, 1, scratch, 2 * meta, 1, b, none) == WH_ERR_INVALID_ARGUMENT);
    wh_arena_commit bad = {.mode = (wh_arena_commit_mode)7, .ring = ring, .k = K}; /* an unknown mode */
    CHECK(wh_arena_ring_commit(r, &bad) == WH_ERR_INVALID_ARGUMENT &&
          wh_arena_ring_commit(r, NULL) == WH_ERR_INVALID_ARGUMENT);
    CHECK(commit_ahead(r, ring, 0, 0, 1, scratch, 2 * meta, 1, b, none) == WH_ERR_INVALID_ARGUMENT && baton == 0u);
    CHECK(commit_ahead(r, ring, K, 0, 0, scratch, 2 * meta, 1, b, none) == WH_OK);
    CHECK(commit_ahead(r, ring, K, 0, 1, scratch, 2 * meta, 3, b, b) == WH_ERR_RETRY_LIMIT &&
          baton == 2u); /* nothing came: `empty` */
    uint64_t rbase = (uintptr_t)wh_arena_base(ref), base = (uintptr_t)wh_arena_base(a);
    for (uint32_t f = 0; f < FRAMES; ++f) {
        size_t n = 500 + (size_t)(wh_hash64(f) % 3000u);
        CHECK(wh_arena_ring_reserve_thread(r, n, 36, &ring[f % K], &ring[(f + 1) % K]) == WH_OK);
        CHECK(commit_ahead(r, ring, K, f, 1, scratch, 2 * meta, 1, b, none) == WH_OK);
        CHECK(wh_arena_replace_span_async(ref, &n, 36, &r_ring[f % K], NULL) == WH_OK);
        for (int p = 0; p < 2; ++p) {
            const wh_handle *x = &r_ring[f % K].part[p], *y = &ring[f % K].part[p];
            CHECK((x->ptr ? x->ptr - rbase : 0) == (y->ptr ? y->ptr - base : 0) && x->block == y->block &&
                  x->gen == y->gen);
        }
    }
    CHECK(wh_atomic_load(&r.s->lock, WH_RELAXED) == 0u); /* each chain of one unlocked */
    expect_walk_ok(a);
    free(scratch);
    wh_arena_destroy(ref);
    wh_arena_destroy(a);
}

/* WH_ARENA_MIRROR_ON_FAILURE: successful commands leave the mirror as it
 * was, a failure shows at once (status and counters), flush brings it up to
 * date, clear still clears; the state itself is always current (walk). */
static void test_mirror_on_failure(void) {
    wh_arena *a = NULL;
    wh_arena_config cfg = {.bytes = 1 << 20,
                           .max_blocks = 64,
                           .backend = WH_ARENA_CPU,
                           .policy = WH_ARENA_RING,
                           .mirror = WH_ARENA_MIRROR_ON_FAILURE};
    CHECK(wh_arena_create(&a, &cfg) == WH_OK);
    wh_arena_span ring[3];
    memset(ring, 0, sizeof ring);
    for (uint32_t f = 0; f < 30; ++f) {
        size_t n = 1000 + f * 37u;
        CHECK(wh_arena_replace_span_async(a, &n, 36, &ring[f % 3], NULL) == WH_OK);
    }
    wh_arena_stats st;
    CHECK(wh_arena_stats_get(a, &st) == WH_OK && st.commands == 0 && st.allocs == 0); /* not written yet */
    CHECK(wh_arena_status(a) == WH_OK);
    size_t huge = 1u << 20;                                                    /* does not fit */
    CHECK(wh_arena_replace_span_async(a, &huge, 36, &ring[0], NULL) == WH_OK); /* enqueued; fails when run */
    CHECK(wh_arena_status(a) == WH_ERR_TOO_LARGE);
    CHECK(wh_arena_stats_get(a, &st) == WH_OK);
    printf("mirror on failure: failures %llu commands %llu allocs %llu frees %llu live %llu\n",
           (unsigned long long)st.failures, (unsigned long long)st.commands, (unsigned long long)st.allocs,
           (unsigned long long)st.frees, (unsigned long long)st.live_blocks);
    CHECK(st.failures == 1 && st.commands == 31 && st.allocs >= 30);
    size_t n = 500;
    CHECK(wh_arena_replace_span_async(a, &n, 36, &ring[0], NULL) == WH_OK);
    CHECK(wh_arena_stats_get(a, &st) == WH_OK && st.commands == 31);
    uint64_t allocs_then = st.allocs;
    CHECK(wh_arena_flush_async(a, NULL) == WH_OK);
    CHECK(wh_arena_stats_get(a, &st) == WH_OK && st.commands == 33 && st.allocs > allocs_then);
    CHECK(st.live_blocks == st.allocs - st.frees && st.live_blocks >= 3);
    CHECK(wh_arena_clear_status_async(a, NULL) == WH_OK && wh_arena_status(a) == WH_OK);
    expect_walk_ok(a);
    wh_arena_destroy(a);
}

/* The device-side functions, one host thread. */
static void test_warp_api(void) {
    enum { K = 256 };
    wh_arena *a = make(4u << 20, 1024, WH_BLOCKS_TLSF);
    static wh_handle slots[K];
    static uint64_t bytes[K], strides[K];
    memset(slots, 0, sizeof slots);
    wh_fuzz_counts c = {0, 0, 0, 0};
    wh_fuzz_thread(wh_arena_device(a), 1u, 0, K, 20000, 4096, slots, bytes, strides, &c);
    CHECK_EQ_U64(c.failed_frees, 0);
    CHECK(c.allocs > 1000 && c.frees > 1000);
    uint64_t live = 0;
    CHECK_EQ_U64(wh_arena_oracle(slots, bytes, strides, K, (uintptr_t)wh_arena_base(a), 4u << 20, &live, NULL), 0);
    wh_blocks_report rep;
    CHECK(wh_arena_check(a, &rep) == WH_OK);
    CHECK_EQ_U64(rep.used, live);
    CHECK(c.failed_allocs > 0 || wh_arena_status(a) == WH_OK);
    take_status(a);
    wh_handle h = wh_arena_alloc_warp(wh_arena_device(a), 0, 4);
    CHECK(h.ptr == 0 && wh_arena_status(a) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_arena_free_warp(wh_arena_device(a), &h) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_arena_get_backend(a) == WH_ARENA_CPU);
    take_status(a);
    { /* the lock held elsewhere: the call gives up after WH_ARENA_LOCK_TRIES tries, counted */
        wh__arena_state *s = wh_arena_device(a).s;
        s->lock = 1u;
        wh_handle late = wh_arena_alloc_warp(wh_arena_device(a), 1, 16);
        s->lock = 0u;
        CHECK(late.ptr == 0 && WH_ARENA_LOCK_TRIES >= 1024u);
        CHECK(wh_arena_flush_async(a, NULL) == WH_OK && wh_arena_status(a) == WH_ERR_RETRY_LIMIT);
        take_status(a);
    }
    { /* AUTO: CUDA where a GPU is, else CPU in a CPU build; a CUDA build without a GPU refuses */
        wh_arena *auto_a = NULL;
        wh_arena_config cfg = {.bytes = 1 << 16, .backend = WH_ARENA_AUTO};
        wh_status st = wh_arena_create(&auto_a, &cfg);
        if (st == WH_OK)
            CHECK(wh_arena_get_backend(auto_a) == (wh_cuda_available() ? WH_ARENA_CUDA : WH_ARENA_CPU));
        else
            CHECK(st == WH_ERR_NO_DEVICE && WH_HAVE_CUDA && !wh_cuda_available());
        wh_arena_destroy(auto_a);
    }
    { /* the explicit mask: this thread's lane */
        uint32_t mask = wh_active_mask();
        wh_handle m = wh_arena_alloc_mask(wh_arena_device(a), mask, 10, 24);
        CHECK(m.ptr != 0 && (m.ptr - (uintptr_t)wh_arena_base(a)) % 24u == 0);
        CHECK(wh_arena_free_mask(wh_arena_device(a), mask, &m) == WH_OK && m.ptr == 0);
        CHECK(wh_arena_free_mask(wh_arena_device(a), mask, &m) == WH_ERR_INVALID_ARGUMENT);
    }
    wh_arena_destroy(a);
    wh_arena *ra = make_policy(1u << 20, 64, WH_BLOCKS_LIST, WH_ARENA_RING); /* a span replace by one thread */
    wh_arena_span sp;
    memset(&sp, 0, sizeof sp);
    CHECK(wh_arena_replace_span_thread(wh_arena_device(ra), 100, 36, &sp) == WH_OK && sp.count == 100);
    CHECK(sp.part[0].ptr != 0 && wh_arena_status(ra) == WH_OK);
    CHECK(wh_arena_replace_span_thread(wh_arena_device(ra), 0, 36, &sp) == WH_ERR_INVALID_ARGUMENT);
    CHECK(sp.part[0].ptr == 0 && wh_arena_status(ra) == WH_ERR_INVALID_ARGUMENT); /* the old span freed */
    expect_walk_ok(ra);
    wh_arena_destroy(ra);
}

/* A span over a plain buffer reaches every element of it, like a one-extent arena span. */
static void test_span_of(void) {
    float buf[64];
    wh_arena_span sp = wh_arena_span_of(buf);
    CHECK(sp.part[1].ptr == 0 && sp.count0 == sp.count);
    for (uint64_t i = 0; i < 64; i += 7) CHECK(wh_arena_span_at(&sp, i, sizeof(float)) == (void *)&buf[i]);
    CHECK(wh_arena_span_at(&sp, 5, 36) == (void *)((char *)buf + 180));
}

int main(int argc, char **argv) {
    uint32_t commands = 40000;
    wh_cli_opt cli[] = {WH_CLI_UINT("commands", &commands, "commands of each random sequence"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Stream arena on the CPU backend: the command code run in stream order.");
    test_create_errors();
    test_bad_requests();
    test_exhaustion(WH_BLOCKS_TLSF);
    test_exhaustion(WH_BLOCKS_MAXHEAP);
    test_arith();
    test_strides();
    test_random_commands(WH_BLOCKS_TLSF, WH_ARENA_BEST_FIT, commands, 1);
    test_random_commands(WH_BLOCKS_MAXHEAP, WH_ARENA_BEST_FIT, commands, 2);
    test_random_commands(WH_BLOCKS_TLSF, WH_ARENA_RING, commands, 3);
    test_random_commands(WH_BLOCKS_LIST, WH_ARENA_RING, commands, 4);
    test_random_commands(WH_BLOCKS_LIST, WH_ARENA_BEST_FIT, commands / 4, 5); /* LIST's alloc scans */
    for (uint32_t k = 1; k <= 5; ++k) test_ring_spans(k, 2000, k);
    for (uint32_t k = 1; k <= 5; ++k) test_ring_reserve(k, 3000, 100u + k);
    for (uint32_t k = 1; k <= 5; ++k) test_ring_posts(k, 2000, 300u + k);
    test_ring_posts_wrong();
    test_ring_begin_locked();
    test_ring_chain_edges();
    test_mirror_on_failure();
    test_replace();
    test_warp_api();
    test_span_of();
    return wh_test_finish("test_arena");
}
