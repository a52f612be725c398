/*
 * The eb_engine_* API: parse → import → passes (shape inference, folding, fusion, elimination)
 * → prepare the fast kernels (pack weights, size scratch) → plan → check the cap → allocate the
 * arena once → run the live nodes in order, each node's kernel spread over the thread pool.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/engine.h"
#include "eb/nvtx.h"
#include "engine/cpu/cpu.h"
#include "engine/cpu/gemm.h"
#include "engine/engine_internal.h"
#include "engine/ir/graph.h"
#include "engine/ops/op.h"
#include "engine/plan/memplan.h"

#define MAX_THREADS 256

void eb_engine_options_default(struct eb_engine_options *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->passes = EB_ENGINE_PASS_ALL;
}

static void fill_desc(const struct eb_ir_value *v, struct eb_engine_io_desc *d)
{
    snprintf(d->name, sizeof(d->name), "%s", v->name);
    d->dtype = v->dtype;
    d->rank = v->rank;
    for (int i = 0; i < EB_MAX_RANK; i++)
        d->shape[i] = i < v->rank ? v->shape[i] : 0;
    d->dynamic_dims = 0;
}

double eb_engine__mib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

const char *eb_engine__cap_text(const struct eb_engine *e, uint64_t cap, char *buf, size_t size)
{
    if (e->cap_label[0] != '\0')
        snprintf(buf, size, "%.1f MiB %s", eb_engine__mib(cap), e->cap_label);
    else
        snprintf(buf, size, "limit %.1f MiB", eb_engine__mib(cap));
    return buf;
}

/* --qdq auto: integer convs on the CPU. The cuda device has them too (cuda_qconv.c, for
 * --precision int8), but they are not yet faster than cuDNN's fp16 convolutions of the float
 * network (docs/quantization.md), so auto keeps float on cuda, as before them. */
static enum eb_engine_qdq resolve_qdq(const struct eb_engine_options *opt)
{
    if (opt->qdq != EB_ENGINE_QDQ_AUTO)
        return opt->qdq;
    return opt->device == EB_ENGINE_DEVICE_CPU ? EB_ENGINE_QDQ_INT8 : EB_ENGINE_QDQ_FLOAT;
}

/* The running graph's arithmetic and QDQ path (eb_engine_exec_info precision, qdq, n_int8). */
static void describe_arithmetic(const struct eb_graph *g, enum eb_engine_precision precision,
                                enum eb_engine_qdq qdq, struct eb_engine_exec_info *info)
{
    size_t n_float = 0, n_qdq = 0;
    info->n_int8 = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct eb_op_def *op = g->nodes[i].op;
        /* Folded weight DequantizeLinear nodes are dead but still say the model is QDQ. */
        n_qdq += op == &eb_op_dequantize_linear || op == &eb_op_quantize_linear;
        if (!g->nodes[i].alive)
            continue;
        if (op == &eb_op_qconv || op == &eb_op_conv_integer || op == &eb_op_matmul_integer)
            info->n_int8++;
        else if (op == &eb_op_conv || op == &eb_op_matmul || op == &eb_op_gemm)
            n_float++;
    }
    const char *p = precision == EB_ENGINE_PRECISION_FP16 ? "fp16" : "fp32";
    snprintf(info->precision, sizeof(info->precision), "%s", info->n_int8 > n_float ? "int8" : p);
    const char *path = qdq == EB_ENGINE_QDQ_STRIP                      ? "strip"
                       : qdq == EB_ENGINE_QDQ_INT8 && info->n_int8 > 0 ? "int8"
                                                                       : "float";
    snprintf(info->qdq, sizeof(info->qdq), "%s", n_qdq > 0 ? path : "");
}

/* eb_engine_exec_info.int8_nodes: "N int8 (T on tensor cores); F float: a, b, ... (+k)". */
static void describe_int8_nodes(const struct eb_graph *g, struct eb_engine_exec_info *info,
                                int cuda)
{
    char *o = info->int8_nodes;
    const size_t cap = sizeof(info->int8_nodes);
    o[0] = '\0';
    if (info->qdq[0] == '\0' && info->n_int8 == 0)
        return;
    size_t n_float = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct eb_op_def *op = g->nodes[i].op;
        n_float +=
            g->nodes[i].alive && (op == &eb_op_conv || op == &eb_op_matmul || op == &eb_op_gemm);
    }
    size_t used = (size_t)snprintf(o, cap, "%zu int8", info->n_int8);
    if (cuda && info->n_int8 > 0)
        used += (size_t)snprintf(o + used, cap - used, " (%zu on tensor cores)", info->n_int8_tc);
    used += (size_t)snprintf(o + used, cap - used, "; %zu float%s", n_float, n_float ? ":" : "");
    size_t listed = 0;
    for (size_t i = 0; i < g->n_nodes && used < cap; i++) {
        const struct eb_ir_node *n = &g->nodes[i];
        if (!n->alive || (n->op != &eb_op_conv && n->op != &eb_op_matmul && n->op != &eb_op_gemm))
            continue;
        const size_t len = strlen(n->name);
        if (used + len + 16 >= cap) /* room for " (+NNN)" */
            break;
        used += (size_t)snprintf(o + used, cap - used, "%s %s", listed ? "," : "", n->name);
        listed++;
    }
    if (listed < n_float && used < cap)
        snprintf(o + used, cap - used, " (+%zu)", n_float - listed);
}

