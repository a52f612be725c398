/*
 * AVX-512 integer kernels of ConvInteger: an 8×32 int32 tile per call (two weight panels of
 * EB_IGEMM_MR rows × two activation panels of EB_IGEMM_NR columns, 16 zmm accumulators, one
 * per row and 16 columns) over the packed int16 pairs of the AVX2 kernels, with vpdpwssd
 * (AVX512_VNNI) or vpmaddwd + vpaddd: int16 × int16 pair sums into int32, exact, no saturation,
 * wrap-around accumulation like the reference. Row and column edges are masked stores.
 *
 * The activation gather writes the packed pairs directly: stride-1 convolutions whose output
 * rows are as wide as the input rows (1x1, "same" padding) read every tap as one masked load
 * from the input (padded taps and columns past the block take the zero point), other shapes go
 * through a small im2col of a few channels at a time that stays in L1.
 *
 * With AVX512_VNNI there is also a u8×s8 flavour (the "x4" kernels): vpdpbusd multiplies 4
 * uint8 activations by 4 int8 weights per int32 lane, twice the work of vpdpwssd per
 * instruction, exact (products fit int16, four of them int32, no saturation in vpdpbusd). The
 * weights w - w_zp need not fit int8: they are packed as s = w (int8) or w - 128 (uint8), and
 * (w - w_zp) = s + c with c = -w_zp or 128 - w_zp per output channel, so the kernel adds
 * c·Σ_k x[k][j], the column sums its gather computes (vpdpbusd by ones), when some c ≠ 0.
 * Packed formats: weights [kq][MR] int32 (four int8, k = 4q..4q+3), activations per tile of
 * EB_IGEMM_NR columns [kq][NR][4] uint8 (rows past k are 0).
 *
 * A lookup table after the requantisation (edgebench.QLinearConv's fused activation) is a
 * 4-byte gather per output in the kernels, or with AVX512_VBMI a separate pass of vpermi2b over
 * the finished block (eb_cpu_lut_u8__avx512vbmi): two 128-byte table halves, 64 outputs per
 * step.
 *
 * Per-function target attributes: the file compiles for any x86-64 and runs only when the CPU
 * has AVX-512 F/BW/DQ/VL (and VNNI for the __avx512vnni kernels, VBMI for __avx512vbmi).
 */
#include <immintrin.h>
#include <string.h>

#include "engine/cpu/conv_u8.h"

#define AVX512     __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))
#define AVX512VBMI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi")))
#define INLINE     static inline __attribute__((always_inline))

/* ---- micro-kernels ----------------------------------------------------------------------- */

/*
 * One k-pair step for row r of the tile: a = the row's weight pair broadcast, c<r>0 and c<r>1
 * the two 16-column halves. R2 (rows 4..7 present) and C2 (columns 16..31 present) are
 * compile-time constants (one function per tile shape), so the unused accumulators disappear.
 */
#define DOT_MADD(acc, a, b) _mm512_add_epi32(acc, _mm512_madd_epi16(a, b))
#define DOT_VNNI(acc, a, b) _mm512_dpwssd_epi32(acc, a, b)
#define DOT_BUSD(acc, a, b) _mm512_dpbusd_epi32(acc, b, a) /* b: uint8 activations */
#define ROW(DOT, wr, c0, c1)                                                                       \
    do {                                                                                           \
        const __m512i a = _mm512_set1_epi32(wr);                                                   \
        c0 = DOT(c0, a, b0);                                                                       \
        if (C2)                                                                                    \
            c1 = DOT(c1, a, b1);                                                                   \
    } while (0)
