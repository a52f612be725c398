/*
 * The native engine's CUDA device (struct eb_engine_devops): every live node with a CUDA path
 * runs on the GPU (captured on up to EB_CU_LANES streams: cuda_sched.c; node by node on one
 * stream when profiled), from one device arena laid out by the memory planner, with the
 * weights uploaded once at load; nodes without one (integer ConvInteger chains, ...) run on the
 * CPU between a device→host copy of their inputs and a host→device copy of their outputs, inside
 * the same stream order (cudaLaunchHostFunc). The first run captures the forward into a CUDA
 * Graph; later runs replay it. CUDA events time the input copy, the forward and the output copy.
 *
 * Memory: the arena, the weights, the cuDNN/cuBLAS workspaces and the I/O buffers are all our
 * own cudaMalloc calls, summed against the hard cap before anything large is allocated (the
 * convolution workspace budget is what the cap leaves); cudaMemGetInfo's drop over the load is
 * reported beside it (the libraries' own allocations show there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/log.h"
#include "engine/cuda/cuda_internal.h"

#define WS_MAX_BYTES  ((size_t)256 << 20) /* most a convolution's workspace may take */
#define BLAS_WS_BYTES ((size_t)8 << 20)   /* cuBLAS workspace (fixed: graph capture) */
#define DEV_ALIGN     256u

#define CUDA_TRY(call)                                                                             \
    do {                                                                                           \
        cudaError_t ce_ = (call);                                                                  \
        if (ce_ != cudaSuccess)                                                                    \
            return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s on cuda: %s failed: %s", e->what,   \
                                #call, cudaGetErrorString(ce_));                                   \
    } while (0)

static size_t align_dev(size_t b)
{
    return (b + DEV_ALIGN - 1) / DEV_ALIGN * DEV_ALIGN;
}

/* float → IEEE half, round to nearest even (what __float2half_rn does on the device). */
uint16_t eb_cu__f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    const uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t mant = x & 0x7FFFFFu;
    const int exp = (int)((x >> 23) & 0xFFu);
    if (exp == 0xFF) /* inf, NaN (kept quiet) */
        return (uint16_t)(sign | 0x7C00u | (mant != 0 ? 0x200u : 0u));
    const int e = exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7C00u);
    if (e <= 0) { /* subnormal half, or zero */
        if (e < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        const int shift = 14 - e;
        uint32_t h = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1u), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is the right rounding (up to inf) */
    return (uint16_t)(sign | h);
}

int eb_engine__cuda_available(char *why, size_t why_size)
{
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n < 1) {
        if (why != NULL && why_size > 0)
            snprintf(why, why_size, "no CUDA GPU is usable here (%s)",
                     ce != cudaSuccess ? cudaGetErrorString(ce) : "no device found");
        return 0;
    }
    if (why != NULL && why_size > 0)
        why[0] = '\0';
    return 1;
}

/* "MAJOR.MINOR" of a CUDA version number (1000 * major + 10 * minor). */
static void cuda_version_text(int v, char *out, size_t size)
{
    snprintf(out, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

void eb_engine__cuda_versions(struct eb_engine_cuda_versions *out)
{
    int v = 0;
    size_t used = 0;
    cudaError_t ce = cudaRuntimeGetVersion(&v);
    if (ce == cudaSuccess && v > 0)
        cuda_version_text(v, out->runtime, sizeof(out->runtime));
    else
        used += (size_t)snprintf(out->note + used, sizeof(out->note) - used,
                                 "CUDA runtime version unknown (%s); ", cudaGetErrorString(ce));
    /* 0 without an error: no driver is loaded (this is how a machine without a GPU answers). */
    v = 0;
    ce = cudaDriverGetVersion(&v);
    if (ce == cudaSuccess && v > 0)
        cuda_version_text(v, out->driver, sizeof(out->driver));
    else if (used < sizeof(out->note))
        used += (size_t)snprintf(out->note + used, sizeof(out->note) - used,
                                 "no NVIDIA driver is loaded (%s); ",
                                 ce != cudaSuccess ? cudaGetErrorString(ce) : "version 0");
    int major = 0, minor = 0, patch = 0;
    if (cudnnGetProperty(MAJOR_VERSION, &major) == CUDNN_STATUS_SUCCESS &&
        cudnnGetProperty(MINOR_VERSION, &minor) == CUDNN_STATUS_SUCCESS &&
        cudnnGetProperty(PATCH_LEVEL, &patch) == CUDNN_STATUS_SUCCESS)
        snprintf(out->cudnn, sizeof(out->cudnn), "%d.%d.%d", major, minor, patch);
    else if (used < sizeof(out->note))
        used +=
            (size_t)snprintf(out->note + used, sizeof(out->note) - used, "cuDNN version unknown; ");
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
        snprintf(out->cublas, sizeof(out->cublas), "%d.%d.%d", major, minor, patch);
    else if (used < sizeof(out->note))
        used += (size_t)snprintf(out->note + used, sizeof(out->note) - used,
                                 "cuBLAS version unknown; ");
    /* Drop the last "; ". */
    size_t n = strlen(out->note);
    if (n >= 2 && out->note[n - 2] == ';')
        out->note[n - 2] = '\0';
}

static struct cu_state *state_of(struct eb_engine *e)
{
    return e->dev_state;
}

/* Device memory of our own, counted. */
enum eb_status eb_cu__dev_alloc(struct eb_engine *e, struct cu_state *s, size_t bytes, void **p,
                                const char *what, struct eb_diag *diag)
{
    *p = NULL;
    if (bytes == 0)
        return EB_OK;
    cudaError_t ce = cudaMalloc(p, bytes);
    if (ce != cudaSuccess)
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "failed to load model %s on cuda: cannot allocate %.1f MiB of device "
                            "memory for %s (%s)",
                            e->what, eb_engine__mib(bytes), what, cudaGetErrorString(ce));
    s->dev_bytes += bytes;
    return EB_OK;
}

/* The fallback summary: "ConvInteger x64, Mul x2" over the nodes on the CPU. */
static void fallback_summary(struct eb_engine *e, struct cu_state *s, char *out, size_t n)
{
    const char *ops[32];
    int counts[32];
    int n_ops = 0;
    for (size_t k = 0; k < e->n_order; k++) {
        if (!s->on_cpu[k])
            continue;
        const char *op = e->g->nodes[e->order[k]].op->onnx_name;
        int i = 0;
        while (i < n_ops && strcmp(ops[i], op) != 0)
            i++;
        if (i == n_ops && n_ops < 32) {
            ops[n_ops] = op;
            counts[n_ops++] = 0;
        }
        if (i < n_ops)
            counts[i]++;
    }
    out[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < n_ops && used + 1 < n; i++) {
        int w = snprintf(out + used, n - used, "%s%s x%d", i > 0 ? ", " : "", ops[i], counts[i]);
        if (w < 0)
            break;
        used += (size_t)w < n - used ? (size_t)w : n - used - 1;
    }
}

/* Node n reads and writes no float tensor: its bytes are the same on the host and the device in
 * either precision (a dynamic graph's mask arithmetic on positions may run on the CPU in fp16). */
static int integers_only(const struct eb_graph *g, const struct eb_ir_node *n)
{
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0 && g->values[n->in[i]].dtype == EB_DTYPE_F32)
            return 0;
    for (int i = 0; i < n->n_out; i++)
        if (n->out[i] >= 0 && g->values[n->out[i]].dtype == EB_DTYPE_F32)
            return 0;
    return 1;
}

