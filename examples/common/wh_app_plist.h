/* SPDX-License-Identifier: MIT */
/* The do-all lists of the device-malloc variants: the standalone parallel_do
 * that DynaSOAr's section 6 builds for "other allocators".  One array of
 * object pointers per type; objects created during a do-all are appended to
 * `fresh`; a destroyed object is only marked (its first 32-bit word, which
 * every listed struct reserves for this, set to 1).  After the do-all,
 * app_plist_settle compacts items + fresh into the next array and frees the
 * marked objects then, when no pointer to them is left.  CUDA only. */
#ifndef WH_APP_PLIST_H
#define WH_APP_PLIST_H
#if defined(__CUDACC__)
#include "wh_app.h"

typedef struct app_plist {
    void **items, **next, **fresh;
    uint32_t *cnt; /* device: n, n_next, n_fresh */
    uint32_t cap;
} app_plist;
/* Items of list l in a kernel: l.items[i] for i < APP_PLIST_N(l). */
#define APP_PLIST_N(l) ((l).cnt[0])

/* A device malloc that counts its failures in *fails (the variants' one
 * failure counter); NULL when the heap is exhausted. */
static __device__ void *app_dev_malloc(size_t n, unsigned long long *fails) {
    void *p = malloc(n);
    if (!p) atomicAdd(fails, 1ull);
    return p;
}
static __device__ void app_plist_add(app_plist *l, void *p, unsigned long long *fails) {
    uint32_t k = atomicAdd(&l->cnt[2], 1u);
    if (k < l->cap)
        l->fresh[k] = p;
    else
        atomicAdd(fails, 1ull);
}
static __device__ void app_plist_kill(void *p) { *(uint32_t *)p = 1u; }
static __device__ void app_plist_keep(app_plist *l, void *p) {
    if (*(const uint32_t *)p) {
        free(p);
        return;
    }
    uint32_t k = atomicAdd(&l->cnt[1], 1u);
    if (k < l->cap) l->next[k] = p;
}
static __global__ void app_plist_compact(app_plist l) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, n = l.cnt[0], nf = l.cnt[2];
    if (i < n) app_plist_keep(&l, l.items[i]);
    if (i < nf && i < l.cap) app_plist_keep(&l, l.fresh[i]);
}
static __global__ void app_plist_swap_counts(app_plist l) {
    l.cnt[0] = l.cnt[1] < l.cap ? l.cnt[1] : l.cap;
    l.cnt[1] = 0;
    l.cnt[2] = 0;
}
/* After a do-all that created or destroyed objects of list l. */
static inline void app_plist_settle(app_plist *l) {
    app_plist_compact<<<(l->cap + 255u) / 256u, 256>>>(*l);
    WH_LAUNCH_OR_DIE();
    app_plist_swap_counts<<<1, 1>>>(*l);
    WH_LAUNCH_OR_DIE();
    void **t = l->items;
    l->items = l->next;
    l->next = t;
}
/* The count of failed device mallocs a variant keeps on the device. */
static inline unsigned long long app_dev_count(const unsigned long long *d) {
    unsigned long long v = 0;
    WH_CUDA_OR_DIE(cudaMemcpy(&v, d, 8, cudaMemcpyDeviceToHost));
    return v;
}
/* Every listed object back to the heap (after a final settle). */
static __global__ void app_plist_free_items(app_plist l) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < l.cnt[0]) free(l.items[i]);
}
static inline void app_plist_alloc(app_plist *l, uint32_t cap) {
    l->cap = cap;
    WH_CUDA_OR_DIE(cudaMalloc(&l->items, (size_t)cap * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&l->next, (size_t)cap * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&l->fresh, (size_t)cap * 8));
    WH_CUDA_OR_DIE(cudaMalloc(&l->cnt, 12));
    WH_CUDA_OR_DIE(cudaMemset(l->cnt, 0, 12));
}
static inline void app_plist_free(app_plist *l) {
    WH_CUDA_OR_DIE(cudaFree(l->items));
    WH_CUDA_OR_DIE(cudaFree(l->next));
    WH_CUDA_OR_DIE(cudaFree(l->fresh));
    WH_CUDA_OR_DIE(cudaFree(l->cnt));
}
#endif
#endif
