/*
 * cpu/eltwise.h kernels against the scalar references of cpu/ref, for every ISA this CPU has
 * (absent ones are skipped) and with 1 and 3 workers. Outputs sit between guard bytes that are
 * checked after every call (MaxPool's between guarded.h canaries, with inputs allocated to the
 * exact size so that ASan sees any read past them). Arithmetic, MaxPool, Resize,
 * Quantize/Dequantize and the copies must be bit-exact; Sigmoid and Softmax within 1e-6
 * relative + 1e-30 absolute (polynomial exp; see eltwise.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb_test.h"
#include "engine/cpu/cpu.h"
#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"
#include "guarded.h"

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
    const int64_t shapes[][3] = {{1, 1, 1},     {3, 5, 1},         {2, 16, 1},    {4, 37, 1},
                                 {2, 8, 1},     {1, 9, 1},         {1, 1000, 1},  {1, 16, 4},
                                 {2, 16, 13},   {1, 16, 4 * 8400}, {1, 16, 8401}, {3, 7, 9},
                                 {1, 80, 8400}, {2, 3, 7},         {1, 16, 2100}};
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

/*
 * Softmax over axes longer than the 16384 elements of one column block (issue 19: the block
 * width rounded to 0 columns and the split divided by it, SIGFPE), with 1, 2 and 3 columns:
 * against a softmax computed in double, so the check does not lean on the float reference.
 */
EB_TEST(eltwise_softmax_long_axis)
{
    struct cfg c;
    struct rng r = {19};
    cfg_init(&c);
    const int64_t axes[] = {16383, 16384, 16385, 24576, 40001};
    for (size_t ai = 0; ai < sizeof(axes) / sizeof(axes[0]); ai++) {
        for (int64_t in = 1; in <= 3; in++) {
            const int64_t o = ai % 2 == 0 ? 1 : 2, a = axes[ai], n = o * a * in;
            float *x = gbuf((size_t)n * 4), *got = gbuf((size_t)n * 4);
            double *want = malloc((size_t)n * sizeof(double));
            ASSERT_TRUE(want != NULL);
            fill_f(&r, x, n, -8.0f, 8.0f);
            for (int64_t k = 0; k < o * in; k++) {
                const int64_t base = k / in * a * in + k % in;
                double m = -INFINITY, sum = 0.0;
                for (int64_t j = 0; j < a; j++)
                    m = fmax(m, (double)x[base + j * in]);
                for (int64_t j = 0; j < a; j++)
                    sum += exp((double)x[base + j * in] - m);
                for (int64_t j = 0; j < a; j++)
                    want[base + j * in] = exp((double)x[base + j * in] - m) / sum;
            }
            for (int i = 0; i < c.n; i++) {
                memset(got, 0x5A, (size_t)n * 4);
                eb_cpu_softmax_f32(&c.ex[i], o, a, in, x, got);
                gcheck(got, (size_t)n * 4, c.names[i]);
                double total = 0.0;
                for (int64_t e = 0; e < n; e++) {
                    total += got[e];
                    if (!(fabs(got[e] - want[e]) <= 1e-4 * want[e] + 1e-12))
                        EB_FAIL("%s: [%lld, %lld, %lld] element %lld: %.9g vs %.9g", c.names[i],
                                (long long)o, (long long)a, (long long)in, (long long)e,
                                (double)got[e], want[e]);
                }
                if (fabs(total - (double)(o * in)) > 1e-3 * (double)(o * in))
                    EB_FAIL("%s: [%lld, %lld, %lld]: the rows sum to %g, not %lld", c.names[i],
                            (long long)o, (long long)a, (long long)in, total, (long long)(o * in));
            }
            gfree(x);
            gfree(got);
            free(want);
        }
    }
    cfg_fini(&c);
}

/* ---- MaxPool ------------------------------------------------------------------------------ */

/* One MaxPool geometry: kernel, stride and dilation (h, w), pads (top, left, bottom, right). */
struct pool_case {
    int64_t nc, ih, iw, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    int ceil;
};

