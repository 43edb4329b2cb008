/* Stream arena under concurrency on the CPU backend: pthreads allocate and
 * free directly (wh_arena_alloc_warp / wh_arena_free_warp: the lock word and
 * the single-threaded core behind it) with the same loop the GPU test runs,
 * while the main thread enqueues commands on slots of its own.  Then the
 * overlap oracle and the heap walk.  Runs under ThreadSanitizer in CI. */
#include "arena_oracle.h"
#include "wh_test.h"

enum { K = 64 };

typedef struct job {
    wh_arena *a;
    uint32_t steps;
    wh_handle *slots;
    uint64_t *bytes, *strides;
    wh_fuzz_counts *counts;
} job;

static void run(unsigned t, void *p) {
    job *j = (job *)p;
    wh_fuzz_thread(wh_arena_device(j->a), 1u, t, K, j->steps, 65536, j->slots, j->bytes, j->strides, &j->counts[t]);
}

int main(int argc, char **argv) {
    unsigned threads = (unsigned)wh_arg_int(argc, argv, "--threads", 8);
    uint32_t steps = (uint32_t)wh_arg_int(argc, argv, "--steps", 20000);
    size_t region = 64u << 20;
    wh_arena *a = NULL;
    wh_arena_config cfg = {.bytes = region, .max_blocks = 1u << 16, .backend = WH_ARENA_CPU};
    if (wh_arena_create(&a, &cfg) != WH_OK) { fprintf(stderr, "%s\n", wh_last_error()); return 1; }
    uint32_t n = threads * K;
    wh_handle *slots = (wh_handle *)calloc(n, sizeof *slots);
    uint64_t *bytes = (uint64_t *)calloc(n, sizeof *bytes), *strides = (uint64_t *)calloc(n, sizeof *strides);
    wh_fuzz_counts *counts = (wh_fuzz_counts *)calloc(threads, sizeof *counts);
    job j = {a, steps, slots, bytes, strides, counts};
    double t0 = wh_now_seconds();
    wh_run_threads(threads, run, &j);
    double dt = wh_now_seconds() - t0;

    wh_fuzz_counts sum = {0, 0, 0, 0};
    for (unsigned t = 0; t < threads; ++t) {
        sum.allocs += counts[t].allocs;
        sum.frees += counts[t].frees;
        sum.failed_allocs += counts[t].failed_allocs;
        sum.failed_frees += counts[t].failed_frees;
    }
    uint64_t live = 0;
    CHECK_EQ_U64(wh_arena_oracle(slots, bytes, strides, n, (uintptr_t)wh_arena_base(a), region, &live, NULL), 0);
    wh_blocks_report rep;
    wh_status st = wh_arena_check(a, &rep);
    CHECK(st == WH_OK);
    if (st != WH_OK) fprintf(stderr, "%s\n", wh_last_error());
    CHECK_EQ_U64(rep.used, live);
    CHECK_EQ_U64(sum.allocs - sum.frees, live);
    CHECK_EQ_U64(sum.failed_frees, 0);
    CHECK_EQ_U64(sum.failed_allocs, 0);                  /* 64 MiB holds 512 blocks of <= 64 KiB */
    CHECK(wh_arena_status(a) == WH_OK);
    wh_arena_free_batch_async(a, slots, n, NULL);
    CHECK(wh_arena_check(a, &rep) == WH_OK && rep.used == 0 && rep.free == 1);
    printf("arena stress: %u threads, %llu allocs + %llu frees in %.3f s\n", threads,
           (unsigned long long)sum.allocs, (unsigned long long)sum.frees, dt);
    wh_arena_destroy(a);
    free(slots); free(bytes); free(strides); free(counts);
    return wh_test_finish("test_arena_stress");
}
