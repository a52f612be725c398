/*
 * The engine's own state, shared by engine.c (load, the CPU device) and the other devices
 * (src/engine/cuda). A device is one `struct eb_engine_devops`: after the passes, `open` decides
 * how every live node runs and may resize values (the CUDA device's fp16); after the memory
 * plan, `bind` allocates and checks the cap; `run` runs the bound graph; `close` frees what
 * open/bind made.
 */
#ifndef EB_ENGINE_ENGINE_INTERNAL_H
#define EB_ENGINE_ENGINE_INTERNAL_H

#include "eb/engine.h"
#include "eb/nvtx.h"
#include "engine/cpu/cpu.h"
#include "engine/ir/graph.h"
#include "engine/plan/memplan.h"

struct eb_engine_devops;

struct eb_engine {
    struct eb_graph *g;
    struct eb_memplan plan;
    int plan_concurrent; /* set by dev->open: a concurrent memory plan (memplan.h) */
    const char *what;    /* names the model in messages (graph arena) */
    char cap_label[96];  /* opt.mem_cap_label, copied ("" = none) */
    const struct eb_engine_devops *dev;
    void *dev_state; /* the device's own state (owned; freed by dev->close) */
    void *arena;     /* plan.arena_bytes + scratch, from g->alloc (host memory) */
    struct eb_engine_io io;
    int *order; /* live node indices in execution order (graph arena) */
    size_t n_order;
    struct eb_cpu_exec cpu;
    struct eb_threadpool *pool;
    uint64_t scratch_bytes, packed_bytes;
    uint64_t workspace_bytes; /* device: library workspaces and I/O staging */
    uint64_t host_bytes;      /* device: host memory of nodes run on the CPU */
    uint64_t measured_bytes;  /* device: cudaMemGetInfo's drop over the load */
    uint64_t graph_bytes;     /* device: a decoder's captured CUDA Graphs (eb_engine_mem) */
    size_t n_blocked;         /* values the layout pass made NCHWc */
    int block;                /* their CB */
    int profile;
    void (*observe)(void *ctx, const char *name, const struct eb_tensor *t); /* opt.observe */
    void *observe_ctx;
    struct eb_engine_prof_node *prof; /* n_order entries (graph arena) when profiling */
    const char **nvtx_names; /* n_order per-op NVTX range names (graph arena) when profiling */
    struct eb_nvtx nvtx;     /* their domain, EB_NVTX_DOMAIN_OP */
    uint64_t prof_runs;
    double prof_run_ms;
    struct eb_engine_timing timing; /* the last run's device times */
    uint64_t run_d2d_bytes; /* device: the last run's input bytes copied device to device (the
                               run before's outputs, still there: a KV cache) */
    int run_replayed;       /* device: the last run replayed a captured CUDA Graph */
    int run_shapes_kept;    /* device: the last run took its shapes from that graph's capture
                               (no shape pass on the host) */
    struct eb_engine_exec_info info_dev; /* device, device_name, precision, fallback, graph */
    int head_on;                         /* eb_engine_reduce_head: output head_out is reduced */
    int head_out;
    /* eb_engine_keep_outputs: output j stays on the device after each run (not copied back) */
    unsigned char keep_out[EB_IR_MAX_GRAPH_IO];
    struct eb_anchor_row *head_rows; /* the last run's rows (device-owned host memory) */
    size_t head_count;
};

