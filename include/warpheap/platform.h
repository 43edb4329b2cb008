/* SPDX-License-Identifier: MIT */
/* warpheap platform layer: the one place where the CPU and CUDA backends differ.
 *
 * Everything above this header (bitmap, heaps, object allocator, block core) is
 * written once against these names and compiles as plain C11 with gcc/clang and
 * as CUDA device code with nvcc.  Functions marked WH_HOST_DEVICE are compiled
 * twice by nvcc: the host pass (no __CUDA_ARCH__) takes the CPU branch, the
 * device pass the GPU branch, so the same bitmap code runs in a kernel and in a
 * pthread of the CPU backend.
 *
 * Atomics are macros, not functions, because nvcc's __nv_atomic_* builtins need
 * their memory order as a compile-time constant.  They work on plain uint32_t /
 * uint64_t words (no _Atomic: nvcc compiles .cu files as C++).  Scope is the
 * whole device on the GPU.
 */
#ifndef WARPHEAP_PLATFORM_H
#define WARPHEAP_PLATFORM_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "warpheap/config.h" /* WH_HAVE_CUDA, WH_DEBUG of this build */

/* ---- qualifiers ---------------------------------------------------------- */
#if defined(__CUDACC__)
#define WH_DEVICE      __device__
#define WH_HOST_DEVICE __host__ __device__
#define WH_INLINE      static __forceinline__
#define WH_GLOBAL      __global__
/* a loop of a rare path kept rolled: fewer registers, which the whole
    * kernel pays for (one count for all the code a kernel can call); the
    * device pass only (the host compiler knows no such pragma) */
#if defined(__CUDA_ARCH__)
#define WH_PRAGMA_UNROLL1 _Pragma("unroll 1")
#else
#define WH_PRAGMA_UNROLL1
#endif
#else
#define WH_DEVICE
#define WH_HOST_DEVICE
/* the compiler decides: forcing every helper inline on the CPU makes a
    * test of the whole heap take minutes to compile, and buys nothing a
    * CPU-backend run measures */
#define WH_INLINE static inline
#define WH_GLOBAL
#define WH_PRAGMA_UNROLL1
#endif

#if defined(__cplusplus)
#define WH_EXTERN_C_BEGIN extern "C" {
#define WH_EXTERN_C_END   }
#else
#define WH_EXTERN_C_BEGIN
#define WH_EXTERN_C_END
#endif

/* ---- assertions (WH_DEBUG) ---------------------------------------------------
 * WH_DEBUG 1 (CMake -DWH_DEBUG=ON) turns WH_ASSERT on: the invariants the
 * comments state are checked where they must hold, on the CPU backend and in
 * device code.  A failed assertion prints the condition and where, then stops
 * the program (abort on the CPU, a trap on the GPU).  WH_DEBUG 0 (default):
 * WH_ASSERT compiles to nothing. */
#ifndef WH_DEBUG
#define WH_DEBUG 0
#endif
#if WH_DEBUG
#include <stdio.h>
#include <stdlib.h>
#if defined(__CUDACC__)
static inline __host__ __device__ __noinline__ void wh__assert_fail(const char *cond, const char *file, int line) {
#if defined(__CUDA_ARCH__)
    printf("warpheap: assertion failed: %s (%s:%d, block %d thread %d)\n", cond, file, line, (int)blockIdx.x,
           (int)threadIdx.x);
    __trap();
#else
    fprintf(stderr, "warpheap: assertion failed: %s (%s:%d)\n", cond, file, line);
    abort();
#endif
}
#else
static inline void wh__assert_fail(const char *cond, const char *file, int line) {
    fprintf(stderr, "warpheap: assertion failed: %s (%s:%d)\n", cond, file, line);
    abort();
}
#endif
#define WH_ASSERT(c) ((c) ? (void)0 : wh__assert_fail(#c, __FILE__, __LINE__))
#else
#define WH_ASSERT(c) ((void)sizeof((c) ? 1 : 0)) /* not evaluated */
#endif

/* Marks a function the shared library exports: the public wh_ API, and the
 * few wh__ functions that public inline code and macros call.  The library
 * is built with hidden visibility, so everything else stays inside it. */
