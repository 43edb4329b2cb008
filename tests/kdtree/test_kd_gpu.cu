/* SPDX-License-Identifier: MIT */
/* k-d tree builder on the GPU: small scenes, every allocator, each
 * tree checked exhaustively (every triangle against every leaf it overlaps,
 * random rays against brute force); with a heap 200x the root list no
 * allocator may fail and all build the same tree; a heap too small for the whole build (nodes become leaves, the tree stays
 * right); the SLAB kind, whose 64 KiB limit refuses a 20K-triangle root. */
#include "kd_build.h"
#include "warpheap/cuda_check.h"
#include "wh_test.h"

typedef struct kind {
    const char *name;
    kd_alloc alloc;
    wh_heap_kind heap;
} kind;

static const kind KINDS[] = {{"BUMP", KD_ALLOC_WARPHEAP, WH_HEAP_BUMP},
                             {"DEFAULT", KD_ALLOC_WARPHEAP, WH_HEAP_DEFAULT},
                             {"CIRCULAR", KD_ALLOC_WARPHEAP, WH_HEAP_CIRCULAR},
                             {"SLAB", KD_ALLOC_WARPHEAP, WH_HEAP_SLAB},
                             {"cuda-malloc", KD_ALLOC_CUDA, WH_HEAP_DEFAULT}};

static const char CUBE[] = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
                           "f 1 2 3 4\nf 5 6 7 8\nf 1 2 6 5\nf 4 3 7 8\nf 1 4 8 5\nf 2 3 7 6\n";

/* Build with one allocator (heap of `bytes`), check; returns the build's stats.
 * expect_root_fail: the kind cannot hold the root list. */
static int build_and_check(kd_gpu *g, const kd_scene *s, const kind *k, uint64_t bytes, kd_build_stats *st,
                           int expect_root_fail) {
    kd_build_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.alloc = k->alloc;
    cfg.timeout_s = 10.0;
    if (k->alloc == KD_ALLOC_WARPHEAP) {
        wh_heap_config hc;
        memset(&hc, 0, sizeof hc);
        hc.bytes = bytes;
        hc.kind = k->heap;
        if (wh_heap_create(&cfg.heap, &hc) != WH_OK) {
            fprintf(stderr, "heap %s %llu: %s\n", k->name, (unsigned long long)bytes, wh_last_error());
            CHECK(0);
            return -1;
        }
    }
    int rc = 0;
    for (int rep = 0; rep < 2; ++rep) { /* the second on a reset heap */
        kd_build_stats now;
        rc = kd_gpu_build(g, &cfg, &now);
        CHECK_EQ_U64(now.timeouts, 0);
        CHECK_EQ_U64(now.node_overflow, 0);
        if (expect_root_fail) {
            CHECK(rc == -1);
        } else {
            CHECK(rc == 0);
            kd_tree t;
            CHECK(kd_gpu_download(g, &t) == 0);
            kd_check_result r;
            uint64_t e = kd_check_tree(s, &t, 1000000u, 0, 128u, 5u + (uint64_t)rep, &r);
            if (e)
                fprintf(stderr, "%s: structure %llu box %llu bad %llu dup %llu missing %llu rays %llu\n", k->name,
                        (unsigned long long)r.bad_structure, (unsigned long long)r.box_mismatch,
                        (unsigned long long)r.bad_refs, (unsigned long long)r.dup_refs, (unsigned long long)r.missing,
                        (unsigned long long)r.ray_mismatch);
            CHECK_EQ_U64(e, 0);
            CHECK_EQ_U64(t.first[t.nleaves], now.refs);
            kd_tree_free(&t);
            /* a failed allocation turns a node into a leaf at a moment that
             * depends on scheduling: compare trees only when both had none */
            if (rep == 1 && !now.alloc_failures && !st->alloc_failures) {
                CHECK_EQ_U64(now.nodes, st->nodes); /* deterministic splits */
                CHECK_EQ_U64(now.refs, st->refs);
            }
        }
        if (rep == 0) *st = now;
        if (k->alloc == KD_ALLOC_CUDA)
            kd_gpu_release(g);
        else
            CHECK(wh_heap_reset(&cfg.heap) == WH_OK);
    }
    printf("  %-11s heap %9llu B: %.2f ms, %llu nodes, %llu leaves, %.2f refs/tri, %llu allocs, %llu failed%s\n",
           k->name, (unsigned long long)bytes, st->ms, (unsigned long long)st->nodes, (unsigned long long)st->leaves,
           s->ntris ? (double)st->refs / s->ntris : 0.0, (unsigned long long)st->allocs,
           (unsigned long long)st->alloc_failures, expect_root_fail ? " (root refused, as expected)" : "");
    if (k->alloc == KD_ALLOC_WARPHEAP) CHECK(wh_heap_destroy(&cfg.heap) == WH_OK);
    return rc;
}