/* Output size along one dim as eb_op__pool_geometry computes it; 0 when the window does not fit. */
static int64_t pool_out(int64_t in, int64_t p0, int64_t p1, int64_t k, int64_t s, int64_t dil,
                        int ceil)
{
    const int64_t e = in + p0 + p1 - (k - 1) * dil - 1;
    if (e < 0)
        return 0;
    int64_t out = (ceil ? (e + s - 1) / s : e / s) + 1;
    if (ceil && (out - 1) * s >= in + p0)
        out--;
    return out;
}

static float f_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}

enum pool_fill {
    POOL_FILL_PLAIN, /* random, a quarter of it +0 or -0 (ties) */
    POOL_FILL_NAN,   /* also 17% NaNs of distinct bits (both signs, quiet or signalling), 3% inf */
    POOL_FILL_NINF,  /* -inf, 3% -0 */
};

static void pool_fill(struct rng *r, float *x, int64_t n, enum pool_fill mode)
{
    for (int64_t i = 0; i < n; i++) {
        const uint32_t u = rnd_u32(r) % 100;
        if (mode == POOL_FILL_NINF)
            x[i] = u < 3 ? -0.0f : -INFINITY;
        else if (u < 12)
            x[i] = 0.0f;
        else if (u < 25)
            x[i] = -0.0f;
        else if (mode == POOL_FILL_NAN && u < 40) /* the payload tells which NaN won */
            x[i] = f_bits((u & 1 ? 0xffc00000u : 0x7fc00000u) | (uint32_t)(i & 0x3fffff));
        else if (mode == POOL_FILL_NAN && u < 42)
            x[i] = f_bits(0x7f800000u | (uint32_t)(i & 0x3fffff) | 1u); /* signalling */
        else if (mode == POOL_FILL_NAN && u < 45)
            x[i] = u & 1 ? INFINITY : -INFINITY;
        else
            x[i] = rnd_f(r, -5.0f, 5.0f);
    }
}

/*
 * Every configuration against the reference, bit for bit. The input has no guard (ASan sees
 * any read past it); the output sits between guarded.h's canaries.
 */
static void check_pool(struct cfg *c, struct rng *r, const struct pool_case *pc,
                       enum pool_fill mode)
{
    struct eb_pool2d_desc d = {.n = 1, .c = pc->nc, .ih = pc->ih, .iw = pc->iw};
    d.kh = pc->kh, d.kw = pc->kw, d.stride_h = pc->sh, d.stride_w = pc->sw;
    d.dil_h = pc->dh, d.dil_w = pc->dw;
    d.pad_t = pc->pt, d.pad_l = pc->pl, d.pad_b = pc->pb, d.pad_r = pc->pr;
    d.oh = pool_out(pc->ih, pc->pt, pc->pb, pc->kh, pc->sh, pc->dh, pc->ceil);
    d.ow = pool_out(pc->iw, pc->pl, pc->pr, pc->kw, pc->sw, pc->dw, pc->ceil);
    if (d.oh <= 0 || d.ow <= 0)
        return;
    const int64_t nx = pc->nc * pc->ih * pc->iw, ny = pc->nc * d.oh * d.ow;
    float *x = malloc((size_t)nx * sizeof(float));
    float *want = guarded((size_t)ny), *got = guarded((size_t)ny);
    ASSERT_TRUE(x != NULL);
    pool_fill(r, x, nx, mode);
    eb_cpu_maxpool2d_f32__ref(&d, x, want);
    for (int i = 0; i < c->n; i++) {
        char what[160];
        snprintf(what, sizeof(what),
                 "%s maxpool %lldx%lldx%lld k%lldx%lld s%lldx%lld d%lldx%lld p%lld,%lld,%lld,%lld "
                 "ceil %d fill %d",
                 c->names[i], (long long)pc->nc, (long long)pc->ih, (long long)pc->iw,
                 (long long)pc->kh, (long long)pc->kw, (long long)pc->sh, (long long)pc->sw,
                 (long long)pc->dh, (long long)pc->dw, (long long)pc->pt, (long long)pc->pl,
                 (long long)pc->pb, (long long)pc->pr, pc->ceil, (int)mode);
        memset(got, 0x5A, (size_t)ny * sizeof(float));
        eb_cpu_maxpool2d_f32(&c->ex[i], &d, x, got);
        check_guards(got, (size_t)ny, what);
        same_bytes(got, want, (size_t)ny * sizeof(float), what);
    }
    free(x);
    release(want);
    release(got);
}

