/* SPDX-License-Identifier: MIT */
/* Device heap: every compile-time value in one place.
 *
 * Options (define before including warpheap/heap.h; CI builds each):
 *   WH_DEFAULT_SLAB_MAX  requests up to this size go to the DEFAULT heap's
 *                        size classes, larger ones to page runs; a multiple
 *                        of 16 up to WH_SLAB_MAX (default 32 KiB).  It only
 *                        steers the kernel that includes it: kernels built
 *                        with different values may share a heap.
 *   WH_HEAP_PROFILE      the slab paths count events into wh_heap_ctl.prof
 *                        (indices WH_PROF_*, names WH_PROF_NAMES).
 *   WH_DEBUG             (platform.h) assertions of the heap's invariants.
 *
 * Everything else is a constant of the design.  The values the library and a
 * kernel must agree on are recorded: wh_heap_create passes the caller's
 * (wh_heap_build) and the library refuses a heap to code built with others.
 */
#ifndef WARPHEAP_HEAP_CONFIG_H
#define WARPHEAP_HEAP_CONFIG_H

#include "warpheap/warpheap.h"

/* ---- the heap's shape ---------------------------------------------------- */

#define WH_HEAP_ALIGN       16u
#define WH_SLAB_PAGE_SHIFT  16u /* 64 KiB pages               */
#define WH_SLAB_PAGE        (1u << WH_SLAB_PAGE_SHIFT)
/* Slab classes (heap/classes.h): 16 .. 128 B in steps of 16 (c = 0..7), eight
 * steps per doubling from 128 B to 1 KiB (c = 8..31: 144, 160, .., 256, 288,
 * .., 1024; a request wastes at most 1/8 of its slot, where powers of two
 * waste up to half and a quarter on average), then one class per number of
 * slots a page holds, 63 down to 16 (c = 32..79: 1040, 1056, .., 3840, 4096,
 * each the largest multiple of 16 that many of fit a page: a request wastes
 * at most 1/16 of its slot, on average under 1/50, and a page's unused tail
 * is under 16 bytes a slot), then 8, 16, 32 and 64 KiB (c = 80..83: a page
 * holds 8 .. 1 slots, so finer steps would only leave the rest of the page
 * empty).  Requests of 16 B .. 4 KiB, uniform, fill 97.5% of the slots'
 * pages, 94.8% with eight steps per doubling up to 4 KiB. */
#define WH__SLAB_SPP_C0     32u                      /* the first class of 63 slots a page    */
#define WH__SLAB_SPP_END    (WH__SLAB_SPP_C0 + 63u)  /* class c holds SPP_END - c slots a page */
#define WH__SLAB_PAGE_C0    (WH__SLAB_SPP_END - 15u) /* the class of 8 KiB                  */
#define WH_SLAB_CLASSES     (WH__SLAB_PAGE_C0 + 4u)
#define WH_SLAB_MAX         (64u << 10)  /* 64 KiB                     */
#define WH_HEAP_MAX_BYTES   (1ull << 36) /* 64 GiB: 32-bit 16-B units  */
/* Bound on the retry loops of the heap (visits, claims).  Reaching it means
 * the heap is (nearly) exhausted or fragmented: the call fails and is counted. */
#define WH_HEAP_RETRY_LIMIT (1u << 16)
/* Ways of a slab class: independent bump-segment states, each on its own
 * line, a warp using the one of its SM (heap/slab_segment.h: wh__seg_way). */
#define WH_SEG_WAYS_MAX     8u
#define WH_CURSOR_STRIDE    16u /* uint64 words between two cursors: own line     */

/* ---- options --------------------------------------------------------------- */

/* A request over 32 KiB takes a whole page either way; as a run it is one
 * first-fit search of the page bitmap, as a slot of the 64-KiB class (one
 * slot a page, no segments) a page activation through the class's gate: the
 * paper's Alloc-Dealloc, one lane a warp, at 64 KiB takes 1.58-2.39 ms that
 * way, 0.066 as runs. */
#ifndef WH_DEFAULT_SLAB_MAX
#define WH_DEFAULT_SLAB_MAX (WH_SLAB_MAX / 2u)
#endif
#if WH_DEFAULT_SLAB_MAX % 16 != 0 || WH_DEFAULT_SLAB_MAX < 16 || WH_DEFAULT_SLAB_MAX > (64 << 10)
#error "WH_DEFAULT_SLAB_MAX: a multiple of 16 from 16 to WH_SLAB_MAX (65536)"
#endif

