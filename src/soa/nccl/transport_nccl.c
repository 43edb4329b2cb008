/* SPDX-License-Identifier: MIT */
/* Object allocator across ranks: the NCCL transport (soa/nccl.h). */
#include "warpheap/soa/nccl.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct nccl_end {
    ncclComm_t comm;
    cudaStream_t stream;
    int device;
} nccl_end;

#define NCCL_TRY(call)                                                                                       \
    do {                                                                                                     \
        ncclResult_t r_ = (call);                                                                            \
        if (r_ != ncclSuccess) return wh__fail(WH_ERR_UNSUPPORTED, "%s: %s", #call, ncclGetErrorString(r_)); \
    } while (0)
#define CUDA_TRY(call)                                                                                \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) return wh__fail(WH_ERR_CUDA, "%s: %s", #call, cudaGetErrorString(e_)); \
    } while (0)

static wh_status nccl_exchange(wh_soa_transport *t, void *const *send, const size_t *send_bytes, void *const *recv,
                               const size_t *recv_bytes) {
    nccl_end *e = (nccl_end *)t->impl;
    CUDA_TRY(cudaSetDevice(e->device));
    NCCL_TRY(ncclGroupStart());
    for (uint32_t r = 0; r < t->size; ++r) {
        if (send_bytes[r]) NCCL_TRY(ncclSend(send[r], send_bytes[r], ncclUint8, (int)r, e->comm, e->stream));
        if (recv_bytes[r]) NCCL_TRY(ncclRecv(recv[r], recv_bytes[r], ncclUint8, (int)r, e->comm, e->stream));
    }
    NCCL_TRY(ncclGroupEnd());
    CUDA_TRY(cudaStreamSynchronize(e->stream));
    return WH_OK;
}

static void nccl_destroy(wh_soa_transport *t) {
    nccl_end *e = (nccl_end *)t->impl;
    if (cudaSetDevice(e->device) == cudaSuccess) {
        (void)ncclCommDestroy(e->comm);
        (void)cudaStreamDestroy(e->stream);
    }
    free(e);
    free(t);
}

/* An end around a communicator (its stream blocks on the default stream). */
static wh_status make_end(ncclComm_t comm, uint32_t rank, uint32_t size, int device, wh_soa_transport **out) {
    wh_soa_transport *t = (wh_soa_transport *)calloc(1, sizeof *t);
    nccl_end *e = (nccl_end *)calloc(1, sizeof *e);
    if (!t || !e) {
        free(t), free(e);
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "nccl transport: no memory");
    }
    e->comm = comm;
    e->device = device;
    cudaError_t ce = cudaSetDevice(device);
    if (ce == cudaSuccess) ce = cudaStreamCreate(&e->stream);
    if (ce != cudaSuccess) {
        free(t), free(e);
        return wh__fail(WH_ERR_CUDA, "nccl transport: stream on GPU %d: %s", device, cudaGetErrorString(ce));
    }
    *t = (wh_soa_transport){rank, size, true, nccl_exchange, nccl_destroy, e};
    *out = t;
    return WH_OK;
}

/* Rank 0 writes the id (to a temporary name, then renames it: a reader
 * never sees half of it); the others read it, waiting at most wait_s. */
static wh_status share_id(const wh_soa_nccl_config *c, ncclUniqueId *id) {
    if (c->rank == 0) {
        NCCL_TRY(ncclGetUniqueId(id));
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.%d.tmp", c->id_file, (int)getpid());
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, c->id_file) != 0)
            return wh__fail(WH_ERR_INVALID_ARGUMENT, "nccl transport: cannot write the id to %s", c->id_file);
        return WH_OK;
    }
    double wait = c->wait_s > 0 ? c->wait_s : 120.0;
    for (double waited = 0; waited < wait; waited += 0.01) {
        FILE *f = fopen(c->id_file, "rb");
        if (f) {
            size_t got = fread(id, sizeof *id, 1, f);
            fclose(f);
            if (got == 1) return WH_OK;
        }
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    return wh__fail(WH_ERR_RETRY_LIMIT, "nccl transport: rank %u found no id in %s after %.0f s", c->rank, c->id_file,
                    wait);
}

wh_status wh_soa_transport_nccl(const wh_soa_nccl_config *c, wh_soa_transport **end) {
    wh__clear_error();
    if (!c || !end || !c->id_file || c->size == 0 || c->rank >= c->size)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_transport_nccl: no id file, or rank %u of %u", c ? c->rank : 0,
                        c ? c->size : 0);
    ncclUniqueId id;
    wh_status st = share_id(c, &id);
    if (st != WH_OK) return st;
    CUDA_TRY(cudaSetDevice(c->device));
    ncclComm_t comm;
    NCCL_TRY(ncclCommInitRank(&comm, (int)c->size, id, (int)c->rank));
    st = make_end(comm, c->rank, c->size, c->device, end);
    if (st != WH_OK) (void)ncclCommDestroy(comm);
    return st;
}

static wh_status env_u32(const char *name, uint32_t *v, bool need) {
    const char *s = getenv(name);
    char *e = NULL;
    if (!s) return need ? wh__fail(WH_ERR_INVALID_ARGUMENT, "nccl transport: %s is not set", name) : WH_OK;
    unsigned long x = strtoul(s, &e, 10);
    if (!*s || *e || x > 0xFFFFFFFFul)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "nccl transport: %s=%s is not a number", name, s);
    *v = (uint32_t)x;
    return WH_OK;
}

wh_status wh_soa_transport_nccl_env(wh_soa_transport **end) {
    wh__clear_error();
    wh_soa_nccl_config c;
    memset(&c, 0, sizeof c);
    uint32_t local = 0;
    wh_status st = env_u32("RANK", &c.rank, true);
    if (st == WH_OK) st = env_u32("WORLD_SIZE", &c.size, true);
    if (st == WH_OK) st = env_u32("LOCAL_RANK", &local, false);
    if (st != WH_OK) return st;
    c.id_file = getenv("WH_NCCL_ID_FILE");
    if (!c.id_file) return wh__fail(WH_ERR_INVALID_ARGUMENT, "nccl transport: WH_NCCL_ID_FILE is not set");
    c.device = (int)local;
    return wh_soa_transport_nccl(&c, end);
}

wh_status wh_soa_transport_nccl_all(uint32_t n, const int *devices, wh_soa_transport **ends) {
    wh__clear_error();
    if (!n || !devices || !ends) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_transport_nccl_all: no ranks");
    ncclComm_t *comms = (ncclComm_t *)calloc(n, sizeof *comms);
    if (!comms) return wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_soa_transport_nccl_all: no memory");
    ncclResult_t r = ncclCommInitAll(comms, (int)n, devices);
    if (r != ncclSuccess) {
        free(comms);
        return wh__fail(WH_ERR_UNSUPPORTED, "ncclCommInitAll(%u GPUs): %s", n, ncclGetErrorString(r));
    }
    wh_status st = WH_OK;
    for (uint32_t i = 0; i < n; ++i) {
        if (st == WH_OK) st = make_end(comms[i], i, n, devices[i], &ends[i]);
        if (st != WH_OK) (void)ncclCommDestroy(comms[i]), ends[i] = NULL;
    }
    if (st != WH_OK)
        for (uint32_t i = 0; i < n; ++i) wh_soa_transport_destroy(ends[i]), ends[i] = NULL;
    free(comms);
    return st;
}