#if defined(__GNUC__)
#define WH_API __attribute__((visibility("default")))
#else
#define WH_API
#endif

/* Marks a function whose own memory accesses ThreadSanitizer does not see (a
 * CPU-backend build with -fsanitize=thread): only for a read that races by
 * design, whose caller's comment argues why any value it returns is safe
 * (heap/circular.h: wh__circ_peek).  gcc and clang do not inline such a
 * function into an instrumented one, so the mark holds wherever it is called.
 * Nothing under nvcc: device code has no ThreadSanitizer. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define WH_NO_TSAN __attribute__((no_sanitize("thread")))
#else
#define WH_NO_TSAN
#endif

/* True while compiling code that runs on the GPU. */
#if defined(__CUDA_ARCH__)
#define WH_ON_GPU 1
#else
#define WH_ON_GPU 0
#endif

/* ---- memory orders ------------------------------------------------------- */
#if WH_ON_GPU
#define WH_RELAXED __NV_ATOMIC_RELAXED
#define WH_ACQUIRE __NV_ATOMIC_ACQUIRE
#define WH_RELEASE __NV_ATOMIC_RELEASE
#define WH_ACQ_REL __NV_ATOMIC_ACQ_REL
#define WH_SEQ_CST __NV_ATOMIC_SEQ_CST
#define WH__SCOPE  __NV_THREAD_SCOPE_DEVICE
#else
#define WH_RELAXED __ATOMIC_RELAXED
#define WH_ACQUIRE __ATOMIC_ACQUIRE
#define WH_RELEASE __ATOMIC_RELEASE
#define WH_ACQ_REL __ATOMIC_ACQ_REL
#define WH_SEQ_CST __ATOMIC_SEQ_CST
#endif

/* ---- atomics on plain words ---------------------------------------------- *
 * p points to a uint32_t or uint64_t; every macro returns the value before the
 * operation (fetch_*), except store (nothing) and cas (true if it swapped; on
 * failure *expected receives the current value).  Loads are atomic and so
 * bypass the GPU's incoherent L1: a plain load may see a stale line forever. */
#if WH_ON_GPU
#define wh_atomic_load(p, mo)         __nv_atomic_load_n((p), (mo), WH__SCOPE)
#define wh_atomic_store(p, v, mo)     __nv_atomic_store_n((p), (v), (mo), WH__SCOPE)
#define wh_atomic_fetch_add(p, v, mo) __nv_atomic_fetch_add((p), (v), (mo), WH__SCOPE)
#define wh_atomic_fetch_sub(p, v, mo) __nv_atomic_fetch_sub((p), (v), (mo), WH__SCOPE)
#define wh_atomic_fetch_or(p, v, mo)  __nv_atomic_fetch_or((p), (v), (mo), WH__SCOPE)
#define wh_atomic_fetch_and(p, v, mo) __nv_atomic_fetch_and((p), (v), (mo), WH__SCOPE)
#define wh_atomic_fetch_xor(p, v, mo) __nv_atomic_fetch_xor((p), (v), (mo), WH__SCOPE)
#define wh_atomic_fetch_max(p, v, mo) __nv_atomic_fetch_max((p), (v), (mo), WH__SCOPE)
#define wh_atomic_exchange(p, v, mo)  __nv_atomic_exchange_n((p), (v), (mo), WH__SCOPE)
#define wh_atomic_cas(p, expected, desired, mo_ok, mo_fail) \
    __nv_atomic_compare_exchange_n((p), (expected), (desired), false, (mo_ok), (mo_fail), WH__SCOPE)
#define wh_fence()         __nv_atomic_thread_fence(WH_SEQ_CST, WH__SCOPE)
/* An acquire fence: the relaxed reads before it acquire what their writers
 * released (fence.acq_rel, lighter than the sequentially consistent one). */
#define wh_fence_acquire() __nv_atomic_thread_fence(WH_ACQUIRE, WH__SCOPE)
/* Relaxed add whose result nobody reads: `red`, which the thread does not wait
 * for, so a loop of them issues back to back (an `atom` waits for its answer). */
