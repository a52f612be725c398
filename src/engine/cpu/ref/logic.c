/* Reference kernels of comparison, logic, selection and unary math (Equal, LessOrEqual, And,
 * Where, Neg, Cos, Sin, IsNaN), Range and ConstantOfShape's fill. */
#include <math.h>
#include <string.h>

#include "engine/cpu/ref/ref.h"

/* Element strides of a `rank`-dim shape broadcast to the output: 0 along a dim of size 1. */
static void bcast_strides(int rank, const int64_t *shape, int64_t *st)
{
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        st[d] = shape[d] == 1 ? 0 : s;
        s *= shape[d];
    }
}

/* Offsets of element `o` (row-major in y_shape) in up to three broadcast inputs. */
static void bcast_offsets(int rank, const int64_t *y_shape, int64_t o, int k,
                          const int64_t (*st)[EB_MAX_RANK], int64_t *off)
{
    for (int j = 0; j < k; j++)
        off[j] = 0;
    for (int d = rank - 1; d >= 0; d--) {
        const int64_t i = o % y_shape[d];
        o /= y_shape[d];
        for (int j = 0; j < k; j++)
            off[j] += i * st[j][d];
    }
}

static int64_t numel_of(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    return n;
}

#define CMP_LOOP(T, EXPR)                                                                          \
    do {                                                                                           \
        const T *pa = a, *pb = b;                                                                  \
        for (int64_t o = 0; o < n; o++) {                                                          \
            int64_t off[2];                                                                        \
            bcast_offsets(rank, y_shape, o, 2, st, off);                                           \
            const T va = pa[off[0]], vb = pb[off[1]];                                              \
            y[o] = (uint8_t)(EXPR);                                                                \
        }                                                                                          \
    } while (0)

#define CMP_TYPES(EXPR)                                                                            \
    switch (dt) {                                                                                  \
    case EB_DTYPE_F32: CMP_LOOP(float, EXPR); break;                                               \
    case EB_DTYPE_I64: CMP_LOOP(int64_t, EXPR); break;                                             \
    case EB_DTYPE_I32: CMP_LOOP(int32_t, EXPR); break;                                             \
    case EB_DTYPE_BOOL: CMP_LOOP(uint8_t, EXPR); break;                                            \
    default: break;                                                                                \
    }

void eb_cpu_compare__ref(enum eb_cmpop op, enum eb_dtype dt, int rank, const int64_t *a_shape,
                         const void *a, const int64_t *b_shape, const void *b,
                         const int64_t *y_shape, uint8_t *y)
{
    int64_t st[2][EB_MAX_RANK];
    bcast_strides(rank, a_shape, st[0]);
    bcast_strides(rank, b_shape, st[1]);
    const int64_t n = numel_of(rank, y_shape);
    switch (op) {
    case EB_CMPOP_EQUAL: CMP_TYPES(va == vb); break;
    case EB_CMPOP_LESS_EQUAL: CMP_TYPES(va <= vb); break;
    case EB_CMPOP_AND: CMP_TYPES(va != 0 && vb != 0); break;
    }
}

void eb_cpu_where__ref(size_t es, int rank, const int64_t *c_shape, const uint8_t *cond,
                       const int64_t *x_shape, const void *x, const int64_t *z_shape, const void *z,
                       const int64_t *y_shape, void *y)
{
    int64_t st[3][EB_MAX_RANK];
    bcast_strides(rank, c_shape, st[0]);
    bcast_strides(rank, x_shape, st[1]);
    bcast_strides(rank, z_shape, st[2]);
    const int64_t n = numel_of(rank, y_shape);
    const unsigned char *px = x, *pz = z;
    unsigned char *py = y;
    for (int64_t o = 0; o < n; o++) {
        int64_t off[3];
        bcast_offsets(rank, y_shape, o, 3, st, off);
        const unsigned char *src =
            cond[off[0]] ? px + (size_t)off[1] * es : pz + (size_t)off[2] * es;
        memcpy(py + (size_t)o * es, src, es);
    }
}

void eb_cpu_math__ref(enum eb_mathop op, enum eb_dtype dt, int64_t n, const void *x, void *y)
{
    const float *xf = x;
    float *yf = y;
    switch (op) {
    case EB_MATHOP_NEG:
        for (int64_t i = 0; i < n; i++) {
            if (dt == EB_DTYPE_F32)
                yf[i] = -xf[i];
            else if (dt == EB_DTYPE_I64) /* two's complement wrap, no signed overflow */
                ((int64_t *)y)[i] = (int64_t)(0u - (uint64_t)((const int64_t *)x)[i]);
            else if (dt == EB_DTYPE_I32)
                ((int32_t *)y)[i] = (int32_t)(0u - (uint32_t)((const int32_t *)x)[i]);
        }
        break;
    case EB_MATHOP_COS:
        for (int64_t i = 0; i < n; i++)
            yf[i] = cosf(xf[i]);
        break;
    case EB_MATHOP_SIN:
        for (int64_t i = 0; i < n; i++)
            yf[i] = sinf(xf[i]);
        break;
    case EB_MATHOP_ISNAN:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)y)[i] = (uint8_t)isnan(xf[i]);
        break;
    }
}

void eb_cpu_range__ref(enum eb_dtype dt, int64_t n, const void *start, const void *delta, void *y)
{
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case EB_DTYPE_F32: /* as ONNX's reference: start + i * delta, in float */
            ((float *)y)[i] = *(const float *)start + (float)i * *(const float *)delta;
            break;
        case EB_DTYPE_I64: {
            /* In uint64: i * delta may leave int64 on the way while the sum is in range. */
            const uint64_t s0 = (uint64_t) * (const int64_t *)start;
            const uint64_t d0 = (uint64_t) * (const int64_t *)delta;
            ((int64_t *)y)[i] = (int64_t)(s0 + (uint64_t)i * d0);
            break;
        }
        case EB_DTYPE_I32:
            ((int32_t *)y)[i] =
                (int32_t)(*(const int32_t *)start + (int64_t)i * *(const int32_t *)delta);
            break;
        default: break;
        }
    }
}

void eb_cpu_fill__ref(size_t es, int64_t n, const void *value, void *y)
{
    for (int64_t i = 0; i < n; i++)
        memcpy((unsigned char *)y + (size_t)i * es, value, es);
}
