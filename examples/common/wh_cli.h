/* SPDX-License-Identifier: MIT */
/* Command-line options for every program of the repository (examples,
 * benchmarks, tests): a table of entries -- long name, kind of value (flag,
 * integer, unsigned integer, floating point, string), where the value goes, a
 * line of help, the default shown by --help -- from which wh_cli_parse builds
 * getopt_long's option array, converts and range-checks each value (the whole
 * text must be a number that fits the destination), prints the usage for
 * --help or -h (exit 0) and rejects an unknown option, a missing or malformed
 * value or a stray argument with a message naming it (exit 2).
 * Header-only C11 that also compiles as CUDA C++.
 *
 *   uint32_t iters = 500;
 *   const char *csv = NULL;
 *   int check = 0;
 *   wh_cli_opt cli[] = {WH_CLI_UINT("iters", &iters, "iterations"),
 *                       WH_CLI_STRING("csv", &csv, "append the results to this CSV file"),
 *                       WH_CLI_FLAG("check", &check, "compare the variants"), WH_CLI_END};
 *   wh_cli_parse(argc, argv, cli, "One line on what the program does.");
 *
 * Values are written only when the whole command line parses, in
 * command-line order (the last of a repeated option wins); --name=VALUE and
 * --name VALUE both work, and so does any unambiguous prefix of a name
 * (getopt_long's rule). */
#ifndef WH_CLI_H
#define WH_CLI_H

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum wh_cli_kind {
    WH_CLI_KIND_END = 0, /* the entry that ends a table */
    WH_CLI_KIND_FLAG,    /* no value: the destination (int, bool, ...) becomes 1 */
    WH_CLI_KIND_INT,     /* a signed integer of the destination's size */
    WH_CLI_KIND_UINT,    /* an unsigned integer of the destination's size (no sign) */
    WH_CLI_KIND_DOUBLE,  /* a finite double or float */
    WH_CLI_KIND_STRING   /* a const char * pointing into argv (may be empty) */
} wh_cli_kind;

typedef struct wh_cli_opt {
    const char *name; /* the long name, without the dashes */
    wh_cli_kind kind;
    void *dst;        /* where the value goes; it holds the default before parsing */
    size_t size;      /* sizeof *dst */
    const char *help; /* one line */
    const char *dflt; /* the default --help shows; NULL: *dst's value before parsing; "": none */
    int given;        /* set by wh_cli_parse: the option was on the command line */
} wh_cli_opt;

/* Table entries; the _D forms name the default --help shows (where the
 * program computes it after parsing, say). */
#define WH_CLI_FLAG(name, p, help)   WH_CLI_FLAG_D(name, p, help, NULL)
#define WH_CLI_INT(name, p, help)    WH_CLI_INT_D(name, p, help, NULL)
#define WH_CLI_UINT(name, p, help)   WH_CLI_UINT_D(name, p, help, NULL)
#define WH_CLI_DOUBLE(name, p, help) WH_CLI_DOUBLE_D(name, p, help, NULL)
#define WH_CLI_STRING(name, p, help) WH_CLI_STRING_D(name, p, help, NULL)
#define WH_CLI_FLAG_D(name, p, help, dflt) \
    { name, WH_CLI_KIND_FLAG, (void *)(p), sizeof *(p), help, dflt, 0 }
#define WH_CLI_INT_D(name, p, help, dflt) \
    { name, WH_CLI_KIND_INT, (void *)(p), sizeof *(p), help, dflt, 0 }
#define WH_CLI_UINT_D(name, p, help, dflt) \
    { name, WH_CLI_KIND_UINT, (void *)(p), sizeof *(p), help, dflt, 0 }
#define WH_CLI_DOUBLE_D(name, p, help, dflt) \
    { name, WH_CLI_KIND_DOUBLE, (void *)(p), sizeof *(p), help, dflt, 0 }
#define WH_CLI_STRING_D(name, p, help, dflt) \
    { name, WH_CLI_KIND_STRING, (void *)(1 ? (p) : (const char **)0), sizeof *(p), help, dflt, 0 }
#define WH_CLI_END \
    { NULL, WH_CLI_KIND_END, NULL, 0, NULL, NULL, 0 }

/* The exit status of a command line that does not parse. */
#define WH_CLI_EXIT_USAGE 2

