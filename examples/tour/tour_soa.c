/* SPDX-License-Identifier: MIT */
/* Tour, object allocator: wa-tor (DynaSOAr's predator-prey benchmark; fish
 * and sharks are objects made and destroyed all the time) on warpheap's
 * object allocator against its static-array version (agents stored in the
 * cell arrays, no allocation).  Both must end with the same grid; the final
 * state is written as wator.png. */
#include "tour.h"
#include "wator_sim.h"
#include "wh_png.h"

void tour_soa(tour *t) {
    opts o;
    memset(&o, 0, sizeof o);
    o.w = t->gpu ? (t->quick ? 512 : 2048) : (t->quick ? 96 : 256);
    o.h = t->gpu ? (t->quick ? 512 : 2560) : (t->quick ? 80 : 256);
    o.iters = t->gpu ? (t->quick ? 100 : 300) : (t->quick ? 30 : 100);
    o.spawn = 4;
    o.boost = 4;
    o.start = 2;
    o.dev = t->gpu;
    o.quiet = 1;
    o.heap = (size_t)((uint64_t)o.w * o.h * 96 + ((uint64_t)16 << 20));
    grid ours, theirs;
    double ts = run_warpheap(&o, &ours), tb = run_static(&o, o.dev, &theirs);
    if (compare("warpheap", &ours, "static arrays", &theirs)) tour_fail("object allocator", "the final grids differ");
    char what[72], path[4096];
    snprintf(what, sizeof what, "wa-tor %ux%u, %u iterations, time per iteration", o.w, o.h, o.iters);
    tour_report(t, "object allocator", what, ts * 1e3 / o.iters, "static arrays (no allocator)", tb * 1e3 / o.iters);
    snprintf(path, sizeof path, "%s/wator.png", t->out);
    unsigned char *rgb = grid_rgb(&ours, o.w, o.h);
    if (!rgb || wh_png_write_rgb(path, rgb, o.w, o.h)) tour_fail("object allocator", "cannot write wator.png");
    printf("  picture of the final state: %s\n", path);
    free(rgb);
    grid *gs[2] = {&ours, &theirs};
    for (int k = 0; k < 2; ++k) free(gs[k]->kind), free(gs[k]->egg), free(gs[k]->energy);
}
