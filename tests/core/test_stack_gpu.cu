/* SPDX-License-Identifier: MIT */
/* The parts stacked on one reservation, on the GPU: the host pool hands out
 * three guarded blocks of device memory; every heap kind is made in the first
 * in turn and used by a kernel, then a DEFAULT device heap, an object heap and
 * a stream arena are made in the three (their `region`); kernels allocate and
 * free in the heap and the object heap, parallel_new / parallel_do run in the
 * object heap, and arena commands turn two slots over while kernels fill and
 * check them; every part's walk is sound, no guard byte changed, and teardown
 * leaves the pool consistent.  Bad regions, also of the wrong memory kind
 * (host memory for a device part, device memory for a host part), are refused
 * with their cause named and leave the blocks as they were.  Exits 77 without
 * a GPU. */
#include "stack.h"
#include "warpheap/cuda_check.h"

#define HEAP_BYTES   (256u << 20)
#define SOA_BYTES    (32u << 20)
#define ARENA_BYTES  (4u << 20)
#define THREADS      4096u
#define ROUNDS       8u
#define KIND_THREADS 1024u
#define ARENA_ROUNDS 64u
#define ARENA_MAX    (64u << 10) /* words of one arena allocation at most */

static void dev_read(void *dst, const void *src, size_t n) {
    WH_CUDA_OR_DIE(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
}
static void dev_fill(void *dst, int byte, size_t n) {
    WH_CUDA_OR_DIE(cudaMemset(dst, byte, n));
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
}
static const stack_mem dev_mem = {dev_read, dev_fill};

static __global__ void heap_kernel(wh_heap h, uint32_t rounds, uint64_t *c) {
    stack_heap_work(&h, blockIdx.x * blockDim.x + threadIdx.x, rounds, c);
}
static __global__ void soa_kernel(wh_soa s, uint32_t rounds, uint64_t *c) {
    stack_soa_work(&s, blockIdx.x * blockDim.x + threadIdx.x, rounds, c);
}

/* One 64-byte block a thread, written and read back, freed unless the kind
 * never frees; c: [allocations, failures, bad]. */
static __global__ void kind_kernel(wh_heap h, bool frees, uint64_t *c) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t *p = (uint32_t *)wh_malloc(&h, 64);
    if (!p) {
        (void)wh_atomic_fetch_add(&c[STACK_FAILS], 1ull, WH_RELAXED);
        return;
    }
    p[0] = p[15] = t;
    uint64_t bad = (uint8_t *)p < h.base || (uint8_t *)p + 64 > h.base + h.bytes || p[0] != t || p[15] != t;
    (void)wh_atomic_fetch_add(&c[STACK_ALLOCS], 1ull, WH_RELAXED);
    (void)wh_atomic_fetch_add(&c[STACK_BAD], bad, WH_RELAXED);
    if (frees) wh_free(&h, p);
}

/* The arena's slot: count words, word i = tag ^ i (fill), or checked against
 * it (check); the slot must lie in [lo, hi).  Grid-stride, bounded by count. */
static __global__ void arena_kernel(const wh_handle *slot, const size_t *count, uint32_t tag, bool fill,
                                    const uint8_t *lo, const uint8_t *hi, uint64_t *bad) {
    uint32_t *p = (uint32_t *)wh_handle_ptr(slot);
    size_t n = *count, i0 = blockIdx.x * blockDim.x + threadIdx.x;
    if (!p || (const uint8_t *)p < lo || (const uint8_t *)(p + n) > hi) {
        if (i0 == 0) (void)wh_atomic_fetch_add(bad, 1ull, WH_RELAXED);
        return;
    }
    uint64_t wrong = 0;
    for (size_t i = i0; i < n; i += (size_t)gridDim.x * blockDim.x) {
        if (fill)
            p[i] = tag ^ (uint32_t)i;
        else
            wrong += p[i] != (tag ^ (uint32_t)i);
    }
    if (wrong) (void)wh_atomic_fetch_add(bad, wrong, WH_RELAXED);
}

