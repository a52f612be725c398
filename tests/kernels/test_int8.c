/*
 * Fast integer kernels (cpu/conv_u8.c + cpu/x86/igemm_u8s8__avx2.c, __avx512.c and
 * cpu/arm/igemm_u8s8__neon.c) against the reference: ConvInteger exactly (int32) and its fused
 * requantisation on random and edge shapes (odd sizes, strides 1/2/3, pads, dilation, groups
 * incl. depthwise, 1x1, batch 2, output channels not a multiple of 8, pixel counts not a
 * multiple of 32, per-channel weight zero points, uint8 and int8 weights, extreme values) and
 * DynamicQuantizeLinear bit for bit (random, all-zero, all-positive, NaN/inf, odd lengths).
 * Every ISA this CPU has, with 1 and 3 workers; AVX-512 in all three flavours (vpdpbusd on
 * uint8 x int8 quads, vpdpwssd and vpmaddwd on int16 pairs, forced through
 * eb_cpu_conv2d_u8_prepare_opt), with several pixel-block sizes, and both ways of looking up
 * the requantisation's table; NEON (aarch64) with its 4x16 tiles. Canary bytes guard every
 * buffer, including the scratch. Tests for an ISA or feature this CPU lacks exit as skipped.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb_test.h"
#include "engine/cpu/conv_u8.h"
#include "engine/ir/graph.h"

#define GUARD  256 /* bytes either side */
#define CANARY 0xA5

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* n bytes with GUARD canary bytes either side, payload 64-byte aligned. */
static void *guarded(size_t n)
{
    uint8_t *p = malloc(n + 2 * GUARD + 64);
    ASSERT_TRUE(p != NULL);
    uint8_t *payload = (uint8_t *)(((uintptr_t)p + GUARD + 63) & ~(uintptr_t)63);
    memset(p, CANARY, n + 2 * GUARD + 64);
    memcpy(payload - GUARD, &p, sizeof(p)); /* original pointer, inside the low guard */
    return payload;
}

static void check_guards(const void *payload, size_t n, const char *what)
{
    const uint8_t *b = payload;
    for (size_t i = sizeof(void *); i < GUARD; i++)
        if (b[-GUARD + (ptrdiff_t)i] != CANARY)
            EB_FAIL("%s: low guard byte %zu overwritten", what, i);
    for (size_t i = 0; i < GUARD; i++)
        if (b[n + i] != CANARY)
            EB_FAIL("%s: high guard byte %zu overwritten", what, i);
}

static void release(void *payload)
{
    if (payload != NULL) {
        void *p;
        memcpy(&p, (uint8_t *)payload - GUARD, sizeof(p));
        free(p);
    }
}

static int isa_present(enum eb_cpu_isa isa)
{
    struct eb_cpu_features f;
    eb_cpu_features_detect(&f);
    return (isa == EB_CPU_ISA_AVX2 && f.avx2) || (isa == EB_CPU_ISA_AVX512 && f.avx512) ||
           (isa == EB_CPU_ISA_NEON && f.neon);
}

static int vnni_present(void)
{
    struct eb_cpu_features f;
    eb_cpu_features_detect(&f);
    return f.avx512_vnni;
}

/* The GEMM kernel a plan for `isa` must pick with `opt`. */
static const char *gemm_kernel_expected(enum eb_cpu_isa isa, const struct eb_conv2d_u8_options *opt)
{
    if (isa == EB_CPU_ISA_NEON)
        return "neon";
    if (isa != EB_CPU_ISA_AVX512)
        return "avx2";
    if (!vnni_present() || (opt != NULL && opt->no_vnni))
        return "avx512";
    return opt != NULL && opt->no_u8x4 ? "avx512vnni" : "avx512vnni_u8";
}

struct cshape {
    int64_t n, ic, ih, iw, oc, kh, kw, groups, sh, sw, pt, pl, pb, pr, dh, dw;
};

/*
 * One shape against the reference. extreme: 0 random values, 1 the extreme ones, 2 random
 * values with weight zero points 0 (symmetric int8 weights: the u8 kernels skip the column
 * sums).
 */
