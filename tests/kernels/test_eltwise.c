/*
 * cpu/eltwise.h kernels against the scalar references of cpu/ref, for every ISA this CPU has
 * (absent ones are skipped) and with 1 and 3 workers. Outputs sit between guard bytes that are
 * checked after every call. Arithmetic, MaxPool, Resize, Quantize/Dequantize and the copies must
 * be bit-exact; Sigmoid and Softmax within 1e-6 relative + 1e-30 absolute (polynomial exp; see
 * eltwise.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb_test.h"
#include "engine/cpu/cpu.h"
#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"

#define GUARD 64

struct rng {
    uint64_t s;
};

static uint32_t rnd_u32(struct rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (uint32_t)(r->s >> 11);
}

static float rnd_f(struct rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)(rnd_u32(r) & 0xffffff) / 16777216.0f;
}

/* A buffer of `bytes` with GUARD bytes of 0xA5 on each side; the payload is filled with 0x5A. */
static void *gbuf(size_t bytes)
{
    unsigned char *p = malloc(bytes + 2 * GUARD);
    ASSERT_TRUE(p != NULL);
    memset(p, 0xA5, GUARD);
    memset(p + GUARD, 0x5A, bytes);
    memset(p + GUARD + bytes, 0xA5, GUARD);
    return p + GUARD;
}

static void gcheck(const void *buf, size_t bytes, const char *what)
{
    const unsigned char *p = (const unsigned char *)buf - GUARD;
    for (size_t i = 0; i < GUARD; i++)
        if (p[i] != 0xA5 || p[GUARD + bytes + i] != 0xA5)
            EB_FAIL("%s: guard byte %zu overwritten", what, i);
}

static void gfree(void *buf)
{
    if (buf != NULL)
        free((unsigned char *)buf - GUARD);
}

static void fill_f(struct rng *r, float *x, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = rnd_f(r, lo, hi);
}

/* Bit-exact comparison (NaNs must match bit for bit too). */
static void same_bytes(const void *got, const void *want, size_t bytes, const char *what)
{
    if (memcmp(got, want, bytes) != 0) {
        const unsigned char *g = got, *w = want;
        size_t i = 0;
        while (g[i] == w[i])
            i++;
        EB_FAIL("%s: differs from the reference at byte %zu (%02x vs %02x)", what, i, g[i], w[i]);
    }
}

static void near_f(const float *got, const float *want, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        const float g = got[i], w = want[i];
        if (isnan(w) && isnan(g))
            continue;
        if (!(fabsf(g - w) <= 1e-6f * fabsf(w) + 1e-30f) && g != w)
            EB_FAIL("%s: element %lld: %.9g vs reference %.9g", what, (long long)i, (double)g,
                    (double)w);
    }
}

/* ---- configurations: every ISA this CPU has × {1, 3} workers ------------------------------ */

struct cfg {
    struct eb_cpu_exec ex[8];
    struct eb_threadpool *pools[8];
    char names[8][32];
    int n;
};

static void cfg_init(struct cfg *c)
{
    struct eb_cpu_features f;
    const struct eb_allocator al = eb_allocator_system();
    eb_cpu_features_detect(&f);
    memset(c, 0, sizeof(*c));
    const enum eb_cpu_isa isas[] = {EB_CPU_ISA_NEON, EB_CPU_ISA_AVX2, EB_CPU_ISA_AVX512};
    const int have[] = {f.neon, f.avx2, f.avx512};
    for (int i = 0; i < 3; i++) {
        if (!have[i]) {
            printf("ISA %s absent: skipped\n", eb_cpu_isa_name(isas[i]));
            continue;
        }
        for (int w = 1; w <= 3; w += 2) {
            struct eb_threadpool *pool = NULL;
            if (w > 1)
                ASSERT_TRUE(eb_threadpool_create(w, &al, &pool, NULL) == EB_OK);
            c->pools[c->n] = pool;
            c->ex[c->n] = (struct eb_cpu_exec){
                .isa = isas[i], .pool = pool, .n_workers = eb_threadpool_size(pool)};
            snprintf(c->names[c->n], sizeof(c->names[0]), "%s/%d", eb_cpu_isa_name(isas[i]), w);
            c->n++;
        }
    }
    if (c->n == 0)
        EB_SKIP("no SIMD ISA on this CPU");
}

static void cfg_fini(struct cfg *c)
{
    for (int i = 0; i < c->n; i++)
        eb_threadpool_destroy(c->pools[i]);
}

