/*
 * bench_gemv: the one-row products of a decode step (eb_cuk_gemv, src/engine/cuda/k_gemv.cu) on
 * qwen2 0.5b's and llama 1b's fp16 shapes, next to cuBLAS (cublasGemmEx, one call a weight, as
 * the engine ran them before) measured in the same run: the launch shape the kernel picks
 * (threads a row x row splits), the fastest of every shape it can take, and cuBLAS. Each launch
 * reads other copies of the weights than the one before (more bytes than the L2 holds, as in a
 * step, where a layer's weights are long gone from the cache when it comes again).
 *
 * Usage: bench_gemv [launches]   (default 200 a timing; the best of 3 timings is printed)
 * Exit 77 when no GPU is usable (the reason is printed).
 */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/kernels.h"

#define MAX_PARTS    EB_CUK_GEMV_MAX_PARTS
#define COPIES_BYTES ((size_t)768 << 20) /* the weights' copies together: well over the L2 */

struct product {
    const char *name;
    int64_t k;
    int n_parts;
    int64_t n[MAX_PARTS];
};

/* A layer's products (q/k/v and gate/up as the engine groups them) and the lm_head. */
static const struct product PRODUCTS[] = {
    {"qwen2 0.5b q/k/v", 896, 3, {896, 128, 128}},
    {"qwen2 0.5b o_proj", 896, 1, {896}},
    {"qwen2 0.5b gate/up", 896, 2, {4864, 4864}},
    {"qwen2 0.5b down", 4864, 1, {896}},
    {"qwen2 0.5b lm_head", 896, 1, {151936}},
    {"llama 1b q/k/v", 2048, 3, {2048, 512, 512}},
    {"llama 1b o_proj", 2048, 1, {2048}},
    {"llama 1b gate/up", 2048, 2, {8192, 8192}},
    {"llama 1b down", 8192, 1, {2048}},
};

struct bufs {
    char *w;       /* copies of the weights, back to back */
    size_t stride; /* bytes of one copy */
    int copies;
    void *a, *y[MAX_PARTS], *ws;
};

enum how { HOW_AUTO, HOW_SHAPED, HOW_CUBLAS };

struct run {
    enum how how;
    int tx, splits, sms;
    cublasHandle_t blas;
};

static int check(cudaError_t ce, const char *what)
{
    if (ce != cudaSuccess)
        fprintf(stderr, "bench_gemv: %s: %s\n", what, cudaGetErrorString(ce));
    return ce == cudaSuccess;
}

/* One launch (or cuBLAS call per weight) on copy c of the weights. */
static int launch(const struct product *p, const struct bufs *b, const struct run *r, int c)
{
    struct eb_cuk_gemv_part part[MAX_PARTS];
    const char *w = b->w + (size_t)c * b->stride;
    for (int i = 0; i < p->n_parts; i++) {
        part[i] = (struct eb_cuk_gemv_part){.w = w, .c = NULL, .y = b->y[i], .n = p->n[i]};
        w += (size_t)p->k * (size_t)p->n[i] * 2;
    }
    if (r->how == HOW_AUTO)
        return eb_cuk_gemv(0, EB_CUK_F16, p->k, r->sms, NULL, b->a, p->n_parts, part, b->ws) ==
               cudaSuccess;
    if (r->how == HOW_SHAPED)
        return eb_cuk_gemv_shaped(0, EB_CUK_F16, p->k, r->tx, r->splits, NULL, b->a, p->n_parts,
                                  part, b->ws) == cudaSuccess;
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < p->n_parts; i++) /* y (n x 1) = w^T, column-major n x k, times a */
        if (cublasGemmEx(r->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)p->n[i], 1, (int)p->k, &one,
                         part[i].w, CUDA_R_16F, (int)p->n[i], b->a, CUDA_R_16F, (int)p->k, &zero,
                         part[i].y, CUDA_R_16F, (int)p->n[i], CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
            return 0;
    return 1;
}