static enum eb_status cu_open(struct eb_engine *e, const struct eb_engine_options *opt,
                              struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    char why[160];
    if (!eb_engine__cuda_available(why, sizeof(why)))
        return eb_diag_fail_advise(diag, EB_ERR_DEVICE, EB_ADVICE_CPU,
                                   "failed to load model %s on cuda: %s", e->what, why);
    int n_dev = 0;
    CUDA_TRY(cudaGetDeviceCount(&n_dev));
    if (opt->gpu >= n_dev)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to load model %s on cuda: GPU %d asked for, %d present",
                            e->what, opt->gpu, n_dev);
    CUDA_TRY(cudaSetDevice(opt->gpu));
    struct cu_state *s = eb_ir_arena_alloc(&g->arena, sizeof(*s));
    if (s == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
    e->dev_state = s;
    s->gpu = opt->gpu;
    s->dt = opt->precision == EB_ENGINE_PRECISION_FP16 ? EB_CUK_F16 : EB_CUK_F32;
    struct cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, opt->gpu));
    snprintf(e->info_dev.device_name, sizeof(e->info_dev.device_name), "%.63s", prop.name);
    /* For the MFU peak lookup (harness/metrics/peaks.h): SMs and memory tell the Jetson modules apart,
     * the clock their power modes. */
    e->info_dev.sm_count = prop.multiProcessorCount;
    e->info_dev.device_total_bytes = (uint64_t)prop.totalGlobalMem;
    CUDA_TRY(cudaDeviceGetAttribute(&e->info_dev.clock_khz, cudaDevAttrClockRate, opt->gpu));
    /* Frames read in place on unified memory (an integrated GPU: Jetson), where a staging copy
     * would only duplicate the frame in the same DRAM; forced either way by the option. A
     * device that cannot map host memory stages. */
    const int mapped = opt->zero_copy_frames == EB_ENGINE_ZERO_COPY_MAPPED ||
                       (opt->zero_copy_frames == EB_ENGINE_ZERO_COPY_AUTO && prop.integrated);
    s->zero_copy = mapped && prop.canMapHostMemory;
    e->info_dev.zero_copy_frames = s->zero_copy;
    /* int8 convs take over the residual Add, Split, QuantizeLinear and DequantizeLinear after
     * them (the order shrinks) */
    if ((opt->passes & EB_ENGINE_PASS_FUSE) && !g->dynamic) {
        enum eb_status fst = eb_cu__qconv_fuse(e, diag);
        if (fst != EB_OK)
            return fst;
    }
    s->nodes = eb_ir_arena_alloc(&g->arena, (e->n_order + 1) * sizeof(*s->nodes));
    s->on_cpu = eb_ir_arena_alloc(&g->arena, e->n_order + 1);
    s->dptr = eb_ir_arena_alloc(&g->arena, (g->n_values + 1) * sizeof(void *));
    s->dptr32 = eb_ir_arena_alloc(&g->arena, (g->n_values + 1) * sizeof(float *));
    s->w_khwc = eb_ir_arena_alloc(&g->arena, g->n_values + 1);
    if (s->nodes == NULL || s->on_cpu == NULL || s->dptr == NULL || s->dptr32 == NULL ||
        s->w_khwc == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
    for (size_t k = 0; k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        /* a dynamic graph's shape data is computed on the host as the run is enqueued (the
         * nodes after it infer their shapes from it): integers only, in any precision */
        const int shape_node = g->dynamic && n->n_out > 0 && g->values[n->out[0]].shape_data;
        if (!shape_node && eb_cu__node_ok(e, s, k, why, sizeof(why))) {
            const enum eb_desc_kind kind = s->nodes[k].d.kind;
            if (n->dyn && (kind == EB_DESC_CONV || kind == EB_DESC_QCONV))
                return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_CPU,
                                           "failed to load model %s on cuda: convolution '%s' "
                                           "reads a value whose shape changes from run to run",
                                           e->what, n->name);
            continue;
        }
        if (s->dt == EB_CUK_F16 && !shape_node && !(g->dynamic && integers_only(g, n)))
            return eb_diag_fail_advise(
                diag, EB_ERR_UNSUPPORTED, EB_ADVICE_FP32 | EB_ADVICE_CPU,
                "failed to load model %s on cuda in fp16: node '%s' (%s) has %s "
                "on the GPU, and fp16 runs every node there (fp32 runs such nodes "
                "on the CPU)",
                e->what, n->name, n->op->onnx_name, why);
        /* a conv that took over the nodes after it (eb_cu__qconv_fuse) has no CPU form */
        if (n->op == &eb_op_qconv && eb_cu__qconv_fused(n->params))
            return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_CPU,
                                       "failed to load model %s on cuda: int8 conv '%s' has %s "
                                       "on the GPU and took over the nodes after it",
                                       e->what, n->name, why);
        s->on_cpu[k] = 1;
        s->nodes[k].call.e = e;
        s->nodes[k].call.k = k;
        s->n_on_cpu++;
    }
    for (size_t k = 0; k < e->n_order; k++)
        e->info_dev.n_int8_tc += !s->on_cpu[k] && s->nodes[k].d.kind == EB_DESC_QCONV &&
                                 eb_cu__qconv_tensor_cores(s->nodes[k].d.qconv);
    /* a decoder's chains (RMSNorm, rotary, attention, MatMul + Add, SwiGLU): one kernel or
     * library call each, at the chain's last node */
    if ((opt->passes & EB_ENGINE_PASS_FUSE) && g->dynamic)
        g->n_fused += eb_cu__fuse_rms_norm(e, s) + eb_cu__fuse_rope(e, s) +
                      eb_cu__fuse_attention(e, s) + eb_cu__fuse_matmul_add(e, s) +
                      eb_cu__fuse_swiglu(e, s);
    if ((opt->passes & EB_ENGINE_PASS_FUSE) && g->dynamic && !eb_cu__keep_gemv_rows(e, s))
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
    e->info_dev.n_fallback = s->n_on_cpu;
    fallback_summary(e, s, e->info_dev.fallback, sizeof(e->info_dev.fallback));
    if (s->n_on_cpu > 0)
        eb_log_msg(opt->log, EB_LOG_WARN,
                   "model %s on cuda: %zu of %zu nodes have no CUDA kernel and run on the CPU "
                   "(%s); their inputs and outputs cross PCIe/host memory on every frame",
                   e->what, s->n_on_cpu, e->n_order, e->info_dev.fallback);
    /* Channels-last in fp16, where cuDNN's graph API has fast fused kernels for it; fp32 stays
     * NCHW, on the legacy API's FMA kernels (faster there: 2.5 vs 3.2 ms for yolo11n on an
     * H200, and no TF32 whatever the engine) */
    if ((opt->passes & EB_ENGINE_PASS_LAYOUT) && s->dt == EB_CUK_F16 && !g->dynamic)
        e->n_blocked = eb_cu__choose_layout(e, s);
    eb_cu__qconv_layout(e, s);
    /* The nodes on the CPU get their fast kernels; the others need no CPU preparation. */
    enum eb_status st = eb_engine__prepare_nodes(e, s->on_cpu, diag);
    if (st != EB_OK)
        return st;
    /* fp16: every float activation takes half the bytes in the plan (a dynamic graph's keep their
     * float size: shapes inferred again at a run reset them, and the slots are checked against
     * them; the arena is then twice what the device uses) */
    if (s->dt == EB_CUK_F16 && !g->dynamic)
        for (size_t i = 0; i < g->n_values; i++) {
            struct eb_ir_value *v = &g->values[i];
            if (v->dtype == EB_DTYPE_F32 && !v->is_const && !v->is_input)
                v->nbytes = (size_t)v->numel * 2;
        }
    CUDA_TRY(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    if (cudnnCreate(&s->cudnn) != CUDNN_STATUS_SUCCESS || s->cudnn == NULL)
        return eb_diag_fail(diag, EB_ERR_DEVICE,
                            "failed to load model %s on cuda: cuDNN does not start (is "
                            "libcudnn.so.9 installed for this driver?)",
                            e->what);
    if (cudnnSetStream(s->cudnn, s->stream) != CUDNN_STATUS_SUCCESS)
        return eb_diag_fail(diag, EB_ERR_DEVICE, "failed to load model %s: cudnnSetStream",
                            e->what);
    if (cublasCreate(&s->cublas) != CUBLAS_STATUS_SUCCESS)
        return eb_diag_fail(diag, EB_ERR_DEVICE,
                            "failed to load model %s on cuda: cuBLAS does not start", e->what);
    cublasSetStream(s->cublas, s->stream);
    if (cublasLtCreate(&s->lt) != CUBLAS_STATUS_SUCCESS)
        return eb_diag_fail(diag, EB_ERR_DEVICE,
                            "failed to load model %s on cuda: cuBLASLt does not start", e->what);
    s->lib_stream = s->lanes[0] = s->stream;
    for (int l = 1; l < EB_CU_LANES; l++)
        CUDA_TRY(cudaStreamCreateWithFlags(&s->lanes[l], cudaStreamNonBlocking));
    for (int l = 0; l < EB_CU_LANES; l++)
        CUDA_TRY(cudaEventCreateWithFlags(&s->ev_join[l], cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&s->ev_fork, cudaEventDisableTiming));
    for (int i = 0; i < 4; i++)
        CUDA_TRY(cudaEventCreate(&s->ev[i]));
    CUDA_TRY(cudaEventCreate(&s->ev_pre));
    s->cap_bytes = opt->mem_cap_bytes;
    /* the lanes run independent branches side by side: their values must not share bytes */
    e->plan_concurrent = (opt->passes & EB_ENGINE_PASS_LANES) != 0 && !g->dynamic;
    return EB_OK;
}

/* Which constants the GPU nodes read, and in which form: bias/scale (float) or precision. */
enum { USE_PREC = 1, USE_F32 = 2 };

static void mark_constants(struct eb_engine *e, struct cu_state *s, unsigned char *use)
{
    const struct eb_graph *g = e->g;
    for (size_t k = 0; k < e->n_order; k++) {
        if (s->on_cpu[k])
            continue;
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        const enum eb_desc_kind kind = s->nodes[k].d.kind;
        if (kind == EB_DESC_QCONV) /* packed on their own (cuda_qconv.c) */
            continue;
        for (int i = 0; i < n->n_in; i++) {
            if (n->in[i] < 0 || !g->values[n->in[i]].is_const)
                continue;
            const int f32_use =
                (kind == EB_DESC_CONV && i == 2) ||
                ((kind == EB_DESC_QUANTIZE || kind == EB_DESC_DEQUANTIZE || kind == EB_DESC_DFL) &&
                 i == 1);
            use[n->in[i]] |= f32_use ? USE_F32 : USE_PREC;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->values[g->outputs[i]].is_const)
            use[g->outputs[i]] |= USE_PREC;
}

/* The weights image: every used constant in its forms, laid out, converted and uploaded. */
static enum eb_status upload_weights(struct eb_engine *e, struct cu_state *s, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    unsigned char *use = calloc(g->n_values + 1, 1);
    size_t *off = calloc(2 * (g->n_values + 1), sizeof(size_t));
    enum eb_status st = EB_OK;
    if (use == NULL || off == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
        goto done;
    }
    mark_constants(e, s, use);
    size_t total = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const struct eb_ir_value *v = &g->values[i];
        if (use[i] & USE_PREC) {
            off[2 * i] = total;
            total += align_dev((size_t)v->numel * eb_cu__es(s, v));
        }
        if (use[i] & USE_F32) {
            off[2 * i + 1] = total;
            total += align_dev((size_t)v->numel * sizeof(float));
        }
    }
    char *img = total > 0 ? malloc(total) : NULL;
    if (total > 0 && img == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
        goto done;
    }
    for (size_t i = 0; i < g->n_values; i++) {
        const struct eb_ir_value *v = &g->values[i];
        if ((use[i] & USE_PREC) && v->dtype == EB_DTYPE_F32 &&
            (s->dt == EB_CUK_F16 || s->w_khwc[i])) {
            /* host conversion (the weights go up once): to half, and channels-last filters
             * from [K][C][R][S] to [K][R][S][C] */
            const int khwc = s->w_khwc[i] && v->rank == 4;
            const int64_t c = khwc ? v->shape[1] : 1, rs = khwc ? v->shape[2] * v->shape[3] : 1;
            const float *f = v->data;
            for (int64_t j = 0; j < v->numel; j++) {
                /* destination j = ((k rs) + p) c + ch  ←  source ((k c) + ch) rs + p */
                const int64_t ch = j % c, p = (j / c) % rs, kk = j / (c * rs);
                const float x = f[(kk * c + ch) * rs + p];
                if (s->dt == EB_CUK_F16) /* finite stays finite: ±65504 at most (a mask's
                                            "lowest float" times 0 is 0, not NaN) */
                    ((uint16_t *)(img + off[2 * i]))[j] =
                        eb_cu__f32_to_f16(x > 65504.0f    ? 65504.0f
                                          : x < -65504.0f ? -65504.0f
                                                          : x);
                else
                    ((float *)(img + off[2 * i]))[j] = x;
            }
        } else if (use[i] & USE_PREC) {
            memcpy(img + off[2 * i], v->data, v->nbytes);
        }
        if (use[i] & USE_F32)
            memcpy(img + off[2 * i + 1], v->data, (size_t)v->numel * sizeof(float));
    }
    st = eb_cu__dev_alloc(e, s, total, &s->d_weights, "the weights", diag);
    if (st == EB_OK && total > 0) {
        cudaError_t ce = cudaMemcpy(s->d_weights, img, total, cudaMemcpyHostToDevice);
        if (ce != cudaSuccess)
            st = eb_diag_fail(diag, EB_ERR_DEVICE, "failed to upload the weights of %s: %s",
                              e->what, cudaGetErrorString(ce));
    }
    if (st == EB_OK) {
        for (size_t i = 0; i < g->n_values; i++) {
            if (use[i] & USE_PREC)
                s->dptr[i] = (char *)s->d_weights + off[2 * i];
            if (use[i] & USE_F32)
                s->dptr32[i] = (float *)((char *)s->d_weights + off[2 * i + 1]);
        }
        e->plan.weight_bytes = total; /* what the device holds (fp16: halves) */
    }
    free(img);
done:
    free(use);
    free(off);
    return st;
}

