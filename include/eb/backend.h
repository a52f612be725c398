/*
 * The backend contract: how the harness drives an inference runtime (ONNX Runtime today, the
 * native engine later). One backend instance per slot, never shared across threads.
 *
 *     struct eb_backend *be = NULL;
 *     st = eb_backend_create(eb_backend_find("ort"), &cfg, &be, &diag);
 *     st = eb_backend_load(be, &spec, &info, &diag);
 *     st = eb_backend_infer(be, &in, 1, out, info.n_outputs, &timing, &diag);   (per frame)
 *     st = eb_backend_profile_get(be, &prof, &diag);   (optional: cfg.profile)
 *     eb_backend_destroy(be);
 */
#ifndef EB_BACKEND_H
#define EB_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "eb/detect.h"
#include "eb/diag.h"
#include "eb/log.h"
#include "eb/tensor.h"

/* ABI 6: the memory limit travels as bytes (mem_limit_bytes replaces the double
 * gpu_mem_limit_gb), with mem_limit_label; eb_model_info.budget_bytes_used; ABI 7: the
 * probe's providers list; ABI 8: pin_frames, and struct eb_diag carries the failure's advice
 * bits (diag.h); ABI 9: eb_model_info.qdq, and "int8" in eb_backend_device_info.precision;
 * ABI 10: eb_backend_config.int8 and trt_cache, eb_model_info.engine_cache (ort tensorrt),
 * the advice bit EB_ADVICE_TRT_CACHE; ABI 11: eb_model_info.int8_nodes; ABI 12: `profile`
 * takes a diag (ort reads a file there, which can fail with a reason); ABI 13: up to 80 inputs and
 * outputs (a decoder's KV cache: 2 a layer), and `infer` takes the last infer's outputs as
 * inputs (a decoder's present.* passed on as past_key_values.*), eb_backend_config.max_seq; ABI 14:
 * `profile_runs` (the per-operator profile of chosen runs, read after the last one: ort) and
 * struct eb_run_range; ABI 15: `keep_outputs` (outputs only passed back as the next infer's
 * inputs stay on the device). */
#define EB_BACKEND_ABI      15u
#define EB_BACKEND_MAX_IO   80
#define EB_BACKEND_NAME_MAX 128

enum eb_backend_cap { /* bits in eb_backend_ops.caps: what this build can do */
                      EB_BACKEND_CAP_CUDA = 1u << 0,
                      EB_BACKEND_CAP_FP16 = 1u << 1,
                      EB_BACKEND_CAP_INT8 = 1u << 2,
                      EB_BACKEND_CAP_OP_PROFILE = 1u << 3, /* implements `profile` */
                      EB_BACKEND_CAP_MEM_LIMIT = 1u << 4,
};

enum eb_device {
    EB_DEVICE_CPU = 0,
    EB_DEVICE_CUDA,
    EB_DEVICE_TENSORRT,
};

/** How firmly the memory limit is enforced (design.md §2). */
enum eb_limit_type {
    EB_LIMIT_UNAVAILABLE = 0, /* nothing can be enforced; monitoring only */
    EB_LIMIT_SOFT,            /* requested; the backend may ignore it */
    EB_LIMIT_HARD,            /* the backend's allocator obeys a cap */
};

/** "cpu", "cuda", "tensorrt". */
const char *eb_device_name(enum eb_device d);
/** "unavailable", "soft", "hard". */
const char *eb_limit_type_name(enum eb_limit_type t);

