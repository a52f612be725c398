/*
 * The CUDA device's private state (cuda_device.c: open, bind, run, close; cuda_nodes.c: which
 * nodes run on the GPU and how each is enqueued).
 */
#ifndef EB_ENGINE_CUDA_CUDA_INTERNAL_H
#define EB_ENGINE_CUDA_CUDA_INTERNAL_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "engine/cuda/kernels.h"
#include "engine/engine_internal.h"
#include "engine/ops/op.h"

/* Streams the captured forward spreads independent nodes over (cuda_sched.c). */
#define EB_CU_LANES 4

/** One captured forward of a dynamic graph (cu_state.dg). */
struct cu_dyn_graph {
    uint64_t hash;     /* of key */
    int64_t *key;      /* the inputs' dims at the capture (key_len) */
    unsigned char *sd; /* the shape data at the capture (sd_len bytes) */
    size_t sd_len;
    int64_t *shapes; /* every dyn value's rank and dims at the capture (dg_kept only; key,
                        shapes and sd: one malloc): a replay takes them from here (dyn_restore) */
    cudaGraph_t graph;
    cudaGraphExec_t gexec;
};

/** How one live node runs. */
struct cu_node {
    struct eb_op_desc d;
    /* EB_DESC_CONV */
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws_bytes;
    const float *bias; /* device, float; NULL = none */
    struct eb_cuk_epilogue ep;
    int ep_needed; /* 1 when the epilogue kernel runs after cuDNN */
    int nhwc;      /* the conv runs channels-last (its output's layout; cuda_layout.c) */
    int x_xpose;   /* its input is in the other layout: transposed into d_xpose first */
    /* fp16 channels-last: a cuDNN graph-API plan (cuda_conv.c) instead of the descriptors
     * above; g_fused: the plan includes bias, activation and residual */
    cudnnBackendDescriptor_t g_plan, g_vpack;
    int g_fused;
    int lane; /* the stream it is captured on (cuda_sched.c); its cuDNN workspace is the lane's */
    /* EB_DESC_QCONV: the kernel's parameters, device pointers included (cuda_qconv.c) */
    struct eb_cuk_qconv q;
    /* EB_DESC_QUANTIZE / DEQUANTIZE: float scales on the device */
    const float *scale;
    /* a dynamic graph's RMSNorm chain x * x, ReduceMean, + eps, Sqrt, x / it, * w (cuda_nodes.c
     * eb_cu__fuse_rms_norm): its last Mul runs it as one kernel (rms 1: x and w are values
     * rms_x, rms_w), the other five only have their shapes inferred (skip) */
    int rms;
    int32_t rms_x, rms_w;
    float rms_eps;
    /* a dynamic graph's attention chain (cuda_nodes.c eb_cu__fuse_attention): Transpose q,
     * Transpose K, Unsqueeze, MatMul, Mul (scale), Add (mask), Softmax, Unsqueeze V, MatMul
     * (attn 1: left out) and the Transpose of the result (attn 2: eb_cuk_attn_rows) while the
     * run's query rows (attn_q's dim 1) are at most EB_CU_ATTN_MAX_ROWS; else each node runs */
    int attn;
    int32_t attn_q, attn_k, attn_v, attn_mask;
    float attn_scale;
    /* a dynamic graph's rotary embedding x * cos + Concat(x's halves swapped) * sin (cuda_nodes.c
     * eb_cu__fuse_rope): its Add runs eb_cuk_rope (rope 1: values rope_x, rope_cos, rope_sin),
     * the Split, Concat and both Muls nothing (skip) */
    int rope;
    int32_t rope_x, rope_cos, rope_sin;
    /* a dynamic graph's MatMul by a constant [K, N] weight whose only reader is an Add of a
     * bias vector [N] or of a value of the product's shape (cuda_nodes.c eb_cu__fuse_matmul_add):
     * the Add runs both as one cuBLASLt call (mm 1: values mm_a, mm_w and mm_c; mm_bias: mm_c
     * is the bias, added in the epilogue, else C with beta 1), the MatMul nothing (skip) */
    int mm, mm_bias;
    int32_t mm_a, mm_w, mm_c;
    int64_t lt_m; /* the rows lt_algo was picked for (0: none yet; cuda_matmul_lt.c) */
    cublasLtMatmulAlgo_t lt_algo;
    /* a dynamic graph's SwiGLU Mul(Mul(g, Sigmoid(g)), u) (cuda_nodes.c eb_cu__fuse_swiglu): the
     * outer Mul runs eb_cuk_swiglu (glu 1: values glu_g, glu_u), the Sigmoid and the inner Mul
     * nothing (skip) */
    int glu;
    int32_t glu_g, glu_u;
    /* one-row products (cuda_gemv.c): a MatMul by a constant weight, plain or with its Add
     * fused (mm), that eb_cuk_gemv takes (gv 1: values gv_a, the row, gv_w and gv_c, the bias or
     * residual, -1 none). At a run of one row (a decode step) the first of a group of them
     * reading the same row (gv_n members, gv_k: their order indices, its own first) runs the
     * group as one launch, the others nothing (gv_led); with gv_from (enum eb_cuk_gemv_from) the
     * launch makes the row itself from values gv_x and gv_w2 (gv_eps), as the RMSNorm or SwiGLU
     * node that writes it would, and that node runs nothing (gv_made). At more rows each runs
     * as it would alone. */
    int gv, gv_n, gv_led, gv_made;
    enum eb_cuk_gemv_from gv_from;
    size_t gv_k[EB_CUK_GEMV_MAX_PARTS];
    int32_t gv_a, gv_w, gv_c, gv_x, gv_w2;
    float gv_eps;
    /* 1: a node of a chain above that the chain's last node computes; only its shapes are
     * inferred at a run */
    int skip;
    /* the host callback's argument for nodes on the CPU (cu_state.on_cpu) */
    struct cu_host_call {
        struct eb_engine *e;
        size_t k;
    } call;
};

