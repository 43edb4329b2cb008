/* SPDX-License-Identifier: MIT */
/* Marching-cubes case tables, generated (Lorensen & Cline 1987, section 3:
 * 256 sign cases of a cell's corners; triangles whose vertices lie on the
 * cell edges with a sign change).
 *
 * Departure from the paper's 15 hand-drawn cases: each case is built from the
 * cell's faces.  On every face the sign-change edges are joined by segments;
 * on an ambiguous face (two diagonal corners inside) each inside corner is cut
 * off on its own.  The rule depends only on the face, so the two cells
 * sharing it agree and the surface has no cracks (the paper's ambiguity,
 * noted by Durst 1988, is resolved consistently).  Every sign-change edge then
 * meets exactly two segments, so the segments close into loops; each loop is
 * fanned into triangles from a vertex whose diagonals stay off the cube's
 * faces (mc_tables_test checks that every mesh edge has two triangles). */
#include "mc_tables.h"

#include <string.h>

/* The six faces as four corners in cyclic order. */
static const uint8_t face[6][4] = {
    {0, 1, 3, 2}, {4, 5, 7, 6}, /* z = 0, z = 1 */
    {0, 1, 5, 4}, {2, 3, 7, 6}, /* y = 0, y = 1 */
    {0, 2, 6, 4}, {1, 3, 7, 5}, /* x = 0, x = 1 */
};

static int edge_of(const mc_tables *t, int a, int b) {
    for (int e = 0; e < 12; ++e)
        if ((t->edge_corner[e][0] == a && t->edge_corner[e][1] == b) ||
            (t->edge_corner[e][0] == b && t->edge_corner[e][1] == a))
            return e;
    return -1;
}

static void link(int nb[12][2], int x, int y) {
    nb[x][nb[x][0] < 0 ? 0 : 1] = y;
    nb[y][nb[y][0] < 0 ? 0 : 1] = x;
}

/* Segments of case m on every face: nb[e] = the two edges e is joined to. */
static void face_segments(const mc_tables *t, int m, int nb[12][2]) {
    for (int f = 0; f < 6; ++f) {
        int in[4], e[4], crossed = 0;
        for (int k = 0; k < 4; ++k) in[k] = (m >> face[f][k]) & 1;
        for (int k = 0; k < 4; ++k) {
            e[k] = edge_of(t, face[f][k], face[f][(k + 1) & 3]); /* edge k: corner k to k+1 */
            crossed += in[k] != in[(k + 1) & 3];
        }
        if (crossed == 2) {
            int x = -1;
            for (int k = 0; k < 4; ++k)
                if (in[k] != in[(k + 1) & 3]) {
                    if (x < 0)
                        x = e[k];
                    else
                        link(nb, x, e[k]);
                }
        } else if (crossed == 4) {
            for (int k = 0; k < 4; ++k) /* cut off each inside corner */
                if (in[k]) link(nb, e[(k + 3) & 3], e[k]);
        }
    }
}

static int edge_on_face(const mc_tables *t, int e, int f) {
    int hits = 0;
    for (int k = 0; k < 4; ++k) hits += face[f][k] == t->edge_corner[e][0] || face[f][k] == t->edge_corner[e][1];
    return hits == 2;
}
static int share_face(const mc_tables *t, int a, int b) {
    for (int f = 0; f < 6; ++f)
        if (edge_on_face(t, a, f) && edge_on_face(t, b, f)) return 1;
    return 0;
}

/* The fan's first vertex: one whose diagonals leave every cube face, so two
 * cells never both lay a triangle against their common face (that would make
 * a mesh edge of four triangles).  0 if no rotation avoids it. */
static int fan_start(const mc_tables *t, const int *loop, int len) {
    for (int r = 0; r < len; ++r) {
        int ok = 1;
        for (int k = 2; k + 1 < len && ok; ++k) ok = !share_face(t, loop[r], loop[(r + k) % len]);
        if (ok) return r;
    }
    return 0;
}

static void build_case(mc_tables *t, int m) {
    int nb[12][2], seen[12] = {0}, n = 0;
    memset(nb, -1, sizeof nb);
    face_segments(t, m, nb);
    for (int start = 0; start < 12; ++start) {
        if (nb[start][0] < 0 || seen[start]) continue;
        int loop[12], len = 0, prev = -1, cur = start;
        while (!seen[cur] && len < 12) { /* walk the loop */
            seen[cur] = 1;
            loop[len++] = cur;
            int next = nb[cur][0] != prev ? nb[cur][0] : nb[cur][1];
            prev = cur;
            cur = next;
        }
        int r = fan_start(t, loop, len);
        for (int k = 1; k + 1 < len; ++k, ++n) { /* fan */
            if (n >= MC_MAX_TRI) continue;       /* counted: build reports it */
            t->tri[m][3 * n] = (int8_t)loop[r];
            t->tri[m][3 * n + 1] = (int8_t)loop[(r + k) % len];
            t->tri[m][3 * n + 2] = (int8_t)loop[(r + k + 1) % len];
        }
    }
    t->ntri[m] = (uint8_t)(n < MC_MAX_TRI ? n : MC_MAX_TRI);
    if (n > t->max_tri) t->max_tri = n;
}

int mc_tables_build(mc_tables *t) {
    memset(t, 0, sizeof *t);
    memset(t->tri, -1, sizeof t->tri);
    int e = 0;
    for (int a = 0; a < 8; ++a)
        for (int b = a + 1; b < 8; ++b)
            if (__builtin_popcount((unsigned)(a ^ b)) == 1) {
                t->edge_corner[e][0] = (uint8_t)a;
                t->edge_corner[e][1] = (uint8_t)b;
                ++e;
            }
    for (int m = 0; m < 256; ++m) build_case(t, m);
    return t->max_tri <= MC_MAX_TRI ? 0 : -1;
}
