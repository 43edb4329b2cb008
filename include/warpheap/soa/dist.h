/* SPDX-License-Identifier: MIT */
/* Object allocator across ranks (GPUs, or threads on the CPU backend): one
 * object heap per rank, objects that move to the rank that owns them, halo
 * rows of a grid split into bands.  Not in the paper: DynaSOAr runs on one
 * GPU; this layer keeps its heaps as they are and moves objects between
 * them through a transport (soa/transport.h: NCCL, or threads).
 *
 * Declare once per concrete class that migrates:
 *
 *     WH_SOA_DIST_CLASS(Fish, fish_owner, fish_arrive, Ctx)
 *
 * with, in device code as for a parallel_do,
 *     uint32_t fish_owner(const wh_soa *, Fish, const Ctx *)   the rank that
 *              owns the object now (a function of its fields: its cell, say),
 *              the same value each time it is asked within one migration;
 *     void fish_arrive(const wh_soa *, Fish, const Ctx *)      runs on the
 *              receiver for each object that arrived, after all arrived (it
 *              links the object into the receiver's grid, say).
 * Then `Fish_dist_migrate(&dist, ctx)`, called by every rank together, moves
 * every Fish whose owner is another rank: its fields are packed field by
 * field (SOA stays SOA on the wire: a field's values of all objects for one
 * rank lie together), counts and bytes go through the transport, the
 * receiver creates the objects in bulk (parallel_new's chunks) and unpacks
 * them.  Fields that refer to the grid should hold global indices (a cell
 * number), which mean the same on every rank; an object pointer field
 * means nothing on another rank.
 *
 * Nothing is lost or doubled.  A migration commits on every rank or on none:
 * senders destroy the objects they sent only after every receiver has
 * created all of its objects, and a receiver that runs out of heap destroys
 * the objects it created, so that all ranks return the same error and every
 * object is where it was (WH_ERR_OUT_OF_MEMORY; an owner outside [0, size),
 * or one that changed within the migration, gives WH_ERR_INVALID_ARGUMENT).
 * A subclass's objects are not moved by its parent's migration: each
 * concrete class has its own.
 *
 * Every function here is collective: every rank calls it, in the same order.
 * Device heaps use device buffers, host heaps host buffers; the transport
 * must say the same (on_device).
 */
#ifndef WARPHEAP_SOA_DIST_H
#define WARPHEAP_SOA_DIST_H

#include "warpheap/soa.h"
#include "warpheap/soa/transport.h"

#include <string.h> /* memcpy, memset */

/* The most fields a migrating class may have (its own and inherited). */
#define WH_SOA_DIST_MAX_FIELDS 32u

typedef struct wh_soa_dist_stats {
    uint64_t migrations, refused; /* class migrations; of them refused on every rank */
    uint64_t sent, received;      /* objects */
    uint64_t bytes_sent, bytes_received;
    uint64_t halos, halo_bytes; /* halo exchanges; bytes this rank sent in them */
    double migrate_s, halo_s;   /* wall seconds spent in each */
} wh_soa_dist_stats;

typedef struct wh_soa_dist {
    wh_soa *soa;
    wh_soa_transport *tr;
    uint32_t rank, size;
    /* in the heap's memory: the plan (WH__SOA_DIST_WORDS words), staging
     * buffers, and the pointers of objects sent then received */
    uint64_t *meta, *list;
    uint8_t *send, *recv;
    size_t send_cap, recv_cap, list_cap;
    uint64_t *host;  /* the host's copy of meta */
    void **xptr;     /* an exchange's send and receive pointers, 2 size */
    size_t *xbytes;  /* and sizes */
    uint64_t *sizes; /* a gather's sizes, 2 size */
    char what[64];   /* the operation under way, for messages */
    double t0;
    wh_soa_dist_stats stats;
} wh_soa_dist;