#define ACC_BODY(DOT)                                                                              \
    __m512i c00 = _mm512_setzero_si512(), c01 = _mm512_setzero_si512();                            \
    __m512i c10 = _mm512_setzero_si512(), c11 = _mm512_setzero_si512();                            \
    __m512i c20 = _mm512_setzero_si512(), c21 = _mm512_setzero_si512();                            \
    __m512i c30 = _mm512_setzero_si512(), c31 = _mm512_setzero_si512();                            \
    __m512i c40 = _mm512_setzero_si512(), c41 = _mm512_setzero_si512();                            \
    __m512i c50 = _mm512_setzero_si512(), c51 = _mm512_setzero_si512();                            \
    __m512i c60 = _mm512_setzero_si512(), c61 = _mm512_setzero_si512();                            \
    __m512i c70 = _mm512_setzero_si512(), c71 = _mm512_setzero_si512();                            \
    const int32_t *w1 = w + kp * EB_IGEMM_MR;                                                      \
    const int16_t *bn = b + kp * 2 * EB_IGEMM_NR;                                                  \
    for (int64_t i = 0; i < kp; i++) {                                                             \
        const __m512i b0 = _mm512_loadu_si512(b + i * 32);                                         \
        const __m512i b1 = C2 ? _mm512_loadu_si512(bn + i * 32) : b0;                              \
        ROW(DOT, w[i * 4 + 0], c00, c01);                                                          \
        ROW(DOT, w[i * 4 + 1], c10, c11);                                                          \
        ROW(DOT, w[i * 4 + 2], c20, c21);                                                          \
        ROW(DOT, w[i * 4 + 3], c30, c31);                                                          \
        if (R2) {                                                                                  \
            ROW(DOT, w1[i * 4 + 0], c40, c41);                                                     \
            ROW(DOT, w1[i * 4 + 1], c50, c51);                                                     \
            ROW(DOT, w1[i * 4 + 2], c60, c61);                                                     \
            ROW(DOT, w1[i * 4 + 3], c70, c71);                                                     \
        }                                                                                          \
    }                                                                                              \
    c[0] = c00, c[1] = c01, c[2] = c10, c[3] = c11, c[4] = c20, c[5] = c21, c[6] = c30;            \
    c[7] = c31, c[8] = c40, c[9] = c41, c[10] = c50, c[11] = c51, c[12] = c60, c[13] = c61;        \
    c[14] = c70, c[15] = c71

/*
 * c[2m + h] = row m, columns 16h..16h+15 of Σ_i w[i][m]·b[i][j], one function per flavour and
 * shape. They are not inlined into the store code on purpose: with the stores in the same
 * function GCC copies most accumulators between registers on every iteration.
 */
#define DEFINE_ACC(name, attr, DOT, r2, c2)                                                        \
    attr static __attribute__((noinline)) void name(int64_t kp, const int32_t *w,                  \
                                                    const int16_t *b, __m512i *c)                  \
    {                                                                                              \
        const int R2 = r2, C2 = c2;                                                                \
        ACC_BODY(DOT);                                                                             \
    }
DEFINE_ACC(acc_madd_11, AVX512, DOT_MADD, 1, 1)
DEFINE_ACC(acc_madd_10, AVX512, DOT_MADD, 1, 0)
DEFINE_ACC(acc_madd_01, AVX512, DOT_MADD, 0, 1)
DEFINE_ACC(acc_madd_00, AVX512, DOT_MADD, 0, 0)
DEFINE_ACC(acc_vnni_11, AVX512VNNI, DOT_VNNI, 1, 1)
DEFINE_ACC(acc_vnni_10, AVX512VNNI, DOT_VNNI, 1, 0)
DEFINE_ACC(acc_vnni_01, AVX512VNNI, DOT_VNNI, 0, 1)
DEFINE_ACC(acc_vnni_00, AVX512VNNI, DOT_VNNI, 0, 0)
/* x4: the same loop over kq quads of 64-byte activation rows (b cast to int16, 32 per row). */
DEFINE_ACC(acc_busd_11, AVX512VNNI, DOT_BUSD, 1, 1)
DEFINE_ACC(acc_busd_10, AVX512VNNI, DOT_BUSD, 1, 0)
DEFINE_ACC(acc_busd_01, AVX512VNNI, DOT_BUSD, 0, 1)
DEFINE_ACC(acc_busd_00, AVX512VNNI, DOT_BUSD, 0, 0)

