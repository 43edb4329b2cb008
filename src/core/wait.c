/* SPDX-License-Identifier: MIT */
/* The CPU backend's waiting (platform.h: wh_backoff, wh_wait): spin, then
 * sleep in growing steps; and the clock that bounds a wait in time. */
#include "warpheap/warpheap.h"

#include <time.h>

static inline void wh__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void wh__cpu_backoff(unsigned attempt, uint32_t max_ns) {
    if (attempt < WH__CPU_SPINS) {
        for (unsigned k = 0; k < 1u << attempt; ++k) wh__cpu_relax();
        return;
    }
    unsigned shift = attempt - WH__CPU_SPINS;
    uint64_t ns = shift < 20u ? 1000ull << shift : max_ns;
    struct timespec nap = {0, (long)(ns < max_ns ? ns : max_ns)};
    nanosleep(&nap, NULL);
}

uint64_t wh__cpu_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
