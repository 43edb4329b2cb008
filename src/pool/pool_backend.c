/* SPDX-License-Identifier: MIT */
/* Host pool backends: where arenas come from and how stream order is seen.
 * CUDA: cudaMalloc arenas, cudaEvents recorded on streams.  CPU: host
 * arenas, and streams run nothing, so an event is complete unless the
 * test hook cfg.stream_busy says its stream still has work queued.
 * Not from a seed; the seed (Futhark) gets buffers from clCreateBuffer. */
#include "pool_internal.h"

#include <stdlib.h>
#include <time.h>

#if WH_HAVE_CUDA
#include "warpheap/cuda_check.h"
#define WH__CUDA_NATURAL_ALIGN 256u /* cudaMalloc aligns at least this much */
#endif

#if WH_HAVE_CUDA
static bool wh__is_cuda(const wh_pool *p) { return p->cfg.backend == WH_POOL_CUDA; }
#endif

wh_status wh__mem_alloc(wh_pool *p, uint64_t bytes, void **raw, uint64_t *base) {
    uint64_t a = p->cfg.alignment;
    if (wh__fault()) return WH_ERR_OUT_OF_MEMORY;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        uint64_t extra = a > WH__CUDA_NATURAL_ALIGN ? a : 0;
        cudaError_t e = cudaMalloc(raw, bytes + extra);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError(); /* not sticky: clear it */
            return WH_ERR_OUT_OF_MEMORY;
        }
        WH_CUDA_TRY(e);
        *base = ((uint64_t)(uintptr_t)*raw + a - 1) & ~(a - 1);
        return WH_OK;
    }
#endif
    *raw = aligned_alloc(a, bytes);
    if (!*raw) return WH_ERR_OUT_OF_MEMORY;
    *base = (uint64_t)(uintptr_t)*raw;
    return WH_OK;
}

void wh__mem_free(wh_pool *p, void *raw) {
    (void)p;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        cudaError_t e = cudaFree(raw); /* nothing to do on failure but clear it */
        if (e != cudaSuccess) (void)cudaGetLastError();
        return;
    }
#endif
    free(raw);
}

wh_status wh__event_record(wh_pool *p, wh__event *e, wh_stream s) {
    e->stream = s;
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        cudaError_t r = cudaSuccess;
        if (!e->ev) {
            if (p->nspare_ev)
                e->ev = p->spare_ev[--p->nspare_ev];
            else
                r = wh__fault() ? cudaErrorMemoryAllocation
                                : cudaEventCreateWithFlags((cudaEvent_t *)&e->ev, cudaEventDisableTiming);
        }
        if (r == cudaSuccess) r = cudaEventRecord((cudaEvent_t)e->ev, (cudaStream_t)s);
        if (r != cudaSuccess) {
            (void)cudaGetLastError(); /* leave no error for the caller's next check */
            return wh__fail(WH_ERR_CUDA, "pool: recording an event on stream %p: %s", s, cudaGetErrorString(r));
        }
    }
#else
    (void)p;
#endif
    return WH_OK;
}

static bool wh__cpu_busy(const wh_pool *p, wh_stream s) {
    return p->cfg.stream_busy && p->cfg.stream_busy(s, p->cfg.stream_busy_user);
}

/* A failed query counts as "not done": memory is never handed out early. */
bool wh__event_done(wh_pool *p, wh__event *e) {
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        cudaError_t r = cudaEventQuery((cudaEvent_t)e->ev);
        if (r == cudaSuccess) return true;
        (void)cudaGetLastError();
        return false;
    }
#endif
    return !wh__cpu_busy(p, e->stream);
}

/* CPU backend: streams run nothing, so only the test hook can keep one busy
 * and only another thread can make it idle.  A real wait: sleep in growing
 * steps (10 us .. 10 ms) until it is idle, for at most cfg.stream_wait_ms. */
static bool wh__cpu_wait_idle(wh_pool *p, wh_stream s) {
    struct timespec t0, now, nap = {0, 10000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (wh__cpu_busy(p, s)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double ms = 1e3 * (double)(now.tv_sec - t0.tv_sec) + 1e-6 * (double)(now.tv_nsec - t0.tv_nsec);
        if (ms >= (double)p->cfg.stream_wait_ms) return false;
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 10000000) nap.tv_nsec *= 2;
    }
    return true;
}

bool wh__event_wait(wh_pool *p, wh__event *e) {
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        if (cudaEventSynchronize((cudaEvent_t)e->ev) == cudaSuccess) return true;
        (void)cudaGetLastError();
        return false;
    }
#endif
    return wh__cpu_wait_idle(p, e->stream);
}

bool wh__stream_sync(wh_pool *p, wh_stream s) {
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        if (cudaStreamSynchronize((cudaStream_t)s) == cudaSuccess) return true;
        (void)cudaGetLastError(); /* a stream destroyed meanwhile: nothing to wait for */
        return false;
    }
#endif
    return wh__cpu_wait_idle(p, s);
}

bool wh__stream_capturing(wh_pool *p, wh_stream s) {
#if WH_HAVE_CUDA
    if (wh__is_cuda(p)) {
        enum cudaStreamCaptureStatus c = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing((cudaStream_t)s, &c) == cudaSuccess) return c != cudaStreamCaptureStatusNone;
        (void)cudaGetLastError();
        return true; /* unknown: do not wait */
    }
#endif
    (void)p;
    (void)s;
    return false;
}

/* Keep the event for reuse (CUDA); nothing to do on the CPU. */
void wh__event_release(wh_pool *p, wh__event *e) {
    if (!e->ev) return;
    void **n = wh__room(p->spare_ev, p->nspare_ev, &p->spare_ev_cap, sizeof *n);
    if (!n) { /* no room to keep it */
#if WH_HAVE_CUDA
        (void)cudaEventDestroy((cudaEvent_t)e->ev);
#endif
        e->ev = NULL;
        return;
    }
    p->spare_ev = n;
    p->spare_ev[p->nspare_ev++] = e->ev;
    e->ev = NULL;
}

void wh__events_destroy(wh_pool *p) {
    for (uint32_t s = 0; s < p->nslots; ++s) wh__event_release(p, &p->slots[s].ev);
#if WH_HAVE_CUDA
    for (uint32_t i = 0; i < p->nspare_ev; ++i) (void)cudaEventDestroy((cudaEvent_t)p->spare_ev[i]);
#endif
    p->nspare_ev = 0;
    free(p->spare_ev);
    p->spare_ev = NULL;
}
