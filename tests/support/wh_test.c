/* SPDX-License-Identifier: MIT */
#include "wh_test.h"
#include "wh_cli.h"

#include <pthread.h>

int wh_test_failures = 0;

int wh_test_finish(const char *name) {
    if (wh_test_failures) {
        printf("%s: FAILED (%d checks)\n", name, wh_test_failures);
        return 1;
    }
    printf("%s: passed\n", name);
    return 0;
}

double wh_now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    unsigned i;
    wh_thread_fn fn;
    void *arg;
    pthread_barrier_t *start;
} thread_job;

static void *thread_main(void *p) {
    thread_job *job = (thread_job *)p;
    pthread_barrier_wait(job->start);
    job->fn(job->i, job->arg);
    return NULL;
}

void wh_run_threads(unsigned n, wh_thread_fn fn, void *arg) {
    pthread_t *tids = (pthread_t *)calloc(n, sizeof *tids);
    thread_job *jobs = (thread_job *)calloc(n, sizeof *jobs);
    pthread_barrier_t start;
    if (!tids || !jobs || pthread_barrier_init(&start, NULL, n)) {
        fprintf(stderr, "wh_run_threads: out of resources\n");
        exit(1);
    }
    for (unsigned i = 0; i < n; ++i) {
        jobs[i] = (thread_job){i, fn, arg, &start};
        if (pthread_create(&tids[i], NULL, thread_main, &jobs[i])) {
            fprintf(stderr, "wh_run_threads: pthread_create failed\n");
            exit(1);
        }
    }
    for (unsigned i = 0; i < n; ++i) pthread_join(tids[i], NULL);
    pthread_barrier_destroy(&start);
    free(tids);
    free(jobs);
}

void wh_test_no_options(int argc, char **argv, const char *about) {
    wh_cli_opt none[] = {WH_CLI_END};
    wh_cli_parse(argc, argv, none, about);
}
