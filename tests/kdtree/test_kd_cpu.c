/* SPDX-License-Identifier: MIT */
/* k-d tree workload, CPU side: the OBJ reader, the scene generators, and the
 * tree check itself -- it must accept a correct tree (built here by a small
 * recursive CPU builder with the same membership rule) and catch a missing,
 * a foreign and a duplicated reference. */
#include "kd_scene.h"
#include "wh_test.h"

#include <math.h>

static const char CUBE[] = "# a unit cube, quads, mixed index forms\n"
                           "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
                           "vt 0 0\nvn 0 0 1\n"
                           "f 1 2 3 4\nf 5/1 6/1 7/1 8/1\nf 1//1 2//1 6//1 5//1\n"
                           "f -5 -6 -2 -1\r\n" /* 4 3 7 8, relative */
                           "f 1 4 8 5\nf 2 3 7 6 # comment\n"
                           "o ignored\ns off\n";

static void test_obj(void) {
    kd_scene s;
    CHECK(kd_obj_parse(&s, CUBE, sizeof CUBE - 1) == 0);
    CHECK_EQ_U64(s.ntris, 12);
    kd_box b = kd_scene_bounds(&s);
    for (int a = 0; a < 3; ++a) CHECK(b.lo[a] == 0.0f && b.hi[a] == 1.0f);
    /* Face 4 is 4 3 7 8: its first triangle is (0,1,0) (1,1,0) (1,1,1). */
    const float *t = s.v + 6 * 9;
    CHECK(t[0] == 0.0f && t[1] == 1.0f && t[2] == 0.0f && t[3] == 1.0f && t[8] == 1.0f);
    kd_scene_free(&s);
    const char bad[] = "v 0 0 0\nv 1 0 0\nf 1 2 3\n";
    CHECK(kd_obj_parse(&s, bad, sizeof bad - 1) == -1);
    CHECK(kd_obj_read(&s, "/nonexistent/file.obj") == -1);
}

static float tri_extent(const kd_scene *s, uint32_t i) {
    float lo[3], hi[3];
    kd_tri_bounds(s, i, lo, hi);
    return fmaxf(hi[0] - lo[0], fmaxf(hi[1] - lo[1], hi[2] - lo[2]));
}

static void test_generators(void) {
    const char *names[3] = {"soup", "torus", "clustered"};
    for (int k = 0; k < 3; ++k) {
        kd_scene a, b;
        CHECK(kd_scene_generate(&a, names[k], 20000, 7) == 0);
        CHECK(kd_scene_generate(&b, names[k], 20000, 7) == 0);
        CHECK(a.ntris >= 18000 && a.ntris <= 20000);
        CHECK(a.ntris == b.ntris && memcmp(a.v, b.v, (size_t)a.ntris * 36u) == 0);
        float mn = INFINITY, mx = 0.0f;
        int finite = 1;
        for (uint32_t i = 0; i < a.ntris; ++i) {
            float e = tri_extent(&a, i);
            mn = fminf(mn, e);
            mx = fmaxf(mx, e);
            for (int j = 0; j < 9; ++j) finite &= isfinite(a.v[(size_t)i * 9u + (unsigned)j]) != 0;
        }
        CHECK(finite);
        CHECK(mn > 0.0f);
        if (k == 2) CHECK(mx / mn > 100.0f); /* orders of magnitude */
        printf("%-10s %u triangles, extent %.2e .. %.2e\n", names[k], a.ntris, mn, mx);
        kd_scene_free(&a);
        kd_scene_free(&b);
    }
    kd_scene s;
    CHECK(kd_scene_generate(&s, "nope", 10, 1) == -1);
}

/* ---- a small reference builder (spatial median, same membership rule) ---- */
typedef struct cpu_tree {
    kd_tree t;
    uint64_t cap_nodes, cap_leaves, cap_first, cap_refs;
} cpu_tree;

static void grow(void **p, size_t elem, uint64_t need, uint64_t *cap) {
    if (need <= *cap) return;
    uint64_t c = *cap ? *cap : 64u;
    while (c < need) c *= 2u;
    *p = realloc(*p, (size_t)(c * elem));
    *cap = c;
}

