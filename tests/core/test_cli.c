/* SPDX-License-Identifier: MIT */
/* The command-line helper every program uses (examples/common/wh_cli.h):
 * values of each kind and size converted and written, both --name=VALUE and
 * --name VALUE, repeated options (the last wins), the given flags, and every
 * kind of bad command line -- unknown option, missing or malformed value,
 * value out of the destination's range, flag with a value, stray argument --
 * refused with WH_CLI_EXIT_USAGE and no value written. */
#include "wh_cli.h"
#include "wh_test.h"

#include <stdbool.h>

typedef struct vals {
    uint32_t w;
    int iters;
    uint64_t n;
    int8_t tiny;
    double dt;
    float thr;
    const char *csv;
    int check;
    bool small;
} vals;

static vals defaults(void) {
    vals v = {2048, -3, 5, 0, 0.02, 0.5f, NULL, 0, false};
    return v;
}

/* Parse the arguments (after the program name) into v; returns wh_cli_try's
 * result; *given_w: whether --w was given. */
static int parse(vals *v, int *given_w, int n, const char *const *args) {
    char *argv[16];
    argv[0] = (char *)"test_cli";
    for (int i = 0; i < n; ++i) argv[i + 1] = (char *)args[i];
    argv[n + 1] = NULL;
    wh_cli_opt cli[] = {WH_CLI_UINT("w", &v->w, "width"),
                        WH_CLI_INT("iters", &v->iters, "iterations"),
                        WH_CLI_UINT("n", &v->n, "count"),
                        WH_CLI_INT("tiny", &v->tiny, "a one-byte integer"),
                        WH_CLI_DOUBLE("dt", &v->dt, "a double"),
                        WH_CLI_DOUBLE("threshold", &v->thr, "a float"),
                        WH_CLI_STRING("csv", &v->csv, "a file"),
                        WH_CLI_FLAG("check", &v->check, "an int flag"),
                        WH_CLI_FLAG("small", &v->small, "a bool flag"),
                        WH_CLI_END};
    int rc = wh_cli_try(n + 1, argv, cli, "wh_cli's test.");
    if (given_w) *given_w = wh_cli_given(cli, "w");
    return rc;
}

/* The count and the array of a list of arguments (parse's n and args). */
#define ARGS(...) \
    (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)), (const char *const[]) { __VA_ARGS__ }

static void test_good(void) {
    vals v = defaults();
    int given = -1;
    CHECK(parse(&v, &given, 0, NULL) == 0);
    CHECK(given == 0);
    CHECK(v.w == 2048 && v.iters == -3 && v.n == 5 && v.dt == 0.02 && v.thr == 0.5f && !v.csv && !v.check && !v.small);

    v = defaults();
    CHECK(parse(&v, &given,
                ARGS("--w=10", "--iters", "-5", "--n=18446744073709551615", "--tiny=-128", "--dt=1e-3", "--threshold",
                     "2.5", "--csv=", "--check", "--small")) == 0);
    CHECK(given == 1);
    CHECK_EQ_U64(v.w, 10);
    CHECK(v.iters == -5);
    CHECK_EQ_U64(v.n, UINT64_MAX);
    CHECK(v.tiny == -128);
    CHECK(v.dt == 1e-3 && v.thr == 2.5f);
    CHECK(v.csv && !strcmp(v.csv, ""));
    CHECK(v.check == 1 && v.small);

    v = defaults(); /* the last of a repeated option wins */
    CHECK(parse(&v, NULL, ARGS("--w=1", "--w=+7", "--csv=a", "--csv", "b")) == 0);
    CHECK_EQ_U64(v.w, 7);
    CHECK(v.csv && !strcmp(v.csv, "b"));

    v = defaults(); /* an unambiguous prefix names its option */
    CHECK(parse(&v, NULL, ARGS("--thr=0.25", "--it=9")) == 0);
    CHECK(v.thr == 0.25f && v.iters == 9);

    v = defaults(); /* --help: usage, nothing written */
    CHECK(parse(&v, NULL, ARGS("--w=9", "--help")) == 1);
    CHECK_EQ_U64(v.w, 2048);
    CHECK(parse(&v, NULL, ARGS("-h")) == 1);
}

static void test_bad(void) {
    static const char *const bad[][2] = {
        {"--bogus", NULL},     {"--w=abc", NULL},
        {"--w=-1", NULL},      {"--w=4294967296", NULL},
        {"--w=", NULL},        {"--w=1x", NULL},
        {"--iters=1.5", NULL}, {"--iters=2147483648", NULL},
        {"--tiny=128", NULL},  {"--n=1e6", NULL},
        {"--dt=abc", NULL},    {"--dt=nan", NULL},
        {"--dt=inf", NULL},    {"--threshold=1e39", NULL},
        {"--check=1", NULL},   {"--iters", NULL},
        {"stray", NULL},       {"--", "stray"},
        {"-x", NULL},          {"--w=5", "--bogus"},
    };
    for (unsigned i = 0; i < sizeof bad / sizeof *bad; ++i) {
        vals v = defaults();
        int n = bad[i][1] ? 2 : 1;
        int rc = parse(&v, NULL, n, bad[i]);
        if (rc != WH_CLI_EXIT_USAGE) fprintf(stderr, "accepted: %s %s\n", bad[i][0], bad[i][1] ? bad[i][1] : "");
        CHECK(rc == WH_CLI_EXIT_USAGE);
        CHECK_EQ_U64(v.w, 2048); /* no value written */
        CHECK(v.iters == -3 && !v.check);
    }
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "The command-line helper every program uses (examples/common/wh_cli.h).");
    test_good();
    test_bad();
    return wh_test_finish("test_cli");
}
