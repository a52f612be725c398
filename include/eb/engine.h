/*
 * The native inference engine: ONNX → graph IR (shape inference, constant folding, fusions,
 * dead-node elimination) → a memory plan (one arena, offsets known at load time, hard cap) →
 * kernels (a scalar reference for every op; faster kernels where they pay). The harness reaches
 * it only through the `native` backend (src/backends/native); the engine never sees the harness.
 *
 *     struct eb_engine_options opt;
 *     eb_engine_options_default(&opt);
 *     opt.mem_cap_bytes = 8000000000ull;
 *     struct eb_engine *e = NULL;
 *     if (eb_engine_load(bytes, len, "yolov8n.onnx", &opt, &e, &diag) != EB_OK) ...;
 *     struct eb_engine_io io;
 *     eb_engine_io_info(e, &io);
 *     struct eb_tensor in = {...}, out[4];
 *     if (eb_engine_run(e, &in, 1, out, io.n_outputs, &diag) != EB_OK) ...;
 *     eb_engine_destroy(e);
 *
 * Thread-safety: one engine is used by one thread at a time; two engines may run in parallel.
 */
#ifndef EB_ENGINE_H
#define EB_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "eb/alloc.h"
#include "eb/detect.h"
#include "eb/diag.h"
#include "eb/log.h"
#include "eb/tensor.h"

#define EB_ENGINE_MAX_IO   80 /* = EB_BACKEND_MAX_IO: a decoder's KV cache is two a layer */
#define EB_ENGINE_NAME_MAX 128

/** Graph passes, each of which can be switched off so its effect is measurable. */
enum eb_engine_pass {
    EB_ENGINE_PASS_CONST_FOLD = 1u << 0, /* Shape/Gather/Unsqueeze/Concat chains, Q/DQ of weights */
    EB_ENGINE_PASS_FUSE = 1u << 1,       /* Conv+SiLU, Conv+Add, bias/activation epilogues;
                                            CUDA: a decoder's RMSNorm chains, one kernel each */
    EB_ENGINE_PASS_DCE = 1u << 2,        /* dead-node elimination */
    EB_ENGINE_PASS_LAYOUT = 1u << 3,     /* activations between convs in the conv kernels'
                                            layout: channel-blocked NCHWc on the CPU,
                                            channels-last NHWC on cuda fp16 */
    EB_ENGINE_PASS_LANES = 1u << 4,      /* CUDA: independent branches of the captured graph on
                                            parallel streams (off: one stream, node order) */
    EB_ENGINE_PASS_ALL = 0xFFFFFFFFu,
};

/** How QDQ (QuantizeLinear/DequantizeLinear) models run. */
enum eb_engine_qdq {
    EB_ENGINE_QDQ_FLOAT = 0, /* fake quantisation in float: exactly the graph's arithmetic */
    EB_ENGINE_QDQ_INT8,      /* DQ→Conv→Q chains as integer convolutions (int32 accumulation) */
    EB_ENGINE_QDQ_STRIP,     /* activations' Q→DQ pairs removed: the float model the QDQ export
                                was made from (weights keep their int8 rounding) */
    EB_ENGINE_QDQ_AUTO,      /* INT8 on the CPU; FLOAT on cuda, as before its int8 kernels
                                (--precision int8 asks for them), not yet faster than cuDNN's fp16 */
};

/** Where the graph runs. */
enum eb_engine_device {
    EB_ENGINE_DEVICE_CPU = 0,
    EB_ENGINE_DEVICE_CUDA, /* an NVIDIA GPU through CUDA, cuDNN and cuBLAS (builds with EB_CUDA) */
};

/** Precision of the float tensors on the device (the CPU computes in float32 only). */
enum eb_engine_precision {
    EB_ENGINE_PRECISION_FP32 = 0,
    EB_ENGINE_PRECISION_FP16, /* CUDA: activations and weights in half, float accumulation */
};

/**
 * CUDA: how eb_engine_run_frame gets a frame to the letterbox kernel. STAGED: a page-locked
 * host buffer copied into a device buffer; MAPPED: one page-locked buffer mapped into the
 * device's address space (cudaHostAllocMapped), read by the kernel in place, no copy. AUTO:
 * MAPPED on an integrated GPU (Jetson: unified memory, where the copy is a DRAM-to-DRAM
 * duplicate), else STAGED.
 */
