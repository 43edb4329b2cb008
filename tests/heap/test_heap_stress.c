/* SPDX-License-Identifier: MIT */
/* Heap stress on the CPU backend, for every built kind: many threads on one
 * heap, random sizes, owner patterns checked before every free (heap_stress.h),
 * a heap small enough that allocations fail now and then (exhaustion and
 * recovery under load), then the heap walk: no inconsistency, every byte
 * accounted for, nothing left allocated.
 *
 * Built as test_heap_stress (DEFAULT, SLAB, BUMP, WRAP) and as
 * test_heap_stress_circular (the CMalloc kinds and their fused forms,
 * -DWH_HS_CIRCULAR); both are labelled `stress` and run under
 * ThreadSanitizer in CI.  A circular walker may read the in-band `next` of a
 * unit that a user is writing over (heap/circular.h: wh__circ_peek, a read
 * that ThreadSanitizer does not see); every lock, merge and free is a CAS on
 * the out-of-band states, which TSan checks. */
#include "heap_stress.h"
#include "wh_cli.h"
#include "wh_test.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct job {
    wh_heap heap;
    wh_hs_shape shape;
    wh_hs_counts *counts;
} job;

static void worker(unsigned i, void *arg) {
    job *j = (job *)arg;
    void **held = (void **)calloc(j->shape.cap, sizeof *held);
    uint32_t *sizes = (uint32_t *)calloc(j->shape.cap, sizeof *sizes);
    wh_hs_counts c = {0, 0, 0, 0, 0};
    wh_hs_thread(&j->heap, i, &j->shape, held, sizes, &c);
    j->counts[i] = c;
    free(held);
    free(sizes);
}

/* Exhaustion, deterministically (how often the storm itself runs out depends
 * on thread timing): one thread allocates until wh_malloc returns NULL, which
 * must happen within the heap's size and be counted; everything is freed and
 * the heap is empty again. */
static void fill_to_exhaustion(wh_heap *h, uint32_t max_size) {
    uint64_t cap = h->bytes / 16u + 1u, n = 0;
    void **p = (void **)calloc(cap, sizeof *p);
    wh_heap_usage before, after;
    CHECK(wh_heap_stats(h, &before) == WH_OK);
    for (; n < cap; ++n) {
        size_t want = 16u + (size_t)((n * 2654435761u) % max_size);
        if ((p[n] = wh_malloc(h, want)) == NULL) break;
    }
    CHECK(n < cap); /* it ran out */
    CHECK(wh_heap_stats(h, &after) == WH_OK);
    CHECK_EQ_U64(after.failed_allocs, before.failed_allocs + 1u);
    for (uint64_t k = 0; k < n; ++k) wh_free(h, p[k]);
    CHECK(wh_heap_stats(h, &after) == WH_OK);
    CHECK_EQ_U64(after.allocations, 0);
    CHECK_EQ_U64(after.used_bytes + after.free_bytes + after.overhead_bytes, after.heap_bytes);
    free(p);
}

/* With several ways, threads use different ones: each thread holds one 16-B
 * object, whose page says which way's segment it came from.  On a fresh heap:
 * after a storm, freed slots wait in the class bitmap (orphans, in
 * test_heap_stress_orphans, all of one way's pages), and every way takes
 * those first, whichever way they came from (so one way, 0x1, may serve
 * them all). */
typedef struct hold_job {
    wh_heap heap;
    void **p;
} hold_job;
static void hold_worker(unsigned i, void *arg) {
    hold_job *j = (hold_job *)arg;
    j->p[i] = wh_malloc(&j->heap, 16);
}
static void spread_over_ways(const wh_heap_config *cfg, unsigned threads) {
    hold_job j = {{0}, (void **)calloc(threads, sizeof(void *))};
    wh_heap *h = &j.heap;
    CHECK(wh_heap_create(h, cfg) == WH_OK);
    wh_run_threads(threads, hold_worker, &j);
    uint32_t seen = 0;
    for (unsigned t = 0; t < threads; ++t) {
        CHECK(j.p[t] != NULL);
        if (!j.p[t]) continue;
        uint32_t info = h->page_info[((uint8_t *)j.p[t] - h->base) >> WH_SLAB_PAGE_SHIFT];
        seen |= 1u << WH_PAGE_WAY(info);
        wh_free(h, j.p[t]);
    }
    printf("          ways that served one 16-B object per thread on a fresh heap: 0x%x\n", seen);
    CHECK(wh_popc32(seen) >= 2);
    CHECK(wh_heap_destroy(h) == WH_OK);
    free(j.p);
}

