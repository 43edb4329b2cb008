/* SPDX-License-Identifier: MIT */
/* Fault injection for the error-path tests: once armed with n, the n-th call
 * from then on that asks the driver or the host for a structure's memory (a
 * pool's arena, piece or event; a heap's, object heap's or arena's memory;
 * their tables) fails as if it had been refused -- and with `sticky`, every
 * call after it too, as from a device that has run out.  Each such call site
 * asks wh__fault() first.  One counter for the process; disarmed by default. */
#include "warpheap/warpheap.h"

static long armed, calls;
static bool sticky_;

void wh__fault_arm(long n, bool sticky) {
    __atomic_store_n(&calls, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&sticky_, sticky, __ATOMIC_SEQ_CST);
    __atomic_store_n(&armed, n, __ATOMIC_SEQ_CST);
}

bool wh__fault(void) {
    long n = __atomic_load_n(&armed, __ATOMIC_RELAXED);
    if (n <= 0) return false;
    long k = __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
    return k == n || (k > n && __atomic_load_n(&sticky_, __ATOMIC_RELAXED));
}
