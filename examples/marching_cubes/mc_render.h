/* SPDX-License-Identifier: MIT */
/* A small software rasteriser for pictures of a mesh: z-buffer, Lambert
 * shading (normals turned to the viewer), orthographic view of the unit cube turned about y. */
#ifndef MC_RENDER_H
#define MC_RENDER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* tris: ntri triangles of 9 floats (three xyz vertices) in [0,1]^3.
 * rgb: w*h*3 bytes, written. */
void mc_render(const float *tris, uint64_t ntri, uint8_t *rgb, int w, int h, float angle);
#ifdef __cplusplus
}
#endif

#endif