struct cu_state {
    int gpu;
    enum eb_cuk_dt dt;
    cudaStream_t stream;
    cudnnHandle_t cudnn;
    cublasHandle_t cublas;
    cublasLtHandle_t lt;   /* the fused MatMul + Add nodes' (cu_node.mm) */
    struct cu_node *nodes; /* n_order */
    unsigned char *on_cpu; /* n_order: 1 = no CUDA kernel, runs on the CPU between copies
                              (also eb_engine__prepare_nodes' filter) */
    size_t n_on_cpu;
    void **dptr;           /* n_values: where each value lives on the device (precision form) */
    float **dptr32;        /* n_values: float copies of constants used as bias or scales */
    unsigned char *w_khwc; /* n_values: conv filters uploaded as [K][R][S][C] */
    size_t xpose_bytes;    /* the largest conv input transposed into d_xpose */
    void *d_xpose;
    void *d_arena, *d_weights, *d_ws, *d_blas_ws;
    void *d_gemv_ws; /* the one-row products' (EB_CUK_GEMV_WS_BYTES; cuda_gemv.c) */
    void *d_qdata;   /* the int8 convs' packed filters, sums, scales, biases and tables */
    size_t ws_bytes, blas_ws_bytes;
    void *d_in[EB_IR_MAX_GRAPH_IO];      /* inputs on the device, in precision */
    void *d_in_f32[EB_IR_MAX_GRAPH_IO];  /* fp16: the float inputs before the cast */
    void *d_out_f32[EB_IR_MAX_GRAPH_IO]; /* fp16: the float outputs after the cast */
    void *h_out[EB_IR_MAX_GRAPH_IO];     /* pinned host outputs (float) */
    void *h_arena;                       /* pinned host mirror of the arena (nodes on the CPU) */
    cudaGraph_t graph;
    cudaGraphExec_t gexec;
    int graph_state; /* 0 = not captured yet, 1 = replaying, -1 = capture failed: direct */
    cudaEvent_t ev[4];
    /* eb_engine_run_frame: page-locked and device frame buffers, the graph of the forward
     * that follows the letterbox (launched before it, directly) and the event between the two */
    uint8_t *h_frame;
    void *d_frame;
    size_t frame_bytes; /* of each of the two (zero_copy: of the one buffer) */
    int zero_copy;      /* 1: h_frame is mapped (cudaHostAllocMapped), d_frame its device
                           address; no copy between them (EB_ENGINE_ZERO_COPY_MAPPED) */
    uint64_t cap_bytes; /* opt.mem_cap_bytes (0 = none), for the device frame buffer */
    /* eb_engine_pin_frames: the caller's frames memory, page-locked (cudaHostRegister; mapped
     * when zero_copy, d_pin its device address); frames inside it are uploaded (or read) from
     * where they are */
    uint8_t *pin;
    size_t pin_bytes;
    uint8_t *d_pin;
    cudaGraph_t fgraph;
    cudaGraphExec_t fgexec;
    int fgraph_state; /* as graph_state */
    cudaEvent_t ev_pre;
    /* the node (order index) whose conv reads input 0 alone and transposes it channels-last: the
     * frame's letterbox writes its transposed buffer directly instead (-1: none); pre_nhwc while
     * such a forward is enqueued */
    int64_t pre_conv;
    int pre_nhwc;
    /* eb_engine_reduce_head: rows of output e->head_out on the device and their pinned copy,
     * each a count (first 16 bytes) then capacity rows */
    void *d_head, *h_head;
    size_t head_bytes;
    float head_conf;
    /* cuda_sched.c: node k follows deps[dep_at[k] .. dep_at[k+1]) (graph arena); lanes[0] is
     * `stream`; ev_done (n_order) marks each node's end on its lane in the capture; seen
     * (n_order × EB_CU_LANES) what each node's lane followed when it was enqueued */
    uint32_t *dep_at, *deps;
    int n_lanes;
    cudaStream_t lanes[EB_CU_LANES];
    void *lane_ws[EB_CU_LANES]; /* cuDNN workspaces, one per lane, inside d_ws */
    cudaEvent_t *ev_done, ev_fork, ev_join[EB_CU_LANES];
    int64_t *seen;
    cudaStream_t lib_stream; /* the stream the cuDNN and cuBLAS handles are set to */
    cudaEvent_t *ev_nodes;   /* profile: n_order + 1 */
    uint64_t dev_bytes;      /* our cudaMalloc total */
    /* Runs started (cu_run, cu_run_frame); out_gen[j]: the run whose output j h_out[j] holds, of
     * out_bytes[j] bytes (0: none). A dynamic graph's input that is that host buffer again, right
     * after that run, is copied device to device from in_src[i] (cu_input_resident; NULL: from
     * the host); in_host_read[i]: a node on the CPU reads input i's host bytes (never resident). */
    uint64_t run_gen;
    uint64_t out_gen[EB_IR_MAX_GRAPH_IO];
    size_t out_bytes[EB_IR_MAX_GRAPH_IO];
    const void *in_src[EB_IR_MAX_GRAPH_IO];
    unsigned char in_host_read[EB_IR_MAX_GRAPH_IO];
    /* in_dev[i]: this run's input i comes from a kept output (eb_engine_keep_outputs) in the
     * device's precision, straight into d_in[i]: the forward does not cast it (part of the
     * dynamic graphs' key) */
    unsigned char in_dev[EB_IR_MAX_GRAPH_IO];
    /* A dynamic graph's CUDA Graphs, one per input-shape signature (cuda_device.c: dyn_pick):
     * dg[0 .. n_dg), at most EB_CU_DYN_GRAPHS; dg_on 0 once a capture failed (node by node);
     * key: the inputs' dims then their in_dev flags (key_len), sd: the shape data the host computed at them (sd_len at
     * most sd_cap), both as this run's (scratch) and as each graph's at its capture; h_sd: the
     * shape data's pinned host bytes (the captured uploads read them) */
    struct cu_dyn_graph *dg;
    size_t n_dg;
    int dg_on;
    size_t key_len, sd_cap;
    int64_t *key;
    unsigned char *sd;
    void *h_sd;
    uint64_t dg_dev_bytes; /* the driver's free memory the captures took (graph executables) */
    uint64_t dg_misses;    /* runs at a signature with no graph (the table full, or other shape
                              data than at the capture): node by node */
    /* dg_kept: a replay takes the shapes and shape data of its capture instead of inferring
     * them again (no node but shape nodes runs on the host, whose launches could read node
     * parameters); checks: the order positions of the nodes whose infer_shape still runs
     * (eb_op_def.run_checks_data), n_checks of them */
    int dg_kept;
    size_t *checks, n_checks;
};