#ifndef WH_HS_CIRCULAR
/* The page pool (SLAB and DEFAULT): with nothing allocated and the segments
 * trimmed, every page is back in it -- a page held by its class with every
 * slot free is lost to the other classes and to page runs. */
static void check_pages_back(wh_heap *h, const char *what) {
    CHECK(wh_heap_trim(h) == WH_OK);
    uint64_t n = wh_bitmap_count_host(&h->pages);
    if (n != h->npages)
        printf("%-9s %llu of %u pages in the pool after everything was freed\n", what, (unsigned long long)n,
               h->npages);
    CHECK_EQ_U64(n, h->npages);
}
#endif

/* ways: of the slab classes' bump segments (wh_heap_config.ways; 0: the
 * heap's choice, one way below 512 MiB) */
static void stress(wh_heap_kind kind, uint64_t bytes, unsigned threads, wh_hs_shape shape, bool exhaust,
                   uint32_t ways) {
    job j;
    wh_heap_config cfg = {.bytes = bytes, .kind = kind, .flags = WH_HEAP_HOST | WH_HEAP_TRACK, .ways = ways};
#ifdef WH_HS_SECURE /* the hardened mode: its fills and checks race with nothing */
    if (kind == WH_HEAP_DEFAULT || kind == WH_HEAP_SLAB) cfg.flags |= WH_HEAP_SECURE;
#endif
    if (ways > 1u) spread_over_ways(&cfg, threads);
    CHECK(wh_heap_create(&j.heap, &cfg) == WH_OK);
    j.shape = shape;
    j.counts = (wh_hs_counts *)calloc(threads, sizeof *j.counts);
    double t0 = wh_now_seconds();
    wh_run_threads(threads, worker, &j);
    double dt = wh_now_seconds() - t0;
    wh_hs_counts sum = {0, 0, 0, 0, 0};
    for (unsigned t = 0; t < threads; ++t) {
        sum.allocs += j.counts[t].allocs;
        sum.frees += j.counts[t].frees;
        sum.failed += j.counts[t].failed;
        sum.corrupt += j.counts[t].corrupt;
        sum.misaligned += j.counts[t].misaligned;
    }
    wh_heap_usage s;
    CHECK(wh_heap_stats(&j.heap, &s) == WH_OK);
    printf(
        "%-9s %u way(s) %2u threads %8llu allocs %8llu failed %.2f s | corrupt %llu misaligned %llu | walk: used %llu "
        "free %llu overhead %llu live %llu inconsistent %llu double %llu foreign %llu failed %llu peak %llu ext %.3f\n",
        wh_heap_kind_name(kind), ways ? ways : 1u, threads, sum.allocs, sum.failed, dt, sum.corrupt, sum.misaligned,
        (unsigned long long)s.used_bytes, (unsigned long long)s.free_bytes, (unsigned long long)s.overhead_bytes,
        (unsigned long long)s.allocations, (unsigned long long)s.inconsistencies, (unsigned long long)s.double_frees,
        (unsigned long long)s.foreign_frees, (unsigned long long)s.failed_allocs, (unsigned long long)s.peak_bytes,
        s.external_frag);
    CHECK(sum.allocs > (unsigned long long)threads * shape.ops / 4u);
    CHECK_EQ_U64(sum.corrupt, 0);
    CHECK_EQ_U64(sum.misaligned, 0);
    CHECK_EQ_U64(s.inconsistencies, 0);
    CHECK_EQ_U64(s.double_frees, 0);
    CHECK_EQ_U64(s.foreign_frees, 0);
    CHECK_EQ_U64(s.corruptions, 0);
    CHECK_EQ_U64(s.failed_allocs, sum.failed);
    CHECK_EQ_U64(s.used_bytes + s.free_bytes + s.overhead_bytes, s.heap_bytes);
    if (kind != WH_HEAP_BUMP) {
        CHECK_EQ_U64(s.allocations, 0);
        CHECK_EQ_U64(s.used_bytes, 0);
        CHECK(s.peak_bytes > 0);
#ifndef WH_HS_CIRCULAR
        check_pages_back(&j.heap, wh_heap_kind_name(kind));
#endif
        if (exhaust) fill_to_exhaustion(&j.heap, shape.small_max);
        /* recovery: after the storm, the whole heap serves again */
        void *p = wh_malloc(&j.heap, (size_t)(kind == WH_HEAP_SLAB ? WH_SLAB_MAX : s.largest_free / 2));
        CHECK(p != NULL);
        wh_free(&j.heap, p);
    }
    CHECK(wh_heap_destroy(&j.heap) == WH_OK);
    free(j.counts);
}

