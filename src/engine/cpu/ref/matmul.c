/* Reference matrix product, i-k-j order so the inner loop runs over contiguous rows of b and y. */
#include "engine/cpu/ref/ref.h"

void eb_cpu_matmul_f32__ref(int64_t m, int64_t k, int64_t n, const float *a, const float *b,
                            float *y)
{
    for (int64_t i = 0; i < m; i++) {
        float *yr = y + i * n;
        for (int64_t j = 0; j < n; j++)
            yr[j] = 0.0f;
        for (int64_t p = 0; p < k; p++) {
            const float av = a[i * k + p];
            const float *br = b + p * n;
            for (int64_t j = 0; j < n; j++)
                yr[j] += av * br[j];
        }
    }
}

void eb_cpu_gemm_f32__ref(int64_t m, int64_t k, int64_t n, int trans_a, int trans_b, float alpha,
                          const float *a, const float *b, float beta, const float *c, int64_t c_sm,
                          int64_t c_sn, float *y)
{
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            float s = 0.0f;
            for (int64_t p = 0; p < k; p++) {
                const float av = trans_a ? a[p * m + i] : a[i * k + p];
                const float bv = trans_b ? b[j * k + p] : b[p * n + j];
                s += av * bv;
            }
            s *= alpha;
            if (c != NULL)
                s += beta * c[i * c_sm + j * c_sn];
            y[i * n + j] = s;
        }
    }
}
