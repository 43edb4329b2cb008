/* SPDX-License-Identifier: MIT */
/* Device heap on the GPU, every built kind: the stress loop of heap_stress.h
 * (random sizes per lane and per iteration, so lanes of a warp diverge and
 * call wh_malloc from partial masks; owner patterns checked before every free)
 * from a full grid until at least 10^7 allocations, then the heap walk (no
 * inconsistency, every byte accounted for, nothing live); then exhaustion and
 * recovery: all threads fill a small heap until NULL, free, and fill again.
 * The circular kinds serialise on their cursors (a convoy, quadratic in the
 * threads that meet there), so each kind starts with 1/8 of the grid and
 * doubles while a launch stays short.  WRAP reuses live memory by design: its
 * own test checks that every reservation lies in the pool, aligned, and that
 * the pool wrapped many times, from a full grid of diverging lanes.  Last, the
 * fused kinds on a 12 GiB heap, past the 8 GB where the paper's fused word
 * stops: chunks beyond 8 GiB are allocated, filled, checked and freed, and the
 * walk accounts for every byte.  Frees a warp makes together: NULL, foreign
 * and double frees in the same call as good ones, counted exactly.  The
 * hardened mode (WH_HEAP_SECURE): the stress with no false report, and a
 * write after free found.  Allocations and frees from out-of-line functions
 * called in divergent loops.  --small: sanitizer size (no 12 GiB heap). */
#include "heap_stress.h"
#include "warpheap/cuda_check.h"
#include "wh_cli.h"
#include "wh_test.h"

#include <algorithm>
#include <stdio.h>
#include <vector>

static __global__ void stress_kernel(wh_heap h, wh_hs_shape shape, void **held, uint32_t *sizes, wh_hs_counts *total,
                                     uint32_t threads, uint64_t salt) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    wh_hs_counts c = {0, 0, 0, 0, 0};
    wh_hs_thread(&h, salt + t, &shape, held + (size_t)t * shape.cap, sizes + (size_t)t * shape.cap, &c);
    atomicAdd(&total->allocs, c.allocs);
    atomicAdd(&total->frees, c.frees);
    atomicAdd(&total->failed, c.failed);
    atomicAdd(&total->corrupt, c.corrupt);
    atomicAdd(&total->misaligned, c.misaligned);
}

/* Fill: each thread takes `size` blocks until NULL or cap; free: give back. */
static __global__ void fill_kernel(wh_heap h, void **held, uint32_t cap, uint32_t size, unsigned long long *n) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t k = 0;
    for (; k < cap; ++k) {
        void *p = wh_malloc(&h, size);
        held[(size_t)t * cap + k] = p;
        if (!p) break;
        wh_hs_fill(t, p, size);
    }
    atomicAdd(n, (unsigned long long)k);
}
static __global__ void drain_kernel(wh_heap h, void **held, uint32_t cap, uint32_t size, unsigned long long *bad) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    for (uint32_t k = 0; k < cap; ++k) {
        void *p = held[(size_t)t * cap + k];
        if (!p) break;
        if (!wh_hs_check(t, p, size)) atomicAdd(bad, 1ull);
        wh_free(&h, p);
    }
}

/* WRAP: random sizes, and a lane skips one iteration in four, so lanes of a
 * warp reach wh_malloc from different masks; counts [got, bad, bytes, tried]. */
static __global__ void wrap_kernel(wh_heap h, uint32_t ops, unsigned long long *n) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long got = 0, bad = 0, bytes = 0, tried = 0;
    for (uint32_t k = 0; k < ops; ++k) {
        uint64_t r = wh_hash64((uint64_t)t << 32 | k);
        if (r % 4u == 0) continue;
        uint32_t size = 1u + (uint32_t)((r >> 8) % 1024u);
        uint8_t *p = (uint8_t *)wh_malloc(&h, size);
        tried++;
        if (!p) continue;
        got++;
        bytes += size;
        bad += p < h.base || p + size > h.base + h.bytes || (uintptr_t)p % 16u;
    }
    atomicAdd(n, got);
    atomicAdd(n + 1, bad);
    atomicAdd(n + 2, bytes);
    atomicAdd(n + 3, tried);
}

