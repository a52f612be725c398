/*
 * Fast float convolution (cpu/conv_f32.c + the ISA SGEMM kernels) against the reference conv
 * and epilogue: odd sizes, strides 1/2, pads, dilation 2, groups, 1x1, depthwise, K split into
 * several KC blocks, M and N tails, batch 2, every epilogue kind. Every ISA this CPU has, both
 * algorithms (implicit GEMM and channel-blocked; AUTO picks one of them), with 1 and 3 workers;
 * the channel-blocked one also with its input, its output (and residual) or both in the NCHWc
 * layout where the channel counts allow; canary floats guard every output and scratch buffer.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb_test.h"
#include "engine/cpu/fast.h"
#include "engine/ir/graph.h"
#include "guarded.h"

static void finish_desc(struct eb_conv2d_desc *d, int64_t pad_b, int64_t pad_r)
{
    d->oh = (d->ih + d->pad_t + pad_b - (d->kh - 1) * d->dil_h - 1) / d->stride_h + 1;
    d->ow = (d->iw + d->pad_l + pad_r - (d->kw - 1) * d->dil_w - 1) / d->stride_w + 1;
}

static void run_case(const struct eb_conv2d_desc *d, const struct eb_epilogue *epi,
                     enum eb_cpu_isa isa, enum eb_conv_f32_algo algo, unsigned layout, int workers,
                     uint64_t seed)
{
    const struct eb_allocator sys = eb_allocator_system();
    const int64_t icg = d->ic / d->groups, k = icg * d->kh * d->kw;
    const size_t nx = (size_t)(d->n * d->ic * d->ih * d->iw), nw = (size_t)(d->oc * k);
    const size_t ny = (size_t)(d->n * d->oc * d->oh * d->ow);
    float *x = guarded(nx), *w = guarded(nw), *b = guarded((size_t)d->oc);
    float *r = guarded(ny), *yr = guarded(ny), *yf = guarded(ny);
    uint64_t s = seed;
    for (size_t i = 0; i < nx; i++)
        x[i] = frand(&s);
    for (size_t i = 0; i < nw; i++)
        w[i] = frand(&s);
    for (int64_t i = 0; i < d->oc; i++)
        b[i] = frand(&s);
    for (size_t i = 0; i < ny; i++) {
        r[i] = frand(&s);
        yf[i] = 999.0f; /* every output must be written */
    }
    eb_cpu_conv2d_f32__ref(d, x, w, b, yr);
    eb_cpu_epilogue_f32__ref(epi, ny, r, yr);
    /* NCHWc operands: the kernel may read past the input's end (EB_CPU_READ_SLACK: its last
     * 1x1 tile), here into the guard floats, whose values must not reach y. */
    const int64_t cb = layout != 0 ? eb_cpu_conv2d_f32_cl_block(d, isa) : 1;
    const int64_t ihw = d->ih * d->iw, ohw = d->oh * d->ow;
    float *xk = x, *rk = r, *yk = yf;
    if (layout & EB_CONV_IN_CL) {
        xk = guarded(nx);
        reorder_nchwc(x, d->n, d->ic, ihw, cb, 1, xk);
    }
    if (layout & EB_CONV_OUT_CL) {
        rk = guarded(ny), yk = guarded(ny);
        reorder_nchwc(r, d->n, d->oc, ohw, cb, 1, rk);
        for (size_t i = 0; i < ny; i++)
            yk[i] = 999.0f;
    }

    struct eb_ir_arena arena;
    eb_ir_arena_init(&arena, &sys);
    struct eb_conv2d_f32_plan *plan = NULL;
    size_t scratch_bytes = 0, packed = 0;
    enum eb_status st = eb_cpu__conv2d_f32_prepare_as(d, w, b, isa, workers, algo, layout, &arena,
                                                      &plan, &scratch_bytes, &packed);
    ASSERT_EQ_INT(st, EB_OK);
    ASSERT_TRUE(plan != NULL);
    const size_t sf = scratch_bytes / sizeof(float);
    float *scratch = guarded(sf > 0 ? sf : 1);
    struct eb_threadpool *pool = NULL;
    ASSERT_EQ_INT(eb_threadpool_create(workers, &sys, &pool, NULL), EB_OK);
    struct eb_cpu_exec ex = {.isa = isa,
                             .pool = pool,
                             .n_workers = eb_threadpool_size(pool),
                             .scratch = scratch,
                             .scratch_bytes = scratch_bytes};
    /* A weight change after prepare must not matter: the plan owns packed copies. */
    for (size_t i = 0; i < nw; i++)
        w[i] = 0.0f;
    eb_cpu_conv2d_f32_run(plan, epi, &ex, xk, rk, yk);
    eb_cpu_conv2d_f32_run(plan, epi, &ex, xk, rk, yk); /* twice: no state kept between runs */
    if (layout & EB_CONV_OUT_CL)
        reorder_nchwc(yk, d->n, d->oc, ohw, cb, 0, yf);

    /* fp32 sums of K products of values in [-1, 1): the rounding error of both sums grows like
     * sqrt(K) * eps * |typical partial sum| (random signs), so 1e-4 * sqrt(K) / 4 relative to
     * (1 + |ref|) is ~100x that bound yet far below any indexing bug (errors of O(1)). The
     * vectorised exp adds ~2e-7 relative. With fake quantisation a sum within that error of a
     * rounding boundary may land on the next step, so one quantisation step is allowed too. */
    for (size_t i = 0; i < ny; i++) {
        double tol = 1e-4 * (1.0 + fabs((double)yr[i])) * sqrt((double)k) / 4.0;
        if (epi->fake_quant)
            tol += epi->fq_scale * 1.001;
        if (!(fabs((double)yf[i] - (double)yr[i]) <= tol))
            EB_FAIL("%s %s (layout %u) x%d: y[%zu] = %.7g, ref %.7g (k %lld, act %s)",
                    eb_cpu_isa_name(isa),
                    algo == EB_CONV_F32_BLOCKED || layout ? "blocked" : "gemm", layout, workers, i,
                    (double)yf[i], (double)yr[i], (long long)k, eb_act_name(epi->act));
    }
    if (layout & EB_CONV_IN_CL) {
        check_guards(xk, nx, "x (NCHWc)");
        release(xk);
    }
    if (layout & EB_CONV_OUT_CL) {
        check_guards(yk, ny, "y (NCHWc)");
        check_guards(rk, ny, "residual (NCHWc)");
        release(yk), release(rk);
    }
    check_guards(yf, ny, "y");
    check_guards(scratch, sf > 0 ? sf : 1, "scratch");
    check_guards(x, nx, "x");
    check_guards(r, ny, "residual");
    eb_threadpool_destroy(pool);
    eb_ir_arena_fini(&arena);
    release(scratch);
    release(x), release(w), release(b), release(r), release(yr), release(yf);
}

