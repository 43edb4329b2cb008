/* SPDX-License-Identifier: MIT */
/* Single-kernel k-d tree build with dynamically allocated primitive lists:
 * the [DS] workload of register-efficient-gpu-allocators.txt, section 6
 * (measured in section 7, Tables 3 and 4).
 *
 * One persistent kernel; a warp is the unit of work.  A warp takes a node
 * from a global queue, picks a split by binned SAH (16 bins per axis, counted
 * in the warp's shared memory), counts the references of each side with
 * ballots, has two lanes allocate the children's reference arrays (sizes from
 * 0 to 4 x triangles bytes, in no predictable order), writes the references
 * (ballot + prefix popcount), frees the parent's array and pushes the
 * children.  Leaves keep their arrays (the check reads them).
 *
 * Departures from the paper, and why:
 * - Two lanes allocate (left and right together, through wh_malloc_warp with
 *   the mask of those two lanes) instead of one thread: the two requests are
 *   independent, so a warp waits for one allocator round trip, not two.
 * - The queue is the node table itself: node ids are handed out in pairs, a
 *   node's slot is its task; a warp takes the next slot number as a ticket
 *   and waits for that slot's ready flag (set by the warp that made the node,
 *   which is running: the grid is persistent, all warps resident).
 *   Termination: the count of tasks in flight reaches 0.  Every wait is
 *   bounded in time (cfg.timeout_s) and counted if it expires.
 * - Membership is by the triangle's bounding box (no triangle clipping), so
 *   the tree can be checked exactly against the same predicate (kd_scene.h).
 * - A failed allocation does not abort: the node becomes a leaf (counted), so
 *   a heap that is too small shows up in the figures instead of a crash.
 * - cfg.free_batch > 1 (an ablation, off by default): a warp keeps up to that
 *   many parents' lists (at most 1/16 of the heap over all warps; larger
 *   lists are freed at once) and frees them with one warp-wide wh_free_warp,
 *   each lane its own list.  With it DEFAULT is no faster (a free is ~7% of
 *   its node time; the allocation is ~65%), CUDA's malloc much slower (32
 *   concurrent frees: 238 ms against 127 at 200K) and short of memory at
 *   20x.  So each parent's list is freed at once.
 */
#include "kd_build.h"
#include "warpheap/cuda_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KD_BINS           16u
#define KD_BLOCK          128
#define KD_WARPS          (KD_BLOCK / 32)
#define KD_FULL           0xffffffffu
#define KD_NONE           0xffffffffu
#define KD_COST_TRAVERSE  1.0f
#define KD_COST_INTERSECT 1.0f

typedef struct kd_task {
    kd_box box;
    uint32_t *refs;
    uint32_t count, depth;
} kd_task;

/* Hot words on lines of their own: idle warps poll head/nodes/inflight. */
typedef struct kd_counters {
    uint64_t head, pad0[15];
    uint64_t nodes, pad1[15];
    uint64_t inflight, pad2[15];
    uint64_t leaves, pad3[15];
    uint64_t allocs, bytes, bytes_sq, fails, fail_max, overflow, timeouts, refs, depth, root_fail;
    uint64_t prof[KD_PROF];
    uint64_t alloc_n[KD_PCLASSES], alloc_cyc[KD_PCLASSES], free_n[KD_PCLASSES], free_cyc[KD_PCLASSES];
} kd_counters;

typedef struct kd_args {
    const float4 *tlo, *thi;
    kd_task *tasks;
    uint32_t *ready;
    kd_node *nodes;
    kd_leaf *leaves;
    kd_counters *c;
    uint32_t cap, leaf_size, max_depth, use_cuda, retries, free_batch, profile;
    uint64_t pend_bytes; /* deferred frees: bytes a warp may hold back */
    unsigned long long timeout_ns;
    wh_heap heap;
} kd_args;

/* Per-warp figures, summed in registers of lane 0 and flushed once. */
typedef struct kd_local {
    uint64_t allocs, bytes, bytes_sq, fails, fail_max, refs, depth;
    uint64_t prof[KD_PROF];
} kd_local;

/* Parents' lists whose free is deferred: lane i holds list i (NULL if none);
 * n and bytes are the same in every lane. */
typedef struct kd_pending {
    uint32_t *list, count; /* this lane's list and its length */
    uint32_t n;
    uint64_t bytes;
} kd_pending;

/* cfg.profile: lane 0's SM clock (durations only, never across SMs). */
static __device__ __forceinline__ long long kd_clock(const kd_args *a) { return a->profile ? clock64() : 0; }

/* A list of n references, padded to 16 bytes as in the paper. */
static __host__ __device__ __forceinline__ uint64_t kd_list_bytes(uint32_t n) {
    return ((uint64_t)n * 4u + 15u) & ~15ull;
}
extern "C" uint64_t kd_root_bytes(uint32_t ntris) { return kd_list_bytes(ntris); }

static __device__ __forceinline__ unsigned long long kd_now(void) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __device__ __forceinline__ float kd_axis(float4 v, uint32_t a) { return a == 0 ? v.x : (a == 1 ? v.y : v.z); }

/* ---- allocation: warpheap or CUDA's malloc, padded to 16 B as in the paper */

/* cfg.profile: which size class a list is (slab class, or KD_PCLASSES - 1
 * for a page run); the calling lane's cycles are added to it. */
