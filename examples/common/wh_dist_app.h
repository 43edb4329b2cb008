/* SPDX-License-Identifier: MIT */
/* The ranks of an example across ranks (soa/dist.h), shared by
 * wh_wator_dist and wh_nbody_dist: --ranks=N threads of this process on the
 * in-process transport (on the GPU, rank r's heap on GPU r % devices); in a
 * build with NCCL (CMake defines WH_APP_NCCL where it links
 * warpheap_nccl), --nccl makes this process one rank of a group a launcher
 * started (RANK, WORLD_SIZE, LOCAL_RANK and WH_NCCL_ID_FILE: soa/nccl.h),
 * or, with RANK unset, one process driving --ranks GPUs over NCCL.
 * Header-only C that also compiles as CUDA. */
#ifndef WH_DIST_APP_H
#define WH_DIST_APP_H

#include "wh_app_bench.h"
#include "wh_cli.h"
#include "warpheap/soa/dist.h"

#include <pthread.h>

#ifndef WH_APP_NCCL
#define WH_APP_NCCL 0
#endif
#if WH_APP_NCCL
#include "warpheap/soa/nccl.h"
#endif

#define APP_DIST_MAX_RANKS 64u
typedef struct app_dist {
    unsigned ranks; /* --ranks */
    int nccl;       /* --nccl */
} app_dist;
#define APP_CLI_DIST(d)                                                                         \
    WH_CLI_UINT("ranks", &(d)->ranks, "ranks (threads of this process, or GPUs under --nccl)"), \
        WH_CLI_FLAG("nccl", &(d)->nccl,                                                         \
                    "ranks over NCCL (a build with NCCL, on the GPU; RANK set: "                \
                    "this process is one rank of WORLD_SIZE)")

/* A rank's work: rank of size, its end of the transport (the function
 * destroys it). */
typedef void (*app_rank_fn)(uint32_t rank, uint32_t size, wh_soa_transport *end, void *arg);
typedef struct app_rank_arg {
    app_rank_fn fn;
    void *arg;
    uint32_t rank, size;
    int dev;
    wh_soa_transport *end;
} app_rank_arg;

static void *app_rank_main(void *p) {
    app_rank_arg *a = (app_rank_arg *)p;
#if defined(__CUDACC__)
    int ndev = 1;
    if (a->dev && cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0)
        WH_CUDA_OR_DIE(cudaSetDevice((int)(a->rank % (uint32_t)ndev)));
#endif
    a->fn(a->rank, a->size, a->end, a->arg);
    return NULL;
}

/* Run fn on every rank of this process and wait for them.  Returns the
 * group's size, and in *reporter whether this process holds rank 0 (the
 * one that prints and checks); exits with a message on a bad setup. */
static inline uint32_t app_dist_run(const app_dist *o, int dev, app_rank_fn fn, void *arg, int *reporter) {
    uint32_t size = o->ranks;
    int me = -1; /* under a launcher: this process's rank */
    wh_soa_transport *ends[APP_DIST_MAX_RANKS] = {0};
    if (o->nccl && (!WH_APP_NCCL || !dev)) {
        fprintf(stderr, "--nccl needs a build with NCCL and a GPU\n");
        exit(2);
    }
#if WH_APP_NCCL
    if (o->nccl && getenv("RANK")) {
        me = atoi(getenv("RANK"));
        size = getenv("WORLD_SIZE") ? (uint32_t)atoi(getenv("WORLD_SIZE")) : 0;
    }
#endif
    if (size < 1 || size > APP_DIST_MAX_RANKS || (me >= 0 && (uint32_t)me >= size)) {
        fprintf(stderr, "ranks: %u (rank %d), 1 to %u\n", size, me, APP_DIST_MAX_RANKS);
        exit(2);
    }
    wh_status st = WH_OK;
    if (!o->nccl) st = wh_soa_transport_threads(size, dev != 0, ends);
#if WH_APP_NCCL
    if (o->nccl && me >= 0) st = wh_soa_transport_nccl_env(&ends[me]);
    if (o->nccl && me < 0) {
        int devices[APP_DIST_MAX_RANKS], ndev = 1;
        WH_CUDA_OR_DIE(cudaGetDeviceCount(&ndev));
        for (uint32_t r = 0; r < size; ++r) devices[r] = (int)(r % (uint32_t)ndev);
        st = wh_soa_transport_nccl_all(size, devices, ends);
    }
#endif
    if (st != WH_OK) {
        fprintf(stderr, "transport: %s (%s)\n", wh_strerror(st), wh_last_error());
        exit(1);
    }
    pthread_t th[APP_DIST_MAX_RANKS];
    app_rank_arg args[APP_DIST_MAX_RANKS];
    for (uint32_t r = 0; r < size; ++r) {
        args[r] = (app_rank_arg){fn, arg, r, size, dev, ends[r]};
        if (me >= 0 && r != (uint32_t)me) continue; /* other processes run the other ranks */
        if (pthread_create(&th[r], NULL, app_rank_main, &args[r]) != 0) {
            fprintf(stderr, "no thread for rank %u\n", r);
            exit(1);
        }
    }
    for (uint32_t r = 0; r < size; ++r)
        if (me < 0 || r == (uint32_t)me) pthread_join(th[r], NULL);
    *reporter = me <= 0;
    return size;
}

/* A rank's heap and its end of the layer, and their release at the end
 * (the heap's invariants checked first). */
static inline void app_dist_begin(wh_soa *soa, const wh_soa_config *cfg, wh_soa_dist *d, wh_soa_transport *end) {
    APP_TRY(wh_soa_create(soa, cfg));
    APP_TRY(wh_soa_dist_create(d, soa, end));
}
static inline void app_dist_end(wh_soa *soa, wh_soa_dist *d, wh_soa_transport *end) {
    app_heap_check(soa, "warpheap (a rank's heap)");
    APP_TRY(wh_soa_dist_destroy(d));
    APP_DESTROY(soa);
    wh_soa_transport_destroy(end);
}

#endif /* WH_DIST_APP_H */