#ifndef WH_HS_CIRCULAR
/* A burst: every thread finds its class empty at once.  The heap has 16 pages
 * and the whole burst needs 4 (one per class): no allocation may fail (a page
 * per thread would run the pool dry -- the activation gate of heap/slab.h). */
typedef struct burst_job {
    wh_heap heap;
    unsigned long long failed;
} burst_job;
static void burst_worker(unsigned i, void *arg) {
    burst_job *j = (burst_job *)arg;
    void *p[16];
    unsigned long long failed = 0;
    for (int k = 0; k < 16; ++k) failed += (p[k] = wh_malloc(&j->heap, 16u << (i % 4u))) == NULL;
    for (int k = 0; k < 16; ++k) wh_free(&j->heap, p[k]);
    __atomic_fetch_add(&j->failed, failed, __ATOMIC_RELAXED);
}
static void burst(unsigned threads) {
    burst_job j = {{0}, 0};
    wh_heap_config cfg = {.bytes = 1u << 20, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST};
    CHECK(wh_heap_create(&j.heap, &cfg) == WH_OK);
    for (int round = 0; round < 20; ++round) wh_run_threads(threads, burst_worker, &j);
    printf("burst     %2u threads x 16 objects x 20 rounds into 16 pages: %llu failed\n", threads, j.failed);
    CHECK_EQ_U64(j.failed, 0);
    CHECK(wh_heap_destroy(&j.heap) == WH_OK);
}
#endif

#ifndef WH_HS_CIRCULAR
/* Pages emptied and taken back all the time: threads allocate and free one
 * object at a time, of sizes whose pages hold few slots (bitmap path, one
 * word a page or several), in a heap of a few pages.  A page's last free
 * races the claims of the page's slots; once all is freed every page must be
 * back in the pool. */
typedef struct churn_job {
    wh_heap heap;
    uint32_t ops, size;
    unsigned long long failed;
} churn_job;
static void churn_worker(unsigned i, void *arg) {
    churn_job *j = (churn_job *)arg;
    void *p[4] = {NULL, NULL, NULL, NULL};
    unsigned long long failed = 0;
    for (uint32_t k = 0; k < j->ops; ++k) {
        uint32_t r = (uint32_t)wh_hash64((uint64_t)i << 32 | k), s = r & 3u;
        if (p[s]) {
            wh_free(&j->heap, p[s]);
            p[s] = NULL;
        } else {
            failed += (p[s] = wh_malloc(&j->heap, j->size)) == NULL;
        }
    }
    for (int s = 0; s < 4; ++s) wh_free(&j->heap, p[s]);
    __atomic_fetch_add(&j->failed, failed, __ATOMIC_RELAXED);
}
static void reclaim_churn(unsigned threads, uint32_t ops, uint32_t size) {
    churn_job j = {{0}, ops, size, 0};
    wh_heap_config cfg = {.bytes = 1u << 20, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST};
    CHECK(wh_heap_create(&j.heap, &cfg) == WH_OK);
    wh_run_threads(threads, churn_worker, &j);
    printf("churn     %2u threads x %u ops of %u B in 16 pages: %llu failed\n", threads, ops, size, j.failed);
    wh_heap_usage s;
    CHECK(wh_heap_stats(&j.heap, &s) == WH_OK);
    CHECK_EQ_U64(s.allocations, 0);
    CHECK_EQ_U64(s.inconsistencies, 0);
    check_pages_back(&j.heap, "churn");
    CHECK(wh_heap_destroy(&j.heap) == WH_OK);
}
#endif