/* Lanes [0, n) of 16 set (n may be outside 0..16). */
INLINE __mmask16 lanes16(int n)
{
    return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* Stores rows m < mr, the row loop unrolled (constant indices into the accumulators). */
#define EACH_ROW(STORE)                                                                            \
    do {                                                                                           \
        STORE(0);                                                                                  \
        STORE(1);                                                                                  \
        STORE(2);                                                                                  \
        STORE(3);                                                                                  \
        if (R2) {                                                                                  \
            STORE(4);                                                                              \
            STORE(5);                                                                              \
            STORE(6);                                                                              \
            STORE(7);                                                                              \
        }                                                                                          \
    } while (0)

/*
 * Row m's two halves minus corr[m], plus wc[m]·colsum[j] when colsum is set (x4 kernels):
 * v0, v1 are declared by the caller.
 */
#define ROW_VALUES(m)                                                                              \
    do {                                                                                           \
        const __m512i cv = _mm512_set1_epi32(corr[m]);                                             \
        v0 = _mm512_sub_epi32(c[2 * m], cv);                                                       \
        v1 = _mm512_sub_epi32(c[2 * m + 1], cv);                                                   \
        if (colsum != NULL) {                                                                      \
            const __m512i wv = _mm512_set1_epi32(wc[m]);                                           \
            v0 = _mm512_add_epi32(v0, _mm512_mullo_epi32(wv, s0));                                 \
            if (C2)                                                                                \
                v1 = _mm512_add_epi32(v1, _mm512_mullo_epi32(wv, s1));                             \
        }                                                                                          \
    } while (0)

/* Column sums of the tile (x4 kernels; zero when colsum is NULL). */
#define LOAD_COLSUM()                                                                              \
    __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();                              \
    if (colsum != NULL) {                                                                          \
        s0 = _mm512_loadu_si512(colsum);                                                           \
        if (C2)                                                                                    \
            s1 = _mm512_loadu_si512(colsum + 16);                                                  \
    }

AVX512 INLINE void store_i32(const __m512i c[16], const int32_t *colsum, const int32_t *wc,
                             const int32_t *corr, int32_t *y, int64_t ldy, int mr, int nr,
                             const int R2, const int C2)
{
    const __mmask16 k0 = lanes16(nr), k1 = lanes16(nr - 16);
    LOAD_COLSUM();
    __m512i v0, v1;
#define STORE_I32(m)                                                                               \
    if (m < mr) {                                                                                  \
        ROW_VALUES(m);                                                                             \
        _mm512_mask_storeu_epi32(y + m * ldy, k0, v0);                                             \
        if (C2)                                                                                    \
            _mm512_mask_storeu_epi32(y + m * ldy + 16, k1, v1);                                    \
    }
    EACH_ROW(STORE_I32);
#undef STORE_I32
}

/* The output bytes of 16 accumulators: sat(rne(fma((float)v, mult, bias)) + zp), then lut. */
AVX512 INLINE __m512i requant16(__m512i v, __m512 mult, __m512 bias, __m512 zp, __m512 lo,
                                __m512 hi, const uint8_t *lut)
{
    const __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), mult, bias);
    __m512 q =
        _mm512_add_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
    q = _mm512_min_ps(_mm512_max_ps(q, lo), hi);
    /* The byte (two's complement for int8); gathers of 4 bytes at lut + byte (3 bytes of
     * slack past entry 255) keep only the first. */
    __m512i b = _mm512_and_si512(_mm512_cvtps_epi32(q), _mm512_set1_epi32(0xff));
    if (lut != NULL)
        b = _mm512_and_si512(_mm512_i32gather_epi32(b, (const void *)lut, 1),
                             _mm512_set1_epi32(0xff));
    return b;
}

AVX512 INLINE void store_q(const __m512i c[16], const int32_t *colsum, const int32_t *wc,
                           const int32_t *corr, const float *mult, const float *bias,
                           const struct eb_conv2d_u8_requant *rq, uint8_t *y, int64_t ldy, int mr,
                           int nr, const int R2, const int C2)
{
    const __mmask16 k0 = lanes16(nr), k1 = lanes16(nr - 16);
    LOAD_COLSUM();
    __m512i v0, v1;
    const __m512 zp = _mm512_set1_ps(rq->y_zp);
    const __m512 lo = _mm512_set1_ps(rq->y_signed ? -128.0f : 0.0f);
    const __m512 hi = _mm512_set1_ps(rq->y_signed ? 127.0f : 255.0f);
    const uint8_t *lut = rq->lut;
#define STORE_Q(m)                                                                                 \
    if (m < mr) {                                                                                  \
        ROW_VALUES(m);                                                                             \
        const __m512 vm = _mm512_set1_ps(mult[m]), vb = _mm512_set1_ps(bias[m]);                   \
        _mm512_mask_cvtepi32_storeu_epi8(y + m * ldy, k0, requant16(v0, vm, vb, zp, lo, hi, lut)); \
        if (C2)                                                                                    \
            _mm512_mask_cvtepi32_storeu_epi8(y + m * ldy + 16, k1,                                 \
                                             requant16(v1, vm, vb, zp, lo, hi, lut));              \
    }
    EACH_ROW(STORE_Q);
#undef STORE_Q
}

/*
 * The four tile shapes (rows 4 or 8, columns 16 or 32) of one kernel flavour: ACC is acc_madd
 * or acc_vnni, STORE_CALL the store with its extra arguments.
 */