struct eb_backend_config {
    enum eb_device device;
    int threads; /* intra-op threads; 0 = backend default */
    int profile; /* 1 = per-node profile (native: the engine times each node; ort: ONNX
                    Runtime's own profiler) */
    /* native engine only (ignored by ort): */
    uint32_t passes;          /* enum eb_engine_pass bits; 0 = all */
    int qdq;                  /* enum eb_engine_qdq (EB_ENGINE_QDQ_AUTO: int8 on the CPU) */
    int precision;            /* enum eb_engine_precision (native: cuda device; ort: fp16 on
                                 tensorrt only, as trt_fp16_enable) */
    const char *kernels;      /* "auto", "ref", "avx2", ...; NULL = auto; borrowed */
    uint64_t mem_limit_bytes; /* this instance's share of the memory limit, in bytes (already
                                 validated by the harness; 0 = none) */
    /* How messages name the limit: NULL = "limit Y MiB"; else "Y MiB <label>", e.g. "left of
     * the limit after slot rgb (7629.4 MiB)". Copied at load. */
    const char *mem_limit_label;
    const char *ort_lib; /* explicit ONNX Runtime library path or NULL; borrowed */
    /* (ABI 10) --precision int8: the harness has checked that the model is an int8 one (on
     * tensorrt, a QDQ one). ort on tensorrt: TensorRT's int8 mode from the model's Q/DQ scales
     * (trt_int8_enable, with trt_fp16_enable for the layers left in float); ignored elsewhere
     * (the native engine reads `qdq`). */
    int int8;
    /* (ABI 10) ort on tensorrt: the --trt_cache value; NULL = the default folder
     * ($XDG_CACHE_HOME/edgebench/trt, else $HOME/.cache/edgebench/trt), "off" = no engine
     * cache, else the folder (made with its parents at open). Borrowed. */
    const char *trt_cache;
    const struct eb_log *log; /* may be NULL; borrowed, must outlive the instance */
    /* (ABI 13) native, a decoder (inputs with sequence dims): the longest sequence (prompt and
     * cache) its memory is planned for (eb_engine_options.max_seq); 0 = the model's context.
     * ort: ignored (ONNX Runtime allocates per run). */
    int64_t max_seq;
};

struct eb_backend_probe {
    int available;     /* 1 when the runtime can be used on this machine */
    char version[64];  /* runtime version, e.g. "1.30.0" */
    char library[512]; /* where the runtime was loaded from, if any */
    /* (ABI 6) The execution providers the loaded runtime offers, comma-separated in its own
     * order (ort: OrtApi::GetAvailableProviders, e.g. "CUDAExecutionProvider,
     * CPUExecutionProvider"); "" where the backend has no such notion (native). */
    char providers[256];
};

struct eb_model_spec {
    const char *path;  /* borrowed; names the model in messages and reports */
    const void *bytes; /* when non-NULL, the model is read from these bytes instead of path
                          (the embedded default); borrowed for the duration of load */
    size_t n_bytes;
    int imgsz; /* requested square input size for dynamic models; 0 = from the model */
};

struct eb_io_desc {
    char name[EB_BACKEND_NAME_MAX];
    enum eb_dtype dtype;
    int rank;
    int64_t shape[EB_MAX_RANK]; /* -1 where dynamic (after resolving imgsz when possible) */
};

/**
 * The device a loaded model runs on, for the dense-peak lookup behind MFU (ABI 4). A backend
 * that does not fill it in leaves it zeroed (`reported` 0).
 */
struct eb_backend_device_info {
    int reported;          /* 1 when the backend filled this in */
    enum eb_device device; /* what runs the model: EB_DEVICE_CPU or EB_DEVICE_CUDA */
    char name[64];         /* CUDA device name, e.g. "NVIDIA H100 80GB HBM3", "Orin"; "" on cpu */
    int sms;               /* streaming multiprocessors; 0 unknown */
    uint64_t total_bytes;  /* device memory (a Jetson: its DRAM, shared with the CPU); 0 unknown */
    int clock_khz;         /* GPU clock the runtime reports (cudaDevAttrClockRate); 0 unknown */
    char precision[8];     /* arithmetic of the model's heavy ops: "fp32", "fp16", "int8"; ""
                              unknown. ort tensorrt sets it alone (reported 0) with
                              --precision fp16/int8: the engine's precision, not the model's */
};