static __device__ uint32_t kd_pclass(uint32_t n) {
    uint64_t b = kd_list_bytes(n);
    return b > WH_SLAB_MAX ? KD_PCLASSES - 1u : wh__slab_class(b);
}

static __device__ uint32_t *kd_list_alloc(const kd_args *a, uint32_t n, uint32_t mask) {
    size_t bytes = (size_t)kd_list_bytes(n);
    long long t0 = kd_clock(a);
    uint32_t *p;
    if (a->use_cuda)
        p = n ? (uint32_t *)malloc(bytes) : NULL;
    else
        p = (uint32_t *)wh_malloc_warp(&a->heap, bytes, mask); /* every lane of mask calls */
    if (a->profile && n) {
        uint32_t k = kd_pclass(n);
        (void)wh_atomic_fetch_add(&a->c->alloc_n[k], 1ull, WH_RELAXED);
        (void)wh_atomic_fetch_add(&a->c->alloc_cyc[k], (uint64_t)(kd_clock(a) - t0), WH_RELAXED);
    }
    return p;
}

/* p: a list of n references. */
static __device__ void kd_list_free(const kd_args *a, uint32_t *p, uint32_t n, uint32_t mask) {
    if (!p) return;
    long long t0 = kd_clock(a);
    if (a->use_cuda)
        free(p);
    else
        wh_free_warp(&a->heap, p, mask);
    if (a->profile) {
        uint32_t k = kd_pclass(n);
        (void)wh_atomic_fetch_add(&a->c->free_n[k], 1ull, WH_RELAXED);
        (void)wh_atomic_fetch_add(&a->c->free_cyc[k], (uint64_t)(kd_clock(a) - t0), WH_RELAXED);
    }
}

static __device__ void kd_count_alloc(kd_local *acc, uint32_t n) {
    if (!n) return;
    uint64_t b = kd_list_bytes(n);
    acc->allocs += 1u;
    acc->bytes += b;
    acc->bytes_sq += b * b;
}

/* ---- the queue (lane 0) ----------------------------------------------------- */

/* Ticket queue: each warp takes the next slot number (one atomic, no
 * contention on retries) and waits on that slot's own ready flag.  A slot that
 * is never made waits until no task is in flight: the build is over (once 0,
 * the in-flight count stays 0, since only a task in flight makes tasks).
 * Returns the slot, or KD_NONE when done or when the wait expired (counted). */
static __device__ uint32_t kd_next_task(const kd_args *a) {
    uint64_t ticket = wh_atomic_fetch_add(&a->c->head, 1ull, WH_RELAXED);
    unsigned long long start = kd_now();
    for (uint32_t i = 0; i < (1u << 30); ++i) {
        if (ticket < a->cap && wh_atomic_load(&a->ready[ticket], WH_ACQUIRE)) return (uint32_t)ticket;
        if ((i & 3u) == 3u && wh_atomic_load(&a->c->inflight, WH_ACQUIRE) == 0) return KD_NONE;
        if ((i & 63u) == 63u && kd_now() - start > a->timeout_ns) break;
        __nanosleep(64u << (i < 6u ? i : 6u)); /* at most 4 us */
    }
    (void)wh_atomic_fetch_add(&a->c->timeouts, 1ull, WH_RELAXED);
    return KD_NONE;
}

/* Two consecutive node ids, or KD_NONE when the table is full.  One
 * fetch-add: a CAS loop here starves under thousands of warps (2% of splits
 * lose 4096 CAS rounds in a row).  Ids handed out past the end are
 * never published; their ticket holders leave when nothing is in flight. */
static __device__ uint32_t kd_new_nodes(const kd_args *a) {
    uint64_t c = wh_atomic_fetch_add(&a->c->nodes, 2ull, WH_RELAXED);
    if (c + 2u <= a->cap) return (uint32_t)c;
    (void)wh_atomic_fetch_add(&a->c->overflow, 1ull, WH_RELAXED);
    return KD_NONE;
}

/* Tasks and lists are written by other SMs: read them from L2 (ld.cg), never
 * from a possibly stale L1 line (the memory may be a reused allocation). */
static __device__ kd_task kd_load_task(const kd_task *p) {
    kd_task t;
    for (int k = 0; k < 3; ++k) {
        t.box.lo[k] = __ldcg(&p->box.lo[k]);
        t.box.hi[k] = __ldcg(&p->box.hi[k]);
    }
    t.refs = (uint32_t *)__ldcg((const unsigned long long *)&p->refs);
    t.count = __ldcg(&p->count);
    t.depth = __ldcg(&p->depth);
    return t;
}

/* ---- the split: binned SAH (whole warp) ------------------------------------- */

static __device__ float kd_plane(const kd_box *b, uint32_t axis, uint32_t k) {
    float lo = b->lo[axis], hi = b->hi[axis];
    float p = lo + (hi - lo) * ((float)(k + 1u) / (float)KD_BINS);
    return fminf(fmaxf(p, lo), hi); /* children stay inside the parent */
}

static __device__ float kd_area(const float e[3]) { return 2.0f * (e[0] * e[1] + e[1] * e[2] + e[2] * e[0]); }

static __device__ uint32_t kd_bin(float x, float lo, float scale) {
    int b = (int)((x - lo) * scale);
    return (uint32_t)(b < 0 ? 0 : (b >= (int)KD_BINS ? (int)KD_BINS - 1 : b));
}