/* Parse + import + passes: what eb_engine_load and eb_engine_supports share. */
static enum eb_status build_graph(const uint8_t *bytes, size_t len, const char *what,
                                  const struct eb_engine_options *opt, struct eb_graph **g_out,
                                  struct eb_diag *diag)
{
    struct eb_onnx_model *m = NULL;
    struct eb_graph *g = NULL;
    enum eb_status st = eb_onnx_model_parse(bytes, len, what, opt->alloc, &m, diag);
    if (st != EB_OK)
        return st;
    st = eb_graph_import(m, what, opt->imgsz > 0 ? opt->imgsz : 640, opt->max_seq, opt->alloc,
                         opt->base_dir, &g, diag);
    if (st == EB_OK)
        st = eb_graph_run_passes(g, opt->passes, resolve_qdq(opt), diag);
    if (g != NULL)
        eb_graph_forget_source(g);
    eb_onnx_model_destroy(m);
    if (st != EB_OK) {
        eb_graph_destroy(g);
        return st;
    }
    *g_out = g;
    return EB_OK;
}

static int resolve_threads(int threads)
{
    if (threads > 0)
        return threads > MAX_THREADS ? MAX_THREADS : threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/*
 * Gives every live node with a fast kernel (only those with on_cpu[k] set, when on_cpu is not
 * NULL) the chance to pack its weights and size scratch.
 */
enum eb_status eb_engine__prepare_nodes(struct eb_engine *e, const unsigned char *on_cpu,
                                        struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    if (e->cpu.isa == EB_CPU_ISA_REF)
        return EB_OK;
    for (size_t k = 0; k < e->n_order; k++) {
        struct eb_ir_node *n = &g->nodes[e->order[k]];
        if (n->op->prepare == NULL || (on_cpu != NULL && !on_cpu[k]))
            continue;
        struct eb_op_prepare p = {
            .op = {.g = g, .n = n, .src = NULL, .diag = diag},
            .isa = e->cpu.isa,
            .n_workers = e->cpu.n_workers,
        };
        enum eb_status st = n->op->prepare(&p);
        if (st != EB_OK)
            return st;
        if (p.scratch_bytes > e->scratch_bytes)
            e->scratch_bytes = eb_cpu_align64(p.scratch_bytes);
        e->packed_bytes += p.packed_bytes;
    }
    return EB_OK;
}

static uint64_t node_flops(const struct eb_graph *g, const struct eb_ir_node *n)
{
    if (n->op->flops != NULL)
        return n->op->flops(g, n);
    uint64_t total = 0;
    for (int i = 0; i < n->n_out; i++)
        total += (uint64_t)g->values[n->out[i]].numel;
    return total;
}

/* ---- the CPU device ------------------------------------------------------------------------ */

static enum eb_status cpu_open(struct eb_engine *e, const struct eb_engine_options *opt,
                               struct eb_diag *diag)
{
    if ((opt->passes & EB_ENGINE_PASS_LAYOUT) && e->cpu.isa != EB_CPU_ISA_REF && !e->g->dynamic) {
        struct eb_sgemm_ukernel uk;
        const int cb =
            eb_cpu__sgemm_select(e->cpu.isa, &uk) && uk.cl_epilogue != NULL ? uk.cl_cb : 0;
        eb_graph__layout(e->g, e->cpu.isa, cb, &e->n_blocked);
        e->block = e->n_blocked > 0 ? cb : 0;
    }
    return eb_engine__prepare_nodes(e, NULL, diag);
}

static enum eb_status cpu_bind(struct eb_engine *e, const struct eb_engine_options *opt,
                               struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    uint64_t arena_total = eb_cpu_align64((size_t)e->plan.arena_bytes) + e->scratch_bytes;
    uint64_t total = arena_total + e->plan.weight_bytes + e->packed_bytes;
    char cap[128];
    if (opt->mem_cap_bytes > 0 && total > opt->mem_cap_bytes)
        return eb_diag_fail_advise(
            diag, EB_ERR_LIMIT, EB_ADVICE_MEM_LIMIT,
            "failed to load model %s: needed %.1f MiB, %s; planned: arena %.1f, "
            "weights %.1f, packed weights %.1f MiB",
            e->what, eb_engine__mib(total),
            eb_engine__cap_text(e, opt->mem_cap_bytes, cap, sizeof(cap)),
            eb_engine__mib(arena_total), eb_engine__mib(e->plan.weight_bytes),
            eb_engine__mib(e->packed_bytes));
    /* + EB_CPU_READ_SLACK: a kernel may read that far past an arena tensor (cpu.h) */
    e->arena = g->alloc.alloc(
        g->alloc.ctx, (size_t)arena_total + EB_MEMPLAN_ALIGN + EB_CPU_READ_SLACK, EB_MEMPLAN_ALIGN);
    if (e->arena == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "failed to load model %s: out of memory for a %.1f MiB arena", e->what,
                            eb_engine__mib(arena_total));
    if (e->scratch_bytes > 0) {
        e->cpu.scratch = (char *)e->arena + eb_cpu_align64((size_t)e->plan.arena_bytes);
        e->cpu.scratch_bytes = (size_t)e->scratch_bytes;
    }
    for (size_t k = 0; k < g->n_values; k++)
        if (g->values[k].offset >= 0)
            g->values[k].data = (char *)e->arena + g->values[k].offset;
    return EB_OK;
}

void eb_engine__cpu_exec(struct eb_engine *e, size_t k)
{
    struct eb_exec x = {.g = e->g, .n = &e->g->nodes[e->order[k]], .cpu = &e->cpu};
    if (!eb_ir_node_writes_nothing(e->g, x.n))
        x.n->op->exec(&x);
}

void eb_engine__nvtx_node_push(const struct eb_engine *e, size_t k)
{
    if (e->nvtx_names != NULL)
        eb_nvtx_push(&e->nvtx, e->nvtx_names[k]);
}

void eb_engine__nvtx_node_pop(const struct eb_engine *e)
{
    if (e->nvtx_names != NULL)
        eb_nvtx_pop(&e->nvtx);
}

/* opt.observe: the float32 tensors node k wrote (NCHW: observe needs the layout pass off). */
static void cpu_observe(const struct eb_engine *e, size_t k)
{
    const struct eb_ir_node *n = &e->g->nodes[e->order[k]];
    for (int i = 0; i < n->n_out; i++) {
        const struct eb_ir_value *v = n->out[i] >= 0 ? &e->g->values[n->out[i]] : NULL;
        if (v == NULL || v->dtype != EB_DTYPE_F32 || v->data == NULL || v->blocked)
            continue;
        struct eb_tensor t = {.dtype = v->dtype, .rank = v->rank, .data = v->data};
        memcpy(t.shape, v->shape, sizeof(t.shape));
        e->observe(e->observe_ctx, v->name, &t);
    }
}

/*
 * A dynamic graph's node order[k] that reads a dyn value: its output shapes at this run's
 * input shapes (ops with dyn_shapes). `run`: a run's, where every input's data is there (0: the
 * load's probe, where only shape data is). Refuses a shape that needs more bytes than the slot
 * planned on the bounds.
 */
enum eb_status eb_engine__reinfer(struct eb_engine *e, size_t k, int run, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    struct eb_ir_node *n = &g->nodes[e->order[k]];
    struct eb_op_ctx ctx = {.g = g, .n = n, .src = NULL, .diag = diag, .run = run};
    enum eb_status st = n->op->infer_shape(&ctx);
    if (st != EB_OK)
        return st;
    for (int i = 0; i < n->n_out; i++) {
        const struct eb_ir_value *v = &g->values[n->out[i]];
        if (v->nbytes <= v->cap_bytes)
            continue;
        char sh[96];
        eb_shape_format(v->shape, v->rank, sh, sizeof(sh));
        return eb_diag_fail(diag, EB_ERR_LIMIT,
                            "failed to run model %s: value '%s' is %s at these input shapes "
                            "(%zu bytes), more than the %zu bytes planned on the bounds of the "
                            "sequence dims (max_seq %lld)",
                            e->what, v->name, sh, v->nbytes, v->cap_bytes, (long long)g->max_seq);
    }
    return EB_OK;
}

/* cpu_run of a dynamic graph: the dyn nodes' shapes inferred again before each runs. */
static enum eb_status cpu_run_dynamic(struct eb_engine *e, struct eb_diag *diag)
{
    uint64_t t_start = e->prof != NULL ? eb_clock_ns() : 0, t0 = t_start;
    for (size_t k = 0; k < e->n_order; k++) {
        if (e->g->nodes[e->order[k]].dyn) {
            enum eb_status st = eb_engine__reinfer(e, k, 1, diag);
            if (st != EB_OK)
                return st;
        }
        if (e->prof != NULL) /* as cpu_run's profiled pass: one NVTX range a node */
            eb_engine__nvtx_node_push(e, k);
        eb_engine__cpu_exec(e, k);
        if (e->prof != NULL)
            eb_engine__nvtx_node_pop(e);
        if (e->observe != NULL)
            cpu_observe(e, k);
        if (e->prof != NULL) {
            const uint64_t t1 = eb_clock_ns();
            e->prof[k].total_ms += (double)(t1 - t0) / 1e6;
            t0 = t1;
        }
    }
    if (e->prof != NULL) {
        e->prof_runs++;
        e->prof_run_ms += (double)(t0 - t_start) / 1e6;
    }
    return EB_OK;
}

static enum eb_status cpu_run(struct eb_engine *e, struct eb_diag *diag)
{
    if (e->g->dynamic)
        return cpu_run_dynamic(e, diag);
    if (e->observe != NULL) {
        for (size_t k = 0; k < e->n_order; k++) {
            eb_engine__cpu_exec(e, k);
            cpu_observe(e, k);
        }
    } else if (e->prof != NULL) {
        /* Per-node NVTX ranges only here: the unprofiled run below stays as it is timed. */
        uint64_t t_start = eb_clock_ns(), t0 = t_start;
        for (size_t k = 0; k < e->n_order; k++) {
            eb_engine__nvtx_node_push(e, k);
            eb_engine__cpu_exec(e, k);
            eb_engine__nvtx_node_pop(e);
            uint64_t t1 = eb_clock_ns();
            e->prof[k].total_ms += (double)(t1 - t0) / 1e6;
            t0 = t1;
        }
        e->prof_runs++;
        e->prof_run_ms += (double)(t0 - t_start) / 1e6;
    } else {
        for (size_t k = 0; k < e->n_order; k++)
            eb_engine__cpu_exec(e, k);
    }
    return EB_OK;
}

/*
 * Which dims of a dynamic graph's outputs follow the sequence dims (eb_engine_io_desc
 * .dynamic_dims): the dyn nodes' shapes inferred again with the sequence one shorter (the
 * shape data computed on the way), and the outputs' dims that moved marked.
 */
static enum eb_status probe_output_dims(struct eb_engine *e, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    enum eb_status st;
    if (g->max_seq < 2)
        return EB_OK; /* sequence_length 1, past 0: nothing moves */
    for (size_t i = 0; i < g->n_inputs; i++) {
        struct eb_ir_value *v = &g->values[g->inputs[i]];
        int64_t shape[EB_MAX_RANK];
        for (int d = 0; d < v->rank; d++) /* load inferred max_seq, no past: now one less */
            shape[d] = g->in_dim_name[i][d] == NULL                        ? v->shape[d]
                       : strcmp(g->in_dim_name[i][d], EB_IR_DIM_PAST) == 0 ? 0
                                                                           : g->max_seq - 1;
        if ((st = eb_ir_value_set(g, v, v->dtype, v->rank, shape, diag)) != EB_OK)
            return st;
    }
    for (size_t k = 0; k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        if (!n->dyn)
            continue;
        if ((st = eb_engine__reinfer(e, k, 0, diag)) != EB_OK)
            return st;
        if (n->n_out > 0 && g->values[n->out[0]].shape_data)
            eb_engine__cpu_exec(e, k);
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        const struct eb_ir_value *v = &g->values[g->outputs[i]];
        for (int d = 0; d < v->rank; d++)
            if (v->shape[d] != e->io.outputs[i].shape[d])
                e->io.outputs[i].dynamic_dims |= 1u << d;
    }
    return EB_OK;
}

static void cpu_close(struct eb_engine *e)
{
    (void)e; /* the arena and the pool are the engine's own (freed by eb_engine_destroy) */
}

static const struct eb_engine_devops device_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .bind = cpu_bind,
    .run = cpu_run,
    .close = cpu_close,
};

