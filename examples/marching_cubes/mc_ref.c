/* SPDX-License-Identifier: MIT */
/* The marching-cubes reference on the host (mc_ref.h): Lorensen & Cline 1987,
 * one cell after another in linear order, the tables of mc_tables.c. */
#include "mc_ref.h"

#include <stdlib.h>

void mc_balls(uint32_t frame, int balls, mc_ball *out) {
    for (int b = 0; b < balls; ++b) out[b] = mc_ball_at(b, mc_time(frame));
}

int mc_grid_init(mc_grid *g, int n) {
    g->n = n;
    g->cells = (uint32_t)((n - 1) * (n - 1) * (n - 1));
    g->f = malloc((size_t)n * n * n * sizeof(float));
    g->counts = malloc(g->cells * sizeof(uint32_t));
    g->offsets = malloc(g->cells * sizeof(uint32_t));
    if (g->f && g->counts && g->offsets) return 0;
    mc_grid_free(g);
    return -1;
}

void mc_grid_free(mc_grid *g) {
    free(g->f);
    free(g->counts);
    free(g->offsets);
    g->f = NULL;
    g->counts = g->offsets = NULL;
}

static uint32_t cell_case(const mc_grid *g, int x, int y, int z) {
    uint32_t m = 0;
    for (int c = 0; c < 8; ++c) {
        int cx = x + (c & 1), cy = y + ((c >> 1) & 1), cz = z + ((c >> 2) & 1);
        m |= (uint32_t)(g->f[((size_t)cz * g->n + cy) * g->n + cx] > MC_ISO) << c;
    }
    return m;
}

uint64_t mc_ref_count(mc_grid *g, const mc_tables *t, uint32_t frame, int balls) {
    int n = g->n, m = n - 1;
    float inv = 1.0f / (float)(n - 1);
    mc_ball ball[MC_MAX_BALLS];
    mc_balls(frame, balls, ball);
    for (int i = 0; i < n * n * n; ++i)
        g->f[i] = mc_field((float)(i % n) * inv, (float)(i / n % n) * inv, (float)(i / n / n) * inv, ball, balls);
    uint64_t total = 0;
    for (uint32_t i = 0; i < g->cells; ++i) {
        g->counts[i] = t->ntri[cell_case(g, (int)(i % m), (int)(i / m % m), (int)(i / m / m))];
        g->offsets[i] = (uint32_t)total;
        total += g->counts[i];
    }
    return total;
}

uint64_t mc_ring_bytes(const uint64_t *tris, int frames, int k, uint64_t *needed) {
    uint64_t most = 0, most_rounded = 0;
    for (int f = 0; f < frames; ++f) {
        uint64_t live = 0, rounded = 0;
        for (int j = 0; j < k && j <= f; ++j) {
            live += tris[f - j] * MC_TRI_BYTES;
            rounded += (tris[f - j] * MC_TRI_BYTES + 32u + 255u) / 256u * 256u; /* pad 32 for stride 36 */
        }
        if (live > most) most = live;
        if (rounded > most_rounded) most_rounded = rounded;
    }
    if (needed) *needed = most;
    return most_rounded + 2u * ((uint64_t)k + 1u) * 256u;
}

static void edge_point(const mc_grid *g, const mc_tables *t, int x, int y, int z, int e, float *out) {
    int a = t->edge_corner[e][0], b = t->edge_corner[e][1], n = g->n;
    int ax = x + (a & 1), ay = y + ((a >> 1) & 1), az = z + ((a >> 2) & 1);
    int bx = x + (b & 1), by = y + ((b >> 1) & 1), bz = z + ((b >> 2) & 1);
    float va = g->f[((size_t)az * n + ay) * n + ax], vb = g->f[((size_t)bz * n + by) * n + bx];
    float s = (MC_ISO - va) / (vb - va), inv = 1.0f / (float)(n - 1);
    out[0] = ((float)ax + s * (float)(bx - ax)) * inv;
    out[1] = ((float)ay + s * (float)(by - ay)) * inv;
    out[2] = ((float)az + s * (float)(bz - az)) * inv;
}

void mc_ref_generate(const mc_grid *g, const mc_tables *t, const wh_arena_span *sp) {
    int m = g->n - 1;
    for (uint32_t i = 0; i < g->cells; ++i) {
        if (!g->counts[i]) continue;
        int x = (int)(i % m), y = (int)(i / m % m), z = (int)(i / m / m);
        uint32_t c = cell_case(g, x, y, z);
        for (int k = 0; k < t->ntri[c]; ++k) {
            float *tri = wh_arena_span_at(sp, (uint64_t)g->offsets[i] + (uint64_t)k, MC_TRI_BYTES);
            for (int v = 0; v < 3; ++v) edge_point(g, t, x, y, z, t->tri[c][3 * k + v], tri + 3 * v);
        }
    }
}
