/*
 * CPU device of the native engine: instruction-set detection (run-time dispatch), the thread
 * pool, and the execution context every kernel receives. No globals: the features are detected
 * once per engine and the pool belongs to the engine.
 *
 * ISA kernels live in cpu/x86 (AVX2+FMA, AVX-512) and cpu/arm (NEON, compiled only when
 * targeting aarch64); cpu/ref holds the scalar reference every one of them is tested against.
 * x86 kernel files are compiled with per-function target attributes, so the binary runs on any
 * x86-64 CPU and picks the best kernel at load time.
 */
#ifndef EB_ENGINE_CPU_CPU_H
#define EB_ENGINE_CPU_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "eb/alloc.h"
#include "eb/diag.h"

/** Kernel families, best last. REF is always available. */
enum eb_cpu_isa {
    EB_CPU_ISA_REF = 0, /* scalar reference kernels */
    EB_CPU_ISA_NEON,    /* aarch64 Advanced SIMD (Jetson's Cortex-A78AE) */
    EB_CPU_ISA_AVX2,    /* AVX2 + FMA (x86-64) */
    EB_CPU_ISA_AVX512,  /* AVX-512 F/BW/DQ/VL (x86-64) */
};

struct eb_cpu_features {
    int avx2;        /* AVX2 and FMA3, and the OS saves YMM state */
    int avx512;      /* AVX-512 F, BW, DQ, VL, and the OS saves ZMM state */
    int avx512_vnni; /* AVX512_VNNI (vpdpwssd, vpdpbusd); only set together with avx512 */
    int avx512_vbmi; /* AVX512_VBMI (vpermi2b); only set together with avx512 */
    int neon;        /* aarch64 (Advanced SIMD is mandatory there) */
};

/** Reads the running CPU's features (cpuid/xgetbv on x86-64; compile-time on aarch64). */
void eb_cpu_features_detect(struct eb_cpu_features *f_out);
/** The best ISA the features allow. */
enum eb_cpu_isa eb_cpu_isa_best(const struct eb_cpu_features *f);
/** "ref", "neon", "avx2", "avx512". */
const char *eb_cpu_isa_name(enum eb_cpu_isa isa);
/**
 * Parses "auto", "ref", "neon", "avx2" or "avx512" (the EB_CPU_ISA environment variable and
 * tests use it to force a kernel family). "auto" gives eb_cpu_isa_best. EB_ERR_INVALID_ARG for
 * an unknown name, EB_ERR_UNSUPPORTED for an ISA this CPU or build lacks.
 */
EB_NODISCARD enum eb_status eb_cpu_isa_parse(const char *name, const struct eb_cpu_features *f,
                                             enum eb_cpu_isa *isa_out, struct eb_diag *diag);

/* ---- thread pool ----------------------------------------------------------------------- */

struct eb_threadpool;

/** One task of a parallel loop: `task` in [0, n_tasks), `worker` in [0, eb_threadpool_size). */
typedef void (*eb_parallel_fn)(void *ctx, size_t task, int worker);

/**
 * Starts `n_threads - 1` workers (the caller is worker 0 during eb_threadpool_run). n_threads
 * 1 starts none. Memory from `alloc` (borrowed; must outlive the pool). Caller owns `*pool_out`
 * (eb_threadpool_destroy).
 */
EB_NODISCARD enum eb_status eb_threadpool_create(int n_threads, const struct eb_allocator *alloc,
                                                 struct eb_threadpool **pool_out,
                                                 struct eb_diag *diag);
/** Workers including the caller; 1 for NULL. */
int eb_threadpool_size(const struct eb_threadpool *pool);
/**
 * Runs fn(ctx, task, worker) for every task, spread over the workers (dynamic: an atomic
 * counter), and returns when all are done. Does not allocate. `pool` NULL runs serially on the
 * caller. Not reentrant: one run at a time per pool.
 */
void eb_threadpool_run(struct eb_threadpool *pool, size_t n_tasks, eb_parallel_fn fn, void *ctx);
/** Stops and joins the workers; accepts NULL. */
void eb_threadpool_destroy(struct eb_threadpool *pool);

/* ---- what a kernel gets at run time ---------------------------------------------------- */

/**
 * Per-run execution context. `scratch` is the plan's scratch region (eb_memplan), shared by
 * every node (nodes run one at a time); its size is the maximum any node's prepare asked for,
 * and per-worker parts are the kernel's business (worker w uses its own slice).
 */
struct eb_cpu_exec {
    enum eb_cpu_isa isa;
    struct eb_threadpool *pool; /* NULL = serial on the caller */
    int n_workers;              /* eb_threadpool_size(pool) */
    void *scratch;              /* 64-byte aligned; NULL when no node asked for any */
    size_t scratch_bytes;
};

/** `v` rounded up to a multiple of `to` (> 0): tile and panel counts. */
static inline int64_t eb_cpu_round_up(int64_t v, int64_t to)
{
    return (v + to - 1) / to * to;
}

/**
 * Bytes a kernel may read past the end of an activation tensor that lives in the engine's arena
 * (the channel-blocked 1x1 convolution's last tile, whose extra pixels are discarded): the
 * engine allocates this much beyond the arena and its scratch.
 */
#define EB_CPU_READ_SLACK 1024

/** Round `n` up to a multiple of 64 (scratch and packed-buffer sizes). */
static inline size_t eb_cpu_align64(size_t n)
{
    return (n + 63u) & ~(size_t)63u;
}

#endif