int eb_engine_cuda_available(char *why, size_t why_size)
{
#ifdef EB_HAVE_CUDA
    return eb_engine__cuda_available(why, why_size);
#else
    if (why != NULL && why_size > 0)
        snprintf(why, why_size,
                 "this build of edgebench has no CUDA device (it was configured "
                 "without the CUDA toolkit; rebuild with -DEB_CUDA=ON)");
    return 0;
#endif
}

void eb_engine_cuda_versions_get(struct eb_engine_cuda_versions *out)
{
    memset(out, 0, sizeof(*out));
#ifdef EB_HAVE_CUDA
    out->built = 1;
    eb_engine__cuda_versions(out);
#else
    snprintf(out->note, sizeof(out->note),
             "this build of edgebench has no CUDA device (configured without the CUDA toolkit)");
#endif
}

static void free_engine(struct eb_engine *e)
{
    if (e->dev != NULL)
        e->dev->close(e);
    eb_threadpool_destroy(e->pool);
    if (e->arena != NULL)
        e->g->alloc.free(e->g->alloc.ctx, e->arena);
}

enum eb_status eb_engine_load(const uint8_t *bytes, size_t len, const char *what,
                              const struct eb_engine_options *opt, struct eb_engine **engine_out,
                              struct eb_diag *diag)
{
    struct eb_engine_options def;
    struct eb_engine *e = NULL;
    struct eb_graph *g = NULL;
    struct eb_cpu_features feat;
    enum eb_cpu_isa isa;
    enum eb_status st;
    const struct eb_engine_devops *dev = &device_cpu;

