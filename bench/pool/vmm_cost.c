/* SPDX-License-Identifier: MIT */
/* What the driver's virtual-memory calls cost (the pool's footprint
 * at 1 GiB blocks depends on how much it may remap per operation).
 *
 * For each size: cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap and
 * cuMemRelease timed one by one, and a *move* of a handle that exists (unmap
 * at one address, map at another, set access), which is what a pool could do
 * instead of release + create when it takes the memory under a free block to
 * back a new one.  Also: n handles of one size mapped side by side with one
 * access call for all of them, and whether cuMemMap takes a nonzero offset
 * into a handle.  Medians of REPS; host clock; no kernel runs.
 * Last, a move with its unmap done elsewhere: the handle mapped at the new
 * address while still mapped at the old one, and the old mapping unmapped
 * after, on the same thread or on a second one, to see whether the driver
 * runs an unmap beside another thread's map and access or serialises them.
 * Usage: wh_vmm_cost [--csv=FILE]
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wh_cli.h"

#define REPS 9
#define MIB  (1024ull * 1024ull)

#define DRV(call)                                                              \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS) {                                              \
            const char *s_ = "?";                                              \
            cuGetErrorString(r_, &s_);                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_); \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_d);
    return v[n / 2];
}

static CUmemAllocationProp g_prop;
static CUmemAccessDesc g_acc;

static CUmemGenericAllocationHandle create(size_t bytes, double *us) {
    CUmemGenericAllocationHandle h;
    double t = now_us();
    DRV(cuMemCreate(&h, bytes, &g_prop, 0));
    if (us) *us = now_us() - t;
    return h;
}

static double map_access(CUdeviceptr va, size_t bytes, CUmemGenericAllocationHandle h, double *map_us) {
    double t = now_us();
    DRV(cuMemMap(va, bytes, 0, h, 0));
    double t1 = now_us();
    DRV(cuMemSetAccess(va, bytes, &g_acc, 1));
    double t2 = now_us();
    if (map_us) *map_us = t1 - t;
    return t2 - t1;
}

static double timed_unmap(CUdeviceptr va, size_t bytes) {
    double t = now_us();
    DRV(cuMemUnmap(va, bytes));
    return now_us() - t;
}

static double timed_release(CUmemGenericAllocationHandle h) {
    double t = now_us();
    DRV(cuMemRelease(h));
    return now_us() - t;
}

/* ---- the unmap on a second thread ---- */
#define CQ 64
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    CUdeviceptr va[CQ];
    size_t bytes;
    unsigned long posted, done;
    int stop;
    CUcontext ctx;
    double busy_us;
} g_q;

static void *unmapper(void *arg) {
    (void)arg;
    DRV(cuCtxSetCurrent(g_q.ctx));
    pthread_mutex_lock(&g_q.mu);
    for (;;) {
        while (g_q.done == g_q.posted && !g_q.stop) pthread_cond_wait(&g_q.cv, &g_q.mu);
        if (g_q.done == g_q.posted) break;
        CUdeviceptr va = g_q.va[g_q.done % CQ];
        pthread_mutex_unlock(&g_q.mu);
        double t = now_us();
        DRV(cuMemUnmap(va, g_q.bytes));
        double dt = now_us() - t;
        pthread_mutex_lock(&g_q.mu);
        g_q.busy_us += dt;
        g_q.done++;
        pthread_cond_broadcast(&g_q.cv);
    }
    pthread_mutex_unlock(&g_q.mu);
    return NULL;
}

static void q_post(CUdeviceptr va) {
    pthread_mutex_lock(&g_q.mu);
    while (g_q.posted - g_q.done >= CQ) pthread_cond_wait(&g_q.cv, &g_q.mu);
    g_q.va[g_q.posted % CQ] = va;
    g_q.posted++;
    pthread_cond_broadcast(&g_q.cv);
    pthread_mutex_unlock(&g_q.mu);
}

static void q_wait(unsigned long upto) {
    pthread_mutex_lock(&g_q.mu);
    while (g_q.done < upto) pthread_cond_wait(&g_q.cv, &g_q.mu);
    pthread_mutex_unlock(&g_q.mu);
}

/* n handles of p bytes moved back and forth between two halves, m moves:
 * mode 0 unmap, map, access (the pool's move); 1 map and access at the new
 * address, then unmap the old, one thread; 2 the same with the unmap posted
 * to a second thread.  Prints the main thread's median and mean per move and
 * the wall time per move (mode 2: until the last unmap is done). */
