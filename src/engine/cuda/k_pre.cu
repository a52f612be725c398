/* Preprocessing on the device: an 8-bit RGB frame letterboxed into the model input. */
#include <math.h>

#include "engine/cuda/k_common.cuh"

namespace
{

using eb_cuk::st;

/* OpenCV INTER_LINEAR's source coordinate of destination index d (half-pixel centres, edge
 * clamped), computed exactly as the CPU reference (src/yolo/letterbox.c linear_coord): the
 * scale in double, the coordinate rounded to float. */
__device__ __forceinline__ void linear_coord(int d, int src_n, int dst_n, int *i0, int *i1,
                                             float *frac)
{
    const double scale = 1.0 / ((double)dst_n / (double)src_n);
    float f = (float)(((double)d + 0.5) * scale - 0.5);
    int s = (int)floorf(f);
    f -= (float)s;
    if (s < 0) {
        s = 0;
        f = 0.0f;
    }
    if (s >= src_n - 1) {
        s = src_n - 1;
        f = 0.0f;
    }
    *i0 = s;
    *i1 = s + 1 < src_n ? s + 1 : s;
    *frac = f;
}

/* One thread per destination pixel: all its channels. */
template <typename T>
__global__ void k_letterbox(struct eb_cuk_letterbox p, const uint8_t *__restrict__ src,
                            T *__restrict__ y)
{
    eb_cuk::pdl_begin();
    const int n = p.dst_w * p.dst_h;
    const int64_t plane = n;
    const float pad = 114.0f / 255.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int x = i % p.dst_w, yy = i / p.dst_w;
        const int ix = x - p.pad_left, iy = yy - p.pad_top;
        float v[3] = {pad, pad, pad};
        if (ix >= 0 && ix < p.new_w && iy >= 0 && iy < p.new_h) {
            int sx0, sx1, sy0, sy1;
            float fx, fy;
            linear_coord(ix, p.src_w, p.new_w, &sx0, &sx1, &fx);
            linear_coord(iy, p.src_h, p.new_h, &sy0, &sy1, &fy);
            const uint8_t *r0 = src + (int64_t)sy0 * p.src_stride;
            const uint8_t *r1 = src + (int64_t)sy1 * p.src_stride;
            for (int c = 0; c < p.channels; c++) {
                const float p00 = r0[sx0 * 3 + c], p01 = r0[sx1 * 3 + c];
                const float p10 = r1[sx0 * 3 + c], p11 = r1[sx1 * 3 + c];
                const float top = (1.0f - fx) * p00 + fx * p01;
                const float bot = (1.0f - fx) * p10 + fx * p11;
                v[c] = ((1.0f - fy) * top + fy * bot) / 255.0f;
            }
        }
        for (int c = 0; c < p.channels; c++) {
            const int64_t o = p.nhwc ? (int64_t)i * p.channels + c : c * plane + i;
            st(y, (int)o, v[c]);
        }
    }
}

template <typename T>
cudaError_t letterbox(cudaStream_t s, const struct eb_cuk_letterbox *p, const uint8_t *src, void *y)
{
    const int64_t n = (int64_t)p->dst_w * p->dst_h;
    eb_cuk::launch(k_letterbox<T>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, *p, src, (T *)y);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t eb_cuk_letterbox(cudaStream_t s, enum eb_cuk_dt dt,
                                        const struct eb_cuk_letterbox *p, const uint8_t *src,
                                        void *y)
{
    return EB_CUK_DISPATCH(dt, letterbox, s, p, src, y);
}

namespace
{

/* One thread per anchor; the class scores of consecutive anchors are contiguous (coalesced).
 * (A template, as every kernel here: nvcc gives a plain kernel's launch stub external linkage
 * even in an anonymous namespace.) */
template <typename T>
__global__ void k_head_rows(int32_t nc, int32_t n, float conf, const T *__restrict__ x,
                            int32_t *count, int32_t *rows)
{
    eb_cuk::pdl_begin();
    for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < n; a += gridDim.x * blockDim.x) {
        const T *p = x + (int64_t)4 * n + a;
        float best = p[0];
        int cls = 0;
        for (int c = 1; c < nc; c++) {
            const float v = p[(int64_t)c * n];
            if (v > best) {
                best = v;
                cls = c;
            }
        }
        if (!(best > conf))
            continue;
        const int i = atomicAdd(count, 1);
        int32_t *r = rows + (int64_t)i * 7;
        r[0] = a;
        r[1] = cls;
        r[2] = __float_as_int(best);
        for (int k = 0; k < 4; k++)
            r[3 + k] = __float_as_int(x[(int64_t)k * n + a]);
    }
}

} // namespace

extern "C" cudaError_t eb_cuk_head_rows(cudaStream_t s, int32_t nc, int32_t n, float conf,
                                        const float *x, int32_t *count, void *rows)
{
    eb_cuk::launch(k_head_rows<float>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, nc, n, conf, x,
                   count, (int32_t *)rows);
    return cudaGetLastError();
}