/* The most CUDA Graphs a dynamic graph keeps (one per input-shape signature: a decode of N
 * tokens after a prompt takes N + 1), and the most device memory they may take together. */
#define EB_CU_DYN_GRAPHS    512
#define EB_CU_DYN_GRAPH_MEM ((uint64_t)1 << 30)

/** float → IEEE half bits, round to nearest even (the weights' upload in fp16). */
uint16_t eb_cu__f32_to_f16(float f);
/** Element size of value v on the device (float values in the precision). */
size_t eb_cu__es(const struct cu_state *s, const struct eb_ir_value *v);
/** 1 when node k can run on the GPU (fills s->nodes[k].d); else 0 and why (op's reason). */
int eb_cu__node_ok(struct eb_engine *e, struct cu_state *s, size_t k, char *why, size_t n);
/** cuDNN descriptors and algorithm of conv node k (bind time; ws budget `ws_max`). */
enum eb_status eb_cu__conv_plan(struct eb_engine *e, struct cu_state *s, size_t k, size_t ws_max,
                                void *ws, struct eb_diag *diag);
/**
 * Chooses which activations go channels-last (eb_ir_value.nhwc; cuda_layout.c says which) and
 * sets the conv nodes' nhwc/x_xpose, s->w_khwc and s->xpose_bytes; the number of such values.
 */
