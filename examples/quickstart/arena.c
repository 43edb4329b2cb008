/* SPDX-License-Identifier: MIT */
/* Stream arena: an allocation command reads the size a step wrote; use the block, free it, status without a sync. */
#include "warpheap/arena.h"
#include <stdio.h>

static int fail(const char *what) { fprintf(stderr, "%s: %s\n", what, wh_last_error()); return 1; }

int main(void) {   /* CPU backend: commands run at once, in program order.  On CUDA, count and slot are */
    wh_arena *a;   /* device memory, the steps are kernels on stream s and no call here waits for them. */
    wh_arena_config cfg = {.bytes = 1 << 20, .backend = WH_ARENA_CPU};
    wh_arena_stats st; size_t count; wh_handle slot; wh_stream s = NULL; double sum = 0;
    if (wh_arena_create(&a, &cfg) != WH_OK) return fail("create");
    count = 1000;                                             /* step 1: the producer decides the size */
    if (wh_arena_alloc_strided_async(a, &count, sizeof(float), &slot, s) != WH_OK) return fail("enqueue");
    float *x = (float *)wh_handle_ptr(&slot);                 /* step 2 reads the slot: NULL on failure */
    for (size_t i = 0; x && i < count; ++i) sum += x[i] = 0.5f * (float)i;
    if (wh_arena_free_async(a, &slot, s) != WH_OK) return fail("enqueue");   /* slot: the null handle again */
    wh_status e = wh_arena_status(a);                         /* the first command that failed; never syncs */
    if (e != WH_OK) { fprintf(stderr, "arena: %s\n", wh_strerror(e)); return 1; }
    if (wh_arena_stats_get(a, &st) != WH_OK) return fail("stats");          /* never syncs either */
    printf("arena: %zu floats, sum %.1f; %llu allocation, %llu free, %llu bytes in use\n", count, sum,
           (unsigned long long)st.allocs, (unsigned long long)st.frees, (unsigned long long)st.used_bytes);
    if (wh_arena_destroy(a) != WH_OK) return fail("destroy");
    return sum == 249750.0 && st.allocs == 1 && st.frees == 1 && st.used_bytes == 0 ? 0 : 1;
}