/* Beyond 8 GiB: each thread tries `per` blocks and keeps those it got in
 * front, NULL after them (drain_kernel frees them); counts [allocs, beyond
 * 8 GiB, failed]. */
static __global__ void far_fill_kernel(wh_heap h, void **held, uint32_t per, uint32_t size, unsigned long long *n) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t got = 0;
    unsigned long long far = 0;
    for (uint32_t k = 0; k < per; ++k) {
        uint8_t *p = (uint8_t *)wh_malloc(&h, size);
        if (!p) continue;
        wh_hs_fill(t, p, size);
        held[(size_t)t * per + got++] = p;
        far += (uint64_t)(p - h.base) >= (8ull << 30);
    }
    if (got < per) held[(size_t)t * per + got] = NULL;
    atomicAdd(n, (unsigned long long)got);
    atomicAdd(n + 1, far);
    atomicAdd(n + 2, (unsigned long long)(per - got));
}

static int sms(void) {
    int dev = 0, n = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return n;
}

/* Ways per slab class (wh_heap_config.ways) of the slab and default heaps
 * make() creates: 0 = by heap size (one way below 4 GiB). */
static uint32_t slab_ways = 0;
/* Flags of the heaps make() creates (WH_HEAP_SECURE: the hardened mode). */
static uint32_t heap_flags = 0;

static wh_heap make(wh_heap_kind kind, uint64_t bytes) {
    wh_heap h;
    wh_heap_config cfg = {bytes, kind, heap_flags, kind == WH_HEAP_DEFAULT || kind == WH_HEAP_SLAB ? slab_ways : 0u,
                          0,     NULL};
    if (wh_heap_create(&h, &cfg) != WH_OK) {
        fprintf(stderr, "heap create (%s, %llu): %s\n", wh_heap_kind_name(kind), (unsigned long long)bytes,
                wh_last_error());
        exit(1);
    }
    return h;
}

static void check_walk(const wh_heap *h, const char *what) {
    wh_heap_usage s;
    CHECK(wh_heap_stats(h, &s) == WH_OK);
    printf("  %s walk: used %llu free %llu overhead %llu live %llu inconsistent %llu double %llu foreign %llu "
           "failed %llu ext %.3f\n",
           what, (unsigned long long)s.used_bytes, (unsigned long long)s.free_bytes,
           (unsigned long long)s.overhead_bytes, (unsigned long long)s.allocations,
           (unsigned long long)s.inconsistencies, (unsigned long long)s.double_frees,
           (unsigned long long)s.foreign_frees, (unsigned long long)s.failed_allocs, s.external_frag);
    CHECK_EQ_U64(s.inconsistencies, 0);
    CHECK_EQ_U64(s.used_bytes + s.free_bytes + s.overhead_bytes, s.heap_bytes);
    CHECK_EQ_U64(s.double_frees, 0);
    CHECK_EQ_U64(s.foreign_frees, 0);
    CHECK_EQ_U64(s.corruptions, 0);
    if (h->kind != WH_HEAP_BUMP) CHECK_EQ_U64(s.allocations, 0);
}

/* Frees a warp makes together (heap/slab.h, wh__slab_free_group): lanes of
 * four classes (base << lane % 4 bytes: 16-128 B, or 1-8 KiB, whose bitmap
 * words span pages), so a warp's call holds groups of
 * lanes whose slots share a bitmap word; in each call a NULL (lane 7), a
 * pointer inside a slot (lane 9: foreign) and two lanes freeing one slot
 * (lane 5 frees lane 4's: one double free); lanes split over two branches.
 * The second kernel frees what the first left (lanes 5, 7, 9), the third
 * frees lane 0's slot again (a double free of a freed slot). */
