/* SPDX-License-Identifier: MIT */
/* Object allocator: a class, objects made by parallel_new, aged by parallel_do (which destroys some), counted. */
#include "warpheap/soa.h"
#include <stdio.h>
#define CELL_FIELDS(F) F(uint32_t, life)
WH_SOA_CLASS(Cell, 0, CELL_FIELDS)                     /* type id 0; Cell is a 64-bit object handle */
WH_INLINE WH_HOST_DEVICE void born(const wh_soa *s, Cell c, uint64_t i, const uint32_t *lives)
{ (void)s, WH_GET(Cell, c, life) = (uint32_t)(i % *lives); }
WH_INLINE WH_HOST_DEVICE void age(const wh_soa *s, Cell c, const uint32_t *unused)    /* may destroy itself */
{ if ((void)unused, WH_GET(Cell, c, life)-- == 0) WH_SOA_DESTROY(s, c); }
WH_SOA_PARALLEL_NEW(Cell, born, uint32_t)              /* Cell_parallel_new_born(&soa, n, ctx) */
WH_SOA_PARALLEL_DO(Cell, age, uint32_t)                /* Cell_parallel_do_age(&soa, ctx); ctx: any type */
int main(void) {
    wh_soa_type_desc types[] = {WH_SOA_TYPE(Cell)};
    wh_soa_config cfg = {16 << 20, types, 1, wh_cuda_available(), 0, NULL, false};   /* GPU memory where there is a GPU */
    wh_soa soa; uint64_t live = 0, slots; wh_status e = wh_soa_create(&soa, &cfg);
    if (!e) e = Cell_parallel_new_born(&soa, 1000, 2);    /* life = i % 2 */
    if (!e) e = Cell_parallel_do_age(&soa, 0);            /* life 0 dies, life 1 becomes 0 */
    if (!e) e = wh_soa_usage(&soa, &live, &slots);        /* live objects, slots of their blocks */
    if (!e) e = Cell_parallel_do_age(&soa, 0);            /* the rest die */
    if (!e) e = wh_soa_destroy(&soa);                     /* WH_ERR_IN_USE had objects been left */
    if (e) { fprintf(stderr, "soa: %s: %s\n", wh_strerror(e), wh_last_error()); return 1; }
    printf("%s heap: %llu of 1000 cells outlived one step\n", cfg.on_device ? "GPU" : "CPU", (unsigned long long)live);
    return live == 500 ? 0 : 1;
}