WH_INLINE __device__ void wh_atomic_add_relaxed(uint32_t *p, uint32_t v) {
    asm volatile("red.relaxed.gpu.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
/* 64-bit or, and and add on a word in global memory (device, managed or
 * mapped host memory; never shared memory): `atom.global`.  On a generic
 * pointer (wh_atomic_fetch_or and the like) ptxas tests the address space
 * at each one and carries a compare-and-swap loop for shared memory, which
 * has no 64-bit or, and or add: a branch on every free's and allocation's
 * atomic, and a third of a free kernel's code.  mo is a constant, so the
 * switch folds; seq_cst is a fence and an acquire, as nvcc makes it. */
#define WH__ATOM_G64(op, sem, r, a, v) \
    asm volatile("atom." sem ".gpu.global." op " %0, [%1], %2;" : "=l"(r) : "l"(a), "l"(v) : "memory")
#define WH__ATOM_G64_FN(name, op)                                                                  \
    WH_INLINE __device__ uint64_t name(uint64_t *p, uint64_t v, int mo) {                          \
        uint64_t r, a = (uint64_t)__cvta_generic_to_global(p);                                     \
        switch (mo) {                                                                              \
        case WH_RELAXED: WH__ATOM_G64(op, "relaxed", r, a, v); break;                              \
        case WH_ACQUIRE: WH__ATOM_G64(op, "acquire", r, a, v); break;                              \
        case WH_RELEASE: WH__ATOM_G64(op, "release", r, a, v); break;                              \
        case WH_ACQ_REL: WH__ATOM_G64(op, "acq_rel", r, a, v); break;                              \
        default: asm volatile("fence.sc.gpu;" ::: "memory"); WH__ATOM_G64(op, "acquire", r, a, v); \
        }                                                                                          \
        return r;                                                                                  \
    }
WH__ATOM_G64_FN(wh__atomic_or64, "or.b64")
WH__ATOM_G64_FN(wh__atomic_and64, "and.b64")
WH__ATOM_G64_FN(wh__atomic_add64, "add.u64")
#else
#define wh_atomic_load(p, mo)         __atomic_load_n((p), (mo))
#define wh_atomic_store(p, v, mo)     __atomic_store_n((p), (v), (mo))
#define wh_atomic_fetch_add(p, v, mo) __atomic_fetch_add((p), (v), (mo))
#define wh_atomic_fetch_sub(p, v, mo) __atomic_fetch_sub((p), (v), (mo))
#define wh_atomic_fetch_or(p, v, mo)  __atomic_fetch_or((p), (v), (mo))
#define wh_atomic_fetch_and(p, v, mo) __atomic_fetch_and((p), (v), (mo))
#define wh_atomic_fetch_xor(p, v, mo) __atomic_fetch_xor((p), (v), (mo))
#define wh_atomic_fetch_max(p, v, mo) wh__cpu_fetch_max((p), (v), (mo))
#define wh_atomic_exchange(p, v, mo)  __atomic_exchange_n((p), (v), (mo))
#define wh_atomic_cas(p, expected, desired, mo_ok, mo_fail) \
    __atomic_compare_exchange_n((p), (expected), (desired), false, (mo_ok), (mo_fail))
/* ThreadSanitizer does not model a stand-alone fence: the portable core uses
    * ordered read-modify-writes instead and keeps wh_fence() for the few places
    * that must order plain data (e.g. before publishing a block). */
#define wh_fence()                  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define wh_fence_acquire()          __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define wh_atomic_add_relaxed(p, v) ((void)__atomic_fetch_add((p), (v), __ATOMIC_RELAXED))
#define wh__atomic_or64(p, v, mo)   __atomic_fetch_or((p), (v), (mo))
#define wh__atomic_and64(p, v, mo)  __atomic_fetch_and((p), (v), (mo))
#define wh__atomic_add64(p, v, mo)  __atomic_fetch_add((p), (v), (mo))
/* GCC has no __atomic_fetch_max before 13: a CAS loop, lock-free like the GPU's. */
#define wh__cpu_fetch_max(p, v, mo)                                                                                    \
    __extension__({                                                                                                    \
        __typeof__(*(p)) wh__old = __atomic_load_n((p), __ATOMIC_RELAXED);                                             \
        __typeof__(*(p)) wh__v = (v);                                                                                  \
        while (wh__old < wh__v && !__atomic_compare_exchange_n((p), &wh__old, wh__v, false, (mo), __ATOMIC_RELAXED)) { \
        }                                                                                                              \
        wh__old;                                                                                                       \
    })
#endif

/* ---- bit operations (64- and 32-bit) -------------------------------------- */
/* ffs: 1-based index of the lowest set bit, 0 when x == 0 (as ffsll). */
WH_INLINE WH_HOST_DEVICE int wh_ffs64(uint64_t x) {
#if WH_ON_GPU
    return __ffsll((long long)x);
#else
    return __builtin_ffsll((long long)x);
#endif
}
WH_INLINE WH_HOST_DEVICE int wh_ffs32(uint32_t x) {
#if WH_ON_GPU
    return __ffs((int)x);
#else
    return __builtin_ffs((int)x);
#endif
}
WH_INLINE WH_HOST_DEVICE int wh_popc64(uint64_t x) {
#if WH_ON_GPU
    return __popcll(x);
#else
    return __builtin_popcountll(x);
#endif
}
WH_INLINE WH_HOST_DEVICE int wh_popc32(uint32_t x) {
#if WH_ON_GPU
    return __popc(x);
#else
    return __builtin_popcount(x);
#endif
}
/* clz: leading zeros; 64 (32) for zero, unlike the undefined __builtin_clz(0). */
WH_INLINE WH_HOST_DEVICE int wh_clz64(uint64_t x) {
#if WH_ON_GPU
    return __clzll((long long)x);
#else
    return x ? __builtin_clzll(x) : 64;
#endif
}
WH_INLINE WH_HOST_DEVICE int wh_clz32(uint32_t x) {
#if WH_ON_GPU
    return __clz((int)x);
#else
    return x ? __builtin_clz(x) : 32;
#endif
}
/* Rotations by any n; n is taken modulo the width. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_rotr64(uint64_t x, unsigned n) {
    n &= 63u;
    return n ? (x >> n) | (x << (64u - n)) : x;
}
WH_INLINE WH_HOST_DEVICE uint64_t wh_rotl64(uint64_t x, unsigned n) {
    n &= 63u;
    return n ? (x << n) | (x >> (64u - n)) : x;
}
WH_INLINE WH_HOST_DEVICE uint32_t wh_rotr32(uint32_t x, unsigned n) {
#if WH_ON_GPU
    return __funnelshift_r(x, x, n);
#else
    n &= 31u;
    return n ? (x >> n) | (x << (32u - n)) : x;
#endif
}
WH_INLINE WH_HOST_DEVICE uint32_t wh_rotl32(uint32_t x, unsigned n) {
#if WH_ON_GPU
    return __funnelshift_l(x, x, n);
#else
    n &= 31u;
    return n ? (x << n) | (x >> (32u - n)) : x;
#endif
}
/* The high 32 bits of the 64-bit product: a division by a constant d is a
 * mulhi by its reciprocal ceil(2^32 / d), exact for small enough dividends
 * (heap/core.h: wh__slab_spp_div). */
WH_INLINE WH_HOST_DEVICE uint32_t wh_mulhi32(uint32_t a, uint32_t b) {
#if WH_ON_GPU
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}
/* Index (0-based) of the k-th set bit of x (k counts from 0); 64 if x has fewer.
 * Used to hand each lane its slot out of a leader's coalesced reservation. */
WH_INLINE WH_HOST_DEVICE int wh_nth_set_bit64(uint64_t x, unsigned k) {
    for (unsigned i = 0; i < k && x; ++i) x &= x - 1; /* drop the k lowest */
    return x ? wh_ffs64(x) - 1 : 64;
}
/* floor(log2(x)) for x > 0; -1 for 0. */
WH_INLINE WH_HOST_DEVICE int wh_log2_64(uint64_t x) { return 63 - wh_clz64(x); }

/* ---- warps ----------------------------------------------------------------- *
 * On the GPU these are the *_sync intrinsics; the caller passes the mask of
 * lanes that take part, derived from a point where those lanes are known to be
 * converged (wh_active_mask() at function entry, or wh_match_any() on a key).
 * On the CPU a warp has one lane, so coalescing code runs with one participant. */
#if WH_ON_GPU
#define WH_WARP_SIZE 32
#else
#define WH_WARP_SIZE 1
#endif

WH_INLINE WH_HOST_DEVICE unsigned wh_lane_id(void) {
#if WH_ON_GPU
    unsigned id;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
    return id;
#else
    return 0;
#endif
}
WH_INLINE WH_HOST_DEVICE uint32_t wh_active_mask(void) {
#if WH_ON_GPU
    return __activemask();
#else
    return 1u;
#endif
}
/* The lanes of mask whose pred holds.  CUDA sets the bit of every active
 * lane that runs the vote, so lanes of other groups running the same
 * ballot beside this one could show in the result: it keeps mask's alone. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_ballot(uint32_t mask, bool pred) {
#if WH_ON_GPU
    return __ballot_sync(mask, pred) & mask;
#else
    (void)mask;
    return pred ? 1u : 0u;
#endif
}
WH_INLINE WH_HOST_DEVICE uint32_t wh_shfl32(uint32_t mask, uint32_t v, unsigned src) {
#if WH_ON_GPU
    return __shfl_sync(mask, v, (int)src);
#else
    (void)mask;
    (void)src;
    return v;
#endif
}
WH_INLINE WH_HOST_DEVICE uint64_t wh_shfl64(uint32_t mask, uint64_t v, unsigned src) {
#if WH_ON_GPU
    return __shfl_sync(mask, (unsigned long long)v, (int)src);
#else
    (void)mask;
    (void)src;
    return v;
#endif
}
/* Lanes of mask whose key equals mine (mine included). */
WH_INLINE WH_HOST_DEVICE uint32_t wh_match_any64(uint32_t mask, uint64_t key) {
#if WH_ON_GPU
    return __match_any_sync(mask, (unsigned long long)key);
#else
    (void)mask;
    (void)key;
    return 1u;
#endif
}
/* OR of v over the lanes of mask (every one of them calls). */
WH_INLINE WH_HOST_DEVICE uint64_t wh_reduce_or64(uint32_t mask, uint64_t v) {
#if WH_ON_GPU && __CUDA_ARCH__ >= 800
    uint32_t lo = __reduce_or_sync(mask, (uint32_t)v), hi = __reduce_or_sync(mask, (uint32_t)(v >> 32));
    return (uint64_t)hi << 32 | lo;
#elif WH_ON_GPU
    uint64_t r = 0;
    for (uint32_t m = mask; m; m &= m - 1u) r |= __shfl_sync(mask, (unsigned long long)v, __ffs((int)m) - 1);
    return r;
#else
    (void)mask;
    return v;
#endif
}
/* Leader of a group: its lowest lane. */
WH_INLINE WH_HOST_DEVICE unsigned wh_leader(uint32_t group) { return (unsigned)(wh_ffs32(group) - 1); }
WH_INLINE WH_HOST_DEVICE bool wh_is_leader(uint32_t group) { return wh_lane_id() == wh_leader(group); }
/* My rank within group: how many lanes of group are below me. */
WH_INLINE WH_HOST_DEVICE unsigned wh_rank(uint32_t group) {
    return (unsigned)wh_popc32(group & ((1u << wh_lane_id()) - 1u));
}
WH_INLINE WH_HOST_DEVICE void wh_syncwarp(uint32_t mask) {
#if WH_ON_GPU
    __syncwarp(mask);
#else
    (void)mask;
#endif
}

/* ---- waiting --------------------------------------------------------------- *
 * Back off inside a bounded retry loop: lets the lane (or thread) that holds
 * what we wait for run.  attempt is the retry count so far.
 *
 * GPU: a sleep of 32 ns << attempt, at most 2 us; the warp waited for is
 * resident and runs meanwhile.  CPU backend: the thread waited for shares a
 * few cores with its waiters and with whatever else the machine runs, and may
 * be preempted; it runs again only once a waiter leaves the CPU.  A yield
 * does not leave it: the yielder stays runnable, the holder may sit in
 * another core's runqueue, and beside a busy process the yield hands that
 * process a whole time slice.  So the first WH__CPU_SPINS attempts spin (a
 * holder that runs is about to let go), and later ones sleep, 1 us <<
 * (attempt - WH__CPU_SPINS): up to WH__CPU_NAP_NS here, where the caller
 * counts its tries and a count of long sleeps would be a long wait (the
 * kernel's timer slack makes even the shortest sleep some 50 us), up to
 * WH__CPU_WAIT_NAP_NS in wh_wait, whose bound is time. */
#define WH__CPU_SPINS       4u
#define WH__CPU_NAP_NS      32000u
#define WH__CPU_WAIT_NAP_NS 1000000u
#if !WH_ON_GPU
WH_EXTERN_C_BEGIN
WH_API void wh__cpu_backoff(unsigned attempt, uint32_t max_ns);
WH_API uint64_t wh__cpu_now_ns(void); /* the monotonic clock */
WH_EXTERN_C_END
#endif
WH_INLINE WH_HOST_DEVICE void wh_backoff(unsigned attempt) {
#if WH_ON_GPU
    unsigned ns = 32u << (attempt < 6u ? attempt : 6u);
    __nanosleep(ns);
#else
    wh__cpu_backoff(attempt, WH__CPU_NAP_NS);
#endif
}

/* A bounded wait for what another thread (warp) is about to do, where giving
 * up is a failure the caller reports:
 *     for (wh_wait w = wh_wait_begin(tries); wh_wait_more(&w); wh_wait_backoff(&w, cap))
 *         if (ready) return true;
 *     return false;
 * GPU: tries looks, wh_backoff(min(n, cap)) after the n-th.  CPU backend: a
 * count of looks would stretch with the sleeps (a bound of 2^22 tries, hours),
 * and a bound that trips because the scheduler ran something else is a
 * failure that depends on the machine's load; so the bound is time there,
 * WH__CPU_TRY_NS a try (the GPU takes 2 us a try at its longest backoff),
 * and the wait gives up only after a look made once that time has passed (a
 * waiter preempted past it looks again first). */
#define WH__CPU_TRY_NS 1000u
typedef struct wh_wait {
    uint32_t n;     /* backoffs so far                                                */
    uint32_t tries; /* looks in all; CPU backend: 0 once the last look has failed     */
    uint64_t end;   /* CPU backend: when the time is spent (ns), UINT64_MAX once past */
} wh_wait;
WH_INLINE WH_HOST_DEVICE wh_wait wh_wait_begin(uint32_t tries) {
    wh_wait w = {0u, tries, 0u};
    return w;
}
WH_INLINE WH_HOST_DEVICE bool wh_wait_more(const wh_wait *w) {
#if WH_ON_GPU
    return w->n < w->tries;
#else
    return w->tries != 0u;
#endif
}
WH_INLINE WH_HOST_DEVICE void wh_wait_backoff(wh_wait *w, unsigned cap) {
#if WH_ON_GPU
    wh_backoff(w->n < cap ? w->n : cap);
    w->n++;
#else
    (void)cap;                  /* the GPU's: the CPU's sleeps grow regardless */
    if (w->end == UINT64_MAX) { /* the look after the time failed too */
        w->tries = 0u;
        return;
    }
    if (w->n == 0u) w->end = wh__cpu_now_ns() + (uint64_t)w->tries * WH__CPU_TRY_NS;
    wh__cpu_backoff(w->n, WH__CPU_WAIT_NAP_NS);
    if (w->n < 64u) w->n++;
    if (wh__cpu_now_ns() >= w->end) w->end = UINT64_MAX;
#endif
}

/* A cheap counter-based hash (splitmix64 finaliser): random seeds that do not
 * depend on scheduling, and rotation offsets for bitmap searches. */
WH_INLINE WH_HOST_DEVICE uint64_t wh_hash64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A number in [0, n) from the high half of a hash: a multiply, not a 64-bit
 * remainder, which the GPU computes in a called routine of a hundred
 * instructions (whose registers add to its caller's). */
WH_INLINE WH_HOST_DEVICE uint32_t wh__below(uint64_t seed, uint32_t n) {
    return (uint32_t)(((seed >> 32) * (uint64_t)n) >> 32);
}

#endif /* WARPHEAP_PLATFORM_H */