/* Elements input i may hold: its shape's, or in a dynamic graph its bounds' (the load's shapes
 * have past 0). */
static size_t input_elems(const struct eb_graph *g, size_t i)
{
    const struct eb_ir_value *v = &g->values[g->inputs[i]];
    const size_t bound = (size_t)(g->in_cap_bytes[i] / eb_dtype_size(v->dtype));
    return bound > (size_t)v->numel ? bound : (size_t)v->numel;
}

static enum eb_status cap_check(struct eb_engine *e, const struct eb_engine_options *opt,
                                uint64_t needed, struct eb_diag *diag)
{
    char cap[128];
    if (opt->mem_cap_bytes > 0 && needed > opt->mem_cap_bytes)
        return eb_diag_fail_advise(
            diag, EB_ERR_LIMIT, EB_ADVICE_MEM_LIMIT,
            "failed to load model %s on cuda: needed %.1f MiB, %s; planned: "
            "arena %.1f, weights %.1f, workspaces and I/O %.1f MiB",
            e->what, eb_engine__mib(needed),
            eb_engine__cap_text(e, opt->mem_cap_bytes, cap, sizeof(cap)),
            eb_engine__mib(e->plan.arena_bytes), eb_engine__mib(e->plan.weight_bytes),
            eb_engine__mib(needed - e->plan.arena_bytes - e->plan.weight_bytes));
    return EB_OK;
}

/* Shape data value v's most bytes (its slot's, or its load-time size). */
static size_t sd_bytes(const struct eb_ir_value *v)
{
    return v->cap_bytes > v->nbytes ? v->cap_bytes : v->nbytes;
}

/* Value v is an output of node order[k] that computes shape data on the host (a dynamic
 * graph's: the nodes after it infer their shapes from it). */
static int shape_node(const struct eb_engine *e, const struct cu_state *s, size_t k)
{
    const struct eb_ir_node *n = &e->g->nodes[e->order[k]];
    return s->on_cpu[k] && n->n_out > 0 && e->g->values[n->out[0]].shape_data;
}

/*
 * A dynamic graph's shape data gets pinned host bytes of its own, outside the pinned arena
 * mirror: it is written as the run is enqueued, while the stream may still read and write the
 * mirror's bytes of the values planned at the same offsets; pinned, so that a captured forward
 * uploads it from there. s->sd_cap: the bytes dyn_shape_data may write.
 */
static enum eb_status bind_shape_data(struct eb_engine *e, struct cu_state *s, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    size_t total = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const struct eb_ir_value *v = &g->values[i];
        if (v->shape_data && v->offset >= 0 && !v->is_input && !v->is_output)
            total += eb_cpu_align64(sd_bytes(v) + 1);
    }
    if (total > 0)
        CUDA_TRY(cudaMallocHost(&s->h_sd, total));
    e->host_bytes += total;
    char *at = s->h_sd;
    for (size_t i = 0; i < g->n_values; i++) {
        struct eb_ir_value *v = &g->values[i];
        if (!v->shape_data || v->offset < 0 || v->is_input || v->is_output)
            continue;
        memcpy(at, v->data, v->nbytes);
        v->data = at;
        at += eb_cpu_align64(sd_bytes(v) + 1);
    }
    for (size_t k = 0; k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        for (int o = 0; shape_node(e, s, k) && o < n->n_out; o++)
            s->sd_cap += (1 + EB_MAX_RANK) * sizeof(int64_t) + sd_bytes(&g->values[n->out[o]]);
    }
    return EB_OK;
}

/* A dynamic graph's table of CUDA Graphs and its scratch (dyn_pick); off when profiled (every
 * run is timed node by node). */
