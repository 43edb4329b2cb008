/* SPDX-License-Identifier: MIT */
/* Object allocator across ranks, the host side (soa/dist.h): the plan of a
 * migration (counts, regions, staging buffers), its votes, the halo rows,
 * sums and gathers.  Every function here is collective; a rank's own
 * failure travels in the next exchange as a status word, so that all ranks
 * take the same path and none waits for a message that never comes. */
#include "soa_internal.h"
#include "warpheap/soa/dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* meta's words for size S: counts (S + 1), the send side's n, region and
 * first (S, S, S + 1), the receive side's, and control rows of CTL words
 * per rank, sent and received. */
#define CTL 4u
enum { CTL_COUNT = 0, CTL_STATUS, CTL_TOTAL };
static size_t meta_words(uint32_t S) { return 15u * (size_t)S + 3u; }
static size_t at_cnt(uint32_t S) { return (void)S, 0; }
static size_t at_send(uint32_t S) { return S + 1u; }       /* n, region, first */
static size_t at_recv(uint32_t S) { return 4u * S + 2u; }  /* n, region, first */
static size_t at_csend(uint32_t S) { return 7u * S + 3u; } /* CTL words per rank */
static size_t at_crecv(uint32_t S) { return 11u * S + 3u; }

/* ---- memory of the heap's kind ---------------------------------------------------- */
static wh_status mem_alloc(const wh_soa_dist *d, void **p, size_t bytes) {
    *p = NULL;
    if (d->soa->on_device) return wh__soa_dev_alloc(p, bytes);
    *p = malloc(bytes);
    return *p ? WH_OK : wh__fail(WH_ERR_OUT_OF_MEMORY, "soa dist: no memory for %zu bytes", bytes);
}
static void mem_free(const wh_soa_dist *d, void *p) {
    if (!p) return;
    if (d->soa->on_device)
        (void)wh__soa_dev_free(p);
    else
        free(p);
}
/* Copies within or between the heap's memory and the host's. */
static wh_status mem_copy(const wh_soa_dist *d, void *dst, const void *src, size_t n) {
    return wh__soa_copy(d->soa->on_device, dst, src, n);
}
static wh_status mem_zero(const wh_soa_dist *d, void *p, size_t n) {
    if (!n) return WH_OK;
    if (d->soa->on_device) return wh__soa_dev_zero(p, n);
    memset(p, 0, n);
    return WH_OK;
}
/* *buf holds at least need bytes (its old content is not kept). */
static wh_status grow(const wh_soa_dist *d, void **buf, size_t *cap, size_t need) {
    if (need <= *cap) return WH_OK;
    size_t want = need + need / 2u;
    void *p;
    wh_status st = mem_alloc(d, &p, want);
    if (st != WH_OK) return st;
    mem_free(d, *buf);
    *buf = p;
    *cap = want;
    return WH_OK;
}

/* ---- exchanges -------------------------------------------------------------------- */
static wh_status exchange(wh_soa_dist *d) {
    uint32_t S = d->size;
    return d->tr->exchange(d->tr, d->xptr, d->xbytes, d->xptr + S, d->xbytes + S);
}
static void no_exchange(wh_soa_dist *d) {
    memset(d->xptr, 0, 2u * d->size * sizeof *d->xptr);
    memset(d->xbytes, 0, 2u * d->size * sizeof *d->xbytes);
}

/* The control rows: host row r of the sent rows goes to rank r; afterwards
 * row r of the received rows is rank r's (this rank's own row copied). */
static wh_status ctl_exchange(wh_soa_dist *d) {
    uint32_t S = d->size, me = d->rank;
    uint64_t *hs = d->host + at_csend(S), *hr = d->host + at_crecv(S);
    wh_status st = mem_copy(d, d->meta + at_csend(S), hs, (size_t)S * CTL * 8u);
    if (st != WH_OK) return st;
    for (uint32_t r = 0; r < S; ++r) {
        size_t b = r == me ? 0 : CTL * 8u;
        d->xptr[r] = d->meta + at_csend(S) + (size_t)r * CTL;
        d->xptr[S + r] = d->meta + at_crecv(S) + (size_t)r * CTL;
        d->xbytes[r] = d->xbytes[S + r] = b;
    }
    if ((st = exchange(d)) != WH_OK) return st;
    if ((st = mem_copy(d, hr, d->meta + at_crecv(S), (size_t)S * CTL * 8u)) != WH_OK) return st;
    memcpy(hr + (size_t)me * CTL, hs + (size_t)me * CTL, CTL * 8u);
    return WH_OK;
}

