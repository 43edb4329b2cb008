/* SPDX-License-Identifier: MIT */
/* The generated marching-cubes tables make closed surfaces: on random fields
 * (every case, the ambiguous faces included) whose border is outside, every
 * mesh edge is shared by exactly two triangles and no triangle is degenerate.
 * A vertex is named by its grid edge (lower corner, axis), so two cells that
 * share a face agree on it exactly when their tables agree. */
#include "mc_tables.h"
#include "wh_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 14 /* grid points per axis */

static uint64_t key(int x, int y, int z, int a, int b) { /* the grid edge of corners a, b */
    int lo = a < b ? a : b, axis = (a ^ b) == 1 ? 0 : (a ^ b) == 2 ? 1 : 2;
    x += lo & 1;
    y += (lo >> 1) & 1;
    z += (lo >> 2) & 1;
    return (((uint64_t)z * N + (uint64_t)y) * N + (uint64_t)x) * 3u + (uint64_t)axis;
}

static int cmp(const void *p, const void *q) {
    uint64_t a = *(const uint64_t *)p, b = *(const uint64_t *)q;
    return a < b ? -1 : a > b;
}

/* Returns the number of problems in one random field. */
static int check_field(const mc_tables *t, unsigned seed, int *cases_seen) {
    static int inside[N][N][N];
    static uint64_t edges[(N - 1) * (N - 1) * (N - 1) * MC_MAX_TRI * 3];
    srand(seed);
    for (int z = 0; z < N; ++z)
        for (int y = 0; y < N; ++y)
            for (int x = 0; x < N; ++x)
                inside[z][y][x] = x > 0 && y > 0 && z > 0 && x < N - 1 && y < N - 1 && z < N - 1 && rand() % 2;
    size_t ne = 0;
    int bad = 0;
    for (int z = 0; z + 1 < N; ++z)
        for (int y = 0; y + 1 < N; ++y)
            for (int x = 0; x + 1 < N; ++x) {
                int m = 0;
                for (int c = 0; c < 8; ++c) m |= inside[z + ((c >> 2) & 1)][y + ((c >> 1) & 1)][x + (c & 1)] << c;
                cases_seen[m] = 1;
                for (int k = 0; k < t->ntri[m]; ++k) {
                    uint64_t v[3];
                    for (int j = 0; j < 3; ++j) {
                        int e = t->tri[m][3 * k + j];
                        v[j] = key(x, y, z, t->edge_corner[e][0], t->edge_corner[e][1]);
                    }
                    if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2]) bad++;
                    for (int j = 0; j < 3; ++j) { /* undirected edge as one number */
                        uint64_t a = v[j], b = v[(j + 1) % 3];
                        edges[ne++] = a < b ? a * 100000u + b : b * 100000u + a;
                    }
                }
            }
    qsort(edges, ne, sizeof edges[0], cmp);
    for (size_t i = 0; i < ne;) {
        size_t j = i;
        while (j < ne && edges[j] == edges[i]) ++j;
        if (j - i != 2) bad++; /* open or non-manifold */
        i = j;
    }
    return bad;
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "The generated marching-cubes tables make closed surfaces.");
    mc_tables t;
    if (mc_tables_build(&t)) {
        printf("mc_tables_test: FAILED (build)\n");
        return 1;
    }
    int seen[256] = {0}, bad = 0, nseen = 0;
    for (unsigned s = 1; s <= 40; ++s) bad += check_field(&t, s, seen);
    for (int m = 0; m < 256; ++m) nseen += seen[m];
    int empty_ok = t.ntri[0] == 0 && t.ntri[255] == 0, ok = bad == 0 && empty_ok && nseen == 256 && t.max_tri <= 5;
    printf("mc_tables_test: %d cases seen, max %d triangles per case, %d problems: %s\n", nseen, t.max_tri, bad,
           ok ? "passed" : "FAILED");
    return ok ? 0 : 1;
}