/* ---- slab classes and pages -------------------------------------------------- */

/* Heaps of this many pages and up use all 84 size classes, smaller ones the
 * 13 powers of two (heap/classes.h: wh__slab_class_of). */
#define WH__SLAB_FINE_PAGES 256u
/* Looks for slots published by other activators before a request activates a
 * page anyway (heap/slab_bitmap.h: the activation gate). */
#define WH__SLAB_GATE_TRIES 32u
/* Activations in flight per class that the gate lets through beyond the
 * demand it sees: the heap's pages >> WH__SLAB_GATE_SHIFT, on the GPU
 * (wh_heap.gate_slack, heap/slab_bitmap.h). */
#define WH__SLAB_GATE_SHIFT 12u
/* Looks for a slot in all before a request fails: past the gate, and after a
 * failed activation, when the page pool was empty for a moment. */
#define WH__SLAB_TAKE_TRIES 64u
/* Where a page's reclaim lost the race for the page's bits and holds some
 * of them, before it gives them back: nothing.  A test runs the race's other
 * side there (test_heap.c: test_reclaim_lost_free); nothing else should. */
#ifndef WH__RECLAIM_LOST
#define WH__RECLAIM_LOST(h, c, p) ((void)0)
#endif

/* ---- bump segments (heap/slab_segment.h) ------------------------------------ */

/* The state word: s (22 bits), r1 (21 bits), r0 (21 bits); r0 and r1 hold
 * a segment's code, 2 p0 + 2^k for the aligned run of 2^k pages from page
 * p0, under 2^21 as a slab heap has fewer than 2^20 pages. */
#define WH__SEG_S_BITS          22u
#define WH__SEG_R_SHIFT1        22u
#define WH__SEG_R_SHIFT0        43u
/* Heaps of fewer pages hand out no bump segments.  From 16 pages (1 MiB) up
 * they do: the k-d tree's 20K-triangle builds (24 and 244 pages) spent
 * 100-330K cycles an allocation of 48-128 B on the bitmap path, where a
 * segment takes one add. */
#define WH__SEG_MIN_PAGES       16u
/* Classes of fewer slots per page (over 512 B) take the bitmap path, but for
 * the tiled ones below.  The preparer's group sets up a segment's pages
 * (wh__seg_setup): one thread alone, at ~240 cycles a page, makes segments
 * lose to parallel page activations at 4 KiB.  At least 128: the segment form
 * of a leader's result (wh__got_seg) holds a page's tail in 5 bits of 16
 * bytes. */
#define WH__SEG_MIN_SPP         128u
/* Classes whose slots tile the page (powers of two: no tail) may cross any
 * number of page ends, their addresses running on unchanged; those up to this
 * size (1, 2 and 4 KiB) get segments too: one 4-KiB object per thread, 1M
 * threads, 0.25 ms against 0.62 without. */
#define WH__SEG_MAX_TILED       4096u
/* ... in heaps of this many pages and up.  Below, where every class is a power
 * of two and segments are one or two pages, the tiled classes' segments would
 * hold up to half of a small heap (the k-d tree's 24-page heaps failed
 * allocations with them). */
#define WH__SEG_TILED_MIN_PAGES 256u
/* A bump segment is at most 1/WH__SEG_HEAP_DIV of the heap's pages... */
#define WH__SEG_HEAP_DIV        64u
/* ... and at most 1/(WH__SEG_SHARE n) of them where n class ways have
 * prepared segments (wh__seg_shift), but not below 2^WH__SEG_SHARE_MIN
 * pages for that.  Up to 8 class ways (one class on every way) the second
 * bound is above the first.  The segments of a mixed-size workload -- 27
 * classes on 8 ways -- asked for several heaps under the first bound alone:
 * most preparations found no run and the requests went to the bitmap path
 * (test_heap's 8-thread mixed fill of a 1 GiB CPU heap: 64% of its
 * requests, 10% with the second).  The floor keeps small heaps'
 * segments as they are: 1-page segments in a 24 MiB heap spread the classes
 * over every page, and page-sized requests failed (test_heap_stress). */
