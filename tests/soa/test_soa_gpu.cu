/* SPDX-License-Identifier: MIT */
/* Object allocator on the GPU: the stress loop of soa_stress.h on a full grid
 * (every lane draws its own operation and type: heavy divergence; allocation
 * groups form by match_any inside divergent branches), on a roomy heap and on a
 * heap too small for the load (exhaustion must give null pointers, not hangs);
 * then the same end-of-run verdict as the CPU test: objects intact, no pointer
 * held twice, heap invariants, per-type counts, and parallel_do visiting every
 * live object exactly once, also while objects replace themselves; and
 * placement keys keeping each key's objects in blocks of their own.
 * --small: sanitizer size. */
#include "soa_stress.h"
#include "wh_cli.h"
#include "wh_test.h"

#include <algorithm>
#include <vector>

/* Destroy: WH_ERR_IN_USE exactly when objects are still live; either way
 * everything is released. */
static void destroy_checked(wh_soa *s) {
    uint64_t objects = 0, slots = 0;
    CHECK(wh_soa_usage(s, &objects, &slots) == WH_OK);
    CHECK(wh_soa_destroy(s) == (objects ? WH_ERR_IN_USE : WH_OK));
}

static __global__ void stress_kernel(wh_soa s, uint32_t threads, uint32_t ops, uint64_t *held, uint64_t *tags,
                                     uint32_t cap, uint32_t *n, soa_stress_counts *tot) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    soa_stress_counts c = {0, 0, 0, 0};
    uint32_t h = 0;
    soa_stress_thread(&s, t, ops, held + (size_t)t * cap, tags + (size_t)t * cap, cap, &h, &c);
    n[t] = h;
    atomicAdd(&tot->allocs, c.allocs);
    atomicAdd(&tot->frees, c.frees);
    atomicAdd(&tot->fails, c.fails);
    atomicAdd(&tot->corrupt, c.corrupt);
}

/* Objects held whose visit count is not exactly `want`. */
static __global__ void visits_kernel(wh_soa s, const uint64_t *held, const uint32_t *n, uint32_t cap, uint32_t threads,
                                     unsigned long long *wrong) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    for (uint32_t k = 0; k < n[t]; ++k) {
        uint64_t p = held[(size_t)t * cap + k];
        uint32_t v = WH_SOA_IS(&s, p, SA) ? WH_GET(SA, SA_from(p), visits) : WH_GET(SC, SC_from(p), visits);
        if (v != 1) atomicAdd(wrong, 1ull);
    }
}

static uint64_t device_u64(const uint64_t *d) {
    uint64_t v = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}
static uint64_t take_device(uint64_t *d) {
    uint64_t v = device_u64(d);
    WH_CUDA_OR_DIE(cudaMemset(d, 0, sizeof v));
    return v;
}