/* Each lane keeps KD_UNROLL (or KD_UNROLL_BINS) references in flight per
 * step: a big node is one warp's work, and its gathers are latency bound. */
#define KD_UNROLL      8
#define KD_UNROLL_BINS 4

/* bins: 6 x KD_BINS words of this warp's shared memory: per axis, how many
 * triangles start and end in each bin. */
static __device__ void kd_fill_bins(const kd_args *a, const kd_task *t, uint32_t *bins, uint32_t lane) {
    float ext[3], scale[3];
    for (uint32_t i = lane; i < 6u * KD_BINS; i += 32u) bins[i] = 0;
    for (int k = 0; k < 3; ++k) {
        ext[k] = t->box.hi[k] - t->box.lo[k];
        scale[k] = ext[k] > 0.0f ? (float)KD_BINS / ext[k] : 0.0f;
    }
    __syncwarp(KD_FULL);
    for (uint32_t base = 0; base < t->count; base += 32u * KD_UNROLL_BINS) {
        uint32_t r[KD_UNROLL_BINS];
        float4 lo[KD_UNROLL_BINS], hi[KD_UNROLL_BINS];
#pragma unroll
        for (int j = 0; j < KD_UNROLL_BINS; ++j) {
            uint32_t i = base + (uint32_t)j * 32u + lane;
            r[j] = i < t->count ? __ldcg(t->refs + i) : KD_NONE;
        }
#pragma unroll
        for (int j = 0; j < KD_UNROLL_BINS; ++j)
            if (r[j] != KD_NONE) {
                lo[j] = __ldg(a->tlo + r[j]);
                hi[j] = __ldg(a->thi + r[j]);
            }
#pragma unroll
        for (int j = 0; j < KD_UNROLL_BINS; ++j) {
            if (r[j] == KD_NONE) continue;
            for (uint32_t k = 0; k < 3u; ++k) {
                if (!(ext[k] > 0.0f)) continue;
                float l = fmaxf(kd_axis(lo[j], k), t->box.lo[k]), h = fminf(kd_axis(hi[j], k), t->box.hi[k]);
                atomicAdd(&bins[k * 2u * KD_BINS + kd_bin(l, t->box.lo[k], scale[k])], 1u);
                atomicAdd(&bins[(k * 2u + 1u) * KD_BINS + kd_bin(h, t->box.lo[k], scale[k])], 1u);
            }
        }
    }
    __syncwarp(KD_FULL);
}

/* SAH cost of the plane after bin `lane` on axis k (INFINITY if none). */
static __device__ float kd_plane_cost(const kd_task *t, const uint32_t *bins, uint32_t k, uint32_t lane) {
    float e[3] = {t->box.hi[0] - t->box.lo[0], t->box.hi[1] - t->box.lo[1], t->box.hi[2] - t->box.lo[2]};
    float area = kd_area(e);
    if (!(e[k] > 0.0f) || !(area > 0.0f)) return INFINITY;
    uint32_t nl = 0, nr = 0;
    for (uint32_t b = 0; b < KD_BINS; ++b) {
        if (b <= lane)
            nl += bins[k * 2u * KD_BINS + b];
        else
            nr += bins[(k * 2u + 1u) * KD_BINS + b];
    }
    float p = kd_plane(&t->box, k, lane);
    e[k] = p - t->box.lo[k];
    float al = kd_area(e);
    e[k] = t->box.hi[k] - p;
    float ar = kd_area(e);
    return KD_COST_TRAVERSE + KD_COST_INTERSECT * (al * (float)nl + ar * (float)nr) / area;
}

/* Best plane of the three axes; false if a leaf is cheaper.  Warp-uniform. */
static __device__ bool kd_sah(const kd_args *a, const kd_task *t, uint32_t *bins, uint32_t lane, uint32_t *axis,
                              float *split) {
    kd_fill_bins(a, t, bins, lane);
    float best = INFINITY;
    uint32_t key = KD_NONE;
    if (lane < KD_BINS - 1u)
        for (uint32_t k = 0; k < 3u; ++k) {
            float c = kd_plane_cost(t, bins, k, lane);
            if (c < best) {
                best = c;
                key = k * KD_BINS + lane;
            }
        }
    for (int off = 16; off > 0; off >>= 1) {
        float ob = __shfl_xor_sync(KD_FULL, best, off);
        uint32_t ok = __shfl_xor_sync(KD_FULL, key, off);
        if (ob < best || (ob == best && ok < key)) {
            best = ob;
            key = ok;
        }
    }
    best = __shfl_sync(KD_FULL, best, 0); /* uniform even with NaN */
    key = __shfl_sync(KD_FULL, key, 0);
    __syncwarp(KD_FULL); /* bins read before reuse */
    if (key == KD_NONE || !(best < KD_COST_INTERSECT * (float)t->count)) return false;
    *axis = key / KD_BINS;
    *split = kd_plane(&t->box, *axis, key % KD_BINS);
    return true;
}

/* ---- counting and writing the children's references (whole warp) ---------- */