static enum eb_status dyn_graphs_init(struct eb_engine *e, struct cu_state *s,
                                      const struct eb_engine_options *opt, struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    for (size_t i = 0; i < g->n_inputs; i++)
        s->key_len += (size_t)g->values[g->inputs[i]].rank + 1;
    s->dg = calloc(EB_CU_DYN_GRAPHS, sizeof(*s->dg));
    s->key = malloc((s->key_len + 1) * sizeof(int64_t));
    s->sd = malloc(s->sd_cap + 1);
    s->checks = malloc((e->n_order + 1) * sizeof(*s->checks));
    if (s->dg == NULL || s->key == NULL || s->sd == NULL || s->checks == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
    s->dg_on = !e->profile;
    s->dg_kept = 1;
    for (size_t k = 0; k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        if (s->on_cpu[k] && !shape_node(e, s, k))
            s->dg_kept = 0;
        int reads_data = 0;
        for (int i = 0; i < n->n_in; i++) {
            const struct eb_ir_value *v = n->in[i] >= 0 ? &g->values[n->in[i]] : NULL;
            reads_data |= v != NULL && !v->is_const && !v->shape_data;
        }
        if (n->dyn && n->op->run_checks_data && reads_data)
            s->checks[s->n_checks++] = k;
    }
    if (s->dg_on)
        eb_log_msg(opt->log, EB_LOG_INFO,
                   "model %s on cuda: shapes change from run to run; each run's forward is "
                   "captured into a CUDA Graph at its first input shapes and replayed when they "
                   "come again (at most %d graphs; other shapes run node by node)",
                   e->what, EB_CU_DYN_GRAPHS);
    return EB_OK;
}

static enum eb_status cu_bind(struct eb_engine *e, const struct eb_engine_options *opt,
                              struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    struct cu_state *s = state_of(e);
    size_t free0 = 0, free1 = 0, total_mem = 0;
    enum eb_status st;
    CUDA_TRY(cudaSetDevice(s->gpu));
    CUDA_TRY(cudaMemGetInfo(&free0, &total_mem));
    /* I/O buffers: inputs in precision (+ float staging in fp16), float output staging. */
    size_t io = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const struct eb_ir_value *v = &g->values[g->inputs[i]];
        io += align_dev(input_elems(g, i) * eb_cu__es(s, v));
        if (s->dt == EB_CUK_F16 && v->dtype == EB_DTYPE_F32)
            io += align_dev(input_elems(g, i) * sizeof(float));
    }
    if (s->dt == EB_CUK_F16)
        for (size_t i = 0; i < g->n_outputs; i++)
            io += align_dev((size_t)g->values[g->outputs[i]].numel * sizeof(float)); /* floats */
    int any_matmul = 0;
    for (size_t k = 0; k < e->n_order; k++)
        any_matmul |= !s->on_cpu[k] && s->nodes[k].d.kind == EB_DESC_MATMUL;
    s->blas_ws_bytes = any_matmul ? BLAS_WS_BYTES : 0;
    /* The weights first (their device size is known only after the upload's layout). */
    if ((st = upload_weights(e, s, diag)) != EB_OK ||
        (st = eb_cu__qconv_upload(e, s, diag)) != EB_OK)
        return st;
    uint64_t fixed = align_dev(e->plan.arena_bytes) + e->plan.weight_bytes + io + s->blas_ws_bytes +
                     align_dev(s->xpose_bytes);
    if (opt->mem_cap_bytes > 0 && fixed > opt->mem_cap_bytes && e->plan_concurrent) {
        /* over the cap with branches apart: the sequential plan, which reuses more (the lanes
         * then follow its reuse) */
        const uint64_t weights = e->plan.weight_bytes; /* the device's, from the upload */
        if ((st = eb_memplan_build(g, 0, &e->plan, diag)) != EB_OK)
            return st;
        e->plan_concurrent = 0;
        e->plan.weight_bytes = weights;
        fixed = align_dev(e->plan.arena_bytes) + e->plan.weight_bytes + io + s->blas_ws_bytes +
                align_dev(s->xpose_bytes);
    }
    if ((st = cap_check(e, opt, fixed, diag)) != EB_OK)
        return st;
    if ((st = eb_cu__dev_alloc(e, s, align_dev(e->plan.arena_bytes), &s->d_arena, "the arena",
                               diag)) != EB_OK)
        return st;
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i].offset >= 0)
            s->dptr[i] = (char *)s->d_arena + g->values[i].offset;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const struct eb_ir_value *v = &g->values[g->inputs[i]];
        const size_t elems = input_elems(g, i);
        if ((st = eb_cu__dev_alloc(e, s, align_dev(elems * eb_cu__es(s, v)), &s->d_in[i],
                                   "an input", diag)) != EB_OK)
            return st;
        s->dptr[g->inputs[i]] = s->d_in[i];
        if (s->dt == EB_CUK_F16 && v->dtype == EB_DTYPE_F32 &&
            (st = eb_cu__dev_alloc(e, s, align_dev(elems * sizeof(float)), &s->d_in_f32[i],
                                   "an input", diag)) != EB_OK)
            return st;
    }
    /* where each value lives is known: which one-row products may run before their turn */
    if ((opt->passes & EB_ENGINE_PASS_FUSE) && g->dynamic &&
        (st = eb_cu__group_gemv(e, s, &e->info_dev.n_row_groups, diag)) != EB_OK)
        return st;
    for (size_t i = 0; i < g->n_outputs; i++) {
        const struct eb_ir_value *v = &g->values[g->outputs[i]];
        const size_t host_bytes = (size_t)v->numel * eb_dtype_size(v->dtype);
        if (s->dt == EB_CUK_F16 && v->dtype == EB_DTYPE_F32 &&
            (st = eb_cu__dev_alloc(e, s, align_dev(host_bytes), &s->d_out_f32[i], "an output",
                                   diag)) != EB_OK)
            return st;
        CUDA_TRY(cudaMallocHost(&s->h_out[i], host_bytes > 0 ? host_bytes : 1));
        e->host_bytes += host_bytes;
    }
    if (s->blas_ws_bytes > 0) {
        if ((st = eb_cu__dev_alloc(e, s, s->blas_ws_bytes, &s->d_blas_ws, "the cuBLAS workspace",
                                   diag)) != EB_OK)
            return st;
        if (cublasSetWorkspace(s->cublas, s->d_blas_ws, s->blas_ws_bytes) != CUBLAS_STATUS_SUCCESS)
            return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s: cublasSetWorkspace failed",
                                e->what);
    }
    if (s->xpose_bytes > 0 && (st = eb_cu__dev_alloc(e, s, align_dev(s->xpose_bytes), &s->d_xpose,
                                                     "the layout transpose buffer", diag)) != EB_OK)
        return st;
    /* Convolution algorithms, measured with a temporary workspace of what the cap leaves. */
    size_t ws_max = WS_MAX_BYTES;
    if (opt->mem_cap_bytes > 0)
        ws_max = opt->mem_cap_bytes > fixed ? (size_t)(opt->mem_cap_bytes - fixed) : 0;
    if (ws_max > WS_MAX_BYTES)
        ws_max = WS_MAX_BYTES;
    if (ws_max > free0 / 2)
        ws_max = free0 / 2;
    void *tmp_ws = NULL;
    int any_conv = 0;
    for (size_t k = 0; k < e->n_order; k++)
        any_conv |= !s->on_cpu[k] && s->nodes[k].d.kind == EB_DESC_CONV;
    if (any_conv && ws_max > 0 && cudaMalloc(&tmp_ws, ws_max) != cudaSuccess)
        tmp_ws = NULL, ws_max = 0;
    st = EB_OK;
    for (size_t k = 0; k < e->n_order && st == EB_OK; k++) {
        struct cu_node *cn = &s->nodes[k];
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        if (s->on_cpu[k])
            continue;
        if (cn->d.kind == EB_DESC_CONV) {
            const struct eb_ir_value *b = eb_op_in(g, n, 2);
            cn->bias = b != NULL ? s->dptr32[n->in[2]] : NULL;
            st = eb_cu__conv_plan(e, s, k, ws_max, tmp_ws, diag);
            if (st == EB_OK && cn->ws_bytes > s->ws_bytes)
                s->ws_bytes = cn->ws_bytes;
        } else if (cn->d.kind == EB_DESC_QUANTIZE || cn->d.kind == EB_DESC_DEQUANTIZE) {
            cn->scale = s->dptr32[n->in[1]];
        }
    }
    cudaFree(tmp_ws);
    if (st != EB_OK)
        return st;
    /* cuDNN workspaces: one per lane, each as large as its largest node's (lanes run side by
     * side), unless the cap leaves room for one only: then one, and its users ordered */
    const int parallel = (opt->passes & EB_ENGINE_PASS_LANES) != 0 && !g->dynamic;
    size_t lane_ws[EB_CU_LANES];
    for (int shared = 0; shared < 2; shared++) {
        if ((st = eb_cu__schedule(e, s, parallel, shared, diag)) != EB_OK)
            return st;
        memset(lane_ws, 0, sizeof(lane_ws));
        for (size_t k = 0; k < e->n_order; k++) {
            const int l = shared ? 0 : s->nodes[k].lane;
            if (!s->on_cpu[k] && align_dev(s->nodes[k].ws_bytes) > lane_ws[l])
                lane_ws[l] = align_dev(s->nodes[k].ws_bytes);
        }
        s->ws_bytes = 0;
        for (int l = 0; l < EB_CU_LANES; l++)
            s->ws_bytes += lane_ws[l];
        if (opt->mem_cap_bytes == 0 || fixed + s->ws_bytes <= opt->mem_cap_bytes)
            break;
    }
    e->workspace_bytes = io + s->blas_ws_bytes + align_dev(s->xpose_bytes) + s->ws_bytes;
    if ((st = cap_check(e, opt, fixed + s->ws_bytes, diag)) != EB_OK)
        return st;
    if ((st = eb_cu__dev_alloc(e, s, s->ws_bytes, &s->d_ws, "the cuDNN workspaces", diag)) != EB_OK)
        return st;
    for (size_t l = 0, at = 0; l < EB_CU_LANES; at += lane_ws[l], l++)
        s->lane_ws[l] = lane_ws[l] > 0 ? (char *)s->d_ws + at : NULL;
    if (lane_ws[1] + lane_ws[2] + lane_ws[3] == 0) /* one workspace: every lane's */
        for (int l = 1; l < EB_CU_LANES; l++)
            s->lane_ws[l] = s->lane_ws[0];
    s->ev_done = eb_ir_arena_alloc(&g->arena, e->n_order * sizeof(cudaEvent_t) + 1);
    s->seen = eb_ir_arena_alloc(&g->arena, e->n_order * EB_CU_LANES * sizeof(int64_t) + 1);
    if (s->ev_done == NULL || s->seen == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
    for (size_t k = 0; k < e->n_order; k++)
        s->ev_done[k] = NULL;
    for (size_t k = 0; s->n_lanes > 1 && k < e->n_order; k++)
        CUDA_TRY(cudaEventCreateWithFlags(&s->ev_done[k], cudaEventDisableTiming));
    for (size_t k = 0; k < e->n_order; k++)
        if (s->nodes[k].g_plan != NULL && (st = eb_cu__conv_graph_bind(e, s, k, diag)) != EB_OK)
            return st;
    /* Nodes on the CPU: a pinned host mirror of the arena (their inputs and outputs cross); a
     * dynamic graph's inputs are copied into their slots there (eb_engine_run). */
    if (s->n_on_cpu > 0 || g->dynamic) {
        const size_t host = eb_cpu_align64((size_t)e->plan.arena_bytes) + e->scratch_bytes +
                            EB_MEMPLAN_ALIGN + EB_CPU_READ_SLACK;
        CUDA_TRY(cudaMallocHost(&s->h_arena, host));
        e->host_bytes += host + e->packed_bytes;
        char *base = (char *)(((uintptr_t)s->h_arena + EB_MEMPLAN_ALIGN - 1) / EB_MEMPLAN_ALIGN *
                              EB_MEMPLAN_ALIGN);
        for (size_t i = 0; i < g->n_values; i++)
            if (g->values[i].offset >= 0)
                g->values[i].data = base + g->values[i].offset;
        if (e->scratch_bytes > 0) {
            e->cpu.scratch = base + eb_cpu_align64((size_t)e->plan.arena_bytes);
            e->cpu.scratch_bytes = (size_t)e->scratch_bytes;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        if (!g->values[g->outputs[i]].is_const)
            g->values[g->outputs[i]].data = s->h_out[i];
    if (g->dynamic && (st = bind_shape_data(e, s, diag)) != EB_OK)
        return st;
    if (g->dynamic && (st = dyn_graphs_init(e, s, opt, diag)) != EB_OK)
        return st;
    if (e->profile) {
        s->ev_nodes = eb_ir_arena_alloc(&g->arena, (e->n_order + 1) * sizeof(cudaEvent_t));
        if (s->ev_nodes == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory",
                                e->what);
        for (size_t k = 0; k <= e->n_order; k++)
            CUDA_TRY(cudaEventCreate(&s->ev_nodes[k]));
    }
    CUDA_TRY(cudaDeviceSynchronize());
    CUDA_TRY(cudaMemGetInfo(&free1, &total_mem));
    e->measured_bytes = free0 > free1 ? free0 - free1 : 0;
    /* input 0 read by one channels-last conv only: frames are letterboxed straight into its
     * transposed buffer (eb_engine_run_frame) */
    s->pre_conv = -1;
    const struct eb_ir_value *in0 = &g->values[g->inputs[0]];
    for (size_t k = 0; k < e->n_order && in0->n_uses == 1 && in0->rank == 4; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        if (!s->on_cpu[k] && s->nodes[k].d.kind == EB_DESC_CONV && n->in[0] == g->inputs[0] &&
            s->nodes[k].x_xpose && s->nodes[k].nhwc)
            s->pre_conv = (int64_t)k;
    }
    /* a dynamic graph's inputs whose host bytes a node on the CPU reads (a Shape reads only the
     * shape): they always come from the host */
    for (size_t k = 0; g->dynamic && k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        if (!s->on_cpu[k] || n->op == &eb_op_shape)
            continue;
        for (int a = 0; a < n->n_in; a++)
            for (size_t i = 0; i < g->n_inputs; i++)
                if (n->in[a] >= 0 && n->in[a] == g->inputs[i])
                    s->in_host_read[i] = 1;
    }
    e->info_dev.graph = !g->dynamic || s->dg_on; /* dynamic: one graph per input shapes */
    e->info_dev.lanes = s->n_lanes;
    return EB_OK;
}

/* A node on the CPU, called in stream order by the CUDA runtime's host-function thread. */
static void CUDART_CB host_node(void *arg)
{
    const struct cu_host_call *c = arg;
    eb_engine__cpu_exec(c->e, c->k);
}

static enum eb_status enqueue_cpu_node(struct eb_engine *e, struct cu_state *s, size_t k,
                                       cudaStream_t stream, struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    for (int i = 0; i < n->n_in; i++) {
        if (n->in[i] < 0)
            continue;
        const struct eb_ir_value *v = &g->values[n->in[i]];
        if (v->is_const || v->is_input || v->shape_data || v->nbytes == 0) /* on the host */
            continue;
        CUDA_TRY(
            cudaMemcpyAsync(v->data, s->dptr[n->in[i]], v->nbytes, cudaMemcpyDeviceToHost, stream));
    }
    CUDA_TRY(cudaLaunchHostFunc(stream, host_node, &s->nodes[k].call));
    for (int i = 0; i < n->n_out; i++) {
        const struct eb_ir_value *v = &g->values[n->out[i]];
        if (v->nbytes > 0 && s->dptr[n->out[i]] != NULL)
            CUDA_TRY(cudaMemcpyAsync(s->dptr[n->out[i]], v->data, v->nbytes, cudaMemcpyHostToDevice,
                                     stream));
    }
    return EB_OK;
}

/*
 * Node k of a dynamic graph, as its run is enqueued (eagerly: nothing captured): a node that
 * reads a dyn value has its shapes inferred again and, on the GPU, its description redone at
 * them; shape data is computed on the host now (the nodes after it infer from it) and uploaded;
 * the rest is enqueued as in a static graph, at this run's sizes.
 */
static enum eb_status enqueue_dyn_node(struct eb_engine *e, struct cu_state *s, size_t k,
                                       struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    enum eb_status st;
    if (n->dyn && (st = eb_engine__reinfer(e, k, 1, diag)) != EB_OK)
        return st;
    if (s->on_cpu[k] && n->n_out > 0 && g->values[n->out[0]].shape_data) {
        eb_engine__cpu_exec(e, k);
        for (int i = 0; i < n->n_out; i++) {
            const struct eb_ir_value *v = &g->values[n->out[i]];
            if (v->nbytes > 0 && s->dptr[n->out[i]] != NULL)
                CUDA_TRY(cudaMemcpyAsync(s->dptr[n->out[i]], v->data, v->nbytes,
                                         cudaMemcpyHostToDevice, s->stream));
        }
        return EB_OK;
    }
    if (s->nodes[k].skip) /* its chain's last node computes it: shapes only */
        return EB_OK;
    if (n->dyn && !s->on_cpu[k]) {
        char why[160];
        const enum eb_desc_kind kind = s->nodes[k].d.kind;
        if (!eb_cu__node_ok(e, s, k, why, sizeof(why)) || s->nodes[k].d.kind != kind)
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "failed to run model %s on cuda: node '%s' (%s) has %s at this "
                                "run's shapes",
                                e->what, n->name, n->op->onnx_name, why);
    }
    return eb_cu__enqueue_node_on(e, s, k, s->stream, enqueue_cpu_node, diag);
}

/* The input's element type on the device. */
static enum eb_cuk_dt input_dt(const struct eb_engine *e, const struct cu_state *s)
{
    return eb_cu__es(s, &e->g->values[e->g->inputs[0]]) == 2 ? EB_CUK_F16 : EB_CUK_F32;
}

/* How enqueue_forward lays the nodes out: one after another on s->stream (FWD_TIMED: with an
 * event and an NVTX range around each, the profiled pass), or on their lanes (a capture). */
enum fwd { FWD_SERIAL, FWD_TIMED, FWD_LANES };

/* eb_engine_run_frame's preprocessing, launched directly (outside the captured forward, whose
 * replay would otherwise carry an event node between the two): the letterbox of the frame at
 * device address `d_src` (s->d_frame, or a pinned frame's mapping) into input 0 (or
 * channels-last into the first conv's transpose buffer), then s->ev_pre. */
static enum eb_status enqueue_pre(struct eb_engine *e, struct cu_state *s,
                                  const struct eb_cuk_letterbox *pre, const void *d_src,
                                  struct eb_diag *diag)
{
    CUDA_TRY(eb_cuk_letterbox(s->stream, input_dt(e, s), pre, d_src,
                              pre->nhwc ? s->d_xpose : s->d_in[0]));
    CUDA_TRY(cudaEventRecord(s->ev_pre, s->stream));
    return EB_OK;
}

/* The forward between the inputs on the device and the outputs ready to copy back; `frame`:
 * input 0 came from enqueue_pre (already in precision, channels-last where s->pre_conv says). */
static enum eb_status enqueue_forward(struct eb_engine *e, struct cu_state *s, enum fwd how,
                                      int frame, struct eb_diag *diag)
{
    const int timed = how == FWD_TIMED;
    const struct eb_graph *g = e->g;
    enum eb_status st;
    s->pre_nhwc = frame && s->pre_conv >= 0;
    for (size_t i = frame ? 1 : 0; i < g->n_inputs; i++)
        if (s->d_in_f32[i] != NULL && !s->in_dev[i]) {
            const struct eb_ir_value *v = &g->values[g->inputs[i]];
            CUDA_TRY(eb_cuk_cast(s->stream, EB_CUK_F32, EB_CUK_F16, v->numel, s->d_in_f32[i],
                                 s->d_in[i]));
        }
    if (how == FWD_LANES && (st = eb_cu__enqueue_lanes(e, s, enqueue_cpu_node, diag)) != EB_OK)
        return st;
    for (size_t k = 0; how != FWD_LANES && k < e->n_order; k++) {
        if (timed) {
            CUDA_TRY(cudaEventRecord(s->ev_nodes[k], s->stream));
            eb_engine__nvtx_node_push(e, k); /* the profiled pass: one NVTX range per node */
        }
        st = g->dynamic ? enqueue_dyn_node(e, s, k, diag)
                        : eb_cu__enqueue_node_on(e, s, k, s->stream, enqueue_cpu_node, diag);
        if (timed)
            eb_engine__nvtx_node_pop(e);
        if (st != EB_OK)
            return st;
    }
    if (timed)
        CUDA_TRY(cudaEventRecord(s->ev_nodes[e->n_order], s->stream));
    for (size_t i = 0; i < g->n_outputs; i++)
        if (s->d_out_f32[i] != NULL && !e->keep_out[i]) {
            const struct eb_ir_value *v = &g->values[g->outputs[i]];
            CUDA_TRY(eb_cuk_cast(s->stream, EB_CUK_F16, EB_CUK_F32, v->numel,
                                 s->dptr[g->outputs[i]], s->d_out_f32[i]));
        }
    if (e->head_on) {
        const int o = e->head_out;
        const struct eb_ir_value *v = &g->values[g->outputs[o]];
        const float *x = s->d_out_f32[o] != NULL ? s->d_out_f32[o] : s->dptr[g->outputs[o]];
        CUDA_TRY(cudaMemsetAsync(s->d_head, 0, 16, s->stream));
        CUDA_TRY(eb_cuk_head_rows(s->stream, (int32_t)v->shape[1] - 4, (int32_t)v->shape[2],
                                  s->head_conf, x, s->d_head, (char *)s->d_head + 16));
    }
    return EB_OK;
}

/* Captures the forward (`frame`: as enqueue_forward's) once into graph_out and gexec_out; on
 * failure (a library call that cannot be captured) the device keeps launching directly (state
 * -1) and says so in exec info. */
static enum eb_status capture(struct eb_engine *e, struct cu_state *s, int frame,
                              cudaGraph_t *graph_out, cudaGraphExec_t *gexec_out, int *state_out,
                              struct eb_diag *diag)
{
    struct eb_diag local = {0};
    CUDA_TRY(cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeThreadLocal));
    enum eb_status st =
        enqueue_forward(e, s, s->n_lanes > 1 ? FWD_LANES : FWD_SERIAL, frame, &local);
    cudaGraph_t graph = NULL;
    cudaError_t ce = cudaStreamEndCapture(s->stream, &graph);
    if (st == EB_OK && ce == cudaSuccess)
        ce = cudaGraphInstantiate(gexec_out, graph, 0);
    if (st != EB_OK || ce != cudaSuccess) {
        if (graph != NULL)
            cudaGraphDestroy(graph);
        (void)cudaGetLastError(); /* clear the capture's error */
        *gexec_out = NULL;
        *state_out = -1;
        e->info_dev.graph = 0;
        e->info_dev.lanes = 1;
        return EB_OK;
    }
    *graph_out = graph;
    *state_out = 1;
    return EB_OK;
}

