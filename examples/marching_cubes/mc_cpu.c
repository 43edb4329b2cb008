/* SPDX-License-Identifier: MIT */
/* The marching-cubes example on the CPU backend: the same field, tables,
 * cell order and arena ring as marching_cubes.cu (the meshing is mc_ref.c),
 * one host thread.  Each frame's mesh goes into a ring of K spans turned over
 * by wh_arena_replace_span_async (count = triangles, stride 36) in a RING
 * arena only a few granules above the bytes K meshes need (a first pass
 * counts every frame), and, for reference, into a worst-case buffer; the two
 * must be byte-identical, the spans' parts must not overlap, no frame may be
 * dropped, and the heap walk must pass.  --png=FILE renders the last frame.
 * A CI test at a small size. */
#include "mc_ref.h"
#include "mc_render.h"
#include "wh_cli.h"
#include "wh_png.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRI_FLOATS 9

int main(int argc, char **argv) {
    int n = 32, frames = 24;
    int K = 3, balls = 8, bad = 0;
    const char *png = "";
    wh_cli_opt cli[] = {
        WH_CLI_INT("n", &n, "grid points per side, 8 .. 256"), WH_CLI_INT("frames", &frames, "frames, at least 3"),
        WH_CLI_STRING("png", &png, "render the last frame into this PNG file (empty: none)"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli,
                 "The marching-cubes example on the CPU backend, its mesh ring checked against a "
                 "worst-case buffer.");
    if (n < 8 || n > 256 || frames < K) {
        fprintf(stderr, "mc_cpu: --n in [8,256], --frames >= 3\n");
        return 1;
    }
    mc_tables t;
    if (mc_tables_build(&t)) {
        fprintf(stderr, "mc_cpu: tables\n");
        return 1;
    }
    mc_grid g;
    int grid_bad = mc_grid_init(&g, n);
    float *ref = malloc((size_t)g.cells * (size_t)t.max_tri * TRI_FLOATS * sizeof(float)); /* worst case */
    uint64_t *hist = calloc((size_t)frames, sizeof(uint64_t));
    if (grid_bad || !ref || !hist) {
        fprintf(stderr, "mc_cpu: host memory\n");
        return 1;
    }
    for (int f = 0; f < frames; ++f) hist[f] = mc_ref_count(&g, &t, (uint32_t)f, balls); /* counts only */
    uint64_t needed, bytes = mc_ring_bytes(hist, frames, K, &needed);
    wh_arena *a = NULL;
    wh_arena_config cfg = {.bytes = (size_t)bytes,
                           .max_blocks = 64,
                           .backend = WH_ARENA_CPU,
                           .policy = WH_ARENA_RING,
                           .index = WH_BLOCKS_LIST};
    if (wh_arena_create(&a, &cfg) != WH_OK) {
        fprintf(stderr, "mc_cpu: setup: %s\n", wh_last_error());
        return 1;
    }
    wh_arena_span ring[3], ref_span = wh_arena_span_of(ref);
    memset(ring, 0, sizeof ring);
    for (int f = 0; f < frames; ++f) {
        size_t tris = (size_t)mc_ref_count(&g, &t, (uint32_t)f, balls);
        wh_arena_span *sp = &ring[f % K];
        if (wh_arena_replace_span_async(a, &tris, TRI_FLOATS * sizeof(float), sp, NULL) != WH_OK) { /* the command */
            fprintf(stderr, "frame %d: %s\n", f, wh_last_error());
            bad = 1;
            break;
        }
        if (!sp->part[0].ptr) {
            fprintf(stderr, "frame %d: %s\n", f, wh_strerror(wh_arena_status(a)));
            bad = 1;
            break;
        }
        mc_ref_generate(&g, &t, sp);
        mc_ref_generate(&g, &t, &ref_span);
        for (size_t j = 0; j < tris; ++j)
            if (memcmp(wh_arena_span_at(sp, j, 36), ref + j * TRI_FLOATS, 36)) {
                fprintf(stderr, "frame %d differs at triangle %zu\n", f, j);
                bad = 1;
                break;
            }
    }
    for (int i = 0; i < 2 * K; ++i) /* the spans' parts never overlap */
        for (int j = i + 1; j < 2 * K; ++j) {
            const wh_arena_span *si = &ring[i / 2], *sj = &ring[j / 2];
            uint64_t ai = si->part[i % 2].ptr, ni = i % 2 ? si->count - si->count0 : si->count0;
            uint64_t aj = sj->part[j % 2].ptr, nj = j % 2 ? sj->count - sj->count0 : sj->count0;
            if (ai && aj && ai < aj + nj * 36u && aj < ai + ni * 36u) {
                fprintf(stderr, "parts %d and %d overlap\n", i, j);
                bad = 1;
            }
        }
    wh_arena_stats st;
    wh_blocks_report rep;
    if (wh_arena_stats_get(a, &st) != WH_OK) {
        fprintf(stderr, "stats: %s\n", wh_last_error());
        return 1;
    }
    if (wh_arena_check(a, &rep) != WH_OK || rep.used < (uint32_t)K) {
        fprintf(stderr, "walk: %s\n", wh_last_error());
        bad = 1;
    }
    if (st.first_status != WH_OK || st.failures) bad = 1;
    printf("mc_cpu: %d^3, %d frames, last %llu triangles; RING arena of %.4f MiB = %.3f x the %.4f MiB needed, peak in "
           "use %.4f MiB, %llu failures; status %s\n",
           n, frames, (unsigned long long)hist[frames - 1], st.region_bytes / 1048576.0,
           (double)st.region_bytes / (double)needed, needed / 1048576.0, st.peak_used / 1048576.0,
           (unsigned long long)st.failures, wh_strerror((wh_status)st.first_status));
    if (*png) {
        int w = 960, h = 960;
        uint8_t *rgb = malloc((size_t)w * h * 3);
        float *mesh = malloc((size_t)hist[frames - 1] * 36u + 36u); /* the span, contiguous */
        for (uint64_t j = 0; mesh && j < hist[frames - 1]; ++j)
            memcpy(mesh + j * TRI_FLOATS, wh_arena_span_at(&ring[(frames - 1) % K], j, 36), 36);
        if (rgb && mesh) mc_render(mesh, hist[frames - 1], rgb, w, h, 0.6f);
        if (!rgb || !mesh || wh_png_write_rgb(png, rgb, (uint32_t)w, (uint32_t)h)) {
            fprintf(stderr, "cannot write %s\n", png);
            bad = 1;
        } else
            printf("picture: %s\n", png);
        free(rgb);
        free(mesh);
    }
    for (int k = 0; k < K; ++k) wh_arena_free_batch_async(a, ring[k].part, ring[k].part[1].ptr ? 2u : 1u, NULL);
    wh_arena_destroy(a);
    mc_grid_free(&g);
    free(ref);
    free(hist);
    printf("mc_cpu: %s\n", bad ? "FAILED" : "passed");
    return bad;
}
