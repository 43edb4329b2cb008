/* SPDX-License-Identifier: MIT */
/* Minimal test support: checks that count failures instead of aborting, so a
 * test reports every broken expectation, and a pthread fan-out helper. */
#ifndef WH_TEST_H
#define WH_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

extern int wh_test_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            ++wh_test_failures;                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)
#define CHECK_EQ_U64(a, b)                                                                                          \
    do {                                                                                                            \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                                            \
        if (a_ != b_) {                                                                                             \
            ++wh_test_failures;                                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%" PRIu64 " vs %" PRIu64 ")\n", __FILE__, __LINE__, #a, \
                    #b, a_, b_);                                                                                    \
        }                                                                                                           \
    } while (0)

/* Exit status for a test: 0 if all checks passed. Prints a closing line. */
int wh_test_finish(const char *name);

/* Exit code ctest treats as "skipped" (no GPU here). */
#define WH_TEST_SKIP 77

double wh_now_seconds(void);

/* Run fn(i, arg) on n threads at once (released together by a barrier). */
typedef void (*wh_thread_fn)(unsigned i, void *arg);
void wh_run_threads(unsigned n, wh_thread_fn fn, void *arg);

/* Command-line options: examples/common/wh_cli.h (on every test's include path).
 * A test without options calls this first: --help prints `about`, and any
 * option or argument is refused (exit 2). */
void wh_test_no_options(int argc, char **argv, const char *about);

#ifdef __cplusplus
}
#endif

#endif
