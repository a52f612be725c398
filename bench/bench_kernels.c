/*
 * bench_kernels: the fast float convolution (cpu/conv_f32.c) on representative yolov8n/yolo11n
 * layers, its two algorithms side by side (implicit GEMM and channel-blocked, forced, their runs
 * alternating), what AUTO picks with 1 and 2 threads, and the scalar reference, measured in the
 * same run; best of `reps` runs (shared machines are noisy). Prints a Markdown table.
 *
 * Usage: bench_kernels [reps [layer]]   (reps default 10; the reference runs max(2, reps / 4)
 * times; `layer`: only the rows whose name contains it, e.g. "s2")
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/clock.h"
#include "engine/cpu/fast.h"
#include "engine/cpu/gemm.h"
#include "engine/ir/graph.h"

struct layer {
    const char *name;
    int64_t ic, hw, oc, k, s, groups;
};

static const struct layer LAYERS[] = {
    {"3->16 3x3 s2 @640", 3, 640, 16, 3, 2, 1},   {"16->32 3x3 s2 @320", 16, 320, 32, 3, 2, 1},
    {"32->32 1x1 @160", 32, 160, 32, 1, 1, 1},    {"64->64 3x3 @80", 64, 80, 64, 3, 1, 1},
    {"128->128 3x3 @40", 128, 40, 128, 3, 1, 1},  {"256->256 1x1 @20", 256, 20, 256, 1, 1, 1},
    {"64 dw 3x3 @80", 64, 80, 64, 3, 1, 64},      {"32->64 3x3 s2 @160", 32, 160, 64, 3, 2, 1},
    {"64->128 3x3 s2 @80", 64, 80, 128, 3, 2, 1}, {"64->80 3x3 @40", 64, 40, 80, 3, 1, 1},
    {"128 dw 3x3 @20", 128, 20, 128, 3, 1, 128},  {"256->256 1x1 @10", 256, 10, 256, 1, 1, 1},
    {"128->128 3x3 @10", 128, 10, 128, 3, 1, 1},  {"64->64 1x1 @80", 64, 80, 64, 1, 1, 1},
    {"128->128 1x1 @40", 128, 40, 128, 1, 1, 1},  {"512->256 1x1 @10", 512, 10, 256, 1, 1, 1},
    {"192->64 1x1 @40", 192, 40, 64, 1, 1, 1},    {"64 dw 3x3 @40", 64, 40, 64, 3, 1, 64},
};

static double now_ms(void)
{
    return (double)eb_clock_ns() / 1e6;
}

static float *fill(size_t n, uint32_t seed)
{
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) & ~(size_t)63);
    if (p == NULL)
        exit(1);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
    }
    return p;
}

/* Best time (ms) of the fast kernel with `threads` workers; -1 when no plan. */
static double bench_fast(const struct eb_conv2d_desc *d, const float *w, const float *b,
                         const float *x, float *y, enum eb_cpu_isa isa, enum eb_conv_f32_algo algo,
                         int threads, int reps)
{
    const struct eb_allocator sys = eb_allocator_system();
    const struct eb_epilogue epi = {.act = EB_ACT_SILU};
    struct eb_ir_arena arena;
    struct eb_conv2d_f32_plan *plan = NULL;
    struct eb_threadpool *pool = NULL;
    size_t sb = 0, pb = 0;
    double best = -1.0;
    eb_ir_arena_init(&arena, &sys);
    if (eb_cpu__conv2d_f32_prepare_as(d, w, b, isa, threads, algo, 0, &arena, &plan, &sb, &pb) !=
            EB_OK ||
        plan == NULL || eb_threadpool_create(threads, &sys, &pool, NULL) != EB_OK)
        goto out;
    void *scratch = sb > 0 ? aligned_alloc(64, eb_cpu_align64(sb)) : NULL;
    struct eb_cpu_exec ex = {
        .isa = isa, .pool = pool, .n_workers = threads, .scratch = scratch, .scratch_bytes = sb};
    eb_cpu_conv2d_f32_run(plan, &epi, &ex, x, NULL, y); /* warm-up */
    for (int r = 0; r < reps; r++) {
        const double t0 = now_ms();
        eb_cpu_conv2d_f32_run(plan, &epi, &ex, x, NULL, y);
        const double t = now_ms() - t0;
        best = best < 0 || t < best ? t : best;
    }
    free(scratch);
out:
    eb_threadpool_destroy(pool);
    eb_ir_arena_fini(&arena);
    return best;
}

/*
 * The micro-kernel alone on L1-resident panels (k = 256: A 8 KiB-ish, B 32 KiB at most),
 * packed and direct (B rows through an offset table): the ceiling of every conv row below.
 */