/* Which sides the references of one step go to: lane's i = base + 32 j + lane. */
static __device__ void kd_sides(const kd_args *a, const kd_task *t, uint32_t base, uint32_t lane, uint32_t axis,
                                float split, uint32_t r[KD_UNROLL], bool gl[KD_UNROLL], bool gr[KD_UNROLL]) {
    float lo[KD_UNROLL], hi[KD_UNROLL];
#pragma unroll
    for (int j = 0; j < KD_UNROLL; ++j) {
        uint32_t i = base + (uint32_t)j * 32u + lane;
        r[j] = i < t->count ? __ldcg(t->refs + i) : KD_NONE;
    }
#pragma unroll
    for (int j = 0; j < KD_UNROLL; ++j)
        if (r[j] != KD_NONE) {
            lo[j] = __ldg((const float *)(a->tlo + r[j]) + axis);
            hi[j] = __ldg((const float *)(a->thi + r[j]) + axis);
        }
#pragma unroll
    for (int j = 0; j < KD_UNROLL; ++j) {
        gl[j] = r[j] != KD_NONE && lo[j] <= split;
        gr[j] = r[j] != KD_NONE && hi[j] >= split;
    }
}

static __device__ void kd_count(const kd_args *a, const kd_task *t, uint32_t axis, float split, uint32_t lane,
                                uint32_t *nl, uint32_t *nr) {
    uint32_t l = 0, r = 0, ref[KD_UNROLL];
    bool gl[KD_UNROLL], gr[KD_UNROLL];
    for (uint32_t base = 0; base < t->count; base += 32u * KD_UNROLL) {
        kd_sides(a, t, base, lane, axis, split, ref, gl, gr);
#pragma unroll
        for (int j = 0; j < KD_UNROLL; ++j) {
            l += (uint32_t)__popc(__ballot_sync(KD_FULL, gl[j]));
            r += (uint32_t)__popc(__ballot_sync(KD_FULL, gr[j]));
        }
    }
    *nl = l;
    *nr = r;
}

/* References keep their order (ballot + prefix popcount per 32). */
static __device__ void kd_partition(const kd_args *a, const kd_task *t, uint32_t axis, float split, uint32_t lane,
                                    uint32_t *L, uint32_t *R) {
    uint32_t ol = 0, orr = 0, ref[KD_UNROLL], below = (1u << lane) - 1u;
    bool gl[KD_UNROLL], gr[KD_UNROLL];
    for (uint32_t base = 0; base < t->count; base += 32u * KD_UNROLL) {
        kd_sides(a, t, base, lane, axis, split, ref, gl, gr);
#pragma unroll
        for (int j = 0; j < KD_UNROLL; ++j) {
            uint32_t bl = __ballot_sync(KD_FULL, gl[j]), br = __ballot_sync(KD_FULL, gr[j]);
            if (gl[j]) L[ol + (uint32_t)__popc(bl & below)] = ref[j];
            if (gr[j]) R[orr + (uint32_t)__popc(br & below)] = ref[j];
            ol += (uint32_t)__popc(bl);
            orr += (uint32_t)__popc(br);
        }
    }
}

/* Lanes 0 and 1 only: both lists at once; a failed request is retried
 * (cfg.alloc_retries times, with a growing pause) by the lanes that need it,
 * which are then the mask.  Works around transient failures of a heap under
 * a burst of requests (docs/kdtree.md); off by default. */
static __device__ uint32_t *kd_pair_alloc(const kd_args *a, uint32_t n, uint32_t lane) {
    uint32_t *mine = kd_list_alloc(a, n, 0x3u);
    for (uint32_t k = 0; k < a->retries; ++k) {
        uint32_t need = __ballot_sync(0x3u, n && !mine);
        if (!need) break;
        __nanosleep(256u << (k < 5u ? k : 5u));
        if ((need >> lane) & 1u) mine = kd_list_alloc(a, n, need);
    }
    return mine;
}

/* Lanes 0 and 1 allocate the left and right arrays together, lane 0 takes two
 * node ids.  False (everything given back, failure counted) if any failed. */
static __device__ bool kd_split_alloc(const kd_args *a, uint32_t nl, uint32_t nr, uint32_t lane, uint32_t **L,
                                      uint32_t **R, uint32_t *first, kd_local *acc) {
    uint32_t *mine = NULL;
    long long t0 = kd_clock(a);
    if (lane < 2u) mine = kd_pair_alloc(a, lane ? nr : nl, lane);
    uint32_t *l = (uint32_t *)__shfl_sync(KD_FULL, (unsigned long long)mine, 0);
    uint32_t *r = (uint32_t *)__shfl_sync(KD_FULL, (unsigned long long)mine, 1);
    if (a->profile && lane == 0) {
        uint64_t dt = (uint64_t)(kd_clock(a) - t0);
        acc->prof[KD_CYC_ALLOC] += dt;
        acc->prof[KD_SLOW_ALLOCS] += dt > 20000u;
    }
    bool ok = (l || !nl) && (r || !nr);
    uint32_t f = KD_NONE;
    if (ok && lane == 0) f = kd_new_nodes(a);
    f = __shfl_sync(KD_FULL, f, 0);
    if (!ok || f == KD_NONE) {
        if (lane < 2u) kd_list_free(a, mine, lane ? nr : nl, 1u << lane);
        if (lane == 0 && !ok) {
            uint64_t fl = !l && nl ? kd_list_bytes(nl) : 0, fr = !r && nr ? kd_list_bytes(nr) : 0;
            acc->fails += 1u;
            if ((fl > fr ? fl : fr) > acc->fail_max) acc->fail_max = fl > fr ? fl : fr;
        }
        return false;
    }
    if (lane == 0) {
        kd_count_alloc(acc, nl);
        kd_count_alloc(acc, nr);
    }
    *L = l;
    *R = r;
    *first = f;
    return true;
}

