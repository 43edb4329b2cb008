/* SPDX-License-Identifier: MIT */
/* Host memory for a structure (a host heap's arena and metadata, an object
 * heap, an arena's region, a pool's tables): aligned_alloc with the size
 * rounded up to the alignment, as C11 asks, and the fault-injection hook
 * (fault.c) asked first.  NULL when refused. */
#include "warpheap/warpheap.h"

#include <stdlib.h>

void *wh__host_alloc(size_t align, size_t bytes) {
    if (wh__fault()) return NULL;
    size_t rounded = (bytes + align - 1u) / align * align;
    if (rounded < bytes) return NULL; /* wrapped */
    return aligned_alloc(align, rounded ? rounded : align);
}