/* The status all ranks agree on after a control exchange: the first rank's
 * failure (this rank's keeps its own message). */
static wh_status agreed(wh_soa_dist *d) {
    const uint64_t *hr = d->host + at_crecv(d->size);
    for (uint32_t r = 0; r < d->size; ++r) {
        wh_status st = (wh_status)hr[(size_t)r * CTL + CTL_STATUS];
        if (st == WH_OK) continue;
        if (r == d->rank) return st;
        return wh__fail(st, "%s: rank %u failed (%s), so no rank went on", d->what, r, wh_strerror(st));
    }
    return WH_OK;
}

wh_status wh__soa_dist_vote(wh_soa_dist *d, wh_status mine) {
    uint64_t *hs = d->host + at_csend(d->size);
    memset(hs, 0, (size_t)d->size * CTL * 8u);
    for (uint32_t r = 0; r < d->size; ++r) hs[(size_t)r * CTL + CTL_STATUS] = (uint64_t)mine;
    wh_status st = ctl_exchange(d);
    return st != WH_OK ? st : agreed(d);
}

/* ---- a migration -------------------------------------------------------------------- */
/* Bytes of a region of n objects: each field's array rounded to 8 bytes. */
static uint64_t region_bytes(const wh__soa_dist_view *v, uint64_t n) {
    uint64_t b = 0;
    for (uint32_t f = 0; f < v->nfields; ++f) b += wh__soa_dist_round8(n * v->fields[f].size);
    return b;
}
/* n[0 .. S) given; region and first from it. */
static void lay_out(const wh__soa_dist_view *v, uint64_t *n, uint32_t S) {
    uint64_t *region = n + S, *first = region + S, bytes = 0;
    first[0] = 0;
    for (uint32_t r = 0; r < S; ++r) {
        region[r] = bytes;
        bytes += region_bytes(v, n[r]);
        first[r + 1] = first[r] + n[r];
    }
}
static uint64_t end_bytes(const wh__soa_dist_view *v, const uint64_t *n, uint32_t S) {
    return S ? n[S + S - 1] + region_bytes(v, n[S - 1]) : 0; /* region[S-1] + its bytes */
}

wh_status wh__soa_dist_begin(wh_soa_dist *d, wh__soa_dist_view *v, const char *cls) {
    uint32_t S = d->size;
    snprintf(d->what, sizeof d->what, "migration of %s", cls);
    d->t0 = (double)wh__cpu_now_ns() * 1e-9;
    memset(d->host, 0, meta_words(S) * 8u);
    v->rank = d->rank;
    v->size = S;
    v->cnt = d->meta + at_cnt(S);
    if (v->nfields > WH_SOA_DIST_MAX_FIELDS)
        return wh__fail(WH_ERR_TOO_LARGE, "%s: %u fields, at most %u", d->what, v->nfields, WH_SOA_DIST_MAX_FIELDS);
    return mem_zero(d, v->cnt, (S + 1u) * 8u);
}

wh_status wh__soa_dist_plan(wh_soa_dist *d, wh__soa_dist_view *v, wh_status counted, uint64_t *out, wh_status *local) {
    uint32_t S = d->size, me = d->rank;
    uint64_t *h = d->host, *cnt = h + at_cnt(S), *hs = h + at_csend(S), *hr = h + at_crecv(S);
    *out = 0;
    if (counted == WH_OK) counted = mem_copy(d, cnt, v->cnt, (S + 1u) * 8u);
    if (counted == WH_OK && cnt[S])
        counted = wh__fail(WH_ERR_INVALID_ARGUMENT, "%s: %llu objects have an owner outside [0, %u)", d->what,
                           (unsigned long long)cnt[S], S);
    uint64_t total = 0;
    for (uint32_t r = 0; r < S && counted == WH_OK; ++r) total += r == me ? 0 : cnt[r];
    for (uint32_t r = 0; r < S; ++r) {
        hs[(size_t)r * CTL + CTL_COUNT] = counted == WH_OK && r != me ? cnt[r] : 0;
        hs[(size_t)r * CTL + CTL_STATUS] = (uint64_t)counted;
        hs[(size_t)r * CTL + CTL_TOTAL] = total;
    }
    wh_status st = ctl_exchange(d);
    if (st == WH_OK) st = agreed(d);
    if (st != WH_OK) return st;
    uint64_t everyone = 0;
    for (uint32_t r = 0; r < S; ++r) everyone += hr[(size_t)r * CTL + CTL_TOTAL];
    v->idle = everyone == 0;
    if (v->idle) return *local = WH_OK;
    /* this rank's plan: what it sends to and receives from each rank */
    uint64_t *sn = h + at_send(S), *rn = h + at_recv(S);
    for (uint32_t r = 0; r < S; ++r) {
        sn[r] = r == me ? 0 : cnt[r];
        rn[r] = hr[(size_t)r * CTL + CTL_COUNT];
    }
    lay_out(v, sn, S);
    lay_out(v, rn, S);
    uint64_t nout = sn[3u * S], nin = rn[3u * S];
    *out = nout;
    wh_status mine = grow(d, (void **)&d->send, &d->send_cap, end_bytes(v, sn, S));
    if (mine == WH_OK) mine = grow(d, (void **)&d->recv, &d->recv_cap, end_bytes(v, rn, S));
    if (mine == WH_OK) mine = grow(d, (void **)&d->list, &d->list_cap, (nout + nin) * 8u);
    if (mine == WH_OK) mine = mem_copy(d, d->meta + at_send(S), sn, (at_csend(S) - at_send(S)) * 8u);
    if (mine == WH_OK) mine = mem_zero(d, v->cnt, (S + 1u) * 8u); /* the cursors */
    if (mine == WH_OK && nin) mine = mem_zero(d, d->list + nout, nin * 8u);
    v->buf = d->send;
    v->list = d->list;
    v->n = d->meta + at_send(S);
    v->region = v->n + S;
    v->first = v->region + S;
    *local = mine;
    return WH_OK;
}

