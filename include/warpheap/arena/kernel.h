/* SPDX-License-Identifier: MIT */
/* Stream arena, internal: the bodies of the in-kernel calls declared in
 * arena.h -- allocation and free by the lanes of a warp, and a span replace
 * by one thread or a whole block.  Seed gpu-executed-heap.txt, "Address
 * Buffering": here the kernel that needs the address runs the heap itself.
 * Not part of the API: included by arena.h. */
#ifndef WARPHEAP_ARENA_KERNEL_H
#define WARPHEAP_ARENA_KERNEL_H

WH_INLINE WH_HOST_DEVICE wh_status wh_arena_replace_span_thread(wh_arena_ref a, uint64_t count, uint64_t stride,
                                                                wh_arena_span *slot) {
    return wh__arena_cmd_replace_span(a.s, count, stride, slot);
}

#ifdef __CUDACC__

/* The block copies the metadata image -- position independent: offsets --
 * into smem (8-aligned), thread 0 runs the command on the copy, and the
 * block writes back the words that changed, all under the real lock;
 * meanwhile one thread of warp 1 writes the host mirror (its system-scope
 * fences off the critical path).  Words the command does not own are never
 * written back: lock, first_status and failures (changed by atomics outside
 * the lock); a failure is noted on the real state.  With too little smem, or
 * an image over WH__ARENA_STAGE_WORDS words a thread, thread 0 runs the
 * command in place. */
#define WH__ARENA_STAGE_WORDS 8
WH_INLINE WH_DEVICE wh_status wh_arena_replace_span_block(wh_arena_ref a, uint64_t count, uint64_t stride,
                                                          wh_arena_span *slot, void *smem, uint64_t smem_bytes) {
    __shared__ uint32_t wh__block_status;
    uint64_t bytes = wh__arena_image_bytes(a.s), words = bytes / 8u;
    __syncthreads(); /* wh__block_status: free to write */
    if (bytes > smem_bytes || (bytes & 7u) || ((uintptr_t)smem & 7u) || blockDim.x < 64 ||
        words > (uint64_t)WH__ARENA_STAGE_WORDS * blockDim.x) {
        if (threadIdx.x == 0) wh__block_status = (uint32_t)wh__arena_cmd_replace_span(a.s, count, stride, slot);
        __syncthreads();
        return (wh_status)wh__block_status;
    }
    if (threadIdx.x == 0) {
        bool locked = wh__arena_lock(a.s);
        if (!locked) wh__arena_note(a.s, WH_ERR_RETRY_LIMIT);
        wh__block_status = locked ? (uint32_t)WH_OK : (uint32_t)WH_ERR_RETRY_LIMIT;
    }
    __syncthreads();
    if (wh__block_status != WH_OK) return (wh_status)wh__block_status;
    uint64_t *img = (uint64_t *)smem, *real = (uint64_t *)a.s, orig[WH__ARENA_STAGE_WORDS];
    for (int j = 0; j < WH__ARENA_STAGE_WORDS; ++j) {
        uint64_t i = threadIdx.x + (uint64_t)j * blockDim.x;
        if (i < words) img[i] = orig[j] = __ldcg(&real[i]); /* from L2: written elsewhere */
    }
    __syncthreads();
    wh__arena_state *copy = (wh__arena_state *)smem;
    if (threadIdx.x == 0) {
        wh_status st = wh__arena_replace_span_locked(copy, count, stride, slot);
        wh__arena_note(copy, st);
        wh__arena_account(copy, st);
        wh__block_status = (uint32_t)st;
    }
    __syncthreads();
    if (threadIdx.x == 32 && wh__arena_mirrors(copy, (wh_status)wh__block_status)) wh__arena_mirror(copy);
    for (int j = 0; j < WH__ARENA_STAGE_WORDS; ++j) {
        uint64_t i = threadIdx.x + (uint64_t)j * blockDim.x;
        if (i < words && !wh__arena_word_unlocked(i) && img[i] != orig[j]) real[i] = img[i];
    }
    __threadfence(); /* the image before the unlock */
    __syncthreads();
    wh_status st = (wh_status)wh__block_status;
    if (threadIdx.x == 0) {
        wh__arena_note(a.s, st);
        wh__arena_unlock(a.s);
    }
    return st;
}
#endif

