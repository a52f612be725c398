/* Data movement: strided copies (Concat, Split, Slice, Transpose, copies), max pooling and
 * nearest upsampling. */
#include <math.h>

#include "engine/cuda/k_common.cuh"

namespace
{

using eb_cuk::ld;
using eb_cuk::st;

/* Element i of copy c (in y's memory order): its offsets in x and y. */
__device__ __forceinline__ void offsets(const eb_cuk_copy &c, int i, int64_t *xi, int64_t *yi)
{
    int rem = i;
    *xi = c.x_off;
    *yi = c.y_off;
    for (int d = c.rank - 1; d >= 0; d--) {
        const int idx = rem % c.shape[d];
        rem /= c.shape[d];
        *xi += (int64_t)idx * c.xs[d];
        *yi += (int64_t)idx * c.ys[d];
    }
}

template <typename E> __global__ void k_copy_nd(int n, eb_cuk_copy c, const E *x, E *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int64_t xi, yi;
        offsets(c, i, &xi, &yi);
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
    eb_cuk::launch(k_copy_nd<E>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n, *c,
                   (const E *)x, (E *)y);
    return cudaGetLastError();
}

template <typename T> __global__ void k_maxpool(int n, eb_cuk_pool p, const T *x, T *y)
{
    eb_cuk::pdl_begin();
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
    eb_cuk::launch(k_maxpool<T>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n, *p,
                   (const T *)x, (T *)y);
    return cudaGetLastError();
}

template <typename T>
__global__ void k_upsample(int n, int h, int w, int fh, int fw, const T *x, T *y)
{
    eb_cuk::pdl_begin();
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
    eb_cuk::launch(k_upsample<T>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n, (int)h,
                   (int)w, (int)fh, (int)fw, (const T *)x, (T *)y);
    return cudaGetLastError();
}

} // namespace

/* Coalesces copy c (n elements of es bytes) and widens its elements where every run, stride,
 * offset and pointer allows (channels-last Concat/Split copy rows of C channels): up to
 * `max_w` bytes per thread. Returns the element width; c and n in those elements. */
static int prepare(eb_cuk_copy *c, int64_t *n, int es, int max_w, const void *x, const void *y)
{
    *c = coalesce(c);
    *n = 1;
    for (int d = 0; d < c->rank; d++)
        *n *= c->shape[d];
    if (c->rank < 1 || c->xs[c->rank - 1] != 1 || c->ys[c->rank - 1] != 1)
        return es;
    int w = max_w;
    while (w > es) {
        const int f = w / es;
        int ok = c->shape[c->rank - 1] % f == 0 && c->x_off % f == 0 && c->y_off % f == 0 &&
                 ((uintptr_t)x % (uintptr_t)w) == 0 && ((uintptr_t)y % (uintptr_t)w) == 0;
        for (int d = 0; ok && d < c->rank - 1; d++)
            ok = c->xs[d] % f == 0 && c->ys[d] % f == 0;
        if (ok)
            break;
        w /= 2;
    }
    if (w > es) {
        const int f = w / es;
        c->shape[c->rank - 1] /= f;
        for (int d = 0; d < c->rank - 1; d++)
            c->xs[d] /= f, c->ys[d] /= f;
        c->x_off /= f;
        c->y_off /= f;
        *n /= f;
    }
    return w > es ? w : es;
}

/* A transpose: dim 0 contiguous in x, dim 1 contiguous in y, dims 2.. a batch (blockIdx.z).
 * Through 32x32 tiles in shared memory, so that both the reads and the writes are coalesced. */
