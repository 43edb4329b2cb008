/* SPDX-License-Identifier: MIT */
/* The check of a built k-d tree (for the [DS] workload
 * of register-efficient-gpu-allocators.txt section 6).  The paper reports
 * build times only; a benchmark of a builder that is wrong measures nothing,
 * so every benchmarked tree goes through this:
 *  1. structure: every node reached once from the root, leaves agree with
 *     their nodes, the stored leaf boxes equal the boxes the splits give;
 *  2. "no other": every reference of a leaf is a triangle whose bounding box
 *     overlaps the leaf's box (kd_overlap), and no triangle twice in a leaf;
 *  3. "every": for each triangle (all, or a sample), every leaf whose box it
 *     overlaps holds it (descent from the root, binary search in the leaf);
 *  4. rays: the nearest hit through the tree equals brute force. */
#include "kd_scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KD_STACK 256

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Child boxes of a node split on axis a at s. */
static void split_box(const kd_box *b, uint32_t a, float s, kd_box *l, kd_box *r) {
    *l = *b;
    *r = *b;
    l->hi[a] = s;
    r->lo[a] = s;
}

/* Part 1: walk the tree, fill box[] per leaf.  Returns structural errors. */
static uint64_t check_structure(const kd_tree *t, kd_box *box, kd_check_result *r) {
    uint64_t bad = 0, seen_leaves = 0;
    uint8_t *seen = (uint8_t *)calloc(t->nnodes ? t->nnodes : 1u, 1);
    uint32_t stack[KD_STACK];
    kd_box bstack[KD_STACK];
    int sp = 0;
    if (!seen || t->nnodes == 0) {
        free(seen);
        return 1;
    }
    stack[sp] = 0;
    bstack[sp++] = t->root;
    while (sp > 0) {
        uint32_t n = stack[--sp];
        kd_box b = bstack[sp];
        if (n >= t->nnodes || seen[n]) {
            ++bad;
            continue;
        }
        seen[n] = 1;
        kd_node node = t->nodes[n];
        uint32_t axis = node.info & 3u, idx = node.info >> 2;
        if (axis == KD_LEAF) {
            if (idx >= t->nleaves || t->leaves[idx].node != n) {
                ++bad;
                continue;
            }
            ++seen_leaves;
            box[idx] = b;
            if (memcmp(&t->leaves[idx].box, &b, sizeof b)) ++r->box_mismatch;
            continue;
        }
        if (sp + 2 > KD_STACK || idx + 1u >= t->nnodes) {
            ++bad;
            continue;
        }
        split_box(&b, axis, node.split, &bstack[sp + 1], &bstack[sp]);
        stack[sp++] = idx + 1u;
        stack[sp++] = idx;
    }
    if (seen_leaves != t->nleaves) ++bad;
    free(seen);
    r->bad_structure += bad;
    return bad + r->box_mismatch;
}

/* Part 2: every reference overlaps its leaf, none twice (sorts the leaf). */
static uint64_t check_references(const kd_scene *s, kd_tree *t, const kd_box *box, kd_check_result *r) {
    uint64_t before = r->bad_refs + r->dup_refs;
    for (uint32_t l = 0; l < t->nleaves; ++l) {
        uint32_t *refs = t->refs + t->first[l];
        uint32_t n = (uint32_t)(t->first[l + 1] - t->first[l]);
        qsort(refs, n, sizeof *refs, cmp_u32);
        for (uint32_t k = 0; k < n; ++k) {
            float lo[3], hi[3];
            if (refs[k] >= s->ntris) {
                ++r->bad_refs;
                continue;
            }
            kd_tri_bounds(s, refs[k], lo, hi);
            if (!kd_overlap(lo, hi, &box[l])) ++r->bad_refs;
            if (k && refs[k] == refs[k - 1]) ++r->dup_refs;
        }
    }
    r->leaves_checked = t->nleaves;
    return r->bad_refs + r->dup_refs - before;
}

static int leaf_has(const kd_tree *t, uint32_t l, uint32_t tri) {
    const uint32_t *refs = t->refs + t->first[l];
    size_t n = (size_t)(t->first[l + 1] - t->first[l]);
    return bsearch(&tri, refs, n, sizeof *refs, cmp_u32) != NULL;
}