/* One lane of the warp (the lowest of mask) takes the lock once and serves
 * every lane of mask in order (LOCK RULE). */
WH_INLINE WH_HOST_DEVICE wh_handle wh_arena_alloc_mask(wh_arena_ref a, uint32_t mask, uint64_t count, uint64_t stride) {
    unsigned leader = wh_leader(mask);
    bool lead = wh_lane_id() == leader;
    uint32_t locked = lead ? (uint32_t)wh__arena_lock(a.s) : 0u;
    locked = wh_shfl32(mask, locked, leader);
    wh_handle mine = wh_handle_null();
    wh_status first = locked ? WH_OK : WH_ERR_RETRY_LIMIT;
    if (!locked && lead) wh__arena_note(a.s, WH_ERR_RETRY_LIMIT);
    for (uint32_t left = locked ? mask : 0u; left; left &= left - 1u) {
        unsigned lane = wh_leader(left); /* serve lanes in order */
        uint64_t c = wh_shfl64(mask, count, lane), st = wh_shfl64(mask, stride, lane);
        wh_handle h = wh_handle_null();
        if (lead) {
            wh_status r = wh__arena_do_alloc(a.s, c, st, &h);
            wh__arena_note(a.s, r);
            if (first == WH_OK) first = (wh_status)r;
        }
        uint64_t p = wh_shfl64(mask, h.ptr, leader);
        uint32_t b = wh_shfl32(mask, h.block, leader), g = wh_shfl32(mask, h.gen, leader);
        if (wh_lane_id() == lane) {
            mine.ptr = p;
            mine.block = b;
            mine.gen = g;
        }
    }
    if (locked && lead) {
        wh__arena_publish(a.s, first);
        wh__arena_unlock(a.s);
    }
    wh_syncwarp(mask);
    return mine;
}

WH_INLINE WH_HOST_DEVICE wh_status wh_arena_free_mask(wh_arena_ref a, uint32_t mask, wh_handle *slot) {
    unsigned leader = wh_leader(mask);
    bool lead = wh_lane_id() == leader;
    uint32_t locked = lead ? (uint32_t)wh__arena_lock(a.s) : 0u;
    locked = wh_shfl32(mask, locked, leader);
    if (!locked) {
        if (lead) wh__arena_note(a.s, WH_ERR_RETRY_LIMIT);
        return WH_ERR_RETRY_LIMIT;
    }
    wh_handle h = *slot;
    uint32_t mine = WH_OK, first = WH_OK;
    for (uint32_t left = mask; left; left &= left - 1u) {
        unsigned lane = wh_leader(left);
        wh_handle x;
        x.ptr = wh_shfl64(mask, h.ptr, lane);
        x.block = wh_shfl32(mask, h.block, lane);
        x.gen = wh_shfl32(mask, h.gen, lane);
        uint32_t r = WH_OK;
        if (lead) {
            r = (uint32_t)wh__arena_do_free(a.s, x);
            wh__arena_note(a.s, (wh_status)r);
            if (first == WH_OK) first = r;
        }
        r = wh_shfl32(mask, r, leader);
        if (wh_lane_id() == lane) mine = r;
    }
    if (lead) {
        wh__arena_publish(a.s, (wh_status)first);
        wh__arena_unlock(a.s);
    }
    if (mine == WH_OK) *slot = wh_handle_null();
    wh_syncwarp(mask);
    return (wh_status)mine;
}

WH_INLINE WH_HOST_DEVICE wh_handle wh_arena_alloc_warp(wh_arena_ref a, uint64_t count, uint64_t stride) {
    return wh_arena_alloc_mask(a, wh_active_mask(), count, stride);
}
WH_INLINE WH_HOST_DEVICE wh_status wh_arena_free_warp(wh_arena_ref a, wh_handle *slot) {
    return wh_arena_free_mask(a, wh_active_mask(), slot);
}

#endif /* WARPHEAP_ARENA_KERNEL_H */