static void stress(size_t bytes, uint32_t threads, uint32_t ops, uint32_t cap, bool expect_fails) {
    wh_soa s;
    wh_soa_config cfg = {bytes, soa_stress_types, 3, true, 4, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    uint64_t *d_held, *d_tags, *d_total;
    uint32_t *d_n;
    soa_stress_counts *d_c;
    unsigned long long *d_wrong;
    size_t slots = (size_t)threads * cap;
    WH_CUDA_OR_DIE(cudaMalloc(&d_held, slots * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&d_tags, slots * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&d_n, threads * 4));
    WH_CUDA_OR_DIE(cudaMalloc(&d_c, sizeof(soa_stress_counts)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_total, 8));
    WH_CUDA_OR_DIE(cudaMalloc(&d_wrong, 8));
    WH_CUDA_OR_DIE(cudaMemset(d_c, 0, sizeof(soa_stress_counts)));
    cudaEvent_t e0, e1;
    WH_CUDA_OR_DIE(cudaEventCreate(&e0));
    WH_CUDA_OR_DIE(cudaEventCreate(&e1));
    WH_CUDA_OR_DIE(cudaEventRecord(e0));
    stress_kernel<<<(threads + 255) / 256, 256>>>(s, threads, ops, d_held, d_tags, cap, d_n, d_c);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaEventRecord(e1));
    WH_CUDA_OR_DIE(cudaEventSynchronize(e1));
    float ms = 0;
    WH_CUDA_OR_DIE(cudaEventElapsedTime(&ms, e0, e1));

    soa_stress_counts tot;
    WH_CUDA_OR_DIE(cudaMemcpy(&tot, d_c, sizeof tot, cudaMemcpyDeviceToHost));
    std::vector<uint64_t> held(slots);
    std::vector<uint32_t> n(threads);
    WH_CUDA_OR_DIE(cudaMemcpy(held.data(), d_held, slots * 8, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(n.data(), d_n, threads * 4, cudaMemcpyDeviceToHost));
    std::vector<uint64_t> all;
    uint64_t per_type[3] = {0, 0, 0};
    for (uint32_t t = 0; t < threads; ++t)
        for (uint32_t k = 0; k < n[t]; ++k) {
            uint64_t p = held[(size_t)t * cap + k];
            all.push_back(p);
            per_type[wh_soa_ptr_type(p) % 3]++;
        }
    printf("soa stress gpu: %u threads, %llu allocs, %llu frees, %llu failed, %zu held, %u blocks, %.3f ms"
           " (%.1f M ops/s)\n",
           threads, tot.allocs, tot.frees, tot.fails, all.size(), s.nblocks, ms, (tot.allocs + tot.frees) / (ms * 1e3));
    CHECK(tot.allocs > 0 && tot.frees > 0);
    CHECK_EQ_U64(tot.corrupt, 0);
    if (expect_fails)
        CHECK(tot.fails > 0);
    else
        CHECK_EQ_U64(tot.fails, 0);
    std::sort(all.begin(), all.end());
    CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
    check_heap(&s, "after stress");
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    for (int t = 0; t < 3; ++t) CHECK_EQ_U64(st.objects[t], per_type[t]);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_RETRY_LIMIT], 0);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_BAD_FREE], 0);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_FAILED_ALLOCS], tot.fails);
    printf("  fragmentation %.3f, blocks initialised %llu\n", st.fragmentation,
           (unsigned long long)st.counters[WH_SOA_CTR_SLOW_PATH]);

    soa_visit_ctx vc = {d_total};
    WH_CUDA_OR_DIE(cudaMemset(d_total, 0, 8));
    CHECK(SA_parallel_do_soa_visit_a(&s, vc) == WH_OK);
    CHECK_EQ_U64(device_u64(d_total), per_type[0] + per_type[1]);
    WH_CUDA_OR_DIE(cudaMemset(d_total, 0, 8));
    CHECK(SC_parallel_do_soa_visit_c(&s, vc) == WH_OK);
    CHECK_EQ_U64(device_u64(d_total), per_type[2]);
    WH_CUDA_OR_DIE(cudaMemset(d_wrong, 0, 8));
    visits_kernel<<<(threads + 255) / 256, 256>>>(s, d_held, d_n, cap, threads, d_wrong);
    WH_LAUNCH_OR_DIE();
    CHECK_EQ_U64(device_u64((uint64_t *)d_wrong), 0);

    WH_CUDA_OR_DIE(cudaMemset(d_total, 0, 8));
    CHECK(SC_parallel_do_soa_churn_c(&s, vc) == WH_OK);
    CHECK_EQ_U64(device_u64(d_total), per_type[2]);
    check_heap(&s, "after churn");
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    if (!expect_fails) CHECK_EQ_U64(st.objects[SC_TYPE], per_type[2]);
    WH_CUDA_OR_DIE(cudaMemset(d_total, 0, 8));
    CHECK(SC_parallel_do_soa_visit_c(&s, vc) == WH_OK);
    CHECK_EQ_U64(device_u64(d_total), st.objects[SC_TYPE]);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_RETRY_LIMIT], 0);
    soa_again_check(&s, vc, st.objects[SC_TYPE], per_type[0] + per_type[1], take_device);

    WH_CUDA_OR_DIE(cudaFree(d_held));
    WH_CUDA_OR_DIE(cudaFree(d_tags));
    WH_CUDA_OR_DIE(cudaFree(d_n));
    WH_CUDA_OR_DIE(cudaFree(d_c));
    WH_CUDA_OR_DIE(cudaFree(d_total));
    WH_CUDA_OR_DIE(cudaFree(d_wrong));
    WH_CUDA_OR_DIE(cudaEventDestroy(e0));
    WH_CUDA_OR_DIE(cudaEventDestroy(e1));
    destroy_checked(&s);
}

