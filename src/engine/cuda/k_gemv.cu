/*
 * One row by a constant weight (a decode step's projections): y[n] = sum_k a[k] w[k][n] (+ c[n]),
 * w row-major k x n. cuBLAS runs this m = 1 product as a GEMM tile with one useful row, at a
 * fifth of the memory bandwidth; here every byte of w is read once, 16 bytes per thread per row,
 * the columns spread over enough blocks to keep the memory system busy, and the first rows of w
 * (a constant) are loaded before the kernel waits for the one before it (pdl_wait), so those
 * loads overlap that kernel's end.
 */
#include "engine/cuda/k_common.cuh"

namespace
{
using eb_cuk::ld;
using eb_cuk::st;

constexpr int kWarps = 8;  /* a block: 256 threads */
constexpr int kUnroll = 4; /* rows of w a thread has in flight, twice over (this and the next) */

/* The float value of part j of a 16-byte vector of T */
__device__ __forceinline__ float part(const uint4 &v, int j, const float *)
{
    return __uint_as_float((&v.x)[j]);
}
__device__ __forceinline__ float part(const uint4 &v, int j, const __half *)
{
    const __half2 h = *reinterpret_cast<const __half2 *>(&(&v.x)[j / 2]);
    return j % 2 == 0 ? __low2float(h) : __high2float(h);
}

/* The launch's parts, where each one's blocks begin, and the split of the rows */
template <typename T> struct parts {
    const T *w[EB_CUK_GEMV_MAX_PARTS];
    const T *c[EB_CUK_GEMV_MAX_PARTS];
    T *y[EB_CUK_GEMV_MAX_PARTS];
    int n[EB_CUK_GEMV_MAX_PARTS];
    unsigned first[EB_CUK_GEMV_MAX_PARTS + 1]; /* first[n_parts]: all the blocks */
    unsigned ws_at[EB_CUK_GEMV_MAX_PARTS];     /* the part's splits x n floats in ws */
    unsigned count_at[EB_CUK_GEMV_MAX_PARTS];  /* its column tiles' counters */
    int n_parts, splits;                       /* splits > 1: ws and count */
    float *ws;
    unsigned *count;
};

/*
 * TX threads of a warp share a row (TX x 16 bytes of it), the warp's 32 / TX groups and the
 * block's 8 warps stride down the rows; the partial sums meet through shuffles within a warp
 * and shared memory across warps, in a fixed order. With P.splits > 1 the rows are split over
 * that many blocks per column tile: each writes its sums to P.ws, and the last of them to
 * finish (its tile's counter) adds them up in split order and writes y, then sets the counter
 * back to 0 for the next launch. Either way the result does not depend on timing.
 * With `from` (enum eb_cuk_gemv_from) other than the row itself, each block makes its rows of
 * the row into shared memory first from rx and rw, with the code of the kernel it replaces
 * (eb_cuk::block_rms, eb_cuk::swiglu_at): the same bits.
 */
template <typename T, int TX>
__global__ void __launch_bounds__(kWarps * 32)
    k_gemv(int K, const T *__restrict__ a, int from, const T *__restrict__ rx,
           const T *__restrict__ rw, float eps, const parts<T> P)
{
    constexpr int E = 16 / (int)sizeof(T);
    constexpr int RY = kWarps * 32 / TX; /* the block's row stride */
    extern __shared__ float made[];      /* K floats: the row `from` makes */
    __shared__ float sums[kWarps][TX * E];
    __shared__ bool last;
    int p = 0;
    while (p + 1 < P.n_parts && blockIdx.x >= P.first[p + 1])
        p++;
    const int N = P.n[p], b = (int)(blockIdx.x - P.first[p]);
    const int tile = b / P.splits, split = b % P.splits;
    const int chunk = (K + P.splits - 1) / P.splits;
    const int k_end = min(K, (split + 1) * chunk);
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const int tx = lane % TX;
    const int col = (tile * TX + tx) * E;
    const bool live = col < N;
    const uint4 zero = make_uint4(0, 0, 0, 0);
    const uint4 *wp = reinterpret_cast<const uint4 *>(P.w[p] + col);
    const int64_t stride = N / E; /* a row of w in 16-byte vectors */
    int k0 = split * chunk + warp * (32 / TX) + lane / TX;
    uint4 cur[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; u++) {
        const int k = k0 + u * RY;
        cur[u] = live && k < k_end ? __ldg(wp + (int64_t)k * stride) : zero;
    }
    eb_cuk::pdl_wait();
    eb_cuk::pdl_launch_dependents();
    if (from == EB_CUK_ROW_RMSNORM) {
        const float sd = eb_cuk::block_rms(rx, K, eps, &sums[0][0]);
        for (int i = split * chunk + (int)threadIdx.x; i < k_end; i += kWarps * 32) {
            T t[1];
            st(t, 0, ld(rx, i) / sd * ld(rw, i));
            made[i] = ld(t, 0);
        }
        __syncthreads();
    } else if (from == EB_CUK_ROW_SWIGLU) {
        for (int i = split * chunk + (int)threadIdx.x; i < k_end; i += kWarps * 32)
            made[i] = eb_cuk::swiglu_at(rx, rw, i);
        __syncthreads();
    }
    float acc[E];
#pragma unroll
    for (int j = 0; j < E; j++)
        acc[j] = 0.0f;
    for (; k0 < k_end; k0 += kUnroll * RY) {
        uint4 nxt[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            const int k = k0 + (kUnroll + u) * RY;
            nxt[u] = live && k < k_end ? __ldg(wp + (int64_t)k * stride) : zero;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            const int k = k0 + u * RY;
            const float av = k >= k_end ? 0.0f : from != EB_CUK_ROW ? made[k] : ld(a, k);
#pragma unroll
            for (int j = 0; j < E; j++)
                acc[j] = fmaf(part(cur[u], j, a), av, acc[j]);
            cur[u] = nxt[u];
        }
    }
#pragma unroll
    for (int off = TX; off < 32; off *= 2)
#pragma unroll
        for (int j = 0; j < E; j++)
            acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
    if (lane < TX)
#pragma unroll
        for (int j = 0; j < E; j++)
            sums[warp][tx * E + j] = acc[j];
    __syncthreads();
    const T *c = P.c[p];
    T *y = P.y[p];
    /* split: this block's sums to the workspace, the last block of the tile adds them */
    float *ws = P.splits > 1 ? P.ws + P.ws_at[p] : nullptr;
    for (int t = (int)threadIdx.x; t < TX * E; t += kWarps * 32) {
        const int n = tile * TX * E + t;
        if (n >= N)
            continue;
        float v = 0.0f;
#pragma unroll
        for (int i = 0; i < kWarps; i++)
            v += sums[i][t];
        if (ws != nullptr)
            ws[(int64_t)split * N + n] = v;
        else
            st(y, n, c != nullptr ? v + ld(c, n) : v);
    }
    if (ws == nullptr)
        return;
    __threadfence(); /* the sums are visible before the counter says so */
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd(&P.count[P.count_at[p] + tile], 1u) == (unsigned)P.splits - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    for (int t = (int)threadIdx.x; t < TX * E; t += kWarps * 32) {
        const int n = tile * TX * E + t;
        if (n >= N)
            continue;
        float v = 0.0f;
        for (int i = 0; i < P.splits; i++)
            v += __ldcg(&ws[(int64_t)i * N + n]); /* from L2: other blocks wrote them */
        st(y, n, c != nullptr ? v + ld(c, n) : v);
    }
    if (threadIdx.x == 0)
        P.count[P.count_at[p] + tile] = 0;
}

/* The launch's width (threads sharing a row, tx) and row splits for these parts: 8 threads a
 * row (128 bytes of it), 16 (256 bytes) where the columns are few (under 1024 threads wide);
 * then the rows split over more blocks, at most 16 of them and two blocks an SM, each split
 * keeping 2 rows a thread at least, while the workspace holds the sums. Chosen from
 * bench/bench_gemv.c's sweep of every shape on an H200 (qwen2 0.5b's and llama 1b's products):
 * against the earlier choice, as few threads a row as kept two blocks an SM (2 or 4), a
 * product takes 0 to 32% less time (docs/llm-models.md). */
static void shape_launch(int e, int64_t k, int sms, int n_parts,
                         const struct eb_cuk_gemv_part *part, int ws_ok, int *tx_out,
                         int *splits_out)
{
    int64_t threads = 0, cols = 0;
    for (int i = 0; i < n_parts; i++) {
        threads += part[i].n / e;
        cols += part[i].n;
    }
    const int tx = threads < 1024 ? 16 : 8;
    int64_t tiles = 0;
    for (int i = 0; i < n_parts; i++)
        tiles += (part[i].n / e + tx - 1) / tx;
    const int64_t ry = kWarps * 32 / tx;
    int splits = 1;
    while (ws_ok && splits < 16 && tiles * (splits + 1) <= 2 * (int64_t)sms &&
           k / (splits + 1) >= 2 * ry && (splits + 1) * cols <= EB_CUK_GEMV_WS_FLOATS &&
           tiles <= EB_CUK_GEMV_WS_COUNTS)
        splits++;
    *tx_out = tx;
    *splits_out = splits;
}

/* Whether tx threads a row and `splits` splits can run these parts (the workspace's room). */
static bool shape_ok(int e, int64_t k, int n_parts, const struct eb_cuk_gemv_part *part, int ws_ok,
                     int tx, int splits)
{
    int64_t tiles = 0, cols = 0;
    for (int i = 0; i < n_parts; i++) {
        tiles += (part[i].n / e + tx - 1) / tx;
        cols += part[i].n;
    }
    const bool width = tx == 2 || tx == 4 || tx == 8 || tx == 16 || tx == 32;
    return width && splits >= 1 && splits <= k &&
           (splits == 1 ||
            (ws_ok && splits * cols <= EB_CUK_GEMV_WS_FLOATS && tiles <= EB_CUK_GEMV_WS_COUNTS));
}

template <typename T>
cudaError_t gemv(cudaStream_t s, int64_t k, int sms, int tx, int splits,
                 const struct eb_cuk_gemv_row *row, const void *a, int n_parts,
                 const struct eb_cuk_gemv_part *part, void *ws)
{
    constexpr int E = 16 / (int)sizeof(T);
    if (tx == 0)
        shape_launch(E, k, sms, n_parts, part, ws != nullptr, &tx, &splits);
    else if (!shape_ok(E, k, n_parts, part, ws != nullptr, tx, splits))
        return cudaErrorInvalidValue;
    parts<T> P = {};
    P.n_parts = n_parts;
    P.splits = splits;
    P.ws = (float *)ws;
    P.count = ws != nullptr ? (unsigned *)((float *)ws + EB_CUK_GEMV_WS_FLOATS) : nullptr;
    unsigned ws_at = 0, count_at = 0;
    for (int i = 0; i < n_parts; i++) {
        const unsigned tiles = (unsigned)((part[i].n / E + tx - 1) / tx);
        P.w[i] = (const T *)part[i].w;
        P.c[i] = (const T *)part[i].c;
        P.y[i] = (T *)part[i].y;
        P.n[i] = (int)part[i].n;
        P.first[i + 1] = P.first[i] + tiles * (unsigned)splits;
        P.ws_at[i] = ws_at;
        P.count_at[i] = count_at;
        ws_at += (unsigned)splits * (unsigned)part[i].n;
        count_at += tiles;
    }
    const dim3 grid(P.first[n_parts]), block(kWarps * 32);
    const int from = row != nullptr ? (int)row->from : (int)EB_CUK_ROW;
    const size_t smem = from != EB_CUK_ROW ? (size_t)k * sizeof(float) : 0;
    const T *pa = (const T *)a, *rx = row ? (const T *)row->x : nullptr;
    const T *rw = row ? (const T *)row->w : nullptr;
    const float eps = row ? row->eps : 0.0f;
    const int kk = (int)k;
    /* the kernel of each width tx = 2, 4, ..., 32 */
    void (*const kernels[])(int, const T *, int, const T *, const T *, float, parts<T>) = {
        k_gemv<T, 2>, k_gemv<T, 4>, k_gemv<T, 8>, k_gemv<T, 16>, k_gemv<T, 32>};
    int at = 0;
    while ((2 << at) < tx)
        at++;
    return eb_cuk::launch_smem(kernels[at], grid, block, smem, s, kk, pa, from, rx, rw, eps, P);
}

} // namespace

