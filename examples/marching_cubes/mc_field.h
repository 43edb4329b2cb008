/* The example's volume: metaballs on Lissajous paths, value sum r^2 / d^2,
 * surface at 1.  WH_HOST_DEVICE: the GPU example and the CPU reference
 * (mc_cpu.c) compute the same field. */
#ifndef MC_FIELD_H
#define MC_FIELD_H

#include <math.h>
#include "warpheap/platform.h"

#define MC_ISO 1.0f

WH_INLINE WH_HOST_DEVICE float mc_field(float x, float y, float z, float t, int balls) {
    float v = 0.f;
    for (int b = 0; b < balls; ++b) {
        float fb = (float)b;
        float cx = 0.5f + 0.28f * sinf(t * (0.9f + 0.13f * fb) + 1.7f * fb);
        float cy = 0.5f + 0.28f * sinf(t * (0.7f + 0.11f * fb) + 0.6f * fb);
        float cz = 0.5f + 0.28f * cosf(t * (0.8f + 0.07f * fb) + 2.3f * fb);
        float r = 0.07f + 0.012f * (float)(b % 4);
        float dx = x - cx, dy = y - cy, dz = z - cz;
        v += r * r / (dx * dx + dy * dy + dz * dz + 1e-6f);
    }
    return v;
}

/* Time of frame f. */
WH_INLINE WH_HOST_DEVICE float mc_time(uint32_t f) { return 0.05f * (float)f; }

#endif
