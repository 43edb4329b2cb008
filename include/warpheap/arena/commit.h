/* SPDX-License-Identifier: MIT */
/* Stream arena, RING policy: wh_arena_ring_commit, the one committer entry
 * point, dispatching on its mode (arena.h documents each) to the block-wide
 * committers on the GPU and the one-thread committers on the CPU backend
 * (arena/reserve.h: NOW, AHEAD; arena/forecast.h: POSTS).  Seed
 * gpu-executed-heap.txt, the single-thread compute shader that runs the heap:
 * here it runs once the address is already out.  With the mode a constant
 * where the caller fills the wh_arena_commit, the dispatch folds away and a
 * kernel keeps only that mode's code.  Not part of the API: included by
 * arena.h. */
#ifndef WARPHEAP_ARENA_COMMIT_H
#define WARPHEAP_ARENA_COMMIT_H

/* The block-wide committers in device code, the one-thread ones elsewhere:
 * the same arguments. */
#if WH_ON_GPU
#define WH__RING_COMMITTER(mode) wh__ring_commit_##mode##_block
#else
#define WH__RING_COMMITTER(mode) wh__ring_commit_##mode##_thread
#endif

WH_INLINE WH_HOST_DEVICE wh_status wh_arena_ring_commit(wh_arena_ref a, const wh_arena_commit *c) {
    if (!c || !c->ring || c->k == 0) return WH_ERR_INVALID_ARGUMENT;
    const wh_arena_ring_posts *p = c->posts;
    switch (c->mode) {
    case WH_ARENA_COMMIT_NOW:
        return WH__RING_COMMITTER(now)(a, &c->ring[c->first % c->k], c->smem, c->smem_bytes, c->last);
    case WH_ARENA_COMMIT_AHEAD:
        return WH__RING_COMMITTER(ahead)(a, c->ring, c->k, c->first, c->frames, c->smem, c->smem_bytes, c->tries,
                                         c->baton, c->last);
    case WH_ARENA_COMMIT_POSTS:
        if (!p) return WH_ERR_INVALID_ARGUMENT;
        return WH__RING_COMMITTER(posts)(a, c->ring, c->k, c->first, p->f0, c->frames, p->post, p->n, p->consumed,
                                         p->stride, c->smem, c->smem_bytes, c->tries, p->fc, p->w, p->w_flag,
                                         p->w_value);
    }
    return WH_ERR_INVALID_ARGUMENT; /* an unknown mode */
}

#endif /* WARPHEAP_ARENA_COMMIT_H */