/* parallel_new with full 32-lane groups: object i carries i; read back through
 * the host image, every i must appear exactly once.  device_do from a kernel
 * must count every object. */
typedef struct stamp_ctx {
    uint64_t *count;
} stamp_ctx;
WH_INLINE WH_HOST_DEVICE void stamp_init(const wh_soa *s, SC o, uint64_t i, const stamp_ctx *c) {
    (void)s;
    (void)c;
    WH_GET(SC, o, tag32) = (uint32_t)i;
    WH_GET(SC, o, visits) = 0;
}
WH_SOA_PARALLEL_NEW(SC, stamp_init, stamp_ctx)
static __global__ void device_do_kernel(wh_soa s, unsigned long long *count) {
    if (blockIdx.x * blockDim.x + threadIdx.x >= 64) return; /* 64 threads, each the whole set */
    wh_soa_iter it;
    wh_soa_iter_begin(&it, &s, SC_TYPE);
    unsigned long long n = 0;
    while (wh_soa_iter_next(&it, &s)) ++n;
    atomicAdd(count, n);
}
static void test_parallel_new(uint32_t n) {
    wh_soa s;
    wh_soa_config cfg = {64u << 20, soa_stress_types, 3, true, 4, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    stamp_ctx c = {NULL};
    CHECK(SC_parallel_new_stamp_init(&s, n, c) == WH_OK);
    wh_soa_stats st; /* packed: cap objects to a block */
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    CHECK_EQ_U64(st.used_blocks[SC_TYPE], (n + s.cap[SC_TYPE] - 1) / s.cap[SC_TYPE]);
    CHECK_EQ_U64(st.objects[SC_TYPE], n);
    unsigned long long *d_count, count = 0;
    WH_CUDA_OR_DIE(cudaMalloc(&d_count, 8));
    WH_CUDA_OR_DIE(cudaMemset(d_count, 0, 8));
    device_do_kernel<<<1, 64>>>(s, d_count);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaMemcpy(&count, d_count, 8, cudaMemcpyDeviceToHost));
    CHECK_EQ_U64(count, 64ull * n);
    wh_soa img;
    void *owned = NULL;
    CHECK(wh_soa_host_image(&s, &img, &owned) == WH_OK);
    std::vector<uint32_t> seen(n, 0);
    wh_soa_iter it;
    wh_soa_iter_begin(&it, &img, SC_TYPE);
    uint64_t total = 0, bad = 0;
    for (uint64_t p; (p = wh_soa_iter_next(&it, &img)) != 0; ++total) {
        uint32_t i = WH_GET(SC, SC_from(p), tag32);
        if (i < n)
            seen[i]++;
        else
            bad++;
    }
    for (uint32_t i = 0; i < n; ++i) bad += seen[i] != 1;
    CHECK_EQ_U64(total, n);
    CHECK_EQ_U64(bad, 0);
    printf("soa parallel_new gpu: %u objects, read back %llu, %llu wrong\n", n, (unsigned long long)total,
           (unsigned long long)bad);
    free(owned);
    WH_CUDA_OR_DIE(cudaFree(d_count));
    destroy_checked(&s);
}

/* parallel_do's one-pass preparation, many times in a row (its counters must
 * clear themselves) on heaps whose bitmaps have one, two, three and four
 * levels: each round makes objects, visits them all, checks that each was
 * visited exactly once and that the count matches the heap's, lets the
 * odd-tagged ones replace themselves and drops a third.  threads (0: as
 * created): the GPU threads of a do-all; 256 makes the preparation one
 * thread block that takes its eight words at a time in many rounds. */
