/* Reference elementwise kernels: activations, Softmax, broadcast binary arithmetic, Cast. */
#include <math.h>
#include <string.h>

#include "engine/cpu/ref/ref.h"

void eb_cpu_sigmoid_f32__ref(int64_t n, const float *x, float *y)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = 1.0f / (1.0f + expf(-x[i]));
}

void eb_cpu_unary_f32__ref(enum eb_unop op, int64_t n, const float *x, float a, float b, float *y)
{
    if (op == EB_UNOP_CLIP) { /* the switch's case below, in a loop of its own (vectorised) */
        for (int64_t i = 0; i < n; i++) {
            const float r = x[i] < a ? a : x[i];
            y[i] = r > b ? b : r;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i];
        float r = v;
        switch (op) {
        case EB_UNOP_RELU: r = v < 0.0f ? 0.0f : v; break;
        case EB_UNOP_LEAKY_RELU: r = v < 0.0f ? a * v : v; break;
        case EB_UNOP_CLIP: /* min(max(x, lo), hi), as ONNX: hi wins when lo > hi */
            r = v < a ? a : v;
            r = r > b ? b : r;
            break;
        case EB_UNOP_HARD_SIGMOID:
            r = a * v + b;
            r = r < 0.0f ? 0.0f : (r > 1.0f ? 1.0f : r);
            break;
        case EB_UNOP_HARD_SWISH:
            r = v / 6.0f + 0.5f;
            r = v * (r < 0.0f ? 0.0f : (r > 1.0f ? 1.0f : r));
            break;
        case EB_UNOP_EXP: r = expf(v); break;
        case EB_UNOP_SQRT: r = sqrtf(v); break;
        case EB_UNOP_TANH: r = tanhf(v); break;
        }
        y[i] = r;
    }
}

void eb_cpu_softmax_f32__ref(int64_t outer, int64_t axis, int64_t inner, const float *x, float *y)
{
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            const float *xp = x + o * axis * inner + in;
            float *yp = y + o * axis * inner + in;
            float m = -INFINITY, s = 0.0f;
            for (int64_t a = 0; a < axis; a++)
                m = xp[a * inner] > m ? xp[a * inner] : m;
            for (int64_t a = 0; a < axis; a++) {
                yp[a * inner] = expf(xp[a * inner] - m);
                s += yp[a * inner];
            }
            for (int64_t a = 0; a < axis; a++)
                yp[a * inner] /= s;
        }
    }
}