struct eb_model_info {
    size_t n_inputs;
    struct eb_io_desc inputs[EB_BACKEND_MAX_IO];
    size_t n_outputs;
    struct eb_io_desc outputs[EB_BACKEND_MAX_IO];
    /* Class names from the model metadata "names"; NULL/0 when absent. Owned by the backend
     * instance, valid until it is destroyed. Index = class id. */
    const char *const *class_names;
    size_t n_class_names;
    /* What the backend did about the memory limit. */
    enum eb_limit_type limit_type;
    char limit_methods[256];    /* e.g. "ort cuda gpu_mem_limit=8.00GB"; empty when none */
    uint64_t budget_bytes_used; /* (ABI 6) bytes the instance holds against mem_limit_bytes as
                                   its cap enforces them (native: the engine's planned total);
                                   0 where nothing is enforced at load (limit type soft) */
    char provider
        [64]; /* execution provider / device that actually runs, e.g. "CPUExecutionProvider" */
    struct eb_backend_device_info device; /* (ABI 4) zeroed where the backend does not say */
    char qdq[8];          /* (ABI 9) a model with QuantizeLinear/DequantizeLinear nodes: how it ran,
                    "int8" (integer conv kernels), "float" (fake quantisation in float) or
                    "strip" (activation Q/DQ removed); "" for another model, or where the
                    backend does not say (ort: it fuses Q/DQ into its own int8 kernels) */
    char int8_nodes[320]; /* (ABI 11) native, a model with integer convs or Q/DQ nodes: which
                             heavy nodes run int8 and which stay float (eb_engine_exec_info) */
    char engine_cache[1024]; /* (ABI 10) the folder where the runtime keeps the engines it
                                builds and reuses (ort tensorrt: trt_engine_cache_path); ""
                                when none */
};

/** Optional per-frame split of the inference time; zero where not measured. */
struct eb_infer_timing {
    uint64_t h2d_ns;
    uint64_t compute_ns;
    uint64_t d2h_ns;
    uint64_t pre_ns; /* infer_frame: the letterbox on the device */
};

/**
 * An 8-bit packed RGB frame for infer_frame (ABI 4), with the letterbox geometry the backend
 * applies on its device (eb_letterbox_compute's new_w/new_h/pad_left/pad_top; bilinear, 114
 * padding, scaled to [0,1], as eb_letterbox_rgb_to_nchw_f32).
 */
struct eb_backend_frame {
    const uint8_t *rgb; /* height rows of `stride` bytes; caller-owned */
    int width, height;
    size_t stride;
    int new_w, new_h, pad_left, pad_top;
};

struct eb_mem_usage {
    uint64_t host_bytes;            /* bytes held in host memory by the backend */
    uint64_t device_bytes;          /* bytes held in device memory now */
    uint64_t device_peak_bytes;     /* high-water mark of device memory */
    uint64_t device_measured_bytes; /* the cross-check: the drop in the driver's free device
                                       memory (cudaMemGetInfo) over the backend's allocations,
                                       its libraries' own included; 0 = not measured */
};

/** One node of a per-operator profile (eb_backend_profile_get). */
struct eb_backend_prof_node {
    const char *name;  /* node name, "" when unnamed; owned by the backend */
    const char *op;    /* op type, e.g. "Conv"; owned by the backend */
    const char *fused; /* what the node absorbed, e.g. "silu+add"; "" when nothing; owned */
    double total_ms;   /* time in this node summed over `runs` */
    uint64_t flops;    /* per run: 2*MACs for Conv/MatMul/Gemm, else output elements; 0 unknown */
};

/** The per-operator profile of the runs since load or the last profile_reset. */
struct eb_backend_profile {
    size_t n_nodes;
    const struct eb_backend_prof_node *nodes; /* execution order; owned by the backend, valid
                                                 until the next infer, profile_reset or close */
    uint64_t runs;                            /* profiled runs */
    double run_total_ms; /* the runtime's own run time summed over those runs (the per-node
                            times add up to it, up to the cost of the timer calls) */
};

/** Runs [first, first + count), counted from 0 = the first infer after the last profile_reset
 * (profile_runs). */
struct eb_run_range {
    uint64_t first, count;
};

struct eb_backend_ops {
    uint32_t abi;     /* = EB_BACKEND_ABI; eb_backend_create rejects others */
    const char *name; /* "ort", "native": CLI value and report key */
    const char *description;
    uint32_t caps;    /* enum eb_backend_cap bits */
    size_t priv_size; /* zeroed private state allocated by eb_backend_create */