/* After the forward is enqueued (ev[2] next): outputs back, the event times, the profile. */
static enum eb_status finish_run(struct eb_engine *e, struct cu_state *s, int profiling, int pre,
                                 struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    CUDA_TRY(cudaEventRecord(s->ev[2], s->stream));
    for (size_t i = 0; i < g->n_outputs; i++) {
        const struct eb_ir_value *v = &g->values[g->outputs[i]];
        if (v->is_const || (e->head_on && (size_t)e->head_out == i) || e->keep_out[i])
            continue;
        const void *src = s->d_out_f32[i] != NULL ? s->d_out_f32[i] : s->dptr[g->outputs[i]];
        CUDA_TRY(cudaMemcpyAsync(s->h_out[i], src, (size_t)v->numel * eb_dtype_size(v->dtype),
                                 cudaMemcpyDeviceToHost, s->stream));
    }
    if (e->head_on)
        CUDA_TRY(cudaMemcpyAsync(s->h_head, s->d_head, s->head_bytes, cudaMemcpyDeviceToHost,
                                 s->stream));
    CUDA_TRY(cudaEventRecord(s->ev[3], s->stream));
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    for (size_t i = 0; i < g->n_outputs; i++) {
        const struct eb_ir_value *v = &g->values[g->outputs[i]];
        const int back = !v->is_const && !(e->head_on && (size_t)e->head_out == i);
        s->out_gen[i] = back ? s->run_gen : 0;
        s->out_bytes[i] = back ? (size_t)v->numel * eb_dtype_size(v->dtype) : 0;
    }
    if (e->head_on) {
        int32_t count = 0;
        memcpy(&count, s->h_head, sizeof(count));
        const size_t cap = (s->head_bytes - 16) / sizeof(struct eb_anchor_row);
        e->head_rows = (struct eb_anchor_row *)(void *)((char *)s->h_head + 16);
        e->head_count = count < 0 ? 0 : (size_t)count < cap ? (size_t)count : cap;
    }
    float ms[3] = {0}, pre_ms = 0.0f;
    for (int i = 0; i < 3; i++)
        CUDA_TRY(cudaEventElapsedTime(&ms[i], s->ev[i], s->ev[i + 1]));
    if (pre) {
        CUDA_TRY(cudaEventElapsedTime(&pre_ms, s->ev[1], s->ev_pre));
        ms[1] -= pre_ms;
    }
    e->timing.h2d_ms = ms[0];
    e->timing.compute_ms = ms[1];
    e->timing.d2h_ms = ms[2];
    e->timing.pre_ms = pre_ms;
    if (profiling) {
        for (size_t k = 0; k < e->n_order; k++) {
            float t = 0.0f;
            CUDA_TRY(cudaEventElapsedTime(&t, s->ev_nodes[k], s->ev_nodes[k + 1]));
            e->prof[k].total_ms += t;
        }
        e->prof_runs++;
        e->prof_run_ms += ms[1];
    }
    return EB_OK;
}

/* The inputs' dims into s->key; their hash (FNV-1a). */
static uint64_t dyn_key(const struct eb_engine *e, struct cu_state *s)
{
    const struct eb_graph *g = e->g;
    uint64_t h = 1469598103934665603ull;
    size_t at = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const struct eb_ir_value *v = &g->values[g->inputs[i]];
        for (int d = 0; d < v->rank; d++) {
            s->key[at++] = v->shape[d];
            h = (h ^ (uint64_t)v->shape[d]) * 1099511628211ull;
        }
        s->key[at++] = s->in_dev[i];
        h = (h ^ (uint64_t)s->in_dev[i]) * 1099511628211ull;
    }
    return h;
}