static void bench_ukernel(enum eb_cpu_isa isa)
{
    struct eb_sgemm_ukernel uk;
    enum { K = 192, CALLS = 20000 };
    if (!eb_cpu__sgemm_select(isa, &uk))
        return;
    float *a = fill((size_t)(K * uk.mr), 5), *b = fill((size_t)(K * uk.nr), 6);
    float *c = fill((size_t)(uk.mr * uk.nr), 7);
    int32_t off[K];
    for (int p = 0; p < K; p++)
        off[p] = p * uk.nr;
    const double flop = 2.0 * K * uk.mr * uk.nr * CALLS;
    double best_p = -1.0, best_d = -1.0;
    for (int r = 0; r < 5; r++) {
        double t0 = now_ms();
        for (int i = 0; i < CALLS; i++)
            uk.gemm(K, a, b, c, uk.nr, 1);
        double t = now_ms() - t0;
        best_p = best_p < 0 || t < best_p ? t : best_p;
        t0 = now_ms();
        for (int i = 0; i < CALLS; i++)
            uk.direct(K, a, b, off, c, uk.nr, 1);
        t = now_ms() - t0;
        best_d = best_d < 0 || t < best_d ? t : best_d;
    }
    printf("micro-kernel %s %dx%d in L1 (k=%d): packed %.1f GFLOP/s, direct %.1f GFLOP/s\n\n",
           eb_cpu_isa_name(isa), uk.mr, uk.nr, K, flop / best_p / 1e6, flop / best_d / 1e6);
    free(a), free(b), free(c);
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10;
    const char *only = argc > 2 ? argv[2] : NULL;
    struct eb_cpu_features f;
    eb_cpu_features_detect(&f);
    const enum eb_cpu_isa isa = eb_cpu_isa_best(&f);
    const struct eb_epilogue epi = {.act = EB_ACT_SILU};
    printf("fast ISA: %s, best of %d runs, SiLU epilogue\n\n", eb_cpu_isa_name(isa), reps);
    bench_ukernel(isa);
    printf("| layer | MFLOP | ref ms | gemm 1t ms | GF/s | blocked 1t ms | GF/s | blocked/gemm | "
           "auto 1t ms | auto 2t ms | GF/s | 2t/1t |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof(LAYERS) / sizeof(LAYERS[0]); i++) {
        const struct layer *l = &LAYERS[i];
        if (only != NULL && strstr(l->name, only) == NULL)
            continue;
        struct eb_conv2d_desc d = {.n = 1,
                                   .ic = l->ic,
                                   .ih = l->hw,
                                   .iw = l->hw,
                                   .oc = l->oc,
                                   .kh = l->k,
                                   .kw = l->k,
                                   .groups = l->groups,
                                   .stride_h = l->s,
                                   .stride_w = l->s,
                                   .pad_t = l->k / 2,
                                   .pad_l = l->k / 2,
                                   .dil_h = 1,
                                   .dil_w = 1};
        d.oh = (d.ih + 2 * d.pad_t - d.kh) / d.stride_h + 1;
        d.ow = (d.iw + 2 * d.pad_l - d.kw) / d.stride_w + 1;
        const size_t nx = (size_t)(d.ic * d.ih * d.iw), ny = (size_t)(d.oc * d.oh * d.ow);
        const size_t nw = (size_t)(d.oc * d.ic / d.groups * d.kh * d.kw);
        float *x = fill(nx, 1), *w = fill(nw, 2), *b = fill((size_t)d.oc, 3), *y = fill(ny, 4);
        const double flop = 2.0 * (double)ny * (double)(d.ic / d.groups * d.kh * d.kw);
        double ref = -1.0;
        const int ref_reps = reps / 4 > 2 ? reps / 4 : 2;
        for (int r = 0; r < ref_reps; r++) {
            const double t0 = now_ms();
            eb_cpu_conv2d_f32__ref(&d, x, w, b, y);
            eb_cpu_epilogue_f32__ref(&epi, ny, NULL, y);
            const double t = now_ms() - t0;
            ref = ref < 0 || t < ref ? t : ref;
        }
        /* The two algorithms alternate (best of each), so a noisy spell hits both. */
        double tg = -1.0, tb = -1.0;
        for (int round = 0; round < 4; round++) {
            const int n = (reps + 3) / 4;
            const double g = bench_fast(&d, w, b, x, y, isa, EB_CONV_F32_GEMM, 1, n);
            const double k = bench_fast(&d, w, b, x, y, isa, EB_CONV_F32_BLOCKED, 1, n);
            tg = tg < 0 || (g >= 0 && g < tg) ? g : tg;
            tb = tb < 0 || (k >= 0 && k < tb) ? k : tb;
        }
        const double t1 = bench_fast(&d, w, b, x, y, isa, EB_CONV_F32_AUTO, 1, reps);
        const double t2 = bench_fast(&d, w, b, x, y, isa, EB_CONV_F32_AUTO, 2, reps);
        printf("| %s | %.1f | %.2f | %.3f | %.1f | %.3f | %.1f | %.2f | %.3f | %.3f | %.1f | "
               "%.2fx |\n",
               l->name, flop / 1e6, ref, tg, flop / tg / 1e6, tb, flop / tb / 1e6, tb / tg, t1, t2,
               flop / t2 / 1e6, t1 / t2);
        free(x), free(w), free(b), free(y);
    }
    return 0;
}
