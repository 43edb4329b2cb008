/* SPDX-License-Identifier: MIT */
/* A Wavefront OBJ reader for the k-d tree workload (register-efficient-gpu-
 * allocators.txt section 6 builds trees over users' models): so users can
 * build their own scenes.  Only geometry matters: `v x y z` and
 * `f i j k ...` (1-based, negative = relative to the end, `i/t/n` forms);
 * polygons are fanned into triangles; other records are skipped. */
#include "kd_scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct growable {
    float *data;
    size_t n, cap; /* in floats */
} growable;

static int push(growable *g, const float *x, size_t k) {
    if (g->n + k > g->cap) {
        size_t cap = g->cap ? g->cap * 2u : 1024u;
        while (cap < g->n + k) cap *= 2u;
        float *d = (float *)realloc(g->data, cap * sizeof(float));
        if (!d) return -1;
        g->data = d;
        g->cap = cap;
    }
    memcpy(g->data + g->n, x, k * sizeof(float));
    g->n += k;
    return 0;
}

/* One index of an f record: "-2", "7/1/3", "7//3".  Returns a 0-based vertex
 * or -1 if it is out of range; *p moves past the token. */
static long face_index(const char **p, const char *end, size_t nverts) {
    char *stop;
    long i = strtol(*p, &stop, 10);
    if (stop == *p) return -1;
    *p = stop;
    while (*p < end && **p != ' ' && **p != '\t' && **p != '\r' && **p != '\n') ++*p;
    if (i < 0)
        i += (long)nverts;
    else
        i -= 1;
    return (i >= 0 && (size_t)i < nverts) ? i : -1;
}

static const char *skip_blank(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    return p;
}

/* A face: fan (v0, vk, vk+1).  Returns -1 on a bad index. */
static int parse_face(const char *p, const char *end, const growable *verts, growable *tris) {
    size_t nv = verts->n / 3u;
    long first = -1, prev = -1;
    for (int k = 0;; ++k) {
        p = skip_blank(p, end);
        if (p >= end || *p == '\r' || *p == '\n' || *p == '#') break;
        long i = face_index(&p, end, nv);
        if (i < 0) return -1;
        if (k == 0)
            first = i;
        else if (k >= 2) {
            float t[9];
            memcpy(t, verts->data + 3 * first, 12);
            memcpy(t + 3, verts->data + 3 * prev, 12);
            memcpy(t + 6, verts->data + 3 * i, 12);
            if (push(tris, t, 9)) return -1;
        }
        prev = i;
    }
    return 0;
}

int kd_obj_parse(kd_scene *s, const char *text, size_t len) {
    growable verts = {0}, tris = {0};
    const char *p = text, *end = text + len;
    int rc = 0;
    s->ntris = 0;
    s->v = NULL;
    while (p < end && rc == 0) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        const char *q = skip_blank(p, eol);
        if (eol - q > 2 && q[0] == 'v' && (q[1] == ' ' || q[1] == '\t')) {
            char buf[256];
            size_t n = (size_t)(eol - q) < sizeof buf - 1 ? (size_t)(eol - q) : sizeof buf - 1;
            memcpy(buf, q, n);
            buf[n] = 0;
            float x[3];
            if (sscanf(buf + 1, "%f %f %f", &x[0], &x[1], &x[2]) != 3 || push(&verts, x, 3)) rc = -1;
        } else if (eol - q > 2 && q[0] == 'f' && (q[1] == ' ' || q[1] == '\t')) {
            rc = parse_face(q + 1, eol, &verts, &tris);
        }
        p = eol + 1;
    }
    free(verts.data);
    if (rc) {
        free(tris.data);
        return -1;
    }
    s->v = tris.data;
    s->ntris = (uint32_t)(tris.n / 9u);
    return 0;
}

int kd_obj_read(kd_scene *s, const char *path) {
    FILE *f = fopen(path, "rb");
    s->ntris = 0;
    s->v = NULL;
    if (!f) return -1;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    char *text = len >= 0 ? (char *)malloc((size_t)len + 1u) : NULL;
    int rc = -1;
    if (text && fseek(f, 0, SEEK_SET) == 0 && fread(text, 1, (size_t)len, f) == (size_t)len)
        rc = kd_obj_parse(s, text, (size_t)len);
    free(text);
    fclose(f);
    return rc;
}