#define WH__SEG_SHARE           16u
#define WH__SEG_SHARE_MIN       5u
/* Words of wh_heap_ctl.seg_used, a bit per class and way. */
#define WH__SEG_USED_WORDS      ((WH_SLAB_CLASSES * WH_SEG_WAYS_MAX + 63u) / 64u)
/* ... read this many at a time (wh__seg_shift): two round trips for all.
 * A kernel with one allocation keeps its 72 registers with 4 to 8 at a time
 * (all 11 at once: 79). */
#define WH__SEG_USED_BATCH      6u
/* The next segment is prepared once the current one has handed out
 * cap >> WH__SEG_NEXT_SHIFT slots.  A preparation holds its warp ~20 us;
 * started at install, it runs at a kernel's tail whenever a way crosses into
 * its next segment near the end, and it holds a second segment for every
 * class that allocates at all.  Started after an eighth, seven eighths of the
 * segment (~30 us at a way's full rate) cover it. */
#define WH__SEG_NEXT_SHIFT      3u
/* Looks at an empty segment state before a request takes the bitmap path. */
#define WH__SEG_POLLS           1024u
/* The longest sleep between two looks, 32 ns << WH__SEG_POLL_SLEEP: at a
 * cold start every warp of the grid waits for the first segments, and their
 * looks at the way's state queue up before the preparer's own atomics on it. */
#define WH__SEG_POLL_SLEEP      4u
/* After e failed segment preparations in a row, the next 2^e requests of
 * that class and way take the bitmap path at once (e at most this), unless
 * a segment's worth of pages comes back to the pool first. */
#define WH__SEG_BACKOFF_MAX     10u
/* A search for an aligned run walks at most WH__SEG_SCAN_WORDS words of the
 * page bitmap's summary (1024 page words, 4 GiB of pages) for a run inside
 * a word, or WH__SEG_SCAN_WHOLE words of the whole-word summary (16 GiB)
 * for a run of whole words, from a random one, and tries to take at most
 * WH__SEG_SCAN_TAKES groups it names before random descents
 * (heap/slab_segment.h: wh__seg_scan_run, wh__seg_claim_run).  Each look is
 * a round trip with the class's preparation flag held. */
#define WH__SEG_SCAN_WORDS      16u
#define WH__SEG_SCAN_WHOLE      64u
#define WH__SEG_SCAN_TAKES      2u
/* A run of whole page words is taken this many words at a time, their
 * compare-and-swaps in flight together (heap/slab_segment.h:
 * wh__seg_take_run): a 1024-page segment in one round trip, not four.
 * Below 32 (a bit each of a 32-bit mask). */
#define WH__SEG_RUN_CHUNK       16u
/* Counters of the pages given back to the pool (wh_heap_ctl.pages_back). */
#define WH__BACK_SHARDS         8u
/* CAS attempts to install a prepared segment as the current one before it is
 * installed as the next one (wh__seg_install_fresh).  Tests set it to 0 to
 * take the other way every time (test_heap_stress_orphans); nothing else
 * should. */
#ifndef WH__SEG_FRESH_TRIES
#define WH__SEG_FRESH_TRIES 64u
#endif

/* ---- the build record ---------------------------------------------------------- */

/* The values the library and the code that calls wh_malloc must share: the
 * layout of the descriptor and of the control block, and the constants that
 * decide which class has segments.  wh_heap_create (heap.h) passes the
 * caller's; the library compares them with its own. */
typedef struct wh_heap_build {
    uint32_t version;    /* WH_VERSION                                                          */
    uint32_t heap_size;  /* sizeof(wh_heap)                                                     */
    uint32_t ctl_size;   /* sizeof(wh_heap_ctl)                                                 */
    uint32_t page_shift; /* WH_SLAB_PAGE_SHIFT                                                  */
    uint32_t classes;    /* WH_SLAB_CLASSES                                                     */
    uint32_t ways_max;   /* WH_SEG_WAYS_MAX                                                     */
    uint32_t seg_min_spp, seg_max_tiled, seg_min_pages, seg_tiled_min_pages, fine_pages;
} wh_heap_build;

#endif /* WARPHEAP_HEAP_CONFIG_H */
