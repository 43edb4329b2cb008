/* SPDX-License-Identifier: MIT */
/* Device heap: what the host files of src/heap share (not installed). */
#ifndef WH_HEAP_INTERNAL_H
#define WH_HEAP_INTERNAL_H

#include "warpheap/heap.h"

WH_EXTERN_C_BEGIN

/* Check cfg and fill h's sizes and layout (no memory yet).  *arena_bytes and
 * h->meta_bytes receive the sizes to allocate. */
wh_status wh__heap_plan(wh_heap *h, const wh_heap_config *cfg, size_t *arena_bytes);
/* wh__heap_plan for a heap in cfg->region: the largest arena whose metadata
 * fits behind it in cfg->bytes, at *meta_offset from the region's start. */
wh_status wh__heap_plan_region(wh_heap *h, const wh_heap_config *cfg, size_t *arena_bytes, size_t *meta_offset);
/* h->flags: arena and metadata lie in the caller's region; destroy frees
 * neither.  Never a user flag (wh__heap_plan refuses unknown bits). */
#define WH__HEAP_REGION 0x80000000u
/* Point h at an arena and a metadata block of the planned sizes (also used to
 * rebase a host copy of a device heap). */
void wh__heap_bind(wh_heap *h, void *arena, void *meta);
/* Byte offset inside the metadata block of the page bitmap's words. */
size_t wh__heap_pages_offset(const wh_heap *h);
/* Walk a heap whose memory the host can read; no operation in flight. */
void wh__heap_walk(const wh_heap *h, wh_heap_usage *s);

#if WH_HAVE_CUDA
uint32_t wh__heap_device_sms(void); /* 0 when no GPU */
wh_status wh__heap_create_device(wh_heap *h, size_t arena_bytes);
wh_status wh__heap_init_device(wh_heap *h);
wh_status wh__heap_destroy_device(wh_heap *h);
uint64_t wh__heap_in_use_device(const wh_heap *h); /* ctl->in_use; 0 on error */
wh_status wh__heap_stats_device(const wh_heap *h, wh_heap_usage *s);
wh_status wh__heap_trim_device(const wh_heap *h);
#endif

WH_EXTERN_C_END

#endif