static __global__ void group_alloc_kernel(wh_heap h, uint32_t base, void **held, unsigned long long *n) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    void *p = wh_malloc(&h, base << (threadIdx.x & 3u));
    held[t] = p;
    if (!p)
        atomicAdd(n, 1ull);
    else
        wh_hs_fill(t, p, 16);
}
static __global__ void group_free_kernel(wh_heap h, void **held, int pass, unsigned long long *n) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31u;
    void *p = held[t];
    if (pass == 0) {
        if (p && !wh_hs_check(t, p, 16)) atomicAdd(n + 1, 1ull);
        if (lane == 5) p = held[t - 1];
        if (lane == 7) p = NULL;
        if (lane == 9) p = (uint8_t *)p + 8;
        if (wh_hash64(t) & 1u)
            wh_free(&h, p);
        else
            wh_free_warp(&h, p, wh_active_mask());
    } else if (pass == 1) {
        if (lane == 5 || lane == 7 || lane == 9) wh_free(&h, p);
    } else if (lane == 0) {
        wh_free(&h, p);
    }
}
static void grouped_frees(wh_heap_kind kind, uint32_t flags, uint32_t base) {
    const uint32_t threads = 64u * 256u, warps = threads / 32u;
    heap_flags = flags;
    wh_heap h = make(kind, (uint64_t)base << 20); /* room for a round, many times over */
    heap_flags = 0;
    void **held;
    unsigned long long *d_n, n[2];
    WH_CUDA_OR_DIE(cudaMalloc(&held, threads * sizeof *held));
    WH_CUDA_OR_DIE(cudaMalloc(&d_n, sizeof n));
    WH_CUDA_OR_DIE(cudaMemset(d_n, 0, sizeof n));
    for (int round = 0; round < 2; ++round) { /* the heap stays usable: again */
        group_alloc_kernel<<<threads / 256u, 256>>>(h, base, held, d_n);
        WH_LAUNCH_OR_DIE();
        for (int pass = 0; pass < 3; ++pass) {
            group_free_kernel<<<threads / 256u, 256>>>(h, held, pass, d_n);
            WH_LAUNCH_OR_DIE();
        }
    }
    WH_CUDA_OR_DIE(cudaMemcpy(n, d_n, sizeof n, cudaMemcpyDeviceToHost));
    wh_heap_usage s;
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    printf("%-8s%s grouped frees of %u-%u B: %u warps x 2 rounds, %llu failed, %llu corrupt; walk: live %llu "
           "inconsistent %llu double %llu foreign %llu\n",
           wh_heap_kind_name(kind), flags ? " secure" : "", base, base * 8u, warps, n[0], n[1],
           (unsigned long long)s.allocations, (unsigned long long)s.inconsistencies, (unsigned long long)s.double_frees,
           (unsigned long long)s.foreign_frees);
    CHECK_EQ_U64(n[0], 0);
    CHECK_EQ_U64(n[1], 0);
    CHECK_EQ_U64(s.allocations, 0);
    CHECK_EQ_U64(s.inconsistencies, 0);
    CHECK_EQ_U64(s.double_frees, 2ull * 2u * warps);
    CHECK_EQ_U64(s.foreign_frees, 2ull * warps);
    CHECK_EQ_U64(s.used_bytes + s.free_bytes + s.overhead_bytes, s.heap_bytes);
    WH_CUDA_OR_DIE(cudaFree(held));
    WH_CUDA_OR_DIE(cudaFree(d_n));
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* Allocations and frees from functions kept out of line, called from two
 * branches of a loop whose lanes win or lose compare-and-swaps at different
 * iterations (game of life's spread): lanes that took different
 * __activemask() values meet in the same code, so the grouping must hold
 * there too.  No block may be handed out twice (sorted on the host), every
 * block keeps its owner's pattern until its free, and the frees leave
 * nothing live. */
static __device__ __noinline__ void *alloc_out_of_line(const wh_heap *h, size_t n) { return wh_malloc(h, n); }
static __device__ __noinline__ void free_out_of_line(const wh_heap *h, void *p) { wh_free(h, p); }
static __global__ void out_of_line_kernel(wh_heap h, uint32_t n, int *claims, void **got, unsigned long long *fails) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    for (uint32_t k = 0; k < 8u; ++k) {
        uint64_t r = wh_hash64((uint64_t)t << 8 | k);
        void *p = NULL;
        if (r & 3u) {
            if (atomicCAS(&claims[r % 4096u], 0, 1) == 0 || (t & 1u))
                p = alloc_out_of_line(&h, 16u + 16u * ((r >> 8) & 1u));
            else
                p = alloc_out_of_line(&h, 48u);
            if (p)
                wh_hs_fill(t * 8u + k, p, 16);
            else
                atomicAdd(fails, 1ull);
        }
        got[(size_t)t * 8u + k] = p;
    }
}
static __global__ void out_of_line_free_kernel(wh_heap h, uint32_t n, void **got, unsigned long long *corrupt) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    for (uint32_t k = 0; k < 8u; ++k) {
        void *p = got[(size_t)t * 8u + k];
        if (p && !wh_hs_check(t * 8u + k, p, 16)) atomicAdd(corrupt, 1ull);
        if (wh_hash64((uint64_t)t << 8 | k) >> 16 & 1u)
            free_out_of_line(&h, p);
        else if (p)
            wh_free(&h, p);
    }
}
static void out_of_line(wh_heap_kind kind, uint32_t n) {
    wh_heap h = make(kind, 256ull << 20); /* roomy: no allocation may fail */
    int *claims;
    void **got;
    unsigned long long *d_c, c[2];
    WH_CUDA_OR_DIE(cudaMalloc(&claims, 4096 * sizeof *claims));
    WH_CUDA_OR_DIE(cudaMalloc(&got, (size_t)n * 8u * sizeof *got));
    WH_CUDA_OR_DIE(cudaMalloc(&d_c, sizeof c));
    WH_CUDA_OR_DIE(cudaMemset(claims, 0, 4096 * sizeof *claims));
    WH_CUDA_OR_DIE(cudaMemset(d_c, 0, sizeof c));
    out_of_line_kernel<<<(n + 255u) / 256u, 256u>>>(h, n, claims, got, d_c);
    WH_LAUNCH_OR_DIE();
    std::vector<void *> ps((size_t)n * 8u);
    WH_CUDA_OR_DIE(cudaMemcpy(ps.data(), got, ps.size() * sizeof *got, cudaMemcpyDeviceToHost));
    out_of_line_free_kernel<<<(n + 255u) / 256u, 256u>>>(h, n, got, d_c + 1);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaMemcpy(c, d_c, sizeof c, cudaMemcpyDeviceToHost));
    ps.erase(std::remove(ps.begin(), ps.end(), (void *)NULL), ps.end());
    std::sort(ps.begin(), ps.end());
    uint64_t held = ps.size(), twice = (uint64_t)(ps.end() - std::unique(ps.begin(), ps.end()));
    printf("%-8s out of line: %llu blocks handed out, %llu failed, %llu twice, %llu with a wrong pattern\n",
           wh_heap_kind_name(kind), (unsigned long long)held, c[0], (unsigned long long)twice, c[1]);
    CHECK(held > (uint64_t)n); /* about six a thread */
    CHECK_EQ_U64(c[0], 0);
    CHECK_EQ_U64(twice, 0);
    CHECK_EQ_U64(c[1], 0);
    check_walk(&h, "out of line");
    WH_CUDA_OR_DIE(cudaFree(claims));
    WH_CUDA_OR_DIE(cudaFree(got));
    WH_CUDA_OR_DIE(cudaFree(d_c));
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* The hardened mode sees a write to a freed slot: a heap of 8 pages (no bump
 * segments), one 64-B object freed and then written from the host, and a
 * full grid taking every slot of its class, the written one among them. */
