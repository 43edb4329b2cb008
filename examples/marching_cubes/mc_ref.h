/* SPDX-License-Identifier: MIT */
/* The marching-cubes reference on the host (mc_ref.c): the field at every
 * grid point, each cell's triangle count and offset (cells in linear order:
 * x fastest), and the triangles written through wh_arena_span_at.  The CPU
 * example (mc_cpu.c) runs its frames on it; the GPU example
 * (marching_cubes.cu) checks its meshes against it, triangle by triangle. */
#ifndef MC_REF_H
#define MC_REF_H

#include "mc_field.h"
#include "mc_tables.h"
#include "warpheap/arena.h"

#define MC_TRI_BYTES 36u /* three xyz float vertices */

typedef struct mc_grid {
    int n;          /* points per side                   */
    uint32_t cells; /* (n - 1)^3                         */
    float *f;       /* the field at the n^3 points       */
    uint32_t *counts, *offsets;
} mc_grid;

#ifdef __cplusplus
extern "C" {
#endif
/* The balls of frame f (balls <= MC_MAX_BALLS): what both examples feed the
 * field, computed once on the host so that both see the same bits. */
void mc_balls(uint32_t frame, int balls, mc_ball *out);
int mc_grid_init(mc_grid *g, int n); /* 0, or -1: no memory */
void mc_grid_free(mc_grid *g);
/* Field, triangle counts and their exclusive scan: returns the frame's triangles. */
uint64_t mc_ref_count(mc_grid *g, const mc_tables *t, uint32_t frame, int balls);
/* The region a RING arena (granule 256, max_blocks small) needs to hold the
 * meshes of k frames in a row, tris[f] triangles each: the most over every
 * f of the k live meshes, each rounded to the granule with its padding, plus
 * a few granules of slack.  *needed (unless NULL): the most bytes k live
 * meshes hold. */
uint64_t mc_ring_bytes(const uint64_t *tris, int frames, int k, uint64_t *needed);
/* The triangles of the frame last counted: triangle j at wh_arena_span_at(sp, j, MC_TRI_BYTES). */
void mc_ref_generate(const mc_grid *g, const mc_tables *t, const wh_arena_span *sp);
#ifdef __cplusplus
}
#endif

#endif