/* ---- freeing the parents' lists (whole warp) ---------------------------------- */

/* cfg.profile: one warp-level free call of `lists` lists that began at t0. */
static __device__ void kd_count_free(const kd_args *a, kd_local *acc, uint32_t lane, uint32_t lists, long long t0) {
    if (lane != 0) return;
    acc->prof[KD_FREE_CALLS] += 1u;
    acc->prof[KD_FREED_LISTS] += lists;
    acc->prof[KD_CYC_FREE] += (uint64_t)(kd_clock(a) - t0);
}

/* Every lane holding a deferred list frees it in one warp-wide call: the
 * frees' round trips overlap instead of following each other. */
static __device__ void kd_flush(const kd_args *a, kd_pending *q, uint32_t lane, kd_local *acc) {
    if (!q->n) return;
    long long t0 = kd_clock(a);
    uint32_t mask = __ballot_sync(KD_FULL, q->list != NULL);
    if (q->list) kd_list_free(a, q->list, q->count, mask);
    __syncwarp(KD_FULL);
    kd_count_free(a, acc, lane, q->n, t0);
    q->list = NULL;
    q->n = 0;
    q->bytes = 0;
}

/* The parent's list is done with (uniform call).  With cfg.free_batch > 1 it
 * waits in lane q->n until free_batch lists or pend_bytes bytes are held; a
 * list above pend_bytes is freed at once, so the memory held back stays a
 * small share of the heap (Table 4 reuses freed memory). */
static __device__ void kd_retire(const kd_args *a, kd_pending *q, uint32_t *refs, uint32_t count, uint32_t lane,
                                 kd_local *acc) {
    if (!refs) return;
    uint64_t b = kd_list_bytes(count);
    if (a->free_batch <= 1u || b > a->pend_bytes) {
        long long t0 = kd_clock(a);
        if (lane == 0) kd_list_free(a, refs, count, 1u);
        __syncwarp(KD_FULL);
        kd_count_free(a, acc, lane, 1u, t0);
        return;
    }
    if (q->bytes + b > a->pend_bytes) kd_flush(a, q, lane, acc);
    if (lane == q->n) {
        q->list = refs;
        q->count = count;
    }
    q->n += 1u;
    q->bytes += b;
    if (q->n >= a->free_batch) kd_flush(a, q, lane, acc);
}

/* ---- node results (lane 0) --------------------------------------------------- */

static __device__ void kd_make_leaf(const kd_args *a, uint32_t slot, const kd_task *t, kd_local *acc) {
    uint32_t id = (uint32_t)wh_atomic_fetch_add(&a->c->leaves, 1ull, WH_RELAXED);
    kd_leaf *l = a->leaves + id;
    l->refs = (uint64_t)(uintptr_t)t->refs;
    l->count = t->count;
    l->node = slot;
    l->box = t->box;
    kd_node n;
    n.split = 0.0f;
    n.info = KD_LEAF | (id << 2);
    a->nodes[slot] = n;
    acc->refs += t->count;
    if (t->depth > acc->depth) acc->depth = t->depth;
}

static __device__ void kd_publish(const kd_args *a, uint32_t slot, const kd_task *t, uint32_t axis, float split,
                                  uint32_t first, uint32_t *L, uint32_t nl, uint32_t *R, uint32_t nr) {
    kd_task c[2];
    c[0].box = t->box;
    c[1].box = t->box;
    c[0].box.hi[axis] = split;
    c[1].box.lo[axis] = split;
    c[0].refs = L;
    c[0].count = nl;
    c[1].refs = R;
    c[1].count = nr;
    c[0].depth = c[1].depth = t->depth + 1u;
    a->tasks[first] = c[0];
    a->tasks[first + 1u] = c[1];
    kd_node n;
    n.split = split;
    n.info = axis | (first << 2);
    a->nodes[slot] = n;
    (void)wh_atomic_fetch_add(&a->c->inflight, 2ull, WH_RELAXED);
    __threadfence(); /* lists (whole warp) and tasks first */
    wh_atomic_store(&a->ready[first], 1u, WH_RELEASE);
    wh_atomic_store(&a->ready[first + 1u], 1u, WH_RELEASE);
}

/* One node, whole warp; every branch below is warp-uniform. */
static __device__ void kd_process(const kd_args *a, uint32_t slot, const kd_task *t, uint32_t *bins, uint32_t lane,
                                  kd_pending *q, kd_local *acc) {
    uint32_t axis = 0, nl = 0, nr = 0, first = KD_NONE, *L = NULL, *R = NULL;
    float split = 0.0f;
    bool leaf = t->count <= a->leaf_size || t->depth >= a->max_depth || !t->refs;
    if (!leaf) leaf = !kd_sah(a, t, bins, lane, &axis, &split);
    if (!leaf) {
        kd_count(a, t, axis, split, lane, &nl, &nr);
        leaf = nl == t->count && nr == t->count; /* no progress */
    }
    if (!leaf) leaf = !kd_split_alloc(a, nl, nr, lane, &L, &R, &first, acc);
    if (leaf) {
        if (lane == 0) kd_make_leaf(a, slot, t, acc);
    } else {
        kd_partition(a, t, axis, split, lane, L, R);
        __syncwarp(KD_FULL); /* all lanes done with t->refs */
        if (lane == 0) kd_publish(a, slot, t, axis, split, first, L, nl, R, nr);
        kd_retire(a, q, t->refs, t->count, lane, acc);
    }
    if (lane == 0) (void)wh_atomic_fetch_sub(&a->c->inflight, 1ull, WH_RELEASE);
}

