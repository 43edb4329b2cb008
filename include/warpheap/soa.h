/* SPDX-License-Identifier: MIT */
/* warpheap object allocator: typed objects in SOA blocks (DynaSOAr in C).
 *
 * Declare a class once with an X-macro of its fields:
 *
 *     #define FISH_FIELDS(F) F(uint32_t, cell) F(uint32_t, egg_timer)
 *     WH_SOA_CLASS(Fish, 0, FISH_FIELDS)                 type id 0
 *     WH_SOA_SUBCLASS(Shark, 1, Fish, SHARK_FIELDS)      inherits Fish's fields
 *
 * and get: a handle type `Fish` (a 64-bit object pointer, soa/pointer.h),
 * `WH_GET(Fish, f, egg_timer)` (an lvalue in the field's SOA array; inherited
 * fields: `WH_GET(Shark, s, base.cell)`, or upcast with Shark_super(s)),
 * `WH_SOA_NEW(soa, Fish)` / `WH_SOA_DESTROY(soa, f)` in device code
 * (`WH_SOA_NEW_AT(soa, Fish, key)`: beside the Fish of the same key),
 * 32-bit references for fields that point to objects (`WH_SOA_REF(soa, f)`,
 * `Fish_from_ref(soa, r)`; soa/ref.h),
 * `wh_soa_iter` for device_do, and with
 *
 *     WH_SOA_PARALLEL_DO(Fish, fish_step, StepCtx)
 *     WH_SOA_PARALLEL_NEW(Fish, fish_init, InitCtx)
 *
 * host launchers `Fish_parallel_do_fish_step(&soa, ctx)` and
 * `Fish_parallel_new_fish_init(&soa, n, ctx)`.  `fish_step(const wh_soa *,
 * Fish, const StepCtx *)` runs once for every object of Fish and its subclasses
 * that existed when the launcher was called; it may create objects and may
 * destroy its own object (and objects of other types).  In a .cu file the
 * launchers run kernels on a device heap; everywhere they run host threads on a
 * host heap: the same program runs on the CPU backend.
 */
#ifndef WARPHEAP_SOA_H
#define WARPHEAP_SOA_H

#include "warpheap/soa/do.h"
#include "warpheap/soa/ref.h"

#if defined(__CUDACC__)
#include "warpheap/cuda_check.h"
WH_EXTERN_C_BEGIN
/* The preparation -- type t's blocks (Alg. 5) with snapshots of their slot
 * bitmaps into soa->do_blocks, do_iter and do_count; none when again: the
 * last snapshot serves -- then a do-all kernel (WH__SOA_DO_KERNEL) for type
 * t, on the default stream: the kernel may start while the preparation
 * finishes (sm_90), and waits for it before it reads anything. */
WH_API wh_status wh__soa_do_device(const void *kernel, const wh_soa *soa, uint32_t t, const void *ctx, int again);
/* Allocation failures counted so far (synchronises). */
WH_EXTERN_C_END
#endif

WH_EXTERN_C_BEGIN
WH_API uint64_t wh__soa_failed_allocs(const wh_soa *soa);
/* Run fn(k0, k1, ctx) over [0, n) split among host threads. */
typedef void (*wh__soa_for_fn)(uint64_t k0, uint64_t k1, const void *ctx);
WH_API void wh__soa_for_host(uint64_t n, uint32_t threads, wh__soa_for_fn fn, const void *ctx);
WH_EXTERN_C_END

#if defined(__cplusplus)
#define WH__TYPEOF(x) decltype(x)
#else
#define WH__TYPEOF(x) __typeof__(x)
#endif

/* ---- classes ------------------------------------------------------------------ */
#define WH__SOA_DECL(type, name) type name;

/* A field of a class: its offset in the class's layout struct (its SOA
 * array starts at cap times that in a block) and its size.
 * Name##__fields(f, cap) lists a class's fields, inherited ones first, into
 * f[0 .. cap) and returns how many there are (wh_soa_dist packs objects
 * field by field with it). */
typedef struct wh_soa_field_desc {
    uint32_t offset, size;
} wh_soa_field_desc;
#if defined(__cplusplus)
#define WH__ALIGNOF(type) alignof(type)
#else
#define WH__ALIGNOF(type) _Alignof(type)
#endif
/* A field's place as the C layout rules give it: a struct of the field
 * alone has its size and alignment, also when its name carries an array's
 * length. */