enum eb_engine_zero_copy {
    EB_ENGINE_ZERO_COPY_AUTO = 0,
    EB_ENGINE_ZERO_COPY_STAGED,
    EB_ENGINE_ZERO_COPY_MAPPED,
};

struct eb_engine_options {
    int threads;                        /* threads per run, the caller included; 0 = online CPUs */
    uint64_t mem_cap_bytes;             /* hard cap on arena + scratch + weights (CUDA: + library
                               workspaces and I/O buffers, all in device memory); 0 = none */
    enum eb_engine_device device;       /* default CPU */
    enum eb_engine_precision precision; /* default FP32 */
    int gpu;                            /* CUDA device ordinal; default 0 */
    uint32_t passes;                    /* enum eb_engine_pass bits; default EB_ENGINE_PASS_ALL */
    int imgsz;                          /* square size for dynamic H/W of a 4-D input; 0 = 640 */
    int profile;                        /* 1 = record per-node times (eb_engine_profile_get) */
    enum eb_engine_qdq qdq;             /* default EB_ENGINE_QDQ_FLOAT */
    const char *isa; /* kernels: NULL/"auto" = best for this CPU, "ref", "avx2", ... */
    const struct eb_allocator *alloc; /* parent of every engine allocation; NULL = system */
    const char *base_dir;             /* folder of external-data files; NULL = refuse them */
    const struct eb_log *log;         /* may be NULL; borrowed */
    const char *mem_cap_label;        /* how messages name the cap: NULL = "limit Y MiB", else
                                  "Y MiB <label>"; copied */
    enum eb_engine_zero_copy zero_copy_frames; /* CUDA: the frame buffer (default AUTO) */
    /* CPU device only (calibration, `edgebench quantize`): called after every node of every run
     * with each float32 tensor the node wrote, under its ONNX name, in the ONNX layout (the data
     * is valid during the call only). Needs `passes` without FUSE and LAYOUT, so that every
     * tensor of the file exists as the file says; NULL = off. */
    void (*observe)(void *ctx, const char *name, const struct eb_tensor *t);
    void *observe_ctx; /* borrowed; passed to observe */
    /* Decoders (inputs with the symbolic dims sequence_length, past_sequence_length,
     * total_sequence_length): the longest sequence a run may have, past included: runs take
     * sequence_length ≤ max_seq, past_sequence_length ≤ max_seq - 1 and their sum ≤ max_seq.
     * Shapes are inferred and memory planned on these bounds at load (the cap holds for every
     * run); each run infers the shapes of the nodes that depend on them again. 0 = the model's
     * metadata edgebench.llm.ctx (a model with such dims and neither is refused). CPU only. */
    int64_t max_seq;
};

/** Fills the defaults (all passes, no cap, one thread per online CPU, best kernels). */
void eb_engine_options_default(struct eb_engine_options *opt);

struct eb_engine_io_desc {
    char name[EB_ENGINE_NAME_MAX];
    enum eb_dtype dtype;
    int rank;
    int64_t shape[EB_MAX_RANK]; /* fully resolved at load time; a dynamic dim: its bound */
    uint32_t dynamic_dims;      /* bit d: dim d changes from run to run (max_seq); eb_engine_run's
                                   out[] then has each run's actual shape */
};

struct eb_engine_io {
    size_t n_inputs, n_outputs;
    struct eb_engine_io_desc inputs[EB_ENGINE_MAX_IO], outputs[EB_ENGINE_MAX_IO];
};

