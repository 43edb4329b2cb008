/* SPDX-License-Identifier: MIT */
/* Memory checkers see inside the pool on the GPU, through the NVTX memory
 * API (nvtx3/nvToolsExtMem.h, header-only, from the CUDA toolkit): each
 * cudaMalloc arena, or the VMM range, is a suballocator heap, and each live
 * block a region of its requested bytes.  compute-sanitizer's memcheck then
 * reports a kernel's access past a block's request, to a block after its
 * free, or to memory the pool holds but has not handed out -- what it cannot
 * see when the pool's arenas are whole cudaMalloc allocations.  This is the
 * CUDA backend's counterpart of the AddressSanitizer poisoning of the CPU
 * backend (pool_internal.h, wh__poison).
 *
 * Without a tool attached the first NVTX call finds none and every later
 * one returns at once; the pool also stops calling once a heap's
 * registration returns no handle (p->nvtx stays false).  The CPU backend
 * and a build without CUDA register nothing. */
#include "pool_internal.h"

#if WH_HAVE_CUDA
#define NVTX_AS_SYSTEM_HEADER /* the headers' own warnings stay theirs */
#include <nvtx3/nvToolsExtMem.h>

static nvtxDomainHandle_t wh__domain;
static pthread_once_t wh__domain_once = PTHREAD_ONCE_INIT;

static void wh__domain_create(void) { wh__domain = nvtxDomainCreateA("warpheap"); }

/* The arena (or range) that holds address a, or NULL. */
static wh__arena *wh__arena_of(wh_pool *p, uint64_t a) {
    const wh_block *d = wh_blocks_desc(p->core);
    for (uint32_t i = 0; i < p->narenas; ++i) {
        uint64_t base = d[p->arenas[i].head].addr;
        if (a >= base && a < base + p->arenas[i].size) return &p->arenas[i];
    }
    return NULL;
}

void wh__nvtx_heap(wh_pool *p, wh__arena *a) {
    a->heap = NULL;
    if (p->cfg.backend != WH_POOL_CUDA) return;
    pthread_once(&wh__domain_once, wh__domain_create); /* after the runtime's first call, as the tools need */
    nvtxMemVirtualRangeDesc_t range = {.size = a->size,
                                       .ptr = (const void *)(uintptr_t)wh_blocks_desc(p->core)[a->head].addr};
    nvtxMemHeapDesc_t desc = {.extCompatID = NVTX_EXT_COMPATID_MEM,
                              .structSize = sizeof desc,
                              .usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR,
                              .type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS,
                              .typeSpecificDescSize = sizeof range,
                              .typeSpecificDesc = &range,
                              .messageType = NVTX_MESSAGE_TYPE_ASCII,
                              .message = {.ascii = p->use_vmm ? "warpheap pool range" : "warpheap pool arena"}};
    nvtxMemHeapHandle_t h = nvtxMemHeapRegister(wh__domain, &desc);
    if (h == NVTX_MEM_HEAP_HANDLE_NO_TOOL || h == NULL) return;
    a->heap = h;
    p->nvtx = true;
}

void wh__nvtx_heap_drop(wh_pool *p, wh__arena *a) {
    if (!a->heap) return;
    nvtxMemHeapUnregister(wh__domain, (nvtxMemHeapHandle_t)a->heap); /* its regions go with it */
    a->heap = NULL;
    (void)p;
}

void wh__nvtx_block(wh_pool *p, uint64_t addr, uint64_t bytes) {
    if (!p->nvtx) return;
    wh__arena *a = wh__arena_of(p, addr);
    if (!a || !a->heap) return;
    nvtxMemVirtualRangeDesc_t range = {.size = bytes, .ptr = (const void *)(uintptr_t)addr};
    nvtxMemRegionsRegisterBatch_t batch = {.extCompatID = NVTX_EXT_COMPATID_MEM,
                                           .structSize = sizeof batch,
                                           .regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS,
                                           .heap = (nvtxMemHeapHandle_t)a->heap,
                                           .regionCount = 1,
                                           .regionDescElementSize = sizeof range,
                                           .regionDescElements = &range};
    nvtxMemRegionsRegister(wh__domain, &batch);
}

void wh__nvtx_block_drop(wh_pool *p, uint64_t addr) {
    if (!p->nvtx) return;
    nvtxMemRegionRef_t ref = {.pointer = (const void *)(uintptr_t)addr};
    nvtxMemRegionsUnregisterBatch_t batch = {.extCompatID = NVTX_EXT_COMPATID_MEM,
                                             .structSize = sizeof batch,
                                             .refType = NVTX_MEM_REGION_REF_TYPE_POINTER,
                                             .refCount = 1,
                                             .refElementSize = sizeof ref,
                                             .refElements = &ref};
    nvtxMemRegionsUnregister(wh__domain, &batch);
}

#else /* no CUDA: nothing to tell a GPU tool */

void wh__nvtx_heap(wh_pool *p, wh__arena *a) {
    (void)p;
    a->heap = NULL;
}
void wh__nvtx_heap_drop(wh_pool *p, wh__arena *a) { (void)p, (void)a; }
void wh__nvtx_block(wh_pool *p, uint64_t addr, uint64_t bytes) { (void)p, (void)addr, (void)bytes; }
void wh__nvtx_block_drop(wh_pool *p, uint64_t addr) { (void)p, (void)addr; }

#endif
