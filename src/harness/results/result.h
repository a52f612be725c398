/*
 * The one in-memory result of a run. report.json and report.md are both rendered from it, so
 * they never disagree. Filled by the pipeline/scheduler; read by report_*.c.
 */
#ifndef EB_RESULT_H
#define EB_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "eb/backend.h"
#include "harness/metrics/sampler.h"
#include "harness/metrics/stats.h"
#include "harness/results/validity.h"

#define EB_REPORT_SCHEMA_VERSION 2
#define EB_NUM_SLOTS             2
#define EB_RUN_MAX_WARNINGS      8

enum eb_slot_status {
    EB_SLOT_SKIPPED = 0, /* no weights given for this slot (or the mode does not use it) */
    EB_SLOT_OK,          /* ran */
    EB_SLOT_FAILED,      /* could not load or run; message says why */
};
/** "skipped", "ok", "failed". */
const char *eb_slot_status_name(enum eb_slot_status s);

enum eb_stage {
    EB_STAGE_READ = 0, /* source read + decode (+ AGC for 16-bit) */
    EB_STAGE_PRE,      /* letterbox + normalise into the input tensor */
    EB_STAGE_INFER,    /* backend infer */
    EB_STAGE_POST,     /* YOLO decode + NMS + unmap */
    EB_STAGE_E2E,      /* read start to postprocess end */
    EB_STAGE_COUNT
};
/** "read", "preprocess", "inference", "postprocess", "end_to_end". */
const char *eb_stage_name(enum eb_stage s);

/** One measured frame (preallocated before timing). */
struct eb_frame_record {
    int64_t frame_index;
    uint64_t t_start_ns;   /* CLOCK_MONOTONIC at read start */
    uint64_t t_arrival_ns; /* paced: when the frame arrived (its latency counts from here);
                              unpaced: t_start_ns */
    uint64_t stage_ns[EB_STAGE_COUNT];
    uint32_t n_dets;
    uint64_t mem_bytes; /* monitored memory figure after this frame */
};
/** Frame r's latency from its arrival to the end of its postprocess, in ms: what a paced slot's
 * deadline is checked against. */
double eb_frame_arrival_ms(const struct eb_frame_record *r);
/** 1 when a frame of that latency from arrival missed a paced slot's period (fps > 0: 1000 / fps
 * ms); an unpaced slot (fps 0) misses nothing. The report's deadline_misses and the live
 * endpoint's counter both count by it. */
int eb_frame_missed(double arrival_ms, double fps);

/*
 * Throttling onset of a slot: a change-point of its end-to-end latency over the pass
 * (eb_stat_change_point on the bucket means of e2e_series) beside the change-points of the
 * sampler's GPU clock and hottest temperature over the same time; they coincide when within
 * EB_THROTTLE_WINDOW_S (or two latency buckets, whichever is wider) of each other. Times are
 * seconds from the pass's start; NaN where not found.
 */
#define EB_THROTTLE_WINDOW_S 10.0
struct eb_throttle_onset {
    int checked; /* 1 when the latency series was long enough to look (>= 6 buckets) */
    int found;   /* a latency change-point */
    double t_s, latency_before_ms, latency_after_ms;
    int coincides; /* a clock or temperature change-point within the window */
    double clock_t_s, clock_before_mhz, clock_after_mhz;
    double temp_t_s, temp_before_c, temp_after_c;
};

struct eb_class_count {
    int cls;
    char name[64]; /* from the model metadata, or "class<N>" */
    uint64_t count;
};

/* --profile: how many op types and nodes the result keeps (fixed, so a result owns no heap for
 * them; op types past the cap are summed into a last entry "(other)"). */
#define EB_PROFILE_MAX_OPS   32
#define EB_PROFILE_TOP_NODES 15

/** One op type of the per-operator profile (all its nodes together). */
struct eb_op_profile {
    char op[32];             /* ONNX op type, e.g. "Conv" */
    uint32_t nodes;          /* nodes of this type */
    double ms_per_frame;     /* summed over its nodes, averaged over the profiled frames */
    double pct;              /* of sum_ms_per_frame */
    double gflops_per_frame; /* 1e9 FLOPs per frame */
    double gflops_per_s;     /* achieved: gflops_per_frame / (ms_per_frame / 1000); NAN if 0 ms */
    double mfu_pct;          /* gflops_per_s / the profile's peak x 100; NAN without either */
};