size_t eb_cu__choose_layout(struct eb_engine *e, struct cu_state *s);
/** v's element strides in logical (ONNX) dim order, for its layout on the device (a
 * channels-last slice: rows of v->cpitch). */
void eb_cu__strides(const struct eb_ir_value *v, int64_t *st);
/** The bytes from v's first element to past its last (a slice spans its wider rows). */
size_t eb_cu__span_bytes(const struct cu_state *s, const struct eb_ir_value *v);
/** 1 when conv node cn (its epilogue included) can go to cuDNN's graph API as one fused plan
 * (fp16 channels-last, no groups, an activation cuDNN has, no fake quantisation). */
int eb_cu__conv_graph_eligible(const struct cu_state *s, const struct cu_node *cn);
/**
 * Conv node k through cuDNN's graph API (fp16 channels-last only; cuda_conv.c): 1 with
 * cn->g_plan, ws_bytes, g_fused and ep_needed set, 0 when no engine takes it (the legacy path).
 */
int eb_cu__conv_graph_plan(struct eb_engine *e, struct cu_state *s, size_t k, size_t ws_max,
                           void *ws);
/** 1 when conv node k reads or writes a slice of wider channels-last rows (a cpitch). */
int eb_cu__conv_sliced(const struct eb_engine *e, const struct cu_node *cn, size_t k);
/** The variant pack of conv node k's plan, once the buffers and s->d_ws exist. */
enum eb_status eb_cu__conv_graph_bind(struct eb_engine *e, struct cu_state *s, size_t k,
                                      struct eb_diag *diag);
/** cudaMalloc counted in s->dev_bytes; the failure names `what` and the size. */
enum eb_status eb_cu__dev_alloc(struct eb_engine *e, struct cu_state *s, size_t bytes, void **p,
                                const char *what, struct eb_diag *diag);