/* Runs `d` with `epi` on every fast ISA of this CPU with 1 and 3 workers. */
static void run_all(struct eb_conv2d_desc d, const struct eb_epilogue *epi, uint64_t seed)
{
    struct eb_cpu_features f;
    eb_cpu_features_detect(&f);
    const enum eb_cpu_isa isas[] = {EB_CPU_ISA_NEON, EB_CPU_ISA_AVX2, EB_CPU_ISA_AVX512};
    const int have[] = {f.neon, f.avx2, f.avx512};
    int ran = 0;
    for (size_t i = 0; i < EB_ARRAY_LEN(isas); i++) {
        if (!have[i])
            continue;
        for (int algo = EB_CONV_F32_GEMM; algo <= EB_CONV_F32_BLOCKED; algo++) {
            run_case(&d, epi, isas[i], (enum eb_conv_f32_algo)algo, 0, 1, seed);
            run_case(&d, epi, isas[i], (enum eb_conv_f32_algo)algo, 0, 3, seed + 1);
        }
        /* NCHWc input and/or output where the conv and its channel counts allow them; fake
         * quantisation keeps the output NCHW (the layout pass's rule) */
        const int cb = eb_cpu_conv2d_f32_cl_block(&d, isas[i]);
        for (unsigned layout = 1; cb > 0 && layout <= 3; layout++) {
            if (((layout & EB_CONV_IN_CL) && d.ic % cb != 0) ||
                ((layout & EB_CONV_OUT_CL) && (d.oc % cb != 0 || epi->fake_quant)))
                continue;
            run_case(&d, epi, isas[i], EB_CONV_F32_AUTO, layout, 1, seed + 2);
            run_case(&d, epi, isas[i], EB_CONV_F32_AUTO, layout, 3, seed + 3);
        }
        ran = 1;
    }
    if (!ran)
        EB_SKIP("no fast ISA on this CPU");
}