WH_INLINE WH_HOST_DEVICE void reset_c(const wh_soa *s, SC o, const stamp_ctx *c) {
    (void)s;
    (void)c;
    WH_GET(SC, o, visits) = 0;
}
typedef struct drop_ctx {
    uint32_t rest; /* objects whose tag is this mod 3 go */
} drop_ctx;
WH_INLINE WH_HOST_DEVICE void drop_c(const wh_soa *s, SC o, const drop_ctx *c) {
    if (WH_GET(SC, o, tag32) % 3u == c->rest) WH_SOA_DESTROY(s, o);
}
WH_SOA_PARALLEL_DO(SC, reset_c, stamp_ctx)
WH_SOA_PARALLEL_DO(SC, drop_c, drop_ctx)
static void test_enumeration_rounds(size_t bytes, uint32_t rounds, uint32_t levels, uint32_t threads) {
    wh_soa s;
    wh_soa_config cfg = {bytes, soa_stress_types, 3, true, 4, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    if (threads) s.do_threads = threads;
    CHECK_EQ_U64(s.alloc_blocks[SC_TYPE].levels, levels); /* the case this size is meant to cover */
    uint64_t slots = (uint64_t)s.nblocks * s.cap[SC_TYPE], *d_total;
    WH_CUDA_OR_DIE(cudaMalloc(&d_total, 8));
    soa_visit_ctx vc = {d_total};
    uint64_t bad = 0, visited = 0;
    for (uint32_t r = 0; r < rounds; ++r) {
        stamp_ctx c = {NULL};
        CHECK(SC_parallel_new_stamp_init(&s, slots / 16u * (1u + r % 3u) + r, c) == WH_OK);
        wh_soa_stats st;
        CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
        CHECK(SC_parallel_do_reset_c(&s, c) == WH_OK);
        WH_CUDA_OR_DIE(cudaMemset(d_total, 0, 8));
        CHECK(SC_parallel_do_soa_visit_c(&s, vc) == WH_OK);
        uint64_t total = device_u64(d_total);
        CHECK_EQ_U64(total, st.objects[SC_TYPE]);
        visited += total;
        wh_soa img;
        void *owned = NULL;
        CHECK(wh_soa_host_image(&s, &img, &owned) == WH_OK);
        wh_soa_iter it;
        wh_soa_iter_begin(&it, &img, SC_TYPE);
        for (uint64_t p; (p = wh_soa_iter_next(&it, &img)) != 0;) bad += WH_GET(SC, SC_from(p), visits) != 1u;
        free(owned);
        WH_CUDA_OR_DIE(cudaMemset(d_total, 0, 8));
        CHECK(SC_parallel_do_soa_churn_c(&s, vc) == WH_OK);
        CHECK_EQ_U64(device_u64(d_total), st.objects[SC_TYPE]);
        CHECK(SC_parallel_do_drop_c(&s, drop_ctx{r % 3u}) == WH_OK);
        check_heap(&s, "enumeration rounds");
    }
    CHECK_EQ_U64(bad, 0);
    printf("soa enumeration gpu: %u blocks (%u bitmap levels), %u do-all threads, %u rounds, %llu visits, %llu not "
           "exactly once\n",
           s.nblocks, s.alloc_blocks[SC_TYPE].levels, s.do_threads, rounds, (unsigned long long)visited,
           (unsigned long long)bad);
    WH_CUDA_OR_DIE(cudaFree(d_total));
    for (uint32_t rest = 0; rest < 3u; ++rest) CHECK(SC_parallel_do_drop_c(&s, drop_ctx{rest}) == WH_OK);
    destroy_checked(&s); /* every object gone: WH_OK expected */
}

/* A burst of allocations into types with no active block (as a parallel_do
 * that places agents on a quarter of the cells): one thread in four makes an
 * SA or an SC.  Unbounded, groups that run out of lookups at the same moment
 * open a block each for their few objects (half the used blocks' slots
 * empty); with the slow paths bounded (WH_SOA_OPEN_MAX) the objects
 * must fill their blocks to within a quarter, and the heap stays consistent.
 * The bound holds under pressure only (WH_SOA_OPEN_PRESSURE): `fill` first
 * packs SC objects into a quarter of the blocks and a few more; without it
 * the heap is roomy and the burst opens blocks freely (checked for failures
 * and consistency, its fill only reported). */
static __global__ void burst_kernel(wh_soa s, uint32_t n, unsigned long long *fails) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t r = wh_hash64(0xB0257ull + i);
    if (r % 4u) return;
    uint64_t p = wh_soa_alloc(&s, (r >> 8) & 1u ? SC_TYPE : SA_TYPE);
    if (!p) atomicAdd(fails, 1ull);
}
/* packed: check the fill.  The bound is a matter of timing (a group pauses
 * while others open blocks), so --small, the sanitizers' size, only reports
 * it: under racecheck and synccheck, which stretch every instruction, the
 * groups use up their rounds and open anyway (about 2x the blocks needed),
 * as the bound allows. */