/* An integer destination of 1, 2, 4 or 8 bytes, read and written by size. */
static inline long long wh_cli_load_int_(const void *p, size_t size) {
    int8_t a;
    int16_t b;
    int32_t c;
    int64_t d = 0;
    switch (size) {
    case 1: memcpy(&a, p, 1); return a;
    case 2: memcpy(&b, p, 2); return b;
    case 4: memcpy(&c, p, 4); return c;
    default: memcpy(&d, p, sizeof d); return d;
    }
}
static inline unsigned long long wh_cli_load_uint_(const void *p, size_t size) {
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d = 0;
    switch (size) {
    case 1: memcpy(&a, p, 1); return a;
    case 2: memcpy(&b, p, 2); return b;
    case 4: memcpy(&c, p, 4); return c;
    default: memcpy(&d, p, sizeof d); return d;
    }
}
static inline void wh_cli_store_int_(void *p, size_t size, long long v) {
    int8_t a = (int8_t)v;
    int16_t b = (int16_t)v;
    int32_t c = (int32_t)v;
    int64_t d = (int64_t)v;
    switch (size) {
    case 1: memcpy(p, &a, 1); break;
    case 2: memcpy(p, &b, 2); break;
    case 4: memcpy(p, &c, 4); break;
    default: memcpy(p, &d, sizeof d); break;
    }
}
static inline void wh_cli_store_uint_(void *p, size_t size, unsigned long long v) {
    uint8_t a = (uint8_t)v;
    uint16_t b = (uint16_t)v;
    uint32_t c = (uint32_t)v;
    uint64_t d = (uint64_t)v;
    switch (size) {
    case 1: memcpy(p, &a, 1); break;
    case 2: memcpy(p, &b, 2); break;
    case 4: memcpy(p, &c, 4); break;
    default: memcpy(p, &d, sizeof d); break;
    }
}

/* "--name=META" as the usage shows it. */
static inline void wh_cli_synopsis_(const wh_cli_opt *o, char *buf, size_t n) {
    static const char *const meta[] = {"", "", "N", "N", "X", "STR"};
    if (o->kind == WH_CLI_KIND_FLAG)
        snprintf(buf, n, "--%s", o->name);
    else
        snprintf(buf, n, "--%s=%s", o->name, meta[o->kind]);
}

/* The usage: a line per option with its help and default (from the values
 * the destinations hold now, so it is printed before any is written). */
static inline void wh_cli_usage(FILE *f, const char *prog, const wh_cli_opt *opts, const char *about) {
    char syn[96];
    int width = (int)strlen("-h, --help");
    for (const wh_cli_opt *o = opts; o->name; ++o) {
        wh_cli_synopsis_(o, syn, sizeof syn);
        if ((int)strlen(syn) > width) width = (int)strlen(syn);
    }
    if (width > 30) width = 30;
    fprintf(f, "usage: %s [OPTION]...\n", prog);
    if (about && *about) fprintf(f, "%s\n", about);
    fprintf(f, "\n");
    for (const wh_cli_opt *o = opts; o->name; ++o) {
        char dflt[96] = "";
        if (o->dflt)
            snprintf(dflt, sizeof dflt, "%s", o->dflt);
        else if (o->kind == WH_CLI_KIND_INT)
            snprintf(dflt, sizeof dflt, "%lld", wh_cli_load_int_(o->dst, o->size));
        else if (o->kind == WH_CLI_KIND_UINT)
            snprintf(dflt, sizeof dflt, "%llu", wh_cli_load_uint_(o->dst, o->size));
        else if (o->kind == WH_CLI_KIND_DOUBLE)
            snprintf(dflt, sizeof dflt, "%g",
                     o->size == sizeof(float) ? (double)*(const float *)o->dst : *(const double *)o->dst);
        else if (o->kind == WH_CLI_KIND_STRING && *(const char *const *)o->dst)
            snprintf(dflt, sizeof dflt, "%s", *(const char *const *)o->dst);
        wh_cli_synopsis_(o, syn, sizeof syn);
        fprintf(f, "  %-*s  %s", width, syn, o->help ? o->help : "");
        if (*dflt) fprintf(f, " (default: %s)", dflt);
        fprintf(f, "\n");
    }
    fprintf(f, "  %-*s  %s\n", width, "-h, --help", "print this help and exit");
}

/* Convert one value into `out` (o->size bytes, as the destination takes
 * them): 0, or -1 after a message. */
static inline int wh_cli_convert_(const char *prog, const wh_cli_opt *o, const char *arg, void *out) {
    char *end = NULL;
    int number = 1; /* 0: the text is not a number of the kind */
    errno = 0;
    if (o->kind == WH_CLI_KIND_FLAG) {
        wh_cli_store_uint_(out, o->size, 1);
    } else if (o->kind == WH_CLI_KIND_STRING) {
        memcpy(out, &arg, sizeof arg);
    } else if (o->kind == WH_CLI_KIND_INT) {
        long long v = strtoll(arg, &end, 10);
        long long hi = o->size >= 8 ? INT64_MAX : (long long)((1ull << (8 * o->size - 1)) - 1);
        if (end == arg || *end)
            number = 0;
        else if (errno == ERANGE || v > hi || v < -hi - 1) {
            fprintf(stderr, "%s: --%s=%s: out of range (%lld .. %lld)\n", prog, o->name, arg, -hi - 1, hi);
            return -1;
        } else
            wh_cli_store_int_(out, o->size, v);
    } else if (o->kind == WH_CLI_KIND_UINT) {
        const char *s = arg;
        while (*s == ' ' || *s == '\t') ++s;
        unsigned long long v = strtoull(s, &end, 10);
        unsigned long long hi = o->size >= 8 ? UINT64_MAX : (1ull << (8 * o->size)) - 1;
        if (end == s || *end || *s == '-')
            number = 0;
        else if (errno == ERANGE || v > hi) {
            fprintf(stderr, "%s: --%s=%s: out of range (0 .. %llu)\n", prog, o->name, arg, hi);
            return -1;
        } else
            wh_cli_store_uint_(out, o->size, v);
    } else {
        double v = strtod(arg, &end);
        double hi = o->size == sizeof(float) ? (double)FLT_MAX : DBL_MAX;
        if (end == arg || *end || v != v)
            number = 0;
        else if (v > hi || v < -hi) {
            fprintf(stderr, "%s: --%s=%s: out of range\n", prog, o->name, arg);
            return -1;
        } else if (o->size == sizeof(float)) {
            float f = (float)v;
            memcpy(out, &f, sizeof f);
        } else
            memcpy(out, &v, sizeof v);
    }
    if (!number) {
        fprintf(stderr, "%s: --%s=%s: %s expected\n", prog, o->name, arg,
                o->kind == WH_CLI_KIND_DOUBLE ? "a number"
                : o->kind == WH_CLI_KIND_UINT ? "a non-negative integer"
                                              : "an integer");
        return -1;
    }
    return 0;
}

