/* SPDX-License-Identifier: MIT */
/* k-d tree workload: triangle scenes (generated or read from Wavefront OBJ)
 * and the layout of a built tree, shared by the CPU check (plain C) and the
 * GPU builder (CUDA).  See docs/kdtree.md. */
#ifndef WH_KD_SCENE_H
#define WH_KD_SCENE_H

#include <stddef.h>
#include <stdint.h>
#include "warpheap/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A triangle soup: 9 floats (3 vertices) per triangle. */
typedef struct kd_scene {
    uint32_t ntris;
    float *v;
} kd_scene;

typedef struct kd_box {
    float lo[3], hi[3];
} kd_box;

/* ---- scenes (kd_scene.c, kd_obj.c) ---------------------------------------- */
/* Each returns 0 on success, -1 when out of memory or on a bad argument. */
int kd_scene_soup(kd_scene *s, uint32_t n, uint64_t seed);      /* uniform random  */
int kd_scene_torus(kd_scene *s, uint32_t n);                    /* tessellated     */
int kd_scene_clustered(kd_scene *s, uint32_t n, uint64_t seed); /* uneven sizes    */
/* By name: "soup", "torus" or "clustered". */
int kd_scene_generate(kd_scene *s, const char *name, uint32_t n, uint64_t seed);
/* Wavefront OBJ: v and f records (polygons fanned, negative indices, v/vt/vn
 * forms); everything else ignored.  -1 on I/O error or a bad index. */
int kd_obj_parse(kd_scene *s, const char *text, size_t len);
int kd_obj_read(kd_scene *s, const char *path);
void kd_scene_free(kd_scene *s);

/* Axis-aligned bounds of triangle i, and of the whole scene. */
void kd_tri_bounds(const kd_scene *s, uint32_t i, float lo[3], float hi[3]);
kd_box kd_scene_bounds(const kd_scene *s);

/* ---- the tree -------------------------------------------------------------
 * Node n: info & 3 is the split axis, or KD_LEAF; info >> 2 is the first of
 * two consecutive children (left = lower side, right = upper side), or the
 * leaf's index.  A triangle belongs to a node when its bounding box overlaps
 * the node's closed box (kd_overlap): at a split on plane s along axis a it
 * goes left iff lo[a] <= s and right iff hi[a] >= s, so straddlers go both
 * ways and membership equals kd_overlap with the child box exactly. */
#define KD_LEAF 3u
typedef struct kd_node {
    float split;
    uint32_t info;
} kd_node;

typedef struct kd_leaf {
    uint64_t refs; /* device address of the leaf's reference array */
    uint32_t count, node;
    kd_box box;
} kd_leaf;

/* A tree copied to the host: the leaves' references in one array. */
typedef struct kd_tree {
    uint32_t nnodes, nleaves;
    kd_node *nodes;
    kd_leaf *leaves;
    uint64_t *first; /* nleaves + 1 offsets into refs */
    uint32_t *refs;
    kd_box root;
} kd_tree;

void kd_tree_free(kd_tree *t);

WH_INLINE WH_HOST_DEVICE int kd_overlap(const float lo[3], const float hi[3], const kd_box *b) {
    return lo[0] <= b->hi[0] && hi[0] >= b->lo[0] && lo[1] <= b->hi[1] && hi[1] >= b->lo[1] && lo[2] <= b->hi[2] &&
           hi[2] >= b->lo[2];
}

/* ---- the check (kd_check.c) ----------------------------------------------- */
typedef struct kd_check_result {
    uint64_t tris_checked, leaves_checked;
    uint64_t bad_refs;      /* a reference whose triangle misses the leaf box */
    uint64_t dup_refs;      /* a triangle twice in one leaf                  */
    uint64_t missing;       /* an overlapping leaf that lacks the triangle   */
    uint64_t box_mismatch;  /* stored leaf box differs from the tree's       */
    uint64_t bad_structure; /* child index out of range, cycles, leaf twice  */
    uint64_t rays, hits, ray_mismatch;
} kd_check_result;

/* Exhaustive when ntris <= full_limit, otherwise on a sample of sample_tris
 * triangles (every reference is still checked against its leaf box).  nrays
 * random rays: nearest hit by tree traversal vs brute force.  Returns the
 * number of errors (0 = the tree is right).  Sorts each leaf's references. */
uint64_t kd_check_tree(const kd_scene *s, kd_tree *t, uint32_t full_limit, uint32_t sample_tris, uint32_t nrays,
                       uint64_t seed, kd_check_result *r);

/* Nearest hit along o + t d, t > 0: brute force and through the tree
 * (front-to-back with a stack).  INFINITY when none. */
float kd_ray_brute(const kd_scene *s, const float o[3], const float d[3], uint32_t *tri);
float kd_ray_tree(const kd_scene *s, const kd_tree *t, const float o[3], const float d[3], uint32_t *tri);

#ifdef __cplusplus
}
#endif

#endif
