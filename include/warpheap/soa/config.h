/* SPDX-License-Identifier: MIT */
/* Object allocator: compile-time switches for the ablations of DynaSOAr
 * (ECOOP 2019) section 6.3, Fig. 12c and Fig. 13.
 *
 * They exist so that the optimisations of 4.2 can be measured one at a time
 * on the *same* code (examples/wator builds one binary per switch, and
 * bench/soa/ablation.sh runs them).  Each switch only changes a constant, a
 * mask or a seed inside the normal allocation path; the defaults are the
 * allocator as it is meant to run.  Override with -D (per target), never by
 * editing this file: all translation units of one program must agree, and a
 * test or benchmark binary must say in its build which variant it is.
 */
#ifndef WARPHEAP_SOA_CONFIG_H
#define WARPHEAP_SOA_CONFIG_H

/* Request coalescing (4.2, after XMalloc).  1: the lanes of a warp that
 * allocate the same type form a group whose leader reserves slots for all of
 * them with one atomic per block.  0: the group mask is the lane's own bit,
 * so every lane is its own leader and allocates alone ("NoCoal"). */
#ifndef WH_SOA_COALESCE
#define WH_SOA_COALESCE 1
#endif

/* Bitmap rotation (4.2).  1: bitmap searches (active blocks, free blocks,
 * slots in a block) start at a position derived from a per-warp seed that
 * changes with every retry, spreading warps over blocks and slots.  0: the
 * allocator's seed is always 0, i.e. a plain find-first-set, so every warp
 * contends for the same lowest block and slots ("NoShift"); only the bitmap's
 * own retries after a lost race (wh_bitmap_claim) still re-hash, as they must
 * to stay bounded under contention. */
#ifndef WH_SOA_ROTATE
#define WH_SOA_ROTATE 1
#endif

/* Active-block lookups before the slow path (Alg. 1 line 2; Fig. 13).  The
 * leader looks for an active block of its type this many rounds before it
 * first initialises a free block, then alternates slow path and lookup.
 * Fewer lookups: less waiting on stale active bits, but more new blocks and
 * more fragmentation.  9: rounds 0..8 are lookups, the first slow path
 * runs in round 9. */
#ifndef WH_SOA_ACTIVE_LOOKUPS
#define WH_SOA_ACTIVE_LOOKUPS 9u
#endif

/* Slow paths of one type that may run at once (not in the paper; see
 * wh__soa_open_begin in soa/alloc.h).  0: no bound, every group that ran out
 * of lookups opens a block, as in the paper. */
#ifndef WH_SOA_OPEN_MAX
#define WH_SOA_OPEN_MAX 32u
#endif

/* The bound above holds only once 1/WH_SOA_OPEN_PRESSURE of the heap's
 * blocks are in use: while the heap is roomy, bursts open blocks freely
 * (see wh__soa_open_begin).  1: only a full heap is bounded; a large value
 * (1u << 30): the bound always holds. */
#ifndef WH_SOA_OPEN_PRESSURE
#define WH_SOA_OPEN_PRESSURE 4u
#endif

#endif /* WARPHEAP_SOA_CONFIG_H */