static void moves(FILE *f, CUdeviceptr va, size_t half, size_t p, int n, int m, int mode) {
    CUmemGenericAllocationHandle *h = malloc(n * sizeof *h);
    int *side = calloc(n, sizeof *side);
    unsigned long *unmap_seq = calloc(n, sizeof *unmap_seq); /* post number freeing j's other spot */
    double *t = malloc(m * sizeof *t);
    for (int j = 0; j < n; ++j) {
        h[j] = create(p, NULL);
        map_access(va + j * p, p, h[j], NULL);
    }
    pthread_t th;
    if (mode == 2) {
        g_q.bytes = p;
        g_q.posted = g_q.done = 0;
        g_q.stop = 0;
        g_q.busy_us = 0;
        if (pthread_create(&th, NULL, unmapper, NULL)) {
            fprintf(stderr, "wh_vmm_cost: pthread_create failed\n");
            exit(1);
        }
    }
    double w0 = now_us();
    for (int i = 0; i < m; ++i) {
        int j = i % n;
        CUdeviceptr from = va + (side[j] ? half : 0) + j * p, to = va + (side[j] ? 0 : half) + j * p;
        if (mode == 2) q_wait(unmap_seq[j]); /* the spot we map at is unmapped */
        double t0 = now_us();
        if (mode == 0) DRV(cuMemUnmap(from, p));
        DRV(cuMemMap(to, p, 0, h[j], 0));
        DRV(cuMemSetAccess(to, p, &g_acc, 1));
        if (mode == 1) DRV(cuMemUnmap(from, p));
        if (mode == 2) {
            q_post(from);
            unmap_seq[j] = g_q.posted;
        }
        t[i] = now_us() - t0;
        side[j] ^= 1;
    }
    if (mode == 2) {
        q_wait(g_q.posted);
        pthread_mutex_lock(&g_q.mu);
        g_q.stop = 1;
        pthread_cond_broadcast(&g_q.cv);
        pthread_mutex_unlock(&g_q.mu);
        pthread_join(th, NULL);
    }
    double wall = (now_us() - w0) / m, mean = 0;
    for (int i = 0; i < m; ++i) mean += t[i] / m;
    double med = median(t, m);
    static const char *names[] = {"unmap, map, access", "map, access, unmap (aliased)",
                                  "map, access; unmap on a 2nd thread"};
    printf("| %zu | %s | %.1f | %.1f | %.1f |\n", (size_t)(p / MIB), names[mode], med, mean, wall);
    if (mode == 2) printf("|  | (2nd thread busy in cuMemUnmap: %.1f us a move) | | | |\n", g_q.busy_us / m);
    if (f) fprintf(f, "move_mode%d,%zu,,,,,,%.2f,%.2f,%.2f\n", mode, (size_t)(p / MIB), med, mean, wall);
    for (int j = 0; j < n; ++j) {
        DRV(cuMemUnmap(va + (side[j] ? half : 0) + j * p, p));
        DRV(cuMemRelease(h[j]));
    }
    free(h);
    free(side);
    free(unmap_seq);
    free(t);
}