#define WH__SOA_FIELD_DESC(type, name)                                                                    \
    {                                                                                                     \
        struct wh__one {                                                                                  \
            type name;                                                                                    \
        };                                                                                                \
        uint32_t wh__a = (uint32_t)WH__ALIGNOF(struct wh__one), wh__s = (uint32_t)sizeof(struct wh__one); \
        wh__at = (wh__at + wh__a - 1u) / wh__a * wh__a;                                                   \
        if (wh__n < wh__cap) wh__f[wh__n].offset = wh__at, wh__f[wh__n].size = wh__s;                     \
        wh__at += wh__s;                                                                                  \
        ++wh__n;                                                                                          \
    }

/* Generated helpers may go unused in a program: no warning for that. */
#define WH__SOA_FN WH_INLINE WH_HOST_DEVICE __attribute__((unused))
#define WH__SOA_HANDLE(Name, ID, PARENT_ID)                     \
    typedef struct Name {                                       \
        uint64_t p;                                             \
    } Name;                                                     \
    enum { Name##_TYPE = (ID), Name##__PARENT = (PARENT_ID) };  \
    WH__SOA_FN uint64_t Name##__ptr(Name o) { return o.p; }     \
    WH__SOA_FN Name Name##_from(uint64_t p) {                   \
        Name o;                                                 \
        o.p = p;                                                \
        return o;                                               \
    }                                                           \
    WH__SOA_FN bool Name##_is_null(Name o) { return o.p == 0; } \
    WH__SOA_FN Name Name##_from_ref(const wh_soa *s, wh_soa_ref r) { return Name##_from(wh_soa_ref_ptr(s, r)); }

/* Name##__layout gives each field its offset; Name##__end the bytes an
 * object takes in the SOA arrays: the end of its last field, without the
 * struct's tail padding (a trailing char sits right after the last field).
 * Only the arrays need alignment, not each object (DynaSOAr 6.2). */
#define WH_SOA_CLASS(Name, ID, FIELDS)                                               \
    typedef struct Name##__layout {                                                  \
        FIELDS(WH__SOA_DECL)                                                         \
    } Name##__layout;                                                                \
    typedef struct Name##__end {                                                     \
        FIELDS(WH__SOA_DECL) char end;                                               \
    } Name##__end;                                                                   \
    WH__SOA_HANDLE(Name, ID, -1)                                                     \
    WH__SOA_FN unsigned Name##__fields(wh_soa_field_desc *wh__f, unsigned wh__cap) { \
        unsigned wh__n = 0;                                                          \
        __attribute__((unused)) uint32_t wh__at = 0; /* unused: no fields */         \
        FIELDS(WH__SOA_FIELD_DESC)                                                   \
        return wh__n;                                                                \
    }