static struct eb_conv2d_desc conv(int64_t n, int64_t ic, int64_t ih, int64_t iw, int64_t oc,
                                  int64_t kh, int64_t kw, int64_t s, int64_t pad, int64_t dil,
                                  int64_t groups)
{
    struct eb_conv2d_desc d = {.n = n,
                               .ic = ic,
                               .ih = ih,
                               .iw = iw,
                               .oc = oc,
                               .kh = kh,
                               .kw = kw,
                               .groups = groups,
                               .stride_h = s,
                               .stride_w = s,
                               .pad_t = pad,
                               .pad_l = pad,
                               .dil_h = dil,
                               .dil_w = dil};
    finish_desc(&d, pad, pad);
    return d;
}

static const struct eb_epilogue plain = {.act = EB_ACT_NONE};

EB_TEST(conv_pointwise_tails)
{
    run_all(conv(1, 7, 9, 11, 13, 1, 1, 1, 0, 1, 1), &plain, 1);
    run_all(conv(1, 32, 16, 16, 32, 1, 1, 1, 0, 1, 1), &plain, 2);
    run_all(conv(1, 5, 1, 1, 1, 1, 1, 1, 0, 1, 1), &plain, 3);
    run_all(conv(1, 3, 7, 5, 7, 1, 1, 2, 0, 1, 1), &plain, 4); /* 1x1 stride 2 */
    run_all(conv(1, 3, 6, 6, 8, 1, 1, 1, 1, 1, 1), &plain, 5); /* 1x1 padded */
}

EB_TEST(conv_3x3_stride1_pad)
{
    run_all(conv(1, 5, 13, 10, 17, 3, 3, 1, 1, 1, 1), &plain, 11);
    run_all(conv(1, 16, 20, 20, 24, 3, 3, 1, 1, 1, 1), &plain, 12);
    run_all(conv(1, 4, 5, 3, 6, 3, 3, 1, 0, 1, 1), &plain, 13);
}

EB_TEST(conv_3x3_stride2)
{
    run_all(conv(1, 3, 33, 31, 16, 3, 3, 2, 1, 1, 1), &plain, 21); /* first yolo layer */
    run_all(conv(1, 16, 20, 18, 32, 3, 3, 2, 1, 1, 1), &plain, 22);
    run_all(conv(1, 5, 9, 9, 7, 3, 3, 3, 2, 1, 1), &plain, 23); /* stride 3 */
    /* unpadded, odd width: the stride-2 gather's last vector ends on the row's last input */
    run_all(conv(1, 4, 9, 37, 8, 3, 3, 2, 0, 1, 1), &plain, 24);
    run_all(conv(1, 2, 5, 36, 8, 2, 2, 2, 0, 1, 1), &plain, 25);
}