static __global__ void one_kernel(wh_heap h, void **p, bool take) {
    if (take)
        *p = wh_malloc(&h, 64);
    else
        wh_free(&h, *p);
}
static void secure_write_after_free(void) {
    heap_flags = WH_HEAP_SECURE;
    wh_heap h = make(WH_HEAP_DEFAULT, 8u << 16);
    heap_flags = 0;
    void **p, *host = NULL;
    WH_CUDA_OR_DIE(cudaMalloc(&p, sizeof *p));
    one_kernel<<<1, 1>>>(h, p, true);
    WH_LAUNCH_OR_DIE();
    one_kernel<<<1, 1>>>(h, p, false);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaMemcpy(&host, p, sizeof host, cudaMemcpyDeviceToHost));
    CHECK(host != NULL);
    WH_CUDA_OR_DIE(cudaMemset((char *)host + 8, 0, 1)); /* the owner writes after its free */
    uint32_t threads = 4096, cap = 4;                   /* 16384 tries for 8192 slots */
    void **held;
    unsigned long long *n, got = 0, bad = 0;
    WH_CUDA_OR_DIE(cudaMalloc(&held, (size_t)threads * cap * sizeof(void *)));
    WH_CUDA_OR_DIE(cudaMalloc(&n, 2 * sizeof *n));
    WH_CUDA_OR_DIE(cudaMemset(n, 0, 2 * sizeof *n));
    fill_kernel<<<threads / 256u, 256>>>(h, held, cap, 64, n);
    WH_LAUNCH_OR_DIE();
    drain_kernel<<<threads / 256u, 256>>>(h, held, cap, 64, n + 1);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaMemcpy(&got, n, sizeof got, cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(&bad, n + 1, sizeof bad, cudaMemcpyDeviceToHost));
    wh_heap_usage s;
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    printf("%-20s WH_HEAP_SECURE: a write after free, then %llu slots of 64 B taken: %llu corruption(s) found\n",
           "default", got, (unsigned long long)s.corruptions);
    CHECK_EQ_U64(got, 8u * 1024u);
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(s.corruptions, 1);
    CHECK_EQ_U64(s.inconsistencies + s.allocations, 0);
    WH_CUDA_OR_DIE(cudaFree(held));
    WH_CUDA_OR_DIE(cudaFree(n));
    WH_CUDA_OR_DIE(cudaFree(p));
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