#ifndef WH_HS_CIRCULAR
/* The back-off's count (heap/slab_segment.h, wh__seg_backing_off): after e
 * failed preparations in a row, exactly 2^e of the requests that find the
 * way empty take the bitmap path, however many race for the count, and the
 * last of them ends the back-off.  Each thread asks until the back-off has
 * ended (bounded); the episodes run e = 1 .. WH__SEG_BACKOFF_MAX, then more
 * at the most, where the races are many. */
typedef struct skip_job {
    wh_heap heap;
    uint32_t c;
    unsigned long long skipped;
} skip_job;
static void skip_worker(unsigned i, void *arg) {
    skip_job *j = (skip_job *)arg;
    unsigned long long n = 0;
    (void)i;
    for (uint32_t k = 0; k < 1u << 22 && wh_atomic_load(wh__seg_flag(&j->heap, j->c, 0), WH_ACQUIRE) == WH__SEG_BACKING;
         ++k)
        n += wh__seg_backing_off(&j->heap, j->c, 0);
    __atomic_fetch_add(&j->skipped, n, __ATOMIC_RELAXED);
}
static void backoff_count(unsigned threads) {
    skip_job j = {{0}, 0, 0};
    wh_heap_config cfg = {.bytes = 16u << 20, .kind = WH_HEAP_DEFAULT, .flags = WH_HEAP_HOST};
    CHECK(wh_heap_create(&j.heap, &cfg) == WH_OK);
    j.c = wh__slab_class_of(&j.heap, 16);
    unsigned long long over = 0;
    for (uint32_t e = 1; e <= WH__SEG_BACKOFF_MAX + 8u; ++e) {
        uint64_t want = 1ull << (e < WH__SEG_BACKOFF_MAX ? e : WH__SEG_BACKOFF_MAX);
        CHECK(wh__seg_lock(&j.heap, j.c, 0));
        wh__seg_back_off(&j.heap, j.c, 0); /* a failed preparation: the flag backs off */
        j.skipped = 0;
        wh_run_threads(threads, skip_worker, &j);
        CHECK_EQ_U64(j.skipped, want);
        CHECK_EQ_U64(j.heap.ctl->seg_prep[wh__seg_index(j.c, 0)], 0); /* ended */
        over += j.skipped > want ? j.skipped - want : 0;
    }
    printf("backoff   %2u threads, %u back-offs: %llu requests skipped beyond the counts\n", threads,
           WH__SEG_BACKOFF_MAX + 8u, over);
    CHECK(wh_heap_destroy(&j.heap) == WH_OK);
}
#endif

#ifndef WH_HS_CIRCULAR
/* WRAP reuses live memory by design: no patterns (and no writes, which would
 * race by design); every reservation must lie inside the pool, aligned, and
 * the pool must wrap many times. */
typedef struct wrap_job {
    wh_heap heap;
    uint32_t ops;
    unsigned long long bad, got;
} wrap_job;
static void wrap_worker(unsigned i, void *arg) {
    wrap_job *j = (wrap_job *)arg;
    unsigned long long bad = 0, got = 0;
    for (uint32_t k = 0; k < j->ops; ++k) {
        uint32_t size = 1u + (uint32_t)(wh_hash64((uint64_t)i << 32 | k) % 1024u);
        uint8_t *p = (uint8_t *)wh_malloc(&j->heap, size);
        if (!p) continue;
        got++;
        bad += p < j->heap.base || p + size > j->heap.base + j->heap.bytes || (uintptr_t)p % 16u;
    }
    __atomic_fetch_add(&j->bad, bad, __ATOMIC_RELAXED);
    __atomic_fetch_add(&j->got, got, __ATOMIC_RELAXED);
}
static void wrap(unsigned threads, uint32_t ops) {
    wrap_job j = {{0}, ops, 0, 0};
    wh_heap_config cfg = {.bytes = 64u << 10, .kind = WH_HEAP_WRAP, .flags = WH_HEAP_HOST};
    CHECK(wh_heap_create(&j.heap, &cfg) == WH_OK);
    wh_run_threads(threads, wrap_worker, &j);
    wh_heap_usage s;
    CHECK(wh_heap_stats(&j.heap, &s) == WH_OK);
    printf("wrap      %2u threads %8llu allocs in a 64 KiB pool: %llu outside or misaligned, %llu failed\n", threads,
           j.got, j.bad, (unsigned long long)s.failed_allocs);
    CHECK_EQ_U64(j.bad, 0);
    CHECK_EQ_U64(j.got + s.failed_allocs, (unsigned long long)threads * ops);
    CHECK(j.got > (unsigned long long)threads * ops * 9u / 10u);
    CHECK(wh_heap_destroy(&j.heap) == WH_OK);
}
#endif