/* The shape data the host computed for this run (every output of every shape node: its dims,
 * then its bytes) into s->sd; its length, or SIZE_MAX when it would not fit. */
static size_t dyn_shape_data(const struct eb_engine *e, struct cu_state *s)
{
    const struct eb_graph *g = e->g;
    size_t at = 0;
    for (size_t k = 0; k < e->n_order; k++) {
        if (!shape_node(e, s, k))
            continue;
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        for (int o = 0; o < n->n_out; o++) {
            const struct eb_ir_value *v = &g->values[n->out[o]];
            int64_t dims[1 + EB_MAX_RANK] = {v->rank};
            for (int d = 0; d < v->rank && d < EB_MAX_RANK; d++)
                dims[1 + d] = v->shape[d];
            if (at + sizeof(dims) + v->nbytes > s->sd_cap || (v->nbytes > 0 && v->data == NULL))
                return SIZE_MAX;
            memcpy(s->sd + at, dims, sizeof(dims));
            at += sizeof(dims);
            if (v->nbytes > 0)
                memcpy(s->sd + at, v->data, v->nbytes);
            at += v->nbytes;
        }
    }
    return at;
}

/* What the host computes of a dynamic graph's run before anything is enqueued: the dyn nodes'
 * shapes at this run's inputs, the shape nodes' data (as enqueue_dyn_node does, nothing
 * enqueued). */
static enum eb_status dyn_host_pass(struct eb_engine *e, struct cu_state *s, struct eb_diag *diag)
{
    for (size_t k = 0; k < e->n_order; k++) {
        enum eb_status st;
        if (e->g->nodes[e->order[k]].dyn && (st = eb_engine__reinfer(e, k, 1, diag)) != EB_OK)
            return st;
        if (shape_node(e, s, k))
            eb_engine__cpu_exec(e, k);
    }
    return EB_OK;
}

/* The dyn values' ranks and dims as the last shape pass left them (each: its rank, then its
 * dims) into `out` when not NULL; their count of int64s. */
static size_t dyn_shapes_save(const struct eb_graph *g, int64_t *out)
{
    size_t at = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const struct eb_ir_value *v = &g->values[i];
        if (!v->dyn || v->is_input)
            continue;
        if (out != NULL) {
            out[at] = v->rank;
            memcpy(out + at + 1, v->shape, (size_t)v->rank * sizeof(int64_t));
        }
        at += 1 + (size_t)v->rank;
    }
    return at;
}

/*
 * A replay's shapes without the shape pass: every dyn value's rank and dims and the shape
 * nodes' data as at the graph's capture (they follow from the inputs' shapes alone, the key:
 * shape data is computed from shapes and constants, and a shape from a run's data is refused at
 * load), then the nodes that check a run's data (s->checks) infer again.
 */
static enum eb_status dyn_restore(struct eb_engine *e, struct cu_state *s,
                                  const struct cu_dyn_graph *dg, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    const int64_t *at = dg->shapes;
    for (size_t i = 0; i < g->n_values; i++) {
        struct eb_ir_value *v = &g->values[i];
        if (!v->dyn || v->is_input)
            continue;
        v->rank = (int)at[0];
        int64_t numel = 1;
        for (int d = 0; d < EB_MAX_RANK; d++) {
            v->shape[d] = d < v->rank ? at[1 + d] : 0;
            numel *= d < v->rank ? v->shape[d] : 1;
        }
        v->numel = numel;
        v->nbytes = (size_t)numel * eb_dtype_size(v->dtype);
        at += 1 + v->rank;
    }
    /* the shape data, where the captured uploads read it (dyn_shape_data's layout) */
    size_t off = 0;
    for (size_t k = 0; k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        for (int o = 0; shape_node(e, s, k) && o < n->n_out; o++) {
            struct eb_ir_value *v = &g->values[n->out[o]];
            off += (1 + EB_MAX_RANK) * sizeof(int64_t);
            if (v->nbytes > 0)
                memcpy(v->data, dg->sd + off, v->nbytes);
            off += v->nbytes;
        }
    }
    for (size_t c = 0; c < s->n_checks; c++) {
        const enum eb_status st = eb_engine__reinfer(e, s->checks[c], 1, diag);
        if (st != EB_OK)
            return st;
    }
    return EB_OK;
}

static void dyn_graph_free(struct cu_dyn_graph *dg)
{
    if (dg->gexec != NULL)
        cudaGraphExecDestroy(dg->gexec);
    if (dg->graph != NULL)
        cudaGraphDestroy(dg->graph);
    free(dg->key);
    memset(dg, 0, sizeof(*dg));
}

static size_t free_now(void);

/*
 * A dynamic graph's run (not profiled): the CUDA Graph captured at these input shapes, or NULL
 * (*out) to run node by node. A graph replays only where the host's shape data is byte for
 * byte what it was at the capture (everything the captured launches baked in follows from the
 * inputs' shapes and that data); a new signature is captured while the table has room (count
 * and device memory); a capture that fails switches graphs off for the engine (exec info
 * says so).
 */
static enum eb_status dyn_pick(struct eb_engine *e, struct cu_state *s, struct cu_dyn_graph **out,
                               struct eb_diag *diag)
{
    *out = NULL;
    const uint64_t h = dyn_key(e, s);
    const size_t key_bytes = s->key_len * sizeof(int64_t);
    for (size_t i = 0; i < s->n_dg; i++) {
        struct cu_dyn_graph *dg = &s->dg[i];
        if (dg->hash != h || memcmp(dg->key, s->key, key_bytes) != 0)
            continue;
        if (s->dg_kept) {
            *out = dg;
            e->run_shapes_kept = 1;
            return dyn_restore(e, s, dg, diag);
        }
        enum eb_status st = dyn_host_pass(e, s, diag);
        if (st != EB_OK)
            return st;
        const size_t n = dyn_shape_data(e, s);
        if (n == dg->sd_len && memcmp(dg->sd, s->sd, n) == 0)
            *out = dg;
        else
            s->dg_misses++;
        return EB_OK;
    }
    const uint64_t cap_left = s->cap_bytes > 0
                                  ? (s->cap_bytes > s->dev_bytes ? s->cap_bytes - s->dev_bytes : 0)
                                  : EB_CU_DYN_GRAPH_MEM;
    if (s->n_dg == EB_CU_DYN_GRAPHS || s->dg_dev_bytes >= cap_left ||
        s->dg_dev_bytes >= EB_CU_DYN_GRAPH_MEM) {
        s->dg_misses++;
        return EB_OK;
    }
    struct cu_dyn_graph *dg = &s->dg[s->n_dg];
    const size_t free0 = free_now();
    struct eb_diag local = {0};
    CUDA_TRY(cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeThreadLocal));
    enum eb_status st = enqueue_forward(e, s, FWD_SERIAL, 0, &local);
    cudaError_t ce = cudaStreamEndCapture(s->stream, &dg->graph);
    if (st == EB_OK && ce == cudaSuccess)
        ce = cudaGraphInstantiate(&dg->gexec, dg->graph, 0);
    const size_t n = st == EB_OK && ce == cudaSuccess ? dyn_shape_data(e, s) : SIZE_MAX;
    const size_t n_shapes = s->dg_kept ? dyn_shapes_save(e->g, NULL) : 0;
    if (n != SIZE_MAX)
        dg->key = malloc(key_bytes + n_shapes * sizeof(int64_t) + n + 1);
    if (dg->key == NULL) {
        (void)cudaGetLastError(); /* clear the capture's error */
        dyn_graph_free(dg);
        /* a refusal at these shapes (a value over its slot, a node without a kernel there):
         * the run node by node says it again; anything else did not capture: node by node from
         * now on, and exec info says so */
        if (st == EB_OK || st == EB_ERR_DEVICE) {
            s->dg_on = 0;
            e->info_dev.graph = 0;
        }
        return EB_OK;
    }
    dg->hash = h;
    memcpy(dg->key, s->key, key_bytes);
    dg->shapes = dg->key + s->key_len;
    if (s->dg_kept)
        (void)dyn_shapes_save(e->g, dg->shapes);
    dg->sd = (unsigned char *)(dg->shapes + n_shapes);
    memcpy(dg->sd, s->sd, n);
    dg->sd_len = n;
    s->n_dg++;
    const size_t free1 = free_now();
    if (free0 > free1)
        s->dg_dev_bytes += free0 - free1;
    e->graph_bytes = s->dg_dev_bytes; /* in the engine's memory figures (eb_engine_mem) */
    *out = dg;
    return EB_OK;
}

/*
 * eb_engine_run's check for a dynamic graph's input i (its shape set): its `bytes` at `data` are
 * output j of the last run, exactly: the host buffer that run copied output j into (h_out[j]),
 * the same byte count, no run since (run_gen), the device copy not an input's or a constant's
 * slot (the other inputs' copies cannot overwrite it) and the same element type; and no node on
 * the CPU reads input i's host bytes. Then the run copies device to device (in_src[i]). The
 * caller does not write into an output's data (eb_engine_run: the engine's, read-only).
 */
static int cu_input_resident(struct eb_engine *e, size_t i, const void *data, size_t bytes)
{
    const struct eb_graph *g = e->g;
    struct cu_state *s = state_of(e);
    s->in_src[i] = NULL;
    s->in_dev[i] = 0;
    if (data == NULL || bytes == 0)
        return 0;
    const struct eb_ir_value *in = &g->values[g->inputs[i]];
    int kept = 0;
    for (size_t j = 0; j < g->n_outputs; j++) {
        const struct eb_ir_value *v = &g->values[g->outputs[j]];
        kept |= e->keep_out[j] && s->h_out[j] == data;
        if (s->h_out[j] != data || s->out_gen[j] != s->run_gen || s->out_bytes[j] != bytes ||
            v->dtype != in->dtype || v->is_input || v->is_const || s->in_host_read[i] ||
            s->run_gen == 0)
            continue;
        /* a kept output was not cast back to float: its bytes in the device's precision go
         * straight to the input's (in_dev: the forward does not cast them) */
        const int dev = e->keep_out[j] && s->d_in_f32[i] != NULL;
        s->in_src[i] = dev || s->d_out_f32[j] == NULL ? s->dptr[g->outputs[j]] : s->d_out_f32[j];
        s->in_dev[i] = (unsigned char)dev;
        if (s->in_src[i] != NULL)
            return 1;
    }
    return kept ? -1 : 0;
}