template <typename E> __global__ void k_transpose(eb_cuk_copy c, const E *x, E *y)
{
    eb_cuk::pdl_begin();
    __shared__ E tile[32][33];
    int64_t xb = c.x_off, yb = c.y_off;
    for (int d = c.rank - 1, b = (int)blockIdx.z; d >= 2; d--) {
        xb += (int64_t)(b % c.shape[d]) * c.xs[d];
        yb += (int64_t)(b % c.shape[d]) * c.ys[d];
        b /= c.shape[d];
    }
    const int i0 = blockIdx.x * 32 + threadIdx.x; /* along dim 0: x's contiguous dim */
    for (int k = threadIdx.y; k < 32; k += blockDim.y) {
        const int i1 = blockIdx.y * 32 + k;
        if (i0 < c.shape[0] && i1 < c.shape[1])
            tile[k][threadIdx.x] = x[xb + i0 + (int64_t)i1 * c.xs[1]];
    }
    __syncthreads();
    const int j1 = blockIdx.y * 32 + threadIdx.x; /* along dim 1: y's contiguous dim */
    for (int k = threadIdx.y; k < 32; k += blockDim.y) {
        const int j0 = blockIdx.x * 32 + k;
        if (j0 < c.shape[0] && j1 < c.shape[1])
            y[yb + (int64_t)j0 * c.ys[0] + j1] = tile[threadIdx.x][k];
    }
}

/* The same copy when y's contiguous dim is short (under 16: a few channels, as a 3-channel
 * image going channels-last): one thread per element of dim 0 writes its short row, the reads
 * of each column coalesced across the threads. */
template <typename E> __global__ void k_transpose_rows(int n, eb_cuk_copy c, const E *x, E *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int64_t xi = c.x_off, yi = c.y_off;
        int rem = i / c.shape[0];
        const int i0 = i % c.shape[0];
        for (int d = c.rank - 1; d >= 2; d--) {
            xi += (int64_t)(rem % c.shape[d]) * c.xs[d];
            yi += (int64_t)(rem % c.shape[d]) * c.ys[d];
            rem /= c.shape[d];
        }
        xi += i0;
        yi += (int64_t)i0 * c.ys[0];
        for (int j = 0; j < c.shape[1]; j++)
            y[yi + j] = x[xi + (int64_t)j * c.xs[1]];
    }
}

/* Copy c (coalesced) as a transpose when y's innermost dim is contiguous in y and some other dim
 * is contiguous in x: t gets that dim first, y's next, the rest after as the batch. 0 when c is
 * no such copy or its batch is too large for one grid. */
static int as_transpose(const eb_cuk_copy *c, eb_cuk_copy *t)
{
    const int r = c->rank, last = r - 1;
    if (r < 2 || c->ys[last] != 1 || c->xs[last] == 1)
        return 0;
    int a = -1;
    for (int d = 0; d < last && a < 0; d++)
        if (c->xs[d] == 1)
            a = d;
    if (a < 0)
        return 0;
    *t = *c;
    t->shape[0] = c->shape[a], t->xs[0] = c->xs[a], t->ys[0] = c->ys[a];
    t->shape[1] = c->shape[last], t->xs[1] = c->xs[last], t->ys[1] = c->ys[last];
    int64_t batch = 1;
    for (int d = 0, o = 2; d < last; d++) {
        if (d == a)
            continue;
        t->shape[o] = c->shape[d], t->xs[o] = c->xs[d], t->ys[o] = c->ys[d];
        batch *= c->shape[d];
        o++;
    }
    return batch <= 65535 && (c->shape[last] + 31) / 32 <= 65535;
}

template <typename E>
cudaError_t transpose(cudaStream_t s, const eb_cuk_copy *c, int64_t n, const void *x, void *y)
{
    if (c->shape[1] < 16) {
        const int64_t rows = n / c->shape[1];
        eb_cuk::launch(k_transpose_rows<E>, eb_cuk::blocks_for(rows), eb_cuk::kThreads, s,
                       (int)rows, *c, (const E *)x, (E *)y);
        return cudaGetLastError();
    }
    int64_t batch = 1;
    for (int d = 2; d < c->rank; d++)
        batch *= c->shape[d];
    const dim3 grid((unsigned)((c->shape[0] + 31) / 32), (unsigned)((c->shape[1] + 31) / 32),
                    (unsigned)batch);
    eb_cuk::launch(k_transpose<E>, grid, dim3(32, 8), s, *c, (const E *)x, (E *)y);
    return cudaGetLastError();
}

