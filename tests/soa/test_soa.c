/* SPDX-License-Identifier: MIT */
/* Object allocator unit tests (CPU backend): bad configurations give clear
 * statuses, block capacities follow the rule of 3.2, object pointers round-trip
 * at 50-bit addresses, subclass objects share the superclass's field arrays,
 * exhaustion gives null pointers and leaves the heap usable, device_do
 * enumerates exactly the live objects, parallel_new creates n objects packed
 * cap to a block (and falls back to single allocations when blocks run out),
 * bad frees (double, of another heap, forged) are refused and counted without
 * touching any heap, a type too large for the 64-object rule still gets
 * objects that do not overlap, placement keys keep a key's objects in
 * blocks of their own, and 32-bit references round-trip. */
#include "warpheap/soa.h"
#include "wh_test.h"

/* clang-format off */
#define P_FIELDS(F) F(float, x) F(float, y)
/* clang-format on */
WH_SOA_CLASS(Pt, 0, P_FIELDS)
/* clang-format off */
#define Q_FIELDS(F) F(double, w) F(double, v[3])
/* clang-format on */
WH_SOA_SUBCLASS(Qt, 1, Pt, Q_FIELDS)
/* clang-format off */
#define ABS_FIELDS(F) F(uint8_t, k)
/* clang-format on */
WH_SOA_CLASS(Ab, 2, ABS_FIELDS)
/* clang-format off */
#define BIG_FIELDS(F) F(uint8_t, blob[5000])
/* clang-format on */
WH_SOA_CLASS(Big, 3, BIG_FIELDS)
/* clang-format off */
#define TP_FIELDS(F) F(uint64_t, key) F(uint32_t, val)
/* clang-format on */
WH_SOA_CLASS(Tp, 4, TP_FIELDS)
WH_SOA_CLASS(Tq, 0, TP_FIELDS) /* the same, alone in a heap: id 0 */

typedef struct init_ctx {
    float scale;
} init_ctx;
WH_INLINE WH_HOST_DEVICE void pt_init(const wh_soa *s, Pt p, uint64_t i, const init_ctx *c) {
    (void)s;
    WH_GET(Pt, p, x) = (float)i * c->scale;
    WH_GET(Pt, p, y) = -(float)i;
}
WH_SOA_PARALLEL_NEW(Pt, pt_init, init_ctx)

static void test_config(void) {
    wh_soa s;
    wh_soa_type_desc t2[] = {WH_SOA_TYPE(Pt), WH_SOA_TYPE(Qt)};
    wh_soa_config cfg = {1u << 20, t2, 2, false, 2, NULL, false};
    cfg.bytes = 100;
    CHECK(wh_soa_create(&s, &cfg) == WH_ERR_TOO_SMALL);
    printf("  too small: %s\n", wh_last_error());
    cfg.bytes = 1u << 20;
    cfg.ntypes = 0;
    CHECK(wh_soa_create(&s, &cfg) == WH_ERR_INVALID_ARGUMENT);
    wh_soa_type_desc many[WH_SOA_MAX_TYPES + 1];
    for (uint32_t i = 0; i <= WH_SOA_MAX_TYPES; ++i) many[i] = (wh_soa_type_desc){"T", i, 8, -1, 0};
    cfg.types = many;
    cfg.ntypes = WH_SOA_MAX_TYPES + 1;
    CHECK(wh_soa_create(&s, &cfg) == WH_ERR_TOO_LARGE);
    printf("  too many types: %s\n", wh_last_error());
    wh_soa_type_desc swapped[] = {WH_SOA_TYPE(Qt), WH_SOA_TYPE(Pt)};
    cfg.types = swapped;
    cfg.ntypes = 2;
    CHECK(wh_soa_create(&s, &cfg) == WH_ERR_INVALID_ARGUMENT);
#if !WH_HAVE_CUDA
    cfg.types = t2;
    cfg.on_device = true;
    CHECK(wh_soa_create(&s, &cfg) == WH_ERR_NO_DEVICE);
#endif
}

