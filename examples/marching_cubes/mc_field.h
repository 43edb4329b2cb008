/* SPDX-License-Identifier: MIT */
/* The example's volume: metaballs on Lissajous paths, value sum r^2 / d^2,
 * surface at 1.  WH_HOST_DEVICE: the GPU example and the CPU reference
 * (mc_cpu.c) compute the same field.  Ball positions are computed once per
 * frame (per block on the GPU), not per grid point. */
#ifndef MC_FIELD_H
#define MC_FIELD_H

#include <math.h>
#include "warpheap/platform.h"

#define MC_ISO       1.0f
#define MC_MAX_BALLS 16

typedef struct mc_ball {
    float x, y, z, r2;
} mc_ball;

/* Time of frame f. */
WH_INLINE WH_HOST_DEVICE float mc_time(uint32_t f) { return 0.05f * (float)f; }

WH_INLINE WH_HOST_DEVICE mc_ball mc_ball_at(int b, float t) {
    float fb = (float)b, r = 0.07f + 0.012f * (float)(b % 4);
    mc_ball m;
    m.x = 0.5f + 0.28f * sinf(t * (0.9f + 0.13f * fb) + 1.7f * fb);
    m.y = 0.5f + 0.28f * sinf(t * (0.7f + 0.11f * fb) + 0.6f * fb);
    m.z = 0.5f + 0.28f * cosf(t * (0.8f + 0.07f * fb) + 2.3f * fb);
    m.r2 = r * r;
    return m;
}

WH_INLINE WH_HOST_DEVICE float mc_field(float x, float y, float z, const mc_ball *balls, int n) {
    float v = 0.f;
    for (int b = 0; b < n; ++b) {
        float dx = x - balls[b].x, dy = y - balls[b].y, dz = z - balls[b].z;
        v += balls[b].r2 / (dx * dx + dy * dy + dz * dz + 1e-6f);
    }
    return v;
}

#endif