/* Parse argv against opts (ended by WH_CLI_END): 0 when every option parsed
 * and its value is in place; 1 when --help printed the usage (on stdout);
 * WH_CLI_EXIT_USAGE when a message went to stderr.  Unless it returns 0,
 * nothing is written to the destinations. */
static inline int wh_cli_try(int argc, char **argv, wh_cli_opt *opts, const char *about) {
    const char *prog = argc > 0 && argv[0] ? argv[0] : "program";
    int n = 0;
    while (opts[n].name) ++n;
    struct option *lo = (struct option *)calloc((size_t)n + 2, sizeof *lo);
    int *idx = (int *)calloc((size_t)argc + 1, sizeof *idx);                   /* the entries given, */
    const char **vals = (const char **)calloc((size_t)argc + 1, sizeof *vals); /* their values, */
    uint64_t *conv = (uint64_t *)calloc((size_t)argc + 1, sizeof *conv);       /* and those converted */
    if (!lo || !idx || !vals || !conv) {
        fprintf(stderr, "%s: out of memory\n", prog);
        free(lo);
        free(idx);
        free(vals);
        free(conv);
        return WH_CLI_EXIT_USAGE;
    }
    int rc = 0, ns = 0;
    for (int i = 0; i < n; ++i) {
        size_t z = opts[i].size; /* a table's mistake: a destination of no supported size */
        if (!z || z > sizeof(uint64_t) ||
            (opts[i].kind == WH_CLI_KIND_DOUBLE && z != sizeof(float) && z != sizeof(double))) {
            fprintf(stderr, "%s: --%s: a destination of %zu bytes is not supported\n", prog, opts[i].name, z);
            rc = WH_CLI_EXIT_USAGE;
        }
        lo[i].name = opts[i].name;
        lo[i].has_arg = opts[i].kind == WH_CLI_KIND_FLAG ? no_argument : required_argument;
        lo[i].flag = NULL;
        lo[i].val = 0x100 + i;
        opts[i].given = 0;
    }
    lo[n].name = "help";
    lo[n].has_arg = no_argument;
    lo[n].val = 'h';
    /* every option, then every value converted, and only then the values
     * written, in command-line order (an error or --help writes none) */
    opterr = 1;
#if defined(__GLIBC__)
    optind = 0; /* glibc: start over, also after an earlier parse */
#else
    optind = 1;
#endif
    for (int c; !rc && (c = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
        if (c == 'h') {
            wh_cli_usage(stdout, prog, opts, about);
            rc = 1;
        } else if (c >= 0x100 && c < 0x100 + n) {
            idx[ns] = c - 0x100;
            vals[ns++] = optarg;
        } else {
            rc = WH_CLI_EXIT_USAGE; /* getopt_long named the option */
        }
    }
    if (!rc && optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        rc = WH_CLI_EXIT_USAGE;
    }
    for (int k = 0; !rc && k < ns; ++k)
        if (wh_cli_convert_(prog, &opts[idx[k]], vals[k] ? vals[k] : "", &conv[k])) rc = WH_CLI_EXIT_USAGE;
    for (int k = 0; !rc && k < ns; ++k) {
        memcpy(opts[idx[k]].dst, &conv[k], opts[idx[k]].size);
        opts[idx[k]].given = 1;
    }
    if (rc == WH_CLI_EXIT_USAGE) fprintf(stderr, "Try '%s --help' for the options.\n", prog);
    free(conv);
    free(vals);
    free(idx);
    free(lo);
    return rc;
}

/* wh_cli_try, then exit: 0 after --help, WH_CLI_EXIT_USAGE after an error. */
static inline void wh_cli_parse(int argc, char **argv, wh_cli_opt *opts, const char *about) {
    int rc = wh_cli_try(argc, argv, opts, about);
    if (rc == 1) exit(0);
    if (rc) exit(rc);
}

/* Whether the option `name` was on the command line (after wh_cli_parse). */
static inline int wh_cli_given(const wh_cli_opt *opts, const char *name) {
    for (const wh_cli_opt *o = opts; o->name; ++o)
        if (!strcmp(o->name, name)) return o->given;
    return 0;
}

#endif
