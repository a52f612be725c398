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
#include "eb/diag.h"
#include "eb/log.h"
#include "eb/tensor.h"

#define EB_ENGINE_MAX_IO   8
#define EB_ENGINE_NAME_MAX 128

/** Graph passes, each of which can be switched off so its effect is measurable. */
enum eb_engine_pass {
    EB_ENGINE_PASS_CONST_FOLD = 1u << 0, /* Shape/Gather/Unsqueeze/Concat chains, Q/DQ of weights */
    EB_ENGINE_PASS_FUSE = 1u << 1,       /* Conv+SiLU, Conv+Add, bias/activation epilogues */
    EB_ENGINE_PASS_DCE = 1u << 2,        /* dead-node elimination */
    EB_ENGINE_PASS_ALL = 0xFFFFFFFFu,
};

struct eb_engine_options {
    /* `threads` and `profile` are not used yet: every run is on the caller's thread. */
    int threads;              /* worker threads; 0 or 1 = run on the caller's thread */
    uint64_t mem_cap_bytes;   /* hard cap on the planned arena (+ weights); 0 = none */
    uint32_t passes;          /* enum eb_engine_pass bits; default EB_ENGINE_PASS_ALL */
    int imgsz;                /* square size for dynamic H/W of a 4-D input; 0 = 640 */
    int profile;              /* 1 = record per-node times */
    const struct eb_log *log; /* may be NULL; borrowed */
};

/** Fills the defaults (all passes, no cap, caller's thread). */
void eb_engine_options_default(struct eb_engine_options *opt);

struct eb_engine_io_desc {
    char name[EB_ENGINE_NAME_MAX];
    enum eb_dtype dtype;
    int rank;
    int64_t shape[EB_MAX_RANK]; /* fully resolved at load time */
};

struct eb_engine_io {
    size_t n_inputs, n_outputs;
    struct eb_engine_io_desc inputs[EB_ENGINE_MAX_IO], outputs[EB_ENGINE_MAX_IO];
};

/** What the memory plan holds (known in full at load time). */
struct eb_engine_mem {
    uint64_t arena_bytes;  /* planned peak of intermediate tensors */
    uint64_t weight_bytes; /* constants after folding (owned by the engine) */
    uint64_t naive_bytes;  /* sum of every intermediate tensor (what no planning would need) */
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
 * Runs the graph. `in` match eb_engine_io_info's inputs (caller-owned data). On success out[i]
 * describes output i; its data is owned by the engine, valid until the next run or destroy.
 * Does not allocate.
 */
EB_NODISCARD enum eb_status eb_engine_run(struct eb_engine *e, const struct eb_tensor *in,
                                          size_t n_in, struct eb_tensor *out, size_t n_out,
                                          struct eb_diag *diag);

/** Value of metadata_props `key` (e.g. "names"), owned by the engine; NULL when absent. */
const char *eb_engine_meta(const struct eb_engine *e, const char *key);

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
