/* SPDX-License-Identifier: MIT */
/* wh_heap_bench's steady-state workloads (steady.cu): what its main passes
 * them, and the profile counters both parts print. */
#ifndef WH_BENCH_HEAP_STEADY_H
#define WH_BENCH_HEAP_STEADY_H

#include "warpheap/heap.h"

#include <stdio.h>

typedef struct steady_run {
    FILE *md;                      /* heap_bench.md: the tables go there      */
    const char *out;               /* folder of heap_rounds.csv, heap_churn.csv */
    const char *header;            /* their first line: "# gpu=... commit=..." */
    uint64_t round_bytes;          /* the rounds' heap                        */
    uint64_t churn_bytes;          /* the churn's heap                        */
    uint32_t rounds, churn_rounds; /* how many of each                        */
    uint32_t flags, ways;          /* wh_heap_config's                        */
} steady_run;

/* Fill 90%, free everything, r->rounds times, at 16 B, 256 B, 4 KiB and
 * log-uniform sizes.  Returns the rounds whose walk was not sound. */
int steady_rounds(const steady_run *r);
/* r->churn_rounds rounds of frees and allocations of random objects.
 * Returns the rounds whose walk was not sound (one more when something is
 * left in use after freeing everything). */
int steady_churn(const steady_run *r);

/* The class pages of a slab heap on the device by live slots: none, every
 * one (untouched segment slots count as live), some; and the class that holds
 * the most of the partly used. */
typedef struct heap_census {
    unsigned long long empty, full, part, part_most;
    uint32_t part_most_class;
} heap_census;
void heap_class_census(const wh_heap *h, heap_census *out);

/* WH_HEAP_PROFILE builds (wh_heap_bench_prof): the slab paths' event
 * counters of h since the last call, one line on stdout after `label`;
 * nothing in other builds. */
void heap_bench_prof(const wh_heap *h, const char *label);

#endif /* WH_BENCH_HEAP_STEADY_H */