static void test_burst(uint32_t n, size_t heap, bool fill, bool packed) {
    wh_soa s;
    wh_soa_config cfg = {heap, soa_stress_types, 3, true, 4, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    uint64_t fill_blocks = fill ? s.nblocks / 4u + 64u : 0, nfill = fill_blocks * s.cap[SC_TYPE];
    stamp_ctx c = {NULL};
    if (nfill) CHECK(SC_parallel_new_stamp_init(&s, nfill, c) == WH_OK); /* packed: fill_blocks full blocks */
    unsigned long long *d_fails, fails = 0;
    WH_CUDA_OR_DIE(cudaMalloc(&d_fails, 8));
    WH_CUDA_OR_DIE(cudaMemset(d_fails, 0, 8));
    burst_kernel<<<(n + 255u) / 256u, 256u>>>(s, n, d_fails);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaMemcpy(&fails, d_fails, 8, cudaMemcpyDeviceToHost));
    CHECK_EQ_U64(fails, 0);
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    const uint32_t types[2] = {SA_TYPE, SC_TYPE};
    for (int k = 0; k < 2; ++k) {
        uint32_t t = types[k];
        uint64_t objects = st.objects[t] - (t == SC_TYPE ? nfill : 0);
        uint64_t used = st.used_blocks[t] - (t == SC_TYPE ? fill_blocks : 0);
        uint64_t need = (objects + s.cap[t] - 1) / s.cap[t];
        printf("soa burst gpu (%s heap): type %u, %llu objects in %llu blocks (%llu would hold them)\n",
               fill ? "quarter-full" : "roomy", t, (unsigned long long)objects, (unsigned long long)used,
               (unsigned long long)need);
        CHECK(objects > n / 16u);
        if (packed) CHECK(used * 4u <= need * 5u + 4u * 64u);
    }
    uint64_t bad = 0;
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    WH_CUDA_OR_DIE(cudaFree(d_fails));
    destroy_checked(&s);
}

/* Placement keys on a full grid: one thread in four makes an SC with one of
 * 256 keys drawn at random, so a warp's allocating lanes have different keys
 * (groups of one, in divergent code), and hundreds of groups race for each
 * key's home at once.  With keys, few blocks hold objects of more than one
 * key (a group that waited WH_SOA_HOME_ROUNDS rounds for its key's block
 * takes room anywhere) and few blocks are opened beyond what the objects
 * need; the same burst without keys packs a warp's objects together, mixing
 * keys in most blocks (so the check can fail).  How many groups give up
 * waiting is a matter of timing, so `strict` false (--small, the sanitizers'
 * size, which stretch every instruction) only reports the mixed blocks. */