/** What the memory plan holds (known in full at load time). */
struct eb_engine_mem {
    uint64_t arena_bytes;     /* planned peak of intermediate tensors */
    uint64_t scratch_bytes;   /* kernels' run-time scratch (packing panels), after the arena */
    uint64_t weight_bytes;    /* constants after folding (owned by the engine) */
    uint64_t packed_bytes;    /* weights re-laid out for the fast kernels at load time */
    uint64_t naive_bytes;     /* sum of every intermediate tensor (what no planning would need) */
    uint64_t workspace_bytes; /* CUDA: cuDNN/cuBLAS workspaces and I/O staging (device) */
    uint64_t graph_bytes;     /* CUDA, a decoder: the device memory its captured CUDA Graphs
                                 took (cudaMemGetInfo's drop over each capture; grows as new
                                 step shapes are captured, within what the cap leaves) */
    uint64_t total_bytes;     /* arena + scratch + weights + packed + workspace + graphs: what
                             the cap is checked on (CUDA: device memory; CPU fallback nodes'
                             host memory is host_bytes) */
    uint64_t host_bytes;      /* CUDA: host memory of the nodes that run on the CPU (0 = none) */
    uint64_t device_measured_bytes; /* CUDA: the drop in cudaMemGetInfo's free bytes over the
                                       load and the later frame/head buffers (our allocations +
                                       the libraries' own): the cross-check of total_bytes */
};

/** How the engine runs (known at load time). */
struct eb_engine_exec_info {
    char device[16];          /* "cpu" or "cuda" */
    char device_name[64];     /* CUDA: the GPU's name ("NVIDIA H100 80GB HBM3"); "" on the CPU */
    char precision[8];        /* the heavy ops' arithmetic: "fp32", "fp16", or "int8" when most
                                 of the running Conv/MatMul/Gemm nodes are integer ones
                                 (QDQ convs rewritten by --qdq int8, ConvInteger, MatMulInteger) */
    char qdq[8];              /* a model with Q/DQ nodes: the path that ran, "int8" (n_int8 > 0
                                 convs on integer kernels), "float" (fake quantisation in
                                 float) or "strip"; "" for a model without them */
    size_t n_int8;            /* running nodes computed in integer arithmetic */
    size_t n_int8_tc;         /* CUDA: of those, the convs on the tensor cores (the others on
                                 the CUDA cores: the image's 3-channel 3 x 3 conv, depthwise
                                 convs, and a direct kernel for grouped, zero-pointed weights) */
    char int8_nodes[320];     /* a model with integer convs or Q/DQ nodes: which heavy nodes
                                 (Conv, MatMul, Gemm) run int8 and which stay float, e.g. "57
                                 int8 (56 on tensor cores); 7 float: a, b, ... (+2)"; "" else */
    size_t n_fallback;        /* CUDA: nodes that run on the CPU (no CUDA kernel for them) */
    char fallback[160];       /* CUDA: their op types, e.g. "ConvInteger x64, Mul x2"; "" = none */
    int graph;                /* CUDA: 1 when runs replay captured CUDA Graphs (a model whose
                                 shapes change: one per input shapes, captured at their first
                                 run; docs/architecture.md "Decoders") */
    int lanes;                /* CUDA: streams the captured graph spreads branches over
                                 (1 = one stream, node after node) */
    char isa[16];             /* kernel family: "avx2", "ref", ... */
    int threads;              /* threads per run, the caller included */
    size_t n_nodes;           /* nodes that run (after folding, fusion and elimination) */
    size_t n_fused;           /* ONNX nodes absorbed into another node's epilogue */
    size_t n_row_groups;      /* CUDA, decoders: launches of a one-row step (decode) that run
                                 several MatMuls, or a MatMul and the RMSNorm or SwiGLU making
                                 its row (docs/architecture.md "One-row products") */
    size_t n_concat_in_place; /* Concat nodes whose inputs the memory plan placed in their
                                 output, so they copy nothing */
    size_t n_split_in_place;  /* Split nodes whose input the plan placed inside a Concat's
                                 output with their outputs, so they copy nothing */
    size_t n_views;           /* Reshape/Flatten/Squeeze/Unsqueeze/Identity nodes whose output
                                 the memory plan gave their input's bytes (no copy) */
    size_t n_blocked;         /* activations kept in the convs' layout between convs
                                 (NCHWc on the CPU, NHWC on cuda fp16) */
    int block;                /* their channels per block (CB); 0 when none */
    int sm_count;             /* CUDA: the GPU's streaming multiprocessors; 0 on the CPU */
    uint64_t device_total_bytes; /* CUDA: the GPU's memory (a Jetson: its DRAM); 0 on the CPU */
    int zero_copy_frames;        /* CUDA: 1 when frames are read in place (EB_ENGINE_ZERO_COPY_
                                    MAPPED), 0 when staged; 0 on the CPU */
    int clock_khz;               /* CUDA: the GPU clock the runtime reports (cudaDevAttrClockRate,
                                    the maximum of the current power mode); 0 on the CPU */
};