wh_status wh__soa_dist_send(wh_soa_dist *d, wh__soa_dist_view *v, wh_status packed, uint64_t *in, wh_status *local) {
    uint32_t S = d->size;
    uint64_t *h = d->host, *cnt = h + at_cnt(S), *sn = h + at_send(S), *rn = h + at_recv(S);
    *in = 0;
    if (packed == WH_OK) packed = mem_copy(d, cnt, v->cnt, S * 8u);
    for (uint32_t r = 0; r < S && packed == WH_OK; ++r)
        if (cnt[r] != sn[r])
            packed = wh__fail(WH_ERR_INVALID_ARGUMENT,
                              "%s: the owner function gave %llu objects to rank %u, then %llu (it must not "
                              "change within a migration)",
                              d->what, (unsigned long long)sn[r], r, (unsigned long long)cnt[r]);
    wh_status st = wh__soa_dist_vote(d, packed);
    if (st != WH_OK) return st;
    for (uint32_t r = 0; r < S; ++r) {
        d->xptr[r] = d->send + sn[S + r];
        d->xbytes[r] = region_bytes(v, sn[r]);
        d->xptr[S + r] = d->recv + rn[S + r];
        d->xbytes[S + r] = region_bytes(v, rn[r]);
    }
    *local = exchange(d);
    /* the receive side's plan for the unpack */
    v->buf = d->recv;
    v->list = d->list + sn[3u * S];
    v->n = d->meta + at_recv(S);
    v->region = v->n + S;
    v->first = v->region + S;
    *in = rn[3u * S];
    return WH_OK;
}

wh_status wh__soa_dist_end(wh_soa_dist *d, wh__soa_dist_view *v, wh_status agreed_st, wh_status after) {
    uint32_t S = d->size;
    const uint64_t *sn = d->host + at_send(S), *rn = d->host + at_recv(S);
    wh_soa_dist_stats *s = &d->stats;
    s->migrations++;
    if (agreed_st != WH_OK) {
        s->refused++;
    } else if (!v->idle) {
        s->sent += sn[3u * S];
        s->received += rn[3u * S];
        s->bytes_sent += end_bytes(v, sn, S);
        s->bytes_received += end_bytes(v, rn, S);
    }
    s->migrate_s += (double)wh__cpu_now_ns() * 1e-9 - d->t0;
    if (agreed_st != WH_OK) return agreed_st;
    if (after != WH_OK)
        return wh__fail(after, "%s: committed, then its last pass failed (%s)", d->what, wh_last_error());
    return WH_OK;
}