    if (what == NULL)
        what = "<memory>";
    if (opt == NULL) {
        eb_engine_options_default(&def);
        opt = &def;
    }
    if (bytes == NULL || engine_out == NULL || opt->imgsz < 0 || opt->imgsz > 16384 ||
        opt->threads < 0 || opt->gpu < 0 || opt->max_seq < 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to load model %s: invalid argument",
                            what);
    if (opt->device == EB_ENGINE_DEVICE_CUDA) {
#ifdef EB_HAVE_CUDA
        dev = &eb_engine_devops_cuda;
#else
        char why[160];
        eb_engine_cuda_available(why, sizeof(why));
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "failed to load model %s on cuda: %s", what,
                            why);
#endif
    }
    if (opt->observe != NULL && (opt->device != EB_ENGINE_DEVICE_CPU ||
                                 (opt->passes & (EB_ENGINE_PASS_FUSE | EB_ENGINE_PASS_LAYOUT))))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to load model %s: observing tensors needs the cpu device and "
                            "the fuse and layout passes off",
                            what);
    if (opt->device == EB_ENGINE_DEVICE_CUDA) {
        /* dev chosen above */
    } else if (opt->device != EB_ENGINE_DEVICE_CPU) {
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to load model %s: unknown device %d; use cpu or cuda", what,
                            (int)opt->device);
    } else if (opt->precision != EB_ENGINE_PRECISION_FP32) {
        return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_FP32 | EB_ADVICE_CUDA,
                                   "failed to load model %s: fp16 needs the cuda device (the CPU "
                                   "kernels compute in fp32)",
                                   what);
    }
    eb_cpu_features_detect(&feat);
    st = eb_cpu_isa_parse(opt->isa != NULL ? opt->isa : "auto", &feat, &isa, diag);
    if (st != EB_OK)
        return st;
    st = build_graph(bytes, len, what, opt, &g, diag);
    if (st != EB_OK)
        return st;
    e = eb_ir_arena_alloc(&g->arena, sizeof(*e));
    if (e == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", what);
        goto fail;
    }
    e->g = g;
    e->what = g->what;
    snprintf(e->cap_label, sizeof(e->cap_label), "%s",
             opt->mem_cap_label != NULL ? opt->mem_cap_label : "");
    e->profile = opt->profile;
    e->observe = opt->observe;
    e->observe_ctx = opt->observe_ctx;
    e->order = eb_ir_arena_alloc(&g->arena, (g->n_nodes + 1) * sizeof(int));
    if (e->order == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", what);
        goto fail;
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].alive)
            e->order[e->n_order++] = (int)i;
    e->cpu.isa = isa;
    e->cpu.n_workers = resolve_threads(opt->threads);
    if (e->cpu.n_workers > 1) {
        st = eb_threadpool_create(e->cpu.n_workers, &g->alloc, &e->pool, diag);
        if (st != EB_OK)
            goto fail;
    }
    e->cpu.pool = e->pool;
    e->cpu.n_workers = eb_threadpool_size(e->pool);
    snprintf(e->info_dev.device, sizeof(e->info_dev.device), "%s", dev->name);
    describe_arithmetic(g, opt->precision, resolve_qdq(opt), &e->info_dev);
    e->dev = dev;
    if ((st = dev->open(e, opt, diag)) != EB_OK)
        goto fail;
    describe_int8_nodes(g, &e->info_dev, opt->device == EB_ENGINE_DEVICE_CUDA);
    st = eb_memplan_build(g, e->plan_concurrent, &e->plan, diag);
    if (st != EB_OK)
        goto fail;
    if ((st = dev->bind(e, opt, diag)) != EB_OK)
        goto fail;
    if (e->profile) {
        e->prof = eb_ir_arena_alloc(&g->arena, (e->n_order + 1) * sizeof(*e->prof));
        e->nvtx_names = eb_ir_arena_alloc(&g->arena, (e->n_order + 1) * sizeof(char *));
        if (e->prof == NULL || e->nvtx_names == NULL) {
            st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", what);
            goto fail;
        }
        eb_nvtx_init(&e->nvtx, EB_NVTX_DOMAIN_OP);
        for (size_t k = 0; k < e->n_order; k++) {
            const struct eb_ir_node *n = &g->nodes[e->order[k]];
            e->prof[k].name = n->name;
            e->prof[k].op = n->op->onnx_name;
            snprintf(e->prof[k].fused, sizeof(e->prof[k].fused), "%s",
                     n->fused != NULL ? n->fused : "");
            e->prof[k].flops = node_flops(g, n);
            char range[EB_NVTX_NAME_MAX];
            eb_nvtx_range_name(n->op->onnx_name, n->name, range, sizeof(range));
            if ((e->nvtx_names[k] = eb_ir_arena_strdup(&g->arena, range)) == NULL) {
                st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory",
                                  what);
                goto fail;
            }
        }
    }
    e->io.n_inputs = g->n_inputs;
    e->io.n_outputs = g->n_outputs;
    for (size_t i = 0; i < g->n_inputs; i++) {
        fill_desc(&g->values[g->inputs[i]], &e->io.inputs[i]);
        for (int d = 0; d < g->values[g->inputs[i]].rank; d++)
            if (g->in_dim_name[i][d] != NULL) {
                e->io.inputs[i].dynamic_dims |= 1u << d;
                e->io.inputs[i].shape[d] = g->in_dim_max[i][d];
            }
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        fill_desc(&g->values[g->outputs[i]], &e->io.outputs[i]);
    if (g->dynamic && (st = probe_output_dims(e, diag)) != EB_OK)
        goto fail;
    *engine_out = e;
    return EB_OK;
fail:
    if (e != NULL)
        free_engine(e);
    eb_graph_destroy(g);
    return st;
}

