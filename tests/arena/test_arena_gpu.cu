/* SPDX-License-Identifier: MIT */
/* Stream arena on the GPU.
 *  - status without sync: bad requests enqueued, then wh_arena_status polled
 *    (host-mapped word, no CUDA call) until the commands have run;
 *  - a long random command sequence on one stream, sizes written by a kernel,
 *    no host sync in the loop, while on a second stream a grid allocates and
 *    frees directly (wh_fuzz_thread, the loop of the CPU stress test) under
 *    the same lock;
 *  - then the overlap oracle over both slot sets, the heap walk, a fill and
 *    verify of every live block, and a full free back to one block;
 *  - timing: microseconds per alloc+free command pair, and per replace;
 *  - RING policy: a FIFO ring of K=3 spans turned over in turn by the
 *    command, by one thread of a kernel (wh_arena_replace_span_thread) and by
 *    a block staging the metadata in smem (wh_arena_replace_span_block),
 *    sizes written by a kernel, in a region a few granules above the most
 *    live bytes: no failure, oracle over the parts, heap walk; and the time
 *    per replace of each kind, with the host mirror written by every command
 *    and only on failure.
 * --small: the sanitizer size. */
#include "arena_oracle.h"
#include "warpheap/cuda_check.h"
#include "wh_cli.h"
#include "wh_test.h"

#include <vector>

enum { GROUP = 64 };

/* Destroy: WH_ERR_IN_USE exactly when the walk finds live blocks (a ring
 * keeps its last frames live); either way everything is released. */
static void destroy_checked(wh_arena *a) {
    wh_blocks_report r;
    CHECK(wh_arena_check(a, &r) == WH_OK);
    CHECK(wh_arena_destroy(a) == (r.used ? WH_ERR_IN_USE : WH_OK));
}

static __global__ void write_counts(size_t *counts, uint32_t n, uint64_t seed, uint64_t max_count) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) counts[i] = 1 + wh_hash64(seed + i) % max_count;
}

static __global__ void fuzz_kernel(wh_arena_ref a, uint32_t k, uint32_t steps, uint64_t max_bytes, wh_handle *slots,
                                   uint64_t *bytes, uint64_t *strides, unsigned long long *failed_frees) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; /* blockDim a multiple of 32: full warps */
    wh_fuzz_counts c = {0, 0, 0, 0};
    wh_fuzz_thread(a, 0xFFFFFFFFu, t, k, steps, max_bytes, slots, bytes, strides, &c);
    if (c.failed_frees) atomicAdd(failed_frees, c.failed_frees);
}

/* Block i writes a byte pattern of slot i over its allocation, then every
 * block checks its own: a second owner of any byte shows as a mismatch. */
static __global__ void fill(const wh_handle *slots, const uint64_t *bytes, uint32_t n) {
    for (uint32_t i = blockIdx.x; i < n; i += gridDim.x) {
        uint8_t *p = (uint8_t *)wh_handle_ptr(&slots[i]);
        if (!p) continue;
        for (uint64_t b = threadIdx.x; b < bytes[i]; b += blockDim.x) p[b] = (uint8_t)(wh_hash64(i) + b);
    }
}
static __global__ void verify(const wh_handle *slots, const uint64_t *bytes, uint32_t n, unsigned long long *bad) {
    for (uint32_t i = blockIdx.x; i < n; i += gridDim.x) {
        const uint8_t *p = (const uint8_t *)wh_handle_ptr(&slots[i]);
        if (!p) continue;
        for (uint64_t b = threadIdx.x; b < bytes[i]; b += blockDim.x)
            if (p[b] != (uint8_t)(wh_hash64(i) + b)) atomicAdd(bad, 1ull);
    }
}