static uint64_t *counters(void) {
    uint64_t *d = NULL;
    WH_CUDA_OR_DIE(cudaMalloc(&d, STACK_COUNTERS * sizeof *d));
    WH_CUDA_OR_DIE(cudaMemset(d, 0, STACK_COUNTERS * sizeof *d));
    return d;
}
static void read_counters(uint64_t *d, uint64_t *c) {
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    WH_CUDA_OR_DIE(cudaMemcpy(c, d, STACK_COUNTERS * sizeof *c, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemset(d, 0, STACK_COUNTERS * sizeof *d));
}

/* Every heap kind in the heap's block: made, used by a kernel, walked,
 * destroyed; the guards intact. */
static void every_kind(const stack_block *hb, uint64_t *d_c) {
    for (uint32_t k = 0; k < WH_HEAP_KIND_COUNT; ++k) {
        wh_heap h;
        wh_heap_config cfg = {hb->bytes, (wh_heap_kind)k, 0, 0, 0, hb->region};
        wh_status st = wh_heap_create(&h, &cfg);
        CHECK(st == WH_OK);
        if (st != WH_OK) {
            fprintf(stderr, "%s: %s\n", wh_heap_kind_name((wh_heap_kind)k), wh_last_error());
            continue;
        }
        kind_kernel<<<KIND_THREADS / 256u, 256u>>>(h, k != WH_HEAP_BUMP && k != WH_HEAP_WRAP, d_c);
        WH_LAUNCH_OR_DIE();
        uint64_t c[STACK_COUNTERS];
        read_counters(d_c, c);
        CHECK_EQ_U64(c[STACK_ALLOCS] + c[STACK_FAILS], KIND_THREADS);
        CHECK(c[STACK_ALLOCS] > 0);
        CHECK_EQ_U64(c[STACK_BAD], 0);
        wh_heap_usage u;
        CHECK(wh_heap_stats(&h, &u) == WH_OK);
        CHECK_EQ_U64(u.inconsistencies, 0);
        CHECK(wh_heap_destroy(&h) == WH_OK);
        printf("  %s heap in the region: %llu-byte arena, %llu of %u threads got a block\n",
               wh_heap_kind_name((wh_heap_kind)k), (unsigned long long)u.heap_bytes,
               (unsigned long long)c[STACK_ALLOCS], KIND_THREADS);
    }
    CHECK_EQ_U64(stack_guard_damage(&dev_mem, hb), 0);
}

/* The wrong memory kind: a host part on device memory, a device part on host
 * memory; refused, nothing written. */
static void wrong_kinds(const stack_block *hb, const stack_block *sb) {
    const size_t host_bytes = 4u << 20;
    void *host = aligned_alloc(WH_SLAB_PAGE, host_bytes);
    if (!host) exit(1);
    wh_heap h;
    wh_heap_config hc = {hb->bytes, WH_HEAP_DEFAULT, WH_HEAP_HOST, 0, 0, hb->region};
    stack_refused(wh_heap_create(&h, &hc), WH_ERR_INVALID_ARGUMENT, "is device memory", "host heap on device memory");
    hc = {host_bytes, WH_HEAP_DEFAULT, 0, 0, 0, host};
    stack_refused(wh_heap_create(&h, &hc), WH_ERR_INVALID_ARGUMENT, "is host memory", "device heap on host memory");
    wh_soa s;
    wh_soa_type_desc types[] = {WH_SOA_TYPE(StackNode)};
    wh_soa_config sc = {sb->bytes, types, 1, false, 2, sb->region, false};
    stack_refused(wh_soa_create(&s, &sc), WH_ERR_INVALID_ARGUMENT, "is device memory",
                  "host object heap on device memory");
    sc = {host_bytes, types, 1, true, 2, host};
    stack_refused(wh_soa_create(&s, &sc), WH_ERR_INVALID_ARGUMENT, "is host memory",
                  "device object heap on host memory");
    free(host);
}

/* Arena commands on the default stream: two slots turn over, each freed and
 * allocated again with the next size (written on the GPU beforehand) and
 * filled by a kernel, the other checked meanwhile; then both freed. */
static void arena_work(wh_arena *a, const stack_block *ab) {
    size_t *d_count = NULL;
    wh_handle *d_slot = NULL;
    uint64_t *d_bad = NULL, bad = 0;
    size_t count[ARENA_ROUNDS];
    for (uint32_t r = 0; r < ARENA_ROUNDS; ++r) count[r] = 1u + (size_t)(wh_hash64(r) % ARENA_MAX);
    WH_CUDA_OR_DIE(cudaMalloc(&d_count, sizeof count));
    WH_CUDA_OR_DIE(cudaMalloc(&d_slot, 2 * sizeof *d_slot));
    WH_CUDA_OR_DIE(cudaMalloc(&d_bad, sizeof *d_bad));
    WH_CUDA_OR_DIE(cudaMemcpy(d_count, count, sizeof count, cudaMemcpyHostToDevice));
    WH_CUDA_OR_DIE(cudaMemset(d_bad, 0, sizeof *d_bad));
    wh_handle null2[2] = {wh_handle_null(), wh_handle_null()};
    WH_CUDA_OR_DIE(cudaMemcpy(d_slot, null2, sizeof null2, cudaMemcpyHostToDevice));
    const uint8_t *lo = ab->region, *hi = ab->region + ab->bytes;
    for (uint32_t r = 0; r < ARENA_ROUNDS; ++r) {
        uint32_t k = r % 2u;
        if (r > 0) {
            arena_kernel<<<16, 256>>>(&d_slot[1u - k], &d_count[r - 1u], (r - 1u) << 16, false, lo, hi, d_bad);
            WH_LAUNCH_OR_DIE();
        }
        if (r > 1) CHECK(wh_arena_free_async(a, &d_slot[k], NULL) == WH_OK);
        CHECK(wh_arena_alloc_strided_async(a, &d_count[r], sizeof(uint32_t), &d_slot[k], NULL) == WH_OK);
        arena_kernel<<<16, 256>>>(&d_slot[k], &d_count[r], r << 16, true, lo, hi, d_bad);
        WH_LAUNCH_OR_DIE();
    }
    CHECK(wh_arena_free_batch_async(a, d_slot, 2, NULL) == WH_OK);
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    WH_CUDA_OR_DIE(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
    CHECK_EQ_U64(bad, 0);
    CHECK(wh_arena_status(a) == WH_OK);
    printf("  arena: %u commands turned two slots over, %llu bad words\n", 2u * ARENA_ROUNDS, (unsigned long long)bad);
    WH_CUDA_OR_DIE(cudaFree(d_count));
    WH_CUDA_OR_DIE(cudaFree(d_slot));
    WH_CUDA_OR_DIE(cudaFree(d_bad));
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "The parts stacked on one host pool reservation, on the GPU.");
    if (!wh_cuda_available()) {
        printf("test_stack_gpu: no GPU, skipped\n");
        return WH_TEST_SKIP;
    }
    wh_pool *pool = NULL;
    wh_pool_config pc;
    memset(&pc, 0, sizeof pc);
    pc.backend = WH_POOL_CUDA;
    CHECK(wh_pool_create(&pool, &pc) == WH_OK);
    if (!pool) {
        fprintf(stderr, "pool: %s\n", wh_last_error());
        return wh_test_finish("test_stack_gpu");
    }
    stack_block hb = stack_carve(pool, &dev_mem, HEAP_BYTES, WH_SLAB_PAGE);
    stack_block sb = stack_carve(pool, &dev_mem, SOA_BYTES, WH_SOA_REGION_ALIGN);
    stack_block ab = stack_carve(pool, &dev_mem, ARENA_BYTES, 256);
    wh_pool_stats ps;
    CHECK(wh_pool_get_stats(pool, &ps) == WH_OK);
    printf("pool: %llu bytes reserved in %llu arena(s) for the three blocks\n", (unsigned long long)ps.reserved,
           (unsigned long long)ps.arenas);

    printf("bad regions:\n");
    wrong_kinds(&hb, &sb);
    stack_bad_regions(&dev_mem, &hb, 0, &sb, true, &ab, WH_ARENA_CUDA);
    uint64_t *d_c = counters(), c[STACK_COUNTERS];
    printf("every heap kind:\n");
    every_kind(&hb, d_c);

    printf("the stack:\n");
    wh_heap heap;
    wh_soa soa;
    wh_arena *arena = NULL;
    stack_make(&heap, &hb, 0, &soa, &sb, true, &arena, &ab, WH_ARENA_CUDA);
    heap_kernel<<<THREADS / 256u, 256u>>>(heap, ROUNDS, d_c);
    WH_LAUNCH_OR_DIE();
    read_counters(d_c, c);
    uint64_t heap_fails = c[STACK_FAILS];
    printf("  heap: %llu allocations, %llu failed\n", (unsigned long long)c[STACK_ALLOCS],
           (unsigned long long)heap_fails);
    CHECK_EQ_U64(c[STACK_ALLOCS] + c[STACK_FAILS], THREADS * ROUNDS * STACK_HELD);
    CHECK(c[STACK_ALLOCS] > 0);
    CHECK_EQ_U64(c[STACK_BAD], 0);
    soa_kernel<<<THREADS / 256u, 256u>>>(soa, ROUNDS, d_c);
    WH_LAUNCH_OR_DIE();
    read_counters(d_c, c);
    printf("  objects: %llu, %llu failed\n", (unsigned long long)c[STACK_ALLOCS], (unsigned long long)c[STACK_FAILS]);
    CHECK_EQ_U64(c[STACK_ALLOCS] + c[STACK_FAILS], THREADS * ROUNDS * STACK_HELD);
    CHECK(c[STACK_ALLOCS] > 0);
    CHECK_EQ_U64(c[STACK_BAD], 0);
    stack_soa_bulk(&soa);
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    arena_work(arena, &ab);
    stack_walks(&heap, &soa, arena, pool, heap_fails);
    stack_block *blocks[3] = {&hb, &sb, &ab};
    stack_unmake(&dev_mem, pool, &heap, &soa, arena, blocks);
    CHECK(wh_pool_destroy(pool) == WH_OK);
    WH_CUDA_OR_DIE(cudaFree(d_c));
    return wh_test_finish("test_stack_gpu");
}
