/* SPDX-License-Identifier: MIT */
/* Object allocator across ranks: the transport that wh_soa_dist (soa/dist.h)
 * moves bytes with.  Not in the paper (DynaSOAr runs on one GPU).
 *
 * A transport is one rank's end of a group of `size` ranks.  Its one
 * operation, exchange, is collective and variable all-to-all: every rank
 * of the group calls it, sends send_bytes[r] bytes from send[r] to each rank
 * r and receives recv_bytes[r] bytes from each rank r into recv[r] (0 bytes:
 * nothing with that rank; a rank may send to itself).  Both sides know the
 * sizes beforehand; a size the two sides disagree on is an error on the
 * receiver, never a partial copy into its buffer.  The buffers live in the
 * memory the transport says (device memory where on_device).
 *
 * Two transports come with warpheap:
 *   wh_soa_transport_threads  ranks are threads of one process (host or
 *                             device buffers; the CPU backend's, and one
 *                             process driving one or several GPUs);
 *   wh_soa_transport_nccl     one rank per GPU over NCCL, within a host and
 *                             across hosts (soa/nccl.h; built where NCCL is
 *                             found).
 * Another transport (MPI, say) is a struct of these three fields.
 */
#ifndef WARPHEAP_SOA_TRANSPORT_H
#define WARPHEAP_SOA_TRANSPORT_H

#include "warpheap/warpheap.h"

typedef struct wh_soa_transport wh_soa_transport;
struct wh_soa_transport {
    uint32_t rank, size; /* this end's rank in [0, size) */
    bool on_device;      /* exchange's buffers are device memory */
    wh_status (*exchange)(wh_soa_transport *t, void *const *send, const size_t *send_bytes, void *const *recv,
                          const size_t *recv_bytes);
    /* Release this end (each rank its own; not collective). */
    void (*destroy)(wh_soa_transport *t);
    void *impl;
};

WH_EXTERN_C_BEGIN
/* `size` ends of one in-process group, ends[r] for the thread that runs rank
 * r; each thread destroys its own end.  on_device: the buffers are device
 * memory (copied with cudaMemcpy, across GPUs too).  WH_ERR_INVALID_ARGUMENT
 * for size 0, WH_ERR_NO_DEVICE for device buffers without CUDA. */
WH_API wh_status wh_soa_transport_threads(uint32_t size, bool on_device, wh_soa_transport **ends);
/* Release one end (NULL: nothing). */
WH_API void wh_soa_transport_destroy(wh_soa_transport *t);
WH_EXTERN_C_END

#endif /* WARPHEAP_SOA_TRANSPORT_H */