static void stress(wh_heap_kind kind, uint64_t bytes, wh_hs_shape shape, uint64_t target, double budget, bool small,
                   uint32_t start_div) {
    wh_heap h = make(kind, bytes);
    uint32_t full = small ? 2048u : (uint32_t)sms() * 8u * 256u, threads = small ? full : full / start_div;
    void **held;
    uint32_t *sizes;
    wh_hs_counts *d_total, total = {0, 0, 0, 0, 0};
    WH_CUDA_OR_DIE(cudaMalloc(&held, (size_t)full * shape.cap * sizeof(void *)));
    WH_CUDA_OR_DIE(cudaMalloc(&sizes, (size_t)full * shape.cap * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_total, sizeof *d_total));
    WH_CUDA_OR_DIE(cudaMemset(d_total, 0, sizeof *d_total));
    double t0 = wh_now_seconds(), longest = 0;
    uint32_t launches = 0, most = threads;
    for (bool first = true; first || ((total.allocs < target || most < full) && wh_now_seconds() - t0 < budget);
         first = false) {
        double t1 = wh_now_seconds();
        stress_kernel<<<(threads + 255u) / 256u, 256>>>(h, shape, held, sizes, d_total, threads,
                                                        (uint64_t)launches << 32);
        WH_LAUNCH_OR_DIE();
        WH_CUDA_OR_DIE(cudaDeviceSynchronize());
        double dt = wh_now_seconds() - t1;
        longest = dt > longest ? dt : longest;
        WH_CUDA_OR_DIE(cudaMemcpy(&total, d_total, sizeof total, cudaMemcpyDeviceToHost));
        ++launches;
        most = threads > most ? threads : most;
        if (dt < 1.0 && threads < full) threads *= 2u;
        if (small) break;
    }
    double secs = wh_now_seconds() - t0;
    printf("%-20s %u way(s), %u launches, up to %u threads (full grid %u): %llu allocs %llu frees %llu failed in "
           "%.2f s (longest launch %.3f s) | corrupt %llu misaligned %llu\n",
           wh_heap_kind_name(kind), h.seg_ways ? h.seg_ways : 1u, launches, most, full, total.allocs, total.frees,
           total.failed, secs, longest, total.corrupt, total.misaligned);
    if (!small) {
        CHECK(total.allocs >= target);
        CHECK(most == full);
    }
    CHECK(total.allocs > 0);
    CHECK_EQ_U64(total.corrupt, 0);
    CHECK_EQ_U64(total.misaligned, 0);
    if (kind != WH_HEAP_BUMP) CHECK_EQ_U64(total.frees, total.allocs);
    check_walk(&h, "after stress");
    if (kind == WH_HEAP_DEFAULT || kind == WH_HEAP_SLAB) {
        /* the segments' untouched pages back to the pool (a kernel): the
         * walk stays sound, and the largest free region can only grow */
        wh_heap_usage before, after;
        CHECK(wh_heap_stats(&h, &before) == WH_OK);
        CHECK(wh_heap_trim(&h) == WH_OK);
        check_walk(&h, "after trim");
        CHECK(wh_heap_stats(&h, &after) == WH_OK);
        CHECK(after.largest_free >= before.largest_free);
        CHECK(after.free_bytes >= before.free_bytes); /* page tails count free again */
    }
    WH_CUDA_OR_DIE(cudaFree(held));
    WH_CUDA_OR_DIE(cudaFree(sizes));
    WH_CUDA_OR_DIE(cudaFree(d_total));
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

static void exhaustion(wh_heap_kind kind, uint64_t bytes, uint32_t size, bool small) {
    wh_heap h = make(kind, bytes);
    uint32_t threads = small ? 512u : (uint32_t)sms() * 64u, cap = 64;
    void **held;
    unsigned long long *d_n, n[3] = {0, 0, 0}; /* fill 1, fill 2, corrupt */
    WH_CUDA_OR_DIE(cudaMalloc(&held, (size_t)threads * cap * sizeof(void *)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_n, sizeof n));
    WH_CUDA_OR_DIE(cudaMemset(d_n, 0, sizeof n));
    for (int r = 0; r < 2; ++r) {
        fill_kernel<<<threads / 64u, 64>>>(h, held, cap, size, d_n + r);
        WH_LAUNCH_OR_DIE();
        drain_kernel<<<threads / 64u, 64>>>(h, held, cap, size, d_n + 2);
        WH_LAUNCH_OR_DIE();
        if (kind == WH_HEAP_BUMP) CHECK(wh_heap_reset(&h) == WH_OK);
    }
    WH_CUDA_OR_DIE(cudaMemcpy(n, d_n, sizeof n, cudaMemcpyDeviceToHost));
    printf("%-20s %u way(s), exhaustion with %u-byte blocks: %llu then %llu fit in %llu bytes, corrupt %llu\n",
           wh_heap_kind_name(kind), h.seg_ways ? h.seg_ways : 1u, size, n[0], n[1], (unsigned long long)bytes, n[2]);
    CHECK_EQ_U64(n[2], 0);
    CHECK(n[0] > 0 && n[0] < (unsigned long long)threads * cap); /* it did run out */
    CHECK(n[1] >= n[0] * 9 / 10);                                /* and recovered */
    check_walk(&h, "after exhaustion");
    WH_CUDA_OR_DIE(cudaFree(held));
    WH_CUDA_OR_DIE(cudaFree(d_n));
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

static void wrap(uint64_t bytes, uint32_t ops, bool small) {
    wh_heap h = make(WH_HEAP_WRAP, bytes);
    uint32_t threads = small ? 2048u : (uint32_t)sms() * 8u * 256u;
    unsigned long long *d_n, n[4] = {0, 0, 0, 0};
    WH_CUDA_OR_DIE(cudaMalloc(&d_n, sizeof n));
    WH_CUDA_OR_DIE(cudaMemset(d_n, 0, sizeof n));
    double t0 = wh_now_seconds();
    wrap_kernel<<<threads / 256u, 256>>>(h, ops, d_n);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
    double secs = wh_now_seconds() - t0;
    WH_CUDA_OR_DIE(cudaMemcpy(n, d_n, sizeof n, cudaMemcpyDeviceToHost));
    wh_heap_usage s;
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    printf("%-20s %u threads: %llu allocs of %llu tried in %.3f s, %.0f turns of a %llu-byte pool | outside or "
           "misaligned %llu, failed %llu\n",
           wh_heap_kind_name(WH_HEAP_WRAP), threads, n[0], n[3], secs, (double)n[2] / (double)bytes,
           (unsigned long long)bytes, n[1], (unsigned long long)s.failed_allocs);
    if (!small) CHECK(n[0] >= 10000000ull);
    CHECK_EQ_U64(n[1], 0);
    CHECK_EQ_U64(n[0] + s.failed_allocs, n[3]);
    CHECK(n[0] >= n[3] / 10u * 9u);
    CHECK(n[2] > 100u * bytes); /* it wrapped many times */
    CHECK_EQ_U64(s.inconsistencies, 0);
    WH_CUDA_OR_DIE(cudaFree(d_n));
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

/* A fused heap above 8 GiB: 8 KiB blocks (which the pre-split serves up to
 * about 10 GB in) until some lie past 8 GiB, filled, walked, checked, freed. */
static void far(wh_heap_kind kind, uint64_t bytes) {
    enum { LAUNCHES = 6 };
    wh_heap h = make(kind, bytes);
    /* a block per SM, so that MULTI's sub-heaps past 8 GiB (the last third) are used at once */
    uint32_t threads = (uint32_t)sms() * 256u, per = 12, size = 8192, launches = 0;
    void **held;
    unsigned long long *d_n, n[4] = {0, 0, 0, 0}; /* allocs, beyond 8 GiB, failed, corrupt */
    WH_CUDA_OR_DIE(cudaMalloc(&held, (size_t)LAUNCHES * threads * per * sizeof(void *)));
    WH_CUDA_OR_DIE(cudaMalloc(&d_n, sizeof n));
    WH_CUDA_OR_DIE(cudaMemset(d_n, 0, sizeof n));
    double t0 = wh_now_seconds();
    /* until enough lie past 8 GiB, or the heap runs dry (a launch gets less
     * than a tenth of its requests; a single cursor fails some under this
     * much contention long before that) */
    for (unsigned long long before = 0;
         launches < LAUNCHES && n[1] < 10000u &&
         (launches == 0 || (n[0] - before) * 10u >= (unsigned long long)threads * per);) {
        before = n[0];
        far_fill_kernel<<<threads / 256u, 256>>>(h, held + (size_t)launches * threads * per, per, size, d_n);
        WH_LAUNCH_OR_DIE();
        WH_CUDA_OR_DIE(cudaMemcpy(n, d_n, sizeof n, cudaMemcpyDeviceToHost));
        ++launches;
    }
    double fill = wh_now_seconds() - t0;
    wh_heap_usage s;
    CHECK(wh_heap_stats(&h, &s) == WH_OK);
    printf(
        "%-20s %llu-byte heap: %u launches, %llu blocks of %u B (%llu past 8 GiB, %llu failed) in %.2f s; walk: used "
        "%llu free %llu overhead %llu live %llu inconsistent %llu\n",
        wh_heap_kind_name(kind), (unsigned long long)bytes, launches, n[0], size, n[1], n[2], fill,
        (unsigned long long)s.used_bytes, (unsigned long long)s.free_bytes, (unsigned long long)s.overhead_bytes,
        (unsigned long long)s.allocations, (unsigned long long)s.inconsistencies);
    CHECK(n[1] > 0);
    CHECK_EQ_U64(s.allocations, n[0]);
    CHECK(s.used_bytes >= n[0] * size);
    CHECK_EQ_U64(s.inconsistencies, 0);
    CHECK_EQ_U64(s.used_bytes + s.free_bytes + s.overhead_bytes, s.heap_bytes);
    for (uint32_t r = 0; r < launches; ++r) {
        drain_kernel<<<threads / 256u, 256>>>(h, held + (size_t)r * threads * per, per, size, d_n + 3);
        WH_LAUNCH_OR_DIE();
    }
    WH_CUDA_OR_DIE(cudaMemcpy(n, d_n, sizeof n, cudaMemcpyDeviceToHost));
    printf("  corrupt %llu\n", n[3]);
    CHECK_EQ_U64(n[3], 0);
    check_walk(&h, "after the far blocks");
    WH_CUDA_OR_DIE(cudaFree(held));
    WH_CUDA_OR_DIE(cudaFree(d_n));
    CHECK(wh_heap_destroy(&h) == WH_OK);
}

int main(int argc, char **argv) {
    bool small = false;
    long long budget_s = 25;
    wh_cli_opt cli[] = {WH_CLI_FLAG("small", &small, "the sanitizers' size: a small grid and 64 MiB heaps"),
                        WH_CLI_INT("budget", &budget_s, "seconds of each kind's stress at most"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Device heap on the GPU, every built kind: stress, exhaustion and the heap walk.");
    if (!wh_cuda_available()) {
        printf("test_heap_gpu: no GPU, skipped\n");
        return WH_TEST_SKIP;
    }
    double budget = (double)budget_s;
    uint64_t target = small ? 0 : 10000000ull;
    uint64_t big = small ? 64ull << 20 : 2ull << 30;
    wh_hs_shape mixed = {small ? 20u : 80u, 4, 256, 8192};
    wh_hs_shape multi = {small ? 20u : 80u, 4, 256, 2048};
    setvbuf(stdout, NULL, _IOLBF, 0);
    grouped_frees(WH_HEAP_DEFAULT, 0, 16);
    grouped_frees(WH_HEAP_SLAB, 0, 16);
    grouped_frees(WH_HEAP_DEFAULT, WH_HEAP_SECURE, 16);
    /* 1-8 KiB: a bitmap word spans pages, and a group's lanes count off
     * each page's slots together */
    grouped_frees(WH_HEAP_DEFAULT, 0, 1024);
    grouped_frees(WH_HEAP_SLAB, 0, 1024);
    out_of_line(WH_HEAP_DEFAULT, small ? 4096u : 262144u);
    out_of_line(WH_HEAP_BUMP, small ? 4096u : 262144u);
    stress(WH_HEAP_DEFAULT, big, mixed, target, budget, small, 8);
    /* segments of up to 128 pages (whole words of the page bitmap: the
     * multi-word path of wh__seg_claim_run) at the sanitizers' size too;
     * big's 1024 pages give segments of at most 8 */
    if (small) stress(WH_HEAP_DEFAULT, 1ull << 30, mixed, target, budget, small, 8);
    stress(WH_HEAP_SLAB, big, mixed, target, budget, small, 8);
    stress(WH_HEAP_BUMP, small ? big : 16ull << 30, mixed, target, budget, small, 8);
    wrap(small ? 64ull << 10 : 16ull << 20, 64, small);
    const wh_heap_kind kinds[] = {WH_HEAP_DEFAULT,        WH_HEAP_SLAB,     WH_HEAP_BUMP,
                                  WH_HEAP_CIRCULAR_MULTI, WH_HEAP_CIRCULAR, WH_HEAP_CIRCULAR_FUSED_MULTI,
                                  WH_HEAP_CIRCULAR_FUSED};
    for (unsigned k = 0; k < sizeof kinds / sizeof *kinds; ++k) exhaustion(kinds[k], 16ull << 20, 4096, small);
    /* eight ways per class (the heaps above have one); 64-B blocks take the
     * bump segments, whose ways run 16 pages dry and give them back */
    slab_ways = 8;
    stress(WH_HEAP_DEFAULT, big, mixed, target, budget, small, 8);
    exhaustion(WH_HEAP_DEFAULT, 1ull << 20, 64, small);
    slab_ways = 0;
    /* the hardened mode: no false report under the stress, and a real one found */
    heap_flags = WH_HEAP_SECURE;
    stress(WH_HEAP_DEFAULT, big, mixed, small ? 0 : target / 4, budget, small, 8);
    heap_flags = 0;
    secure_write_after_free();
    /* the circular kinds last: their cursors serialise (start small) */
    stress(WH_HEAP_CIRCULAR_MULTI, big, multi, target, budget, small, 16);
    stress(WH_HEAP_CIRCULAR, big, mixed, target, budget, small, 64);
    stress(WH_HEAP_CIRCULAR_FUSED_MULTI, big, multi, target, budget, small, 16);
    stress(WH_HEAP_CIRCULAR_FUSED, big, mixed, target, budget, small, 64);
    if (!small) {
        far(WH_HEAP_CIRCULAR_FUSED_MULTI, 12ull << 30);
        far(WH_HEAP_CIRCULAR_FUSED, 12ull << 30);
    }
    return wh_test_finish("test_heap_gpu");
}