/* ---- the layer ------------------------------------------------------------------------ */
wh_status wh_soa_dist_create(wh_soa_dist *d, wh_soa *soa, wh_soa_transport *tr) {
    wh__clear_error();
    if (!d || !soa || !tr) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_dist_create: NULL argument");
    memset(d, 0, sizeof *d);
    if (!soa->counters) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_dist_create: the heap is not created");
    if (tr->size == 0 || tr->rank >= tr->size || !tr->exchange)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_dist_create: transport of rank %u of %u", tr->rank, tr->size);
    if ((bool)soa->on_device != tr->on_device)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_dist_create: a %s heap and a transport of %s buffers",
                        soa->on_device ? "device" : "host", tr->on_device ? "device" : "host");
    d->soa = soa;
    d->tr = tr;
    d->rank = tr->rank;
    d->size = tr->size;
    uint32_t S = d->size;
    d->host = (uint64_t *)calloc(meta_words(S), 8u);
    d->xptr = (void **)calloc(2u * S, sizeof *d->xptr);
    d->xbytes = (size_t *)calloc(2u * S, sizeof *d->xbytes);
    d->sizes = (uint64_t *)calloc(2u * S, 8u);
    wh_status st = d->host && d->xptr && d->xbytes && d->sizes
                       ? WH_OK
                       : wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_soa_dist_create: no memory for %u ranks", S);
    if (st == WH_OK) st = mem_alloc(d, (void **)&d->meta, meta_words(S) * 8u);
    if (st != WH_OK) {
        wh_status keep = st;
        (void)wh_soa_dist_destroy(d);
        return keep;
    }
    return WH_OK;
}

wh_status wh_soa_dist_destroy(wh_soa_dist *d) {
    if (!d) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_dist_destroy: NULL");
    if (d->soa) {
        mem_free(d, d->meta);
        mem_free(d, d->send);
        mem_free(d, d->recv);
        mem_free(d, d->list);
    }
    free(d->host);
    free(d->xptr);
    free(d->xbytes);
    free(d->sizes);
    memset(d, 0, sizeof *d);
    return WH_OK;
}

/* ---- halo rows, sums, gathers ----------------------------------------------------------- */
/* One message of b bytes from src to rank `to`, and one from rank `from` into dst. */
static wh_status halo_pass(wh_soa_dist *d, const void *src, uint32_t to, void *dst, uint32_t from, size_t b) {
    uint32_t S = d->size;
    no_exchange(d);
    d->xptr[to] = (void *)src, d->xbytes[to] = b;
    d->xptr[S + from] = dst, d->xbytes[S + from] = b;
    return exchange(d);
}

wh_status wh_soa_dist_halo_rows(wh_soa_dist *d, void *rows, size_t row_bytes, uint32_t own) {
    if (!d || !d->soa || !rows || !row_bytes || !own)
        return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_dist_halo_rows: no grid (rows %p, %zu bytes, %u own rows)",
                        rows, row_bytes, own);
    double t0 = (double)wh__cpu_now_ns() * 1e-9;
    uint32_t S = d->size, me = d->rank, up = (me + S - 1u) % S, down = (me + 1u) % S;
    uint8_t *top = (uint8_t *)rows, *first = top + row_bytes, *last = top + (size_t)own * row_bytes,
            *bottom = last + row_bytes;
    wh_status st;
    if (S == 1) { /* the torus closes on this rank */
        st = mem_copy(d, top, last, row_bytes);
        if (st == WH_OK) st = mem_copy(d, bottom, first, row_bytes);
    } else { /* straight from and into the rows: two passes, since up and down are one rank when S is 2 */
        st = halo_pass(d, first, up, bottom, down, row_bytes);
        if (st == WH_OK) st = halo_pass(d, last, down, top, up, row_bytes);
        d->stats.halo_bytes += 2u * row_bytes;
    }
    d->stats.halos++;
    d->stats.halo_s += (double)wh__cpu_now_ns() * 1e-9 - t0;
    return st;
}

wh_status wh_soa_dist_sum(wh_soa_dist *d, const uint64_t *mine, uint64_t *sum, uint32_t n) {
    if (!d || !d->soa || (n && (!mine || !sum))) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_dist_sum: NULL");
    uint32_t S = d->size, me = d->rank;
    size_t b = (size_t)n * 8u;
    uint64_t *all = (uint64_t *)malloc(b * S + 1u);
    wh_status st = all ? WH_OK : wh__fail(WH_ERR_OUT_OF_MEMORY, "wh_soa_dist_sum: no memory");
    if (st == WH_OK) st = grow(d, (void **)&d->send, &d->send_cap, b + 1u);
    if (st == WH_OK) st = grow(d, (void **)&d->recv, &d->recv_cap, b * S + 1u);
    if (st == WH_OK) st = mem_copy(d, d->send, mine, b);
    snprintf(d->what, sizeof d->what, "sum");
    st = wh__soa_dist_vote(d, st); /* a rank without room stops every rank */
    if (st == WH_OK) {
        for (uint32_t r = 0; r < S; ++r) {
            d->xptr[r] = d->send, d->xbytes[r] = r == me ? 0 : b;
            d->xptr[S + r] = d->recv + b * r, d->xbytes[S + r] = r == me ? 0 : b;
        }
        st = exchange(d);
    }
    if (st == WH_OK) st = mem_copy(d, all, d->recv, b * S);
    if (st == WH_OK) {
        memcpy(all + (size_t)me * n, mine, b);
        for (uint32_t i = 0; i < n; ++i) {
            uint64_t s = 0;
            for (uint32_t r = 0; r < S; ++r) s += all[(size_t)r * n + i];
            sum[i] = s;
        }
    }
    free(all);
    return st;
}