/** One node of the per-operator profile. */
struct eb_node_profile {
    char name[128];
    char op[32];
    char fused[48]; /* what the node absorbed ("silu+add"), "" when nothing */
    double ms_per_frame, pct, gflops_per_frame, gflops_per_s;
    double mfu_pct; /* as in eb_op_profile */
};

/** The per-operator profile of a slot's measured frames (only frames after warm-up). */
struct eb_profile_result {
    int available;            /* 1 when collected; the rest is meaningful only then */
    uint64_t frames;          /* profiled runs (= measured frames) */
    size_t n_nodes;           /* nodes that ran */
    double sum_ms_per_frame;  /* sum of every node's time per frame (the 100% of pct) */
    double run_ms_per_frame;  /* the runtime's own run time per frame (timer calls included) */
    double inference_mean_ms; /* latency_ms.inference.mean of the same frames (adds the
                                 backend call around the run) */
    double sum_to_inference;  /* sum_ms_per_frame / inference_mean_ms (1.0 = all accounted) */
    double gflops_per_frame;  /* whole model */
    double gflops_per_s;      /* whole model, over sum_ms_per_frame */
    size_t n_ops;             /* entries of ops, by time descending */
    struct eb_op_profile ops[EB_PROFILE_MAX_OPS];
    size_t n_top; /* entries of top, by time descending */
    struct eb_node_profile top[EB_PROFILE_TOP_NODES];
    /* MFU (model FLOPs utilisation): achieved FLOP/s over the device's dense peak for the
     * precision the model ran in (harness/metrics/peaks.h). Without a peak (the CPU, a GPU not in the
     * table) every mfu_pct and the peak figures are NAN and peak_note says why. */
    double peak_tflops;       /* the peak, 10^12 FLOP/s (int8: TOPS); NAN without one */
    double peak_clock_mhz;    /* the GPU clock the peak assumes; NAN without a peak */
    double peak_mem_gbs;      /* the entry's DRAM bandwidth, 10^9 B/s; NAN when not known */
    char peak_device[48];     /* the table entry, e.g. "NVIDIA H100 SXM5"; "" without a peak */
    char peak_precision[8];   /* "fp32", "fp16", "int8": the model's precision; "" unknown */
    char peak_note[256];      /* the entry's source, or why there is no peak */
    double mfu_pct;           /* whole model over sum_ms_per_frame: gflops_per_s / peak x 100 */
    double mfu_inference_pct; /* whole model over inference_mean_ms (the measured inference,
                                 backend call included) */
};

/**
 * Builds `out` from a backend profile of `prof->runs` frames; `inference_mean_ms` is the
 * slot's measured mean inference time for the comparison (NAN when unknown); `dev` is what the
 * backend's load said about its device (borrowed; NULL = not known), from which the peak for
 * the MFU figures is looked up. With no runs or no nodes, out->available is 0.
 */
void eb_profile_result_build(const struct eb_backend_profile *prof, double inference_mean_ms,
                             const struct eb_backend_device_info *dev,
                             struct eb_profile_result *out);

/** One evaluated dataset category of a slot's accuracy. */
struct eb_accuracy_class {
    int64_t category_id;
    char name[64]; /* the dataset's name */
    uint64_t gt;   /* non-crowd boxes in the scored images */
    uint64_t images, dets;
    double ap, ap50; /* -1 when the scored images hold no box of the class */
};

/** `run --data`: COCO metrics of a slot's measured frames (harness/pipeline/accuracy.h). */
struct eb_accuracy_result {
    char dataset[4096];   /* the --data folder */
    char format[8];       /* "coco", "yolo", "voc" */
    char class_map[4096]; /* the class-map file, "" = by name */
    uint64_t dataset_images;
    uint64_t images;             /* scored: the distinct dataset images of the measured frames,
                                    the first `images` of the dataset's order */
    uint64_t images_undecodable; /* of those, skipped by the source (their boxes count as missed) */
    uint64_t gt_boxes, crowd_regions;
    uint64_t detections;         /* scored detections of mapped classes */
    uint64_t detections_dropped; /* of unmapped model classes */
    uint64_t classes_mapped, model_classes;
    int names_assumed; /* the model has no names: the 80 COCO names were assumed */
    double conf;       /* the threshold the slot detected at */
    int conf_default;  /* 1: 0.001 because --conf was not given */
    double map50_95, map50, map75, ap_small, ap_medium, ap_large; /* -1: no box */
    struct eb_accuracy_class *per_class; /* n_per_class, ascending category id; owned */
    size_t n_per_class;
    char detections_file[64]; /* in the run folder; "" when it could not be written */
    /* "failed to write <path>: <why>" when the detections file could not be written (the
     * scores above stand); "" when it was. */
    char detections_error[EB_DIAG_MSG_MAX];
};