int main(int argc, char **argv) {
    const char *csv = NULL;
    wh_cli_opt cli[] = {WH_CLI_STRING("csv", &csv, "write the results to this CSV file"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli, "What the driver's virtual-memory calls cost, size by size.");
    DRV(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    DRV(cuDeviceGet(&dev, 0));
    DRV(cuDevicePrimaryCtxRetain(&ctx, dev));
    DRV(cuCtxSetCurrent(ctx));
    char name[256];
    DRV(cuDeviceGetName(name, sizeof name, dev));
    int drv = 0;
    DRV(cuDriverGetVersion(&drv));
    memset(&g_prop, 0, sizeof g_prop);
    g_prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    g_prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    g_prop.location.id = 0;
    memset(&g_acc, 0, sizeof g_acc);
    g_acc.location = g_prop.location;
    g_acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    size_t gran = 0;
    DRV(cuMemGetAllocationGranularity(&gran, &g_prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    printf("# %s, driver API %d, granule %zu B, medians of %d (us)\n", name, drv, gran, REPS);

    const size_t range = 8ull << 30; /* two halves: a and b */
    CUdeviceptr va;
    DRV(cuMemAddressReserve(&va, 2 * range, 0, 0, 0));
    FILE *f = csv ? fopen(csv, "w") : NULL;
    if (f) fprintf(f, "test,mib,create_us,map_us,access_us,unmap_us,release_us,move_us\n");
    printf("| MiB | create | map | set access | unmap | release | move (unmap + map + access) |\n"
           "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    const size_t sizes[] = {2, 8, 32, 64, 128, 256, 512, 1024};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k) {
        size_t bytes = sizes[k] * MIB;
        double c[REPS], m[REPS], a[REPS], u[REPS], r[REPS], mv[REPS];
        for (int i = 0; i < REPS; ++i) {
            CUmemGenericAllocationHandle h = create(bytes, &c[i]);
            a[i] = map_access(va, bytes, h, &m[i]);
            double t = now_us(); /* the move: a -> b */
            DRV(cuMemUnmap(va, bytes));
            map_access(va + range, bytes, h, NULL);
            mv[i] = now_us() - t;
            u[i] = timed_unmap(va + range, bytes);
            r[i] = timed_release(h);
        }
        double mc = median(c, REPS), mm = median(m, REPS), ma = median(a, REPS), mu = median(u, REPS),
               mr = median(r, REPS), mmv = median(mv, REPS);
        printf("| %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", sizes[k], mc, mm, ma, mu, mr, mmv);
        if (f) fprintf(f, "single,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n", sizes[k], mc, mm, ma, mu, mr, mmv);
        fflush(stdout);
    }

    /* n handles side by side (one 256-MiB stretch) and one access call */
    printf("\n| handles x MiB | map all | one access | unmap each | unmap all at once |\n| --- | ---: | ---: | ---: | "
           "---: |\n");
    const size_t pieces[] = {2, 8, 32, 64};
    for (size_t k = 0; k < sizeof pieces / sizeof *pieces; ++k) {
        size_t p = pieces[k] * MIB, n = (256 * MIB) / p;
        CUmemGenericAllocationHandle *h = malloc(n * sizeof *h);
        double ma[REPS], aa[REPS], ue[REPS], ua[REPS];
        for (int i = 0; i < REPS; ++i) {
            for (size_t j = 0; j < n; ++j) h[j] = create(p, NULL);
            double t = now_us();
            for (size_t j = 0; j < n; ++j) DRV(cuMemMap(va + j * p, p, 0, h[j], 0));
            double t1 = now_us();
            DRV(cuMemSetAccess(va, n * p, &g_acc, 1));
            double t2 = now_us();
            ma[i] = t1 - t;
            aa[i] = t2 - t1;
            if (i % 2 == 0) {
                t = now_us();
                for (size_t j = 0; j < n; ++j) DRV(cuMemUnmap(va + j * p, p));
                ue[i / 2] = now_us() - t;
            } else {
                t = now_us();
                CUresult rr = cuMemUnmap(va, n * p); /* one call over several mappings, if allowed */
                ua[i / 2] = rr == CUDA_SUCCESS ? now_us() - t : -1.0;
                if (rr != CUDA_SUCCESS)
                    for (size_t j = 0; j < n; ++j) DRV(cuMemUnmap(va + j * p, p));
            }
            for (size_t j = 0; j < n; ++j) DRV(cuMemRelease(h[j]));
        }
        double a1 = median(ma, REPS), a2 = median(aa, REPS), a3 = median(ue, REPS / 2 + 1), a4 = median(ua, REPS / 2);
        printf("| %zu x %zu | %.1f | %.1f | %.1f | %.1f |\n", n, pieces[k], a1, a2, a3, a4);
        if (f)
            fprintf(f, "side_by_side_%zux%zu,%zu,,%.2f,%.2f,%.2f,,%.2f\n", n, pieces[k], 256 * (size_t)1, a1, a2, a3,
                    a4);
        free(h);
    }

    /* a nonzero offset into a handle */
    {
        CUmemGenericAllocationHandle h = create(64 * MIB, NULL);
        CUresult r = cuMemMap(va, 2 * MIB, 2 * MIB, h, 0);
        const char *s = "?";
        cuGetErrorString(r, &s);
        printf("\ncuMemMap at offset 2 MiB into a 64-MiB handle: %s\n", r == CUDA_SUCCESS ? "works" : s);
        if (r == CUDA_SUCCESS) DRV(cuMemUnmap(va, 2 * MIB));
        DRV(cuMemRelease(h));
    }

    /* moves with the unmap elsewhere */
    g_q.ctx = ctx;
    pthread_mutex_init(&g_q.mu, NULL);
    pthread_cond_init(&g_q.cv, NULL);
    printf("\n| MiB | move | main thread median | mean | wall per move |\n| ---: | --- | ---: | ---: | ---: |\n");
    const size_t mp[] = {64, 112};
    for (size_t k = 0; k < sizeof mp / sizeof *mp; ++k)
        for (int mode = 0; mode < 3; ++mode) moves(f, va, range, mp[k] * MIB, 16, 96, mode);
    DRV(cuMemAddressFree(va, 2 * range));
    if (f) fclose(f);
    return 0;
}