template <typename T> static T *dalloc(size_t n) {
    T *p;
    WH_CUDA_OR_DIE(cudaMalloc(&p, n * sizeof(T)));
    WH_CUDA_OR_DIE(cudaMemset(p, 0, n * sizeof(T)));
    return p;
}
template <typename T> static std::vector<T> fetch(const T *d, size_t n) {
    std::vector<T> h(n);
    WH_CUDA_OR_DIE(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

static wh_arena *make(size_t bytes, uint32_t blocks) {
    wh_arena *a = NULL;
    wh_arena_config cfg = {};
    cfg.bytes = bytes;
    cfg.max_blocks = blocks;
    cfg.backend = WH_ARENA_CUDA;
    if (wh_arena_create(&a, &cfg) != WH_OK) {
        fprintf(stderr, "%s\n", wh_last_error());
        exit(1);
    }
    return a;
}

/* Wait for `commands` commands by polling the mirror only (bounded). */
static bool wait_commands(wh_arena *a, uint64_t commands, wh_arena_stats *st) {
    double t0 = wh_now_seconds();
    while (wh_now_seconds() - t0 < 10.0) {
        if (wh_arena_stats_get(a, st) == WH_OK && st->commands >= commands) return true;
    }
    return false;
}

static void test_status_no_sync(void) {
    wh_arena *a = make(1 << 20, 64);
    size_t *d_n = dalloc<size_t>(4);
    wh_handle *d_slot = dalloc<wh_handle>(4);
    size_t h_n[4] = {0, 1000, (size_t)1 << 21, 64};
    WH_CUDA_OR_DIE(cudaMemcpy(d_n, h_n, sizeof h_n, cudaMemcpyHostToDevice));
    cudaStream_t s;
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(wh_arena_alloc_async(a, &d_n[0], &d_slot[0], s) == WH_OK); /* size 0 */
    CHECK(wh_arena_alloc_async(a, &d_n[1], &d_slot[1], s) == WH_OK);
    CHECK(wh_arena_alloc_async(a, &d_n[2], &d_slot[2], s) == WH_OK); /* too large */
    CHECK(wh_arena_free_async(a, &d_slot[3], s) == WH_OK);           /* null handle */
    CHECK(wh_arena_alloc_strided_async(a, &d_n[3], 36, &d_slot[3], s) == WH_OK);
    wh_arena_stats st;
    CHECK(wait_commands(a, 5, &st));
    CHECK(st.first_status == WH_ERR_INVALID_ARGUMENT);
    CHECK(st.failures == 3 && st.allocs == 2 && st.live_blocks == 2);
    CHECK(wh_arena_status(a) == WH_ERR_INVALID_ARGUMENT);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    std::vector<wh_handle> h = fetch(d_slot, 4);
    CHECK(h[0].ptr == 0 && h[1].ptr != 0 && h[2].ptr == 0 && h[3].ptr != 0);
    CHECK((h[3].ptr - (uintptr_t)wh_arena_base(a)) % 36 == 0);
    CHECK(wh_arena_clear_status_async(a, s) == WH_OK);
    CHECK(wh_arena_free_batch_async(a, &d_slot[1], 1, s) == WH_OK);
    CHECK(wh_arena_free_async(a, &d_slot[3], s) == WH_OK);
    wh_blocks_report r;
    CHECK(wh_arena_check(a, &r) == WH_OK && r.used == 0 && r.free == 1);
    CHECK(wh_arena_status(a) == WH_OK);
    WH_CUDA_OR_DIE(cudaStreamDestroy(s));
    WH_CUDA_OR_DIE(cudaFree(d_n));
    WH_CUDA_OR_DIE(cudaFree(d_slot));
    wh_arena_destroy(a);
}

static void test_random(uint32_t rounds, uint32_t groups, uint32_t fuzz_blocks, uint32_t fuzz_steps) {
    const size_t region = (size_t)512 << 20; /* > 2x the largest live total */
    const uint32_t ncmd = groups * GROUP, k = 4, nfuzz = fuzz_blocks * 64 * k;
    wh_arena *a = make(region, 1u << 18);
    size_t *d_counts = dalloc<size_t>(ncmd);
    wh_handle *d_slots = dalloc<wh_handle>(ncmd + nfuzz); /* command slots, then the fuzz grid's */
    uint64_t *d_fbytes = dalloc<uint64_t>(nfuzz), *d_fstrides = dalloc<uint64_t>(nfuzz);
    unsigned long long *d_bad = dalloc<unsigned long long>(2);
    std::vector<uint64_t> stride(groups, 1);
    std::vector<bool> full(groups, false);
    cudaStream_t s, s2;
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

    fuzz_kernel<<<fuzz_blocks, 64, 0, s2>>>(wh_arena_device(a), k, fuzz_steps, 16384, d_slots + ncmd, d_fbytes,
                                            d_fstrides, d_bad);
    WH_LAUNCH_OR_DIE();
    uint64_t allocs = 0, frees = 0;
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t r = wh_hash64(77 + i);
        uint32_t g = (uint32_t)(r % groups);
        wh_handle *slots = d_slots + (size_t)g * GROUP;
        if (full[g] && (r & 0xC00) == 0xC00) { /* turn the group over */
            stride[g] = wh_test_stride(r >> 12);
            write_counts<<<1, GROUP, 0, s>>>(d_counts + (size_t)g * GROUP, GROUP, r, 16384 / stride[g]);
            WH_LAUNCH_OR_DIE();
            for (uint32_t j = 0; j < GROUP; ++j)
                wh_arena_replace_async(a, d_counts + (size_t)g * GROUP + j, stride[g], slots + j, s);
            allocs += GROUP;
            frees += GROUP;
            continue;
        }
        if (full[g]) {
            if (r & 0x100) {
                wh_arena_free_batch_async(a, slots, GROUP, s);
            } else {
                for (uint32_t j = 0; j < GROUP; ++j) wh_arena_free_async(a, slots + j, s);
            }
            frees += GROUP;
        } else {
            stride[g] = wh_test_stride(r >> 12);
            write_counts<<<1, GROUP, 0, s>>>(d_counts + (size_t)g * GROUP, GROUP, r, 16384 / stride[g]);
            WH_LAUNCH_OR_DIE();
            if (r & 0x200) {
                wh_arena_alloc_batch_async(a, d_counts + (size_t)g * GROUP, stride[g], GROUP, slots, s);
            } else {
                for (uint32_t j = 0; j < GROUP; ++j)
                    wh_arena_alloc_strided_async(a, d_counts + (size_t)g * GROUP + j, stride[g], slots + j, s);
            }
            allocs += GROUP;
        }
        full[g] = !full[g];
    }
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());

    std::vector<wh_handle> slots = fetch(d_slots, ncmd + nfuzz);
    std::vector<size_t> counts = fetch(d_counts, ncmd);
    std::vector<uint64_t> fbytes = fetch(d_fbytes, nfuzz), fstrides = fetch(d_fstrides, nfuzz);
    std::vector<uint64_t> bytes(ncmd + nfuzz), strides(ncmd + nfuzz);
    uint64_t expect_live = 0, wrong = 0;
    for (uint32_t i = 0; i < ncmd; ++i) {
        strides[i] = stride[i / GROUP];
        bytes[i] = counts[i] * strides[i];
        expect_live += full[i / GROUP];
        wrong += full[i / GROUP] != (slots[i].ptr != 0); /* no command failed */
    }
    CHECK_EQ_U64(wrong, 0);
    for (uint32_t i = 0; i < nfuzz; ++i) {
        bytes[ncmd + i] = fbytes[i];
        strides[ncmd + i] = fstrides[i] ? fstrides[i] : 1;
    }
    uint64_t live = 0, live_bytes = 0;
    CHECK_EQ_U64(wh_arena_oracle(slots.data(), bytes.data(), strides.data(), ncmd + nfuzz, (uintptr_t)wh_arena_base(a),
                                 region, &live, &live_bytes),
                 0);
    wh_blocks_report rep;
    wh_status st = wh_arena_check(a, &rep);
    CHECK(st == WH_OK);
    if (st != WH_OK) fprintf(stderr, "%s\n", wh_last_error());
    CHECK_EQ_U64(rep.used, live);
    CHECK(live >= expect_live);
    CHECK(wh_arena_status(a) == WH_OK);
    std::vector<unsigned long long> bad = fetch(d_bad, 2);
    CHECK_EQ_U64(bad[0], 0); /* fuzz: failed frees */

    uint64_t *d_bytes = dalloc<uint64_t>(ncmd + nfuzz);
    WH_CUDA_OR_DIE(cudaMemcpy(d_bytes, bytes.data(), bytes.size() * sizeof(uint64_t), cudaMemcpyHostToDevice));
    fill<<<256, 256>>>(d_slots, d_bytes, ncmd + nfuzz);
    WH_LAUNCH_OR_DIE();
    verify<<<256, 256>>>(d_slots, d_bytes, ncmd + nfuzz, d_bad + 1);
    WH_LAUNCH_OR_DIE();
    bad = fetch(d_bad, 2);
    CHECK_EQ_U64(bad[1], 0);

    wh_arena_free_batch_async(a, d_slots, ncmd + nfuzz, s); /* nulls among them */
    CHECK(wh_arena_check(a, &rep) == WH_OK);
    CHECK(rep.used == 0 && rep.free == 1 && rep.largest_free == region);
    wh_arena_stats stats;
    CHECK(wh_arena_stats_get(a, &stats) == WH_OK);
    printf("gpu random: %u rounds, %llu command allocs, %llu command frees, %llu live then, %llu total allocs, "
           "peak %.1f MiB\n",
           rounds, (unsigned long long)allocs, (unsigned long long)frees, (unsigned long long)live,
           (unsigned long long)stats.allocs, stats.peak_used / 1048576.0);
    WH_CUDA_OR_DIE(cudaStreamDestroy(s));
    WH_CUDA_OR_DIE(cudaStreamDestroy(s2));
    WH_CUDA_OR_DIE(cudaFree(d_counts));
    WH_CUDA_OR_DIE(cudaFree(d_slots));
    WH_CUDA_OR_DIE(cudaFree(d_fbytes));
    WH_CUDA_OR_DIE(cudaFree(d_fstrides));
    WH_CUDA_OR_DIE(cudaFree(d_bad));
    WH_CUDA_OR_DIE(cudaFree(d_bytes));
    wh_arena_destroy(a);
}

