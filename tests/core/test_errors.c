/* SPDX-License-Identifier: MIT */
/* Errors that name the real cause, in every part (CPU backend):
 *  - wh_last_error() is "" after a call that succeeded and describes the
 *    calling thread's last failure otherwise;
 *  - a failed call says what was wrong and with which limit;
 *  - destroying a pool, arena, object heap or tracked device heap that still
 *    has live allocations says how many and how many bytes (WH_ERR_IN_USE),
 *    and releases everything all the same;
 *  - a build with CUDA on a machine without a usable GPU refuses the
 *    automatic backend instead of handing out host memory. */
#include "warpheap/arena.h"
#include "warpheap/heap.h"
#include "warpheap/pool.h"
#include "warpheap/soa.h"
#include "wh_test.h"

#define EMPTY() CHECK(wh_last_error()[0] == '\0')
#define SAYS(text)                                                                                  \
    do {                                                                                            \
        CHECK(strstr(wh_last_error(), text) != NULL);                                               \
        if (!strstr(wh_last_error(), text)) fprintf(stderr, "  last error: %s\n", wh_last_error()); \
    } while (0)

static void pool_errors(void) {
    wh_pool *p = NULL;
    wh_pool_config c = {.backend = WH_POOL_CPU, .max_bytes = 64u << 20, .growth = WH_POOL_GROW_ARENAS};
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    EMPTY();
    void *ptr = NULL;
    CHECK(wh_pool_try_alloc(p, 0, NULL, NULL, &ptr) == WH_ERR_INVALID_ARGUMENT);
    SAYS("size 0");
    CHECK((ptr = wh_pool_alloc(p, 100, NULL)) != NULL);
    EMPTY();                                               /* a success clears it */
    CHECK(wh_pool_alloc_aligned(p, 100, 0, NULL) == NULL); /* alignment 0 */
    SAYS("alignment 0");
    CHECK(wh_pool_alloc_aligned(p, 100, (size_t)1 << 40, NULL) == NULL);
    SAYS("largest alignment");
    CHECK(wh_pool_alloc(p, 1u << 30, NULL) == NULL); /* past max_bytes */
    SAYS("67108864");
    int local;
    CHECK(wh_pool_free(p, &local, NULL) == WH_ERR_FOREIGN_POINTER);
    CHECK(wh_pool_free(p, ptr, NULL) == WH_OK);
    EMPTY();
    CHECK(wh_pool_free(p, ptr, NULL) == WH_ERR_DOUBLE_FREE);
    void *a = wh_pool_alloc(p, 1000, NULL), *b = wh_pool_alloc(p, 3000, NULL);
    CHECK(a && b);
    CHECK(wh_pool_destroy(p) == WH_ERR_IN_USE); /* two left: named, released */
    SAYS("2 live allocations");
    CHECK(wh_pool_create(&p, &c) == WH_OK);
    CHECK(wh_pool_destroy(p) == WH_OK);
    EMPTY();
    /* the host refuses (every request from now on, as a full machine would):
     * the message says so and how much, not "exhausted" with a cap of 0 */
    wh_pool_config h = {.backend = WH_POOL_CPU, .growth = WH_POOL_GROW_ARENAS};
    CHECK(wh_pool_create(&p, &h) == WH_OK);
    wh__fault_arm(1, true);
    CHECK(wh_pool_alloc(p, (size_t)5 << 30, NULL) == NULL);
    wh__fault_arm(0, false);
    SAYS("the host refused 5368709120 B");
    SAYS("cap none");
    CHECK(wh_pool_destroy(p) == WH_OK);
}

static void arena_errors(void) {
    wh_arena *a = NULL;
    CHECK(wh_arena_status(NULL) == WH_ERR_INVALID_ARGUMENT);
    SAYS("NULL");
    wh_arena_config c = {.bytes = 1u << 20, .backend = WH_ARENA_CPU};
    CHECK(wh_arena_create(&a, &c) == WH_OK);
    EMPTY();
    size_t n = 1000;
    wh_handle h;
    CHECK(wh_arena_alloc_async(a, &n, &h, NULL) == WH_OK && h.ptr);
    EMPTY();
    CHECK(wh_arena_destroy(a) == WH_ERR_IN_USE);
    SAYS("1 live allocation");
    wh_arena_config big = {.bytes = SIZE_MAX, .backend = WH_ARENA_CPU};
    CHECK(wh_arena_create(&a, &big) == WH_ERR_TOO_LARGE);
    SAYS("more than an arena addresses");
}