/** Frees an accuracy result. Accepts NULL. */
void eb_accuracy_result_destroy(struct eb_accuracy_result *a);

struct eb_slot_result {
    int index;        /* 0 or 1 */
    const char *name; /* "rgb" or "thermal" (static) */
    enum eb_slot_status status;
    enum eb_status error;          /* EB_OK unless failed */
    char message[EB_DIAG_MSG_MAX]; /* failure or skip reason */

    char model_path[4096];
    char model_sha256[65]; /* SHA-256 of the model file (or embedded bytes); "" unknown */
    uint64_t model_size;   /* bytes of the model; 0 unknown */
    char source[4096];     /* canonical SPEC */
    /* An image_dir source's file list (eb_source_file_list_hash): files, their bytes and the
     * list's SHA-256; source_list_sha256 "" = not an image_dir source, or not hashed. */
    uint64_t source_list_files, source_list_bytes;
    char source_list_sha256[65];
    char backend[32]; /* "ort" */
    char backend_version[64];
    char backend_reason[256]; /* "--backend ort", "auto: native supports every node", ... */
    char device[16];          /* requested: "cpu", "cuda", "tensorrt" */
    char provider[64];        /* what runs, e.g. "CPUExecutionProvider" */
    char engine_cache[1024];  /* where built engines are kept (ort tensorrt); "" = none */
    char preprocess[8];       /* where frames were letterboxed: "gpu" or "cpu" ("" = never) */
    char preprocess_reason[200];
    uint64_t backend_device_measured_bytes; /* cudaMemGetInfo's drop (0 = not measured) */
    char decode[8]; /* where the head was decoded: "gpu" or "cpu" ("" = never) */
    char decode_reason[200];
    /* --precision fp16: drift against fp32 (slot.c measure_drift) */
    int drift_measured;
    char drift_note[200];
    uint64_t drift_frames, drift_boxes_fp32, drift_boxes_fp16, drift_boxes_matched;
    double drift_max_abs, drift_mean_abs;
    char model_precision[16];         /* read from the model's graph: "fp32", "fp16",
                                         "int8-dynamic", "int8-qdq", "int8-static", "mixed";
                                         "" unknown (model/model.h) */
    char model_precision_detail[200]; /* its heavy ops by kind, e.g. "64 heavy ops: 64 int8-qdq
                                         (100.0% of FLOPs)" */
    char compute_precision[8];        /* what the backend computed in: "fp32", "fp16", "int8";
                                         "" unknown (slot.c summarize_precision) */
    char qdq_path[24];                /* a QDQ model on native: "int8 kernels", "fake-quant float",
                          "stripped to float"; "" otherwise */
    char int8_nodes[320];             /* native: which heavy nodes ran int8 and which stayed
                                         float (eb_model_info.int8_nodes); "" otherwise */
    char input_dtype[16];             /* "float32" */
    int input_w, input_h, input_c;
    char layout[16]; /* the head adapter (yolo/head.h eb_head_name): "v8", "yolox", ... */
    int num_classes;
    char model_profile
        [32]; /* the model profile's family ("ultralytics", "nanodet", a file's name) */
    char profile_source[32]; /* "built-in", "--head", "profile file" */
    char profile_why[400];   /* why that head and profile */
    char input_prep
        [160]; /* the profile's preprocessing, e.g. "BGR 0-255, letterbox top-left, pad 114" */
    int threads;