/* Alloc + free command pairs back to back: the cost of one command. */
static void time_commands(uint32_t pairs) {
    wh_arena *a = make(64 << 20, 4096);
    size_t *d_n = dalloc<size_t>(1);
    size_t n = 100000;
    WH_CUDA_OR_DIE(cudaMemcpy(d_n, &n, sizeof n, cudaMemcpyHostToDevice));
    wh_handle *d_slot = dalloc<wh_handle>(1);
    cudaStream_t s;
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int w = 0; w < 10; ++w) {
        wh_arena_alloc_async(a, d_n, d_slot, s);
        wh_arena_free_async(a, d_slot, s);
    }
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    double t0 = wh_now_seconds();
    for (uint32_t i = 0; i < pairs; ++i) {
        wh_arena_alloc_async(a, d_n, d_slot, s);
        wh_arena_free_async(a, d_slot, s);
    }
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    double dt = wh_now_seconds() - t0;
    CHECK(wh_arena_status(a) == WH_OK);
    printf("gpu commands: %u alloc+free pairs, %.2f us per pair (enqueue to completion)\n", pairs, dt * 1e6 / pairs);
    t0 = wh_now_seconds();
    for (uint32_t i = 0; i < pairs; ++i) wh_arena_replace_async(a, d_n, 1, d_slot, s);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    dt = wh_now_seconds() - t0;
    CHECK(wh_arena_status(a) == WH_OK);
    printf("gpu commands: %u replace, %.2f us each\n", pairs, dt * 1e6 / pairs);
    WH_CUDA_OR_DIE(cudaStreamDestroy(s));
    WH_CUDA_OR_DIE(cudaFree(d_n));
    WH_CUDA_OR_DIE(cudaFree(d_slot));
    wh_arena_destroy(a);
}

static __global__ void replace_span_kernel(wh_arena_ref a, const size_t *count, wh_arena_span *slot) {
    (void)wh_arena_replace_span_thread(a, *count, 36, slot);
}
static __global__ void replace_span_block_kernel(wh_arena_ref a, const size_t *count, wh_arena_span *slot,
                                                 uint64_t smem_bytes) {
    extern __shared__ uint64_t smem[];
    wh_status st = wh_arena_replace_span_block(a, *count, 36, slot, smem, smem_bytes);
    if (st != WH_OK && threadIdx.x == 0) printf("block replace: status %d\n", (int)st);
}

/* RING policy on the GPU (see the file comment). */
static void test_ring(uint32_t rounds, wh_arena_mirror mirror) {
    enum { K = 3 };
    const uint64_t seed = 77, max_count = 60000, g = 256;
    uint64_t most = 0;
    std::vector<uint64_t> cnt(rounds);
    for (uint32_t f = 0; f < rounds; ++f) cnt[f] = 1 + wh_hash64(seed + f) % max_count;
    for (uint32_t f = 0; f < rounds; ++f) {
        uint64_t live = 0;
        for (uint32_t j = 0; j < K && j <= f; ++j) live += (cnt[f - j] * 36 + 32 + g - 1) / g * g;
        most = live > most ? live : most;
    }
    size_t region = (size_t)(most + 2 * (K + 1) * g);
    wh_arena_config cfg = {};
    cfg.bytes = region;
    cfg.max_blocks = 64;
    cfg.backend = WH_ARENA_CUDA;
    cfg.policy = WH_ARENA_RING;
    cfg.mirror = mirror;
    wh_arena *a = NULL;
    if (wh_arena_create(&a, &cfg) != WH_OK) {
        fprintf(stderr, "%s\n", wh_last_error());
        exit(1);
    }
    size_t *d_count = dalloc<size_t>(rounds);
    wh_arena_span *d_ring = dalloc<wh_arena_span>(K);
    cudaStream_t s;
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (uint32_t f = 0; f < rounds; ++f) {
        write_counts<<<1, 32, 0, s>>>(d_count + f, 1, seed + f, max_count);
        WH_LAUNCH_OR_DIE();
    }
    double t[3] = {0, 0, 0};
    uint32_t nk[3] = {0, 0, 0};
    size_t smem = wh_arena_meta_bytes(a);
    for (uint32_t f = 0; f < rounds;) { /* blocks of 50 rounds: commands, kernel threads, blocks */
        int kind = (f / 50) % 3;
        WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
        double t0 = wh_now_seconds();
        for (uint32_t e = f + 50 < rounds ? f + 50 : rounds; f < e; ++f) {
            nk[kind]++;
            if (kind == 0) {
                CHECK(wh_arena_replace_span_async(a, d_count + f, 36, &d_ring[f % K], s) == WH_OK);
            } else if (kind == 1) {
                replace_span_kernel<<<1, 1, 0, s>>>(wh_arena_device(a), d_count + f, &d_ring[f % K]);
                WH_LAUNCH_OR_DIE();
            } else {
                replace_span_block_kernel<<<1, 256, smem, s>>>(wh_arena_device(a), d_count + f, &d_ring[f % K], smem);
                WH_LAUNCH_OR_DIE();
            }
        }
        WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
        t[kind] += wh_now_seconds() - t0;
        std::vector<wh_arena_span> ring = fetch(d_ring, K);
        wh_handle parts[2 * K];
        uint64_t bytes[2 * K], strides[2 * K];
        for (int j = 0; j < K; ++j) {
            CHECK(ring[j].part[0].ptr != 0 && (ring[j].count0 < ring[j].count) == (ring[j].part[1].ptr != 0));
            for (int p = 0; p < 2; ++p) {
                parts[2 * j + p] = ring[j].part[p];
                bytes[2 * j + p] = (p ? ring[j].count - ring[j].count0 : ring[j].count0) * 36;
                strides[2 * j + p] = 36;
            }
        }
        CHECK_EQ_U64(wh_arena_oracle(parts, bytes, strides, 2 * K, (uintptr_t)wh_arena_base(a), region, NULL, NULL), 0);
    }
    wh_blocks_report rep;
    CHECK(wh_arena_check(a, &rep) == WH_OK && rep.used >= K);
    wh_arena_stats st;
    CHECK(wh_arena_flush_async(a, s) == WH_OK); /* the mirror up to date in either mode */
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    CHECK(wh_arena_stats_get(a, &st) == WH_OK && st.failures == 0 && st.first_status == WH_OK);
    CHECK_EQ_U64(st.live_blocks, rep.used);
    printf(
        "gpu ring, mirror %s: %u replaces of K=%d spans in %.4f x the most live bytes, no failure; %.2f us per replace "
        "command, %.2f by a kernel thread, %.2f by a block staging %zu bytes in smem\n",
        mirror == WH_ARENA_MIRROR_EVERY ? "every command" : "on failure", rounds, K, (double)region / (double)most,
        t[0] * 1e6 / (nk[0] ? nk[0] : 1), t[1] * 1e6 / (nk[1] ? nk[1] : 1), t[2] * 1e6 / (nk[2] ? nk[2] : 1), smem);
    WH_CUDA_OR_DIE(cudaStreamDestroy(s));
    WH_CUDA_OR_DIE(cudaFree(d_count));
    WH_CUDA_OR_DIE(cudaFree(d_ring));
    destroy_checked(a);
}

