/* SPDX-License-Identifier: MIT */
/* Software rasteriser for the marching-cubes picture (not from a seed):
 * project, edge functions over each triangle's bounding box, keep the
 * nearest depth per pixel, Lambert shading with the normal turned towards
 * the viewer (triangle winding is not consistent, so both sides count). */
#include "mc_render.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    float x, y, z;
} v3;

static v3 cross(v3 a, v3 b) { return (v3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }

/* Turn about y by angle, tilt about x, then to pixels (depth kept in z). */
static v3 view(const float *p, float ca, float sa, int w, int h) {
    float x = p[0] - 0.5f, y = p[1] - 0.5f, z = p[2] - 0.5f;
    float xr = ca * x + sa * z, zr = -sa * x + ca * z;
    float ct = 0.906f, st = 0.423f; /* 25 degrees of tilt */
    float yr = ct * y - st * zr, zt = st * y + ct * zr;
    float s = 0.62f * (float)(w < h ? w : h);
    return (v3){0.5f * (float)w + s * xr, 0.5f * (float)h - s * yr, zt};
}

static float edge(v3 a, v3 b, float x, float y) { return (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x); }

static void raster(v3 a, v3 b, v3 c, uint8_t col[3], float *zbuf, uint8_t *rgb, int w, int h) {
    float area = edge(a, b, c.x, c.y);
    if (fabsf(area) < 1e-12f) return;
    int x0 = (int)fmaxf(0.f, floorf(fminf(a.x, fminf(b.x, c.x))));
    int x1 = (int)fminf((float)w - 1, ceilf(fmaxf(a.x, fmaxf(b.x, c.x))));
    int y0 = (int)fmaxf(0.f, floorf(fminf(a.y, fminf(b.y, c.y))));
    int y1 = (int)fminf((float)h - 1, ceilf(fmaxf(a.y, fmaxf(b.y, c.y))));
    for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) {
            float px = (float)x + 0.5f, py = (float)y + 0.5f;
            float w0 = edge(b, c, px, py) / area, w1 = edge(c, a, px, py) / area, w2 = 1.f - w0 - w1;
            if (w0 < 0 || w1 < 0 || w2 < 0) continue;
            float z = w0 * a.z + w1 * b.z + w2 * c.z;
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            if (z >= zbuf[i]) continue; /* smaller z is nearer */
            zbuf[i] = z;
            rgb[3 * i] = col[0];
            rgb[3 * i + 1] = col[1];
            rgb[3 * i + 2] = col[2];
        }
}

void mc_render(const float *tris, uint64_t ntri, uint8_t *rgb, int w, int h, float angle) {
    float *zbuf = (float *)malloc((size_t)w * (size_t)h * sizeof(float));
    if (!zbuf) return;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) { /* background gradient */
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            zbuf[i] = 1e30f;
            uint8_t g = (uint8_t)(30 + 40 * y / h);
            rgb[3 * i] = g;
            rgb[3 * i + 1] = g;
            rgb[3 * i + 2] = (uint8_t)(g + 12);
        }
    float ca = cosf(angle), sa = sinf(angle), s = 0.62f * (float)(w < h ? w : h);
    v3 light = {-0.45f, -0.6f, -0.66f}; /* screen space: up-left, towards the viewer */
    float ll = sqrtf(light.x * light.x + light.y * light.y + light.z * light.z);
    for (uint64_t t = 0; t < ntri; ++t) {
        const float *p = tris + 9 * t;
        v3 a = view(p, ca, sa, w, h), b = view(p + 3, ca, sa, w, h), c = view(p + 6, ca, sa, w, h);
        /* normal in screen space (depth scaled like x and y), turned to the viewer (-z) */
        v3 n = cross((v3){b.x - a.x, b.y - a.y, s * (b.z - a.z)}, (v3){c.x - a.x, c.y - a.y, s * (c.z - a.z)});
        float nl = sqrtf(n.x * n.x + n.y * n.y + n.z * n.z), sign = n.z > 0 ? -1.f : 1.f;
        float lam = nl > 0 ? sign * (n.x * light.x + n.y * light.y + n.z * light.z) / (nl * ll) : 0.f;
        if (lam < 0) lam = 0;
        float hgt = (p[1] + p[4] + p[7]) / 3.f; /* tint by height */
        float k = 0.2f + 0.8f * lam;
        uint8_t col[3] = {(uint8_t)(255 * k * (0.55f + 0.45f * hgt)), (uint8_t)(255 * k * 0.62f),
                          (uint8_t)(255 * k * (1.0f - 0.5f * hgt))};
        raster(a, b, c, col, zbuf, rgb, w, h);
    }
    free(zbuf);
}