/**
 * Open time, before anything reads e->order: every float-output int8 conv takes over the nodes
 * after it that its epilogue can compute (cuda_qconv.c: a residual Add, a Split along C, a
 * per-tensor QuantizeLinear that is a part's one reader and a DequantizeLinear of its bytes);
 * they leave the graph and e->order. EB_ERR_NOMEM only.
 */
enum eb_status eb_cu__qconv_fuse(struct eb_engine *e, struct eb_diag *diag);
/** 1 when int8 conv p took over nodes after it (eb_cu__qconv_fuse): it runs on the GPU only. */
int eb_cu__qconv_fused(const struct eb_qconv_params *p);
/** 1 when int8 conv p is dense (groups 1, int8 weights without zero points): the tensor cores'
 * kernel, or for the image's conv (eb_cuk_qconv_small) the CUDA cores' dp4a kernel, takes it. */
int eb_cu__qconv_dense(const struct eb_qconv_params *p);
/** 1 when int8 conv p runs on the tensor cores (dense, and not the image's small conv). */
int eb_cu__qconv_tensor_cores(const struct eb_qconv_params *p);
/** The int8 convs' layouts: channels-last compute, an input in NCHW transposed into d_xpose
 * first (s->xpose_bytes grows to fit). After eb_cu__choose_layout, if that ran. */
void eb_cu__qconv_layout(struct eb_engine *e, struct cu_state *s);
/** Bind time, after the arena is placed: the int8 convs' data uploaded (counted in the
 * plan's weight bytes) and each node's kernel parameters filled. */
enum eb_status eb_cu__qconv_upload(struct eb_engine *e, struct cu_state *s, struct eb_diag *diag);
/** Enqueues on st the copy of value x (at xp, in its own layout) into s->d_xpose in the other
 * layout: channels-last with dense rows when nhwc, else NCHW (a conv's input made its layout). */
cudaError_t eb_cu__to_xpose(struct cu_state *s, const struct eb_ir_value *x, int nhwc,
                            const void *xp, cudaStream_t st);
/** Enqueues int8 conv node k on `stream`. */
cudaError_t eb_cu__qconv_enqueue(struct eb_engine *e, struct cu_state *s, size_t k,
                                 cudaStream_t stream);
/**
 * Open time, a dynamic graph's GPU nodes described: each RMSNorm chain (x * x, ReduceMean over the
 * last dim, + a scalar eps, Sqrt, x / it, * a [hidden] weight; consecutive where x must stay, each
 * step's value read once) becomes one kernel on its last Mul. The number of nodes absorbed.
 */
size_t eb_cu__fuse_rms_norm(struct eb_engine *e, struct cu_state *s);
/**
 * Open time, dynamic graphs: each rotary embedding x * cos + Concat(Split(x) swapped) * sin as
 * one kernel at its Add (cu_node.rope), which takes x, cos and sin as extra inputs (the plan keeps
 * them until it runs). The nodes absorbed.
 */
size_t eb_cu__fuse_rope(struct eb_engine *e, struct cu_state *s);
/** The most query rows a run's fused attention takes (decode steps; a prefill runs the nodes). */
#define EB_CU_ATTN_MAX_ROWS 16
/**
 * Open time, dynamic graphs: each attention chain of a decoder (cu_node.attn) runs as one kernel
 * in runs of at most EB_CU_ATTN_MAX_ROWS query rows; the chain's last node takes the chain's
 * inputs as extra inputs, so that the memory plan keeps them until it runs. The nodes absorbed.
 */
size_t eb_cu__fuse_attention(struct eb_engine *e, struct cu_state *s);
/**
 * Open time, dynamic graphs: each MatMul of an activation by a constant [K, N] weight whose
 * product only an Add reads, of a constant bias [N] or of a value of the product's shape (a
 * residual), runs at that Add as one cuBLASLt call (cu_node.mm: bias epilogue, or the residual
 * as C with beta 1), the product rounded once. The nodes absorbed (the MatMuls).
 */