#define AHEAD_POLLS (1u << 22) /* polls of a committer's bounded waits */

/* wh_arena_ring_commit by the whole block, each mode as the tests drive it
 * (the mode a constant: the kernel keeps only its code). */
static __forceinline__ __device__ wh_arena_commit commit_args(wh_arena_commit_mode mode, const wh_arena_span *ring,
                                                              uint32_t k, uint32_t first, uint32_t frames, void *smem,
                                                              uint64_t smem_bytes) {
    wh_arena_commit c;
    memset(&c, 0, sizeof c);
    c.mode = mode;
    c.ring = (wh_arena_span *)ring;
    c.k = k;
    c.first = first;
    c.frames = frames;
    c.tries = AHEAD_POLLS;
    c.smem = smem;
    c.smem_bytes = smem_bytes;
    return c;
}
static __forceinline__ __device__ wh_status commit_now(wh_arena_ref a, const wh_arena_span *slot, void *smem,
                                                       uint64_t smem_bytes) {
    wh_arena_commit c = commit_args(WH_ARENA_COMMIT_NOW, slot, 1u, 0u, 1u, smem, smem_bytes);
    return wh_arena_ring_commit(a, &c);
}

/* RING reservations on the GPU (arena/reserve.h): one thread reserves (its
 * first half while another warp reads the count, as marching cubes does),
 * then a block commits (staged in smem), in one kernel (as the fused
 * marching-cubes frame) or in two (count's tail, then generate), or a block
 * without smem commits in place (no plan: the next reserve goes the slow
 * way).  A twin arena runs the same replaces as commands; after every 50
 * rounds both rings hold the same spans (offsets, descriptors,
 * generations) and both images the same generations and block core, byte
 * for byte.  Counts: some zero, some too large, a tight region (failures:
 * the slow path, the same status). */
static __global__ void reserve_commit_kernel(wh_arena_ref a, const size_t *count, wh_arena_span *slot,
                                             const wh_arena_span *next, uint64_t smem_bytes, bool commit, bool defer,
                                             uint32_t *baton, unsigned *timeouts) {
    extern __shared__ uint64_t smem[];
    __shared__ size_t n;
    wh_arena_ring_ticket tk;
    wh_status st = WH_OK;
    if (threadIdx.x == 0) n = *count; /* the count, while warp 1 begins the reserve */
    if (threadIdx.x == 32 && baton) { /* the lock handed on by the last commit: only read */
        uint32_t b = 0;
        for (uint32_t k = 0; k < AHEAD_POLLS && (b = wh_atomic_load(baton, WH_ACQUIRE)) == 0; ++k) __nanosleep(64);
        if (b == 1u) {
            wh_atomic_store(baton, 0u, WH_RELAXED); /* before the announce: the next commit adds after it */
            wh_arena_ring_reserve_read_handed(a, slot, &tk);
        } else {
            tk.locked = 0u;
            st = WH_ERR_RETRY_LIMIT;
            atomicAdd(timeouts, 1u);
        }
    } else if (threadIdx.x == 32) {
        st = wh_arena_ring_reserve_begin(a, slot, 0, &tk);
    }
    __syncthreads();
    if (threadIdx.x == 32 && st == WH_OK)
        (void)(defer ? wh_arena_ring_reserve_end_deferred(a, &tk, n, 36, next)
                     : wh_arena_ring_reserve_end(a, &tk, n, 36, next));
    __threadfence();
    if (defer && threadIdx.x == 32 && st == WH_OK) wh_arena_ring_reserve_publish(a); /* after the fence */
    __syncthreads();
    if (commit) (void)commit_now(a, slot, smem, smem_bytes);
}
static __global__ void commit_kernel(wh_arena_ref a, const wh_arena_span *slot, uint64_t smem_bytes) {
    extern __shared__ uint64_t smem[];
    (void)commit_now(a, slot, smem, smem_bytes);
}
/* A commit launched ahead of its reserve, on another stream: it waits,
 * bounded, until the reservation is published (timeouts counted); with a
 * baton it hands the lock on to the next reserve. */