/* Resident blocks per SM the builder is compiled for.  Without a minimum,
 * ptxas's register count for the same builder follows the size of the
 * allocator's rare paths (they are calls) and may be as low as 32, spilling
 * 1.7-3.5 KB a thread: every kind's build then runs up to 2x slower.
 * 2 blocks: no spill (232 registers). */
#ifndef KD_MIN_BLOCKS
#define KD_MIN_BLOCKS 2
#endif

/* __grid_constant__: &a points at the parameter itself, no per-thread copy. */
static __global__ void __launch_bounds__(KD_BLOCK, KD_MIN_BLOCKS) kd_build_kernel(const __grid_constant__ kd_args a) {
    __shared__ uint32_t s_bins[KD_WARPS][6u * KD_BINS];
    uint32_t lane = threadIdx.x & 31u, *bins = s_bins[threadIdx.x >> 5];
    kd_local acc;
    memset(&acc, 0, sizeof acc);
    kd_pending q = {NULL, 0u, 0u, 0u};
    for (uint32_t iter = 0; iter <= a.cap; ++iter) { /* a warp takes at most cap tasks */
        uint32_t slot = KD_NONE;
        long long t0 = kd_clock(&a);
        if (lane == 0) slot = kd_next_task(&a);
        slot = __shfl_sync(KD_FULL, slot, 0);
        long long t1 = kd_clock(&a);
        if (lane == 0) acc.prof[KD_CYC_WAIT] += (uint64_t)(t1 - t0);
        if (slot == KD_NONE) break;
        __syncwarp(KD_FULL); /* lane 0's acquire orders the lanes' loads */
        kd_task t = kd_load_task(a.tasks + slot);
        kd_process(&a, slot, &t, bins, lane, &q, &acc);
        if (lane == 0) acc.prof[KD_CYC_NODE] += (uint64_t)(kd_clock(&a) - t1);
    }
    kd_flush(&a, &q, lane, &acc); /* every list is freed */
    if (lane == 0) {
        kd_counters *c = a.c;
        (void)wh_atomic_fetch_add(&c->allocs, acc.allocs, WH_RELAXED);
        (void)wh_atomic_fetch_add(&c->bytes, acc.bytes, WH_RELAXED);
        (void)wh_atomic_fetch_add(&c->bytes_sq, acc.bytes_sq, WH_RELAXED);
        (void)wh_atomic_fetch_add(&c->fails, acc.fails, WH_RELAXED);
        if (acc.fail_max) (void)wh_atomic_fetch_max(&c->fail_max, acc.fail_max, WH_RELAXED);
        (void)wh_atomic_fetch_add(&c->refs, acc.refs, WH_RELAXED);
        (void)wh_atomic_fetch_max(&c->depth, acc.depth, WH_RELAXED);
        for (int k = 0; k < KD_PROF; ++k)
            if (acc.prof[k]) (void)wh_atomic_fetch_add(&c->prof[k], acc.prof[k], WH_RELAXED);
    }
}

/* The root's list: one thread allocates (the only request of its size). */
static __global__ void kd_root_kernel(const __grid_constant__ kd_args a, uint32_t n, kd_box box) {
    uint32_t *p = n ? kd_list_alloc(&a, n, 1u) : NULL;
    kd_task t;
    t.box = box;
    t.refs = p;
    t.count = p ? n : 0u;
    t.depth = 0;
    a.tasks[0] = t;
    a.c->nodes = 1u;
    a.c->inflight = 1u;
    a.ready[0] = 1u;
    if (n && !p) a.c->root_fail = 1u;
    if (p) {
        uint64_t b = kd_list_bytes(n);
        a.c->allocs = 1u;
        a.c->bytes = b;
        a.c->bytes_sq = b * b;
    }
}

static __global__ void kd_fill_kernel(const kd_task *root) {
    uint32_t *p = root->refs, n = root->count;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = i;
}

/* ---- host side --------------------------------------------------------------- */