extern "C" int eb_cuk_gemv_takes(enum eb_cuk_dt dt, int64_t k, int64_t n, const void *w)
{
    const int64_t e = 16 / eb_cuk_dt_size(dt);
    return k > 0 && n > 0 && n % e == 0 && k <= EB_CUK_GEMV_MAX_K && n <= INT32_MAX / 2 &&
           (uintptr_t)w % 16 == 0;
}

extern "C" cudaError_t eb_cuk_gemv(cudaStream_t s, enum eb_cuk_dt dt, int64_t k, int sms,
                                   const struct eb_cuk_gemv_row *row, const void *a, int n_parts,
                                   const struct eb_cuk_gemv_part *part, void *ws)
{
    if (n_parts < 1 || n_parts > EB_CUK_GEMV_MAX_PARTS)
        return cudaErrorInvalidValue;
    return EB_CUK_DISPATCH(dt, gemv, s, k, sms > 0 ? sms : 1, 0, 0, row, a, n_parts, part, ws);
}

extern "C" cudaError_t eb_cuk_gemv_shaped(cudaStream_t s, enum eb_cuk_dt dt, int64_t k, int tx,
                                          int splits, const struct eb_cuk_gemv_row *row,
                                          const void *a, int n_parts,
                                          const struct eb_cuk_gemv_part *part, void *ws)
{
    if (n_parts < 1 || n_parts > EB_CUK_GEMV_MAX_PARTS || tx == 0)
        return cudaErrorInvalidValue;
    return EB_CUK_DISPATCH(dt, gemv, s, k, 1, tx, splits, row, a, n_parts, part, ws);
}

extern "C" void eb_cuk_gemv_shape(enum eb_cuk_dt dt, int64_t k, int sms, int n_parts,
                                  const struct eb_cuk_gemv_part *part, int ws, int *tx, int *splits)
{
    shape_launch(16 / eb_cuk_dt_size(dt), k, sms > 0 ? sms : 1, n_parts, part, ws, tx, splits);
}