EB_TEST(conv_dilation2_asymmetric)
{
    run_all(conv(1, 6, 15, 14, 9, 3, 3, 1, 2, 2, 1), &plain, 31);
    struct eb_conv2d_desc d = {.n = 1,
                               .ic = 4,
                               .ih = 11,
                               .iw = 13,
                               .oc = 7,
                               .kh = 1,
                               .kw = 5,
                               .groups = 1,
                               .stride_h = 2,
                               .stride_w = 1,
                               .pad_t = 0,
                               .pad_l = 3,
                               .dil_h = 1,
                               .dil_w = 2};
    finish_desc(&d, 1, 0);
    run_all(d, &plain, 32);
    struct eb_conv2d_desc e = {.n = 1,
                               .ic = 3,
                               .ih = 12,
                               .iw = 12,
                               .oc = 5,
                               .kh = 5,
                               .kw = 5,
                               .groups = 1,
                               .stride_h = 1,
                               .stride_w = 2,
                               .pad_t = 2,
                               .pad_l = 1,
                               .dil_h = 1,
                               .dil_w = 1};
    finish_desc(&e, 0, 4);
    run_all(e, &plain, 33);
}

/* Inputs big enough to be padded and multiplied band by band (several bands of output rows,
 * the last one shorter), stride 1 and 2, with a residual epilogue. */
EB_TEST(conv_bands)
{
    struct eb_epilogue silu_add = {.act = EB_ACT_SILU, .residual = 1};
    run_all(conv(1, 64, 41, 40, 16, 3, 3, 1, 1, 1, 1), &silu_add, 61);
    run_all(conv(1, 32, 64, 66, 16, 3, 3, 2, 1, 1, 1), &plain, 62);
}

EB_TEST(conv_groups)
{
    run_all(conv(1, 8, 10, 9, 12, 3, 3, 1, 1, 1, 2), &plain, 41);
    run_all(conv(1, 8, 10, 9, 8, 1, 1, 1, 0, 1, 4), &plain, 42);
    run_all(conv(1, 6, 7, 7, 12, 3, 3, 1, 1, 1, 6), &plain, 43); /* depth multiplier 2 */
}

EB_TEST(conv_depthwise)
{
    struct eb_epilogue silu = {.act = EB_ACT_SILU, .residual = 1};
    run_all(conv(1, 10, 13, 11, 10, 3, 3, 1, 1, 1, 10), &plain, 51);
    run_all(conv(1, 10, 13, 11, 10, 3, 3, 2, 1, 1, 10), &silu, 52);
    run_all(conv(2, 7, 9, 8, 7, 5, 5, 1, 2, 1, 7), &plain, 53);
    /* yolo11n's head shape, dilation 2, unpadded stride 2, a one-pixel plane */
    run_all(conv(1, 16, 20, 20, 16, 3, 3, 1, 1, 1, 16), &silu, 54);
    run_all(conv(1, 5, 17, 19, 5, 3, 3, 1, 2, 2, 5), &plain, 55);
    run_all(conv(1, 6, 15, 23, 6, 3, 3, 2, 0, 1, 6), &plain, 56);
    run_all(conv(1, 3, 1, 1, 3, 3, 3, 1, 1, 1, 3), &silu, 57);
    /* channel blocks of 8 and 16, the last one partial; pixel groups of 8 and single pixels */
    run_all(conv(1, 40, 12, 27, 40, 3, 3, 2, 1, 1, 40), &silu, 58);
}

EB_TEST(conv_large_k_blocks)
{
    struct eb_epilogue silu = {.act = EB_ACT_SILU, .residual = 1};
    run_all(conv(1, 70, 9, 10, 50, 3, 3, 1, 1, 1, 1), &silu, 61);   /* K 630: 2 KC blocks */
    run_all(conv(1, 150, 5, 5, 160, 3, 3, 1, 1, 1, 1), &plain, 62); /* K 1350, M 160 */
    run_all(conv(1, 40, 20, 30, 30, 1, 1, 1, 0, 1, 1), &silu, 63);  /* N 600: several NC */
}

EB_TEST(conv_batch2)
{
    struct eb_epilogue e = {.act = EB_ACT_RELU, .residual = 1};
    run_all(conv(2, 6, 11, 9, 10, 3, 3, 2, 1, 1, 1), &e, 71);
    run_all(conv(2, 9, 8, 8, 14, 1, 1, 1, 0, 1, 1), &e, 72);
}