static void test_pointer(void) {
    uint8_t *blk = (uint8_t *)(uintptr_t)0x3FFFFFFFFFFC0ull; /* a 50-bit, 64-aligned address */
    uint64_t p = wh_soa_ptr_make(blk, 13, 64, 63);
    CHECK(wh_soa_ptr_block(p) == blk);
    CHECK_EQ_U64(wh_soa_ptr_type(p), 13);
    CHECK_EQ_U64(wh_soa_ptr_cap(p), 64);
    CHECK_EQ_U64(wh_soa_ptr_slot(p), 63);
    p = wh_soa_ptr_make((uint8_t *)(uintptr_t)0x7f1234567840ull, 255, 1, 0); /* typical UVA (47 bits) */
    CHECK(wh_soa_ptr_block(p) == (uint8_t *)(uintptr_t)0x7f1234567840ull);
    CHECK_EQ_U64(wh_soa_ptr_type(p), 255);
    CHECK_EQ_U64(wh_soa_ptr_cap(p), 1);
}

/* 32-bit references: every object of a full heap, of a class and its
 * subclass (different capacities), round-trips and no two share a reference; null stays
 * null; the last block a reference reaches encodes; a heap with more blocks
 * than references reach is refused when it is made with refs. */
static void test_refs(void) {
    wh_soa s;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(Pt), WH_SOA_TYPE(Qt)};
    wh_soa_config cfg = {64u << 10, t, 2, false, 2, NULL, true};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    CHECK(s.refs && s.cap[Pt_TYPE] != s.cap[Qt_TYPE]);
    enum { N = 8192 };
    static uint64_t obj[N];
    static wh_soa_ref ref[N];
    uint32_t n = 0;
    for (uint32_t i = 0; n < N; ++i) {
        uint64_t p = wh_soa_alloc(&s, i % 3u == 0 ? Qt_TYPE : Pt_TYPE);
        if (!p) break; /* full */
        obj[n] = p;
        ref[n] = wh_soa_ref_of(&s, p);
        CHECK(ref[n] != WH_SOA_NULL_REF);
        CHECK(wh_soa_ref_ptr(&s, ref[n]) == p);
        ++n;
    }
    CHECK(n > 1000 && n < N); /* the heap filled up */
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = i + 1; j < n && j < i + 200; ++j) CHECK(ref[i] != ref[j]);
    Qt q = Qt_from(obj[0]);
    CHECK(WH_SOA_REF(&s, q) == ref[0] && Qt_from_ref(&s, ref[0]).p == q.p);
    CHECK(Pt_from_ref(&s, ref[0]).p == q.p); /* a base class's handle: the same object */
    CHECK(wh_soa_ref_of(&s, 0) == WH_SOA_NULL_REF && wh_soa_ref_ptr(&s, WH_SOA_NULL_REF) == 0);
    CHECK(Pt_is_null(Pt_from_ref(&s, WH_SOA_NULL_REF)));
    for (uint32_t i = 0; i < n; ++i) CHECK(wh_soa_free(&s, obj[i]) == WH_OK);
    uint64_t bad = 1;
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    uint32_t block_bytes = s.block_bytes;
    wh_soa_destroy(&s);
    /* the last reachable block, in a descriptor alone (no memory is touched) */
    wh_soa f;
    memset(&f, 0, sizeof f);
    f.blocks = (uint8_t *)(uintptr_t)0x7f0000000000ull;
    f.block_bytes = block_bytes;
    f.nblocks = WH_SOA_REF_BLOCKS;
    f.refs = 1;
    f.cap[Tp_TYPE] = 64;
    uint64_t p = wh_soa_ptr_make(wh__soa_block(&f, WH_SOA_REF_BLOCKS - 1u), Tp_TYPE, 64, 63);
    CHECK_EQ_U64(wh_soa_ref_of(&f, p), (uint32_t)WH_SOA_REF_BLOCKS << 10 | (uint32_t)Tp_TYPE << 6 | 63u);
    CHECK(wh_soa_ref_ptr(&f, wh_soa_ref_of(&f, p)) == p);
    /* too many blocks for references: refused before any memory is taken */
    cfg.bytes = (size_t)(WH_SOA_REF_BLOCKS + WH_SOA_REF_BLOCKS / 8u) * block_bytes; /* bitmaps: ~2% of it */
    CHECK(wh_soa_create(&s, &cfg) == WH_ERR_TOO_LARGE);
    printf("  refs: %s\n", wh_last_error());
}

