/* SPDX-License-Identifier: MIT */
/* Fault injection (wh__fault_arm): the n-th request for memory from the
 * driver or the host fails -- alone, or with every later one (a device that
 * has run out) -- for every n a part's life makes.  Each failure
 * must come back as a clear status with a message; nothing may leak (the
 * AddressSanitizer job checks); a pool whose growth failed stays usable and
 * consistent once the driver gives memory again.  On the CPU backend, and on
 * the GPU too where one is present (the CUDA backend's calls: cudaMalloc,
 * cuMemCreate, cudaEventCreate, cudaHostAlloc). */
#include "warpheap/arena.h"
#include "warpheap/heap.h"
#include "warpheap/pool.h"
#include "warpheap/soa.h"
#include "wh_test.h"

#define MIB (1u << 20)

static bool clear_failure(wh_status st) {
    bool ok = (st == WH_ERR_OUT_OF_MEMORY || st == WH_ERR_CUDA || st == WH_ERR_UNSUPPORTED) && wh_last_error()[0];
    if (!ok) fprintf(stderr, "  unclear failure: %s / %s\n", wh_strerror(st), wh_last_error());
    return ok;
}

/* A pool's life: create, grow by many arenas or pieces (on two streams, one
 * block used on both, so events are recorded), free, trim, destroy.  Armed
 * with n; returns how many failures it met. */
static unsigned pool_life(wh_pool_backend backend, wh_pool_growth growth, long n, bool sticky) {
    wh_pool *p = NULL;
    wh_pool_config c = {.backend = backend,
                        .max_bytes = 256u * MIB,
                        .small_arena = 2u * MIB,
                        .medium_arena = 4u * MIB,
                        .growth = growth};
    wh__fault_arm(n, sticky);
    wh_status st = wh_pool_create(&p, &c);
    if (st != WH_OK) {
        wh__fault_arm(0, false);
        CHECK(p == NULL && clear_failure(st));
        return 1;
    }
    void *blk[24] = {0};
    unsigned failed = 0;
    wh_stream s1 = (wh_stream)0, s2 = (wh_stream)0;
    for (unsigned i = 0; i < 24; ++i) {
        st = wh_pool_try_alloc(p, (size_t)(1 + i % 5) * MIB, NULL, i & 1 ? s2 : s1, &blk[i]);
        if (st != WH_OK) {
            failed++;
            CHECK(blk[i] == NULL && clear_failure(st));
        } else if (i % 7 == 0)
            CHECK(wh_pool_record_stream(p, blk[i], s2) == WH_OK || clear_failure(WH_ERR_CUDA));
    }
    for (unsigned i = 0; i < 24; i += 2)
        if (blk[i]) {
            CHECK(wh_pool_free(p, blk[i], s1) == WH_OK);
            blk[i] = NULL;
        }
    wh__fault_arm(0, false); /* the driver gives again */
    CHECK(wh_pool_check(p) == WH_OK);
    void *again = wh_pool_alloc(p, 8u * MIB, s1); /* usable */
    CHECK(again != NULL);
    CHECK(wh_pool_free(p, again, s1) == WH_OK);
    for (unsigned i = 1; i < 24; i += 2)
        if (blk[i]) CHECK(wh_pool_free(p, blk[i], s2) == WH_OK);
    CHECK(wh_pool_check(p) == WH_OK);
    CHECK(wh_pool_trim(p, 0) == WH_OK);
    wh_pool_stats ps;
    CHECK(wh_pool_get_stats(p, &ps) == WH_OK);
    CHECK_EQ_U64(ps.in_use, 0);
    CHECK_EQ_U64(ps.reserved, 0);
    CHECK(wh_pool_destroy(p) == WH_OK);
    return failed;
}

static void pools(wh_pool_backend backend) {
    for (int g = 0; g < 4; ++g) {
        wh_pool_growth growth = g & 1 ? WH_POOL_GROW_VMM : WH_POOL_GROW_ARENAS;
        bool sticky = g >= 2;
        unsigned total = 0, clean = 0;
        long n = 1;
        for (; n < 200; ++n) { /* until lives meet no fault */
            unsigned f = pool_life(backend, growth, n, sticky);
            total += f;
            if (!f && ++clean == 3) break;
        }
        printf("pool (%s, %s, %s): %ld armed lives, %u failed calls\n", backend == WH_POOL_CPU ? "cpu" : "cuda",
               growth == WH_POOL_GROW_VMM ? "vmm" : "arenas", sticky ? "the n-th call on" : "the n-th call", n, total);
        CHECK(total > 0 && n < 200);
    }
}

static void heaps(bool host) {
    unsigned failed = 0;
    for (long n = 1; n <= 3; ++n) {
        wh_heap h;
        wh_heap_config c = {.bytes = 4u * MIB, .kind = WH_HEAP_DEFAULT, .flags = host ? WH_HEAP_HOST : 0u};
        wh__fault_arm(n, false);
        wh_status st = wh_heap_create(&h, &c);
        wh__fault_arm(0, false);
        if (st != WH_OK) {
            failed++;
            CHECK(clear_failure(st));
            continue;
        }
        CHECK(wh_heap_destroy(&h) == WH_OK);
    }
    printf("heap (%s): %u creations failed as armed\n", host ? "host" : "device", failed);
    CHECK_EQ_U64(failed, 2); /* the arena, then the metadata */
}

static void arenas(wh_arena_backend backend) {
    unsigned failed = 0;
    for (long n = 1; n <= 4; ++n) {
        wh_arena *a = NULL;
        wh_arena_config c = {.bytes = MIB, .backend = backend};
        wh__fault_arm(n, false);
        wh_status st = wh_arena_create(&a, &c);
        wh__fault_arm(0, false);
        if (st != WH_OK) {
            failed++;
            CHECK(a == NULL && clear_failure(st));
            continue;
        }
        CHECK(wh_arena_destroy(a) == WH_OK);
    }
    printf("arena (%s): %u creations failed as armed\n", backend == WH_ARENA_CPU ? "cpu" : "cuda", failed);
    /* region, metadata image, mirror; on CUDA also the device copy of the metadata */
    CHECK_EQ_U64(failed, backend == WH_ARENA_CPU ? 3 : 4);
}

/* clang-format off */
#define F_FIELDS(F) F(uint32_t, v)
/* clang-format on */
WH_SOA_CLASS(F, 0, F_FIELDS)

static void soas(bool on_device) {
    unsigned failed = 0;
    for (long n = 1; n <= 2; ++n) {
        wh_soa s;
        wh_soa_type_desc t[] = {WH_SOA_TYPE(F)};
        wh_soa_config c = {MIB, t, 1, on_device, 2, NULL, false};
        wh__fault_arm(n, false);
        wh_status st = wh_soa_create(&s, &c);
        wh__fault_arm(0, false);
        if (st != WH_OK) {
            failed++;
            CHECK(clear_failure(st));
            continue;
        }
        CHECK(wh_soa_destroy(&s) == WH_OK);
    }
    printf("object heap (%s): %u creations failed as armed\n", on_device ? "device" : "host", failed);
    CHECK_EQ_U64(failed, 1);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Fault injection (wh__fault_arm).");
    pools(WH_POOL_CPU);
    heaps(true);
    arenas(WH_ARENA_CPU);
    soas(false);
    if (wh_cuda_available()) {
        pools(WH_POOL_CUDA);
        heaps(false);
        arenas(WH_ARENA_CUDA);
        soas(true);
    } else {
        printf("no GPU: the CUDA backend's error paths not run here\n");
    }
    return wh_test_finish("test_faults");
}