void eb_engine_io_info(const struct eb_engine *e, struct eb_engine_io *io_out)
{
    *io_out = e->io;
}

void eb_engine_mem_info(const struct eb_engine *e, struct eb_engine_mem *mem_out)
{
    mem_out->arena_bytes = e->plan.arena_bytes;
    mem_out->scratch_bytes = e->scratch_bytes;
    mem_out->weight_bytes = e->plan.weight_bytes;
    mem_out->packed_bytes = e->packed_bytes;
    mem_out->naive_bytes = e->plan.naive_bytes;
    mem_out->workspace_bytes = e->workspace_bytes;
    mem_out->host_bytes = e->host_bytes;
    mem_out->device_measured_bytes = e->measured_bytes;
    mem_out->graph_bytes = e->graph_bytes;
    mem_out->total_bytes = eb_cpu_align64((size_t)e->plan.arena_bytes) + e->scratch_bytes +
                           e->plan.weight_bytes + e->packed_bytes + e->workspace_bytes +
                           e->graph_bytes;
}

void eb_engine_timing_get(const struct eb_engine *e, struct eb_engine_timing *t_out)
{
    *t_out = e->timing;
}

void eb_engine_exec_info_get(const struct eb_engine *e, struct eb_engine_exec_info *info_out)
{
    *info_out = e->info_dev; /* device, device_name, precision, fallback, graph */
    snprintf(info_out->isa, sizeof(info_out->isa), "%s", eb_cpu_isa_name(e->cpu.isa));
    info_out->threads = e->cpu.n_workers;
    info_out->n_nodes = e->n_order;
    info_out->n_fused = e->g->n_fused;
    info_out->n_concat_in_place = e->plan.n_concat_in_place;
    info_out->n_split_in_place = e->plan.n_split_in_place;
    info_out->n_views = e->plan.n_views;
    info_out->n_blocked = e->n_blocked;
    info_out->block = e->block;
}

