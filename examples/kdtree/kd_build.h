/* SPDX-License-Identifier: MIT */
/* The single-kernel k-d tree builder on the GPU (kd_build.cu). */
#ifndef WH_KD_BUILD_H
#define WH_KD_BUILD_H

#include "kd_scene.h"
#include "warpheap/heap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KD_PCLASSES (WH_SLAB_CLASSES + 1u)

/* Per-warp figures of a build, summed: cycles (cfg.profile only; lane 0's
 * SM clock) and the frees (always). */
enum kd_prof {
    KD_CYC_ALLOC,
    KD_CYC_FREE,
    KD_CYC_NODE,
    KD_CYC_WAIT,
    KD_SLOW_ALLOCS, /* splits whose allocation took > 20K cycles */
    KD_FREE_CALLS,
    KD_FREED_LISTS, /* free calls (warp-wide), lists they freed */
    KD_PROF
};

/* Where the triangle-reference arrays come from. */
typedef enum kd_alloc {
    KD_ALLOC_WARPHEAP = 0, /* wh_malloc / wh_free on cfg.heap             */
    KD_ALLOC_CUDA = 1      /* CUDA's device malloc / free                  */
} kd_alloc;

typedef struct kd_build_config {
    kd_alloc alloc;
    wh_heap heap;           /* KD_ALLOC_WARPHEAP: a fresh (or reset) heap    */
    uint32_t leaf_size;     /* a node with at most this many refs is a leaf */
    uint32_t max_depth;     /* 0: 8 + 1.3 log2(triangles), at most 40        */
    double timeout_s;       /* a warp waiting this long gives up (0: 30 s) */
    uint32_t alloc_retries; /* retries of a failed list (0, at most 16)     */
    uint32_t free_batch;    /* parents' lists freed per warp-wide wh_free_warp:
                                 0 or 1 = each at once (default), up to 32     */
    uint32_t profile;       /* 1: count cycles in alloc / free / node / wait  */
} kd_build_config;

typedef struct kd_build_stats {
    uint64_t nodes, leaves, refs;     /* refs: sum over leaves              */
    uint64_t allocs, bytes, bytes_sq; /* lists allocated (root included)    */
    uint64_t alloc_failures;          /* a failed list: the node became a leaf */
    uint64_t alloc_fail_max;          /* bytes of the largest failed list  */
    uint64_t node_overflow, timeouts; /* node table full; waits that gave up */
    uint32_t depth;                   /* deepest leaf                       */
    float ms;                         /* build, CUDA events                 */
    uint64_t prof[KD_PROF];           /* kd_prof: summed over warps        */
    /* cfg.profile, per size class (KD_PCLASSES: the slab classes, of
     * wh__slab_size(c) bytes, then page runs above 64 KiB): calls and the
     * calling lane's cycles */
    uint64_t alloc_n[KD_PCLASSES], alloc_cyc[KD_PCLASSES], free_n[KD_PCLASSES], free_cyc[KD_PCLASSES];
} kd_build_stats;

/* Device copies of a scene and the tables of one build (reused by builds). */
typedef struct kd_gpu {
    uint32_t ntris, cap; /* cap: node table entries            */
    kd_box root;
    void *tlo, *thi; /* float4 per triangle                */
    void *tasks, *nodes, *leaves, *ctr;
    uint32_t *ready;
    int grid, block;
} kd_gpu;

int kd_gpu_create(kd_gpu *g, const kd_scene *s, uint32_t node_cap);
void kd_gpu_destroy(kd_gpu *g);
/* One build, timed from the root list's allocation to the last leaf.
 * Returns 0, or -1 when the root list could not be allocated. */
int kd_gpu_build(kd_gpu *g, const kd_build_config *cfg, kd_build_stats *st);
/* The last build's tree on the host (for kd_check_tree). */
int kd_gpu_download(const kd_gpu *g, kd_tree *t);
/* KD_ALLOC_CUDA: free the leaves' lists (a warpheap heap is reset instead). */
void kd_gpu_release(kd_gpu *g);
/* Bytes of the root's reference list (for sizing heaps). */
uint64_t kd_root_bytes(uint32_t ntris);

#ifdef __cplusplus
}
#endif

#endif