static enum eb_status cu_run(struct eb_engine *e, struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    struct cu_state *s = state_of(e);
    enum eb_status st;
    const int profiling = e->prof != NULL;
    CUDA_TRY(cudaSetDevice(s->gpu));
    s->run_gen++; /* from here on, the last run's outputs on the device may be overwritten */
    for (size_t i = 0; i < g->n_inputs; i++) /* an empty input was not asked about */
        if (g->values[g->inputs[i]].nbytes == 0)
            s->in_dev[i] = 0;
    if (!profiling && !g->dynamic && s->graph_state == 0 &&
        (st = capture(e, s, 0, &s->graph, &s->gexec, &s->graph_state, diag)) != EB_OK)
        return st;
    struct cu_dyn_graph *dg = NULL;
    e->run_shapes_kept = 0;
    if (!profiling && g->dynamic && s->dg_on && (st = dyn_pick(e, s, &dg, diag)) != EB_OK)
        return st;
    CUDA_TRY(cudaEventRecord(s->ev[0], s->stream));
    e->run_d2d_bytes = 0;
    /* the last run's outputs still on the device (cu_input_resident: a KV cache, 2 a layer)
     * go device to device, EB_CUK_MAX_PARTS of them a launch */
    struct eb_cuk_copy part[EB_CUK_MAX_PARTS];
    const void *part_x[EB_CUK_MAX_PARTS];
    void *part_y[EB_CUK_MAX_PARTS];
    int n_parts = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const struct eb_ir_value *v = &g->values[g->inputs[i]];
        void *dst = s->d_in_f32[i] != NULL && !s->in_dev[i] ? s->d_in_f32[i] : s->d_in[i];
        const void *src = s->in_src[i];
        s->in_src[i] = NULL;
        if (src == NULL) {
            CUDA_TRY(cudaMemcpyAsync(dst, v->data, v->nbytes, cudaMemcpyHostToDevice, s->stream));
            continue;
        }
        const size_t nb = s->in_dev[i] ? (size_t)v->numel * eb_cu__es(s, v) : v->nbytes;
        e->run_d2d_bytes += nb;
        if (nb > EB_CUK_MAX_ELEMS) {
            CUDA_TRY(cudaMemcpyAsync(dst, src, nb, cudaMemcpyDeviceToDevice, s->stream));
            continue;
        }
        part[n_parts] =
            (struct eb_cuk_copy){.rank = 1, .shape = {(int32_t)nb}, .xs = {1}, .ys = {1}};
        part_x[n_parts] = src;
        part_y[n_parts] = dst;
        if (++n_parts == EB_CUK_MAX_PARTS) {
            CUDA_TRY(eb_cuk_copy_parts(s->stream, 1, n_parts, part, part_x, part_y));
            n_parts = 0;
        }
    }
    if (n_parts > 0)
        CUDA_TRY(eb_cuk_copy_parts(s->stream, 1, n_parts, part, part_x, part_y));
    CUDA_TRY(cudaEventRecord(s->ev[1], s->stream));
    e->run_replayed = 0;
    if (dg != NULL) {
        CUDA_TRY(cudaGraphLaunch(dg->gexec, s->stream));
        e->run_replayed = 1;
    } else if (!profiling && !g->dynamic && s->graph_state == 1) {
        CUDA_TRY(cudaGraphLaunch(s->gexec, s->stream));
        e->run_replayed = 1;
    } else if ((st = enqueue_forward(e, s, profiling ? FWD_TIMED : FWD_SERIAL, 0, diag)) != EB_OK) {
        memset(s->in_dev, 0, sizeof(s->in_dev));
        return st;
    }
    memset(s->in_dev, 0, sizeof(s->in_dev)); /* this run's (cu_input_resident sets them) */
    return finish_run(e, s, profiling, 0, diag);
}

/* The driver's free device memory now (0 when it cannot say). */
static size_t free_now(void)
{
    size_t f = 0, t = 0;
    return cudaMemGetInfo(&f, &t) == cudaSuccess ? f : 0;
}

/* Adds the drop in the driver's free memory since `free0` (free_now before allocating) to
 * e->measured_bytes, the cross-check of our own count; freed buffers lower it. */
static void measured_since(struct eb_engine *e, size_t free0)
{
    const size_t f = free_now();
    if (free0 == 0 || f == 0)
        return;
    const int64_t m = (int64_t)e->measured_bytes + ((int64_t)free0 - (int64_t)f);
    e->measured_bytes = m > 0 ? (uint64_t)m : 0;
}

/* Destroys both captured graphs (the stream idle); the states say "not captured". */
static void free_graphs(struct cu_state *s)
{
    if (s->gexec != NULL)
        cudaGraphExecDestroy(s->gexec);
    if (s->graph != NULL)
        cudaGraphDestroy(s->graph);
    if (s->fgexec != NULL)
        cudaGraphExecDestroy(s->fgexec);
    if (s->fgraph != NULL)
        cudaGraphDestroy(s->fgraph);
    s->gexec = s->fgexec = NULL;
    s->graph = s->fgraph = NULL;
    s->graph_state = s->fgraph_state = 0;
    for (size_t i = 0; s->dg != NULL && i < s->n_dg; i++)
        dyn_graph_free(&s->dg[i]);
    s->n_dg = 0;
    s->dg_dev_bytes = 0;
}

/* Forgets the captured graphs (captured again at the next run). */
static enum eb_status drop_graphs(struct eb_engine *e, struct cu_state *s, struct eb_diag *diag)
{
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    free_graphs(s);
    e->info_dev.graph = !e->g->dynamic || s->dg_on;
    e->info_dev.lanes = s->n_lanes;
    return EB_OK;
}

static enum eb_status cu_keep_outputs(struct eb_engine *e, struct eb_diag *diag)
{
    struct cu_state *s = state_of(e);
    CUDA_TRY(cudaSetDevice(s->gpu));
    return drop_graphs(e, s, diag);
}

static enum eb_status cu_reduce_head(struct eb_engine *e, int output, float conf,
                                     struct eb_diag *diag)
{
    struct cu_state *s = state_of(e);
    CUDA_TRY(cudaSetDevice(s->gpu));
    enum eb_status st = drop_graphs(e, s, diag);
    if (st != EB_OK)
        return st;
    if (conf < 0.0f) {
        e->head_on = 0;
        return EB_OK;
    }
    const struct eb_ir_value *v = &e->g->values[e->g->outputs[output]];
    const size_t bytes = 16 + (size_t)v->shape[2] * sizeof(struct eb_anchor_row);
    if (bytes > s->head_bytes) {
        char cap[128];
        if (s->cap_bytes > 0 && s->dev_bytes - s->head_bytes + bytes > s->cap_bytes)
            return eb_diag_fail_advise(diag, EB_ERR_LIMIT, EB_ADVICE_MEM_LIMIT,
                                       "model %s on cuda: needed %.1f MiB with the head's rows, %s",
                                       e->what,
                                       eb_engine__mib(s->dev_bytes - s->head_bytes + bytes),
                                       eb_engine__cap_text(e, s->cap_bytes, cap, sizeof(cap)));
        const size_t free0 = free_now();
        cudaFree(s->d_head);
        if (s->h_head != NULL)
            cudaFreeHost(s->h_head);
        s->dev_bytes -= s->head_bytes;
        e->workspace_bytes -= s->head_bytes;
        e->host_bytes -= s->head_bytes;
        s->d_head = s->h_head = NULL;
        s->head_bytes = 0;
        e->head_on = 0;
        CUDA_TRY(cudaMalloc(&s->d_head, bytes));
        cudaError_t ce = cudaMallocHost(&s->h_head, bytes);
        if (ce != cudaSuccess) {
            cudaFree(s->d_head);
            s->d_head = NULL;
            return eb_diag_fail(diag, EB_ERR_NOMEM, "model %s on cuda: %s", e->what,
                                cudaGetErrorString(ce));
        }
        measured_since(e, free0);
        s->head_bytes = bytes;
        s->dev_bytes += bytes;
        e->workspace_bytes += bytes;
        e->host_bytes += bytes;
    }
    s->head_conf = conf;
    e->head_out = output;
    e->head_on = 1;
    e->head_rows = (struct eb_anchor_row *)(void *)((char *)s->h_head + 16);
    e->head_count = 0;
    return EB_OK;
}

/* Frees the frame buffers (both, or the one mapped buffer) and takes them out of the counts. */
static void free_frame_buffers(struct eb_engine *e, struct cu_state *s)
{
    if (s->h_frame != NULL)
        cudaFreeHost(s->h_frame);
    if (!s->zero_copy)
        cudaFree(s->d_frame); /* mapped: the device address of h_frame, freed with it */
    s->dev_bytes -= s->frame_bytes;
    e->workspace_bytes -= s->frame_bytes;
    e->host_bytes -= s->frame_bytes;
    s->h_frame = NULL;
    s->d_frame = NULL;
    s->frame_bytes = 0;
}

/* The page-locked and device frame buffers for `bytes` (grown, never shrunk, once the stream
 * has drained; the captured forward does not see them: the letterbox is launched outside it). */
static enum eb_status frame_buffers(struct eb_engine *e, struct cu_state *s, size_t bytes,
                                    struct eb_diag *diag)
{
    if (bytes <= s->frame_bytes)
        return EB_OK;
    const uint64_t needed = s->dev_bytes - s->frame_bytes + bytes;
    char cap[128];
    if (s->cap_bytes > 0 && needed > s->cap_bytes)
        return eb_diag_fail_advise(
            diag, EB_ERR_LIMIT, EB_ADVICE_MEM_LIMIT,
            "model %s on cuda: needed %.1f MiB with a %.1f MiB frame buffer, %s", e->what,
            eb_engine__mib(needed), eb_engine__mib(bytes),
            eb_engine__cap_text(e, s->cap_bytes, cap, sizeof(cap)));
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    const size_t free0 = free_now();
    free_frame_buffers(e, s);
    if (s->zero_copy) {
        /* One page-locked buffer the device addresses too: the letterbox reads it in place. It
         * counts against the cap like the device buffer it replaces (on a Jetson it is the
         * same DRAM). */
        CUDA_TRY(cudaHostAlloc((void **)&s->h_frame, bytes, cudaHostAllocMapped));
        e->host_bytes += bytes;
        cudaError_t me = cudaHostGetDevicePointer(&s->d_frame, s->h_frame, 0);
        if (me != cudaSuccess) {
            cudaFreeHost(s->h_frame);
            e->host_bytes -= bytes;
            s->h_frame = NULL;
            s->d_frame = NULL;
            return eb_diag_fail(diag, EB_ERR_DEVICE,
                                "model %s on cuda: cannot map a %.1f MiB frame buffer into the "
                                "device (%s)",
                                e->what, eb_engine__mib(bytes), cudaGetErrorString(me));
        }
        measured_since(e, free0);
        s->dev_bytes += bytes;
        e->workspace_bytes += bytes;
        s->frame_bytes = bytes;
        return EB_OK;
    }
    CUDA_TRY(cudaMallocHost((void **)&s->h_frame, bytes));
    e->host_bytes += bytes;
    cudaError_t ce = cudaMalloc(&s->d_frame, bytes);
    if (ce != cudaSuccess) {
        cudaFreeHost(s->h_frame);
        e->host_bytes -= bytes;
        s->h_frame = NULL;
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "model %s on cuda: cannot allocate a %.1f MiB frame buffer (%s)",
                            e->what, eb_engine__mib(bytes), cudaGetErrorString(ce));
    }
    measured_since(e, free0);
    s->dev_bytes += bytes;
    e->workspace_bytes += bytes;
    s->frame_bytes = bytes;
    return EB_OK;
}