    /** Required. Says whether the runtime can be used here, without loading a model. */
    enum eb_status (*probe)(const struct eb_backend_config *cfg, struct eb_backend_probe *probe_out,
                            struct eb_diag *diag);
    /** Required. Opens the runtime into `priv` (zeroed). */
    enum eb_status (*open)(void *priv, const struct eb_backend_config *cfg, struct eb_diag *diag);
    /** Required. Releases everything; must accept a partially opened or zeroed priv. */
    void (*close)(void *priv);
    /** Required. Loads one model; at most once per instance. */
    enum eb_status (*load)(void *priv, const struct eb_model_spec *spec,
                           struct eb_model_info *info_out, struct eb_diag *diag);
    /**
     * Required. Runs one inference. `in` are caller-owned tensors matching info.inputs.
     * On success `out[i]` (i < n_out) describes output i with its resolved shape; its data is
     * owned by the backend and valid until the next infer returns or close: an output may be
     * passed as an input of the next infer (a decoder's KV cache), which must read it as it
     * was. Must not allocate after the first call (warm-up) where the runtime allows it and
     * the input shapes stay the same.
     */
    enum eb_status (*infer)(void *priv, const struct eb_tensor *in, size_t n_in,
                            struct eb_tensor *out, size_t n_out, struct eb_infer_timing *timing_out,
                            struct eb_diag *diag);
    /** Optional; NULL means not measured (the wrapper reports zeros). */
    enum eb_status (*mem_usage)(void *priv, struct eb_mem_usage *usage_out);
    /**
     * Optional (ABI 2); NULL means "supports every model it can load". Says, without loading,
     * whether this backend runs every node of the model in `spec` (for --backend auto); on 0,
     * `why` names the first node/op it cannot run. Fails only when the model cannot be read.
     */
    enum eb_status (*supports)(const struct eb_backend_config *cfg,
                               const struct eb_model_spec *spec, int *supported_out, char *why,
                               size_t why_size, struct eb_diag *diag);
    /**
     * Optional (ABI 3; caps has EB_BACKEND_CAP_OP_PROFILE; diag since ABI 12); NULL means no
     * per-operator profile. Fills `profile_out` with the per-node times recorded since load or
     * the last profile_reset; EB_ERR_UNSUPPORTED when the instance was not opened with
     * cfg.profile or has no model loaded. native: does not allocate. ort: ONNX Runtime profiles
     * a session once, so the first call ends its profiler and reads the file it wrote (this
     * allocates; a file that cannot be read is EB_ERR_IO/EB_ERR_FORMAT with the file named in
     * diag); later calls return the same table, and later runs are not profiled.
     */
    enum eb_status (*profile)(void *priv, struct eb_backend_profile *profile_out,
                              struct eb_diag *diag);
    /**
     * Optional (ABI 3), with `profile`: forgets the recorded times (e.g. after warm-up). ort:
     * remembers how many runs came before, and the file's first that many runs are left out.
     */
    void (*profile_reset)(void *priv);
    /**
     * Optional (ABI 14), with `profile`; NULL where `profile` reads the runs since the last
     * profile_reset as they go (native: read and reset after each phase). A backend that has it
     * profiles its session as a whole (ort: ONNX Runtime's profiler, one file) and tells the runs
     * apart afterwards: fills `profile_out` with the per-node times of the runs in `ranges`
     * (n_ranges of them; a run in several ranges counts once), in the order the nodes first ran
     * there. `runs` is how many of those runs the profile holds (fewer than asked where the
     * runtime stopped recording: ONNX Runtime keeps about a million events) and `run_total_ms`
     * the runtime's own time of those runs. As `profile`, the first call ends the profiler: call
     * it after the last run; `profile` and profile_runs then read the same recording. The table
     * is valid until the next profile or profile_runs call or close (the names until close).
     * EB_ERR_UNSUPPORTED as `profile`, and when the runs cannot be told apart (ort: a Run was
     * retried since the reset, so infers and recorded runs differ); the errors of `profile`.
     */
    enum eb_status (*profile_runs)(void *priv, const struct eb_run_range *ranges, size_t n_ranges,
                                   struct eb_backend_profile *profile_out, struct eb_diag *diag);
    /**
     * Optional (ABI 4), with infer_frame: 1 when the loaded model can take frames that the
     * backend preprocesses on its device; else 0 and why.
     */
    int (*frame_input)(void *priv, char *why, size_t why_size);
    /**
     * Optional (ABI 4): as `infer`, from an 8-bit frame letterboxed on the device (the
     * upload, the letterbox and the forward; timing_out->pre_ns is the letterbox).
     */
    enum eb_status (*infer_frame)(void *priv, const struct eb_backend_frame *frame,
                                  struct eb_tensor *out, size_t n_out,
                                  struct eb_infer_timing *timing_out, struct eb_diag *diag);
    /**
     * Optional (ABI 4), with head_rows: from now on, reduce output `output` (a float
     * [1, 4+nc, N] detection head) on the device after every inference: only the anchors whose
     * best class score is > conf come back (head_rows), that output's data is NULL. conf < 0
     * switches it off. EB_ERR_UNSUPPORTED / EB_ERR_INVALID_ARG with why when it cannot.
     */
    enum eb_status (*reduce_head)(void *priv, int output, float conf, struct eb_diag *diag);
    /** Optional (ABI 4): the last inference's rows (backend-owned, any order); their count. */
    size_t (*head_rows)(void *priv, struct eb_anchor_row **rows_out);
    /**
     * Optional (ABI 5), with infer_frame: a backend-owned buffer (page-locked, on a GPU) for a
     * width x height frame (stride 3 * width) of at least 3 * width * height + 64 bytes, which
     * infer_frame uploads without a staging copy: decode into it. Valid until the next call
     * with a larger frame or until the backend is closed.
     */
    enum eb_status (*frame_buffer)(void *priv, int width, int height, uint8_t **buf_out,
                                   struct eb_diag *diag);
    /**
     * Optional (ABI 8), with infer_frame: page-lock the caller's frames memory [base, base +
     * bytes) (frames rendered once and read many times: a synthetic source's ring), so that
     * infer_frame uploads a frame lying inside it from where it is, with no staging copy. The
     * memory stays valid until the backend is closed (which takes the lock off) or the next
     * call (base NULL and bytes 0: only take the lock off). EB_ERR_UNSUPPORTED / EB_ERR_DEVICE
     * when it cannot: frames are then copied as before.
     */
    enum eb_status (*pin_frames)(void *priv, uint8_t *base, size_t bytes, struct eb_diag *diag);
    /**
     * Optional (ABI 15): outputs j with keep[j] != 0 (n = the model's outputs) are read by the
     * caller only as the next infer's inputs (a decoder's present.* as past_key_values.*): a
     * device may keep them where they are instead of copying them back, and the bytes at their
     * data are then not the infer's. Passing such a buffer to any later infer than the next is
     * refused (EB_ERR_INVALID_ARG).
     */
    enum eb_status (*keep_outputs)(void *priv, const unsigned char *keep, size_t n,
                                   struct eb_diag *diag);
};