WH_EXTERN_C_BEGIN
/* Rank tr->rank's end of the layer over its heap soa (which stays the
 * caller's).  WH_ERR_INVALID_ARGUMENT when the transport's memory is not the
 * heap's. */
WH_API wh_status wh_soa_dist_create(wh_soa_dist *d, wh_soa *soa, wh_soa_transport *tr);
WH_API wh_status wh_soa_dist_destroy(wh_soa_dist *d);
/* Halo of a grid split into bands of rows, ranks in a ring (rank - 1 above,
 * rank + 1 below, a torus): `rows` points at own + 2 rows of row_bytes each
 * in the heap's memory, a ghost row, this rank's own rows, a ghost row.  The
 * ghost rows receive the last own row of the rank above and the first own
 * row of the rank below (one rank: its own last and first rows).  Every
 * rank passes the same row_bytes and at least one own row. */
WH_API wh_status wh_soa_dist_halo_rows(wh_soa_dist *d, void *rows, size_t row_bytes, uint32_t own);
/* sum[i] = the sum over ranks of their mine[i], for i < n, on every rank
 * (host arrays). */
WH_API wh_status wh_soa_dist_sum(wh_soa_dist *d, const uint64_t *mine, uint64_t *sum, uint32_t n);
/* Rank 0 receives every rank's `bytes` bytes (host memory; the sizes may
 * differ) one after the other in rank order into all (cap bytes); the other
 * ranks pass NULL and 0.  *total (may be NULL): the bytes of all ranks. */
WH_API wh_status wh_soa_dist_gather(wh_soa_dist *d, const void *mine, size_t bytes, void *all, size_t cap,
                                    size_t *total);
/* Every rank receives every rank's `bytes` bytes (the sizes may differ) one
 * after the other in rank order into all (cap bytes); mine and all are in
 * the heap's memory (device memory for a device heap), so kernels read the
 * result where it lands.  *total (may be NULL): the bytes of all ranks. */
WH_API wh_status wh_soa_dist_allgather(wh_soa_dist *d, const void *mine, size_t bytes, void *all, size_t cap,
                                       size_t *total);
/* Migration support for WH_SOA_DIST_CLASS (src/soa/dist.c). */
typedef struct wh__soa_dist_view wh__soa_dist_view;
WH_API wh_status wh__soa_dist_begin(wh_soa_dist *d, wh__soa_dist_view *v, const char *cls);
/* Each returns the status every rank agrees on, and in *local (which may
 * alias its status argument) this rank's own status of the next stage. */
WH_API wh_status wh__soa_dist_plan(wh_soa_dist *d, wh__soa_dist_view *v, wh_status counted, uint64_t *out,
                                   wh_status *local);
WH_API wh_status wh__soa_dist_send(wh_soa_dist *d, wh__soa_dist_view *v, wh_status packed, uint64_t *in,
                                   wh_status *local);
WH_API wh_status wh__soa_dist_vote(wh_soa_dist *d, wh_status mine);
WH_API wh_status wh__soa_dist_end(wh_soa_dist *d, wh__soa_dist_view *v, wh_status agreed, wh_status after);
WH_EXTERN_C_END

/* What the kernels of a migration see (by value in their context): the
 * staging buffer, and per rank r the objects n[r] of its region, the
 * region's first byte and its first object's index; cnt: counts, then
 * cursors; list: object pointers. */
struct wh__soa_dist_view {
    uint8_t *buf;
    uint64_t *cnt, *list;
    const uint64_t *n, *region, *first;
    uint32_t rank, size, nfields;
    uint32_t idle; /* no rank sends anything: the migration ends after its plan */
    wh_soa_field_desc fields[WH_SOA_DIST_MAX_FIELDS];
};

WH_INLINE WH_HOST_DEVICE uint64_t wh__soa_dist_round8(uint64_t x) { return (x + 7u) & ~(uint64_t)7u; }
/* One value of size bytes (naturally aligned when 1, 2, 4 or 8: SOA arrays
 * and the wire's field arrays both are). */