    uint64_t frames_measured; /* records below */
    uint64_t frames_warmup;   /* excluded */
    double warmup_s;          /* wall time of the warm-up */
    int warmup_auto;          /* --warmup auto ran */
    int warmup_stable;        /* --warmup auto: the latency settled before the cap */
    int64_t frames_skipped;   /* undecodable frames skipped by the source */
    double wall_s;            /* the measured window's length (harness/pipeline/pipeline.h) */
    double others_cpu_pct;    /* share of all CPUs' time other processes used during the
                                 measured pass, %; NaN when not known (eb_cpu_use_others_pct) */
    double throughput_fps;    /* frames_measured / wall_s (paced: the achieved rate) */
    struct eb_stat_summary stages[EB_STAGE_COUNT];
    /* Whether the measured frames were one steady state: end-to-end drift over the window. */
    struct eb_stat_drift steady;
    /* The pipeline apart from the source: preprocess + inference + postprocess per frame. */
    struct eb_stat_summary pipeline;
    /* The measured window: frames_measured ran inside it; frames_left_out ran after it (the
     * other slot had stopped: they ran alone and are not counted). */
    uint64_t frames_left_out;
    uint64_t source_loops; /* times a finite source started again */
    int records_capped;    /* stopped at the record cap (EB_SLOT_MAX_RECORDS) */
    /* Pacing (--fps, --rgb_fps, --thermal_fps, synthetic=...@FPS); fps_target 0 = unpaced. */
    double fps_target;
    uint64_t queue;           /* --queue */
    uint64_t frames_dropped;  /* arrived while the slot was busy and the queue was full */
    double drop_pct;          /* dropped / (measured + dropped) x 100 */
    uint64_t deadline_misses; /* measured frames whose latency from arrival > 1 / fps_target */
    struct eb_stat_summary latency_from_arrival; /* paced: from arrival to postprocess end */

    uint64_t dets_total;
    double dets_per_frame_mean;
    uint32_t dets_per_frame_max;
    struct eb_class_count *classes; /* owned by the result (eb_run_result_fini frees) */
    size_t n_classes;

    /* Raw per-frame records of the measured phase (owned by the result); a soak run
     * (stats_streamed) keeps its first EB_STAT_EXACT_MAX only. */
    struct eb_frame_record *records;
    size_t n_records;
    /* Soak runs: more than EB_STAT_EXACT_MAX frames were counted, so the percentiles, their
     * intervals and the drift are the streaming estimates of harness/metrics/stats.h (count,
     * mean, std, min, max stay exact). */
    int stats_streamed;
    /* End-to-end latency (ms) and the monitored memory (bytes) over the pass's time in fixed
     * buckets (any run length), from series_t0_ns (CLOCK_MONOTONIC, the pass's barrier). */
    struct eb_stat_series e2e_series, mem_series;
    uint64_t series_t0_ns;
    /* Throttling onset (report/report_throttle.c, filled by eb_report_finish). */
    struct eb_throttle_onset throttle;

    /* --solo_baseline */
    int has_solo;
    struct eb_stat_summary solo_e2e, solo_infer;
    double interference_ratio;       /* dual e2e p50 / solo e2e p50 */
    double interference_ratio_infer; /* dual inference p50 / solo inference p50 */

    /* memory */
    uint64_t backend_host_bytes, backend_device_peak_bytes;
    uint64_t mem_peak_bytes; /* peak of the monitored figure seen by this slot's frames */
    uint64_t violations;     /* frames whose monitored figure exceeded the limit */

    /* --profile */
    int profile_requested;
    struct eb_profile_result profile; /* profile.available 0: null in report.json */
    char profile_note[256];           /* why a requested profile is absent (a report warning) */

    struct eb_validity validity; /* the slot's verdict (eb_report_finish); skipped: not judged */

    /* --data: accuracy of the measured frames; owned (eb_run_result_fini); NULL = no --data */
    struct eb_accuracy_result *accuracy;

    /* A network stream's reconnections (harness/pipeline/source.h eb_source_stream_stats):
       reconnections that delivered frames again, attempts (failed ones included), the frames
       the outages cost (estimated from the nominal rate) and their seconds. source_network 0:
       not a network stream, the rest 0. */
    int source_network;
    int64_t source_reconnects;
    int64_t source_reconnect_attempts;
    int64_t source_frames_lost;
    double source_outage_s;
};

struct eb_pair_result {
    int valid; /* dual mode with both slots ok */
    uint64_t pairs;
    struct eb_stat_summary latency; /* per pair: max of the two end-to-end times */
    double pair_fps;                /* pairs / wall time of the dual phase */
};

struct eb_mem_summary {
    double limit_gb;      /* = limit_bytes / 10^9, for the reports */
    uint64_t limit_bytes; /* the effective limit (budget.h): what the monitor compares with */
    uint64_t configured_limit_bytes; /* --gpu_mem_limit_gb (after the clamp) */
    const char *limit_bound;         /* which bound set limit_bytes: "configured" or "unified_ram"
                                (eb_budget_bound_name; static); NULL = not summarized */
    enum eb_limit_type limit_type;
    char methods[512];  /* "; "-separated methods applied, or "" */
    int unified;        /* Jetson: one DRAM shared by CPU and GPU */
    char monitored[96]; /* which figure is compared with the limit */
    uint64_t violations;
    uint64_t peak_bytes; /* peak of the monitored figure */
    uint64_t system_total_bytes;
    uint64_t peak_system_used_bytes;
    uint64_t peak_rss_bytes;
    uint64_t peak_gpu_bytes;    /* backend device bytes (0 on CPU) */
    uint64_t pressure_warnings; /* samples with available < 20% of total */
};

