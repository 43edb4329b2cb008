/* SPDX-License-Identifier: MIT */
/* The bitmap stress as a demo: operations per second of the hierarchical
 * bitmap under many threads, on the CPU backend and, when a GPU is found, on
 * the GPU -- with the full consistency verdict after each run.
 *
 *   wh_bitmap_bench [--threads=N] [--ops=N] [--csv=FILE]
 */
#include <stdio.h>
#include <unistd.h>

#include "stress.h"
#include "wh_cli.h"

static void csv_row(FILE *f, const char *backend, const wh_stress_config *c, const wh_stress_result *r) {
    if (!f) return;
    fprintf(f, "%s,%llu,%u,%llu,%.6f,%.4g,%llu,%llu,%llu,%s\n", backend, (unsigned long long)c->nbits, r->threads,
            (unsigned long long)r->ops, r->seconds, r->seconds > 0 ? (double)r->ops / r->seconds : 0.0,
            r->counts.violations, (unsigned long long)r->inconsistent, (unsigned long long)r->owned_twice,
            wh_stress_ok(r) ? "ok" : "FAIL");
}

int main(int argc, char **argv) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t threads = (uint32_t)(cores > 16 ? cores : 16);
    uint32_t ops = 100000;
    const char *csv = NULL;
    wh_cli_opt cli[] = {WH_CLI_UINT("threads", &threads, "CPU threads (the cores here, at least 16)"),
                        WH_CLI_UINT("ops", &ops, "operations per CPU thread"),
                        WH_CLI_STRING("csv", &csv, "write the results to this CSV file"), WH_CLI_END};
    wh_cli_parse(argc, argv, cli,
                 "The hierarchical bitmap's stress as a demo: operations per second on the CPU "
                 "backend and, where a GPU is found, on the GPU.");
    FILE *f = csv ? fopen(csv, "w") : NULL;
    if (f) fprintf(f, "backend,bits,threads,ops,seconds,ops_per_s,violations,inconsistent,owned_twice,verdict\n");

    printf("warpheap %s -- hierarchical lock-free bitmap stress (DynaSOAr 4.1)\n", wh_version_string());
    printf("each thread: 45%% allocate a bit, 40%% release one it holds, 7%% steal a random bit, 8%% search\n\n");
    int failed = 0;
    wh_stress_config cpu[] = {
        {8192, threads, ops, 8192 * 9 / 10 / threads},
        {1u << 20, threads, ops, 4096},
    };
    for (unsigned k = 0; k < 2; ++k) {
        wh_stress_result r;
        printf("[cpu %u/2] %u threads x %u ops on %llu bits ...\n", k + 1, threads, ops,
               (unsigned long long)cpu[k].nbits);
        fflush(stdout);
        if (wh_stress_cpu(&cpu[k], &r)) return 1;
        wh_stress_print("cpu", &cpu[k], &r);
        csv_row(f, "cpu", &cpu[k], &r);
        failed |= !wh_stress_ok(&r);
    }
#if WH_HAVE_CUDA
    if (wh_cuda_available()) {
        wh_stress_config gpu[] = {{1u << 16, 0, 400, 1}, {1u << 22, 0, 400, 4}};
        for (unsigned k = 0; k < 2; ++k) {
            wh_stress_result r;
            printf("[gpu %u/2] full grid x 400 ops on %llu bits ...\n", k + 1, (unsigned long long)gpu[k].nbits);
            fflush(stdout);
            if (wh_stress_gpu(&gpu[k], &r)) return 1;
            wh_stress_print("gpu", &gpu[k], &r);
            csv_row(f, "gpu", &gpu[k], &r);
            failed |= !wh_stress_ok(&r);
        }
    } else {
        printf("\n(no GPU found: CPU backend only)\n");
    }
#else
    printf("\n(built without CUDA: CPU backend only)\n");
#endif
    if (f) fclose(f);
    printf("\n%s\n", failed ? "FAILED: see the verdicts above" : "all runs consistent");
    return failed;
}