static __global__ void commit_ahead_kernel(wh_arena_ref a, const wh_arena_span *slot, uint64_t smem_bytes,
                                           unsigned *timeouts, uint32_t *baton) {
    extern __shared__ uint64_t smem[];
    wh_arena_commit c = commit_args(WH_ARENA_COMMIT_AHEAD, slot, 1u, 0u, 1u, smem, smem_bytes);
    wh_arena_ring_baton b = {baton, 1u, 2u};
    if (baton) c.last = b; /* else unlock */
    if (wh_arena_ring_commit(a, &c) == WH_ERR_RETRY_LIMIT && threadIdx.x == 0) atomicAdd(timeouts, 1u);
}
/* One committer for a chain of frames (the round's), launched ahead of them
 * all: it keeps the image in smem between frames and hands the lock on to
 * each next reserve; the chain's last commit unlocks. */
static __global__ void commit_chain_kernel(wh_arena_ref a, const wh_arena_span *ring, uint32_t k, uint32_t f0,
                                           uint32_t frames, uint64_t smem_bytes, unsigned *timeouts, uint32_t *baton) {
    extern __shared__ uint64_t smem[];
    wh_arena_commit c = commit_args(WH_ARENA_COMMIT_AHEAD, ring, k, f0, frames, smem, smem_bytes);
    wh_arena_ring_baton b = {baton, 1u, 2u};
    c.baton = b; /* the chain's last unlocks */
    if (wh_arena_ring_commit(a, &c) == WH_ERR_RETRY_LIMIT && threadIdx.x == 0) atomicAdd(timeouts, 1u);
}
static __global__ void ring_counts(size_t *counts, uint32_t n, uint64_t seed, uint64_t max_count) {
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
        uint64_t r = wh_hash64(seed + i);
        counts[i] = i % 41 == 40 ? 0 : i % 97 == 96 ? 4 * max_count : 1 + r % max_count;
    }
}

static std::vector<uint8_t> image_tail(wh_arena *a) {
    wh__arena_state s;
    WH_CUDA_OR_DIE(cudaMemcpy(&s, wh_arena_device(a).s, sizeof s, cudaMemcpyDeviceToHost));
    std::vector<uint8_t> h(wh_arena_meta_bytes(a) - s.gen_off);
    WH_CUDA_OR_DIE(cudaMemcpy(h.data(), (char *)wh_arena_device(a).s + s.gen_off, h.size(), cudaMemcpyDeviceToHost));
    return h;
}

/* A reference arena and the arena under test, the same configuration. */
static void make_twins(const wh_arena_config &cfg, wh_arena **ref, wh_arena **a) {
    if (wh_arena_create(ref, &cfg) != WH_OK || wh_arena_create(a, &cfg) != WH_OK) {
        fprintf(stderr, "%s\n", wh_last_error());
        exit(1);
    }
}
/* Two streams and the events that fork the second from the first and join it back. */
static void make_fork_join(cudaStream_t *s, cudaStream_t *s2, cudaEvent_t *fork, cudaEvent_t *join) {
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    WH_CUDA_OR_DIE(cudaStreamCreateWithFlags(s2, cudaStreamNonBlocking));
    WH_CUDA_OR_DIE(cudaEventCreateWithFlags(fork, cudaEventDisableTiming));
    WH_CUDA_OR_DIE(cudaEventCreateWithFlags(join, cudaEventDisableTiming));
}
static void free_fork_join(cudaStream_t s, cudaStream_t s2, cudaEvent_t fork, cudaEvent_t join) {
    WH_CUDA_OR_DIE(cudaStreamDestroy(s));
    WH_CUDA_OR_DIE(cudaStreamDestroy(s2));
    WH_CUDA_OR_DIE(cudaEventDestroy(fork));
    WH_CUDA_OR_DIE(cudaEventDestroy(join));
}

/* The twin's ring and the arena's: the same spans (offsets from each base,
 * descriptors, counts). */
static void expect_same_ring(const wh_arena_span *d_x, uint64_t xbase, const wh_arena_span *d_y, uint64_t ybase,
                             int k) {
    std::vector<wh_arena_span> x = fetch(d_x, k), y = fetch(d_y, k);
    for (int j = 0; j < k; ++j) {
        for (int p = 0; p < 2; ++p) {
            CHECK((x[j].part[p].ptr ? x[j].part[p].ptr - xbase : 0) ==
                  (y[j].part[p].ptr ? y[j].part[p].ptr - ybase : 0));
            CHECK(x[j].part[p].block == y[j].part[p].block && x[j].part[p].gen == y[j].part[p].gen);
        }
        CHECK(x[j].count0 == y[j].count0 && x[j].count == y[j].count);
    }
}

