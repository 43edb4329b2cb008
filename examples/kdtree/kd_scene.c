/* SPDX-License-Identifier: MIT */
/* Scenes for the k-d tree workload of register-efficient-gpu-allocators.txt
 * section 6 ([DS]).  The paper used downloaded models (Sponza, Dragon, ...);
 * here the program makes its own, so the benchmark needs no downloads:
 *   soup       uniform random small triangles in the unit cube;
 *   torus      a finely tessellated torus (a closed surface like a scanned model);
 *   clustered  dense clusters of very different scales plus a few large flat
 *              "floor and wall" triangles: sizes vary by orders of magnitude.
 * All are deterministic for a given (n, seed). */
#include "kd_scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Uniform in [0, 1): counter-based, so scenes do not depend on libc's rand. */
static float rnd(uint64_t seed, uint64_t i) {
    return (float)(wh_hash64(seed * 0x9E3779B97F4A7C15ull + i) >> 40) * (1.0f / 16777216.0f);
}

static int scene_alloc(kd_scene *s, uint32_t n) {
    s->ntris = 0;
    s->v = n ? (float *)malloc((size_t)n * 9u * sizeof(float)) : NULL;
    if (n && !s->v) return -1;
    s->ntris = n;
    return 0;
}

static void set_tri(kd_scene *s, uint32_t i, const float a[3], const float b[3], const float c[3]) {
    float *v = s->v + (size_t)i * 9u;
    memcpy(v, a, 12);
    memcpy(v + 3, b, 12);
    memcpy(v + 6, c, 12);
}

/* Triangle around centre c with vertices at most `size` away per axis. */
static void random_tri(kd_scene *s, uint32_t i, const float c[3], float size, uint64_t seed) {
    float p[3][3];
    for (int k = 0; k < 3; ++k)
        for (int a = 0; a < 3; ++a)
            p[k][a] = c[a] + size * (rnd(seed, (uint64_t)i * 16u + (unsigned)(k * 3 + a)) - 0.5f);
    set_tri(s, i, p[0], p[1], p[2]);
}

int kd_scene_soup(kd_scene *s, uint32_t n, uint64_t seed) {
    if (scene_alloc(s, n)) return -1;
    float size = 2.0f * cbrtf(1.0f / (float)(n ? n : 1)); /* ~2 mean spacings */
    for (uint32_t i = 0; i < n; ++i) {
        float c[3] = {rnd(seed, 3ull * i), rnd(seed, 3ull * i + 1), rnd(seed, 3ull * i + 2)};
        random_tri(s, i, c, size, seed + 1u);
    }
    return 0;
}

/* Point of the torus (major radius 1, minor 0.35) at grid angles (i/nu, j/nv). */
static void torus_point(uint32_t i, uint32_t j, uint32_t nu, uint32_t nv, float p[3]) {
    double u = 2.0 * M_PI * (double)(i % nu) / nu, v = 2.0 * M_PI * (double)(j % nv) / nv;
    double r = 1.0 + 0.35 * cos(v);
    p[0] = (float)(r * cos(u));
    p[1] = (float)(r * sin(u));
    p[2] = (float)(0.35 * sin(v));
}

int kd_scene_torus(kd_scene *s, uint32_t n) {
    /* nu * nv quads, two triangles each, nu ~ 3 nv (the ring is longer). */
    uint32_t nv = (uint32_t)sqrt((double)n / 6.0);
    if (nv < 3) nv = 3;
    uint32_t nu = (uint32_t)((double)n / (2.0 * nv));
    if (nu < 3) nu = 3;
    if (scene_alloc(s, 2u * nu * nv)) return -1;
    uint32_t t = 0;
    for (uint32_t i = 0; i < nu; ++i)
        for (uint32_t j = 0; j < nv; ++j) {
            float a[3], b[3], c[3], d[3];
            torus_point(i, j, nu, nv, a);
            torus_point(i + 1, j, nu, nv, b);
            torus_point(i + 1, j + 1, nu, nv, c);
            torus_point(i, j + 1, nu, nv, d);
            set_tri(s, t++, a, b, c);
            set_tri(s, t++, a, c, d);
        }
    return 0;
}