static void test_layout_and_subclass(void) {
    wh_soa s;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(Pt), WH_SOA_TYPE(Qt), WH_SOA_ABSTRACT_TYPE(Ab), WH_SOA_TYPE(Big)};
    wh_soa_config cfg = {8u << 20, t, 4, false, 2, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    /* smallest concrete: Pt (8 B); data = max(64*8, 5000) -> 5056; Pt 64, Qt (40 B) 126->64, Big 1 */
    CHECK_EQ_U64(s.cap[Pt_TYPE], 64);
    CHECK_EQ_U64(s.cap[Qt_TYPE], 5056 / WH_SOA_SIZE(Qt) > 64 ? 64 : 5056 / WH_SOA_SIZE(Qt));
    CHECK_EQ_U64(WH_SOA_SIZE(Pt), 8);
    CHECK_EQ_U64(WH_SOA_SIZE(Qt), 40);
    CHECK_EQ_U64(WH_SOA_SIZE(Tp), 12); /* not sizeof's 16: no tail padding */
    CHECK_EQ_U64(sizeof(Tp__layout), 16);
    CHECK_EQ_U64(s.cap[Ab_TYPE], 0);
    CHECK_EQ_U64(s.cap[Big_TYPE], 1);
    CHECK_EQ_U64(s.subtypes[Pt_TYPE], 3);
    CHECK(wh_soa_alloc(&s, Ab_TYPE) == 0); /* abstract: never allocated */
    Qt q = WH_SOA_NEW(&s, Qt);
    CHECK(!Qt_is_null(q));
    WH_GET(Pt, Qt_super(q), x) = 1.5f;
    CHECK(WH_GET(Qt, q, base.x) == 1.5f); /* one array, two names */
    WH_GET(Qt, q, v)[2] = 7.0;
    CHECK(WH_GET(Qt, q, v)[2] == 7.0);
    CHECK(((uintptr_t)WH_FIELD(Qt, q, w) & 7u) == 0);
    Big g = WH_SOA_NEW(&s, Big);
    Big g2 = WH_SOA_NEW(&s, Big);
    CHECK(!Big_is_null(g) && !Big_is_null(g2) && wh_soa_ptr_block(g.p) != wh_soa_ptr_block(g2.p));
    WH_GET(Big, g, blob)[4999] = 9;
    CHECK(WH_SOA_IS(&s, q.p, Pt) && !WH_SOA_IS(&s, g.p, Pt));
    uint64_t bad = 1;
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    WH_SOA_DESTROY(&s, q);
    WH_SOA_DESTROY(&s, g);
    WH_SOA_DESTROY(&s, g2);
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    CHECK_EQ_U64(st.free_blocks, st.blocks);
    wh_soa_destroy(&s);
}

static void test_exhaustion_and_iter(void) {
    wh_soa s;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(Pt), WH_SOA_TYPE(Qt)};
    wh_soa_config cfg = {64u << 10, t, 2, false, 3, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    uint64_t cap = (uint64_t)s.nblocks * 64u, n = 0;
    uint64_t *ps = malloc((cap + 1) * 8);
    for (uint64_t p; n <= cap && (p = wh_soa_alloc(&s, Pt_TYPE)) != 0;) ps[n++] = p;
    CHECK_EQ_U64(n, cap); /* every slot, then null */
    CHECK(wh_soa_alloc(&s, Qt_TYPE) == 0);
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    CHECK(st.counters[WH_SOA_CTR_FAILED_ALLOCS] >= 2);
    CHECK_EQ_U64(st.free_blocks, 0);
    CHECK(st.fragmentation == 0.0);
    uint64_t bad = 1;
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    /* free every other object: iterator sees exactly the rest */
    for (uint64_t k = 0; k < n; k += 2) wh_soa_free(&s, ps[k]);
    wh_soa_iter it;
    wh_soa_iter_begin(&it, &s, Pt_TYPE);
    uint64_t seen = 0;
    while (wh_soa_iter_next(&it, &s)) ++seen;
    CHECK_EQ_U64(seen, n / 2);
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    CHECK(st.fragmentation > 0.49 && st.fragmentation < 0.51);
    /* the heap is usable again: free slots are found in active blocks */
    Qt q = WH_SOA_NEW(&s, Qt);
    CHECK(Qt_is_null(q)); /* no free block for another type */
    uint64_t again = wh_soa_alloc(&s, Pt_TYPE);
    CHECK(again != 0);
    wh_soa_free(&s, again);
    for (uint64_t k = 1; k < n; k += 2) wh_soa_free(&s, ps[k]);
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    q = WH_SOA_NEW(&s, Qt);
    CHECK(!Qt_is_null(q));
    WH_SOA_DESTROY(&s, q);
    /* parallel_new */
    init_ctx ic = {2.0f};
    CHECK(Pt_parallel_new_pt_init(&s, 1000, ic) == WH_OK);
    wh_soa_iter_begin(&it, &s, Pt_TYPE);
    uint64_t p, cnt = 0;
    double sum = 0;
    while ((p = wh_soa_iter_next(&it, &s)) != 0) {
        ++cnt;
        sum += WH_GET(Pt, Pt_from(p), x);
    }
    CHECK_EQ_U64(cnt, 1000);
    CHECK(sum == 2.0 * 999.0 * 1000.0 / 2.0);
    CHECK(Pt_parallel_new_pt_init(&s, cap, ic) == WH_ERR_OUT_OF_MEMORY);
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    free(ps);
    wh_soa_destroy(&s);
}