EB_TEST(conv_epilogues)
{
    const struct eb_conv2d_desc d = conv(1, 9, 11, 10, 19, 3, 3, 1, 1, 1, 1);
    const enum eb_act acts[] = {EB_ACT_NONE, EB_ACT_RELU,         EB_ACT_LEAKY_RELU,
                                EB_ACT_CLIP, EB_ACT_SIGMOID,      EB_ACT_SILU,
                                EB_ACT_TANH, EB_ACT_HARD_SIGMOID, EB_ACT_HARD_SWISH};
    for (size_t i = 0; i < EB_ARRAY_LEN(acts); i++) {
        for (int res = 0; res < 2; res++) {
            for (int fq = 0; fq < 2; fq++) {
                struct eb_epilogue e = {.act = acts[i], .residual = res, .fake_quant = fq};
                e.alpha = acts[i] == EB_ACT_CLIP ? -0.5f : 0.2f;
                e.beta = acts[i] == EB_ACT_CLIP ? 0.75f : 0.5f;
                e.fq_scale = 0.05f;
                e.fq_zp = 3;
                e.fq_qmin = -128;
                e.fq_qmax = 127;
                run_all(d, &e, 100 + i * 4 + (size_t)res * 2 + (size_t)fq);
            }
        }
    }
}

/* Shapes whose channels fill whole blocks of 8 and 16, so that run_all also runs them with
 * NCHWc input and/or output: 1x1 read in place (tail tiles), stride 2, batch 2, depthwise, a
 * 16-channel last output block, a one-pixel plane, every activation into NCHWc. */
EB_TEST(conv_nchwc_layouts)
{
    struct eb_epilogue silu_add = {.act = EB_ACT_SILU, .residual = 1};
    run_all(conv(1, 32, 13, 11, 32, 1, 1, 1, 0, 1, 1), &silu_add, 81);
    run_all(conv(1, 16, 15, 17, 48, 3, 3, 2, 1, 1, 1), &plain, 82);
    run_all(conv(2, 32, 9, 10, 16, 3, 3, 1, 1, 1, 1), &silu_add, 83);
    run_all(conv(1, 48, 11, 9, 48, 3, 3, 1, 1, 1, 48), &silu_add, 84);
    run_all(conv(1, 32, 7, 5, 80, 1, 1, 1, 0, 1, 1), &plain, 85);
    run_all(conv(1, 64, 1, 1, 32, 1, 1, 1, 0, 1, 1), &plain, 86);
    run_all(conv(1, 16, 6, 6, 16, 1, 1, 2, 1, 1, 1), &silu_add, 87); /* 1x1, stride 2, padded */
    /* rows and 1x1 runs of 12k + 11 pixels: the AVX-512 row's last tile stays within R */
    run_all(conv(1, 16, 4, 23, 32, 3, 3, 1, 1, 1, 1), &silu_add, 88);
    run_all(conv(1, 32, 5, 7, 48, 1, 1, 1, 0, 1, 1), &plain, 89);
    const enum eb_act acts[] = {EB_ACT_NONE, EB_ACT_RELU,         EB_ACT_LEAKY_RELU,
                                EB_ACT_CLIP, EB_ACT_SIGMOID,      EB_ACT_SILU,
                                EB_ACT_TANH, EB_ACT_HARD_SIGMOID, EB_ACT_HARD_SWISH};
    for (size_t i = 0; i < EB_ARRAY_LEN(acts); i++) {
        struct eb_epilogue e = {.act = acts[i], .residual = (int)(i % 2)};
        e.alpha = acts[i] == EB_ACT_CLIP ? -0.5f : 0.2f;
        e.beta = acts[i] == EB_ACT_CLIP ? 0.75f : 0.5f;
        run_all(conv(1, 16, 6, 7, 32, 3, 3, 1, 1, 1, 1), &e, 90 + i);
    }
}
