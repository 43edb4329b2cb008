/* SPDX-License-Identifier: MIT */
/* Object allocator across ranks: the in-process transport (soa/transport.h),
 * ranks as threads of one process.  An exchange posts this rank's send
 * buffers on a board the group shares, waits at a barrier until every rank
 * has posted, copies what the others post for it, and waits at a second
 * barrier before a sender may reuse its buffers.  Device buffers are copied
 * with cudaMemcpy (any two GPUs of the process: unified addressing). */
#include "soa_internal.h"
#include "warpheap/soa/transport.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct board {
    pthread_barrier_t bar;
    uint32_t size, ends; /* ends not yet destroyed (atomic) */
    void *const **send;  /* [size] the send array each rank posted */
    const size_t **bytes;
} board;

static void board_release(board *b) {
    if (wh_atomic_fetch_sub(&b->ends, 1u, WH_ACQ_REL) != 1u) return;
    pthread_barrier_destroy(&b->bar);
    free((void *)b->send);
    free((void *)b->bytes);
    free(b);
}

static wh_status threads_exchange(wh_soa_transport *t, void *const *send, const size_t *send_bytes, void *const *recv,
                                  const size_t *recv_bytes) {
    board *b = (board *)t->impl;
    uint32_t me = t->rank;
    b->send[me] = send;
    b->bytes[me] = send_bytes;
    pthread_barrier_wait(&b->bar); /* every rank has posted (the barrier orders the memory) */
    wh_status st = WH_OK;
    for (uint32_t r = 0; r < b->size; ++r) {
        size_t n = b->bytes[r][me];
        if (n != recv_bytes[r]) {
            if (st == WH_OK)
                st =
                    wh__fail(WH_ERR_INVALID_ARGUMENT, "exchange: rank %u sends %zu bytes to rank %u, which expects %zu",
                             r, n, me, recv_bytes[r]);
            continue;
        }
        if (n && st == WH_OK) st = wh__soa_copy(t->on_device, recv[r], b->send[r][me], n);
    }
    pthread_barrier_wait(&b->bar); /* every rank has read: senders may reuse their buffers */
    return st;
}

static void threads_destroy(wh_soa_transport *t) {
    board_release((board *)t->impl);
    free(t);
}

wh_status wh_soa_transport_threads(uint32_t size, bool on_device, wh_soa_transport **ends) {
    wh__clear_error();
    if (!ends || size == 0) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_transport_threads: no ranks");
    if (on_device && !wh_cuda_available())
        return wh__fail(WH_ERR_NO_DEVICE, "wh_soa_transport_threads: device buffers and no usable GPU");
    board *b = (board *)calloc(1, sizeof *b);
    if (b) {
        b->send = (void *const **)calloc(size, sizeof *b->send);
        b->bytes = (const size_t **)calloc(size, sizeof *b->bytes);
    }
    if (!b || !b->send || !b->bytes || pthread_barrier_init(&b->bar, NULL, size) != 0) {
        if (b) free((void *)b->send), free((void *)b->bytes);
        free(b);
        return wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_soa_transport_threads: no memory for %u ranks", size);
    }
    b->size = size;
    for (uint32_t r = 0; r < size; ++r) {
        ends[r] = (wh_soa_transport *)calloc(1, sizeof **ends);
        if (!ends[r]) {
            b->ends = r; /* the ends made so far hold the board */
            for (uint32_t q = 0; q < r; ++q) threads_destroy(ends[q]), ends[q] = NULL;
            if (r == 0) pthread_barrier_destroy(&b->bar), free((void *)b->send), free((void *)b->bytes), free(b);
            return wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_soa_transport_threads: no memory for %u ranks", size);
        }
        *ends[r] = (wh_soa_transport){r, size, on_device, threads_exchange, threads_destroy, b};
    }
    b->ends = size;
    return WH_OK;
}

void wh_soa_transport_destroy(wh_soa_transport *t) {
    if (t) t->destroy(t);
}
