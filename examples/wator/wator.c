/* SPDX-License-Identifier: MIT */
/* Wa-Tor (predator and prey on a torus) on the object allocator: DynaSOAr's
 * wa-tor (Table 1 of the paper): classes Cell, Agent (abstract), Fish and
 * Shark (subclasses of Agent); 8 parallel_do per iteration; fish and sharks
 * are created and destroyed all the time.
 *
 * Moves are decided by a request/grant protocol so that the result does not
 * depend on thread scheduling: an agent requests one neighbour cell (chosen by
 * a counter-based random number of (iteration, phase, cell)), every cell grants
 * one of its requesters (same kind of number), granted agents move.  Fish
 * spawn into the cell they leave when their egg timer reached the threshold;
 * sharks prefer neighbours with fish, eat them (destroying the fish object),
 * gain energy, lose one unit per iteration and die at 0.
 *
 * Variants in one binary: warpheap; a static SOA baseline whose agents live in
 * the cell arrays (the paper's baseline); CUDA device malloc with per-type
 * arrays of object pointers compacted after each do-all (the paper's "other
 * allocators"; GPU only).  --check requires identical final grids.
 *
 *   wh_wator [--w=2048] [--h=2560] [--iters=500] [--spawn=4] [--boost=4] [--start=2]
 *            [--mode=all|pair|warpheap|static|malloc] [--cpu] [--check] [--ppm=FILE]
 *            [--csv=FILE] [--frag=FILE] [--heap-mb=N] [--max-seconds=S] [--place=N]
 */
#include "wator_sim.h"
#include "wator_malloc.h" /* the CUDA malloc variant */

static void write_picture(const char *path, const grid *g, uint32_t w, uint32_t h) {
    unsigned char *img = grid_rgb(g, w, h);
    if (!img) {
        fprintf(stderr, "%s: no memory for the picture\n", path);
        return;
    }
    app_write_ppm(path, (int)w, (int)h, img);
    free(img);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines survive a timeout */
    app_opts ao = app_opts_new();
    opts o;
    opts_defaults(&o);
    wh_cli_opt cli[] = {
        WT_CLI_RULES(&o),
        WH_CLI_STRING("frag", &o.frag, "write the warpheap variant's fragmentation per iteration to this CSV file"),
        APP_CLI_COMMON(&ao, "all|pair|warpheap|static|malloc"),
        APP_CLI_LIMITS(&ao),
        APP_CLI_PLACE(&ao, "fish and sharks created in a N x N tile of cells"),
        WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "Wa-Tor (fish and sharks on a torus) on the object allocator.");
    app_opts_done(&ao);
    o.dev = ao.dev;
    o.quiet = 0;
    o.place = ao.place;
    uint64_t n = (uint64_t)o.w * o.h;
    o.heap = app_heap_opt(&ao, (size_t)(n * 96 + ((uint64_t)16 << 20)));
    int check = ao.check;
    if (o.w < 3 || o.h < 3 || o.spawn < 1 || o.start < 1) {
        fprintf(stderr, "wator: bad size or parameters\n");
        return 2;
    }
    char env[512];
    app_env(env, sizeof env, o.dev);
    printf("wator: %ux%u cells, %u iterations, spawn %u, boost %u, start %u, heap %zu MiB, %s\n", o.w, o.h, o.iters,
           o.spawn, o.boost, o.start, o.heap >> 20, env);
    grid a, b, m;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&m, 0, sizeof m);
    double ts[3] = {-1, -1, -1};
    long long done[3] = {o.iters, o.iters, o.iters};
    app_time_cap_opt(&ao);
    if (ao.pair || check || app_wants(&ao, "warpheap")) ts[0] = run_warpheap(&o, &a), app_take_done(&done[0]);
    if (ao.pair || check || app_wants(&ao, "static")) ts[1] = run_static(&o, o.dev, &b), app_take_done(&done[1]);
#if defined(__CUDACC__)
    if (o.dev && app_wants(&ao, "malloc")) ts[2] = run_malloc(&o, &m), app_take_done(&done[2]);
#endif
    const char *names[3] = {"warpheap", "static", "malloc"};
    app_print_times(3, names, ts, done);
    int rc = 0;
    if (check) {
        rc |= compare("warpheap", &a, "static", &b) != 0;
        if (m.n) rc |= compare("malloc", &m, "static", &b) != 0;
    }
    if (ao.ppm) write_picture(ao.ppm, a.n ? &a : &b, o.w, o.h);
    if (ao.csv) app_csv_times(ao.csv, "wator", 3, names, n, done, ts, env);
    grid_free(&a);
    grid_free(&b);
    grid_free(&m);
    return rc;
}
