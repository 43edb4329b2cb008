/* SPDX-License-Identifier: MIT */
/* Object allocator across ranks: the NCCL transport (soa/transport.h), one
 * rank per GPU, within a host and across hosts; built where CMake finds NCCL
 * (WH_NCCL_ROOT), as the library warpheap_nccl.
 *
 * An exchange is one NCCL group of ncclSend / ncclRecv on the end's stream,
 * which waits for the work the default stream holds before it, and returns
 * when the received bytes are in place.  NCCL cannot see a size the two
 * sides disagree on: wh_soa_dist agrees every size first.
 *
 * Bootstrap: rank 0 writes NCCL's unique id to a file every rank can read
 * (a shared file system across hosts), the others wait for it (bounded).
 * wh_soa_transport_nccl_env takes rank, size and GPU from the variables
 * torchrun and most MPI launchers set (RANK, WORLD_SIZE, LOCAL_RANK) and the
 * file from WH_NCCL_ID_FILE.  One process driving several GPUs takes all
 * their ends at once (ncclCommInitAll) and runs each rank in a thread. */
#ifndef WARPHEAP_SOA_NCCL_H
#define WARPHEAP_SOA_NCCL_H

#include "warpheap/soa/transport.h"

typedef struct wh_soa_nccl_config {
    uint32_t rank, size;
    int device;          /* the GPU of this rank */
    const char *id_file; /* where rank 0 puts the unique id */
    double wait_s;       /* how long the others wait for it (0: 120 s) */
} wh_soa_nccl_config;

WH_EXTERN_C_BEGIN
WH_API wh_status wh_soa_transport_nccl(const wh_soa_nccl_config *cfg, wh_soa_transport **end);
/* The configuration from RANK, WORLD_SIZE, LOCAL_RANK and WH_NCCL_ID_FILE;
 * WH_ERR_INVALID_ARGUMENT naming the variable that is missing or bad. */
WH_API wh_status wh_soa_transport_nccl_env(wh_soa_transport **end);
/* n ranks of this process, ends[r] on GPU devices[r]. */
WH_API wh_status wh_soa_transport_nccl_all(uint32_t n, const int *devices, wh_soa_transport **ends);
WH_EXTERN_C_END

#endif /* WARPHEAP_SOA_NCCL_H */