/*
 * What a node's `flops` counts: each op's eb_op_def.flops, else the default of
 * engine.c node_flops. Keep this sentence true when an op gains or changes its count.
 */
#define EB_ENGINE_FLOPS_CONVENTION                                                                 \
    "2 FLOPs per multiply-add (2 x MACs from the weight shape and the output size, bias not "      \
    "counted) for Conv, ConvInteger and the fused int8 convolution, 2 x output elements x K for "  \
    "MatMul and MatMulInteger, 2 x M x N x K for Gemm; 5 per input element for the fused DFL "     \
    "(max, subtract, exp, sum, dot); one per output element for every other op; an op fused into " \
    "another (an activation, an add) is counted in neither"

/** One node of the per-operator profile (eb_engine_profile_get). */
struct eb_engine_prof_node {
    const char *name; /* node name ("" when unnamed); engine-owned */
    const char *op;   /* ONNX op type */
    char fused[48];   /* what the node absorbed, e.g. "silu+add"; "" when nothing */
    double total_ms;  /* summed over profiled runs */
    uint64_t flops;   /* per run, counted as EB_ENGINE_FLOPS_CONVENTION says */
};

struct eb_engine_profile {
    size_t n_nodes;
    const struct eb_engine_prof_node *nodes; /* execution order; engine-owned */
    uint64_t runs;                           /* profiled runs since load or reset */
    double run_total_ms;                     /* eb_engine_run wall time summed over those runs */
};

struct eb_engine;

/**
 * Imports an ONNX model from `bytes` (borrowed during the call only; the engine copies what it
 * keeps), infers shapes, runs the passes, plans memory and allocates once.
 * Errors: EB_ERR_FORMAT (not ONNX), EB_ERR_UNSUPPORTED naming node, op and opset (an op,
 * attribute or dtype the engine does not support — never a silent wrong result), EB_ERR_LIMIT
 * "needed X MiB, limit Y MiB" when the plan exceeds mem_cap_bytes, EB_ERR_NOMEM.
 * `what` names the model in messages. Caller owns `*engine_out` (eb_engine_destroy).
 */
EB_NODISCARD enum eb_status eb_engine_load(const uint8_t *bytes, size_t len, const char *what,
                                           const struct eb_engine_options *opt,
                                           struct eb_engine **engine_out, struct eb_diag *diag);

/** Inputs and outputs with resolved shapes. */
void eb_engine_io_info(const struct eb_engine *e, struct eb_engine_io *io_out);
/** The memory plan. */
void eb_engine_mem_info(const struct eb_engine *e, struct eb_engine_mem *mem_out);

/**
 * Runs the graph. `in` match eb_engine_io_info's inputs (caller-owned data); a dynamic dim
 * (eb_engine_io_desc.dynamic_dims) may take any size within its bound (max_seq), the same
 * symbol the same size in every input (EB_ERR_INVALID_ARG naming input, shape and bound
 * otherwise). On success out[i] describes output i at this run's shape; its data is owned by
 * the engine, valid until the next run or destroy, and read-only. A model with dynamic dims
 * copies its inputs into the arena before any node runs, so the last run's out[] may be passed
 * back as this run's inputs (a KV cache: present.* as past_key_values.*; on CUDA such an input
 * is copied from the output's device bytes, not from the host). Allocates nothing, except the
 * CUDA device's CUDA Graph at input shapes it has not run before (a model with dynamic dims).
 */
EB_NODISCARD enum eb_status eb_engine_run(struct eb_engine *e, const struct eb_tensor *in,
                                          size_t n_in, struct eb_tensor *out, size_t n_out,
                                          struct eb_diag *diag);

