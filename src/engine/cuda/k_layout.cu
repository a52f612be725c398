/* Data movement: strided copies (Concat, Split, Slice, Transpose, copies), max pooling and
 * nearest upsampling. */
#include <math.h>

#include "engine/cuda/k_common.cuh"

namespace
{

using eb_cuk::ld;
using eb_cuk::st;

template <typename E> __global__ void k_copy_nd(int n, eb_cuk_copy c, const E *x, E *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int rem = i;
        int64_t xi = c.x_off, yi = c.y_off;
        for (int d = c.rank - 1; d >= 0; d--) {
            const int idx = rem % c.shape[d];
            rem /= c.shape[d];
            xi += (int64_t)idx * c.xs[d];
            yi += (int64_t)idx * c.ys[d];
        }
        y[yi] = x[xi];
    }
}

/* Orders the dims by y's strides, largest first (y is written in memory order), merges
 * neighbouring dims that are contiguous in both x and y, drops size-1 dims. */
static eb_cuk_copy coalesce(const eb_cuk_copy *in0)
{
    eb_cuk_copy sorted = *in0;
    for (int d = 1; d < sorted.rank; d++) /* insertion sort: stable, rank <= 8 */
        for (int j = d; j > 0 && sorted.ys[j - 1] < sorted.ys[j]; j--) {
            const int32_t sh = sorted.shape[j], xs = sorted.xs[j], ys = sorted.ys[j];
            sorted.shape[j] = sorted.shape[j - 1];
            sorted.xs[j] = sorted.xs[j - 1];
            sorted.ys[j] = sorted.ys[j - 1];
            sorted.shape[j - 1] = sh;
            sorted.xs[j - 1] = xs;
            sorted.ys[j - 1] = ys;
        }
    const eb_cuk_copy *in = &sorted;
    eb_cuk_copy c = sorted;
    int r = 0;
    for (int d = 0; d < in->rank; d++) {
        if (in->shape[d] == 1)
            continue;
        if (r > 0 && c.xs[r - 1] == in->xs[d] * in->shape[d] &&
            c.ys[r - 1] == in->ys[d] * in->shape[d]) {
            c.shape[r - 1] *= in->shape[d];
            c.xs[r - 1] = in->xs[d];
            c.ys[r - 1] = in->ys[d];
            continue;
        }
        c.shape[r] = in->shape[d];
        c.xs[r] = in->xs[d];
        c.ys[r] = in->ys[d];
        r++;
    }
    c.rank = r;
    return c;
}

template <typename E>
cudaError_t copy_nd(cudaStream_t s, const eb_cuk_copy *c, int64_t n, const void *x, void *y)
{
    k_copy_nd<E>
        <<<eb_cuk::blocks_for(n), eb_cuk::kThreads, 0, s>>>((int)n, *c, (const E *)x, (E *)y);
    return cudaGetLastError();
}

template <typename T> __global__ void k_maxpool(int n, eb_cuk_pool p, const T *x, T *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int ox, oy, sy, sx;
        const T *xp;
        if (p.nhwc) { /* i = ((n oh + oy) ow + ox) c + ch */
            const int ch = i % p.c, r = i / p.c;
            ox = r % p.ow;
            oy = (r / p.ow) % p.oh;
            xp = x + (int64_t)(r / (p.ow * p.oh)) * p.ih * p.iw * p.c + ch;
            sy = p.iw * p.c;
            sx = p.c;
        } else {
            ox = i % p.ow;
            oy = (i / p.ow) % p.oh;
            xp = x + (int64_t)(i / (p.ow * p.oh)) * p.ih * p.iw;
            sy = p.iw;
            sx = 1;
        }
        float m = -INFINITY;
        for (int ky = 0; ky < p.kh; ky++) {
            const int iy = oy * p.sh - p.pt + ky * p.dh;
            if (iy < 0 || iy >= p.ih)
                continue;
            for (int kx = 0; kx < p.kw; kx++) {
                const int ix = ox * p.sw - p.pl + kx * p.dw;
                if (ix < 0 || ix >= p.iw)
                    continue;
                const float v = ld(xp, iy * sy + ix * sx);
                if (v > m || v != v) /* as the reference: a NaN is kept (nothing is > NaN) */
                    m = v;
            }
        }
        st(y, i, m);
    }
}