/* ---- binary ------------------------------------------------------------------------------- */

static void check_binary(struct cfg *c, struct rng *r, int rank, const int64_t *as,
                         const int64_t *bs)
{
    int64_t ys[EB_MAX_RANK], na = 1, nb = 1, ny = 1;
    for (int d = 0; d < rank; d++) {
        ys[d] = as[d] > bs[d] ? as[d] : bs[d];
        na *= as[d];
        nb *= bs[d];
        ny *= ys[d];
    }
    float *a = gbuf((size_t)na * 4), *b = gbuf((size_t)nb * 4);
    float *want = gbuf((size_t)ny * 4), *got = gbuf((size_t)ny * 4);
    fill_f(r, a, na, -3.0f, 3.0f);
    fill_f(r, b, nb, -3.0f, 3.0f);
    if (nb > 2) {
        b[0] = 0.0f; /* division by zero, inf, NaN */
        b[1] = NAN;
        a[0] = INFINITY;
    }
    const enum eb_binop ops[] = {EB_BINOP_ADD, EB_BINOP_SUB, EB_BINOP_MUL, EB_BINOP_DIV};
    for (int o = 0; o < 4; o++) {
        eb_cpu_binary__ref(ops[o], EB_DTYPE_F32, rank, as, a, bs, b, ys, want);
        for (int i = 0; i < c->n; i++) {
            memset(got, 0x5A, (size_t)ny * 4);
            eb_cpu_binary(&c->ex[i], ops[o], EB_DTYPE_F32, rank, as, a, bs, b, ys, got);
            gcheck(got, (size_t)ny * 4, c->names[i]);
            same_bytes(got, want, (size_t)ny * 4, c->names[i]);
        }
    }
    gfree(a);
    gfree(b);
    gfree(want);
    gfree(got);
}

EB_TEST(eltwise_binary_same_shape)
{
    struct cfg c;
    struct rng r = {0x1234567};
    cfg_init(&c);
    const int64_t sizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 33, 1000, 65536 * 3 + 5};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        check_binary(&c, &r, 1, &sizes[i], &sizes[i]);
    const int64_t s4[] = {1, 3, 17, 19};
    check_binary(&c, &r, 4, s4, s4);
    cfg_fini(&c);
}

EB_TEST(eltwise_binary_broadcast)
{
    struct cfg c;
    struct rng r = {0x89abcdef};
    cfg_init(&c);
    const int64_t one[] = {1}, n13[] = {13};
    check_binary(&c, &r, 1, n13, one); /* scalar on either side */
    check_binary(&c, &r, 1, one, n13);
    const int64_t x[] = {1, 16, 20, 20}, ch[] = {1, 16, 1, 1}, sc[] = {1, 1, 1, 1};
    check_binary(&c, &r, 4, x, ch); /* per channel */
    check_binary(&c, &r, 4, ch, x);
    check_binary(&c, &r, 4, x, sc);
    const int64_t big[] = {1, 64, 80, 80}, bch[] = {1, 64, 1, 1};
    check_binary(&c, &r, 4, big, bch);
    check_binary(&c, &r, 4, big, sc);
    const int64_t l3[] = {2, 3, 5}, last[] = {1, 1, 5}, mid[] = {1, 3, 1};
    check_binary(&c, &r, 3, l3, last);
    check_binary(&c, &r, 3, last, mid); /* both broadcast: [1,3,5] */
    const int64_t m1[] = {4, 1, 6}, m2[] = {1, 5, 1};
    check_binary(&c, &r, 3, m1, m2);
    const int64_t anch[] = {1, 2, 8400}, grid[] = {1, 1, 8400};
    check_binary(&c, &r, 3, anch, grid);
    cfg_fini(&c);
}

/* ---- Sigmoid, Softmax --------------------------------------------------------------------- */