static enum eb_status cu_frame_buffer(struct eb_engine *e, int width, int height, uint8_t **buf_out,
                                      struct eb_diag *diag)
{
    struct cu_state *s = state_of(e);
    CUDA_TRY(cudaSetDevice(s->gpu));
    /* 64 bytes of slack: decoders (swscale) may write a little past the last row */
    enum eb_status st = frame_buffers(e, s, (size_t)width * 3 * (size_t)height + 64, diag);
    if (st != EB_OK)
        return st;
    *buf_out = s->h_frame;
    return EB_OK;
}

/* Takes the page lock off the caller's frames memory (once the stream has drained). */
static void unpin_frames(struct cu_state *s)
{
    if (s->pin == NULL)
        return;
    cudaHostUnregister(s->pin);
    s->pin = s->d_pin = NULL;
    s->pin_bytes = 0;
}

static enum eb_status cu_pin_frames(struct eb_engine *e, uint8_t *base, size_t bytes,
                                    struct eb_diag *diag)
{
    struct cu_state *s = state_of(e);
    CUDA_TRY(cudaSetDevice(s->gpu));
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    unpin_frames(s);
    if (base == NULL)
        return EB_OK;
    cudaError_t ce = cudaHostRegister(
        base, bytes, s->zero_copy ? cudaHostRegisterMapped : cudaHostRegisterDefault);
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        return eb_diag_fail(diag, EB_ERR_DEVICE,
                            "model %s on cuda: cannot page-lock %.1f MiB of frames (%s)", e->what,
                            eb_engine__mib(bytes), cudaGetErrorString(ce));
    }
    void *d = NULL;
    if (s->zero_copy && (ce = cudaHostGetDevicePointer(&d, base, 0)) != cudaSuccess) {
        cudaHostUnregister(base);
        return eb_diag_fail(diag, EB_ERR_DEVICE,
                            "model %s on cuda: cannot map %.1f MiB of frames into the device (%s)",
                            e->what, eb_engine__mib(bytes), cudaGetErrorString(ce));
    }
    s->pin = base;
    s->pin_bytes = bytes;
    s->d_pin = d;
    return EB_OK;
}

/* Frames are letterboxed into the input's device buffer: a node on the CPU that reads the
 * input would find no host copy of it. */
static int cu_frame_ok(const struct eb_engine *e, char *buf, size_t size)
{
    const struct cu_state *s = e->dev_state;
    const struct eb_graph *g = e->g;
    if (s == NULL || s->on_cpu == NULL || g->n_inputs != 1)
        return 1;
    for (size_t k = 0; k < e->n_order; k++) {
        if (!s->on_cpu[k])
            continue;
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        for (int i = 0; i < n->n_in; i++) {
            if (n->in[i] == g->inputs[0]) {
                snprintf(buf, size, "node '%.60s' (%s), which reads the input, runs on the CPU",
                         n->name, n->op->onnx_name);
                return 0;
            }
        }
    }
    return 1;
}

static enum eb_status cu_run_frame(struct eb_engine *e, const struct eb_engine_frame *f,
                                   struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_value *in = &g->values[g->inputs[0]];
    struct cu_state *s = state_of(e);
    enum eb_status st;
    const int profiling = e->prof != NULL;
    CUDA_TRY(cudaSetDevice(s->gpu));
    s->run_gen++;
    const size_t row = (size_t)f->width * 3, bytes = row * (size_t)f->height;
    if ((st = frame_buffers(e, s, bytes, diag)) != EB_OK)
        return st;
    /* A frame in the caller's pinned memory (eb_engine_pin_frames) goes up from where it is;
     * any other into the page-locked buffer, rows packed (unless decoded straight into it). */
    const uintptr_t at = (uintptr_t)f->rgb, pin = (uintptr_t)s->pin;
    const int pinned =
        s->pin_bytes >= bytes && f->stride == row && at >= pin && at - pin <= s->pin_bytes - bytes;
    const void *d_src = pinned && s->zero_copy ? (const void *)(s->d_pin + (at - pin)) : s->d_frame;
    if (!pinned && f->rgb != s->h_frame) {
        if (f->stride == row)
            memcpy(s->h_frame, f->rgb, bytes);
        else
            for (int y = 0; y < f->height; y++)
                memcpy(s->h_frame + (size_t)y * row, f->rgb + (size_t)y * f->stride, row);
    } else if (f->stride != row) {
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to run model %s: a frame in the engine's buffer must have "
                            "stride %zu, not %zu",
                            e->what, row, f->stride);
    }
    const struct eb_cuk_letterbox key = {
        .src_w = f->width,
        .src_h = f->height,
        .src_stride = (int32_t)row,
        .channels = (int32_t)in->shape[1],
        .dst_w = (int32_t)in->shape[3],
        .dst_h = (int32_t)in->shape[2],
        .new_w = f->new_w,
        .new_h = f->new_h,
        .pad_left = f->pad_left,
        .pad_top = f->pad_top,
        .nhwc = s->pre_conv >= 0,
    };
    if (!profiling && s->fgraph_state == 0 &&
        (st = capture(e, s, 1, &s->fgraph, &s->fgexec, &s->fgraph_state, diag)) != EB_OK)
        return st;
    CUDA_TRY(cudaEventRecord(s->ev[0], s->stream));
    if (!s->zero_copy) /* mapped: the letterbox reads the frame through its device address */
        CUDA_TRY(cudaMemcpyAsync(s->d_frame, pinned ? f->rgb : s->h_frame, bytes,
                                 cudaMemcpyHostToDevice, s->stream));
    CUDA_TRY(cudaEventRecord(s->ev[1], s->stream));
    if ((st = enqueue_pre(e, s, &key, d_src, diag)) != EB_OK)
        return st;
    if (!profiling && s->fgraph_state == 1) {
        CUDA_TRY(cudaGraphLaunch(s->fgexec, s->stream));
    } else if ((st = enqueue_forward(e, s, profiling ? FWD_TIMED : FWD_SERIAL, 1, diag)) != EB_OK) {
        return st;
    }
    return finish_run(e, s, profiling, 1, diag);
}

static void cu_close(struct eb_engine *e)
{
    struct cu_state *s = state_of(e);
    if (s == NULL)
        return;
    cudaSetDevice(s->gpu);
    if (s->stream != NULL)
        cudaStreamSynchronize(s->stream);
    free_graphs(s);
    free(s->dg);
    free(s->key);
    free(s->sd);
    free(s->checks);
    if (s->h_sd != NULL)
        cudaFreeHost(s->h_sd);
    if (s->nodes != NULL)
        for (size_t k = 0; k < e->n_order; k++)
            eb_cu__node_free(&s->nodes[k]);
    free_frame_buffers(e, s);
    unpin_frames(s);
    if (s->h_head != NULL)
        cudaFreeHost(s->h_head);
    cudaFree(s->d_head);
    for (int i = 0; i < 4; i++)
        if (s->ev[i] != NULL)
            cudaEventDestroy(s->ev[i]);
    if (s->ev_pre != NULL)
        cudaEventDestroy(s->ev_pre);
    if (s->ev_done != NULL)
        for (size_t k = 0; k < e->n_order; k++)
            if (s->ev_done[k] != NULL)
                cudaEventDestroy(s->ev_done[k]);
    for (int l = 0; l < EB_CU_LANES; l++)
        if (s->ev_join[l] != NULL)
            cudaEventDestroy(s->ev_join[l]);
    if (s->ev_fork != NULL)
        cudaEventDestroy(s->ev_fork);
    if (s->ev_nodes != NULL)
        for (size_t k = 0; k <= e->n_order; k++)
            if (s->ev_nodes[k] != NULL)
                cudaEventDestroy(s->ev_nodes[k]);
    for (int i = 0; i < EB_IR_MAX_GRAPH_IO; i++) {
        cudaFree(s->d_in[i]);
        cudaFree(s->d_in_f32[i]);
        cudaFree(s->d_out_f32[i]);
        if (s->h_out[i] != NULL)
            cudaFreeHost(s->h_out[i]);
    }
    if (s->h_arena != NULL)
        cudaFreeHost(s->h_arena);
    cudaFree(s->d_arena);
    cudaFree(s->d_weights);
    cudaFree(s->d_qdata);
    cudaFree(s->d_ws);
    cudaFree(s->d_blas_ws);
    cudaFree(s->d_gemv_ws);
    cudaFree(s->d_xpose);
    if (s->lt != NULL)
        cublasLtDestroy(s->lt);
    if (s->cublas != NULL)
        cublasDestroy(s->cublas);
    if (s->cudnn != NULL)
        cudnnDestroy(s->cudnn);
    for (int l = 1; l < EB_CU_LANES; l++)
        if (s->lanes[l] != NULL)
            cudaStreamDestroy(s->lanes[l]);
    if (s->stream != NULL)
        cudaStreamDestroy(s->stream);
    e->dev_state = NULL;
}

const struct eb_engine_devops eb_engine_devops_cuda = {
    .name = "cuda",
    .open = cu_open,
    .bind = cu_bind,
    .run = cu_run,
    .input_resident = cu_input_resident,
    .frame_buffer = cu_frame_buffer,
    .pin_frames = cu_pin_frames,
    .frame_ok = cu_frame_ok,
    .run_frame = cu_run_frame,
    .reduce_head = cu_reduce_head,
    .keep_outputs = cu_keep_outputs,
    .close = cu_close,
};