static __global__ void keyed_kernel(wh_soa s, uint32_t n, bool keyed, unsigned long long *fails) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t r = wh_hash64(0x4E7ull + i);
    if (r % 4u) return;
    uint32_t key = (uint32_t)(r >> 8) % 256u;
    uint64_t p = wh_soa_alloc_at(&s, SC_TYPE, keyed ? key : WH_SOA_NO_KEY);
    if (!p) {
        atomicAdd(fails, 1ull);
        return;
    }
    WH_GET(SC, SC_from(p), tag32) = key;
    WH_GET(SC, SC_from(p), visits) = 0;
}
static void test_placement(uint32_t n, size_t heap, bool strict) {
    for (int keyed = 1; keyed >= 0; --keyed) {
        wh_soa s;
        wh_soa_config cfg = {heap, soa_stress_types, 3, true, 4, NULL, false};
        CHECK(wh_soa_create(&s, &cfg) == WH_OK);
        unsigned long long *d_fails, fails = 0;
        WH_CUDA_OR_DIE(cudaMalloc(&d_fails, 8));
        WH_CUDA_OR_DIE(cudaMemset(d_fails, 0, 8));
        keyed_kernel<<<(n + 255u) / 256u, 256u>>>(s, n, keyed != 0, d_fails);
        WH_LAUNCH_OR_DIE();
        WH_CUDA_OR_DIE(cudaMemcpy(&fails, d_fails, 8, cudaMemcpyDeviceToHost));
        CHECK_EQ_U64(fails, 0);
        wh_soa img;
        void *owned = NULL;
        CHECK(wh_soa_host_image(&s, &img, &owned) == WH_OK);
        wh_soa_iter it;
        wh_soa_iter_begin(&it, &img, SC_TYPE);
        uint64_t objects = 0, blocks = 0, mixed = 0;
        const uint8_t *cur = NULL;
        uint32_t key = 0;
        bool mix = false;
        for (uint64_t p; (p = wh_soa_iter_next(&it, &img)) != 0; ++objects) {
            uint32_t k = WH_GET(SC, SC_from(p), tag32);
            if (wh_soa_ptr_block(p) != cur) {
                mixed += mix;
                ++blocks, cur = wh_soa_ptr_block(p), key = k, mix = false;
            }
            mix |= k != key;
        }
        mixed += mix;
        free(owned);
        uint64_t need = (objects + s.cap[SC_TYPE] - 1) / s.cap[SC_TYPE];
        printf("soa placement gpu (%s): %llu objects in %llu blocks (%llu would hold them), %llu with more than "
               "one key\n",
               keyed ? "keys" : "no keys", (unsigned long long)objects, (unsigned long long)blocks,
               (unsigned long long)need, (unsigned long long)mixed);
        CHECK(objects > n / 8u);
        if (keyed && strict) {
            CHECK(mixed * 10u < blocks);
            CHECK(blocks <= need + 2u * 256u); /* at most a part-filled block or two per key */
        } else if (!keyed) {
            CHECK(mixed * 2u > blocks);
        }
        uint64_t bad = 0;
        CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
        WH_CUDA_OR_DIE(cudaFree(d_fails));
        destroy_checked(&s);
    }
}

/* Allocation from a function the compiler keeps out of line, called in the
 * divergent iterations of a loop (lanes of a warp reach it at different
 * iterations, as game of life's spreading does): every object is handed out
 * once, keeps its tag, and the heap holds exactly the objects the threads
 * got (no slot reserved for a lane that never received it).  The heap is a
 * __grid_constant__ parameter, as in the do-all kernels: the function reads
 * it through a pointer into parameter space. */