EB_TEST(eltwise_sigmoid)
{
    struct cfg c;
    struct rng r = {42};
    cfg_init(&c);
    const int64_t sizes[] = {1, 3, 8, 15, 16, 17, 31, 100, 65536 * 4 + 9};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        const int64_t n = sizes[s];
        float *x = gbuf((size_t)n * 4), *want = gbuf((size_t)n * 4), *got = gbuf((size_t)n * 4);
        fill_f(&r, x, n, -12.0f, 12.0f);
        const float edge[] = {0.0f,  -0.0f,  INFINITY, -INFINITY, NAN,   100.0f, -100.0f,
                              88.5f, -87.5f, 1e-8f,    -1e-8f,    20.0f, -20.0f};
        for (size_t e = 0; e < sizeof(edge) / sizeof(edge[0]) && (int64_t)e < n; e++)
            x[n - 1 - (int64_t)e] = edge[e];
        eb_cpu_sigmoid_f32__ref(n, x, want);
        for (int i = 0; i < c.n; i++) {
            memset(got, 0x5A, (size_t)n * 4);
            eb_cpu_sigmoid_f32(&c.ex[i], n, x, got);
            gcheck(got, (size_t)n * 4, c.names[i]);
            near_f(got, want, n, c.names[i]);
        }
        gfree(x);
        gfree(want);
        gfree(got);
    }
    cfg_fini(&c);
}

EB_TEST(eltwise_softmax)
{
    struct cfg c;
    struct rng r = {7};
    cfg_init(&c);
    const int64_t shapes[][3] = {{1, 1, 1},         {3, 5, 1},  {2, 16, 1},
                                 {4, 37, 1},        {1, 16, 4}, {2, 16, 13},
                                 {1, 16, 4 * 8400}, {3, 7, 9},  {1, 80, 8400}};
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        const int64_t o = shapes[s][0], a = shapes[s][1], in = shapes[s][2], n = o * a * in;
        float *x = gbuf((size_t)n * 4), *want = gbuf((size_t)n * 4), *got = gbuf((size_t)n * 4);
        fill_f(&r, x, n, -20.0f, 20.0f);
        if (n > 4) {
            x[1] = -INFINITY;
            x[2] = 60.0f;
        }
        eb_cpu_softmax_f32__ref(o, a, in, x, want);
        for (int i = 0; i < c.n; i++) {
            memset(got, 0x5A, (size_t)n * 4);
            eb_cpu_softmax_f32(&c.ex[i], o, a, in, x, got);
            gcheck(got, (size_t)n * 4, c.names[i]);
            near_f(got, want, n, c.names[i]);
        }
        gfree(x);
        gfree(want);
        gfree(got);
    }
    cfg_fini(&c);
}

/* ---- MaxPool ------------------------------------------------------------------------------ */

static void check_maxpool(struct cfg *c, struct rng *r, int64_t nc, int64_t ih, int64_t iw,
                          int64_t k, int64_t s, int64_t pad, int64_t dil)
{
    struct eb_pool2d_desc d = {.n = 1, .c = nc, .ih = ih, .iw = iw, .kh = k, .kw = k};
    d.stride_h = d.stride_w = s;
    d.pad_t = d.pad_l = d.pad_b = d.pad_r = pad;
    d.dil_h = d.dil_w = dil;
    d.oh = (ih + 2 * pad - dil * (k - 1) - 1) / s + 1;
    d.ow = (iw + 2 * pad - dil * (k - 1) - 1) / s + 1;
    const int64_t nx = nc * ih * iw, ny = nc * d.oh * d.ow;
    float *x = gbuf((size_t)nx * 4), *want = gbuf((size_t)ny * 4), *got = gbuf((size_t)ny * 4);
    fill_f(r, x, nx, -5.0f, 5.0f);
    for (int64_t i = 0; i < nx; i += 7) /* ties between +0 and -0, NaN, infinities */
        x[i] = (i / 7) % 4 == 0 ? 0.0f : (i / 7) % 4 == 1 ? -0.0f : x[i];
    if (nx > 40) {
        x[11] = NAN;
        x[23] = -INFINITY;
        x[37] = INFINITY;
    }
    eb_cpu_maxpool2d_f32__ref(&d, x, want);
    for (int i = 0; i < c->n; i++) {
        memset(got, 0x5A, (size_t)ny * 4);
        eb_cpu_maxpool2d_f32(&c->ex[i], &d, x, got);
        gcheck(got, (size_t)ny * 4, c->names[i]);
        same_bytes(got, want, (size_t)ny * 4, c->names[i]);
    }
    gfree(x);
    gfree(want);
    gfree(got);
}