static void describe_outputs(const struct eb_engine *e, struct eb_tensor *out);

/* Whether input i's dynamic dims are within their bounds (take_inputs_dynamic's messages). */
static int dims_ok(const struct eb_graph *g, size_t i, const struct eb_tensor *t)
{
    for (int d = 0; d < t->rank && d < EB_MAX_RANK; d++)
        if (g->in_dim_name[i][d] != NULL &&
            (t->shape[d] > g->in_dim_max[i][d] ||
             (t->shape[d] < 1 && strcmp(g->in_dim_name[i][d], EB_IR_DIM_SEQ) == 0)))
            return 0;
    return 1;
}

/*
 * A dynamic graph's inputs: each dim within its bound, one size per symbol, the sequence
 * within max_seq; then every input's shape set and its bytes copied into its arena slot
 * (memmove: the caller may pass the last run's outputs, which live in the arena), unless the
 * device still holds them as its last run's output (dev->input_resident: copied there).
 */
static enum eb_status take_inputs_dynamic(struct eb_engine *e, const struct eb_tensor *in,
                                          struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    int64_t seq = -1, past = -1;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const struct eb_ir_value *v = &g->values[g->inputs[i]];
        const struct eb_engine_io_desc *want = &e->io.inputs[i];
        char got[96], bound[96];
        int ok = in[i].dtype == v->dtype && in[i].rank == v->rank && in[i].data != NULL;
        for (int d = 0; ok && d < v->rank; d++)
            ok = g->in_dim_name[i][d] != NULL ? in[i].shape[d] >= 0
                                              : in[i].shape[d] == want->shape[d];
        /* The shapes as text for the messages only (no formatting on the run's path). */
        if (!ok || !dims_ok(g, i, &in[i]))
            eb_shape_format(in[i].shape,
                            in[i].rank < 0 || in[i].rank > EB_MAX_RANK ? 0 : in[i].rank, got,
                            sizeof(got));
        if (!ok) {
            eb_shape_format(want->shape, want->rank, bound, sizeof(bound));
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "failed to run model %s: input '%s' is %s %s, expected %s %s "
                                "(dynamic dims at most as given)",
                                g->what, v->name, eb_dtype_name(in[i].dtype), got,
                                eb_dtype_name(v->dtype), bound);
        }
        for (int d = 0; d < v->rank; d++) {
            const char *sym = g->in_dim_name[i][d];
            if (sym == NULL)
                continue;
            const int is_seq = strcmp(sym, EB_IR_DIM_SEQ) == 0;
            int64_t *seen = is_seq ? &seq : strcmp(sym, EB_IR_DIM_PAST) == 0 ? &past : NULL;
            if (in[i].shape[d] > g->in_dim_max[i][d] || (is_seq && in[i].shape[d] < 1))
                return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                    "failed to run model %s: input '%s' is %s: its %s (dim %d) "
                                    "is %lld, outside %d..%lld for a maximum sequence of %lld "
                                    "(max_seq, else the model's edgebench.llm.ctx)",
                                    g->what, v->name, got, sym, d, (long long)in[i].shape[d],
                                    is_seq, (long long)g->in_dim_max[i][d], (long long)g->max_seq);
            if (seen != NULL && *seen >= 0 && *seen != in[i].shape[d]) {
                eb_shape_format(in[i].shape, in[i].rank, got, sizeof(got));
                return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                    "failed to run model %s: input '%s' is %s: its %s is %lld, "
                                    "another input's is %lld; give every input the same",
                                    g->what, v->name, got, sym, (long long)in[i].shape[d],
                                    (long long)*seen);
            }
            if (seen != NULL)
                *seen = in[i].shape[d];
        }
    }
    if (seq > 0 && past > 0 && seq + past > g->max_seq)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to run model %s: %s %lld + %s %lld is more than the maximum "
                            "sequence of %lld (max_seq, else the model's edgebench.llm.ctx)",
                            g->what, EB_IR_DIM_SEQ, (long long)seq, EB_IR_DIM_PAST, (long long)past,
                            (long long)g->max_seq);
    for (size_t i = 0; i < g->n_inputs; i++) {
        struct eb_ir_value *v = &g->values[g->inputs[i]];
        enum eb_status st = eb_ir_value_set(g, v, v->dtype, v->rank, in[i].shape, diag);
        if (st != EB_OK)
            return st;
        /* the last run's output still on the device (a KV cache) stays there */
        const int resident = v->nbytes > 0 && e->dev->input_resident != NULL
                                 ? e->dev->input_resident(e, i, in[i].data, v->nbytes)
                                 : 0;
        if (resident < 0)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "failed to run model %s: input '%s' is the host buffer of an "
                                "output kept on the device (eb_engine_keep_outputs), not the last "
                                "run's: its bytes are not an output's; pass a kept output only to "
                                "the run right after",
                                g->what, v->name);
        if (v->nbytes > 0 && !resident)
            memmove(v->data, in[i].data, v->nbytes);
    }
    return EB_OK;
}