/* Part 3 for one triangle: every leaf whose box it overlaps holds it. */
static uint64_t check_triangle(const kd_scene *s, const kd_tree *t, const kd_box *box, uint32_t tri) {
    float lo[3], hi[3];
    uint32_t stack[KD_STACK];
    int sp = 0;
    uint64_t missing = 0;
    kd_tri_bounds(s, tri, lo, hi);
    stack[sp++] = 0;
    while (sp > 0) {
        kd_node node = t->nodes[stack[--sp]];
        uint32_t axis = node.info & 3u, idx = node.info >> 2;
        if (axis == KD_LEAF) {
            if (kd_overlap(lo, hi, &box[idx]) && !leaf_has(t, idx, tri)) ++missing;
            continue;
        }
        if (sp + 2 > KD_STACK) return missing + 1u;
        if (hi[axis] >= node.split) stack[sp++] = idx + 1u;
        if (lo[axis] <= node.split) stack[sp++] = idx;
    }
    return missing;
}

/* ---- rays ------------------------------------------------------------------ */

static float ray_tri(const float *v, const float o[3], const float d[3]) {
    float e1[3], e2[3], p[3], q[3], sv[3];
    for (int a = 0; a < 3; ++a) {
        e1[a] = v[3 + a] - v[a];
        e2[a] = v[6 + a] - v[a];
        sv[a] = o[a] - v[a];
    }
    p[0] = d[1] * e2[2] - d[2] * e2[1];
    p[1] = d[2] * e2[0] - d[0] * e2[2];
    p[2] = d[0] * e2[1] - d[1] * e2[0];
    float det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
    if (fabsf(det) < 1e-20f) return INFINITY;
    float inv = 1.0f / det, u = (sv[0] * p[0] + sv[1] * p[1] + sv[2] * p[2]) * inv;
    if (u < 0.0f || u > 1.0f) return INFINITY;
    q[0] = sv[1] * e1[2] - sv[2] * e1[1];
    q[1] = sv[2] * e1[0] - sv[0] * e1[2];
    q[2] = sv[0] * e1[1] - sv[1] * e1[0];
    float w = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) * inv;
    if (w < 0.0f || u + w > 1.0f) return INFINITY;
    float tt = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * inv;
    return tt > 1e-6f ? tt : INFINITY;
}

float kd_ray_brute(const kd_scene *s, const float o[3], const float d[3], uint32_t *tri) {
    float best = INFINITY;
    *tri = UINT32_MAX;
    for (uint32_t i = 0; i < s->ntris; ++i) {
        float tt = ray_tri(s->v + (size_t)i * 9u, o, d);
        if (tt < best) {
            best = tt;
            *tri = i;
        }
    }
    return best;
}

/* Ray against a box: the parameter interval [*t0, *t1]; 0 if it misses. */
static int ray_box(const kd_box *b, const float o[3], const float d[3], float *t0, float *t1) {
    float lo = 0.0f, hi = INFINITY;
    for (int a = 0; a < 3; ++a) {
        if (d[a] == 0.0f) {
            if (o[a] < b->lo[a] || o[a] > b->hi[a]) return 0;
            continue;
        }
        float inv = 1.0f / d[a], ta = (b->lo[a] - o[a]) * inv, tb = (b->hi[a] - o[a]) * inv;
        if (ta > tb) {
            float x = ta;
            ta = tb;
            tb = x;
        }
        lo = fmaxf(lo, ta);
        hi = fminf(hi, tb);
    }
    *t0 = lo;
    *t1 = hi;
    return lo <= hi;
}

/* Front to back: the near child first, the far one on the stack with its
 * interval; stop after a leaf once the best hit lies before that leaf's end. */