static void test_ring_reserve(uint32_t rounds, wh_arena_mirror mirror) {
    enum { K = 3 };
    const uint64_t seed = 99, max_count = 60000;
    wh_arena_config cfg = {};
    cfg.bytes = (size_t)(K * max_count * 36 * 3 / 4); /* 1.5 x the mean live bytes: some out of memory */
    cfg.max_blocks = 64;
    cfg.backend = WH_ARENA_CUDA;
    cfg.policy = WH_ARENA_RING;
    cfg.mirror = mirror;
    cfg.index = mirror == WH_ARENA_MIRROR_ON_FAILURE ? WH_BLOCKS_LIST : WH_BLOCKS_TLSF; /* both kinds of core */
    wh_arena *ref = NULL, *a = NULL;
    make_twins(cfg, &ref, &a);
    size_t *d_count = dalloc<size_t>(rounds);
    wh_arena_span *d_ref = dalloc<wh_arena_span>(K), *d_ring = dalloc<wh_arena_span>(K);
    cudaStream_t s, s2;
    cudaEvent_t fork, join;
    make_fork_join(&s, &s2, &fork, &join);
    unsigned *d_timeouts = dalloc<unsigned>(1);
    WH_CUDA_OR_DIE(cudaMemset(d_timeouts, 0, sizeof(unsigned)));
    uint32_t *d_baton = dalloc<uint32_t>(1); /* the lock handed from commit to reserve */
    WH_CUDA_OR_DIE(cudaMemset(d_baton, 0, sizeof(uint32_t)));
    ring_counts<<<1, 256, 0, s>>>(d_count, rounds, seed, max_count);
    WH_LAUNCH_OR_DIE();
    size_t smem = wh_arena_meta_bytes(a);
    uint64_t rbase = (uintptr_t)wh_arena_base(ref), base = (uintptr_t)wh_arena_base(a);
    double t_cmd = 0, t_res = 0;
    for (uint32_t f = 0; f < rounds;) {
        uint32_t e = f + 40 < rounds ? f + 40 : rounds, f0 = f; /* 40: --small's 200 see every kind */
        WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
        double t0 = wh_now_seconds();
        for (uint32_t i = f0; i < e; ++i)
            CHECK(wh_arena_replace_span_async(ref, d_count + i, 36, &d_ref[i % K], s) == WH_OK);
        WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
        double t1 = wh_now_seconds();
        t_cmd += t1 - t0;
        /* one kernel; two kernels; in place now and then; one kernel; the commit ahead on s2; one
           committer for the round on s2 */
        int kind = (f0 / 40) % 6;
        if (kind == 5) { /* its copy kept from frame to frame */
            WH_CUDA_OR_DIE(cudaEventRecord(fork, s));
            WH_CUDA_OR_DIE(cudaStreamWaitEvent(s2, fork, 0));
            commit_chain_kernel<<<1, 256, smem, s2>>>(wh_arena_device(a), d_ring, K, f0, e - f0, smem, d_timeouts,
                                                      d_baton);
            WH_LAUNCH_OR_DIE();
            for (; f < e; ++f) {
                reserve_commit_kernel<<<1, 256, 0, s>>>(wh_arena_device(a), d_count + f, &d_ring[f % K],
                                                        &d_ring[(f + 1) % K], 0, false, f % 2, f > f0 ? d_baton : NULL,
                                                        d_timeouts);
                WH_LAUNCH_OR_DIE();
            }
        }
        if (kind == 4) { /* s2 starts after what s has queued */
            WH_CUDA_OR_DIE(cudaEventRecord(fork, s));
            WH_CUDA_OR_DIE(cudaStreamWaitEvent(s2, fork, 0));
        }
        for (; f < e; ++f) {
            wh_arena_span *slot = &d_ring[f % K], *next = &d_ring[(f + 1) % K];
            if (kind == 4) { /* commit first, on s2: it waits for the reserve on s */
                /* a chain over the round's frames: each commit hands the lock to the next reserve */
                commit_ahead_kernel<<<1, 256, smem, s2>>>(wh_arena_device(a), slot, smem, d_timeouts,
                                                          f + 1 < e ? d_baton : NULL);
                WH_LAUNCH_OR_DIE();
                reserve_commit_kernel<<<1, 256, 0, s>>>(wh_arena_device(a), d_count + f, slot, next, 0, false, f % 2,
                                                        f > f0 ? d_baton : NULL, d_timeouts);
                WH_LAUNCH_OR_DIE();
                continue;
            }
            bool two = kind == 1 || (kind == 2 && f % 7 == 0);
            reserve_commit_kernel<<<1, 256, two ? 0 : smem, s>>>(wh_arena_device(a), d_count + f, slot, next, smem,
                                                                 !two, f % 2, NULL, d_timeouts);
            WH_LAUNCH_OR_DIE();
            if (two) {
                uint64_t sb = kind == 2 ? 0 : smem; /* 0: in place */
                commit_kernel<<<1, 256, sb, s>>>(wh_arena_device(a), slot, sb);
                WH_LAUNCH_OR_DIE();
            }
        }
        if (kind >= 4) {
            WH_CUDA_OR_DIE(cudaEventRecord(join, s2));
            WH_CUDA_OR_DIE(cudaStreamWaitEvent(s, join, 0));
        }
        WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
        t_res += wh_now_seconds() - t1;
        expect_same_ring(d_ref, rbase, d_ring, base, K);
        CHECK(image_tail(ref) == image_tail(a));
        CHECK(wh_arena_status(ref) == wh_arena_status(a));
    }
    wh_arena_stats x, y;
    CHECK(wh_arena_flush_async(ref, s) == WH_OK && wh_arena_flush_async(a, s) == WH_OK);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    CHECK(wh_arena_stats_get(ref, &x) == WH_OK && wh_arena_stats_get(a, &y) == WH_OK);
    CHECK(x.allocs == y.allocs && x.frees == y.frees && x.failures == y.failures && x.commands == y.commands);
    CHECK(x.used_bytes == y.used_bytes && x.peak_used == y.peak_used && x.failures > 0);
    wh__arena_state st;
    WH_CUDA_OR_DIE(cudaMemcpy(&st, wh_arena_device(a).s, sizeof st, cudaMemcpyDeviceToHost));
    CHECK(st.planned > rounds / 2 && !st.pending.active && st.lock == 0);
    CHECK(st.warm_commits > rounds / 12); /* the chain rounds' commits mostly only allocate */
    unsigned timeouts = 1;
    WH_CUDA_OR_DIE(cudaMemcpy(&timeouts, d_timeouts, sizeof timeouts, cudaMemcpyDeviceToHost));
    CHECK(timeouts == 0); /* every commit launched ahead found its reservation */
    wh_blocks_report rep;
    CHECK(wh_arena_check(a, &rep) == WH_OK);
    printf("gpu ring reserve, mirror %s: %u replaces, %llu failed, %llu by the plan, %llu commits only allocated; "
           "%.2f us per replace command, %.2f per reserve + commit\n",
           mirror == WH_ARENA_MIRROR_EVERY ? "every command" : "on failure", rounds, (unsigned long long)y.failures,
           (unsigned long long)st.planned, (unsigned long long)st.warm_commits, t_cmd * 1e6 / rounds,
           t_res * 1e6 / rounds);
    free_fork_join(s, s2, fork, join);
    WH_CUDA_OR_DIE(cudaFree(d_timeouts));
    WH_CUDA_OR_DIE(cudaFree(d_baton));
    WH_CUDA_OR_DIE(cudaFree(d_count));
    WH_CUDA_OR_DIE(cudaFree(d_ref));
    WH_CUDA_OR_DIE(cudaFree(d_ring));
    destroy_checked(ref);
    destroy_checked(a);
}

/* The forecast ring (arena/forecast.h) on the GPU, as marching cubes'
 * one-pass frames drive it: a producer kernel a frame (a block) writes its
 * elements through the window forecast for it, runs the replace on the
 * forecast, posts it and publishes the next window -- no lock -- while one
 * committer block a round on a second stream commits the posts in order
 * (WH_ARENA_COMMIT_POSTS).  A twin replays the counts that went
 * through as commands: the same spans, the same block core; every live
 * slot's elements read back as written; the arena counts exactly the
 * failures the forecast announced (no WH_ERR_CORRUPT). */