struct eb_json_writer; /* eb/json.h */

/* `profile --trace`: the top kernels by total GPU time (CUPTI in the run, or nsys). */
#define EB_TRACE_TOP_KERNELS 10

/** One kernel name's executions together. */
struct eb_kernel_stat {
    char name[256];   /* as the tool gives it (CUPTI: mangled), cut to fit */
    uint64_t calls;   /* executions */
    double total_ms;  /* summed GPU time */
    double share_pct; /* of all kernels' GPU time in the same window */
};

/**
 * Fills each of `all`'s share_pct (of their summed total_ms), sorts `all` by total_ms, most
 * first (ties by name), and copies the first min(n, max_top) into `top` (*n_top_out of them).
 */
void eb_kernel_stats_rank(struct eb_kernel_stat *all, size_t n, struct eb_kernel_stat *top,
                          size_t max_top, size_t *n_top_out);

/** The timeline of `profile --trace` (report.json "trace"; null when `on` is 0). */
struct eb_trace_result {
    int on;                        /* trace.json was asked for */
    int written;                   /* and written */
    uint64_t frames[EB_NUM_SLOTS]; /* measured frames in the trace per slot (its first ones) */
    uint64_t kernels;              /* kernel executions in the trace (inside the measured pass) */
    double gpu_ms;                 /* their summed GPU time */
    char gpu[16];                  /* "cupti" (kernels recorded) or "none" */
    char gpu_note[320];            /* why there are no kernels ("" with cupti) */
    struct eb_kernel_stat top[EB_TRACE_TOP_KERNELS];
    size_t n_top;
};

struct eb_run_result {
    int schema_version;
    const char *version; /* edgebench version (static) */
    char mode[16];
    char started_at[32]; /* ISO 8601 UTC */
    double duration_s;
    int interrupted;      /* SIGINT/SIGTERM arrived; results hold what ran */
    int interrupt_signal; /* the signal that interrupted the run (SIGINT...), 0 unknown */
    int exit_code;
    int files_lost; /* files of the run folder that could not be written (exit code 6) */
    char command_line[4096];
    /* The configuration echo (report.json "config"): the command that ran writes it through
     * write_config(config, w); both borrowed; NULL = null. */
    const void *config;
    void (*write_config)(const void *config, struct eb_json_writer *w);
    struct eb_slot_result slots[EB_NUM_SLOTS];
    struct eb_pair_result pair;
    struct eb_mem_summary mem;
    struct eb_system_summary sys;
    struct eb_trace_result trace; /* profile --trace */
    char output_dir[4096];
    char warnings[EB_RUN_MAX_WARNINGS][256]; /* run-level warnings shown in every report */
    int n_warnings;

    /* Derived by eb_report_finish (report.h) once the run is over; read by the reports and the
     * history database. */
    struct eb_validity_criteria criteria; /* set by the run from the configuration */
    struct eb_validity validity;          /* the run's verdict: every slot's, throttling */
    double energy_per_frame_mj;           /* NAN when not measured */
    /* The run history (history.h): where the run was recorded; history_db "" = not recorded. */
    char history_db[4096];
    int64_t history_run_id; /* 0 = not recorded */
    char history_uuid[37];  /* the run's key across databases (EB_HISTORY_UUID_SIZE) */
    /* --checkpoint_s: 1 in a checkpoint written during the pass (report.json "checkpoint"):
     * the figures of the frames so far, not the final report. */
    int checkpoint;
};

/** Zeroes the result and names the slots. */
void eb_run_result_init(struct eb_run_result *r);
/** Frees what the result owns (class counts, records). */
void eb_run_result_fini(struct eb_run_result *r);
/** Appends a run-level warning (dropped when the list is full). */
void eb_run_result_warn(struct eb_run_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/**
 * Which part of a slot's frame dominates at the median: "source" (the read stage: the
 * source's decode or render) or "pipeline" (preprocess + inference + postprocess); "" when
 * nothing was measured.
 */
const char *eb_slot_result_dominant(const struct eb_slot_result *s);

/** "SAFE" when no violation, "VIOLATIONS" otherwise. */
const char *eb_mem_overall(const struct eb_mem_summary *m);

#endif