/* A copied image (the path a device heap takes) reads the same fields, and
 * pointers translate into it: blocks of the copy stay 64-byte aligned. */
static void test_image(void) {
    wh_soa s;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(Pt), WH_SOA_TYPE(Qt)};
    wh_soa_config cfg = {4u << 20, t, 2, false, 2, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    uint64_t ps[300];
    for (int i = 0; i < 300; ++i) {
        ps[i] = wh_soa_alloc(&s, i % 3 ? Pt_TYPE : Qt_TYPE);
        CHECK(ps[i] != 0);
        if (ps[i]) WH_GET(Pt, Pt_from(ps[i]), x) = (float)i;
    }
    wh_soa img;
    void *owned = NULL;
    CHECK(wh__soa_image_copy(&s, &img, &owned) == WH_OK);
    CHECK(owned != NULL && ((uintptr_t)img.blocks & 63u) == 0);
    int wrong = 0;
    for (int i = 0; i < 300; ++i) wrong += WH_GET(Pt, Pt_from(wh_soa_image_ptr(&s, &img, ps[i])), x) != (float)i;
    CHECK_EQ_U64(wrong, 0);
    wh_soa_iter it;
    wh_soa_iter_begin(&it, &img, Pt_TYPE);
    double sum = 0;
    int cnt = 0;
    for (uint64_t p; (p = wh_soa_iter_next(&it, &img)) != 0; ++cnt) sum += WH_GET(Pt, Pt_from(p), x);
    CHECK_EQ_U64(cnt, 300);
    CHECK(sum == 299.0 * 300.0 / 2.0);
    free(owned);
    wh_soa_destroy(&s);
}

/* parallel_new packs: n objects into a fresh heap fill ceil(n / cap) blocks,
 * every object once, on several host threads.  When the free blocks run out
 * the rest go one by one into the active blocks, and the heap stays whole. */
static void test_parallel_new_packed(void) {
    wh_soa s;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(Pt), WH_SOA_TYPE(Qt)};
    wh_soa_config cfg = {8u << 20, t, 2, false, 4, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    uint64_t cap = s.cap[Pt_TYPE], n = 100 * cap + cap / 3;
    init_ctx ic = {1.0f};
    CHECK(Pt_parallel_new_pt_init(&s, n, ic) == WH_OK);
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    CHECK_EQ_U64(st.used_blocks[Pt_TYPE], (n + cap - 1) / cap);
    CHECK_EQ_U64(st.objects[Pt_TYPE], n);
    char *seen = calloc(n, 1);
    wh_soa_iter it;
    wh_soa_iter_begin(&it, &s, Pt_TYPE);
    uint64_t p, bad = 0;
    while ((p = wh_soa_iter_next(&it, &s)) != 0) {
        float x = WH_GET(Pt, Pt_from(p), x);
        uint64_t i = (uint64_t)x;
        if ((float)i != x || i >= n || seen[i]++) ++bad;
    }
    CHECK_EQ_U64(bad, 0);
    /* a partly filled block from before: the next batch fills fresh blocks
     * first, then (none left) the free slots one by one */
    uint64_t room = (st.blocks - st.used_blocks[Pt_TYPE]) * cap;
    CHECK(Pt_parallel_new_pt_init(&s, room + cap, ic) == WH_ERR_OUT_OF_MEMORY);
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    CHECK_EQ_U64(st.free_blocks, 0);
    CHECK_EQ_U64(st.objects[Pt_TYPE], st.blocks * cap); /* every slot used, the last block's too */
    uint64_t bad_blocks = 0;
    CHECK(wh_soa_check(&s, &bad_blocks) == WH_OK && bad_blocks == 0);
    free(seen);
    wh_soa_destroy(&s);
}

