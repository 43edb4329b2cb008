/* SPDX-License-Identifier: MIT */
/* The compile-time option WH_BLOCKS_KINDS (core/blocks.h), as a kernel that
 * only drives ring arenas uses it: this translation unit's inline code
 * handles LIST cores only.  A RING arena on a LIST core works through that
 * code as through the full build -- allocation and free by the lanes of a
 * "warp", a reservation and its commit, the heap walk clean -- and a TLSF
 * core driven by the same code stops the program (abort on the CPU backend,
 * trap on the GPU) instead of running a wrong index: checked in a child
 * process.  The block core of seed gpu-executed-heap.txt, "Heap". */
#define WH_BLOCKS_KINDS (1u << WH_BLOCKS_LIST)
#include "warpheap/arena.h"
#include "wh_test.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static wh_arena *make(wh_blocks_kind kind, wh_arena_policy policy) {
    wh_arena *a = NULL;
    wh_arena_config cfg = {
        .bytes = 1 << 20, .max_blocks = 64, .index = kind, .backend = WH_ARENA_CPU, .policy = policy};
    CHECK(wh_arena_create(&a, &cfg) == WH_OK);
    return a;
}

static void test_list_core(void) {
    enum { N = 40 };
    wh_arena *a = make(WH_BLOCKS_LIST, WH_ARENA_RING);
    if (!a) return;
    wh_arena_ref r = wh_arena_device(a);
    wh_handle h[N];
    for (int i = 0; i < N; ++i) {
        h[i] = wh_arena_alloc_warp(r, 1u + (uint64_t)i * 7u, 16);
        CHECK(h[i].ptr != 0);
    }
    for (int i = 0; i < N; ++i) /* no two blocks overlap */
        for (int j = i + 1; j < N; ++j)
            CHECK(h[i].ptr + (1u + (uint64_t)i * 7u) * 16u <= h[j].ptr ||
                  h[j].ptr + (1u + (uint64_t)j * 7u) * 16u <= h[i].ptr);
    for (int i = 0; i < N; i += 2) CHECK(wh_arena_free_warp(r, &h[i]) == WH_OK && h[i].ptr == 0);
    wh_arena_span ring[2];
    memset(ring, 0, sizeof ring);
    for (uint32_t f = 0; f < 6; ++f) { /* reserve, then commit: the plan's fast path after the first */
        CHECK(wh_arena_ring_reserve_thread(r, 500 + f, 36, &ring[f % 2], &ring[(f + 1) % 2]) == WH_OK);
        wh_arena_commit c = {.mode = WH_ARENA_COMMIT_NOW, .ring = ring, .k = 2, .first = f % 2};
        CHECK(wh_arena_ring_commit(r, &c) == WH_OK && ring[f % 2].count == 500 + f);
    }
    for (int i = 1; i < N; i += 2) CHECK(wh_arena_free_warp(r, &h[i]) == WH_OK);
    wh_blocks_report rep;
    CHECK(wh_arena_check(a, &rep) == WH_OK && rep.used == 2); /* the two spans */
    CHECK(wh_arena_status(a) == WH_OK);
    for (int k = 0; k < 2; ++k)
        CHECK(wh_arena_free_batch_async(a, ring[k].part, ring[k].part[1].ptr ? 2u : 1u, NULL) == WH_OK);
    CHECK(wh_arena_destroy(a) == WH_OK);
}

/* A kind left out: the inline code stops the program, never runs LIST's
 * code on a TLSF core. */
static void test_kind_left_out(void) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        wh_arena *a = make(WH_BLOCKS_TLSF, WH_ARENA_BEST_FIT);
        wh_handle h = wh_arena_alloc_warp(wh_arena_device(a), 10, 16); /* TLSF's find: left out */
        _exit(h.ptr ? 2 : 3);                                          /* not reached */
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

int main(void) {
    test_list_core();
    test_kind_left_out();
    return wh_test_finish("test_arena_kinds");
}