/**
 * Keeps the outputs j with keep[j] != 0 (n = the model's output count) on the device after each
 * run: they are not copied to the host, and the bytes at their out[].data are not the run's. The
 * run right after may take such an output back as an input (a KV cache: present.* as
 * past_key_values.*), which the device copies device to device; any other use of that buffer as
 * an input is refused (EB_ERR_INVALID_ARG), so a stale cache is never read. Only a model with
 * dynamic dims keeps outputs (another copies every output back, as without this call); the CPU
 * device's outputs live in host memory anyway: there it changes nothing. On CUDA the graphs are
 * captured again.
 */
EB_NODISCARD enum eb_status eb_engine_keep_outputs(struct eb_engine *e, const unsigned char *keep,
                                                   size_t n, struct eb_diag *diag);

/**
 * Reduces output `output`, a float [1, 4+nc, N] detection head (YOLOv8/YOLO11), on the device
 * after every run (CUDA): the anchors whose best class score is > conf become rows
 * (eb_engine_head_rows), and only they are copied back, not the head (that output's data is
 * NULL in the runs' out[]). conf < 0 switches it off. The CUDA Graphs are captured again.
 * EB_ERR_UNSUPPORTED on the CPU device, EB_ERR_INVALID_ARG for another output shape.
 */
EB_NODISCARD enum eb_status eb_engine_reduce_head(struct eb_engine *e, int output, float conf,
                                                  struct eb_diag *diag);
/**
 * The rows of the last run with eb_engine_reduce_head on, in no fixed order (engine-owned,
 * valid until the next run; eb_yolo_decode_rows sorts them in place); their count.
 */
size_t eb_engine_head_rows(struct eb_engine *e, struct eb_anchor_row **rows_out);

/** Device-side times of the last run (CUDA events); all 0 on the CPU. */
struct eb_engine_timing {
    double h2d_ms;     /* inputs host → device (eb_engine_run_frame: the 8-bit frame) */
    double compute_ms; /* the forward on the device */
    double d2h_ms;     /* outputs device → host */
    double pre_ms;     /* eb_engine_run_frame: the letterbox on the device; else 0 */
};

/**
 * An 8-bit packed RGB frame for eb_engine_run_frame, and where it goes in the model input: the
 * letterbox geometry of eb_letterbox_compute (src/yolo), which the device applies exactly as
 * eb_letterbox_rgb_to_nchw_f32 does (bilinear, 114 padding, scaled to [0,1]).
 */
struct eb_engine_frame {
    const uint8_t *rgb; /* height rows of `stride` bytes, 3 bytes a pixel; caller-owned */
    int width, height;
    size_t stride;
    int new_w, new_h;      /* the resized frame inside the model input */
    int pad_left, pad_top; /* its offset there */
};

/**
 * 1 when the engine's device preprocesses frames itself (CUDA: eb_engine_run_frame); else 0
 * with the reason in `why` (the CPU device; a model whose only input is not a float
 * [1,1|3,H,W] tensor).
 */
int eb_engine_frame_input(const struct eb_engine *e, char *why, size_t why_size);

/**
 * A page-locked host buffer of the engine for a width x height frame (stride = 3 * width; 64
 * bytes beyond the frame for decoders that write past a row), which eb_engine_run_frame
 * uploads without a staging copy (zero_copy_frames: which the letterbox reads in place, no
 * upload): decode into it. Engine-owned,
 * valid until the next call with a larger frame or destroy. EB_ERR_UNSUPPORTED where
 * eb_engine_frame_input is 0.
 */
EB_NODISCARD enum eb_status eb_engine_frame_buffer(struct eb_engine *e, int width, int height,
                                                   uint8_t **buf_out, struct eb_diag *diag);

/**
 * Page-locks the caller's frames memory [base, base + bytes) for the engine (cudaHostRegister;
 * mapped with zero_copy_frames): eb_engine_run_frame then uploads a frame lying inside it (rows
 * packed) from where it is, with no staging copy (zero_copy_frames: the letterbox reads it in
 * place). For frames rendered or decoded once and read many times (a synthetic source's ring).
 * The memory must stay valid, and a frame unchanged while it runs, until eb_engine_destroy
 * (which takes the lock off) or the next call (which replaces the range; base NULL and bytes 0
 * only take the lock off). EB_ERR_UNSUPPORTED
 * where the device cannot (the CPU) or eb_engine_frame_input is 0; EB_ERR_DEVICE when the
 * driver refuses (then frames keep being copied).
 */
