/* SPDX-License-Identifier: MIT */
/* Marching-cubes case tables (Lorensen & Cline, "Marching Cubes: A High
 * Resolution 3D Surface Construction Algorithm", SIGGRAPH 1987), generated
 * at start-up instead of typed in: see mc_tables.c. */
#ifndef MC_TABLES_H
#define MC_TABLES_H

#include <stdint.h>

#define MC_MAX_TRI 8 /* room per case; the generator reports the real maximum */

/* Corner i of a cell is at (i & 1, (i >> 1) & 1, (i >> 2) & 1). */
typedef struct mc_tables {
    uint8_t edge_corner[12][2];      /* the two corners of each edge          */
    uint8_t ntri[256];               /* triangles of each case                */
    int8_t tri[256][3 * MC_MAX_TRI]; /* edge ids, three per triangle          */
    int max_tri;                     /* largest ntri                          */
} mc_tables;

#ifdef __cplusplus
extern "C" {
#endif
/* Fill t; returns 0, or -1 if a case needs more than MC_MAX_TRI triangles. */
int mc_tables_build(mc_tables *t);
#ifdef __cplusplus
}
#endif

#endif