static void conv_case(const struct cshape *c, int w_signed, int per_channel, int extreme,
                      enum eb_cpu_isa isa, const struct eb_conv2d_u8_options *opt, int workers,
                      uint64_t seed)
{
    struct eb_conv2d_desc d = {.n = c->n,
                               .ic = c->ic,
                               .ih = c->ih,
                               .iw = c->iw,
                               .oc = c->oc,
                               .kh = c->kh,
                               .kw = c->kw,
                               .groups = c->groups,
                               .stride_h = c->sh,
                               .stride_w = c->sw,
                               .pad_t = c->pt,
                               .pad_l = c->pl,
                               .dil_h = c->dh,
                               .dil_w = c->dw};
    d.oh = (d.ih + c->pt + c->pb - (d.kh - 1) * d.dil_h - 1) / d.stride_h + 1;
    d.ow = (d.iw + c->pl + c->pr - (d.kw - 1) * d.dil_w - 1) / d.stride_w + 1;
    const struct eb_allocator sys = eb_allocator_system();
    const size_t nx = (size_t)(d.n * d.ic * d.ih * d.iw);
    const size_t nw = (size_t)(d.oc * d.ic / d.groups * d.kh * d.kw);
    const size_t ny = (size_t)(d.n * d.oc * d.oh * d.ow);
    uint8_t *x = guarded(nx), *w = guarded(nw);
    int32_t *yr = guarded(ny * 4), *yf = guarded(ny * 4);
    int32_t wzp[1024];
    uint64_t s = seed;
    const int zp0 = extreme == 2;
    extreme = extreme == 1;
    for (size_t i = 0; i < nx; i++)
        x[i] = extreme ? (uint8_t)(rnd(&s) & 1 ? 255 : 0) : (uint8_t)rnd(&s);
    for (size_t i = 0; i < nw; i++)
        w[i] = extreme ? (uint8_t)(w_signed ? (rnd(&s) & 1 ? 0x80 : 0x7f) : (rnd(&s) & 1 ? 255 : 0))
                       : (uint8_t)rnd(&s);
    const size_t n_wzp = per_channel ? (size_t)d.oc : 1;
    for (size_t i = 0; i < n_wzp; i++)
        wzp[i] = w_signed ? (int32_t)(int8_t)rnd(&s) : (int32_t)(uint8_t)rnd(&s);
    if (extreme)
        for (size_t i = 0; i < n_wzp; i++)
            wzp[i] = w_signed ? (i % 2 ? 127 : -128) : (i % 2 ? 255 : 0);
    if (zp0)
        memset(wzp, 0, n_wzp * sizeof(wzp[0]));
    const int32_t x_zp = extreme ? (int32_t)(seed % 2 ? 255 : 0) : (int32_t)(uint8_t)rnd(&s);
    memset(yf, 0x5a, ny * 4);
    eb_cpu_conv2d_u8_i32__ref(&d, x, x_zp, w, w_signed, wzp, n_wzp, yr);

    struct eb_ir_arena arena;
    eb_ir_arena_init(&arena, &sys);
    struct eb_conv2d_u8_plan *plan = NULL;
    size_t scratch_bytes = 0, packed_bytes = 0;
    ASSERT_EQ_INT(eb_cpu_conv2d_u8_prepare_opt(&d, w, w_signed, wzp, n_wzp, isa, workers, opt,
                                               &arena, &plan, &scratch_bytes, &packed_bytes),
                  EB_OK);
    if (plan == NULL && isa == EB_CPU_ISA_NEON)
        EB_FAIL("conv neon: no plan (the NEON build must have the integer kernels)");
    if (plan == NULL) {
        eb_ir_arena_fini(&arena);
        release(x), release(w), release(yr), release(yf);
        return; /* no fast kernel for this ISA: the op runs the reference */
    }
    const char *kern = eb_cpu_conv2d_u8_kernel_name(plan);
    if (eb_cpu_conv2d_u8_fuses_requant(plan) && strcmp(kern, gemm_kernel_expected(isa, opt)) != 0)
        EB_FAIL("conv %s: plan picked kernel %s, expected %s", eb_cpu_isa_name(isa), kern,
                gemm_kernel_expected(isa, opt));
    struct eb_threadpool *pool = NULL;
    ASSERT_EQ_INT(eb_threadpool_create(workers, &sys, &pool, NULL), EB_OK);
    uint8_t *scratch = scratch_bytes ? guarded(scratch_bytes) : NULL;
    struct eb_cpu_exec ex = {.isa = isa,
                             .pool = pool,
                             .n_workers = workers,
                             .scratch = scratch,
                             .scratch_bytes = scratch_bytes};
    eb_cpu_conv2d_u8_run(plan, &ex, x, x_zp, yf);
    for (size_t i = 0; i < ny; i++)
        if (yr[i] != yf[i])
            EB_FAIL("conv %s w%d pc%d ex%d workers %d: y[%zu] %d vs ref %d (ic %lld oc %lld g "
                    "%lld k %lldx%lld s %lld ih %lld iw %lld)",
                    kern, w_signed, per_channel, extreme, workers, i, yf[i], yr[i], (long long)d.ic,
                    (long long)d.oc, (long long)d.groups, (long long)d.kh, (long long)d.kw,
                    (long long)d.stride_h, (long long)d.ih, (long long)d.iw);
    if (eb_cpu_conv2d_u8_fuses_requant(plan)) {
        /* The tile-fused requantisation equals requantising the reference's int32 result. */
        float mult[1024], bias[1024];
        uint8_t lut[256 + 4] = {0}; /* gathers read 3 bytes past entry 255 */
        for (int64_t o = 0; o < d.oc; o++) {
            mult[o] = (float)(rnd(&s) % 1000 + 1) * 1e-4f;
            bias[o] = (float)((int64_t)(rnd(&s) % 2001) - 1000) * 1e-1f;
        }
        for (int i = 0; i < 256; i++)
            lut[i] = (uint8_t)rnd(&s);
        const struct eb_conv2d_u8_requant rq = {.mult = mult,
                                                .bias = bias,
                                                .y_zp = extreme ? 0.0f : 3.0f,
                                                .y_signed = (int)(seed % 2),
                                                .lut = seed % 3 == 0 ? lut : NULL};
        uint8_t *yq = guarded(ny);
        eb_cpu_conv2d_u8_run_requant(plan, &ex, x, x_zp, &rq, yq);
        const int64_t plane = d.oh * d.ow;
        const float lo = rq.y_signed ? -128.0f : 0.0f, hi = rq.y_signed ? 127.0f : 255.0f;
        for (size_t i = 0; i < ny; i++) {
            const int64_t o = (int64_t)i / plane % d.oc;
            float q = nearbyintf(fmaf((float)yr[i], mult[o], bias[o])) + rq.y_zp;
            q = q < lo ? lo : (q > hi ? hi : q);
            uint8_t b = (uint8_t)(int32_t)q;
            b = rq.lut != NULL ? rq.lut[b] : b;
            if (yq[i] != b)
                EB_FAIL("requant %s workers %d: y[%zu] %d vs %d (ic %lld oc %lld k %lldx%lld)",
                        kern, workers, i, yq[i], b, (long long)d.ic, (long long)d.oc,
                        (long long)d.kh, (long long)d.kw);
        }
        check_guards(yq, ny, "yq");
        release(yq);
    }
    check_guards(x, nx, "x");
    check_guards(w, nw, "w");
    check_guards(yf, ny * 4, "y");
    if (scratch != NULL)
        check_guards(scratch, scratch_bytes, "scratch");
    release(scratch);
    eb_threadpool_destroy(pool);
    eb_ir_arena_fini(&arena);
    release(x), release(w), release(yr), release(yf);
}