EB_TEST(eltwise_maxpool)
{
    struct cfg c;
    struct rng r = {99};
    cfg_init(&c);
    check_maxpool(&c, &r, 3, 1, 1, 5, 1, 2, 1); /* SPPF on a 1x1 map */
    check_maxpool(&c, &r, 2, 3, 7, 5, 1, 2, 1);
    check_maxpool(&c, &r, 4, 20, 20, 5, 1, 2, 1);
    check_maxpool(&c, &r, 3, 13, 29, 5, 1, 2, 1);
    check_maxpool(&c, &r, 256, 20, 20, 5, 1, 2, 1); /* threaded */
    check_maxpool(&c, &r, 3, 17, 33, 3, 1, 1, 1);
    check_maxpool(&c, &r, 3, 17, 33, 3, 2, 1, 1);
    check_maxpool(&c, &r, 2, 16, 16, 2, 2, 0, 1);
    check_maxpool(&c, &r, 2, 19, 40, 3, 1, 2, 2); /* dilation */
    check_maxpool(&c, &r, 1, 9, 11, 5, 1, 0, 1);  /* no padding */
    cfg_fini(&c);
}

/* ---- Resize ------------------------------------------------------------------------------- */

static void check_resize(struct cfg *c, struct rng *r, const int64_t *xs, const float *scales,
                         enum eb_resize_coord coord, enum eb_resize_round rnd)
{
    int64_t ys[4], nx = 1, ny = 1;
    for (int d = 0; d < 4; d++) {
        ys[d] = (int64_t)((double)xs[d] * (double)scales[d]);
        nx *= xs[d];
        ny *= ys[d];
    }
    float *x = gbuf((size_t)nx * 4), *want = gbuf((size_t)ny * 4), *got = gbuf((size_t)ny * 4);
    fill_f(r, x, nx, -1.0f, 1.0f);
    eb_cpu_resize_nearest_f32__ref(4, xs, x, ys, scales, coord, rnd, want);
    for (int i = 0; i < c->n; i++) {
        memset(got, 0x5A, (size_t)ny * 4);
        eb_cpu_resize_nearest_f32(&c->ex[i], 4, xs, x, ys, scales, coord, rnd, got);
        gcheck(got, (size_t)ny * 4, c->names[i]);
        same_bytes(got, want, (size_t)ny * 4, c->names[i]);
    }
    gfree(x);
    gfree(want);
    gfree(got);
}

EB_TEST(eltwise_resize)
{
    struct cfg c;
    struct rng r = {5};
    cfg_init(&c);
    const float x2[] = {1, 1, 2, 2}, x3[] = {1, 1, 3, 3}, x15[] = {1, 1, 1.5f, 1.5f};
    const float half[] = {1, 1, 0.5f, 0.5f}, x2w[] = {1, 1, 1, 2};
    const int64_t s20[] = {1, 128, 20, 20}, s40[] = {1, 64, 40, 40}, odd[] = {1, 3, 7, 13};
    const int64_t one[] = {1, 2, 1, 1}, s9[] = {2, 3, 9, 5};
    check_resize(&c, &r, s20, x2, EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR);
    check_resize(&c, &r, s40, x2, EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR);
    check_resize(&c, &r, odd, x2, EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR);
    check_resize(&c, &r, odd, x2, EB_RESIZE_HALF_PIXEL, EB_RESIZE_ROUND_PREFER_FLOOR);
    check_resize(&c, &r, odd, x2, EB_RESIZE_ALIGN_CORNERS, EB_RESIZE_ROUND_PREFER_CEIL);
    check_resize(&c, &r, one, x2, EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR);
    check_resize(&c, &r, odd, x3, EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR);
    check_resize(&c, &r, s9, x15, EB_RESIZE_HALF_PIXEL, EB_RESIZE_ROUND_PREFER_FLOOR);
    check_resize(&c, &r, s9, half, EB_RESIZE_ASYMMETRIC, EB_RESIZE_CEIL);
    check_resize(&c, &r, odd, x2w, EB_RESIZE_PYTORCH_HALF_PIXEL, EB_RESIZE_FLOOR);
    cfg_fini(&c);
}

/* ---- Quantize / Dequantize ---------------------------------------------------------------- */