extern "C" int kd_gpu_create(kd_gpu *g, const kd_scene *s, uint32_t node_cap) {
    memset(g, 0, sizeof *g);
    g->ntris = s->ntris;
    g->cap = node_cap;
    g->root = kd_scene_bounds(s);
    size_t n = s->ntris ? s->ntris : 1u;
    float4 *lo = (float4 *)malloc(n * sizeof(float4)), *hi = (float4 *)malloc(n * sizeof(float4));
    if (!lo || !hi) {
        free(lo);
        free(hi);
        return -1;
    }
    for (uint32_t i = 0; i < s->ntris; ++i) {
        float l[3], h[3];
        kd_tri_bounds(s, i, l, h);
        lo[i] = make_float4(l[0], l[1], l[2], 0.0f);
        hi[i] = make_float4(h[0], h[1], h[2], 0.0f);
    }
    WH_CUDA_OR_DIE(cudaMalloc(&g->tlo, n * sizeof(float4)));
    WH_CUDA_OR_DIE(cudaMalloc(&g->thi, n * sizeof(float4)));
    WH_CUDA_OR_DIE(cudaMemcpy(g->tlo, lo, n * sizeof(float4), cudaMemcpyHostToDevice));
    WH_CUDA_OR_DIE(cudaMemcpy(g->thi, hi, n * sizeof(float4), cudaMemcpyHostToDevice));
    free(lo);
    free(hi);
    WH_CUDA_OR_DIE(cudaMalloc(&g->tasks, (size_t)node_cap * sizeof(kd_task)));
    WH_CUDA_OR_DIE(cudaMalloc(&g->nodes, (size_t)node_cap * sizeof(kd_node)));
    WH_CUDA_OR_DIE(cudaMalloc(&g->leaves, (size_t)node_cap * sizeof(kd_leaf)));
    WH_CUDA_OR_DIE(cudaMalloc(&g->ready, (size_t)node_cap * sizeof(uint32_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&g->ctr, sizeof(kd_counters)));
    /* Persistent: exactly as many blocks as fit at once, so every waiting warp
     * waits on warps that are running. */
    int dev = 0, sms = 0, per_sm = 0;
    WH_CUDA_OR_DIE(cudaGetDevice(&dev));
    WH_CUDA_OR_DIE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    WH_CUDA_OR_DIE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kd_build_kernel, KD_BLOCK, 0));
    g->block = KD_BLOCK;
    /* At most 4 blocks (16 warps) per SM: enough to hide the latency of the
     * list gathers, fewer idle pollers on the queue's words. */
    per_sm = per_sm < 1 ? 1 : (per_sm > 4 ? 4 : per_sm);
    g->grid = sms * per_sm;
    return 0;
}

extern "C" void kd_gpu_destroy(kd_gpu *g) {
    WH_CUDA_OR_DIE(cudaFree(g->tlo));
    WH_CUDA_OR_DIE(cudaFree(g->thi));
    WH_CUDA_OR_DIE(cudaFree(g->tasks));
    WH_CUDA_OR_DIE(cudaFree(g->nodes));
    WH_CUDA_OR_DIE(cudaFree(g->leaves));
    WH_CUDA_OR_DIE(cudaFree(g->ready));
    WH_CUDA_OR_DIE(cudaFree(g->ctr));
    memset(g, 0, sizeof *g);
}

static uint32_t kd_default_depth(uint32_t ntris) {
    double d = 8.0 + 1.3 * log2((double)(ntris ? ntris : 1u));
    return d > 40.0 ? 40u : (uint32_t)d;
}

extern "C" int kd_gpu_build(kd_gpu *g, const kd_build_config *cfg, kd_build_stats *st) {
    kd_args a;
    memset(&a, 0, sizeof a);
    a.tlo = (const float4 *)g->tlo;
    a.thi = (const float4 *)g->thi;
    a.tasks = (kd_task *)g->tasks;
    a.ready = g->ready;
    a.nodes = (kd_node *)g->nodes;
    a.leaves = (kd_leaf *)g->leaves;
    a.c = (kd_counters *)g->ctr;
    a.cap = g->cap;
    a.leaf_size = cfg->leaf_size ? cfg->leaf_size : 8u;
    a.max_depth = cfg->max_depth ? cfg->max_depth : kd_default_depth(g->ntris);
    a.use_cuda = cfg->alloc == KD_ALLOC_CUDA;
    a.retries = cfg->alloc_retries < 16u ? cfg->alloc_retries : 16u;
    a.timeout_ns = (unsigned long long)((cfg->timeout_s > 0.0 ? cfg->timeout_s : 30.0) * 1e9);
    a.heap = cfg->heap;
    a.free_batch = cfg->free_batch ? (cfg->free_batch < 32u ? cfg->free_batch : 32u) : 1u;
    a.profile = cfg->profile;
    /* Deferred frees hold back at most 1/16 of the heap over all warps. */
    size_t heap_bytes = (size_t)cfg->heap.bytes;
    if (a.use_cuda) WH_CUDA_OR_DIE(cudaDeviceGetLimit(&heap_bytes, cudaLimitMallocHeapSize));
    uint64_t warps = (uint64_t)g->grid * (uint64_t)(g->block / 32);
    a.pend_bytes = (uint64_t)heap_bytes / (16u * (warps ? warps : 1u));
    WH_CUDA_OR_DIE(cudaMemset(g->ctr, 0, sizeof(kd_counters)));
    WH_CUDA_OR_DIE(cudaMemset(g->ready, 0, (size_t)g->cap * sizeof(uint32_t)));
    cudaEvent_t t0, t1;
    WH_CUDA_OR_DIE(cudaEventCreate(&t0));
    WH_CUDA_OR_DIE(cudaEventCreate(&t1));
    WH_CUDA_OR_DIE(cudaEventRecord(t0));
    kd_root_kernel<<<1, 1>>>(a, g->ntris, g->root);
    WH_LAUNCH_OR_DIE();
    kd_fill_kernel<<<1024, 256>>>(a.tasks);
    WH_LAUNCH_OR_DIE();
    kd_build_kernel<<<g->grid, g->block>>>(a);
    WH_LAUNCH_OR_DIE();
    WH_CUDA_OR_DIE(cudaEventRecord(t1));
    WH_CUDA_OR_DIE(cudaEventSynchronize(t1));
    WH_CUDA_OR_DIE(cudaEventElapsedTime(&st->ms, t0, t1));
    WH_CUDA_OR_DIE(cudaEventDestroy(t0));
    WH_CUDA_OR_DIE(cudaEventDestroy(t1));
    kd_counters c;
    WH_CUDA_OR_DIE(cudaMemcpy(&c, g->ctr, sizeof c, cudaMemcpyDeviceToHost));
    st->nodes = c.nodes;
    st->leaves = c.leaves;
    st->refs = c.refs;
    st->allocs = c.allocs;
    st->bytes = c.bytes;
    st->bytes_sq = c.bytes_sq;
    st->alloc_failures = c.fails + c.root_fail;
    st->alloc_fail_max = c.fail_max;
    st->node_overflow = c.overflow;
    st->timeouts = c.timeouts;
    st->depth = (uint32_t)c.depth;
    memcpy(st->prof, c.prof, sizeof st->prof);
    for (uint32_t k = 0; k < KD_PCLASSES; ++k) {
        st->alloc_n[k] = c.alloc_n[k];
        st->alloc_cyc[k] = c.alloc_cyc[k];
        st->free_n[k] = c.free_n[k];
        st->free_cyc[k] = c.free_cyc[k];
    }
    return c.root_fail ? -1 : 0;
}