#define TILE_SHAPES(ACC, STORE_CALL)                                                               \
    __m512i c[16];                                                                                 \
    if (mr > 4 && nr > 16) {                                                                       \
        ACC##_11(kp, w, b, c);                                                                     \
        STORE_CALL(1, 1);                                                                          \
    } else if (mr > 4) {                                                                           \
        ACC##_10(kp, w, b, c);                                                                     \
        STORE_CALL(1, 0);                                                                          \
    } else if (nr > 16) {                                                                          \
        ACC##_01(kp, w, b, c);                                                                     \
        STORE_CALL(0, 1);                                                                          \
    } else {                                                                                       \
        ACC##_00(kp, w, b, c);                                                                     \
        STORE_CALL(0, 0);                                                                          \
    }

#define STORE_I32_CALL(r2, c2)    store_i32(c, NULL, NULL, corr, y, ldy, mr, nr, r2, c2)
#define STORE_Q_CALL(r2, c2)      store_q(c, NULL, NULL, corr, mult, bias, rq, y, ldy, mr, nr, r2, c2)
#define STORE_I32_X4_CALL(r2, c2) store_i32(c, colsum, wc, corr, y, ldy, mr, nr, r2, c2)
#define STORE_Q_X4_CALL(r2, c2)   store_q(c, colsum, wc, corr, mult, bias, rq, y, ldy, mr, nr, r2, c2)

AVX512 void eb_cpu_igemm_u8s8_8x32__avx512(int64_t kp, const int32_t *w, const int16_t *b,
                                           const int32_t *corr, int32_t *y, int64_t ldy, int mr,
                                           int nr){TILE_SHAPES(acc_madd, STORE_I32_CALL)}

AVX512VNNI
    void eb_cpu_igemm_u8s8_8x32__avx512vnni(int64_t kp, const int32_t *w, const int16_t *b,
                                            const int32_t *corr, int32_t *y, int64_t ldy, int mr,
                                            int nr){TILE_SHAPES(acc_vnni, STORE_I32_CALL)}

AVX512
    void eb_cpu_igemm_u8s8_8x32_q__avx512(int64_t kp, const int32_t *w, const int16_t *b,
                                          const int32_t *corr, const float *mult, const float *bias,
                                          const struct eb_conv2d_u8_requant *rq, uint8_t *y,
                                          int64_t ldy, int mr,
                                          int nr){TILE_SHAPES(acc_madd, STORE_Q_CALL)}

AVX512VNNI void eb_cpu_igemm_u8s8_8x32_q__avx512vnni(int64_t kp, const int32_t *w, const int16_t *b,
                                                     const int32_t *corr, const float *mult,
                                                     const float *bias,
                                                     const struct eb_conv2d_u8_requant *rq,
                                                     uint8_t *y, int64_t ldy, int mr,
                                                     int nr){TILE_SHAPES(acc_vnni, STORE_Q_CALL)}

AVX512VNNI void eb_cpu_igemm_u8s8x4_8x32__avx512vnni(int64_t kq, const int32_t *w,
                                                     const uint8_t *b8, const int32_t *colsum,
                                                     const int32_t *wc, const int32_t *corr,
                                                     int32_t *y, int64_t ldy, int mr, int nr)
{
    const int64_t kp = kq;
    const int16_t *b = (const int16_t *)(const void *)b8;
    TILE_SHAPES(acc_busd, STORE_I32_X4_CALL)
}

AVX512VNNI void eb_cpu_igemm_u8s8x4_8x32_q__avx512vnni(int64_t kq, const int32_t *w,
                                                       const uint8_t *b8, const int32_t *colsum,
                                                       const int32_t *wc, const int32_t *corr,
                                                       const float *mult, const float *bias,
                                                       const struct eb_conv2d_u8_requant *rq,
                                                       uint8_t *y, int64_t ldy, int mr, int nr)
{
    const int64_t kp = kq;
    const int16_t *b = (const int16_t *)(const void *)b8;
    TILE_SHAPES(acc_busd, STORE_Q_X4_CALL)
}