static bool g_verbose = false; /* --verbose: every posts round */
struct post_ring {
    wh_arena_forecast fc;
    wh_arena_span w[2]; /* frame f's window in w[f % 2], published by tag[f % 2] = f + 1 */
    uint32_t tag[2], consumed, lost, expect_failures;
    wh_arena_ring_post posts[8];
};
static __global__ void post_producer_kernel(wh_arena_ref a, post_ring *pr, const size_t *count, size_t *went,
                                            uint32_t f, uint32_t k, bool first, bool last, unsigned *timeouts) {
    __shared__ wh_arena_span w;
    __shared__ bool ok;
    if (threadIdx.x == 0) {
        if (first && wh_arena_ring_forecast_current(&pr->fc, a)) { /* the chain's first window, forecast */
            wh_arena_ring_forecast_window(&pr->fc, f % k, 36, &pr->w[f % 2]);
            __threadfence();
            *(volatile uint32_t *)&pr->tag[f % 2] = f + 1u;
        }
        uint32_t n = 0;
        while (n < AHEAD_POLLS && wh_atomic_load(&pr->tag[f % 2], WH_ACQUIRE) != f + 1u) {
            __nanosleep(64);
            ++n;
        }
        ok = n < AHEAD_POLLS;
        if (!ok) atomicAdd(timeouts, 1u);
        w = pr->w[f % 2];
    }
    __syncthreads();
    if (!ok) return;
    uint64_t all = *count, cnt = all < w.count ? all : w.count;
    for (uint64_t i = threadIdx.x; i < cnt; i += blockDim.x)
        *(uint32_t *)wh_arena_span_at(&w, i, 36) = (uint32_t)(f * 2654435761u) ^ (uint32_t)i;
    __syncthreads();
    if (threadIdx.x != 0) return;
    __threadfence(); /* the elements before the post */
    uint32_t n = 0;
    while (n < AHEAD_POLLS && wh_atomic_load(&pr->consumed, WH_ACQUIRE) + 8u < f + 1u) {
        __nanosleep(64);
        ++n;
    }
    if (n == AHEAD_POLLS) atomicAdd(timeouts, 1u);
    wh_arena_ring_post *p = &pr->posts[f % 8];
    p->count = cnt;
    p->clamped = cnt < all;
    p->fstatus = (uint32_t)wh_arena_ring_forecast_replace(&pr->fc, f % k, cnt, 36, &p->forecast);
    pr->lost += p->fstatus == WH_ERR_CORRUPT;
    pr->expect_failures += p->fstatus != WH_OK || p->clamped;
    went[f] = cnt;
    if (!last && pr->fc.valid) wh_arena_ring_forecast_window(&pr->fc, (f + 1) % k, 36, &pr->w[(f + 1) % 2]);
    __threadfence();
    *(volatile uint32_t *)&p->seq = f + 1u;
    if (!last && pr->fc.valid) *(volatile uint32_t *)&pr->tag[(f + 1) % 2] = f + 2u;
}
static __global__ void posts_commit_kernel(wh_arena_ref a, wh_arena_span *ring, uint32_t k, uint32_t f0,
                                           uint32_t frames, post_ring *pr, uint64_t smem_bytes, unsigned *timeouts) {
    extern __shared__ uint64_t smem[];
    wh_arena_ring_posts p = {pr->posts, 8u, f0, &pr->consumed, 36u, &pr->fc, &pr->w[f0 % 2], &pr->tag[f0 % 2], f0 + 1u};
    wh_arena_commit c = commit_args(WH_ARENA_COMMIT_POSTS, ring, k, f0 % k, frames, smem, smem_bytes);
    c.posts = &p;
    wh_status st = wh_arena_ring_commit(a, &c);
    if (threadIdx.x == 0 && st == WH_ERR_RETRY_LIMIT) atomicAdd(timeouts, 1u); /* else the last post's status */
}
static __global__ void check_slots(const wh_arena_span *ring, uint32_t k, uint32_t last, unsigned long long *bad) {
    for (uint32_t j = 0; j < k && j <= last; ++j) {
        uint32_t f = last - j;
        const wh_arena_span *sp = &ring[f % k];
        for (uint64_t i = threadIdx.x; sp->part[0].ptr && i < sp->count; i += blockDim.x)
            if (*(const uint32_t *)wh_arena_span_at(sp, i, 36) != ((uint32_t)(f * 2654435761u) ^ (uint32_t)i))
                atomicAdd(bad, 1ull);
    }
}