EB_TEST(eltwise_quantize)
{
    struct cfg c;
    struct rng r = {11};
    cfg_init(&c);
    const int64_t shapes[][3] = {{1, 1, 1}, {1, 1, 17}, {1, 1, 300007}, {4, 3, 33}, {2, 16, 400}};
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        const int64_t ch = shapes[s][1], inner = shapes[s][2], n = shapes[s][0] * ch * inner;
        float *x = gbuf((size_t)n * 4), scale[16];
        uint8_t zu[16], *want = gbuf((size_t)n), *got = gbuf((size_t)n);
        int8_t zs[16];
        fill_f(&r, x, n, -40.0f, 40.0f);
        for (int64_t i = 0; i < ch; i++) {
            scale[i] = rnd_f(&r, 0.05f, 0.3f);
            zu[i] = (uint8_t)(rnd_u32(&r) & 255);
            zs[i] = (int8_t)(rnd_u32(&r) & 255);
        }
        const float edge[] = {NAN, INFINITY, -INFINITY, 0.5f, 1.5f, -2.5f, 1e30f, -0.0f};
        for (size_t e = 0; e < 8 && (int64_t)e < n; e++)
            x[n - 1 - (int64_t)e] = edge[e] * (e >= 3 && e <= 5 ? scale[ch - 1] : 1.0f);
        for (int sgn = 0; sgn < 2; sgn++) {
            for (int with_zp = 0; with_zp < 2; with_zp++) {
                const void *zp = !with_zp ? NULL : sgn ? (const void *)zs : (const void *)zu;
                eb_cpu_quantize_f32__ref(n, ch, inner, x, scale, zp, sgn, want);
                for (int i = 0; i < c.n; i++) {
                    memset(got, 0x5A, (size_t)n);
                    eb_cpu_quantize_f32(&c.ex[i], n, ch, inner, x, scale, zp, sgn, got);
                    gcheck(got, (size_t)n, c.names[i]);
                    same_bytes(got, want, (size_t)n, c.names[i]);
                }
            }
        }
        /* Dequantize the quantized bytes back (uint8 and int8 views). */
        float *fw = gbuf((size_t)n * 4), *fg = gbuf((size_t)n * 4);
        for (int sgn = 0; sgn < 2; sgn++) {
            for (int with_zp = 0; with_zp < 2; with_zp++) {
                const void *zp = !with_zp ? NULL : sgn ? (const void *)zs : (const void *)zu;
                const enum eb_dtype dt = sgn ? EB_DTYPE_I8 : EB_DTYPE_U8;
                eb_cpu_dequantize_f32__ref(n, ch, inner, dt, want, scale, zp, fw);
                for (int i = 0; i < c.n; i++) {
                    memset(fg, 0x5A, (size_t)n * 4);
                    eb_cpu_dequantize_f32(&c.ex[i], n, ch, inner, dt, want, scale, zp, fg);
                    gcheck(fg, (size_t)n * 4, c.names[i]);
                    same_bytes(fg, fw, (size_t)n * 4, c.names[i]);
                }
            }
        }
        gfree(fw);
        gfree(fg);
        gfree(x);
        gfree(want);
        gfree(got);
    }
    cfg_fini(&c);
}

/* ---- copies: Concat/Split rows, Slice, Transpose ------------------------------------------ */

EB_TEST(eltwise_copy_rows)
{
    struct cfg c;
    cfg_init(&c);
    const int64_t rows[] = {1, 3, 64, 2};
    const size_t bytes[] = {1, 13, 1600, 3 * 1024 * 1024 + 7};
    for (int t = 0; t < 4; t++) {
        const size_t xst = bytes[t] + 5, yst = bytes[t] * 2 + 3;
        const size_t nx = (size_t)rows[t] * xst, ny = (size_t)rows[t] * yst;
        unsigned char *x = gbuf(nx), *want = gbuf(ny), *got = gbuf(ny);
        for (size_t i = 0; i < nx; i++)
            x[i] = (unsigned char)(i * 31 + 7);
        for (int64_t rr = 0; rr < rows[t]; rr++)
            memcpy(want + (size_t)rr * yst, x + (size_t)rr * xst, bytes[t]);
        for (int i = 0; i < c.n; i++) {
            memset(got, 0x5A, ny);
            eb_cpu_copy_rows(&c.ex[i], rows[t], bytes[t], x, xst, got, yst);
            gcheck(got, ny, c.names[i]);
            same_bytes(got, want, ny, c.names[i]);
        }
        gfree(x);
        gfree(want);
        gfree(got);
    }
    cfg_fini(&c);
}