/* One warp per leaf copies its list into the flat array at first[leaf]. */
static __global__ void kd_gather_kernel(const kd_leaf *leaves, uint32_t n, const uint64_t *first, uint32_t *out) {
    uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31u;
    uint32_t stride = (gridDim.x * blockDim.x) >> 5;
    for (uint32_t l = warp; l < n; l += stride) {
        const uint32_t *src = (const uint32_t *)(uintptr_t)leaves[l].refs;
        for (uint32_t k = lane; k < leaves[l].count; k += 32u) out[first[l] + k] = __ldcg(src + k);
    }
}

extern "C" int kd_gpu_download(const kd_gpu *g, kd_tree *t) {
    kd_counters c;
    memset(t, 0, sizeof *t);
    WH_CUDA_OR_DIE(cudaMemcpy(&c, g->ctr, sizeof c, cudaMemcpyDeviceToHost));
    t->nnodes = (uint32_t)(c.nodes < g->cap ? c.nodes : g->cap);
    t->nleaves = (uint32_t)c.leaves;
    t->root = g->root;
    t->nodes = (kd_node *)malloc((size_t)t->nnodes * sizeof(kd_node) + 1u);
    t->leaves = (kd_leaf *)malloc((size_t)t->nleaves * sizeof(kd_leaf) + 1u);
    t->first = (uint64_t *)malloc(((size_t)t->nleaves + 1u) * sizeof(uint64_t));
    if (!t->nodes || !t->leaves || !t->first) return -1;
    WH_CUDA_OR_DIE(cudaMemcpy(t->nodes, g->nodes, (size_t)t->nnodes * sizeof(kd_node), cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaMemcpy(t->leaves, g->leaves, (size_t)t->nleaves * sizeof(kd_leaf), cudaMemcpyDeviceToHost));
    t->first[0] = 0;
    for (uint32_t l = 0; l < t->nleaves; ++l) t->first[l + 1] = t->first[l] + t->leaves[l].count;
    uint64_t total = t->first[t->nleaves];
    t->refs = (uint32_t *)malloc(total * sizeof(uint32_t) + 1u);
    if (!t->refs) return -1;
    uint64_t *dfirst = NULL;
    uint32_t *dout = NULL;
    WH_CUDA_OR_DIE(cudaMalloc(&dfirst, ((size_t)t->nleaves + 1u) * sizeof(uint64_t)));
    WH_CUDA_OR_DIE(cudaMalloc(&dout, total * sizeof(uint32_t) + 4u));
    WH_CUDA_OR_DIE(cudaMemcpy(dfirst, t->first, ((size_t)t->nleaves + 1u) * sizeof(uint64_t), cudaMemcpyHostToDevice));
    if (t->nleaves) {
        kd_gather_kernel<<<1024, 256>>>((const kd_leaf *)g->leaves, t->nleaves, dfirst, dout);
        WH_LAUNCH_OR_DIE();
    }
    WH_CUDA_OR_DIE(cudaMemcpy(t->refs, dout, total * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    WH_CUDA_OR_DIE(cudaFree(dfirst));
    WH_CUDA_OR_DIE(cudaFree(dout));
    return 0;
}

static __global__ void kd_release_kernel(const kd_leaf *leaves, uint32_t n) {
    for (uint32_t l = blockIdx.x * blockDim.x + threadIdx.x; l < n; l += gridDim.x * blockDim.x)
        if (leaves[l].refs) free((void *)(uintptr_t)leaves[l].refs);
}

extern "C" void kd_gpu_release(kd_gpu *g) {
    kd_counters c;
    WH_CUDA_OR_DIE(cudaMemcpy(&c, g->ctr, sizeof c, cudaMemcpyDeviceToHost));
    if (c.leaves) {
        kd_release_kernel<<<1024, 256>>>((const kd_leaf *)g->leaves, (uint32_t)c.leaves);
        WH_LAUNCH_OR_DIE();
    }
    WH_CUDA_OR_DIE(cudaDeviceSynchronize());
}