/** A backend instance: ops + private state. Opaque. */
struct eb_backend;

/** Backends compiled into this build, NULL-terminated. Static storage. */
const struct eb_backend_ops *const *eb_backend_list(void);
/** The backend called `name`, or NULL. */
const struct eb_backend_ops *eb_backend_find(const char *name);

/**
 * Creates and opens an instance of `ops` with `cfg` (copied; pointers inside stay borrowed).
 * Returns EB_ERR_UNSUPPORTED on an ABI mismatch. Caller owns `*be_out` and frees it with
 * eb_backend_destroy.
 */
EB_NODISCARD enum eb_status eb_backend_create(const struct eb_backend_ops *ops,
                                              const struct eb_backend_config *cfg,
                                              struct eb_backend **be_out, struct eb_diag *diag);
/** Closes and frees; accepts NULL. */
void eb_backend_destroy(struct eb_backend *be);
/** The ops of an instance. */
const struct eb_backend_ops *eb_backend_ops_of(const struct eb_backend *be);
EB_NODISCARD enum eb_status eb_backend_load(struct eb_backend *be, const struct eb_model_spec *spec,
                                            struct eb_model_info *info_out, struct eb_diag *diag);
EB_NODISCARD enum eb_status eb_backend_infer(struct eb_backend *be, const struct eb_tensor *in,
                                             size_t n_in, struct eb_tensor *out, size_t n_out,
                                             struct eb_infer_timing *timing_out,
                                             struct eb_diag *diag);