WH_INLINE WH_HOST_DEVICE void wh__soa_dist_move(uint8_t *dst, const uint8_t *src, uint32_t size) {
    switch (size) {
    case 1: *dst = *src; break;
    case 2: *(uint16_t *)dst = *(const uint16_t *)src; break;
    case 4: *(uint32_t *)dst = *(const uint32_t *)src; break;
    case 8: *(uint64_t *)dst = *(const uint64_t *)src; break;
    default: memcpy(dst, src, size);
    }
}
/* Object p to or from place pos of region r: field f's values of the
 * region's n[r] objects lie together, each field's array 8-byte aligned. */
WH_INLINE WH_HOST_DEVICE void wh__soa_dist_wire(const wh__soa_dist_view *v, uint64_t p, uint32_t r, uint64_t pos,
                                                bool pack) {
    uint64_t n = v->n[r];
    uint8_t *at = v->buf + v->region[r];
    for (uint32_t f = 0; f < v->nfields; ++f) {
        uint32_t size = v->fields[f].size;
        uint8_t *field = (uint8_t *)wh_soa_field(p, v->fields[f].offset, size), *wire = at + pos * size;
        if (pack)
            wh__soa_dist_move(wire, field, size);
        else
            wh__soa_dist_move(field, wire, size);
        at += wh__soa_dist_round8(n * size);
    }
}
/* The rank whose region holds received object i: the last r with first[r] <= i. */
WH_INLINE WH_HOST_DEVICE uint32_t wh__soa_dist_source(const wh__soa_dist_view *v, uint64_t i) {
    uint32_t lo = 0, hi = v->size;
    while (hi - lo > 1u) {
        uint32_t mid = (lo + hi) / 2u;
        if (v->first[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The migration of one concrete class (see the top of this file).  Its
 * passes are parallel_do / parallel_new / parallel_for launches, so a device
 * heap runs them as kernels and a host heap on host threads. */
#define WH_SOA_DIST_CLASS(Class, owner, arrive, Ctx)                                                               \
    typedef struct Class##__dist {                                                                                 \
        Ctx user;                                                                                                  \
        wh__soa_dist_view v;                                                                                       \
    } Class##__dist;                                                                                               \
    typedef struct Class##__dist_list {                                                                            \
        wh_soa s;                                                                                                  \
        Ctx user;                                                                                                  \
        const uint64_t *list;                                                                                      \
    } Class##__dist_list;                                                                                          \
    /* pass 1: objects per destination (cnt[size]: owners out of range) */                                         \
    WH__SOA_FN void Class##__dist_count(const wh_soa *s, Class o, const Class##__dist *c) {                        \
        if (wh_soa_ptr_type(o.p) != (uint32_t)Class##_TYPE) return; /* a subclass */                               \
        uint32_t r = owner(s, o, &c->user);                                                                        \
        if (r != c->v.rank) (void)wh_atomic_fetch_add(&c->v.cnt[r < c->v.size ? r : c->v.size], 1ull, WH_RELAXED); \
    }                                                                                                              \
    /* pass 2: each leaving object to its place in its destination's region */                                     \
    WH__SOA_FN void Class##__dist_pack(const wh_soa *s, Class o, const Class##__dist *c) {                         \
        if (wh_soa_ptr_type(o.p) != (uint32_t)Class##_TYPE) return;                                                \
        uint32_t r = owner(s, o, &c->user);                                                                        \
        if (r == c->v.rank || r >= c->v.size) return;                                                              \
        uint64_t pos = wh_atomic_fetch_add(&c->v.cnt[r], 1ull, WH_RELAXED);                                        \
        if (pos >= c->v.n[r]) return; /* the owner changed since pass 1: the count shows it */                     \
        wh__soa_dist_wire(&c->v, o.p, r, pos, true);                                                               \
        c->v.list[c->v.first[r] + pos] = o.p;                                                                      \
    }                                                                                                              \
    /* on the receiver: received object i into a fresh object */                                                   \
    WH__SOA_FN void Class##__dist_unpack(const wh_soa *s, Class o, uint64_t i, const Class##__dist *c) {           \
        (void)s;                                                                                                   \
        uint32_t r = wh__soa_dist_source(&c->v, i);                                                                \
        wh__soa_dist_wire(&c->v, o.p, r, i - c->v.first[r], false);                                                \
        c->v.list[i] = o.p;                                                                                        \
    }                                                                                                              \
    WH__SOA_FN void Class##__dist_arrive(uint64_t i, const Class##__dist_list *c) {                                \
        arrive(&c->s, Class##_from(c->list[i]), &c->user);                                                         \
    }                                                                                                              \
    WH__SOA_FN void Class##__dist_drop(uint64_t i, const Class##__dist_list *c) {                                  \
        (void)wh_soa_free(&c->s, c->list[i]); /* 0 (not created) does nothing */                                   \
    }                                                                                                              \
    WH_SOA_PARALLEL_DO(Class, Class##__dist_count, Class##__dist)                                                  \
    WH_SOA_PARALLEL_DO(Class, Class##__dist_pack, Class##__dist)                                                   \
    WH_SOA_PARALLEL_NEW(Class, Class##__dist_unpack, Class##__dist)                                                \
    WH_SOA_PARALLEL_FOR(Class##__dist_arrive_all, Class##__dist_list, Class##__dist_arrive)                        \
    WH_SOA_PARALLEL_FOR(Class##__dist_drop_all, Class##__dist_list, Class##__dist_drop)                            \
    static __attribute__((unused)) wh_status Class##_dist_migrate(wh_soa_dist *d, Ctx ctx) {                       \
        Class##__dist c;                                                                                           \
        memset(&c, 0, sizeof c);                                                                                   \
        c.user = ctx;                                                                                              \
        c.v.nfields = Class##__fields(c.v.fields, WH_SOA_DIST_MAX_FIELDS);                                         \
        uint64_t out = 0, in = 0;                                                                                  \
        wh_status st = wh__soa_dist_begin(d, &c.v, #Class), agreed;                                                \
        if (st == WH_OK) st = Class##_parallel_do_##Class##__dist_count(d->soa, c);                                \
        /* agreed: every rank goes on, or every rank stops with nothing moved */                                   \
        agreed = wh__soa_dist_plan(d, &c.v, st, &out, &st);                                                        \
        if (agreed != WH_OK || c.v.idle) return wh__soa_dist_end(d, &c.v, agreed, WH_OK);                          \
        if (st == WH_OK && out) st = Class##_parallel_do_##Class##__dist_pack(d->soa, c);                          \
        agreed = wh__soa_dist_send(d, &c.v, st, &in, &st);                                                         \
        if (agreed != WH_OK) return wh__soa_dist_end(d, &c.v, agreed, WH_OK);                                      \
        if (st == WH_OK && in) st = Class##_parallel_new_##Class##__dist_unpack(d->soa, in, c);                    \
        wh_status all = wh__soa_dist_vote(d, st), after = WH_OK;                                                   \
        Class##__dist_list l;                                                                                      \
        l.s = *d->soa;                                                                                             \
        l.user = ctx;                                                                                              \
        l.list = c.v.list;                                                                                         \
        if (all == WH_OK) { /* commit: the arrivals, then the senders' copies go */                                \
            after = Class##__dist_arrive_all(d->soa->on_device, in, l);                                            \
            l.list = d->list;                                                                                      \
            if (after == WH_OK) after = Class##__dist_drop_all(d->soa->on_device, out, l);                         \
        } else if (in) { /* roll back: what this rank created goes */                                              \
            after = Class##__dist_drop_all(d->soa->on_device, in, l);                                              \
        }                                                                                                          \
        return wh__soa_dist_end(d, &c.v, all, after);                                                              \
    }

#endif /* WARPHEAP_SOA_DIST_H */