static void cpu_build(cpu_tree *c, const kd_scene *s, uint32_t node, kd_box box, uint32_t *refs, uint32_t n,
                      int depth) {
    uint32_t axis = 0;
    for (uint32_t a = 1; a < 3; ++a)
        if (box.hi[a] - box.lo[a] > box.hi[axis] - box.lo[axis]) axis = a;
    float split = 0.5f * (box.lo[axis] + box.hi[axis]);
    uint32_t *l = malloc((n + 1u) * 4u), *r = malloc((n + 1u) * 4u), nl = 0, nr = 0;
    for (uint32_t k = 0; k < n; ++k) {
        float lo[3], hi[3];
        kd_tri_bounds(s, refs[k], lo, hi);
        if (lo[axis] <= split) l[nl++] = refs[k];
        if (hi[axis] >= split) r[nr++] = refs[k];
    }
    if (n <= 8u || depth >= 18 || (nl == n && nr == n)) {
        uint32_t id = c->t.nleaves++;
        grow((void **)&c->t.leaves, sizeof(kd_leaf), c->t.nleaves, &c->cap_leaves);
        grow((void **)&c->t.first, sizeof(uint64_t), c->t.nleaves + 1u, &c->cap_first);
        uint64_t at = c->t.first[id];
        grow((void **)&c->t.refs, 4u, at + n + 1u, &c->cap_refs);
        memcpy(c->t.refs + at, refs, (size_t)n * 4u);
        c->t.first[id + 1u] = at + n;
        kd_leaf lf = {0, n, node, box};
        c->t.leaves[id] = lf;
        c->t.nodes[node].info = KD_LEAF | (id << 2);
        free(l);
        free(r);
        return;
    }
    uint32_t first = c->t.nnodes;
    c->t.nnodes += 2u;
    grow((void **)&c->t.nodes, sizeof(kd_node), c->t.nnodes, &c->cap_nodes);
    c->t.nodes[node].split = split;
    c->t.nodes[node].info = axis | (first << 2);
    kd_box lb = box, rb = box;
    lb.hi[axis] = split;
    rb.lo[axis] = split;
    cpu_build(c, s, first, lb, l, nl, depth + 1);
    cpu_build(c, s, first + 1u, rb, r, nr, depth + 1);
    free(l);
    free(r);
}

static void test_check(const char *scene, uint32_t min_hits) {
    kd_scene s;
    CHECK(kd_scene_generate(&s, scene, 6000, 3) == 0);
    cpu_tree c;
    memset(&c, 0, sizeof c);
    c.t.nnodes = 1;
    grow((void **)&c.t.nodes, sizeof(kd_node), 1, &c.cap_nodes);
    grow((void **)&c.t.first, sizeof(uint64_t), 2, &c.cap_first);
    c.t.first[0] = 0;
    c.t.root = kd_scene_bounds(&s);
    uint32_t *all = malloc(s.ntris * 4u);
    for (uint32_t i = 0; i < s.ntris; ++i) all[i] = i;
    cpu_build(&c, &s, 0, c.t.root, all, s.ntris, 0);
    kd_check_result r;
    uint64_t e = kd_check_tree(&s, &c.t, 1000000u, 0, 200, 9, &r);
    printf("%s reference tree: %u nodes, %u leaves, %llu refs, %llu rays (%llu hits): %llu errors\n", scene, c.t.nnodes,
           c.t.nleaves, (unsigned long long)c.t.first[c.t.nleaves], (unsigned long long)r.rays,
           (unsigned long long)r.hits, (unsigned long long)e);
    CHECK_EQ_U64(e, 0);
    CHECK(r.hits >= min_hits);
    /* Find a leaf with at least 3 references and break it three ways. */
    uint32_t l = 0;
    while (l < c.t.nleaves && c.t.first[l + 1] - c.t.first[l] < 3u) ++l;
    CHECK(l < c.t.nleaves);
    uint32_t *refs = c.t.refs + c.t.first[l], saved = refs[0];
    refs[0] = refs[1]; /* duplicate + missing */
    e = kd_check_tree(&s, &c.t, 1000000u, 0, 0, 9, &r);
    CHECK(r.dup_refs >= 1 && r.missing >= 1 && e >= 2);
    refs[0] = saved;
    for (uint32_t t = 0; t < s.ntris; ++t) { /* a foreign triangle */
        float lo[3], hi[3];
        kd_tri_bounds(&s, t, lo, hi);
        if (!kd_overlap(lo, hi, &c.t.leaves[l].box)) {
            refs[0] = t;
            break;
        }
    }
    e = kd_check_tree(&s, &c.t, 1000000u, 0, 0, 9, &r);
    CHECK(r.bad_refs >= 1 && e >= 1);
    refs[0] = saved;
    c.t.leaves[l].box.hi[0] += 1.0f; /* a wrong stored box */
    e = kd_check_tree(&s, &c.t, 1000000u, 0, 0, 9, &r);
    CHECK(r.box_mismatch == 1 && e >= 1);
    free(all);
    kd_tree_free(&c.t);
    kd_scene_free(&s);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "k-d tree workload, CPU side.");
    test_obj();
    test_generators();
    test_check("soup", 50);
    test_check("torus", 20);
    test_check("clustered", 1);
    return wh_test_finish("test_kd_cpu");
}
