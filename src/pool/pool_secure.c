/* SPDX-License-Identifier: MIT */
/* Host pool, hardened mode (config.secure): the checks of mimalloc's secure
 * and debug builds that fit a pool of device memory.
 *
 * - Rotating offsets: a pointer lies at one of four multiples of the
 *   alignment in its block, the next one at each allocation.  A pointer
 *   freed a second time after its memory went to a new owner is then, in
 *   three cases of four, not the new owner's pointer but a stale one at
 *   another offset of a live block: a double free, and the new owner keeps
 *   its block (without the mode that free releases the new owner's memory).
 *   The kept-block caches (tags, the hot block) are off: a block comes
 *   back only through the core, at a new offset.
 * - CPU backend: a guard of WH__GUARD bytes right after every request,
 *   checked when the block is freed (an overflow past the block's end), and
 *   every free byte of the pool filled with a pattern that is checked when a
 *   block is handed out again (a write after free), over the block's first
 *   WH__SECURE_CHECK bytes.  Device memory is neither filled nor checked:
 *   that would cost a copy per call; compute-sanitizer sees inside pool
 *   blocks on the GPU instead.
 *
 * Costs: 3 x config.alignment + WH__GUARD more bytes per block (aligned
 * requests: WH__GUARD), no kept-block fast path, and on the CPU backend a
 * memset of every freed block.  Not caught: a stale free whose offset
 * comes round again (one in four), reads after free, overflows that skip
 * the guard, and writes after free beyond the checked bytes.
 */
#include "pool_internal.h"

#include <inttypes.h>
#include <string.h>

#define WH__FREED_BYTE   0xDFu /* free memory, as mimalloc's MI_DEBUG_FREED */
#define WH__GUARD_BYTE   0xFDu /* the guard after a request                  */
#define WH__SECURE_CHECK (64u * 1024u)

static bool wh__host_checks(const wh_pool *p) { return p->cfg.secure && p->cfg.backend == WH_POOL_CPU; }

/* Bytes the pool writes or reads itself: unpoisoned around the access. */
static void wh__raw_set(wh_pool *p, uint64_t a, int byte, uint64_t n) {
    wh__poison(p, a, n, false);
    memset((void *)(uintptr_t)a, byte, n);
    wh__poison(p, a, n, true);
}
/* Offset of the first byte of [a, a + n) that is not byte, or n. */
static uint64_t wh__raw_find(wh_pool *p, uint64_t a, uint8_t byte, uint64_t n) {
    wh__poison(p, a, n, false);
    const uint8_t *s = (const uint8_t *)(uintptr_t)a;
    uint64_t i = 0;
    while (i < n && s[i] == byte) ++i;
    wh__poison(p, a, n, true);
    return i;
}

void wh__sec_fresh(wh_pool *p, uint64_t addr, uint64_t bytes) {
    if (wh__host_checks(p)) wh__raw_set(p, addr, WH__FREED_BYTE, bytes);
}

void wh__sec_released(wh_pool *p, uint32_t b) {
    const wh_block *d = &wh_blocks_desc(p->core)[b];
    wh__sec_fresh(p, d->addr, d->size);
}

static void wh__corrupt(wh_pool *p, uint64_t at, const char *what) {
    if (p->st.corruptions++ == 0) {
        p->corrupt_at = at;
        p->corrupt_what = what;
    }
}

void wh__sec_live(wh_pool *p, uint32_t b) {
    if (!wh__host_checks(p)) return;
    const wh_block *d = &wh_blocks_desc(p->core)[b];
    const wh__info *in = &p->info[b];
    uint64_t n = d->size < WH__SECURE_CHECK ? d->size : WH__SECURE_CHECK;
    uint64_t i = wh__raw_find(p, d->addr, WH__FREED_BYTE, n);
    if (i < n) wh__corrupt(p, d->addr + i, "written while free (a write after free)");
    wh__raw_set(p, d->addr + in->off + in->requested, WH__GUARD_BYTE, WH__GUARD);
}

wh_status wh__sec_freeing(wh_pool *p, uint32_t b, const void *ptr) {
    if (!wh__host_checks(p)) return WH_OK;
    const wh__info *in = &p->info[b];
    uint64_t g = wh_blocks_desc(p->core)[b].addr + in->off + in->requested;
    uint64_t i = wh__raw_find(p, g, WH__GUARD_BYTE, WH__GUARD);
    if (i == WH__GUARD) return WH_OK;
    wh__corrupt(p, g + i, "past the end of a block (an overflow)");
    return wh__fail(WH_ERR_CORRUPT,
                    "wh_pool_free: %p is freed, but byte %" PRIu64 " past its %" PRIu64
                    " requested bytes was overwritten (an overflow)",
                    ptr, i, in->requested);
}

/* a lies at one of b's four offsets, outside the live request: a pointer of
 * an earlier owner (inside the request it is an interior pointer). */
bool wh__secure_stale(const wh_pool *p, uint32_t b, uint64_t a) {
    if (!p->cfg.secure || p->info[b].state != WH__LIVE) return false;
    uint64_t base = wh_blocks_desc(p->core)[b].addr, A = p->cfg.alignment, user = base + p->info[b].off;
    bool offset = a >= base && a - base <= 3 * A && (a - base) % A == 0;
    return offset && (a < user || a >= user + p->info[b].requested);
}

wh_status wh__secure_check(wh_pool *p) {
    if (!wh__host_checks(p)) return WH_OK;
    const wh_block *d = wh_blocks_desc(p->core);
    for (uint32_t b = 0; b < p->core->capacity; ++b) {
        if (d[b].state == WH_BLOCK_FREE) {
            uint64_t n = d[b].size < WH__SECURE_CHECK ? d[b].size : WH__SECURE_CHECK;
            uint64_t i = wh__raw_find(p, d[b].addr, WH__FREED_BYTE, n);
            if (i < n) wh__corrupt(p, d[b].addr + i, "written while free (a write after free)");
        } else if (d[b].state == WH_BLOCK_USED && p->info[b].state == WH__LIVE) {
            uint64_t g = d[b].addr + p->info[b].off + p->info[b].requested;
            uint64_t i = wh__raw_find(p, g, WH__GUARD_BYTE, WH__GUARD);
            if (i < WH__GUARD) wh__corrupt(p, g + i, "past the end of a block (an overflow)");
        }
    }
    if (!p->st.corruptions) return WH_OK;
    return wh__fail(WH_ERR_CORRUPT, "pool: %" PRIu64 " corruption%s found; the first at 0x%" PRIx64 ", %s",
                    p->st.corruptions, p->st.corruptions == 1 ? "" : "s", p->corrupt_at, p->corrupt_what);
}