/* The start of a gather: every rank's `bytes` into d->sizes[S ..), their
 * sum, and the name of the operation for messages. */
static wh_status all_sizes(wh_soa_dist *d, const void *mine, size_t bytes, uint64_t *sum, size_t *total,
                           const char *name) {
    if (!d || !d->soa || (bytes && !mine)) return wh__fail(WH_ERR_INVALID_ARGUMENT, "wh_soa_dist_%s: NULL", name);
    uint32_t S = d->size;
    memset(d->sizes, 0, (size_t)S * 8u);
    d->sizes[d->rank] = bytes;
    wh_status st = wh_soa_dist_sum(d, d->sizes, d->sizes + S, S);
    *sum = 0;
    for (uint32_t r = 0; r < S && st == WH_OK; ++r) *sum += d->sizes[S + r];
    if (total) *total = *sum;
    snprintf(d->what, sizeof d->what, "%s", name);
    return st;
}

wh_status wh_soa_dist_gather(wh_soa_dist *d, const void *mine, size_t bytes, void *all, size_t cap, size_t *total) {
    uint64_t sum = 0;
    wh_status st = all_sizes(d, mine, bytes, &sum, total, "gather");
    if (st != WH_OK) return st;
    uint32_t S = d->size, me = d->rank;
    uint64_t *got = d->sizes + S; /* every rank's bytes */
    /* rank 0 checks its room, and every rank says in a vote whether it can go on */
    wh_status room = WH_OK;
    if (me == 0 && (cap < sum || (sum && !all)))
        room = wh__fail(WH_ERR_TOO_SMALL, "wh_soa_dist_gather: %llu bytes in all, room for %zu",
                        (unsigned long long)sum, cap);
    if (room == WH_OK && me == 0) room = grow(d, (void **)&d->recv, &d->recv_cap, sum + 1u);
    if (room == WH_OK && me != 0) room = grow(d, (void **)&d->send, &d->send_cap, bytes + 1u);
    if (room == WH_OK && me != 0) room = mem_copy(d, d->send, mine, bytes);
    if ((st = wh__soa_dist_vote(d, room)) != WH_OK) return st;
    no_exchange(d);
    uint64_t at = 0;
    for (uint32_t r = 0; r < S; ++r) {
        if (me == 0 && r != 0) d->xptr[S + r] = d->recv + at, d->xbytes[S + r] = got[r];
        at += got[r];
    }
    if (me != 0) d->xptr[0] = d->send, d->xbytes[0] = bytes;
    st = exchange(d);
    if (st == WH_OK && me == 0) {
        if (bytes) memcpy(all, mine, bytes);
        st = mem_copy(d, (uint8_t *)all + got[0], d->recv + got[0], sum - got[0]);
    }
    return st;
}

wh_status wh_soa_dist_allgather(wh_soa_dist *d, const void *mine, size_t bytes, void *all, size_t cap, size_t *total) {
    uint64_t sum = 0;
    wh_status st = all_sizes(d, mine, bytes, &sum, total, "allgather");
    if (st != WH_OK) return st;
    uint32_t S = d->size, me = d->rank;
    uint64_t *got = d->sizes + S; /* every rank's bytes */
    wh_status room = cap < sum || (sum && !all)
                         ? wh__fail(WH_ERR_TOO_SMALL, "wh_soa_dist_allgather: %llu bytes in all, room for %zu",
                                    (unsigned long long)sum, cap)
                         : WH_OK;
    if ((st = wh__soa_dist_vote(d, room)) != WH_OK) return st;
    uint64_t at = 0, mine_at = 0;
    for (uint32_t r = 0; r < S; ++r) {
        d->xptr[r] = (void *)mine, d->xbytes[r] = r == me ? 0 : bytes;
        d->xptr[S + r] = (uint8_t *)all + at, d->xbytes[S + r] = r == me ? 0 : got[r];
        if (r == me) mine_at = at;
        at += got[r];
    }
    st = exchange(d);
    if (st == WH_OK) st = mem_copy(d, (uint8_t *)all + mine_at, mine, bytes);
    return st;
}