static __device__ __noinline__ uint64_t alloc_out_of_line(const wh_soa *s, uint32_t t) { return wh_soa_alloc(s, t); }
static __global__ void out_of_line_kernel(const __grid_constant__ wh_soa s, uint32_t n, uint64_t *got) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (uint32_t k = 0; k < 8u; ++k) {
        uint64_t r = wh_hash64(0x0111ull + (uint64_t)i * 8u + k), p = 0;
        if (r % 3u == 0) p = alloc_out_of_line(&s, (r >> 8) & 1u ? SC_TYPE : SA_TYPE);
        if (p) soa_stress_stamp(&s, p, soa_stress_tag(i, k));
        got[(size_t)i * 8u + k] = p;
    }
}
static void test_out_of_line(uint32_t n) {
    wh_soa s;
    wh_soa_config cfg = {256u << 20, soa_stress_types, 3, true, 4, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    uint64_t *d_got;
    WH_CUDA_OR_DIE(cudaMalloc(&d_got, (size_t)n * 8u * 8u));
    out_of_line_kernel<<<(n + 255u) / 256u, 256u>>>(s, n, d_got);
    WH_LAUNCH_OR_DIE();
    std::vector<uint64_t> got((size_t)n * 8u);
    WH_CUDA_OR_DIE(cudaMemcpy(got.data(), d_got, got.size() * 8u, cudaMemcpyDeviceToHost));
    wh_soa img;
    void *owned = NULL;
    CHECK(wh_soa_host_image(&s, &img, &owned) == WH_OK);
    uint64_t held = 0, wrong = 0;
    for (size_t j = 0; j < got.size(); ++j) {
        if (!got[j]) continue;
        ++held;
        wrong +=
            !soa_stress_intact(&img, wh_soa_image_ptr(&s, &img, got[j]), soa_stress_tag(j / 8u, (uint32_t)(j % 8u)));
    }
    free(owned);
    std::vector<uint64_t> ps;
    for (uint64_t p : got)
        if (p) ps.push_back(p);
    std::sort(ps.begin(), ps.end());
    uint64_t twice = (uint64_t)(ps.end() - std::unique(ps.begin(), ps.end()));
    uint64_t objects = 0, slots = 0;
    CHECK(wh_soa_usage(&s, &objects, &slots) == WH_OK);
    printf("soa out-of-line gpu: %llu objects handed out, %llu in the heap, %llu twice, %llu with a wrong tag\n",
           (unsigned long long)held, (unsigned long long)objects, (unsigned long long)twice, (unsigned long long)wrong);
    CHECK(held > (uint64_t)n);
    CHECK_EQ_U64(objects, held);
    CHECK_EQ_U64(twice, 0);
    CHECK_EQ_U64(wrong, 0);
    check_heap(&s, "out of line");
    WH_CUDA_OR_DIE(cudaFree(d_got));
    destroy_checked(&s);
}

int main(int argc, char **argv) {
    bool small = false;
    uint32_t ops = 0;
    wh_cli_opt cli[] = {WH_CLI_FLAG("small", &small, "the sanitizers' size"),
                        WH_CLI_UINT_D("ops", &ops, "operations per thread of the stress", "400, 40 with --small"),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Object allocator on the GPU: the stress loop on a full grid, roomy and exhausted.");
    if (!wh_cli_given(cli, "ops")) ops = small ? 40 : 400;
    if (!wh_cuda_available()) {
        printf("test_soa_gpu: no GPU, skipped\n");
        return WH_TEST_SKIP;
    }
    test_parallel_new(small ? 5000u : 1000000u);
    test_enumeration_rounds(32u << 10, 6, 1, 0); /* bitmap levels */
    test_enumeration_rounds(1u << 20, 6, 2, 0);
    test_enumeration_rounds(16u << 20, 6, 3, 0);
    test_enumeration_rounds(16u << 20, 6, 3, 256); /* one thread block, many rounds */
    if (!small) test_enumeration_rounds(256u << 20, 6, 4, 0);
    test_burst(small ? 20000u : 2000000u, small ? (16u << 20) : (256u << 20), true, !small);
    test_burst(small ? 20000u : 2000000u, 256u << 20, false, false);
    test_placement(small ? 20000u : 2000000u, 256u << 20, !small);
    test_out_of_line(small ? 4096u : 262144u);
    uint32_t threads = small ? 2048u : 132u * 2048u;
    stress(small ? (16u << 20) : (1u << 30), threads, ops, 16, false); /* roomy */
    stress(small ? (256u << 10) : (8u << 20), threads, ops, 16, true); /* exhausted */
    return wh_test_finish("test_soa_gpu");
}