enum eb_status eb_engine_run(struct eb_engine *e, const struct eb_tensor *in, size_t n_in,
                             struct eb_tensor *out, size_t n_out, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    if (n_in != g->n_inputs || n_out < g->n_outputs || (n_in > 0 && in == NULL) || out == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to run model %s: %zu inputs and %zu outputs given, %zu and "
                            "%zu expected",
                            g->what, n_in, n_out, g->n_inputs, g->n_outputs);
    enum eb_status st = g->dynamic ? take_inputs_dynamic(e, in, diag) : EB_OK;
    if (st != EB_OK)
        return st;
    for (size_t i = 0; i < n_in && !g->dynamic; i++) {
        struct eb_ir_value *v = &g->values[g->inputs[i]];
        int same = in[i].dtype == v->dtype && in[i].rank == v->rank && in[i].data != NULL;
        for (int d = 0; same && d < v->rank; d++)
            same = in[i].shape[d] == v->shape[d];
        if (!same) {
            char want[96], got[96];
            eb_shape_format(v->shape, v->rank, want, sizeof(want));
            eb_shape_format(in[i].shape, in[i].rank < 0 ? 0 : in[i].rank, got, sizeof(got));
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "failed to run model %s: input '%s' is %s %s, expected %s %s",
                                g->what, v->name, eb_dtype_name(in[i].dtype), got,
                                eb_dtype_name(v->dtype), want);
        }
        v->data = in[i].data;
    }
    st = e->dev->run(e, diag);
    if (st != EB_OK)
        return st;
    describe_outputs(e, out);
    return EB_OK;
}

int eb_engine_frame_input(const struct eb_engine *e, char *why, size_t why_size)
{
    const struct eb_graph *g = e->g;
    const char *reason = NULL;
    char buf[224];
    if (e->dev->run_frame == NULL) {
        reason = "the cpu device preprocesses frames on the host";
    } else if (g->n_inputs != 1) {
        snprintf(buf, sizeof(buf), "the model has %zu inputs (frames need exactly one)",
                 g->n_inputs);
        reason = buf;
    } else {
        const struct eb_ir_value *v = &g->values[g->inputs[0]];
        if (v->rank != 4 || v->shape[0] != 1 || (v->shape[1] != 1 && v->shape[1] != 3) ||
            (v->dtype != EB_DTYPE_F32 && v->dtype != EB_DTYPE_F16)) {
            char sh[96];
            eb_shape_format(v->shape, v->rank, sh, sizeof(sh));
            snprintf(buf, sizeof(buf), "input '%.40s' is %s %s, not a float [1,1|3,H,W] image",
                     v->name, eb_dtype_name(v->dtype), sh);
            reason = buf;
        } else if (e->dev->frame_ok != NULL && !e->dev->frame_ok(e, buf, sizeof(buf))) {
            reason = buf;
        }
    }
    if (reason != NULL && why != NULL && why_size > 0)
        snprintf(why, why_size, "%s", reason);
    return reason == NULL;
}

static enum eb_status frame_unsupported(const struct eb_engine *e, struct eb_diag *diag)
{
    char why[160];
    if (eb_engine_frame_input(e, why, sizeof(why)))
        return EB_OK;
    return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                        "model %s cannot take frames on the device: %s; preprocess on the host "
                        "and call eb_engine_run",
                        e->what, why);
}

enum eb_status eb_engine_frame_buffer(struct eb_engine *e, int width, int height, uint8_t **buf_out,
                                      struct eb_diag *diag)
{
    enum eb_status st = frame_unsupported(e, diag);
    if (st != EB_OK)
        return st;
    if (width <= 0 || height <= 0 || width > 16384 || height > 16384)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "model %s: frame %dx%d is empty or larger than 16384x16384", e->what,
                            width, height);
    return e->dev->frame_buffer(e, width, height, buf_out, diag);
}

enum eb_status eb_engine_pin_frames(struct eb_engine *e, uint8_t *base, size_t bytes,
                                    struct eb_diag *diag)
{
    enum eb_status st = frame_unsupported(e, diag);
    if (st != EB_OK)
        return st;
    if (e->dev->pin_frames == NULL)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "model %s: the %s device does not page-lock frames", e->what,
                            e->dev->name);
    if ((base == NULL) != (bytes == 0))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "model %s: frames memory to page-lock needs both an address and a "
                            "size",
                            e->what);
    return e->dev->pin_frames(e, base, bytes, diag);
}

enum eb_status eb_engine_run_frame(struct eb_engine *e, const struct eb_engine_frame *f,
                                   struct eb_tensor *out, size_t n_out, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    enum eb_status st = frame_unsupported(e, diag);
    if (st != EB_OK)
        return st;
    if (f == NULL || f->rgb == NULL || out == NULL || n_out < g->n_outputs)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to run model %s: no frame or fewer than %zu outputs given",
                            e->what, g->n_outputs);
    const struct eb_ir_value *v = &g->values[g->inputs[0]];
    const int64_t H = v->shape[2], W = v->shape[3];
    if (f->width <= 0 || f->height <= 0 || f->width > 16384 || f->height > 16384 ||
        f->stride < (size_t)f->width * 3 || f->new_w < 1 || f->new_h < 1 || f->pad_left < 0 ||
        f->pad_top < 0 || f->pad_left + f->new_w > W || f->pad_top + f->new_h > H)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to run model %s: frame %dx%d (stride %zu) letterboxed to %dx%d "
                            "at (%d,%d) does not fit the %lldx%lld input",
                            e->what, f->width, f->height, f->stride, f->new_w, f->new_h,
                            f->pad_left, f->pad_top, (long long)W, (long long)H);
    if ((st = e->dev->run_frame(e, f, diag)) != EB_OK)
        return st;
    describe_outputs(e, out);
    return EB_OK;
}