/* A square window with equal pads on every side (the common ONNX export). */
static void check_maxpool(struct cfg *c, struct rng *r, int64_t nc, int64_t ih, int64_t iw,
                          int64_t k, int64_t s, int64_t pad, int64_t dil)
{
    const struct pool_case pc = {nc, ih, iw, k, k, s, s, dil, dil, pad, pad, pad, pad, 0};
    check_pool(c, r, &pc, POOL_FILL_PLAIN);
    check_pool(c, r, &pc, POOL_FILL_NAN);
}

EB_TEST(eltwise_maxpool)
{
    struct cfg c;
    struct rng r = {99};
    cfg_init(&c);
    check_maxpool(&c, &r, 3, 1, 1, 5, 1, 2, 1); /* SPPF on a 1x1 map */
    check_maxpool(&c, &r, 2, 3, 7, 5, 1, 2, 1);
    check_maxpool(&c, &r, 128, 10, 10, 5, 1, 2, 1); /* SPPF of a 320 model */
    check_maxpool(&c, &r, 4, 20, 20, 5, 1, 2, 1);
    check_maxpool(&c, &r, 3, 13, 29, 5, 1, 2, 1);
    check_maxpool(&c, &r, 256, 20, 20, 5, 1, 2, 1); /* threaded */
    check_maxpool(&c, &r, 2, 40, 40, 9, 1, 4, 1);   /* SPP 9 and 13 */
    check_maxpool(&c, &r, 2, 13, 13, 13, 1, 6, 1);
    check_maxpool(&c, &r, 3, 17, 33, 3, 1, 1, 1);
    check_maxpool(&c, &r, 3, 17, 33, 3, 2, 1, 1);
    check_maxpool(&c, &r, 2, 16, 16, 2, 2, 0, 1);
    check_maxpool(&c, &r, 2, 19, 40, 3, 1, 2, 2); /* dilation */
    check_maxpool(&c, &r, 1, 9, 11, 5, 1, 0, 1);  /* no padding */
    cfg_fini(&c);
}

/*
 * Small planes (1x1 .. 10x10, odd sizes) with every combination of the kernels, strides and
 * dilations below, pads of 0, about half and k - 1 on each side independently, and ceil_mode.
 */
/* Whether v[i] equals an earlier v[j] (a pad choice that a small kernel makes a duplicate). */
static int repeats(const int64_t *v, int i)
{
    for (int j = 0; j < i; j++)
        if (v[j] == v[i])
            return 1;
    return 0;
}

EB_TEST(eltwise_maxpool_small)
{
    struct cfg c;
    struct rng r = {0x51};
    cfg_init(&c);
    const int64_t sizes[][2] = {{1, 1}, {3, 3}, {2, 5}, {7, 4}, {10, 10}};
    const int64_t kernels[][2] = {{1, 1}, {2, 2}, {3, 3}, {2, 3}, {5, 5}};
    const int64_t strides[][2] = {{1, 1}, {2, 2}, {1, 2}, {3, 1}};
    const int64_t dils[][2] = {{1, 1}, {2, 2}, {1, 3}};
    for (size_t si = 0; si < EB_ARRAY_LEN(sizes); si++)
        for (size_t ki = 0; ki < EB_ARRAY_LEN(kernels); ki++)
            for (size_t ti = 0; ti < EB_ARRAY_LEN(strides); ti++)
                for (size_t di = 0; di < EB_ARRAY_LEN(dils); di++)
                    for (int pads = 0; pads < 81; pads++) {
                        const int64_t kh = kernels[ki][0], kw = kernels[ki][1];
                        const int64_t ph[3] = {0, (kh - 1) / 2, kh - 1};
                        const int64_t pw[3] = {0, (kw - 1) / 2, kw - 1};
                        const int t = pads % 3, l = pads / 3 % 3, b = pads / 9 % 3, rt = pads / 27;
                        if (repeats(ph, t) || repeats(pw, l) || repeats(ph, b) || repeats(pw, rt))
                            continue;
                        for (int ceil = 0; ceil < 2; ceil++) {
                            const struct pool_case pc = {.nc = 2,
                                                         .ih = sizes[si][0],
                                                         .iw = sizes[si][1],
                                                         .kh = kh,
                                                         .kw = kw,
                                                         .sh = strides[ti][0],
                                                         .sw = strides[ti][1],
                                                         .dh = dils[di][0],
                                                         .dw = dils[di][1],
                                                         .pt = ph[t],
                                                         .pl = pw[l],
                                                         .pb = ph[b],
                                                         .pr = pw[rt],
                                                         .ceil = ceil};
                            check_pool(&c, &r, &pc, pads % 2 ? POOL_FILL_NAN : POOL_FILL_PLAIN);
                        }
                    }
    cfg_fini(&c);
}