static void test_scene(const char *name, kd_scene *s) {
    kd_gpu g;
    printf("%s: %u triangles\n", name, s->ntris);
    CHECK(kd_gpu_create(&g, s, 8u * s->ntris + 4096u) == 0);
    uint64_t root = kd_root_bytes(s->ntris), big = root * 200u < (1u << 20) ? (1u << 20) : root * 200u;
    kd_build_stats first, st;
    memset(&first, 0, sizeof first);
    for (unsigned k = 0; k < sizeof KINDS / sizeof KINDS[0]; ++k) {
        int slab_refuses = KINDS[k].heap == WH_HEAP_SLAB && KINDS[k].alloc == KD_ALLOC_WARPHEAP && root > WH_SLAB_MAX;
        memset(&st, 0, sizeof st);
        build_and_check(&g, s, &KINDS[k], big, &st, slab_refuses);
        if (slab_refuses) continue;
        if (k == 0) first = st;
        /* A heap 200x the root list has room for every list of the build:
         * no allocator may fail here (docs/kdtree.md). */
        CHECK_EQ_U64(st.alloc_failures, 0);
        CHECK_EQ_U64(st.nodes, first.nodes); /* the same tree */
        CHECK_EQ_U64(st.leaves, first.leaves);
        CHECK_EQ_U64(st.refs, first.refs);
        CHECK_EQ_U64(st.allocs, first.allocs);
    }
    /* Table 4's setting, and a heap far too small: the tree must stay right. */
    uint64_t small = root * 20u < (1u << 20) ? (1u << 20) : root * 20u;
    build_and_check(&g, s, &KINDS[1], small, &st, 0);
    build_and_check(&g, s, &KINDS[2], small, &st, 0);
    if (s->ntris >= 20000u && !strcmp(name, "soup")) { /* slow: failures retry */
        uint64_t tiny = root * 3u < (256u << 10) ? (256u << 10) : root * 3u;
        build_and_check(&g, s, &KINDS[1], tiny, &st, 0);
        CHECK(st.alloc_failures > 0);
    }
    kd_gpu_destroy(&g);
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "k-d tree builder on the GPU.");
    if (!wh_cuda_available()) return WH_TEST_SKIP;
    WH_CUDA_OR_DIE(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)64 << 20));
    kd_scene s;
    CHECK(kd_obj_parse(&s, CUBE, sizeof CUBE - 1) == 0);
    test_scene("cube.obj", &s);
    kd_scene_free(&s);
    CHECK(kd_scene_soup(&s, 3000, 1) == 0);
    test_scene("soup", &s);
    kd_scene_free(&s);
    const char *names[3] = {"soup", "torus", "clustered"};
    for (int k = 0; k < 3; ++k) {
        CHECK(kd_scene_generate(&s, names[k], 20000, 1234) == 0);
        test_scene(names[k], &s);
        kd_scene_free(&s);
    }
    return wh_test_finish("test_kd_gpu");
}