AVX512VBMI void eb_cpu_lut_u8__avx512vbmi(int64_t rows, int64_t n, uint8_t *y, int64_t ldy,
                                          const uint8_t *lut)
{
    const __m512i t0 = _mm512_loadu_si512(lut), t1 = _mm512_loadu_si512(lut + 64);
    const __m512i t2 = _mm512_loadu_si512(lut + 128), t3 = _mm512_loadu_si512(lut + 192);
    for (int64_t r = 0; r < rows; r++) {
        uint8_t *yr = y + r * ldy;
        for (int64_t j = 0; j < n; j += 64) {
            const __mmask64 m = n - j >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - j)) - 1);
            const __m512i v = _mm512_maskz_loadu_epi8(m, yr + j);
            /* vpermi2b indexes 128 bytes with bits 0..6; bit 7 picks the table half. */
            const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1);
            const __m512i hi = _mm512_permutex2var_epi8(t2, v, t3);
            _mm512_mask_storeu_epi8(yr + j, m,
                                    _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
        }
    }
}

/* ---- activation gather ------------------------------------------------------------------- */

/* Bits [a, b) of 64 (clamped to 0..64). */
INLINE __mmask64 bits64(int64_t a, int64_t b)
{
    a = a < 0 ? 0 : (a > 64 ? 64 : a);
    b = b < a ? a : (b > 64 ? 64 : b);
    const uint64_t hi = b >= 64 ? ~0ull : (1ull << b) - 1ull;
    const uint64_t lo = a >= 64 ? ~0ull : (1ull << a) - 1ull;
    return (__mmask64)(hi & ~lo);
}

/* Two rows of 16 bytes → one packed pair row: r0[j], r1[j] widened to int16, j = 0..15. */
AVX512 INLINE void pair16(__m128i r0, __m128i r1, int16_t *out)
{
    const __m256i il = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(r0, r1)),
                                               _mm_unpackhi_epi8(r0, r1), 1);
    _mm512_storeu_si512(out, _mm512_cvtepu8_epi16(il));
}

/* Four rows of 16 bytes → one packed quad row (16 columns × r0..r3[j]); returns it. */
AVX512 INLINE __m512i quad16(__m128i r0, __m128i r1, __m128i r2, __m128i r3, uint8_t *out)
{
    const __m128i a = _mm_unpacklo_epi8(r0, r1), b = _mm_unpackhi_epi8(r0, r1);
    const __m128i c = _mm_unpacklo_epi8(r2, r3), e = _mm_unpackhi_epi8(r2, r3);
    __m512i v = _mm512_castsi128_si512(_mm_unpacklo_epi16(a, c)); /* columns 0..3 */
    v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(a, c), 1);       /* 4..7 */
    v = _mm512_inserti32x4(v, _mm_unpacklo_epi16(b, e), 2);       /* 8..11 */
    v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(b, e), 3);       /* 12..15 */
    _mm512_storeu_si512(out, v);
    return v;
}

/* Row r of a `rows`-row chunk at col (row stride nbp), columns t..t+15; zero past the chunk. */
AVX512 INLINE __m128i chunk_row(const uint8_t *col, int64_t rows, int64_t nbp, int64_t r, int64_t t)
{
    return r < rows ? _mm_loadu_si128((const __m128i *)(col + r * nbp + t)) : _mm_setzero_si128();
}

/*
 * Packs `rows` rows of `nbp` (multiple of EB_IGEMM_NR) bytes (row r at col + r*nbp; a missing
 * last row is 0) into the pairs [pair0, pair0 + ceil(rows/2)) of every tile of `out` (tiles
 * of kp pairs).
 */
AVX512 static void pack_pairs(int64_t rows, int64_t nbp, const uint8_t *col, int64_t kp,
                              int64_t pair0, int16_t *out)
{
    for (int64_t t = 0; t < nbp; t += EB_IGEMM_NR) {
        int16_t *o = out + ((t / EB_IGEMM_NR) * kp + pair0) * 2 * EB_IGEMM_NR;
        for (int64_t r = 0; r < rows; r += 2, o += 2 * EB_IGEMM_NR)
            pair16(chunk_row(col, rows, nbp, r, t), chunk_row(col, rows, nbp, r + 1, t), o);
    }
}

/* The same into quads [quad0, quad0 + ceil(rows/4)) of tiles of kq quads, adding the column
 * sums to colsum[0..nbp) when it is set. */