template <typename T>
cudaError_t maxpool(cudaStream_t s, const eb_cuk_pool *p, const void *x, void *y)
{
    const int64_t n = (int64_t)p->n * p->c * p->oh * p->ow;
    if (n <= 0)
        return cudaSuccess;
    k_maxpool<T>
        <<<eb_cuk::blocks_for(n), eb_cuk::kThreads, 0, s>>>((int)n, *p, (const T *)x, (T *)y);
    return cudaGetLastError();
}

template <typename T>
__global__ void k_upsample(int n, int h, int w, int fh, int fw, const T *x, T *y)
{
    const int ow = w * fw, oh = h * fh;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int ox = i % ow, oy = (i / ow) % oh, plane = i / (ow * oh);
        y[i] = x[((int64_t)plane * h + oy / fh) * w + ox / fw];
    }
}

template <typename T>
cudaError_t upsample(cudaStream_t s, int64_t nc, int64_t h, int64_t w, int64_t fh, int64_t fw,
                     const void *x, void *y)
{
    const int64_t n = nc * h * fh * w * fw;
    if (n <= 0)
        return cudaSuccess;
    k_upsample<T><<<eb_cuk::blocks_for(n), eb_cuk::kThreads, 0, s>>>(
        (int)n, (int)h, (int)w, (int)fh, (int)fw, (const T *)x, (T *)y);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t eb_cuk_copy_nd(cudaStream_t s, int es, const struct eb_cuk_copy *c0,
                                      const void *x, void *y)
{
    eb_cuk_copy c = coalesce(c0);
    int64_t n = 1;
    for (int d = 0; d < c.rank; d++)
        n *= c.shape[d];
    if (n <= 0)
        return cudaSuccess;
    /* One contiguous run: a plain copy. */
    if (c.rank == 0 || (c.rank == 1 && c.xs[0] == 1 && c.ys[0] == 1))
        return cudaMemcpyAsync((char *)y + c.y_off * es, (const char *)x + c.x_off * es,
                               (size_t)n * (size_t)es, cudaMemcpyDeviceToDevice, s);
    /* Wider elements where every run, stride, offset and pointer allows (channels-last
     * Concat/Split copy rows of C channels): up to 16 bytes per thread. */
    if (c.rank >= 1 && c.xs[c.rank - 1] == 1 && c.ys[c.rank - 1] == 1) {
        int w = 16;
        while (w > es) {
            const int f = w / es;
            int ok = c.shape[c.rank - 1] % f == 0 && c.x_off % f == 0 && c.y_off % f == 0 &&
                     ((uintptr_t)x % (uintptr_t)w) == 0 && ((uintptr_t)y % (uintptr_t)w) == 0;
            for (int d = 0; ok && d < c.rank - 1; d++)
                ok = c.xs[d] % f == 0 && c.ys[d] % f == 0;
            if (ok)
                break;
            w /= 2;
        }
        if (w > es) {
            const int f = w / es;
            c.shape[c.rank - 1] /= f;
            for (int d = 0; d < c.rank - 1; d++)
                c.xs[d] /= f, c.ys[d] /= f;
            c.x_off /= f;
            c.y_off /= f;
            n /= f;
            es = w;
        }
    }
    switch (es) {
    case 16: return copy_nd<uint4>(s, &c, n, x, y);
    case 1: return copy_nd<uint8_t>(s, &c, n, x, y);
    case 2: return copy_nd<uint16_t>(s, &c, n, x, y);
    case 4: return copy_nd<uint32_t>(s, &c, n, x, y);
    case 8: return copy_nd<uint64_t>(s, &c, n, x, y);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t eb_cuk_maxpool(cudaStream_t s, enum eb_cuk_dt dt,
                                      const struct eb_cuk_pool *p, const void *x, void *y)
{
    return EB_CUK_DISPATCH(dt, maxpool, s, p, x, y);
}

extern "C" cudaError_t eb_cuk_upsample(cudaStream_t s, enum eb_cuk_dt dt, int64_t nc, int64_t h,
                                       int64_t w, int64_t fh, int64_t fw, const void *x, void *y)
{
    return EB_CUK_DISPATCH(dt, upsample, s, nc, h, w, fh, fw, x, y);
}