size_t eb_cu__fuse_matmul_add(struct eb_engine *e, struct cu_state *s);
/**
 * Open time, dynamic graphs: each SwiGLU Mul(Mul(g, Sigmoid(g)), u) of same-shape values as one
 * kernel at its outer Mul (cu_node.glu; the nodes' roundings kept, so the same numbers). The
 * nodes absorbed.
 */
size_t eb_cu__fuse_swiglu(struct eb_engine *e, struct cu_state *s);
/** Enqueues fused MatMul + Add node k (cu_node.mm) on `stream` (cuda_matmul_lt.c). */
/* Appends `extra` (n of them) to node order[k]'s inputs: a fused kernel run there reads them, and
 * the memory plan keeps them until it has run. 0 when out of memory. */
int eb_cu__read_more(struct eb_engine *e, size_t k, const int32_t *extra, int n);
/* Before the memory plan: the inputs of each RMSNorm or SwiGLU whose row only one-row products
 * read become inputs of the first of them too (eb_cu__read_more), so that the group's launch
 * may make the row from them (eb_cu__group_gemv). 0 when out of memory. */
int eb_cu__keep_gemv_rows(struct eb_engine *e, struct cu_state *s);
/* Marks the one-row products and groups them (cu_node.gv); after the memory plan, whose
 * offsets say which may run before their turn, and allocates their workspace when there are
 * any. *groups: those of more than one node or making their row. */
enum eb_status eb_cu__group_gemv(struct eb_engine *e, struct cu_state *s, size_t *groups,
                                 struct eb_diag *diag);
/* Node k at a run of one row: its group's launch (the first member), nothing (another member,
 * or an RMSNorm the group computes) with *done 1; any other run: *done 0. */
enum eb_status eb_cu__gemv_enqueue(struct eb_engine *e, struct cu_state *s, size_t k,
                                   cudaStream_t stream, int *done, struct eb_diag *diag);
enum eb_status eb_cu__matmul_add_enqueue(struct eb_engine *e, struct cu_state *s, size_t k,
                                         cudaStream_t stream, struct eb_diag *diag);
/** Destroys node k's descriptors. */
void eb_cu__node_free(struct cu_node *cn);
/**
 * Enqueues GPU node k on `stream` (the library handles already set to it; its cuDNN workspace is
 * s->lane_ws[its lane]); a cudaError_t / library failure text in diag.
 */
enum eb_status eb_cu__node_enqueue(struct eb_engine *e, struct cu_state *s, size_t k,
                                   cudaStream_t stream, struct eb_diag *diag);
/** Enqueues CPU node k (copies and a host function) on `stream` (cuda_device.c). */
typedef enum eb_status (*eb_cu_cpu_node_fn)(struct eb_engine *e, struct cu_state *s, size_t k,
                                            cudaStream_t stream, struct eb_diag *diag);
/**
 * Bind time, once the device buffers are placed: the nodes each node must follow (s->dep_at,
 * s->deps), each node's lane and s->n_lanes (`parallel` 0: every node on lane 0; `shared_ws`:
 * the lanes share one cuDNN workspace, so the nodes that use it are ordered too).
 */
enum eb_status eb_cu__schedule(struct eb_engine *e, struct cu_state *s, int parallel, int shared_ws,
                               struct eb_diag *diag);
/** Node k (GPU or, through cpu_node, CPU) on `stream`, the library handles pointed there first. */
enum eb_status eb_cu__enqueue_node_on(struct eb_engine *e, struct cu_state *s, size_t k,
                                      cudaStream_t stream, eb_cu_cpu_node_fn cpu_node,
                                      struct eb_diag *diag);
/**
 * Every node on its lane, forked from and joined back into lanes[0] (inside a stream capture:
 * the graph gets the branches side by side); the handles end on lanes[0].
 */
enum eb_status eb_cu__enqueue_lanes(struct eb_engine *e, struct cu_state *s,
                                    eb_cu_cpu_node_fn cpu_node, struct eb_diag *diag);

#endif