struct eb_engine_devops {
    const char *name;
    /** After the passes, before the memory plan. */
    enum eb_status (*open)(struct eb_engine *e, const struct eb_engine_options *opt,
                           struct eb_diag *diag);
    /** After the memory plan: allocate, check opt->mem_cap_bytes, bind values. */
    enum eb_status (*bind)(struct eb_engine *e, const struct eb_engine_options *opt,
                           struct eb_diag *diag);
    /** One forward: graph inputs' data point at the caller's host tensors. */
    enum eb_status (*run)(struct eb_engine *e, struct eb_diag *diag);
    /**
     * Optional, dynamic graphs (eb_engine_run, input i's shape set): 1 when its `bytes` at `data`
     * are exactly what the device returned as an output of its last run and still holds there;
     * the run then copies them device to device, and the input's host slot is not written. -1
     * when `data` is the host buffer of a kept output (eb_engine_keep_outputs) that is not that:
     * its bytes are not an output's, and the run is refused.
     */
    int (*input_resident)(struct eb_engine *e, size_t i, const void *data, size_t bytes);
    /** Optional: eb_engine_frame_buffer (input checks done). */
    enum eb_status (*frame_buffer)(struct eb_engine *e, int width, int height, uint8_t **buf_out,
                                   struct eb_diag *diag);
    /** Optional: eb_engine_pin_frames (arguments checked). */
    enum eb_status (*pin_frames)(struct eb_engine *e, uint8_t *base, size_t bytes,
                                 struct eb_diag *diag);
    /** Optional: why this loaded model cannot take frames on the device (buf filled, returns
     *  0), else 1; run_frame is offered only when it returns 1 (or is absent). */
    int (*frame_ok)(const struct eb_engine *e, char *buf, size_t size);
    /** Optional: eb_engine_run_frame on graph input 0 (geometry checked); fills e->timing. */
    enum eb_status (*run_frame)(struct eb_engine *e, const struct eb_engine_frame *f,
                                struct eb_diag *diag);
    /** Optional: eb_engine_reduce_head (shape checked; conf < 0 = off); sets e->head_*. */
    enum eb_status (*reduce_head)(struct eb_engine *e, int output, float conf,
                                  struct eb_diag *diag);
    /** Optional: e->keep_out changed (eb_engine_keep_outputs): the CUDA Graphs again. */
    enum eb_status (*keep_outputs)(struct eb_engine *e, struct eb_diag *diag);
    /** Frees what open and bind made; accepts a half-opened engine. */
    void (*close)(struct eb_engine *e);
};

/** The CPU device's steps, which other devices reuse for the nodes they run on the CPU. */
enum eb_status eb_engine__prepare_nodes(struct eb_engine *e, const unsigned char *on_cpu,
                                        struct eb_diag *diag);
/**
 * A dynamic graph's node order[k] that reads a dyn value: its output shapes inferred again at
 * this run's input shapes (`run` 1: every input's data is on the host; 0: the load's probe,
 * where only shape data is). EB_ERR_LIMIT when an output needs more bytes than its slot.
 */
enum eb_status eb_engine__reinfer(struct eb_engine *e, size_t k, int run, struct eb_diag *diag);
/** Runs node order[k] on the CPU (profile-free). */
void eb_engine__cpu_exec(struct eb_engine *e, size_t k);
/**
 * Profiled runs only (no-ops otherwise): opens node order[k]'s NVTX range "<op>:<node>" in the
 * EB_NVTX_DOMAIN_OP domain on the calling thread; eb_engine__nvtx_node_pop closes it. A device
 * calls the pair around each node of its profiled run (CUDA: around the node's launches, so
 * that Nsight Compute attributes its kernels to the node).
 */
void eb_engine__nvtx_node_push(const struct eb_engine *e, size_t k);
void eb_engine__nvtx_node_pop(const struct eb_engine *e);
/** MiB for messages. */
double eb_engine__mib(uint64_t bytes);
/**
 * How a limit message names the cap `cap` bytes into `buf`: "limit Y MiB", or "Y MiB <label>"
 * with the caller's opt.mem_cap_label. Returns buf.
 */
const char *eb_engine__cap_text(const struct eb_engine *e, uint64_t cap, char *buf, size_t size);

#ifdef EB_HAVE_CUDA
extern const struct eb_engine_devops eb_engine_devops_cuda;
/** The CUDA device's availability check (cuda_device.c). */
int eb_engine__cuda_available(char *why, size_t why_size);
/** The CUDA stack's versions (cuda_device.c). */
void eb_engine__cuda_versions(struct eb_engine_cuda_versions *out);
#endif

#endif
