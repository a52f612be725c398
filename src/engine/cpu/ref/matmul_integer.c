/* Reference integer matrix product (MatMulInteger): i-k-j order, 64-bit accumulation wrapped to
 * int32 as ONNX's int32 accumulator does. */
#include "engine/cpu/ref/ref.h"

static int32_t load_x8(const uint8_t *p, int64_t i, int is_signed)
{
    return is_signed ? (int32_t)(int8_t)p[i] : (int32_t)p[i];
}

void eb_cpu_matmul_x8_i32__ref(const struct eb_matmul_x8_desc *d, const uint8_t *a,
                               const uint8_t *b, int32_t *y)
{
    const uint8_t *az = d->a_zp, *bz = d->b_zp;
    for (int64_t i = 0; i < d->m; i++) {
        int32_t *yr = y + i * d->n;
        const int32_t za = az != NULL ? load_x8(az, d->a_zp_per_row ? i : 0, d->a_signed) : 0;
        for (int64_t j = 0; j < d->n; j++) {
            int64_t acc = 0;
            for (int64_t p = 0; p < d->k; p++) {
                const int32_t zb =
                    bz != NULL ? load_x8(bz, d->b_zp_per_col ? j : 0, d->b_signed) : 0;
                acc += (int64_t)(load_x8(a, i * d->k + p, d->a_signed) - za) *
                       (int64_t)(load_x8(b, p * d->n + j, d->b_signed) - zb);
            }
            yr[j] = (int32_t)(uint32_t)(uint64_t)acc;
        }
    }
}