AVX512VNNI static void pack_quads(int64_t rows, int64_t nbp, const uint8_t *col, int64_t kq,
                                  int64_t quad0, uint8_t *out, int32_t *colsum)
{
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t t = 0; t < nbp; t += EB_IGEMM_NR) {
        uint8_t *o = out + ((t / EB_IGEMM_NR) * kq + quad0) * 4 * EB_IGEMM_NR;
        __m512i sum = _mm512_setzero_si512();
        for (int64_t r = 0; r < rows; r += 4, o += 4 * EB_IGEMM_NR) {
            const __m512i v =
                quad16(chunk_row(col, rows, nbp, r, t), chunk_row(col, rows, nbp, r + 1, t),
                       chunk_row(col, rows, nbp, r + 2, t), chunk_row(col, rows, nbp, r + 3, t), o);
            sum = _mm512_dpbusd_epi32(sum, v, ones);
        }
        if (colsum != NULL)
            _mm512_storeu_si512(colsum + t, _mm512_add_epi32(_mm512_loadu_si512(colsum + t), sum));
    }
}

/*
 * Stride 1, output rows as wide as the input rows: output pixel p reads input p + off(tap),
 * valid where the tap's row and column are inside the image. The validity of each tap and
 * 16-pixel tile is a mask computed once per block (channels reuse it) in tmp:
 * *mask_out = [khw][nbp/16], *off_out = [khw].
 */
AVX512 static void direct_setup(const struct eb_conv2d_desc *d, int64_t p0, int64_t cnt,
                                int64_t nbp, uint8_t *tmp, __mmask16 **mask_out, int64_t **off_out)
{
    const int64_t khw = d->kh * d->kw, tiles = nbp / EB_IGEMM_NR;
    /* tmp: oh and ow of the block's pixels (int32), then the masks and offsets. */
    int32_t *oh = (int32_t *)(void *)tmp, *ow = oh + nbp;
    __mmask16 *mask = (__mmask16 *)(ow + nbp);
    int64_t *off = (int64_t *)(((uintptr_t)(mask + khw * tiles) + 63u) & ~(uintptr_t)63u);
    {
        int64_t h = p0 / d->ow, x = p0 % d->ow;
        for (int64_t j = 0; j < nbp; j++) {
            oh[j] = (int32_t)h, ow[j] = (int32_t)x;
            if (++x == d->ow)
                x = 0, h++;
        }
    }
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i vih = _mm512_set1_epi32((int32_t)d->ih);
    const __m512i viw = _mm512_set1_epi32((int32_t)d->iw);
    const __m512i vcnt = _mm512_set1_epi32((int32_t)cnt);
    for (int64_t kh = 0; kh < d->kh; kh++)
        for (int64_t kw = 0; kw < d->kw; kw++) {
            const int64_t tap = kh * d->kw + kw;
            const int64_t dh = kh * d->dil_h - d->pad_t, dw = kw * d->dil_w - d->pad_l;
            off[tap] = dh * d->iw + dw;
            const __m512i vdh = _mm512_set1_epi32((int32_t)dh);
            const __m512i vdw = _mm512_set1_epi32((int32_t)dw);
            for (int64_t t = 0; t < tiles; t++) {
                const __m512i h = _mm512_add_epi32(_mm512_loadu_si512(oh + t * 16), vdh);
                const __m512i x = _mm512_add_epi32(_mm512_loadu_si512(ow + t * 16), vdw);
                const __m512i j = _mm512_add_epi32(_mm512_set1_epi32((int32_t)(t * 16)), lane);
                /* Unsigned compares: a negative row or column is out of range as well. */
                mask[tap * tiles + t] = _mm512_cmplt_epu32_mask(h, vih) &
                                        _mm512_cmplt_epu32_mask(x, viw) &
                                        _mm512_cmplt_epi32_mask(j, vcnt);
            }
        }
    *mask_out = mask;
    *off_out = off;
}

/* k-row r of the direct path: its source (masked-off lanes are never read, so the pointer may
 * lie outside the image) and its masks; NULL past k. */
#define DIRECT_ROW(r, src, m)                                                                      \
    do {                                                                                           \
        src = NULL, m = NULL;                                                                      \
        if ((r) < k) {                                                                             \
            src = xg + ((r) / khw) * iplane + p0 + off[(r) % khw];                                 \
            m = mask + ((r) % khw) * tiles;                                                        \
        }                                                                                          \
    } while (0)
#define DIRECT_LOAD(src, m, t)                                                                     \
    ((src) != NULL ? _mm_mask_loadu_epi8(vzp, (m)[t], (src) + (t)*16) : _mm_setzero_si128())

