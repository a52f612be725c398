/* Placeholder: the packed SGEMM and fast convolution land this session; until then the
 * reference kernels run. */
#include <string.h>

#include "engine/cpu/fast.h"

enum eb_status eb_cpu_conv2d_f32_prepare(const struct eb_conv2d_desc *d, const float *w,
                                         const float *bias, enum eb_cpu_isa isa, int n_workers,
                                         struct eb_ir_arena *arena,
                                         struct eb_conv2d_f32_plan **plan_out,
                                         size_t *scratch_bytes_out, size_t *packed_bytes_out)
{
    (void)d, (void)w, (void)bias, (void)isa, (void)n_workers, (void)arena;
    *plan_out = NULL;
    *scratch_bytes_out = 0;
    *packed_bytes_out = 0;
    return EB_OK;
}

void eb_cpu_conv2d_f32_run(const struct eb_conv2d_f32_plan *plan, const struct eb_epilogue *epi,
                           const struct eb_cpu_exec *x, const float *in, const float *residual,
                           float *y)
{
    (void)plan, (void)epi, (void)x, (void)in, (void)residual, (void)y;
}

void eb_cpu_matmul_f32(const struct eb_cpu_exec *x, int64_t batch, int64_t m, int64_t k,
                       int64_t n, const float *a, int64_t a_stride, const float *b,
                       int64_t b_stride, float *y)
{
    (void)x;
    for (int64_t i = 0; i < batch; i++)
        eb_cpu_matmul_f32__ref(m, k, n, a + i * a_stride, b + i * b_stride, y + i * m * n);
}

size_t eb_cpu_matmul_f32_scratch(int64_t m, int64_t k, int64_t n, int n_workers)
{
    (void)m, (void)k, (void)n, (void)n_workers;
    return 0;
}