/* Objects without tail padding (Tp: 12 bytes, sizeof 16): the last field's
 * array ends exactly at the end of the block's data.  Fill several adjacent
 * blocks, write every field, and read back: an array past the block would
 * overwrite the next block's header or objects. */
static void test_packed_arrays(void) {
    wh_soa s;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(Tq)};
    wh_soa_config cfg = {1u << 20, t, 1, false, 2, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    CHECK_EQ_U64(s.cap[Tq_TYPE], 64);
    CHECK_EQ_U64(s.block_bytes, WH_SOA_HEADER_BYTES + 64u * 12u); /* data = 64 x 12, not 64 x 16 */
    uint64_t n = (uint64_t)s.nblocks * s.cap[Tq_TYPE];
    uint64_t *ps = malloc(n * sizeof *ps), got = 0;
    for (; got < n; ++got) {
        Tq o = WH_SOA_NEW(&s, Tq);
        if (Tq_is_null(o)) break;
        ps[got] = o.p;
        WH_GET(Tq, o, key) = 0x1000000000000000ull + got;
        WH_GET(Tq, o, val) = ~(uint32_t)got;
    }
    CHECK_EQ_U64(got, n); /* every block full */
    uint64_t bad = 0;
    for (uint64_t i = 0; i < got; ++i) {
        Tq o = Tq_from(ps[i]);
        bad += WH_GET(Tq, o, key) != 0x1000000000000000ull + i || WH_GET(Tq, o, val) != ~(uint32_t)i;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    free(ps);
    wh_soa_destroy(&s);
}

/* The slots of live objects, as a set: no slot may be handed out twice. */
static bool all_distinct(const uint64_t *ps, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i)
        for (uint64_t j = i + 1; j < n; ++j)
            if (ps[i] == ps[j]) return false;
    return true;
}

/* A second free of a block's last object arrives after the block went back
 * to the free list: it is refused, and no slot is later handed out twice. */
static void test_double_free_last(void) {
    wh_soa s;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(Pt), WH_SOA_TYPE(Qt)};
    wh_soa_config cfg = {64u << 10, t, 2, false, 2, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    uint64_t p = wh_soa_alloc(&s, Pt_TYPE);
    CHECK(p != 0);
    CHECK(wh_soa_free(&s, p) == WH_OK); /* the block is free again */
    CHECK(wh_soa_free(&s, p) == WH_ERR_DOUBLE_FREE);
    CHECK(wh_soa_free(&s, p) == WH_ERR_DOUBLE_FREE);
    uint64_t bad = 1;
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_BAD_FREE], 2);
    CHECK_EQ_U64(st.free_blocks, st.blocks);
    /* fill the heap: every slot once */
    uint64_t n = 0, *ps = malloc(((uint64_t)s.nblocks * 64u + 1) * 8);
    for (uint64_t q; n <= (uint64_t)s.nblocks * 64u && (q = wh_soa_alloc(&s, Pt_TYPE)) != 0;) ps[n++] = q;
    CHECK_EQ_U64(n, (uint64_t)s.nblocks * 64u);
    CHECK(all_distinct(ps, n));
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    /* a double free of an object whose block still holds others: refused too */
    CHECK(wh_soa_free(&s, ps[0]) == WH_OK);
    CHECK(wh_soa_free(&s, ps[0]) == WH_ERR_DOUBLE_FREE);
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    CHECK(wh_soa_alloc(&s, Pt_TYPE) != 0);
    CHECK(wh_soa_alloc(&s, Pt_TYPE) == 0); /* one slot came back, not two */
    free(ps);
    wh_soa_destroy(&s);
}

/* Pointers this heap never handed out: another heap's object, forged type
 * or capacity bits, addresses outside the heap or between slots.  Each is
 * refused as foreign; neither heap changes. */