AVX512 static void gather_direct(const struct eb_conv2d_desc *d, int64_t icg, const uint8_t *xg,
                                 uint8_t zp, int64_t p0, int64_t cnt, int64_t nbp, uint8_t *tmp,
                                 int16_t *out)
{
    const int64_t khw = d->kh * d->kw, k = icg * khw, kp = (k + 1) / 2;
    const int64_t iplane = d->ih * d->iw, tiles = nbp / EB_IGEMM_NR;
    __mmask16 *mask;
    int64_t *off;
    direct_setup(d, p0, cnt, nbp, tmp, &mask, &off);
    const __m128i vzp = _mm_set1_epi8((char)zp);
    for (int64_t i = 0; i < kp; i++) {
        const uint8_t *s0, *s1;
        const __mmask16 *m0, *m1;
        DIRECT_ROW(2 * i, s0, m0);
        DIRECT_ROW(2 * i + 1, s1, m1);
        int16_t *o = out + i * 2 * EB_IGEMM_NR;
        for (int64_t t = 0; t < tiles; t++, o += kp * 2 * EB_IGEMM_NR)
            pair16(DIRECT_LOAD(s0, m0, t), DIRECT_LOAD(s1, m1, t), o);
    }
}

AVX512VNNI static void gather_direct4(const struct eb_conv2d_desc *d, int64_t icg,
                                      const uint8_t *xg, uint8_t zp, int64_t p0, int64_t cnt,
                                      int64_t nbp, uint8_t *tmp, uint8_t *out, int32_t *colsum)
{
    const int64_t khw = d->kh * d->kw, k = icg * khw, kq = (k + 3) / 4;
    const int64_t iplane = d->ih * d->iw, tiles = nbp / EB_IGEMM_NR;
    __mmask16 *mask;
    int64_t *off;
    direct_setup(d, p0, cnt, nbp, tmp, &mask, &off);
    const __m128i vzp = _mm_set1_epi8((char)zp);
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t q = 0; q < kq; q++) {
        const uint8_t *s0, *s1, *s2, *s3;
        const __mmask16 *m0, *m1, *m2, *m3;
        DIRECT_ROW(4 * q, s0, m0);
        DIRECT_ROW(4 * q + 1, s1, m1);
        DIRECT_ROW(4 * q + 2, s2, m2);
        DIRECT_ROW(4 * q + 3, s3, m3);
        uint8_t *o = out + q * 4 * EB_IGEMM_NR;
        for (int64_t t = 0; t < tiles; t++, o += kq * 4 * EB_IGEMM_NR) {
            const __m512i v = quad16(DIRECT_LOAD(s0, m0, t), DIRECT_LOAD(s1, m1, t),
                                     DIRECT_LOAD(s2, m2, t), DIRECT_LOAD(s3, m3, t), o);
            if (colsum != NULL)
                _mm512_storeu_si512(
                    colsum + t * 16,
                    _mm512_dpbusd_epi32(_mm512_loadu_si512(colsum + t * 16), v, ones));
        }
    }
}

/*
 * im2col of channels [0, icg) of xg for pixels p0 + j, j < cnt, into col[k][j] (row stride
 * nbp): the im2col of conv_u8.c with masked loads and stores; columns [cnt, nbp) hold zp.
 */