/* NaN-dense inputs, all -inf planes, windows that hold padding only, more than 32 taps. */
EB_TEST(eltwise_maxpool_special)
{
    struct cfg c;
    struct rng r = {0x7ff};
    cfg_init(&c);
    const struct pool_case cases[] = {
        {3, 10, 10, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 0},
        {2, 20, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
        {2, 7, 9, 3, 3, 1, 2, 2, 3, 2, 1, 0, 2, 0},
        {2, 2, 2, 2, 2, 1, 1, 3, 3, 1, 1, 1, 1, 0},     /* the only window holds padding only */
        {1, 5, 6, 2, 2, 4, 4, 3, 3, 1, 1, 1, 1, 1},     /* ceil_mode windows with no input */
        {2, 3, 50, 1, 40, 1, 1, 1, 1, 0, 39, 0, 20, 0}, /* 40 taps in a row: chained folds */
        {2, 50, 3, 40, 1, 1, 1, 1, 1, 39, 0, 20, 0, 0}, /* 40 taps down a column */
        {1, 45, 45, 35, 35, 2, 3, 1, 1, 17, 34, 30, 5, 1},
    };
    for (size_t i = 0; i < EB_ARRAY_LEN(cases); i++) {
        check_pool(&c, &r, &cases[i], POOL_FILL_NAN);
        check_pool(&c, &r, &cases[i], POOL_FILL_NINF);
        check_pool(&c, &r, &cases[i], POOL_FILL_PLAIN);
    }
    cfg_fini(&c);
}

/*
 * Large geometries: rows wider than one column chunk, a single tall plane split into row
 * blocks over the workers, strides with dilations (phases), and windows too tall for the
 * stack buffer (the reference path).
 */
EB_TEST(eltwise_maxpool_large)
{
    struct cfg c;
    struct rng r = {0xbeef};
    cfg_init(&c);
    const struct pool_case cases[] = {
        {1, 6, 3000, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 0},    /* column chunks */
        {1, 256, 256, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 0},   /* row blocks and chunks, threaded */
        {2, 160, 161, 2, 2, 2, 2, 1, 1, 0, 0, 1, 1, 1},   /* a stride-2 downsample */
        {3, 41, 77, 3, 3, 2, 2, 3, 3, 1, 2, 2, 1, 1},     /* phases with dilation */
        {2, 31, 64, 3, 4, 3, 3, 2, 5, 0, 3, 2, 1, 0},     /* stride 3, dilation 5 */
        {1, 9, 200, 2, 3, 1, 7, 1, 1, 0, 2, 1, 0, 1},     /* stride > window: skipped columns */
        {2, 1200, 3, 2, 1, 1, 1, 1100, 1, 0, 0, 0, 0, 0}, /* too tall: the reference */
        {1, 3, 1500, 1, 3, 1, 1, 1, 700, 0, 1, 0, 2, 0},  /* a very wide window */
    };
    for (size_t i = 0; i < EB_ARRAY_LEN(cases); i++) {
        check_pool(&c, &r, &cases[i], POOL_FILL_PLAIN);
        check_pool(&c, &r, &cases[i], POOL_FILL_NAN);
    }
    cfg_fini(&c);
}

/* ---- channel-blocked (NCHWc) MaxPool and upsampling ------------------------------------------ */

/* The NCHWc MaxPool (stride 1, as the layout pass uses it) against the NCHW reference, bit for
 * bit, with CB 8 and 16, pads t/l/b/r. */
static void check_pool_cl(struct cfg *c, struct rng *r, int64_t n, int64_t nc, int64_t ih,
                          int64_t iw, int64_t kh, int64_t kw, const int64_t pads[4],
                          enum pool_fill mode)
{
    struct eb_pool2d_desc d = {.n = n, .c = nc, .ih = ih, .iw = iw, .kh = kh, .kw = kw};
    d.stride_h = d.stride_w = d.dil_h = d.dil_w = 1;
    d.pad_t = pads[0], d.pad_l = pads[1], d.pad_b = pads[2], d.pad_r = pads[3];
    d.oh = pool_out(ih, pads[0], pads[2], kh, 1, 1, 0);
    d.ow = pool_out(iw, pads[1], pads[3], kw, 1, 1, 0);
    ASSERT_TRUE(d.oh > 0 && d.ow > 0);
    const int64_t nx = n * nc * ih * iw, ny = n * nc * d.oh * d.ow;
    float *x = malloc((size_t)nx * sizeof(float)), *xc = malloc((size_t)nx * sizeof(float));
    float *want = guarded((size_t)ny), *got = guarded((size_t)ny), *back = guarded((size_t)ny);
    ASSERT_TRUE(x != NULL && xc != NULL);
    pool_fill(r, x, nx, mode);
    eb_cpu_maxpool2d_f32__ref(&d, x, want);
    for (int64_t cb = 8; cb <= 16; cb += 8) {
        reorder_nchwc(x, n, nc, ih * iw, cb, 1, xc);
        for (int i = 0; i < c->n; i++) {
            char what[160];
            snprintf(what, sizeof(what),
                     "%s NCHWc(%lld) maxpool %lldx%lldx%lldx%lld k%lldx%lld "
                     "p%lld,%lld,%lld,%lld fill %d",
                     c->names[i], (long long)cb, (long long)n, (long long)nc, (long long)ih,
                     (long long)iw, (long long)kh, (long long)kw, (long long)pads[0],
                     (long long)pads[1], (long long)pads[2], (long long)pads[3], (int)mode);
            memset(got, 0x5A, (size_t)ny * sizeof(float));
            eb_cpu_maxpool2d_f32_cl(&c->ex[i], &d, (int)cb, xc, got);
            check_guards(got, (size_t)ny, what);
            reorder_nchwc(got, n, nc, d.oh * d.ow, cb, 0, back);
            same_bytes(back, want, (size_t)ny * sizeof(float), what);
        }
    }
    free(x), free(xc);
    release(want), release(got), release(back);
}

EB_TEST(eltwise_maxpool_nchwc)
{
    struct cfg c;
    struct rng r = {0xCB};
    cfg_init(&c);
    const int64_t p2[4] = {2, 2, 2, 2}, p0[4] = {0, 0, 0, 0}, asym[4] = {0, 2, 1, 0};
    const int64_t p6[4] = {6, 6, 6, 6};
    for (int m = POOL_FILL_PLAIN; m <= POOL_FILL_NAN; m++) {
        const enum pool_fill f = (enum pool_fill)m;
        check_pool_cl(&c, &r, 1, 32, 20, 20, 5, 5, p2, f); /* SPPF of a 640 model */
        check_pool_cl(&c, &r, 1, 16, 1, 1, 5, 5, p2, f);
        check_pool_cl(&c, &r, 2, 16, 7, 9, 3, 3, p0, f);
        check_pool_cl(&c, &r, 1, 16, 9, 11, 3, 4, asym, f);
        check_pool_cl(&c, &r, 1, 16, 13, 13, 13, 13, p6, f);
        check_pool_cl(&c, &r, 1, 48, 12, 150, 5, 5, p2, f); /* a few rows per buffer fill */
        check_pool_cl(&c, &r, 1, 16, 6, 600, 3, 3, p0, f);  /* rows too wide: direct loop */
    }
    check_pool_cl(&c, &r, 1, 16, 8, 8, 3, 3, p2, POOL_FILL_NINF); /* windows of padding only */
    cfg_fini(&c);
}

/* eb_cpu_upsample_f32_cl against the nearest Resize reference (asymmetric, floor). */
static void check_upsample_cl(struct cfg *c, struct rng *r, int64_t n, int64_t nc, int64_t ih,
                              int64_t iw, int64_t fh, int64_t fw)
{
    const int64_t xs[4] = {n, nc, ih, iw}, ys[4] = {n, nc, ih * fh, iw * fw};
    const float scales[4] = {1, 1, (float)fh, (float)fw};
    const int64_t nx = n * nc * ih * iw, ny = nx * fh * fw;
    float *x = gbuf((size_t)nx * 4), *xc = gbuf((size_t)nx * 4), *want = gbuf((size_t)ny * 4);
    float *got = gbuf((size_t)ny * 4), *back = gbuf((size_t)ny * 4);
    fill_f(r, x, nx, -1.0f, 1.0f);
    eb_cpu_resize_nearest_f32__ref(4, xs, x, ys, scales, EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR,
                                   want);
    for (int64_t cb = 8; cb <= 16; cb += 8) {
        reorder_nchwc(x, n, nc, ih * iw, cb, 1, xc);
        for (int i = 0; i < c->n; i++) {
            memset(got, 0x5A, (size_t)ny * 4);
            eb_cpu_upsample_f32_cl(&c->ex[i], n * (nc / cb), ih, iw, fh, fw, (int)cb, xc, got);
            gcheck(got, (size_t)ny * 4, c->names[i]);
            reorder_nchwc(got, n, nc, ih * fh * iw * fw, cb, 0, back);
            same_bytes(back, want, (size_t)ny * 4, c->names[i]);
        }
    }
    gfree(x), gfree(xc), gfree(want), gfree(got), gfree(back);
}

EB_TEST(eltwise_upsample_nchwc)
{
    struct cfg c;
    struct rng r = {0xC0};
    cfg_init(&c);
    check_upsample_cl(&c, &r, 1, 128, 20, 20, 2, 2); /* the FPN's upsample */
    check_upsample_cl(&c, &r, 2, 16, 7, 13, 2, 2);
    check_upsample_cl(&c, &r, 1, 32, 5, 3, 3, 1);
    check_upsample_cl(&c, &r, 1, 16, 1, 1, 1, 4);
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

/*
 * Integer upsampling of the last two dims (one input row written to several output rows):
 * widths around the vector length, factors 1 to 9, the N and C dims copied or not.
 */
EB_TEST(eltwise_resize_upsample)
{
    struct cfg c;
    struct rng r = {0x2468};
    cfg_init(&c);
    const float f22[] = {1, 1, 2, 2}, f32[] = {1, 1, 3, 2}, f12[] = {1, 1, 1, 2};
    const float f21[] = {1, 1, 2, 1}, f49[] = {1, 1, 4, 9}, f11[] = {1, 1, 1, 1};
    const float c22[] = {1, 2, 2, 2}, n22[] = {2, 1, 2, 2};
    const float *fs[] = {f22, f32, f12, f21, f49, f11, c22, n22};
    for (int64_t w = 1; w <= 21; w++) {
        const int64_t xs[] = {1, 3, w % 5 + 1, w};
        for (size_t f = 0; f < EB_ARRAY_LEN(fs); f++)
            check_resize(&c, &r, xs, fs[f], EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR);
        check_resize(&c, &r, xs, f22, EB_RESIZE_HALF_PIXEL, EB_RESIZE_ROUND_PREFER_FLOOR);
        check_resize(&c, &r, xs, f22, EB_RESIZE_ALIGN_CORNERS, EB_RESIZE_ROUND_PREFER_CEIL);
        check_resize(&c, &r, xs, f32, EB_RESIZE_ASYMMETRIC, EB_RESIZE_CEIL);
    }
    const int64_t big[] = {2, 64, 40, 40}, yolo[] = {1, 128, 10, 10};
    check_resize(&c, &r, big, f22, EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR); /* threaded */
    check_resize(&c, &r, yolo, f22, EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR);
    cfg_fini(&c);
}

/* Linear Resize: the planes split over workers give the reference's bits, guards intact. */
static void check_resize_linear(struct cfg *c, struct rng *r, int64_t planes, int64_t ih,
                                int64_t iw, int64_t oh, int64_t ow, enum eb_resize_coord coord)
{
    const int64_t nx = planes * ih * iw, ny = planes * oh * ow;
    const float sh = (float)oh / (float)ih, sw = (float)ow / (float)iw;
    float *x = gbuf((size_t)nx * 4), *want = gbuf((size_t)ny * 4), *got = gbuf((size_t)ny * 4);
    fill_f(r, x, nx, -1.0f, 1.0f);
    eb_cpu_resize_linear_f32__ref(planes, ih, iw, oh, ow, sh, sw, coord, x, want);
    for (int i = 0; i < c->n; i++) {
        memset(got, 0x5A, (size_t)ny * 4);
        eb_cpu_resize_linear_f32(&c->ex[i], planes, ih, iw, oh, ow, sh, sw, coord, x, got);
        gcheck(got, (size_t)ny * 4, c->names[i]);
        same_bytes(got, want, (size_t)ny * 4, c->names[i]);
    }
    gfree(x);
    gfree(want);
    gfree(got);
}

EB_TEST(eltwise_resize_linear)
{
    struct cfg c;
    struct rng r = {0x11};
    cfg_init(&c);
    check_resize_linear(&c, &r, 96, 13, 13, 26, 26, EB_RESIZE_HALF_PIXEL); /* NanoDet's PAN */
    check_resize_linear(&c, &r, 7, 9, 5, 4, 11, EB_RESIZE_ALIGN_CORNERS);
    check_resize_linear(&c, &r, 1, 1, 1, 3, 2, EB_RESIZE_ASYMMETRIC);
    check_resize_linear(&c, &r, 3, 6, 8, 6, 8, EB_RESIZE_PYTORCH_HALF_PIXEL);
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

/* ReduceMean over trailing axes (RMSNorm's mean of squares): rows of every length against the
 * reference over the same axes, within float rounding of a sum of `len` terms. */
EB_TEST(eltwise_reduce_mean_rows)
{
    struct cfg c;
    struct rng r = {7};
    cfg_init(&c);
    const int64_t shapes[][2] = {{1, 1}, {3, 5}, {7, 16}, {2, 17}, {128, 64}, {5, 896}, {300, 33}};
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        const int64_t rows = shapes[s][0], len = shapes[s][1], xs[2] = {rows, len};
        const int reduce[2] = {0, 1};
        float *x = gbuf((size_t)(rows * len) * 4), *want = gbuf((size_t)rows * 4),
              *got = gbuf((size_t)rows * 4);
        fill_f(&r, x, rows * len, 0.0f, 4.0f);
        eb_cpu_reduce_mean_f32__ref(2, xs, reduce, x, want);
        for (int i = 0; i < c.n; i++) {
            memset(got, 0x5A, (size_t)rows * 4);
            eb_cpu_reduce_mean_rows_f32(&c.ex[i], rows, len, x, got);
            gcheck(got, (size_t)rows * 4, c.names[i]);
            for (int64_t k = 0; k < rows; k++)
                if (!(fabsf(got[k] - want[k]) <= 1e-6f * (float)len * fabsf(want[k]) + 1e-30f))
                    EB_FAIL("%s %lldx%lld: row %lld: %.9g vs reference %.9g", c.names[i],
                            (long long)rows, (long long)len, (long long)k, (double)got[k],
                            (double)want[k]);
        }
        gfree(x);
        gfree(want);
        gfree(got);
    }
    cfg_fini(&c);
}
