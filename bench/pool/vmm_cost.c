/* What the driver's virtual-memory calls cost (issue 6: the pool's footprint
 * at 1 GiB blocks depends on how much it may remap per operation).
 *
 * For each size: cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap and
 * cuMemRelease timed one by one, and a *move* of a handle that exists (unmap
 * at one address, map at another, set access), which is what a pool could do
 * instead of release + create when it takes the memory under a free block to
 * back a new one.  Also: n handles of one size mapped side by side with one
 * access call for all of them, and whether cuMemMap takes a nonzero offset
 * into a handle.  Medians of REPS; host clock; no kernel runs.
 * Usage: wh_vmm_cost [--csv=FILE]
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 9
#define MIB (1024ull * 1024ull)

#define DRV(call)                                                                              \
    do {                                                                                       \
        CUresult r_ = (call);                                                                  \
        if (r_ != CUDA_SUCCESS) {                                                              \
            const char *s_ = "?";                                                              \
            cuGetErrorString(r_, &s_);                                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_);                 \
            exit(1);                                                                           \
        }                                                                                      \
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

int main(int argc, char **argv) {
    const char *csv = NULL;
    for (int i = 1; i < argc; ++i)
        if (!strncmp(argv[i], "--csv=", 6)) csv = argv[i] + 6;
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

    const size_t range = 8ull << 30;                   /* two halves: a and b */
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
            double t = now_us();                       /* the move: a -> b */
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
    printf("\n| handles x MiB | map all | one access | unmap each | unmap all at once |\n| --- | ---: | ---: | ---: | ---: |\n");
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
                CUresult rr = cuMemUnmap(va, n * p);   /* one call over several mappings, if allowed */
                ua[i / 2] = rr == CUDA_SUCCESS ? now_us() - t : -1.0;
                if (rr != CUDA_SUCCESS)
                    for (size_t j = 0; j < n; ++j) DRV(cuMemUnmap(va + j * p, p));
            }
            for (size_t j = 0; j < n; ++j) DRV(cuMemRelease(h[j]));
        }
        double a1 = median(ma, REPS), a2 = median(aa, REPS), a3 = median(ue, REPS / 2 + 1),
               a4 = median(ua, REPS / 2);
        printf("| %zu x %zu | %.1f | %.1f | %.1f | %.1f |\n", n, pieces[k], a1, a2, a3, a4);
        if (f) fprintf(f, "side_by_side_%zux%zu,%zu,,%.2f,%.2f,%.2f,,%.2f\n", n, pieces[k], 256 * (size_t)1, a1, a2, a3, a4);
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
    DRV(cuMemAddressFree(va, 2 * range));
    if (f) fclose(f);
    return 0;
}