extern "C" cudaError_t eb_cuk_copy_nd(cudaStream_t s, int es, const struct eb_cuk_copy *c0,
                                      const void *x, void *y)
{
    eb_cuk_copy c = *c0;
    int64_t n = 0;
    es = prepare(&c, &n, es, 16, x, y);
    if (n <= 0)
        return cudaSuccess;
    /* One contiguous run: a plain copy. */
    if (c.rank == 0 || (c.rank == 1 && c.xs[0] == 1 && c.ys[0] == 1))
        return cudaMemcpyAsync((char *)y + c.y_off * es, (const char *)x + c.x_off * es,
                               (size_t)n * (size_t)es, cudaMemcpyDeviceToDevice, s);
    /* A transpose (a layout change, a Transpose of the last two dims): tiled. */
    eb_cuk_copy t;
    if ((es == 2 || es == 4) && as_transpose(&c, &t))
        return es == 2 ? transpose<uint16_t>(s, &t, n, x, y) : transpose<uint32_t>(s, &t, n, x, y);
    switch (es) {
    case 16: return copy_nd<uint4>(s, &c, n, x, y);
    case 1: return copy_nd<uint8_t>(s, &c, n, x, y);
    case 2: return copy_nd<uint16_t>(s, &c, n, x, y);
    case 4: return copy_nd<uint32_t>(s, &c, n, x, y);
    case 8: return copy_nd<uint64_t>(s, &c, n, x, y);
    default: return cudaErrorInvalidValue;
    }
}

namespace
{

/* Up to EB_CUK_MAX_PARTS copies in one launch: thread i does element i - start[j] of copy j,
 * the j with start[j] <= i < start[j + 1]. */
struct multi {
    int n_parts;
    eb_cuk_copy c[EB_CUK_MAX_PARTS];
    const void *x[EB_CUK_MAX_PARTS];
    void *y[EB_CUK_MAX_PARTS];
    int32_t start[EB_CUK_MAX_PARTS + 1];
};

template <typename E> __global__ void k_copy_multi(multi m)
{
    eb_cuk::pdl_begin();
    const int n = m.start[m.n_parts];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int j = 0;
        while (i >= m.start[j + 1])
            j++;
        int64_t xi, yi;
        offsets(m.c[j], i - m.start[j], &xi, &yi);
        ((E *)m.y[j])[yi] = ((const E *)m.x[j])[xi];
    }
}

template <typename E> cudaError_t copy_multi(cudaStream_t s, const multi &m)
{
    eb_cuk::launch(k_copy_multi<E>, eb_cuk::blocks_for(m.start[m.n_parts]), eb_cuk::kThreads, s, m);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t eb_cuk_copy_parts(cudaStream_t s, int es, int n_parts,
                                         const struct eb_cuk_copy *c, const void *const *x,
                                         void *const *y)
{
    if (n_parts < 1 || n_parts > EB_CUK_MAX_PARTS)
        return cudaErrorInvalidValue;
    /* the widest element every part allows */
    int w = 16;
    for (int j = 0; j < n_parts; j++) {
        eb_cuk_copy t = c[j];
        int64_t n = 0;
        const int wj = prepare(&t, &n, es, w, x[j], y[j]);
        w = wj < w ? wj : w;
    }
    multi m = {};
    m.n_parts = n_parts;
    int64_t total = 0;
    for (int j = 0; j < n_parts; j++) {
        int64_t n = 0;
        m.c[j] = c[j];
        if (prepare(&m.c[j], &n, es, w, x[j], y[j]) != w) /* a part narrower after all */
            return cudaErrorInvalidValue;
        m.x[j] = x[j];
        m.y[j] = y[j];
        m.start[j] = (int32_t)total;
        total += n;
    }
    m.start[n_parts] = (int32_t)total;
    if (total <= 0)
        return cudaSuccess;
    if (total > INT32_MAX)
        return cudaErrorInvalidValue;
    switch (w) {
    case 16: return copy_multi<uint4>(s, m);
    case 1: return copy_multi<uint8_t>(s, m);
    case 2: return copy_multi<uint16_t>(s, m);
    case 4: return copy_multi<uint32_t>(s, m);
    case 8: return copy_multi<uint64_t>(s, m);
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