enum eb_status eb_engine_reduce_head(struct eb_engine *e, int output, float conf,
                                     struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    if (e->dev->reduce_head == NULL)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "model %s: the %s device has no head reduction; decode on the host",
                            e->what, e->dev->name);
    if (output < 0 || (size_t)output >= g->n_outputs)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "model %s has no output %d", e->what, output);
    const struct eb_ir_value *v = &g->values[g->outputs[output]];
    if (v->rank != 3 || v->shape[0] != 1 || v->shape[1] < 5 || v->dtype != EB_DTYPE_F32 ||
        v->is_const) {
        char sh[96];
        eb_shape_format(v->shape, v->rank, sh, sizeof(sh));
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "model %s: output '%s' is %s %s, not a float [1,4+nc,N] detection "
                            "head; decode it on the host",
                            e->what, v->name, eb_dtype_name(v->dtype), sh);
    }
    return e->dev->reduce_head(e, output, conf, diag);
}

enum eb_status eb_engine_keep_outputs(struct eb_engine *e, const unsigned char *keep, size_t n,
                                      struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    if (n != g->n_outputs || keep == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "model %s: %zu output flags given, it has %zu outputs", e->what, n,
                            g->n_outputs);
    int changed = 0;
    for (size_t j = 0; j < n; j++) {
        /* only a model with dynamic dims checks its inputs against the last run's outputs
         * (take_inputs_dynamic): another keeps copying every output back */
        const unsigned char k = keep[j] != 0 && g->dynamic;
        changed |= k != e->keep_out[j];
        e->keep_out[j] = k;
    }
    return changed && e->dev->keep_outputs != NULL ? e->dev->keep_outputs(e, diag) : EB_OK;
}

size_t eb_engine_head_rows(struct eb_engine *e, struct eb_anchor_row **rows_out)
{
    *rows_out = e->head_on ? e->head_rows : NULL;
    return e->head_on ? e->head_count : 0;
}

static void describe_outputs(const struct eb_engine *e, struct eb_tensor *out)
{
    const struct eb_graph *g = e->g;
    for (size_t i = 0; i < g->n_outputs; i++) {
        const struct eb_ir_value *v = &g->values[g->outputs[i]];
        out[i].dtype = v->dtype;
        out[i].rank = v->rank;
        for (int d = 0; d < EB_MAX_RANK; d++)
            out[i].shape[d] = d < v->rank ? v->shape[d] : 0;
        out[i].data = e->head_on && (size_t)e->head_out == i ? NULL : v->data;
    }
}

void eb_engine_profile_get(const struct eb_engine *e, struct eb_engine_profile *prof_out)
{
    memset(prof_out, 0, sizeof(*prof_out));
    if (e->prof == NULL)
        return;
    prof_out->n_nodes = e->n_order;
    prof_out->nodes = e->prof;
    prof_out->runs = e->prof_runs;
    prof_out->run_total_ms = e->prof_run_ms;
}

void eb_engine_profile_reset(struct eb_engine *e)
{
    if (e->prof == NULL)
        return;
    for (size_t k = 0; k < e->n_order; k++)
        e->prof[k].total_ms = 0.0;
    e->prof_runs = 0;
    e->prof_run_ms = 0.0;
}

const char *eb_engine_meta(const struct eb_engine *e, const char *key)
{
    for (size_t i = 0; i < e->g->n_meta; i++)
        if (strcmp(e->g->meta_keys[i], key) == 0)
            return e->g->meta_values[i];
    return NULL;
}

void eb_engine_destroy(struct eb_engine *e)
{
    if (e == NULL)
        return;
    struct eb_graph *g = e->g;
    /* The engine itself lives in the graph's arena: close the device, stop the pool, free the
     * arena buffer, then the graph. */
    free_engine(e);
    eb_graph_destroy(g);
}

uint64_t eb_engine__n_allocs(const struct eb_engine *e)
{
    return e->g->ca.n_allocs;
}

enum eb_status eb_engine_supports(const uint8_t *bytes, size_t len, const char *what,
                                  int *supported_out, char *why, size_t why_size,
                                  struct eb_diag *diag)
{
    struct eb_diag local = {0};
    struct eb_graph *g = NULL;
    struct eb_engine_options opt;
    enum eb_status st;
    if (bytes == NULL || supported_out == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "eb_engine_supports: invalid argument");
    eb_engine_options_default(&opt);
    st = build_graph(bytes, len, what != NULL ? what : "<model>", &opt, &g, &local);
    eb_graph_destroy(g);
    if (st == EB_OK || st == EB_ERR_UNSUPPORTED) {
        *supported_out = st == EB_OK;
        if (why != NULL && why_size > 0)
            snprintf(why, why_size, "%s", st == EB_OK ? "" : local.msg);
        return EB_OK;
    }
    /* Not readable (or out of memory): that is a failure, not an answer. */
    return eb_diag_fail_advise(diag, st, local.advice, "%s", local.msg);
}
