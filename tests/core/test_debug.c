/* SPDX-License-Identifier: MIT */
/* WH_ASSERT (platform.h): in a WH_DEBUG build a broken invariant stops the
 * program with a message naming it; otherwise the assertion is not even
 * evaluated.  Each case runs in a child process. */
#include "warpheap/bitmap.h"
#include "warpheap/core/blocks.h"
#include "wh_test.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t words[64];

/* A bit past the end of a bitmap. */
static void bit_past_end(void) {
    wh_bitmap bm;
    CHECK(wh_bitmap_init_host(&bm, words, 100, false) == WH_OK);
    (void)wh_bitmap_get(&bm, 100);
}

/* Boundary tags that do not meet: a block whose neighbour does not follow it. */
static void tags_apart(void) {
    static uint64_t mem[4096];
    wh_blocks *c = wh_blocks_init(mem, sizeof mem, WH_BLOCKS_TLSF, 1, 16, 64);
    CHECK(c != NULL);
    (void)wh_blocks_add_arena(c, 0, 1u << 20, 0);
    uint32_t a = wh_blocks_alloc(c, 4096, 0), b = wh_blocks_alloc(c, 4096, 0);
    CHECK(a != WH_BLOCK_NONE && b != WH_BLOCK_NONE);
    wh_blocks_desc(c)[b].addr += 64; /* corrupt: a gap between a and b */
    (void)wh_blocks_free(c, b, 0);
    (void)wh_blocks_free(c, a, 0); /* merges a with b */
}

/* Runs f in a child: true if it stopped on a failed assertion (SIGABRT). */
static bool aborts(void (*f)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        f();
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "WH_ASSERT: on in WH_DEBUG builds, not evaluated otherwise.");
    int evaluated = 0;
    WH_ASSERT(++evaluated > 0);
    printf("WH_DEBUG %d: assertions %s\n", WH_DEBUG, WH_DEBUG ? "checked" : "not evaluated");
    CHECK(evaluated == (WH_DEBUG ? 1 : 0));
    CHECK(aborts(bit_past_end) == (WH_DEBUG != 0));
    CHECK(aborts(tags_apart) == (WH_DEBUG != 0));
    return wh_test_finish("test_debug");
}