static void check_slice(struct cfg *c, size_t es, int rank, const int64_t *xs, const int64_t *start,
                        const int64_t *step, const int64_t *ys)
{
    int64_t nx = 1, ny = 1;
    for (int d = 0; d < rank; d++) {
        nx *= xs[d];
        ny *= ys[d];
    }
    unsigned char *x = gbuf((size_t)nx * es), *want = gbuf((size_t)ny * es);
    unsigned char *got = gbuf((size_t)ny * es);
    for (int64_t i = 0; i < nx * (int64_t)es; i++)
        x[i] = (unsigned char)(i * 13 + 1);
    eb_cpu_slice__ref(es, rank, xs, x, start, step, ys, want);
    for (int i = 0; i < c->n; i++) {
        memset(got, 0x5A, (size_t)ny * es);
        eb_cpu_slice(&c->ex[i], es, rank, xs, x, start, step, ys, got);
        gcheck(got, (size_t)ny * es, c->names[i]);
        same_bytes(got, want, (size_t)ny * es, c->names[i]);
    }
    gfree(x);
    gfree(want);
    gfree(got);
}

EB_TEST(eltwise_slice)
{
    struct cfg c;
    cfg_init(&c);
    /* YOLO's dist2bbox slices: [1,4,8400] → [1,2,8400] at 0 and 2. */
    const int64_t x1[] = {1, 4, 8400}, s1[] = {0, 2, 0}, st1[] = {1, 1, 1}, y1[] = {1, 2, 8400};
    check_slice(&c, 4, 3, x1, s1, st1, y1);
    const int64_t x2[] = {2, 5, 7}, s2[] = {1, 1, 2}, st2[] = {1, 2, 1}, y2[] = {1, 2, 4};
    check_slice(&c, 4, 3, x2, s2, st2, y2);
    const int64_t s3[] = {0, 4, 6}, st3[] = {1, -1, -2}, y3[] = {2, 5, 4}; /* negative steps */
    check_slice(&c, 4, 3, x2, s3, st3, y3);
    const int64_t x4[] = {1, 3, 64, 64}, s4[] = {0, 0, 0, 1}, st4[] = {1, 1, 2, 2};
    const int64_t y4[] = {1, 3, 32, 32}; /* Focus-style stride 2 */
    check_slice(&c, 4, 4, x4, s4, st4, y4);
    check_slice(&c, 8, 4, x4, s4, st4, y4);
    check_slice(&c, 1, 3, x2, s2, st2, y2);
    const int64_t x5[] = {9}, s5[] = {3}, st5[] = {1}, y5[] = {1};
    check_slice(&c, 4, 1, x5, s5, st5, y5);
    cfg_fini(&c);
}

static void check_transpose(struct cfg *c, size_t es, int rank, const int64_t *xs,
                            const int64_t *perm)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= xs[d];
    unsigned char *x = gbuf((size_t)n * es), *want = gbuf((size_t)n * es);
    unsigned char *got = gbuf((size_t)n * es);
    for (int64_t i = 0; i < n * (int64_t)es; i++)
        x[i] = (unsigned char)(i * 7 + 3);
    eb_cpu_transpose__ref(es, rank, xs, perm, x, want);
    for (int i = 0; i < c->n; i++) {
        memset(got, 0x5A, (size_t)n * es);
        eb_cpu_transpose(&c->ex[i], es, rank, xs, perm, x, got);
        gcheck(got, (size_t)n * es, c->names[i]);
        same_bytes(got, want, (size_t)n * es, c->names[i]);
    }
    gfree(x);
    gfree(want);
    gfree(got);
}

EB_TEST(eltwise_transpose)
{
    struct cfg c;
    cfg_init(&c);
    const int64_t dfl[] = {1, 4, 16, 8400}, p0213[] = {0, 2, 1, 3};
    check_transpose(&c, 4, 4, dfl, p0213);
    const int64_t x3[] = {1, 84, 8400}, p021[] = {0, 2, 1};
    check_transpose(&c, 4, 3, x3, p021);
    const int64_t odd[] = {3, 1, 5, 7}, p3102[] = {3, 1, 0, 2}, p0123[] = {0, 1, 2, 3};
    check_transpose(&c, 4, 4, odd, p3102);
    check_transpose(&c, 1, 4, odd, p3102);
    check_transpose(&c, 8, 4, odd, p3102);
    check_transpose(&c, 2, 4, odd, p0123);
    const int64_t two[] = {13, 17}, p10[] = {1, 0}, one[] = {1}, p0[] = {0};
    check_transpose(&c, 4, 2, two, p10);
    check_transpose(&c, 4, 1, one, p0);
    cfg_fini(&c);
}