float kd_ray_tree(const kd_scene *s, const kd_tree *t, const float o[3], const float d[3], uint32_t *tri) {
    float best = INFINITY, tmin, tmax;
    uint32_t stack[KD_STACK];
    float smin[KD_STACK], smax[KD_STACK];
    int sp = 0;
    *tri = UINT32_MAX;
    if (!t->nnodes || !ray_box(&t->root, o, d, &tmin, &tmax)) return best;
    uint32_t n = 0;
    for (;;) {
        kd_node node = t->nodes[n];
        uint32_t axis = node.info & 3u, idx = node.info >> 2;
        if (axis != KD_LEAF) {
            float tsplit = d[axis] != 0.0f ? (node.split - o[axis]) / d[axis] : INFINITY;
            int below = o[axis] < node.split || (o[axis] == node.split && d[axis] <= 0.0f);
            uint32_t near = below ? idx : idx + 1u, far = below ? idx + 1u : idx;
            if (tsplit > tmax || tsplit <= 0.0f)
                n = near;
            else if (tsplit < tmin)
                n = far;
            else {
                if (sp < KD_STACK) {
                    stack[sp] = far;
                    smin[sp] = tsplit;
                    smax[sp++] = tmax;
                }
                n = near;
                tmax = tsplit;
            }
            continue;
        }
        const uint32_t *refs = t->refs + t->first[idx];
        for (uint64_t k = 0; k < t->first[idx + 1] - t->first[idx]; ++k) {
            float tt = ray_tri(s->v + (size_t)refs[k] * 9u, o, d);
            if (tt < best) {
                best = tt;
                *tri = refs[k];
            }
        }
        if (best <= tmax || sp == 0) break;
        n = stack[--sp];
        tmin = smin[sp];
        tmax = smax[sp];
    }
    return best;
}

static float unit(uint64_t seed, uint64_t i) {
    return (float)(wh_hash64(seed + i * 0x9E3779B97F4A7C15ull) >> 40) * (1.0f / 16777216.0f);
}

/* Part 4: random origins in the scene box, random directions. */
static uint64_t check_rays(const kd_scene *s, const kd_tree *t, uint32_t nrays, uint64_t seed, kd_check_result *r) {
    uint64_t bad = 0;
    for (uint32_t i = 0; i < nrays; ++i) {
        float o[3], d[3], len = 0.0f;
        for (int a = 0; a < 3; ++a) {
            o[a] = t->root.lo[a] + (t->root.hi[a] - t->root.lo[a]) * unit(seed, 6ull * i + (unsigned)a);
            d[a] = unit(seed, 6ull * i + 3u + (unsigned)a) - 0.5f;
            len += d[a] * d[a];
        }
        len = sqrtf(len > 0.0f ? len : 1.0f);
        for (int a = 0; a < 3; ++a) d[a] /= len;
        uint32_t tb, tt;
        float hb = kd_ray_brute(s, o, d, &tb), ht = kd_ray_tree(s, t, o, d, &tt);
        int same = (isinf(hb) && isinf(ht)) || fabsf(hb - ht) <= 1e-4f * fmaxf(1.0f, hb);
        if (!same) ++bad;
        if (!isinf(hb)) ++r->hits;
    }
    r->rays += nrays;
    r->ray_mismatch += bad;
    return bad;
}

uint64_t kd_check_tree(const kd_scene *s, kd_tree *t, uint32_t full_limit, uint32_t sample_tris, uint32_t nrays,
                       uint64_t seed, kd_check_result *r) {
    memset(r, 0, sizeof *r);
    kd_box *box = (kd_box *)calloc(t->nleaves ? t->nleaves : 1u, sizeof *box);
    if (!box) return 1;
    uint64_t errors = check_structure(t, box, r);
    if (errors) { /* a broken structure makes the rest meaningless */
        free(box);
        return errors;
    }
    errors += check_references(s, t, box, r);
    int full = s->ntris <= full_limit;
    uint32_t count = full ? s->ntris : (sample_tris < s->ntris ? sample_tris : s->ntris);
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t tri = full ? k : (uint32_t)(wh_hash64(seed ^ (0x5A17ull + k)) % s->ntris);
        r->missing += check_triangle(s, t, box, tri);
    }
    r->tris_checked = count;
    errors += r->missing;
    errors += check_rays(s, t, nrays, seed + 1u, r);
    free(box);
    return errors;
}