/* Microseconds a launch, the best of 3 timings of `n` launches; < 0 when the shape is refused. */
static double time_us(const struct product *p, const struct bufs *b, const struct run *r, long n)
{
    if (!launch(p, b, r, 0)) {
        (void)cudaGetLastError();
        return -1.0;
    }
    for (int i = 0; i < 20; i++)
        launch(p, b, r, i % b->copies);
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        cudaEventRecord(t0, 0);
        for (long i = 0; i < n; i++)
            launch(p, b, r, (int)(i % b->copies));
        cudaEventRecord(t1, 0);
        cudaEventSynchronize(t1);
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, t0, t1);
        best = ms * 1e3 / n < best ? ms * 1e3 / n : best;
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return best;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    const long n = argc > 1 ? strtol(argv[1], &end, 10) : 200;
    if (n < 1 || n > 100000 || (argc > 1 && *end != '\0')) {
        fprintf(stderr, "usage: bench_gemv [launches]\n");
        return 2;
    }
    int dev_count = 0;
    if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
        printf("bench_gemv: no usable CUDA device; nothing measured\n");
        return 77;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    struct run r = {.sms = prop.multiProcessorCount};
    if (cublasCreate(&r.blas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "bench_gemv: cublasCreate failed\n");
        return 1;
    }
    printf("%s, %d SMs; fp16 weights, one row, %ld launches a timing (best of 3), weights cold\n\n",
           prop.name, r.sms, n);
    printf("| product | k x n | MB | picked (tx x splits) | us | GB/s | fastest | us | GB/s | "
           "cuBLAS us | GB/s |\n|---|---|--:|---|--:|--:|---|--:|--:|--:|--:|\n");
    int failed = 0;
    for (size_t i = 0; i < sizeof(PRODUCTS) / sizeof(PRODUCTS[0]); i++) {
        const struct product *p = &PRODUCTS[i];
        struct bufs b = {.copies = 0};
        int64_t cols = 0;
        for (int j = 0; j < p->n_parts; j++)
            cols += p->n[j];
        b.stride = ((size_t)p->k * (size_t)cols * 2 + 255) / 256 * 256;
        b.copies = (int)(COPIES_BYTES / b.stride) < 2 ? 2 : (int)(COPIES_BYTES / b.stride);
        int ok = check(cudaMalloc((void **)&b.w, b.stride * (size_t)b.copies), "cudaMalloc") &&
                 check(cudaMemset(b.w, 0x2c, b.stride * (size_t)b.copies), "cudaMemset") &&
                 check(cudaMalloc(&b.a, (size_t)p->k * 2), "cudaMalloc") &&
                 check(cudaMemset(b.a, 0x3c, (size_t)p->k * 2), "cudaMemset") &&
                 check(cudaMalloc(&b.ws, EB_CUK_GEMV_WS_BYTES), "cudaMalloc") &&
                 check(cudaMemset(b.ws, 0, EB_CUK_GEMV_WS_BYTES), "cudaMemset");
        for (int j = 0; ok && j < p->n_parts; j++)
            ok = check(cudaMalloc(&b.y[j], (size_t)p->n[j] * 2), "cudaMalloc");
        if (!ok)
            return 1;
        const double mb = (double)p->k * (double)cols * 2 / 1e6;
        struct eb_cuk_gemv_part part[MAX_PARTS];
        for (int j = 0; j < p->n_parts; j++)
            part[j] = (struct eb_cuk_gemv_part){.w = b.w, .n = p->n[j]};
        int tx = 0, splits = 0;
        eb_cuk_gemv_shape(EB_CUK_F16, p->k, r.sms, p->n_parts, part, 1, &tx, &splits);
        r.how = HOW_AUTO;
        const double auto_us = time_us(p, &b, &r, n);
        double best_us = 1e30;
        int best_tx = 0, best_splits = 0;
        static const int SPLITS[] = {1, 2, 3, 4, 6, 8, 12, 16};
        r.how = HOW_SHAPED;
        for (r.tx = 2; r.tx <= 32; r.tx *= 2)
            for (size_t s = 0; s < sizeof(SPLITS) / sizeof(SPLITS[0]); s++) {
                r.splits = SPLITS[s];
                const double us = time_us(p, &b, &r, n);
                if (us > 0 && us < best_us) {
                    best_us = us;
                    best_tx = r.tx;
                    best_splits = r.splits;
                }
            }
        r.how = HOW_CUBLAS;
        const double blas_us = time_us(p, &b, &r, n);
        failed |= auto_us < 0 || blas_us < 0;
        printf("| %s | %lld x %lld | %.1f | %d x %d | %.2f | %.0f | %d x %d | %.2f | %.0f | %.2f | "
               "%.0f |\n",
               p->name, (long long)p->k, (long long)cols, mb, tx, splits, auto_us,
               mb * 1e3 / auto_us, best_tx, best_splits, best_us, mb * 1e3 / best_us, blas_us,
               mb * 1e3 / blas_us);
        cudaFree(b.w);
        cudaFree(b.a);
        cudaFree(b.ws);
        for (int j = 0; j < p->n_parts; j++)
            cudaFree(b.y[j]);
    }
    cublasDestroy(r.blas);
    return failed ? 1 : 0;
}
