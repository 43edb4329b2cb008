/* SPDX-License-Identifier: MIT */
/* Checks of the platform layer that hold on both backends.  Returns the number
 * of failed checks; the CPU test calls it directly, the GPU test from a kernel,
 * so each operation is verified by the same expectations on both. */
#ifndef WH_PLATFORM_CHECKS_H
#define WH_PLATFORM_CHECKS_H

#include "warpheap/platform.h"

#define PC_CHECK(c)                            \
    do {                                       \
        if (!(c))                              \
            fails |= 1u << (line_bit++ & 31u); \
        else                                   \
            line_bit++;                        \
    } while (0)

/* words: scratch memory, 4 x uint64_t + 4 x uint32_t, owned by the caller. */
WH_INLINE WH_HOST_DEVICE uint32_t wh_platform_checks(uint64_t *w64, uint32_t *w32) {
    uint32_t fails = 0, line_bit = 0;
    /* bit operations */
    PC_CHECK(wh_ffs64(0) == 0);
    PC_CHECK(wh_ffs64(1) == 1);
    PC_CHECK(wh_ffs64(1ull << 63) == 64);
    PC_CHECK(wh_ffs32(0x80u) == 8);
    PC_CHECK(wh_popc64(~0ull) == 64 && wh_popc64(0x5ull) == 2);
    PC_CHECK(wh_popc32(0xF0F0u) == 8);
    PC_CHECK(wh_clz64(0) == 64 && wh_clz64(1) == 63 && wh_clz64(~0ull) == 0);
    PC_CHECK(wh_clz32(0) == 32 && wh_clz32(1) == 31);
    PC_CHECK(wh_rotr64(0x1ull, 1) == (1ull << 63) && wh_rotl64(1ull << 63, 1) == 1ull);
    PC_CHECK(wh_rotr64(0x1234ull, 64) == 0x1234ull && wh_rotl64(0xF0ull, 68) == 0xF00ull);
    PC_CHECK(wh_rotr32(1u, 1) == 0x80000000u && wh_rotl32(0x80000000u, 1) == 1u);
    PC_CHECK(wh_nth_set_bit64(0xB4ull, 0) == 2 && wh_nth_set_bit64(0xB4ull, 3) == 7 &&
             wh_nth_set_bit64(0xB4ull, 4) == 64);
    PC_CHECK(wh_log2_64(1) == 0 && wh_log2_64(4096) == 12 && wh_log2_64(4097) == 12);
    PC_CHECK(wh_hash64(1) != wh_hash64(2));
    /* wh__below: in range at both ends, and every value of a small range met */
    PC_CHECK(wh__below(~0ull, 7u) == 6u && wh__below(0ull, 7u) == 0u && wh__below(~0ull, 1u) == 0u);
    PC_CHECK(wh__below(~0ull, 0xFFFFFFFFu) == 0xFFFFFFFEu && wh__below(1ull << 63, 10u) == 5u);
    uint32_t met = 0;
    for (uint64_t i = 0; i < 256u; ++i) {
        uint32_t v = wh__below(wh_hash64(i), 13u);
        met |= v < 13u ? 1u << v : 1u << 31;
    }
    PC_CHECK(met == (1u << 13) - 1u);
    /* 64-bit atomics: each returns the old value */
    w64[0] = 5;
    PC_CHECK(wh_atomic_load(&w64[0], WH_ACQUIRE) == 5);
    wh_atomic_store(&w64[0], 7ull, WH_RELEASE);
    PC_CHECK(wh_atomic_fetch_add(&w64[0], 3ull, WH_ACQ_REL) == 7 && w64[0] == 10);
    PC_CHECK(wh_atomic_fetch_sub(&w64[0], 4ull, WH_RELAXED) == 10 && w64[0] == 6);
    PC_CHECK(wh_atomic_fetch_or(&w64[0], 1ull << 40, WH_SEQ_CST) == 6 && w64[0] == ((1ull << 40) | 6));
    PC_CHECK(wh_atomic_fetch_and(&w64[0], ~(1ull << 40), WH_ACQ_REL) == ((1ull << 40) | 6) && w64[0] == 6);
    PC_CHECK(wh_atomic_fetch_xor(&w64[0], 3ull, WH_ACQ_REL) == 6 && w64[0] == 5);
    PC_CHECK(wh_atomic_fetch_max(&w64[0], 9ull, WH_ACQ_REL) == 5 && w64[0] == 9);
    PC_CHECK(wh_atomic_fetch_max(&w64[0], 2ull, WH_ACQ_REL) == 9 && w64[0] == 9);
    PC_CHECK(wh_atomic_exchange(&w64[0], 11ull, WH_ACQ_REL) == 9 && w64[0] == 11);
    uint64_t e64 = 11;
    PC_CHECK(wh_atomic_cas(&w64[0], &e64, 12ull, WH_ACQ_REL, WH_RELAXED) && w64[0] == 12);
    e64 = 3;
    PC_CHECK(!wh_atomic_cas(&w64[0], &e64, 13ull, WH_ACQ_REL, WH_RELAXED) && e64 == 12 && w64[0] == 12);
    /* the heap's 64-bit or, and and add on global memory, in every order */
    w64[1] = 6;
    PC_CHECK(wh__atomic_or64(&w64[1], 1ull << 40, WH_RELAXED) == 6 &&
             wh__atomic_or64(&w64[1], 1ull, WH_RELEASE) == ((1ull << 40) | 6) &&
             wh__atomic_or64(&w64[1], 8ull, WH_SEQ_CST) == ((1ull << 40) | 7) && w64[1] == ((1ull << 40) | 15));
    PC_CHECK(wh__atomic_and64(&w64[1], ~(1ull << 40), WH_ACQ_REL) == ((1ull << 40) | 15) &&
             wh__atomic_and64(&w64[1], ~1ull, WH_ACQUIRE) == 15 && w64[1] == 14);
    PC_CHECK(wh__atomic_add64(&w64[1], 1ull << 33, WH_ACQUIRE) == 14 &&
             wh__atomic_add64(&w64[1], ~0ull, WH_RELAXED) == (1ull << 33) + 14 && w64[1] == (1ull << 33) + 13);
    /* 32-bit atomics */
    w32[0] = 1;
    PC_CHECK(wh_atomic_fetch_add(&w32[0], 2u, WH_RELAXED) == 1 && w32[0] == 3);
    PC_CHECK(wh_atomic_fetch_or(&w32[0], 0x10u, WH_RELAXED) == 3 && w32[0] == 0x13);
    PC_CHECK(wh_atomic_fetch_and(&w32[0], 0x10u, WH_RELAXED) == 0x13 && w32[0] == 0x10);
    PC_CHECK(wh_atomic_fetch_xor(&w32[0], 0x11u, WH_RELAXED) == 0x10 && w32[0] == 0x01);
    PC_CHECK(wh_atomic_exchange(&w32[0], 42u, WH_RELAXED) == 1 && wh_atomic_load(&w32[0], WH_RELAXED) == 42);
    uint32_t e32 = 42;
    PC_CHECK(wh_atomic_cas(&w32[0], &e32, 43u, WH_SEQ_CST, WH_SEQ_CST) && w32[0] == 43);
    wh_fence();
    wh_fence_acquire();
    /* bounded waits: no look for 0 tries; for 4, four looks on the GPU, and on
     * the CPU looks for 4 us and one more after them */
    unsigned looks = 0;
    for (wh_wait w = wh_wait_begin(0u); wh_wait_more(&w); wh_wait_backoff(&w, 0u)) ++looks;
    PC_CHECK(looks == 0);
    for (wh_wait w = wh_wait_begin(4u); wh_wait_more(&w); wh_wait_backoff(&w, 0u)) ++looks;
    PC_CHECK(WH_ON_GPU ? looks == 4 : looks >= 2);
    return fails;
}

#endif