static void test_foreign_frees(void) {
    wh_soa a, b;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(Pt), WH_SOA_TYPE(Qt)};
    wh_soa_config cfg = {64u << 10, t, 2, false, 2, NULL, false};
    CHECK(wh_soa_create(&a, &cfg) == WH_OK);
    CHECK(wh_soa_create(&b, &cfg) == WH_OK);
    uint64_t pa = wh_soa_alloc(&a, Pt_TYPE), pb = wh_soa_alloc(&b, Qt_TYPE);
    CHECK(pa != 0 && pb != 0);
    CHECK(wh_soa_free(&b, pa) == WH_ERR_FOREIGN_POINTER); /* another heap's object */
    CHECK(wh_soa_free(&a, pb) == WH_ERR_FOREIGN_POINTER);
    uint64_t tags = pa & ~WH_SOA_ADDR_MASK, blocks = (uint64_t)(uintptr_t)a.blocks;
    uint64_t forged[] = {
        pa ^ (15ull << WH_SOA_TYPE_SHIFT),                                 /* an unknown type id */
        wh_soa_ptr_make(wh_soa_ptr_block(pa), Qt_TYPE, a.cap[Qt_TYPE], 0), /* its block is Pt's */
        pa ^ (5ull << WH_SOA_CAP_SHIFT),                                   /* a wrong capacity */
        tags | (blocks + (uint64_t)a.nblocks * a.block_bytes),             /* past the last block */
        tags | (blocks - 1024u),                                           /* before block 0 */
        pa + WH_SOA_BLOCK_ALIGN,                                           /* inside a block, not its start */
        0x123456789abcdefull,                                              /* garbage */
        ~0ull,
    };
    for (unsigned k = 0; k < sizeof forged / sizeof *forged; ++k)
        CHECK(wh_soa_free(&a, forged[k]) == WH_ERR_FOREIGN_POINTER);
    uint64_t bad = 1;
    CHECK(wh_soa_check(&a, &bad) == WH_OK && bad == 0);
    CHECK(wh_soa_check(&b, &bad) == WH_OK && bad == 0);
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(&a, &st) == WH_OK);
    CHECK_EQ_U64(st.objects[Pt_TYPE], 1); /* pa lives on */
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_FOREIGN_FREE], 1 + sizeof forged / sizeof *forged);
    CHECK_EQ_U64(st.counters[WH_SOA_CTR_BAD_FREE], 0);
    CHECK(wh_soa_stats_get(&b, &st) == WH_OK);
    CHECK_EQ_U64(st.objects[Qt_TYPE], 1);
    CHECK(wh_soa_free(&a, pa) == WH_OK);
    CHECK(wh_soa_free(&b, pb) == WH_OK);
    CHECK(wh_soa_free(&a, 0) == WH_OK); /* null: nothing to do */
    uint64_t again = wh_soa_alloc(&b, Qt_TYPE);
    wh_soa_destroy(&a);
    CHECK(wh_soa_alloc(&a, Pt_TYPE) == 0); /* a destroyed heap: nothing, no crash */
    CHECK(wh_soa_free(&a, again) == WH_ERR_INVALID_ARGUMENT);
    CHECK(wh_soa_free(&b, again) == WH_OK);
    wh_soa_destroy(&b);
}

/* A type of 64 MiB: 64 objects would need a 4 GiB block, past the block
 * size's 32 bits.  The block stops at WH_SOA_BLOCK_DATA_MAX and holds fewer
 * objects; they lie a whole object apart.  A type larger than that block is
 * refused with the limit in the message. */