#define WH_SOA_SUBCLASS(Name, ID, Parent, FIELDS)                                     \
    typedef struct Name##__layout {                                                   \
        Parent##__layout base;                                                        \
        FIELDS(WH__SOA_DECL)                                                          \
    } Name##__layout;                                                                 \
    typedef struct Name##__end {                                                      \
        Parent##__layout base;                                                        \
        FIELDS(WH__SOA_DECL) char end;                                                \
    } Name##__end;                                                                    \
    WH__SOA_HANDLE(Name, ID, Parent##_TYPE)                                           \
    WH__SOA_FN Parent Name##_super(Name o) { return Parent##_from(o.p); }             \
    WH__SOA_FN unsigned Name##__fields(wh_soa_field_desc *wh__f, unsigned wh__cap) {  \
        unsigned wh__n = Parent##__fields(wh__f, wh__cap); /* base at 0 */            \
        __attribute__((unused)) uint32_t wh__at = (uint32_t)sizeof(Parent##__layout); \
        FIELDS(WH__SOA_FIELD_DESC)                                                    \
        return wh__n;                                                                 \
    }

/* No fields of its own (for WH_SOA_SUBCLASS). */
/* clang-format off */
#define WH_SOA_NO_FIELDS(F)
/* clang-format on */

/* Descriptors for wh_soa_config.types, in type id order. */
#define WH_SOA_SIZE(Name) ((uint32_t)offsetof(Name##__end, end))
#define WH_SOA_TYPE(Name) \
    { #Name, (uint32_t)Name##_TYPE, WH_SOA_SIZE(Name), (int32_t)Name##__PARENT, 0u }
#define WH_SOA_ABSTRACT_TYPE(Name) \
    { #Name, (uint32_t)Name##_TYPE, WH_SOA_SIZE(Name), (int32_t)Name##__PARENT, 1u }

/* Pointer to / lvalue of a field of obj (of class Class or a subclass). */
#define WH_FIELD(Class, obj, field)                                                                                 \
    ((WH__TYPEOF(((Class##__layout *)0)->field) *)wh_soa_field(Class##__ptr(obj), offsetof(Class##__layout, field), \
                                                               sizeof(((Class##__layout *)0)->field)))
#define WH_GET(Class, obj, field) (*WH_FIELD(Class, obj, field))

/* Device code: soa is a wh_soa (by value, as kernels receive it) or *pointer. */
#define WH_SOA_NEW(soa_ptr, Class)         Class##_from(wh_soa_alloc((soa_ptr), Class##_TYPE))
/* ... placed with the other objects of Class allocated with the same key (a
 * uint32_t, e.g. the tile of the cell the object lives in; soa/alloc.h). */
#define WH_SOA_NEW_AT(soa_ptr, Class, key) Class##_from(wh_soa_alloc_at((soa_ptr), Class##_TYPE, (key)))
#define WH_SOA_DESTROY(soa_ptr, obj)       wh_soa_free((soa_ptr), (obj).p)
/* The 32-bit reference of obj (soa/ref.h; a heap made with cfg.refs), and
 * back: Class_from_ref(soa_ptr, r). */
#define WH_SOA_REF(soa_ptr, obj)           wh_soa_ref_of((soa_ptr), (obj).p)
/* Runtime type test: p (a uint64_t object pointer) is of class Class or below. */
#define WH_SOA_IS(soa_ptr, p, Class)       ((p) != 0 && ((soa_ptr)->subtypes[Class##_TYPE] >> wh_soa_ptr_type(p)) & 1u)

/* ---- parallel_do / parallel_new ------------------------------------------------- *
 * Kernels take the heap and the context as __grid_constant__ parameters, so
 * the pointers handed to the user's function address the parameter space
 * instead of a per-thread copy of the (1.5 KB) descriptor.  A do-all kernel
 * keeps WH__SOA_DO_MIN_BLOCKS thread blocks of WH__SOA_DO_BLOCK on an SM (at most 64
 * registers a thread): a function that allocates inlines the allocator,
 * which otherwise takes the kernel past 64 registers and leaves too few
 * threads on an SM to hide the latency of the do-all's loads. */
#if defined(__CUDACC__)
#define WH__SOA_DO_BLOCK      256
#define WH__SOA_DO_MIN_BLOCKS 4
/* A do-all kernel's first step: wait until the preparation before it has
 * completed and its writes are visible (launched early: wh__soa_do_launch). */
static __device__ __forceinline__ void wh__soa_do_wait(void) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
#define WH__SOA_DO_KERNEL(Class, func, Ctx)                                                                        \
    static __global__ void __launch_bounds__(WH__SOA_DO_BLOCK, WH__SOA_DO_MIN_BLOCKS)                              \
        Class##__##func##__kernel(const __grid_constant__ wh_soa s, uint32_t t, const __grid_constant__ Ctx ctx) { \
        wh__soa_do_wait();                                                                                         \
        uint32_t cap = s.cap[t];                                                                                   \
        uint32_t per = (gridDim.x * blockDim.x) / cap; /* blocks in flight */                                      \
        uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;                                                      \
        if (tid >= per * cap) return;                                                                              \
        if (s.do_count[WH__SOA_DO_TYPE] != t + 1u) { /* parallel_do_again after another type's preparation */      \
            if (tid == 0) wh__soa_count(&s, WH_SOA_CTR_STALE_DO);                                                  \
            return;                                                                                                \
        }                                                                                                          \
        uint32_t slot = tid % cap, n = s.do_count[0], k = tid / cap;                                               \
        wh__soa_do_entry e = wh__soa_do_entry_at(&s, k, n);                                                        \
        for (; k < n; k += per) {                                                                                  \
            wh__soa_do_entry next = wh__soa_do_entry_at(&s, k + per, n); /* loads in flight during func */         \
            uint64_t p;                                                                                            \
            if (wh__soa_do_entry_object(&s, e, t, slot, &p)) func(&s, Class##_from(p), &ctx);                      \
            e = next;                                                                                              \
        }                                                                                                          \
    }
#define WH__SOA_DO_DEVICE(Class, func, s, u, ctx, again) \
    wh__soa_do_device((const void *)Class##__##func##__kernel, (s), (u), (ctx), (again))
/* parallel_new: one warp per chunk of cap objects (wh__soa_new_chunk). */
#define WH__SOA_NEW_KERNEL(Class, init, Ctx)                                                          \
    static __global__ void Class##__##init##__newkernel(const __grid_constant__ wh_soa s, uint64_t n, \
                                                        const __grid_constant__ Ctx ctx) {            \
        uint64_t cap = s.cap[Class##_TYPE];                                                           \
        uint64_t first = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32u * cap;               \
        if (first >= n) return; /* whole warps */                                                     \
        unsigned cnt = (unsigned)(n - first < cap ? n - first : cap), lane = threadIdx.x % 32u;       \
        uint64_t got = 0;                                                                             \
        uint32_t b = lane == 0 ? wh__soa_new_chunk(&s, Class##_TYPE, cnt, &got) : 0u;                 \
        b = wh_shfl32(0xFFFFFFFFu, b, 0);                                                             \
        got = wh_shfl64(0xFFFFFFFFu, got, 0);                                                         \
        for (unsigned r = lane; r < cnt; r += 32u) {                                                  \
            Class o = Class##_from(wh__soa_chunk_object(&s, Class##_TYPE, b, got, r));                \
            if (o.p) init(&s, o, first + r, &ctx);                                                    \
        }                                                                                             \
    }
#define WH__SOA_NEW_LAUNCH(Class, init)                                                     \
    {                                                                                       \
        uint64_t warps_ = (n + s->cap[Class##_TYPE] - 1u) / s->cap[Class##_TYPE];           \
        Class##__##init##__newkernel<<<(unsigned)((warps_ + 7u) / 8u), 256u>>>(*s, n, ctx); \
        WH_LAUNCH_TRY();                                                                    \
    }
#else
#define WH__SOA_DO_KERNEL(Class, func, Ctx)
#define WH__SOA_DO_DEVICE(Class, func, s, u, ctx, again) WH_ERR_UNSUPPORTED
#define WH__SOA_NEW_KERNEL(Class, init, Ctx)
#define WH__SOA_NEW_LAUNCH(Class, init) return WH_ERR_UNSUPPORTED;
#endif

#define WH_SOA_PARALLEL_DO(Class, func, Ctx)                                                                       \
    static void Class##__##func##__range(const wh_soa *s, uint32_t t, uint32_t k0, uint32_t k1, const void *ctx) { \
        for (uint32_t k = k0; k < k1; ++k) {                                                                       \
            wh__soa_do_entry e = wh__soa_do_entry_at(s, k, k1);                                                    \
            for (uint32_t slot = 0; slot < s->cap[t]; ++slot) {                                                    \
                uint64_t p;                                                                                        \
                if (wh__soa_do_entry_object(s, e, t, slot, &p)) func(s, Class##_from(p), (const Ctx *)ctx);        \
            }                                                                                                      \
        }                                                                                                          \
    }                                                                                                              \
    WH__SOA_DO_KERNEL(Class, func, Ctx)                                                                            \
    static wh_status Class##__##func##__run(const wh_soa *s, const Ctx *ctx, int again) {                          \
        uint32_t types = s->subtypes[Class##_TYPE];                                                                \
        again = again && wh__soa_concrete_types(s, types) == 1u; /* one snapshot: one type */                      \
        for (uint32_t u = 0; types; ++u, types >>= 1) {                                                            \
            if (!(types & 1u) || !s->cap[u]) continue;                                                             \
            wh_status st_ = s->on_device ? WH__SOA_DO_DEVICE(Class, func, s, u, ctx, again)                        \
                                         : wh__soa_do_host(s, u, Class##__##func##__range, ctx, again);            \
            if (st_ != WH_OK) return st_;                                                                          \
        }                                                                                                          \
        return WH_OK;                                                                                              \
    }                                                                                                              \
    static __attribute__((unused)) wh_status Class##_parallel_do_##func(const wh_soa *s, Ctx ctx) {                \
        return Class##__##func##__run(s, &ctx, 0);                                                                 \
    }                                                                                                              \
    static __attribute__((unused)) wh_status Class##_parallel_do_again_##func(const wh_soa *s, Ctx ctx) {          \
        return Class##__##func##__run(s, &ctx, 1);                                                                 \
    }

/* init(const wh_soa *, Class obj, uint64_t i, const Ctx *) for i in [0, n).
 * Objects are packed: cap of them to each fresh block (wh__soa_new_chunk).
 * WH_ERR_OUT_OF_MEMORY when some objects could not be allocated (synchronises). */
#define WH_SOA_PARALLEL_NEW(Class, init, Ctx)                                                       \
    typedef struct Class##__##init##__args {                                                        \
        const wh_soa *s;                                                                            \
        const Ctx *ctx;                                                                             \
        uint64_t n;                                                                                 \
    } Class##__##init##__args;                                                                      \
    static void Class##__##init##__newrange(uint64_t k0, uint64_t k1, const void *a_) {             \
        const Class##__##init##__args *a = (const Class##__##init##__args *)a_;                     \
        uint64_t cap = a->s->cap[Class##_TYPE];                                                     \
        for (uint64_t k = k0; k < k1; ++k) { /* chunk k */                                          \
            unsigned cnt = (unsigned)(a->n - k * cap < cap ? a->n - k * cap : cap);                 \
            uint64_t got = 0;                                                                       \
            uint32_t b = wh__soa_new_chunk(a->s, Class##_TYPE, cnt, &got);                          \
            for (unsigned r = 0; r < cnt; ++r) {                                                    \
                Class o = Class##_from(wh__soa_chunk_object(a->s, Class##_TYPE, b, got, r));        \
                if (o.p) init(a->s, o, k *cap + r, a->ctx);                                         \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
    WH__SOA_NEW_KERNEL(Class, init, Ctx)                                                            \
    static wh_status Class##_parallel_new_##init(const wh_soa *s, uint64_t n, Ctx ctx) {            \
        uint64_t failed = wh__soa_failed_allocs(s);                                                 \
        if (n == 0 || s->cap[Class##_TYPE] == 0) return WH_OK; /* abstract: nothing */              \
        if (s->on_device)                                                                           \
            WH__SOA_NEW_LAUNCH(Class, init)                                                         \
        else {                                                                                      \
            Class##__##init##__args a = {s, &ctx, n};                                               \
            uint64_t chunks = (n + s->cap[Class##_TYPE] - 1u) / s->cap[Class##_TYPE];               \
            wh__soa_for_host(chunks, s->cpu_threads, Class##__##init##__newrange, &a);              \
        }                                                                                           \
        if (wh__soa_failed_allocs(s) != failed)                                                     \
            return wh__fail(WH_ERR_OUT_OF_MEMORY, "parallel_new(%s, %llu): heap exhausted", #Class, \
                            (unsigned long long)n);                                                 \
        return WH_OK;                                                                               \
    }

/* A plain parallel loop, for static baselines: body(uint64_t i, const Ctx *)
 * for i in [0, n), as a kernel (on_device) or on host threads.
 * Launcher: name(bool on_device, uint64_t n, Ctx ctx). */
#if defined(__CUDACC__)
#define WH__SOA_FOR_KERNEL(name, Ctx, body)                                              \
    static __global__ void name##__kernel(uint64_t n, const __grid_constant__ Ctx ctx) { \
        uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;                    \
        if (i < n) body(i, &ctx);                                                        \
    }
#define WH__SOA_FOR_LAUNCH(name)                                         \
    {                                                                    \
        name##__kernel<<<(unsigned)((n + 255u) / 256u), 256u>>>(n, ctx); \
        WH_LAUNCH_TRY();                                                 \
        return WH_OK;                                                    \
    }
#else
#define WH__SOA_FOR_KERNEL(name, Ctx, body)
#define WH__SOA_FOR_LAUNCH(name) return WH_ERR_UNSUPPORTED;
#endif
#define WH_SOA_PARALLEL_FOR(name, Ctx, body)                               \
    static void name##__range(uint64_t k0, uint64_t k1, const void *ctx) { \
        for (uint64_t i = k0; i < k1; ++i) body(i, (const Ctx *)ctx);      \
    }                                                                      \
    WH__SOA_FOR_KERNEL(name, Ctx, body)                                    \
    static wh_status name(bool on_device, uint64_t n, Ctx ctx) {           \
        if (n == 0) return WH_OK;                                          \
        if (on_device) WH__SOA_FOR_LAUNCH(name)                            \
        wh__soa_for_host(n, 4u, name##__range, &ctx);                      \
        return WH_OK;                                                      \
    }

#endif /* WARPHEAP_SOA_H */