static const struct cshape SHAPES[] = {
    /* n ic ih iw oc kh kw g sh sw pt pl pb pr dh dw */
    {1, 3, 17, 23, 16, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},   /* stem: stride 2, odd sizes */
    {1, 16, 20, 20, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  /* 3x3 same */
    {1, 32, 10, 10, 64, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},  /* 1x1, N tail (100 pixels) */
    {1, 48, 16, 16, 20, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},  /* 1x1, full blocks */
    {2, 7, 9, 13, 5, 3, 3, 1, 1, 1, 0, 2, 1, 0, 1, 1},     /* batch 2, M tail, odd K, asym pads */
    {1, 8, 12, 11, 12, 3, 3, 1, 2, 2, 1, 1, 1, 1, 2, 2},   /* stride 2, dilation 2 */
    {1, 16, 9, 9, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, 1, 1},   /* depthwise */
    {1, 16, 9, 9, 32, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1},    /* groups 4 */
    {1, 12, 7, 7, 24, 5, 5, 2, 2, 1, 2, 2, 2, 2, 1, 1},    /* groups 2, 5x5, mixed strides */
    {1, 64, 6, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     /* large K, 9 outputs */
    {1, 5, 1, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},      /* single pixel */
    {1, 3, 4, 4, 4, 3, 3, 1, 1, 1, 3, 3, 3, 3, 1, 1},      /* pads larger than the kernel */
    {2, 24, 21, 19, 24, 5, 5, 24, 1, 1, 2, 1, 0, 3, 2, 1}, /* depthwise 5x5, dilation, pads */
    {1, 8, 15, 14, 8, 3, 3, 8, 2, 2, 1, 1, 1, 1, 1, 1},    /* depthwise stride 2 */
    {1, 8, 41, 67, 8, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},    /* stride 2, wide rows (vector) */
    {1, 4, 33, 80, 8, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},    /* 1x1 stride 2 */
    {1, 4, 12, 70, 4, 3, 3, 1, 2, 2, 2, 3, 0, 1, 2, 2},    /* stride 2, dilation 2, pads */
    /* AVX-512 tile edges (OC % 8, pixels % 32) and gather paths */
    {1, 20, 13, 37, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* same 3x3 (direct), OC 8 + 4 */
    {1, 9, 11, 29, 20, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},  /* 1x1 (direct), 319 pixels */
    {1, 6, 10, 21, 13, 3, 3, 1, 1, 1, 2, 2, 2, 2, 2, 2},  /* same, dilation 2, OC 13 */
    {1, 5, 9, 15, 10, 3, 3, 1, 1, 1, 0, 2, 2, 0, 1, 1},   /* same width, asymmetric pads */
    {1, 3, 5, 40, 7, 1, 3, 1, 1, 1, 0, 1, 0, 1, 1, 1},    /* 1x3 same, OC 7 */
    {1, 4, 9, 10, 8, 3, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1},    /* 3x1 same */
    {1, 5, 12, 17, 11, 3, 3, 1, 1, 1, 0, 0, 0, 0, 1, 1},  /* stride 1 valid (im2col) */
    {1, 7, 23, 31, 9, 3, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1},   /* stride 3 */
    {1, 64, 14, 18, 40, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, /* stride 2, several chunks */
    {1, 7, 19, 19, 17, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},  /* odd K, odd last chunk, OC 17 */
    {1, 16, 8, 8, 24, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1},   /* groups 2, same, 12 per group */
    {2, 12, 6, 7, 6, 1, 1, 3, 1, 1, 0, 0, 0, 0, 1, 1},    /* 1x1 groups 3, batch 2 */
    {1, 8, 3, 200, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  /* long rows, OC 33 */
};

/* Pixel-block sizes tried on AVX-512 (0 = the plan's choice); the second pass also looks the
 * requantisation's table up by gathers where the CPU has VBMI. */
static const int BLOCKS512[] = {0, 32, 96};

static void conv_all(enum eb_cpu_isa isa, const struct eb_conv2d_u8_options *base)
{
    if (!isa_present(isa))
        EB_SKIP("%s not present", eb_cpu_isa_name(isa));
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    const size_t n_blocks = isa == EB_CPU_ISA_AVX512 ? EB_ARRAY_LEN(BLOCKS512) : 1;
    for (size_t bi = 0; bi < n_blocks; bi++) {
        struct eb_conv2d_u8_options opt = *base;
        opt.block_pixels = BLOCKS512[bi];
        opt.no_vbmi = bi == 1;
        for (size_t i = 0; i < EB_ARRAY_LEN(SHAPES); i++)
            for (int ws = 0; ws < 2; ws++)
                for (int pc = 0; pc < 2; pc++)
                    for (int workers = 1; workers <= 3; workers += 2) {
                        conv_case(&SHAPES[i], ws, pc, 0, isa, &opt, workers,
                                  seed + i * 7 + (uint64_t)ws + bi);
                        conv_case(&SHAPES[i], ws, pc, 1, isa, &opt, workers, seed + i * 3 + 1 + bi);
                        conv_case(&SHAPES[i], ws, pc, 2, isa, &opt, workers, seed + i * 5 + 2 + bi);
                    }
    }
}

EB_TEST(conv_u8_avx2)
{
    const struct eb_conv2d_u8_options opt = {0};
    conv_all(EB_CPU_ISA_AVX2, &opt);
}

/* AVX-512 without VNNI (vpmaddwd + vpaddd), forced even where the CPU has VNNI. */
EB_TEST(conv_u8_avx512)
{
    const struct eb_conv2d_u8_options opt = {.no_vnni = 1};
    conv_all(EB_CPU_ISA_AVX512, &opt);
}

/* AVX512_VNNI on int16 pairs (vpdpwssd), forced. */
EB_TEST(conv_u8_avx512vnni)
{
    if (isa_present(EB_CPU_ISA_AVX512) && !vnni_present())
        EB_SKIP("avx512 without VNNI");
    const struct eb_conv2d_u8_options opt = {.no_u8x4 = 1};
    conv_all(EB_CPU_ISA_AVX512, &opt);
}

/* AVX512_VNNI on uint8 x int8 quads (vpdpbusd): what a VNNI CPU runs by default. */
EB_TEST(conv_u8_avx512vnni_u8)
{
    if (isa_present(EB_CPU_ISA_AVX512) && !vnni_present())
        EB_SKIP("avx512 without VNNI");
    const struct eb_conv2d_u8_options opt = {0};
    conv_all(EB_CPU_ISA_AVX512, &opt);
}

/* NEON (aarch64): 4x16 vmlal_laneq_s16 tiles; depthwise and tiny groups run "groupref". */
EB_TEST(conv_u8_neon)
{
    const struct eb_conv2d_u8_options opt = {0};
    conv_all(EB_CPU_ISA_NEON, &opt);
}

EB_TEST(conv_u8_random_shapes)
{
    struct eb_cpu_features f;
    eb_cpu_features_detect(&f);
    const enum eb_cpu_isa isa = eb_cpu_isa_best(&f);
    if (isa == EB_CPU_ISA_REF)
        EB_SKIP("no fast ISA");
    uint64_t s = 12345;
    for (int it = 0; it < 120; it++) {
        struct cshape c = {.n = 1 + (int64_t)(rnd(&s) % 2),
                           .kh = 1 + (int64_t)(rnd(&s) % 3),
                           .sh = 1 + (int64_t)(rnd(&s) % 2),
                           .dh = 1 + (int64_t)(rnd(&s) % 2)};
        c.kw = c.kh;
        c.sw = c.sh;
        c.dw = c.dh;
        c.groups = 1 + (int64_t)(rnd(&s) % 3);
        c.ic = c.groups * (1 + (int64_t)(rnd(&s) % 9));
        c.oc = c.groups * (1 + (int64_t)(rnd(&s) % 11));
        c.ih = 1 + (int64_t)(rnd(&s) % 19);
        c.iw = 1 + (int64_t)(rnd(&s) % 37);
        c.pt = (int64_t)(rnd(&s) % 3);
        c.pl = (int64_t)(rnd(&s) % 3);
        c.pb = (int64_t)(rnd(&s) % 3);
        c.pr = (int64_t)(rnd(&s) % 3);
        if (c.ih + c.pt + c.pb < (c.kh - 1) * c.dh + 1 ||
            c.iw + c.pl + c.pr < (c.kw - 1) * c.dw + 1)
            continue;
        const int ws = (int)(rnd(&s) % 2), pc = (int)(rnd(&s) % 2);
        const int workers = 1 + (int)(rnd(&s) % 3);
        const uint64_t seed = rnd(&s);
        /* AVX-512: every kernel flavour, a random block size and both table lookups. */
        const int blk = (int)(rnd(&s) % 4) * 32, zp0 = (int)(rnd(&s) % 2) * 2;
        const struct eb_conv2d_u8_options opt = {.block_pixels = blk, .no_vbmi = it % 2};
        conv_case(&c, ws, pc, zp0, isa, &opt, workers, seed);
        if (isa == EB_CPU_ISA_AVX512) {
            const struct eb_conv2d_u8_options madd = {.no_vnni = 1, .block_pixels = blk};
            const struct eb_conv2d_u8_options pairs = {.no_u8x4 = 1, .block_pixels = blk};
            conv_case(&c, ws, pc, zp0, isa, &madd, workers, seed);
            conv_case(&c, ws, pc, zp0, isa, &pairs, workers, seed);
        }
    }
}

static void dq_case(enum eb_cpu_isa isa, int workers, int64_t n, int kind, uint64_t seed)
{
    const struct eb_allocator sys = eb_allocator_system();
    float *x = guarded((size_t)n * 4);
    uint8_t *yr = guarded((size_t)n), *yf = guarded((size_t)n);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        const float u = (float)(rnd(&s) >> 40) / (float)(1 << 24);
        switch (kind) {
        case 0: x[i] = (u - 0.3f) * 17.0f; break;
        case 1: x[i] = 0.0f; break;
        case 2: x[i] = u * 3.0f + 0.5f; break;
        case 3: x[i] = -u * 2.0f - (i % 7 == 0 ? 0.0f : 1.0f); break;
        case 4: x[i] = i % 97 == 5 ? NAN : (u - 0.5f) * 4.0f; break;
        case 5: x[i] = (float)(int)(u * 255.0f) / 51.0f - 2.5f; break; /* ties */
        default: x[i] = i % 5 == 0 ? -0.0f : u; break;
        }
    }
    float sr = 0, sf = 0;
    uint8_t zr = 0, zf = 0;
    eb_cpu_dynamic_quantize_f32__ref(n, x, yr, &sr, &zr);
    struct eb_threadpool *pool = NULL;
    ASSERT_EQ_INT(eb_threadpool_create(workers, &sys, &pool, NULL), EB_OK);
    struct eb_cpu_exec ex = {.isa = isa, .pool = pool, .n_workers = workers};
    eb_cpu_dynamic_quantize_f32(&ex, n, x, yf, &sf, &zf);
    ASSERT_TRUE(memcmp(&sr, &sf, sizeof(float)) == 0);
    ASSERT_EQ_INT(zr, zf);
    for (int64_t i = 0; i < n; i++)
        if (yr[i] != yf[i])
            EB_FAIL("dq %s kind %d n %lld: y[%lld] %d vs ref %d (x %.9g)", eb_cpu_isa_name(isa),
                    kind, (long long)n, (long long)i, yf[i], yr[i], (double)x[i]);
    check_guards(x, (size_t)n * 4, "x");
    check_guards(yf, (size_t)n, "y");
    eb_threadpool_destroy(pool);
    release(x), release(yr), release(yf);
}

static void dq_all(enum eb_cpu_isa isa)
{
    if (!isa_present(isa))
        EB_SKIP("%s not present", eb_cpu_isa_name(isa));
    static const int64_t sizes[] = {1, 7, 31, 32, 33, 100, 1000, 65537, 300001};
    for (size_t i = 0; i < EB_ARRAY_LEN(sizes); i++)
        for (int kind = 0; kind < 7; kind++)
            for (int workers = 1; workers <= 3; workers += 2)
                dq_case(isa, workers, sizes[i], kind, 77 + i * 13 + (uint64_t)kind);
}

EB_TEST(dynamic_quantize_avx2)
{
    dq_all(EB_CPU_ISA_AVX2);
}

EB_TEST(dynamic_quantize_avx512)
{
    dq_all(EB_CPU_ISA_AVX512);
}

EB_TEST(dynamic_quantize_neon)
{
    dq_all(EB_CPU_ISA_NEON);
}