/* clang-format off */
#define E_FIELDS(F) F(uint64_t, v)
/* clang-format on */
WH_SOA_CLASS(E, 0, E_FIELDS)

static void soa_errors(void) {
    CHECK(wh_soa_destroy(NULL) == WH_ERR_INVALID_ARGUMENT);
    SAYS("soa");
    wh_soa s;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(E)};
    wh_soa_config c = {1u << 20, t, 1, false, 2, NULL, false};
    CHECK(wh_soa_create(&s, &c) == WH_OK);
    EMPTY();
    uint64_t bad = 0;
    CHECK(wh_soa_check(NULL, &bad) == WH_ERR_INVALID_ARGUMENT);
    SAYS("soa");
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    EMPTY();
    for (int i = 0; i < 3; ++i) CHECK(wh_soa_alloc(&s, E_TYPE) != 0);
    CHECK(wh_soa_destroy(&s) == WH_ERR_IN_USE);
    SAYS("3 live objects");
}

static void heap_errors(void) {
    wh_heap h;
    wh_heap_config c = {.bytes = 1u << 20, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST | WH_HEAP_TRACK};
    c.bytes = WH_HEAP_MAX_BYTES + 1;
    CHECK(wh_heap_create(&h, &c) == WH_ERR_TOO_LARGE);
    CHECK(wh_last_error()[0] != '\0');
    c.bytes = 1u << 20;
    CHECK(wh_heap_create(&h, &c) == WH_OK);
    EMPTY();
    void *p = wh_malloc(&h, 5000);
    CHECK(p != NULL);
    CHECK(wh_heap_destroy(&h) == WH_ERR_IN_USE); /* TRACK knows the bytes */
    SAYS("bytes");
    CHECK(wh_heap_destroy(NULL) == WH_ERR_INVALID_ARGUMENT);
    SAYS("heap");
}

/* A build with CUDA where no GPU is usable: the automatic backend fails with
 * WH_ERR_NO_DEVICE instead of running on host memory unasked. */
static void no_gpu(void) {
    if (!WH_HAVE_CUDA || wh_cuda_available()) return;
    wh_pool *p = NULL;
    wh_pool_config c = {.backend = WH_POOL_AUTO};
    CHECK(wh_pool_create(&p, &c) == WH_ERR_NO_DEVICE);
    SAYS("WH_POOL_CPU");
    wh_arena *a = NULL;
    wh_arena_config ac = {.bytes = 1u << 20};
    CHECK(wh_arena_create(&a, &ac) == WH_ERR_NO_DEVICE);
    SAYS("WH_ARENA_CPU");
    wh_heap h;
    wh_heap_config hc = {.bytes = 1u << 20, .kind = WH_HEAP_DEFAULT, .flags = 0};
    CHECK(wh_heap_create(&h, &hc) == WH_ERR_NO_DEVICE);
    SAYS("WH_HEAP_HOST");
}

/* Each thread sees its own last failure. */
static void on_thread(unsigned i, void *arg) {
    (void)arg;
    wh_pool *p = NULL;
    if (i == 0) {
        wh_pool_config c = {.backend = WH_POOL_CPU, .alignment = 3};
        CHECK(wh_pool_create(&p, &c) == WH_ERR_INVALID_ARGUMENT);
        SAYS("alignment 3");
    } else {
        wh_pool_config c = {.backend = WH_POOL_CPU};
        CHECK(wh_pool_create(&p, &c) == WH_OK);
        EMPTY();
        CHECK(wh_pool_destroy(p) == WH_OK);
    }
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Errors that name the real cause, in every part (CPU backend).");
    pool_errors();
    arena_errors();
    soa_errors();
    heap_errors();
    no_gpu();
    wh_run_threads(2, on_thread, NULL);
    return wh_test_finish("test_errors");
}