static void test_ring_posts(uint32_t rounds) {
    enum { K = 3, CHAIN = 40 };
    /* the stack limit first: else round 0's committer waits for local memory behind its producers */
    const void *kernels[] = {(const void *)posts_commit_kernel, (const void *)post_producer_kernel,
                             (const void *)check_slots};
    wh_cuda_stack_for(kernels, 3);
    const uint64_t seed = 7, max_count = 60000;
    wh_arena_config cfg = {};
    cfg.bytes = (size_t)(K * max_count * 36 * 3 / 4); /* as test_ring_reserve: some out of memory */
    cfg.max_blocks = 64;
    cfg.backend = WH_ARENA_CUDA;
    cfg.policy = WH_ARENA_RING;
    cfg.mirror = WH_ARENA_MIRROR_ON_FAILURE;
    cfg.index = WH_BLOCKS_LIST;
    wh_arena *ref = NULL, *a = NULL;
    make_twins(cfg, &ref, &a);
    size_t *d_count = dalloc<size_t>(rounds), *d_went = dalloc<size_t>(rounds);
    wh_arena_span *d_ref = dalloc<wh_arena_span>(K), *d_ring = dalloc<wh_arena_span>(K);
    post_ring *pr = dalloc<post_ring>(1);
    WH_CUDA_OR_DIE(cudaMemset(pr, 0, sizeof *pr));
    unsigned *d_timeouts = dalloc<unsigned>(1);
    unsigned long long *d_bad = dalloc<unsigned long long>(1);
    WH_CUDA_OR_DIE(cudaMemset(d_timeouts, 0, sizeof(unsigned)));
    WH_CUDA_OR_DIE(cudaMemset(d_bad, 0, sizeof(unsigned long long)));
    cudaStream_t s, s2;
    cudaEvent_t fork, join;
    make_fork_join(&s, &s2, &fork, &join);
    ring_counts<<<1, 256, 0, s>>>(d_count, rounds, seed, max_count);
    WH_LAUNCH_OR_DIE();
    size_t smem = wh_arena_meta_bytes(a);
    uint64_t rbase = (uintptr_t)wh_arena_base(ref), base = (uintptr_t)wh_arena_base(a);
    for (uint32_t f0 = 0; f0 < rounds; f0 += CHAIN) {
        uint32_t e = f0 + CHAIN < rounds ? f0 + CHAIN : rounds;
        WH_CUDA_OR_DIE(cudaEventRecord(fork, s));
        WH_CUDA_OR_DIE(cudaStreamWaitEvent(s2, fork, 0));
        posts_commit_kernel<<<1, 256, smem, s2>>>(wh_arena_device(a), d_ring, K, f0, e - f0, pr, smem, d_timeouts);
        WH_LAUNCH_OR_DIE();
        for (uint32_t f = f0; f < e; ++f) {
            post_producer_kernel<<<1, 256, 0, s>>>(wh_arena_device(a), pr, d_count + f, d_went, f, K, f == f0,
                                                   f + 1 == e, d_timeouts);
            WH_LAUNCH_OR_DIE();
        }
        WH_CUDA_OR_DIE(cudaEventRecord(join, s2));
        WH_CUDA_OR_DIE(cudaStreamWaitEvent(s, join, 0));
        for (uint32_t f = f0; f < e; ++f) /* the twin: what went through, as commands */
            CHECK(wh_arena_replace_span_async(ref, d_went + f, 36, &d_ref[f % K], s) == WH_OK);
        check_slots<<<1, 256, 0, s>>>(d_ring, K, e - 1, d_bad);
        WH_LAUNCH_OR_DIE();
        WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
        expect_same_ring(d_ref, rbase, d_ring, base, K);
        bool same = image_tail(ref) == image_tail(a);
        CHECK(same);
        (void)wh_arena_clear_status_async(ref, s);
        if (!same || g_verbose) {
            post_ring h;
            unsigned to = 0;
            std::vector<size_t> went(e - f0);
            WH_CUDA_OR_DIE(cudaMemcpy(&h, pr, sizeof h, cudaMemcpyDeviceToHost));
            WH_CUDA_OR_DIE(cudaMemcpy(&to, d_timeouts, sizeof to, cudaMemcpyDeviceToHost));
            WH_CUDA_OR_DIE(cudaMemcpy(went.data(), d_went + f0, went.size() * sizeof(size_t), cudaMemcpyDeviceToHost));
            printf(
                "posts round %u: %s, timeouts %u, lost %u, expected failures %u, forecast %s (%u free), consumed %u, "
                "went %zu %zu %zu\n",
                f0, same ? "same" : "DIFFERENT", to, h.lost, h.expect_failures, h.fc.valid ? "valid" : "invalid",
                h.fc.nfree, h.consumed, went[0], went[1], went[2]);
            if (!same && f0 > 0) break;
        }
    }
    post_ring h;
    unsigned timeouts = 1;
    unsigned long long bad = 1;
    WH_CUDA_OR_DIE(cudaMemcpy(&h, pr, sizeof h, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(&timeouts, d_timeouts, sizeof timeouts, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
    wh_arena_stats y;
    CHECK(wh_arena_flush_async(a, s) == WH_OK);
    WH_CUDA_OR_DIE(cudaStreamSynchronize(s));
    CHECK(wh_arena_stats_get(a, &y) == WH_OK);
    CHECK_EQ_U64(timeouts, 0);
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(h.lost, 0);
    CHECK(h.fc.valid);
    CHECK(y.failures == h.expect_failures && h.expect_failures > 0 && y.first_status != WH_ERR_CORRUPT);
    wh__arena_state st;
    WH_CUDA_OR_DIE(cudaMemcpy(&st, wh_arena_device(a).s, sizeof st, cudaMemcpyDeviceToHost));
    CHECK(st.lock == 0);
    wh_blocks_report rep;
    CHECK(wh_arena_check(a, &rep) == WH_OK);
    printf("gpu ring posts: %u frames on forecast windows, %llu failures as forecast, no lock on the producers' side\n",
           rounds, (unsigned long long)y.failures);
    free_fork_join(s, s2, fork, join);
    WH_CUDA_OR_DIE(cudaFree(d_timeouts));
    WH_CUDA_OR_DIE(cudaFree(d_bad));
    WH_CUDA_OR_DIE(cudaFree(pr));
    WH_CUDA_OR_DIE(cudaFree(d_count));
    WH_CUDA_OR_DIE(cudaFree(d_went));
    WH_CUDA_OR_DIE(cudaFree(d_ref));
    WH_CUDA_OR_DIE(cudaFree(d_ring));
    destroy_checked(ref);
    destroy_checked(a);
}

int main(int argc, char **argv) {
    bool small = false, posts = false;
    uint32_t rounds = 3000;
    wh_cli_opt cli[] = {WH_CLI_FLAG("small", &small, "the sanitizers' size: a few rounds, two fuzz blocks"),
                        WH_CLI_FLAG("verbose", &g_verbose, "a line for every round of the forecast ring"),
                        WH_CLI_FLAG("posts", &posts, "only the forecast ring"),
                        WH_CLI_UINT("rounds", &rounds, "rounds of the random command sequence (not with --small)"),
                        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Stream arena on the GPU: commands, device-side allocation, the RING policy.");
    if (!wh_cuda_available()) {
        printf("no GPU: skipped\n");
        return WH_TEST_SKIP;
    }
    if (posts) { /* the forecast ring alone */
        test_ring_posts(small ? 200 : 2000);
        return wh_test_finish("test_arena_gpu --posts");
    }
    test_status_no_sync();
    if (small)
        test_random(60, 16, 2, 64);
    else
        test_random(rounds, 256, 64, 400);
    if (!small) time_commands(20000);
    test_ring(small ? 200 : 4000, WH_ARENA_MIRROR_EVERY);
    test_ring(small ? 200 : 4000, WH_ARENA_MIRROR_ON_FAILURE);
    test_ring_reserve(small ? 240 : 2000, WH_ARENA_MIRROR_EVERY); /* 240: six rounds, one of each kind */
    test_ring_reserve(small ? 240 : 2000, WH_ARENA_MIRROR_ON_FAILURE);
    test_ring_posts(small ? 200 : 2000);
    return wh_test_finish("test_arena_gpu");
}