AVX512 static void im2col(const struct eb_conv2d_desc *d, int64_t icg, const uint8_t *xg,
                          uint8_t zp, int64_t p0, int64_t cnt, int64_t nbp, uint8_t *col)
{
    const int64_t iplane = d->ih * d->iw, khw = d->kh * d->kw;
    const __m512i vzp = _mm512_set1_epi8((char)zp);
    const __mmask64 even = (__mmask64)0x5555555555555555ull;
    for (int64_t j = 0; j < cnt;) {
        const int64_t oh = (p0 + j) / d->ow, ow0 = (p0 + j) % d->ow;
        const int64_t seg = d->ow - ow0 < cnt - j ? d->ow - ow0 : cnt - j;
        for (int64_t kh = 0; kh < d->kh; kh++) {
            const int64_t ih = oh * d->stride_h - d->pad_t + kh * d->dil_h;
            const int row_ok = ih >= 0 && ih < d->ih;
            for (int64_t kw = 0; kw < d->kw; kw++) {
                const int64_t iw0 = ow0 * d->stride_w - d->pad_l + kw * d->dil_w;
                /* Outputs o in [lo, hi) of the segment read inside the row. */
                int64_t lo, hi;
                eb_cpu__im2col_span(d, iw0, seg, &lo, &hi);
                if (!row_ok)
                    hi = lo;
                uint8_t *dst = col + (kh * d->kw + kw) * nbp + j;
                const uint8_t *src = xg + ih * d->iw + iw0;
                for (int64_t c = 0; c < icg; c++, dst += khw * nbp, src += iplane) {
                    if (d->stride_w == 1) {
                        for (int64_t o = 0; o < seg; o += 64) {
                            const __m512i v =
                                _mm512_mask_loadu_epi8(vzp, bits64(lo - o, hi - o), src + o);
                            _mm512_mask_storeu_epi8(dst + o, bits64(0, seg - o), v);
                        }
                    } else if (d->stride_w == 2) {
                        /* Bytes 2o of 64 read in place (even lanes only), then narrowed. */
                        for (int64_t o = 0; o < seg; o += 32) {
                            const __mmask64 m = bits64(2 * (lo - o), 2 * (hi - o)) & even;
                            const __m512i v = _mm512_mask_loadu_epi8(vzp, m, src + 2 * o);
                            _mm256_mask_storeu_epi8(dst + o, (__mmask32)bits64(0, seg - o),
                                                    _mm512_cvtepi16_epi8(v));
                        }
                    } else {
                        for (int64_t o = 0; o < seg; o++)
                            dst[o] = o >= lo && o < hi ? src[o * d->stride_w] : zp;
                    }
                }
            }
        }
        j += seg;
    }
    if (cnt < nbp)
        for (int64_t r = 0; r < icg * khw; r++)
            memset(col + r * nbp + cnt, zp, (size_t)(nbp - cnt));
}

/* Channels per im2col chunk: as many as tmp holds, a multiple of `unit` rows in all so that
 * pairs (unit 2) or quads (unit 4) never straddle chunks; tmp holds at least `unit` channels
 * (eb_cpu_igemm_gather_tmp_bytes). */
static int64_t chunk_channels(int64_t khw, int64_t nbp, size_t tmp_bytes, int64_t unit)
{
    int64_t step = 1;
    while ((step * khw) % unit != 0)
        step++;
    const int64_t cc = (int64_t)tmp_bytes / (khw * nbp) / step * step;
    return cc > step ? cc : step;
}

AVX512 void eb_cpu_igemm_gather_u8__avx512(const struct eb_conv2d_desc *d, int64_t icg,
                                           const uint8_t *xg, uint8_t zp, int64_t p0, int64_t cnt,
                                           int64_t nbp, uint8_t *tmp, size_t tmp_bytes,
                                           int16_t *out)
{
    if (d->stride_h == 1 && d->stride_w == 1 && d->ow == d->iw) {
        gather_direct(d, icg, xg, zp, p0, cnt, nbp, tmp, out);
        return;
    }
    const int64_t khw = d->kh * d->kw, kp = (icg * khw + 1) / 2;
    const int64_t cc = chunk_channels(khw, nbp, tmp_bytes, 2);
    for (int64_t c0 = 0; c0 < icg; c0 += cc) {
        const int64_t n = icg - c0 < cc ? icg - c0 : cc;
        im2col(d, n, xg + c0 * d->ih * d->iw, zp, p0, cnt, nbp, tmp);
        pack_pairs(n * khw, nbp, tmp, kp, c0 * khw / 2, out);
    }
}

AVX512VNNI void eb_cpu_igemm_gather_u8x4__avx512vnni(const struct eb_conv2d_desc *d, int64_t icg,
                                                     const uint8_t *xg, uint8_t zp, int64_t p0,
                                                     int64_t cnt, int64_t nbp, uint8_t *tmp,
                                                     size_t tmp_bytes, uint8_t *out,
                                                     int32_t *colsum)
{
    if (colsum != NULL)
        memset(colsum, 0, (size_t)nbp * sizeof(int32_t));
    if (d->stride_h == 1 && d->stride_w == 1 && d->ow == d->iw) {
        gather_direct4(d, icg, xg, zp, p0, cnt, nbp, tmp, out, colsum);
        return;
    }
    const int64_t khw = d->kh * d->kw, kq = (icg * khw + 3) / 4;
    const int64_t cc = chunk_channels(khw, nbp, tmp_bytes, 4);
    for (int64_t c0 = 0; c0 < icg; c0 += cc) {
        const int64_t n = icg - c0 < cc ? icg - c0 : cc;
        im2col(d, n, xg + c0 * d->ih * d->iw, zp, p0, cnt, nbp, tmp);
        pack_quads(n * khw, nbp, tmp, kq, c0 * khw / 4, out, colsum);
    }
}