EB_NODISCARD enum eb_status eb_engine_pin_frames(struct eb_engine *e, uint8_t *base, size_t bytes,
                                                 struct eb_diag *diag);

/**
 * Runs the graph on one frame, preprocessed on the device: the frame is copied into the
 * engine's page-locked buffer (unless it is already there: eb_engine_frame_buffer, or in pinned
 * memory: eb_engine_pin_frames), uploaded
 * as 8 bits, letterboxed into the input in the model's precision (a kernel launched before the
 * forward), and the forward runs (its captured CUDA Graph replayed). Outputs as
 * eb_engine_run. The first frame of a new size allocates the device frame buffer, which counts
 * against opt.mem_cap_bytes (EB_ERR_LIMIT "needed X MiB, limit Y MiB" past it).
 * EB_ERR_INVALID_ARG for a geometry outside the input; EB_ERR_UNSUPPORTED where
 * eb_engine_frame_input is 0.
 */
EB_NODISCARD enum eb_status eb_engine_run_frame(struct eb_engine *e,
                                                const struct eb_engine_frame *f,
                                                struct eb_tensor *out, size_t n_out,
                                                struct eb_diag *diag);
/** The CUDA event times of the last eb_engine_run (zeros on the CPU device). */
void eb_engine_timing_get(const struct eb_engine *e, struct eb_engine_timing *t_out);

/** Kernel family, threads and node counts. */
void eb_engine_exec_info_get(const struct eb_engine *e, struct eb_engine_exec_info *info_out);

/**
 * The per-operator profile (only when loaded with opt.profile; else n_nodes 0). Valid until the
 * next run, reset or destroy.
 */
void eb_engine_profile_get(const struct eb_engine *e, struct eb_engine_profile *prof_out);
/** Zeroes the profile (e.g. after warm-up). */
void eb_engine_profile_reset(struct eb_engine *e);

/** Value of metadata_props `key` (e.g. "names"), owned by the engine; NULL when absent. */
const char *eb_engine_meta(const struct eb_engine *e, const char *key);

/**
 * 1 when this build has the CUDA device (EB_CUDA) and a usable GPU is present; else 0 with the
 * reason ("this build has no CUDA device ...", "no CUDA GPU: ...") in `why`.
 */
int eb_engine_cuda_available(char *why, size_t why_size);

/** Versions of the CUDA stack this build uses (eb_engine_cuda_versions_get). */
struct eb_engine_cuda_versions {
    int built;        /* 1 when this build has the CUDA device (EB_CUDA) */
    char runtime[16]; /* CUDA runtime edgebench is linked with, e.g. "12.4"; "" when not built */
    char driver[16];  /* CUDA version the installed NVIDIA driver supports, e.g. "12.8"; ""
                          when no driver is loaded or the build has no CUDA device */
    char cudnn[16];   /* cuDNN loaded at run time, e.g. "9.1.0"; "" when not built */
    char cublas[16];  /* cuBLAS loaded at run time, e.g. "12.4.5"; "" when not built */
    char note[192];   /* why a version is "", e.g. "no NVIDIA driver is loaded"; "" when none */
};

/**
 * Fills `out` with the CUDA runtime, driver, cuDNN and cuBLAS versions, queried from the
 * libraries (no GPU, context or device memory needed: safe on a machine without a GPU or
 * driver, where the missing ones are "" and `note` says why). Never fails. Thread-safe.
 */
void eb_engine_cuda_versions_get(struct eb_engine_cuda_versions *out);

/** Frees everything; accepts NULL. */
void eb_engine_destroy(struct eb_engine *e);

/**
 * Whether the engine supports every node of a model (for `--backend auto`). On 0, `why`
 * names the first unsupported node/op/opset. `what` names the model in that text. Never fails
 * on a readable model.
 */
EB_NODISCARD enum eb_status eb_engine_supports(const uint8_t *bytes, size_t len, const char *what,
                                               int *supported_out, char *why, size_t why_size,
                                               struct eb_diag *diag);

#endif