/* Clusters: 1 per 4096 triangles (at least 8), gaussian-ish (sum of three
 * uniforms) around a random centre, the cluster radius log-uniform over two
 * decades (0.002 .. 0.2), each triangle sized to its cluster's local spacing,
 * so triangle sizes differ by orders of magnitude between clusters.  One
 * triangle in 1000 is a large flat piece (0.05 .. 0.3 of the scene) in an
 * axis plane, as floors and walls of architectural scenes are. */
int kd_scene_clustered(kd_scene *s, uint32_t n, uint64_t seed) {
    if (scene_alloc(s, n)) return -1;
    uint32_t nclusters = n / 4096u < 8u ? 8u : n / 4096u;
    for (uint32_t i = 0; i < n; ++i) {
        uint64_t k = wh_hash64(seed ^ (0xC1u + (uint64_t)i)) % nclusters;
        if (rnd(seed + 7u, i) < 0.001f) { /* floor or wall */
            float c[3] = {rnd(seed + 8u, i), rnd(seed + 9u, i), rnd(seed + 10u, i)};
            float size = 0.05f + 0.25f * rnd(seed + 11u, i);
            int flat = (int)(wh_hash64(seed + 12u + i) % 3u);
            float p[3][3];
            for (int v = 0; v < 3; ++v)
                for (int a = 0; a < 3; ++a)
                    p[v][a] =
                        a == flat ? c[a] : c[a] + size * (rnd(seed + 13u, 9ull * i + (unsigned)(v * 3 + a)) - 0.5f);
            set_tri(s, i, p[0], p[1], p[2]);
            continue;
        }
        float centre[3] = {rnd(seed + 1u, 3 * k), rnd(seed + 1u, 3 * k + 1), rnd(seed + 1u, 3 * k + 2)};
        float radius = 0.002f * powf(100.0f, rnd(seed + 2u, k));
        float members = (float)n / (float)nclusters;
        float spacing = radius * cbrtf(1.0f / members);
        float c[3];
        for (int a = 0; a < 3; ++a) {
            float g = rnd(seed + 3u, 9ull * i + (unsigned)a) + rnd(seed + 3u, 9ull * i + 3u + (unsigned)a) +
                      rnd(seed + 3u, 9ull * i + 6u + (unsigned)a) - 1.5f;
            c[a] = centre[a] + radius * g;
        }
        random_tri(s, i, c, 3.0f * spacing, seed + 4u);
    }
    return 0;
}

int kd_scene_generate(kd_scene *s, const char *name, uint32_t n, uint64_t seed) {
    if (!strcmp(name, "soup")) return kd_scene_soup(s, n, seed);
    if (!strcmp(name, "torus")) return kd_scene_torus(s, n);
    if (!strcmp(name, "clustered")) return kd_scene_clustered(s, n, seed);
    s->ntris = 0;
    s->v = NULL;
    return -1;
}

void kd_scene_free(kd_scene *s) {
    free(s->v);
    s->v = NULL;
    s->ntris = 0;
}

void kd_tri_bounds(const kd_scene *s, uint32_t i, float lo[3], float hi[3]) {
    const float *v = s->v + (size_t)i * 9u;
    for (int a = 0; a < 3; ++a) {
        lo[a] = fminf(v[a], fminf(v[3 + a], v[6 + a]));
        hi[a] = fmaxf(v[a], fmaxf(v[3 + a], v[6 + a]));
    }
}

kd_box kd_scene_bounds(const kd_scene *s) {
    kd_box b = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
    for (uint32_t i = 0; i < s->ntris; ++i) {
        float lo[3], hi[3];
        kd_tri_bounds(s, i, lo, hi);
        for (int a = 0; a < 3; ++a) {
            b.lo[a] = fminf(b.lo[a], lo[a]);
            b.hi[a] = fmaxf(b.hi[a], hi[a]);
        }
    }
    return b;
}

void kd_tree_free(kd_tree *t) {
    free(t->nodes);
    free(t->leaves);
    free(t->first);
    free(t->refs);
    memset(t, 0, sizeof *t);
}
