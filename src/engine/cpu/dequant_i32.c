/*
 * edgebench.DequantizeI32's kernel (dequant_i32.h): one pass over the int32 planes. Per plane
 * row the conversion and scale run in baseline SIMD (SSE2 on x86-64, NEON on aarch64: no
 * dispatch needed), then the ISA's tile epilogue (gemm.h) adds the bias and applies the
 * activation in place; with EB_CPU_ISA_REF both steps are the scalar reference.
 */
#include "engine/cpu/dequant_i32.h"

#include "engine/cpu/gemm.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

/* Planes per task: enough work per task to hide the dispatch, at least a few tasks per worker. */
#define DQ_TASK_ELEMS (32 * 1024)

struct dq_ctx {
    const struct eb_dequant_i32_args *a;
    struct eb_sgemm_ukernel uk;
    int fast;
    int64_t planes_per_task, n_planes;
};

/* y[i] = (float)x[i] * s: the conversion is exact below 2^24 and rounds to nearest above, as
 * the reference cast does; the product is one float multiply. */
static void convert_row(int fast, int64_t n, const int32_t *x, float s, float *y)
{
    int64_t i = 0;
    if (fast) {
#if defined(__SSE2__)
        const __m128 sv = _mm_set1_ps(s);
        for (; i + 4 <= n; i += 4)
            _mm_storeu_ps(
                y + i, _mm_mul_ps(_mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)(x + i))), sv));
#elif defined(__aarch64__)
        const float32x4_t sv = vdupq_n_f32(s);
        for (; i + 4 <= n; i += 4)
            vst1q_f32(y + i, vmulq_f32(vcvtq_f32_s32(vld1q_s32(x + i)), sv));
#endif
    }
    for (; i < n; i++)
        y[i] = (float)x[i] * s;
}

static void dq_task(void *vctx, size_t task, int worker)
{
    const struct dq_ctx *c = vctx;
    const struct eb_dequant_i32_args *a = c->a;
    const int64_t p0 = (int64_t)task * c->planes_per_task;
    const int64_t p1 =
        p0 + c->planes_per_task < c->n_planes ? p0 + c->planes_per_task : c->n_planes;
    (void)worker;
    for (int64_t p = p0; p < p1; p++) {
        const int64_t ch = p % a->channels;
        const size_t off = (size_t)(p * a->inner);
        float *y = a->y + off;
        const float *bias = a->bias != NULL ? a->bias + ch : NULL;
        const float *r = a->epi->residual ? a->residual + off : NULL;
        convert_row(c->fast, a->inner, a->x + off, a->scales != NULL ? a->scales[ch] : a->scale, y);
        if (c->fast)
            c->uk.epilogue(a->epi, bias, 1, a->inner, y, a->inner, y, a->inner, r, a->inner);
        else
            eb_cpu__epilogue_tile_f32(a->epi, bias, 1, a->inner, y, a->inner, y, a->inner, r,
                                      a->inner);
    }
}

void eb_cpu_dequantize_i32(const struct eb_cpu_exec *cpu, const struct eb_dequant_i32_args *a)
{
    struct dq_ctx c = {.a = a, .n_planes = a->n * a->channels};
    if (c.n_planes <= 0 || a->inner <= 0)
        return;
    c.fast = cpu->isa != EB_CPU_ISA_REF && eb_cpu__sgemm_select(cpu->isa, &c.uk);
    c.planes_per_task = DQ_TASK_ELEMS / a->inner;
    c.planes_per_task = c.planes_per_task < 1 ? 1 : c.planes_per_task;
    const int64_t workers = cpu->n_workers < 1 ? 1 : cpu->n_workers;
    while (c.planes_per_task > 1 &&
           (c.n_planes + c.planes_per_task - 1) / c.planes_per_task < 4 * workers)
        c.planes_per_task /= 2;
    const size_t tasks = (size_t)((c.n_planes + c.planes_per_task - 1) / c.planes_per_task);
    eb_threadpool_run(cpu->pool, tasks, dq_task, &c);
}