#define BIN_LOOP(T, EXPR)                                                                          \
    do {                                                                                           \
        const T *pa = a, *pb = b;                                                                  \
        T *py = y;                                                                                 \
        for (int64_t o = 0; o < outer; o++) {                                                      \
            int64_t ao = 0, bo = 0, rem = o;                                                       \
            for (int d = rank - 2; d >= 0; d--) {                                                  \
                int64_t i = rem % y_shape[d];                                                      \
                rem /= y_shape[d];                                                                 \
                ao += i * as[d];                                                                   \
                bo += i * bs[d];                                                                   \
            }                                                                                      \
            const T *ra = pa + ao, *rb = pb + bo;                                                  \
            T *ry = py + o * last;                                                                 \
            for (int64_t j = 0; j < last; j++) {                                                   \
                T va = ra[j * as_last], vb = rb[j * bs_last];                                      \
                ry[j] = (EXPR);                                                                    \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#define BIN_OPS(T, DIVEXPR, POWEXPR)                                                               \
    switch (op) {                                                                                  \
    case EB_BINOP_ADD: BIN_LOOP(T, va + vb); break;                                                \
    case EB_BINOP_SUB: BIN_LOOP(T, va - vb); break;                                                \
    case EB_BINOP_MUL: BIN_LOOP(T, va *vb); break;                                                 \
    case EB_BINOP_DIV: BIN_LOOP(T, DIVEXPR); break;                                                \
    case EB_BINOP_POW: BIN_LOOP(T, POWEXPR); break;                                                \
    }

void eb_cpu_binary__ref(enum eb_binop op, enum eb_dtype dt, int rank, const int64_t *a_shape,
                        const void *a, const int64_t *b_shape, const void *b,
                        const int64_t *y_shape, void *y)
{
    int64_t as[EB_MAX_RANK], bs[EB_MAX_RANK], sa = 1, sb = 1, outer = 1;
    if (rank == 0) {
        static const int64_t one = 1;
        rank = 1;
        a_shape = b_shape = y_shape = &one;
    }
    for (int d = rank - 1; d >= 0; d--) {
        as[d] = a_shape[d] == 1 ? 0 : sa;
        bs[d] = b_shape[d] == 1 ? 0 : sb;
        sa *= a_shape[d];
        sb *= b_shape[d];
    }
    for (int d = 0; d < rank - 1; d++)
        outer *= y_shape[d];
    const int64_t last = y_shape[rank - 1], as_last = as[rank - 1], bs_last = bs[rank - 1];
    switch (dt) {
    case EB_DTYPE_F32: BIN_OPS(float, va / vb, powf(va, vb)); break;
    case EB_DTYPE_I64: BIN_OPS(int64_t, vb == 0 ? 0 : va / vb, ((void)va, (void)vb, 0)); break;
    case EB_DTYPE_I32: BIN_OPS(int32_t, vb == 0 ? 0 : va / vb, ((void)va, (void)vb, 0)); break;
    default: break;
    }
}

static double load(enum eb_dtype dt, const void *x, int64_t i)
{
    switch (dt) {
    case EB_DTYPE_F32: return ((const float *)x)[i];
    case EB_DTYPE_F64: return ((const double *)x)[i];
    case EB_DTYPE_U8: return ((const uint8_t *)x)[i];
    case EB_DTYPE_I8: return ((const int8_t *)x)[i];
    case EB_DTYPE_I32: return ((const int32_t *)x)[i];
    case EB_DTYPE_I64: return (double)((const int64_t *)x)[i];
    case EB_DTYPE_BOOL: return ((const uint8_t *)x)[i] != 0;
    default: return 0.0;
    }
}

/* Float → integer conversion that never invokes undefined behaviour (NaN/out of range → 0 or
 * the nearest representable bound). */
static int64_t to_i64(double v, double lo, double hi)
{
    if (!(v == v))
        return 0;
    if (v < lo)
        return (int64_t)lo;
    if (v > hi)
        return (int64_t)hi;
    return (int64_t)v;
}

void eb_cpu_cast__ref(int64_t n, enum eb_dtype from, const void *x, enum eb_dtype to, void *y)
{
    if (from == to) {
        memcpy(y, x, (size_t)n * eb_dtype_size(to));
        return;
    }
    if (from == EB_DTYPE_I64 && to == EB_DTYPE_F32) { /* the loop below's conversion, unswitched
                                                         (a decoder's mask: positions to float) */
        for (int64_t i = 0; i < n; i++)
            ((float *)y)[i] = (float)(double)((const int64_t *)x)[i];
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (from == EB_DTYPE_I64 && to != EB_DTYPE_F32 && to != EB_DTYPE_F64) {
            int64_t v = ((const int64_t *)x)[i];
            switch (to) {
            case EB_DTYPE_U8: ((uint8_t *)y)[i] = (uint8_t)v; break;
            case EB_DTYPE_I8: ((int8_t *)y)[i] = (int8_t)v; break;
            case EB_DTYPE_I32: ((int32_t *)y)[i] = (int32_t)v; break;
            case EB_DTYPE_BOOL: ((uint8_t *)y)[i] = v != 0; break;
            default: break;
            }
            continue;
        }
        double v = load(from, x, i);
        switch (to) {
        case EB_DTYPE_F32: ((float *)y)[i] = (float)v; break;
        case EB_DTYPE_F64: ((double *)y)[i] = v; break;
        case EB_DTYPE_U8: ((uint8_t *)y)[i] = (uint8_t)to_i64(v, 0, 255); break;
        case EB_DTYPE_I8: ((int8_t *)y)[i] = (int8_t)to_i64(v, -128, 127); break;
        case EB_DTYPE_I32:
            ((int32_t *)y)[i] = (int32_t)to_i64(v, -2147483648.0, 2147483647.0);
            break;
        case EB_DTYPE_I64:
            ((int64_t *)y)[i] = to_i64(v, -9223372036854775808.0, 9223372036854774784.0);
            break;
        case EB_DTYPE_BOOL: ((uint8_t *)y)[i] = v != 0.0; break;
        default: break;
        }
    }
}
