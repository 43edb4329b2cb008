/* SPDX-License-Identifier: MIT */
/* The tour of warpheap's four parts (scripts/demo.sh): each part runs one
 * headline workload against the way a program does it without warpheap, in
 * the same binary and the same run, and reports rows of a table as they are
 * measured.  On the CUDA backend with a GPU the workloads run on the GPU;
 * otherwise on the CPU backend against CPU counterparts (glibc malloc). */
#ifndef WH_TOUR_H
#define WH_TOUR_H

#include "wh_app.h"

#include <stdbool.h>

#define TOUR_MAX_ROWS 16

typedef struct tour_row {
    char part[24], workload[72], baseline[32];
    double ours_ms, base_ms; /* per repetition of the workload; speed-up = base / ours */
} tour_row;

typedef struct tour {
    int gpu;          /* 1: the GPU runs the workloads; 0: the CPU backend       */
    int quick;        /* smaller workloads (the tests)                           */
    unsigned threads; /* CPU backend: threads of the heap workload               */
    const char *out;  /* folder for tour.csv and the pictures                    */
    tour_row rows[TOUR_MAX_ROWS];
    int nrows;
} tour;

/* Add a row and print it.  A failure in a part ends the program (exit 1). */
void tour_report(tour *t, const char *part, const char *workload, double ours_ms, const char *baseline, double base_ms);
void tour_fail(const char *part, const char *what);

void tour_heap(tour *t);  /* device heap: wh_malloc + wh_free per thread            */
void tour_soa(tour *t);   /* object allocator: wa-tor against static arrays         */
void tour_pool(tour *t);  /* host pool: pairs and random_allocations                */
void tour_arena(tour *t); /* stream arena: marching-cubes frames                    */

#endif