/** 1 when the instance's model can take frames preprocessed on its device; else 0 and why. */
int eb_backend_frame_input(struct eb_backend *be, char *why, size_t why_size);
/** infer_frame (see eb_backend_ops); EB_ERR_UNSUPPORTED where eb_backend_frame_input is 0. */
EB_NODISCARD enum eb_status eb_backend_infer_frame(struct eb_backend *be,
                                                   const struct eb_backend_frame *frame,
                                                   struct eb_tensor *out, size_t n_out,
                                                   struct eb_infer_timing *timing_out,
                                                   struct eb_diag *diag);
/** frame_buffer (see eb_backend_ops); EB_ERR_UNSUPPORTED where the backend has none or
 * eb_backend_frame_input is 0. */
EB_NODISCARD enum eb_status eb_backend_frame_buffer(struct eb_backend *be, int width, int height,
                                                    uint8_t **buf_out, struct eb_diag *diag);
/** pin_frames (see eb_backend_ops); EB_ERR_UNSUPPORTED where the backend has none or
 * eb_backend_frame_input is 0. */
EB_NODISCARD enum eb_status eb_backend_pin_frames(struct eb_backend *be, uint8_t *base,
                                                  size_t bytes, struct eb_diag *diag);
/** reduce_head (see eb_backend_ops); EB_ERR_UNSUPPORTED where the backend has none. */
EB_NODISCARD enum eb_status eb_backend_reduce_head(struct eb_backend *be, int output, float conf,
                                                   struct eb_diag *diag);
/** head_rows (see eb_backend_ops); 0 and NULL where the backend has none. */
size_t eb_backend_head_rows(struct eb_backend *be, struct eb_anchor_row **rows_out);
/** Memory used by the backend; zeros when the backend does not say. Never fails. */
void eb_backend_mem_usage(struct eb_backend *be, struct eb_mem_usage *usage_out);
/**
 * The per-operator profile (see eb_backend_ops.profile). EB_ERR_UNSUPPORTED, with a message
 * naming the backend, when it has none or profiling is off; the backend's own status and
 * message when it could not produce one; `*profile_out` is zeroed then.
 */
EB_NODISCARD enum eb_status eb_backend_profile_get(struct eb_backend *be,
                                                   struct eb_backend_profile *profile_out,
                                                   struct eb_diag *diag);
/** Forgets the recorded profile; does nothing where the backend has no profile. */
void eb_backend_profile_reset(struct eb_backend *be);
/**
 * Tells the backend which outputs the caller reads only as the next infer's inputs
 * (eb_backend_ops.keep_outputs); does nothing where the backend has no such op.
 */
EB_NODISCARD enum eb_status eb_backend_keep_outputs(struct eb_backend *be,
                                                    const unsigned char *keep, size_t n,
                                                    struct eb_diag *diag);
/**
 * The per-operator profile of the runs in `ranges` (see eb_backend_ops.profile_runs), for a
 * backend that profiles a session as a whole (eb_backend_ops_of(be)->profile_runs != NULL).
 * EB_ERR_UNSUPPORTED naming the backend where it has none; else as eb_backend_profile_get.
 */
EB_NODISCARD enum eb_status
eb_backend_profile_runs(struct eb_backend *be, const struct eb_run_range *ranges, size_t n_ranges,
                        struct eb_backend_profile *profile_out, struct eb_diag *diag);

#endif