static void test_huge_type(void) {
    wh_soa s;
    wh_soa_type_desc t[] = {{"Huge", 0, 64u << 20, -1, 0}};
    wh_soa_config cfg = {(size_t)WH_SOA_BLOCK_DATA_MAX + (8u << 20), t, 1, false, 2, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    CHECK_EQ_U64(s.cap[0], WH_SOA_BLOCK_DATA_MAX / (64u << 20));
    CHECK_EQ_U64(s.nblocks, 1);
    uint64_t p = wh_soa_alloc(&s, 0), q = wh_soa_alloc(&s, 0);
    CHECK(p != 0 && q != 0 && p != q);
    uint8_t *fp = (uint8_t *)wh_soa_field(p, 0, 64u << 20), *fq = (uint8_t *)wh_soa_field(q, 0, 64u << 20);
    uint64_t apart = fp > fq ? (uint64_t)(fp - fq) : (uint64_t)(fq - fp);
    CHECK(apart >= (64u << 20));
    CHECK(fp + (64u << 20) <= s.blocks + s.block_bytes && fq + (64u << 20) <= s.blocks + s.block_bytes);
    CHECK(wh_soa_free(&s, p) == WH_OK && wh_soa_free(&s, q) == WH_OK);
    wh_soa_destroy(&s);
    t[0].size = WH_SOA_BLOCK_DATA_MAX + 1u;
    CHECK(wh_soa_create(&s, &cfg) == WH_ERR_TOO_LARGE);
    printf("  huge type: %s\n", wh_last_error());
    t[0].size = 0xFFFFFFFFu;
    CHECK(wh_soa_create(&s, &cfg) == WH_ERR_TOO_LARGE);
}

/* WH_SOA_FOR_SLOTS visits exactly the set slots, in increasing order, for
 * full blocks (the counted loop) and partial ones, every capacity. */
static void test_for_slots(void) {
    const uint64_t masks[] = {0, 1, 0x8000000000000000ull, 0x5555555555555555ull, ~0ull, 0xF0F0u};
    uint64_t bad = 0;
    for (uint32_t cap = 1; cap <= 64; ++cap) {
        uint64_t full = cap == 64 ? ~0ull : (1ull << cap) - 1u;
        for (size_t m = 0; m < sizeof masks / sizeof masks[0] + 1; ++m) {
            uint64_t slots = m < sizeof masks / sizeof masks[0] ? masks[m] & full : full, seen = 0;
            int last = -1;
            WH_SOA_FOR_SLOTS(k, slots, cap, {
                bad += (int)k <= last || !((slots >> k) & 1u);
                last = (int)k;
                seen |= 1ull << k;
            });
            bad += seen != slots;
        }
    }
    CHECK_EQ_U64(bad, 0);
}

/* Placement keys: the objects of a key fill its blocks and share none with
 * another key while free blocks remain (the same interleaving without keys
 * mixes them), and a key's home is only a hint: a home that is full, free,
 * of another type or out of range gives an object elsewhere and changes
 * nothing there. */
static uint32_t blocks_of(const uint64_t *p, int n, const uint8_t **seen) {
    uint32_t k = 0;
    for (int i = 0; i < n; ++i) {
        int j = 0;
        while (j < (int)k && seen[j] != wh_soa_ptr_block(p[i])) ++j;
        if (j == (int)k) seen[k++] = wh_soa_ptr_block(p[i]);
    }
    return k;
}
static void test_placement(void) {
    wh_soa s;
    wh_soa_type_desc t[] = {WH_SOA_TYPE(Pt), WH_SOA_TYPE(Qt)};
    wh_soa_config cfg = {1u << 20, t, 2, false, 2, NULL, false};
    CHECK(wh_soa_create(&s, &cfg) == WH_OK);
    CHECK_EQ_U64(s.cap[Pt_TYPE], 64);
    uint64_t a[96], b[32], u[64];
    for (int i = 0; i < 96; ++i) { /* keys 7 and 8 interleaved */
        a[i] = wh_soa_alloc_at(&s, Pt_TYPE, 7);
        if (i < 32) b[i] = wh_soa_alloc_at(&s, Pt_TYPE, 8);
        CHECK(a[i] && (i >= 32 || b[i]));
    }
    for (int i = 0; i < 64; ++i) CHECK((u[i] = wh_soa_alloc(&s, Pt_TYPE)) != 0);
    const uint8_t *ba[96], *bb[32], *bu[64];
    uint32_t na = blocks_of(a, 96, ba), nb = blocks_of(b, 32, bb), nu = blocks_of(u, 64, bu);
    CHECK_EQ_U64(na, 2); /* 64 + 32 */
    CHECK_EQ_U64(nb, 1);
    for (uint32_t i = 0; i < na; ++i) CHECK(ba[i] != bb[0]);
    uint32_t shared = 0; /* unkeyed objects go where room is: the keys' blocks */
    for (uint32_t i = 0; i < nu; ++i) shared += bu[i] == ba[0] || bu[i] == ba[1] || bu[i] == bb[0];
    CHECK(shared > 0);
    printf("  placement: key 7 in %u blocks, key 8 in %u, unkeyed in %u (%u of them the keys')\n", na, nb, nu, shared);
    /* stale homes: full, free, another type's block, out of range */
    Qt q = WH_SOA_NEW(&s, Qt);
    CHECK(!Qt_is_null(q));
    uint32_t qb = wh__soa_block_of(&s, q.p), full = wh__soa_block_of(&s, a[0]);
    CHECK_EQ_U64(*wh__soa_alloc_word(&s, full), ~0ull);
    uint32_t free_b = wh_bitmap_find_and_clear(&s.free_blocks, 0);
    CHECK(free_b != WH_BITMAP_NONE);
    CHECK(wh_bitmap_try_set(&s.free_blocks, free_b)); /* only looked at */
    uint32_t homes[4] = {full, free_b, qb, s.nblocks + 5u};
    uint64_t qword = *wh__soa_alloc_word(&s, qb), x[4]; /* a free home may be opened for the key: its own then */
    for (int i = 0; i < 4; ++i) {
        *wh__soa_home(&s, Pt_TYPE, 100u + (uint32_t)i) = homes[i];
        x[i] = wh_soa_alloc_at(&s, Pt_TYPE, 100u + (uint32_t)i);
        CHECK(x[i] && wh_soa_ptr_type(x[i]) == Pt_TYPE);
        CHECK(wh__soa_block_of(&s, x[i]) != full && wh__soa_block_of(&s, x[i]) != qb);
        CHECK(*wh__soa_home(&s, Pt_TYPE, 100u + (uint32_t)i) == wh__soa_block_of(&s, x[i])); /* the new home */
    }
    CHECK_EQ_U64(*wh__soa_alloc_word(&s, qb), qword);
    CHECK(*wh__soa_type_word(&s, qb) == Qt_TYPE);
    uint64_t bad = 1;
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    for (int i = 0; i < 96; ++i) CHECK(wh_soa_free(&s, a[i]) == WH_OK);
    for (int i = 0; i < 32; ++i) CHECK(wh_soa_free(&s, b[i]) == WH_OK);
    for (int i = 0; i < 64; ++i) CHECK(wh_soa_free(&s, u[i]) == WH_OK);
    for (int i = 0; i < 4; ++i) CHECK(wh_soa_free(&s, x[i]) == WH_OK);
    CHECK(WH_SOA_DESTROY(&s, q) == WH_OK);
    /* key 8's home went back to the free list: the key still allocates */
    uint64_t again = wh_soa_alloc_at(&s, Pt_TYPE, 8);
    CHECK(again != 0);
    CHECK(wh_soa_free(&s, again) == WH_OK);
    wh_soa_stats st;
    CHECK(wh_soa_stats_get(&s, &st) == WH_OK);
    CHECK_EQ_U64(st.free_blocks, st.blocks);
    CHECK(wh_soa_check(&s, &bad) == WH_OK && bad == 0);
    CHECK(wh_soa_destroy(&s) == WH_OK);
}

/* The field lists that wh_soa_dist packs by: every field at its place in
 * the layout struct with its whole size (arrays too), inherited ones first. */
static void test_field_list(void) {
    wh_soa_field_desc f[8];
    CHECK(Pt__fields(f, 8) == 2);
    CHECK(f[0].offset == offsetof(Pt__layout, x) && f[0].size == 4);
    CHECK(f[1].offset == offsetof(Pt__layout, y) && f[1].size == 4);
    CHECK(Qt__fields(f, 8) == 4);
    CHECK(f[0].offset == 0 && f[1].offset == 4);
    CHECK(f[2].offset == offsetof(Qt__layout, w) && f[2].size == 8);
    CHECK(f[3].offset == offsetof(Qt__layout, v) && f[3].size == sizeof(double[3]));
    CHECK(f[3].offset + f[3].size == WH_SOA_SIZE(Qt));
    CHECK(Big__fields(f, 8) == 1 && f[0].offset == 0 && f[0].size == 5000);
    CHECK(Qt__fields(f, 3) == 4); /* the count, past what fits */
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Object allocator unit tests (CPU backend).");
    test_image();
    test_config();
    test_pointer();
    test_refs();
    test_layout_and_subclass();
    test_exhaustion_and_iter();
    test_parallel_new_packed();
    test_packed_arrays();
    test_double_free_last();
    test_foreign_frees();
    test_huge_type();
    test_for_slots();
    test_placement();
    test_field_list();
    return wh_test_finish("test_soa");
}