int main(int argc, char **argv) {
    unsigned threads = 16;
    uint32_t ops = 20000;
    wh_cli_opt cli[] = {WH_CLI_UINT("threads", &threads, "threads on one heap"),
                        WH_CLI_UINT("ops", &ops, "operations per thread"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Heap stress on the CPU backend, every built kind, then the heap walk.");
    /* small sizes mostly, large ones now and then; the tiny heaps run full */
    wh_hs_shape mixed = {ops, 48, 512, 96 * 1024};
    wh_hs_shape tiny = {ops / 8u, 64, 2048, 70 * 1024};
#ifndef WH_HS_CIRCULAR
    wh_hs_shape slab = {ops, 48, 512, 60 * 1024};
    wh_hs_shape bump = {ops / 8u, 48, 512, 4096};
    stress(WH_HEAP_DEFAULT, 24ull << 20, threads, mixed, false, 0);
    stress(WH_HEAP_SLAB, 16ull << 20, threads, slab, false, 0);
    stress(WH_HEAP_BUMP, 8ull << 20, threads, bump, false, 0);
    stress(WH_HEAP_DEFAULT, 512ull << 10, threads, tiny, true, 0); /* pages change class often */
    /* sizes up to 4 KiB mostly: every class of the smallest heap that has
     * them all, the 48 of one number of slots a page (1 to 4 KiB) among them,
     * run full, so that pages go from class to class */
    wh_hs_shape pages = {ops / 4u, 448, 4096, 8192};
    stress(WH_HEAP_DEFAULT, (uint64_t)WH__SLAB_FINE_PAGES * WH_SLAB_PAGE, threads, pages, true, 0);
    /* eight ways per class: threads on different state words; in 16 pages
     * the ways' segments run the pool dry and are taken back */
    stress(WH_HEAP_DEFAULT, 24ull << 20, threads, mixed, false, 8);
    stress(WH_HEAP_DEFAULT, 1ull << 20, threads, tiny, true, 8);
    /* segments of 32 to 128 pages: each class's shrink as classes and ways
     * join (wh__seg_shift), so a way's current and next differ in size */
    stress(WH_HEAP_DEFAULT, 1ull << 30, threads, mixed, false, 8);
    burst(threads * 2u);
    reclaim_churn(threads, ops * 2u, 3000); /* 21 slots: pages share a word */
    reclaim_churn(threads, ops * 2u, 768);  /* 85 slots: two words a page */
    backoff_count(threads);
    wrap(threads, ops);
    return wh_test_finish("test_heap_stress");
#else
    /* MULTI pre-splits per segment (R' = R / #segments): its largest chunks are
     * small, which is its known cost (paper section 5.4); keep large sizes
     * within what its segments can serve */
    wh_hs_shape multi = {ops, 48, 512, 16 * 1024};
    wh_hs_shape tiny_multi = {ops / 4u, 48, 1024, 2048};
    stress(WH_HEAP_CIRCULAR, 24ull << 20, threads, mixed, false, 0);
    stress(WH_HEAP_CIRCULAR_MULTI, 24ull << 20, threads, multi, false, 0);
    stress(WH_HEAP_CIRCULAR, 256ull << 10, threads, tiny, true, 0);
    stress(WH_HEAP_CIRCULAR_MULTI, 64ull << 10, threads, tiny_multi, true, 0);
    stress(WH_HEAP_CIRCULAR_FUSED, 24ull << 20, threads, mixed, false, 0);
    stress(WH_HEAP_CIRCULAR_FUSED_MULTI, 24ull << 20, threads, multi, false, 0);
    stress(WH_HEAP_CIRCULAR_FUSED, 256ull << 10, threads, tiny, true, 0);
    stress(WH_HEAP_CIRCULAR_FUSED_MULTI, 64ull << 10, threads, tiny_multi, true, 0);
    return wh_test_finish("test_heap_stress_circular");
#endif
}
