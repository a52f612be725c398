/*
 * One model slot: its source, backend instance, buffers and measured records. Prepared on the
 * main thread, then driven by exactly one pipeline thread at a time.
 */
#ifndef EB_SLOT_H
#define EB_SLOT_H

#include <stdatomic.h>
#include <stdint.h>

#include "eb/backend.h"
#include "eb/nvtx.h"
#include "harness/accuracy.h"
#include "harness/budget.h"
#include "harness/result.h"
#include "harness/source.h"
#include "yolo/yolo.h"

struct eb_slot_setup {
    const char *model_path;     /* NULL = slot skipped (unless model_bytes) */
    const uint8_t *model_bytes; /* embedded default (borrowed) */
    size_t model_len;
    const char *model_label; /* how the model is named in reports */
    const char *source_text; /* SPEC text */
    enum eb_synth_style synth_style;
    int backend_choice;                   /* enum eb_backend_choice (--backend) */
    int preprocess;                       /* enum eb_preprocess (--preprocess) */
    int decode;                           /* enum eb_preprocess (--decode: same choices) */
    int64_t drift_frames;                 /* --drift_frames */
    const struct eb_backend_ops *backend; /* resolved by eb_slot_prepare */
    struct eb_backend_config backend_cfg;
    int imgsz;
    float conf, iou;
    int64_t frames;          /* measured frames; 0 = whole source */
    int64_t warmup;          /* frames, or EB_WARMUP_AUTO (harness/validity.h) */
    double warmup_s;         /* warm up at least this long too (--warmup_s) */
    struct eb_budget budget; /* the process's memory budget, for the per-frame check */
    int unified;             /* monitored figure: system used (1) or process RSS (0) */
    const struct eb_log *log;
    atomic_int *stop; /* non-zero to stop after the current frame; borrowed */
    /* --data: the source reads these files in this order (source_text then only names it),
       loops over them when --frames asks for more, and every measured frame's detections go
       to `accuracy`. All borrowed; NULL = no dataset. */
    const char *const *files;
    size_t n_files;
    struct eb_accuracy *accuracy;
};

struct eb_slot {
    int index;
    const char *name;
    struct eb_slot_setup setup;
    enum eb_slot_status status;
    struct eb_diag diag;

    struct eb_source_spec spec;
    struct eb_source *src;
    struct eb_backend *be;
    struct eb_model_info info;
    struct eb_backend_probe probe;
    struct eb_yolo_layout_info layout;
    struct eb_yolo_params params;
    struct eb_yolo_scratch scratch;
    struct eb_letterbox lb;
    int in_w, in_h, in_c;
    int gpu_pre;          /* frames go to the backend's infer_frame (letterbox on its device) */
    uint8_t *frame_buf;   /* with gpu_pre: the backend's frame buffer the source decodes into
                             (eb_backend_frame_buffer; backend-owned), NULL = none yet */
    size_t frame_buf_px;  /* the pixels it holds */
    int frame_buf_off;    /* 1: the backend has none, frames are copied in */
    char pre_reason[200]; /* why preprocessing runs where it does */
    int gpu_decode;       /* the backend reduces the head on its device (head_rows) */
    char decode_reason[200];
    int drift_measured;         /* --precision fp16: fp16 against fp32 on --drift_frames frames */
    struct eb_yolo_drift drift; /* (measure_drift) */
    char drift_note[200];       /* what was compared, or why not */
    enum eb_dtype in_dtype;
    void *input;      /* the input tensor data (f32 or f16) */
    float *input_f32; /* preprocessing target (== input for f32 models) */
    float *out_f32;   /* output conversion buffer for f16 outputs */
    size_t out_f32_cap;
    struct eb_tensor out0; /* output 0 of the last inference (data owned by the backend) */
    struct eb_detections dets;
    uint64_t *class_counts; /* per class id, num_classes entries */
    int num_classes;

    struct eb_frame_record *records;
    size_t cap_records;
    _Atomic size_t n_done;     /* records published (release) for the progress display */
    _Atomic uint64_t last_mem; /* monitored bytes after the last frame */
    _Atomic int finished;      /* set by the pipeline thread when its pass ends */
    uint64_t violations, mem_peak;
    uint64_t warmup_done;
    uint64_t warmup_ns; /* wall time of the warm-up */
    int warmup_stable;  /* --warmup auto: the latency settled before the cap */
    uint64_t phase_start_ns, phase_end_ns;
    int rewindable;
    char backend_reason[256]; /* why this backend runs the slot */
    struct eb_nvtx nvtx;      /* EB_NVTX_DOMAIN_STAGE: "<slot>:read|pre|infer|post" ranges */
};

/** Zeroes and names the slot; copies the setup. */
void eb_slot_init(struct eb_slot *s, int index, const struct eb_slot_setup *setup);

/**
 * Opens the source, creates the backend, loads the model, runs one probe inference to learn the
 * output layout, and allocates every buffer the measured loop needs. On failure the slot is
 * FAILED with its diag set (and the status returned).
 */
EB_NODISCARD enum eb_status eb_slot_prepare(struct eb_slot *s);

/**
 * Runs the warm-up frames (not recorded): --warmup N frames, or until the `--warmup auto` rule
 * (harness/validity.h) says the end-to-end time is stable, and at least --warmup_s seconds;
 * then rewinds the source when it can.
 */
EB_NODISCARD enum eb_status eb_slot_warmup(struct eb_slot *s);

/**
 * Measures up to cap_records frames into s->records (n_done counts them). Stops at the end of
 * the source, on *stop, or on a failure (slot FAILED, diag set, status returned; records so
 * far are kept).
 */
EB_NODISCARD enum eb_status eb_slot_measure(struct eb_slot *s);

/**
 * Runs one frame the caller brings through the prepared slot, outside the measured loop:
 * preprocess, infer, decode + NMS, boxes mapped back to `fr`'s pixels. The detections are in
 * s->dets until the next call; nothing is recorded. `fr` is borrowed for the call. On failure
 * the slot is FAILED with its diag set (and the status returned). Used by `edgebench val`.
 */
EB_NODISCARD enum eb_status eb_slot_detect(struct eb_slot *s, const struct eb_frame *fr);

/** Rewinds the source for another pass (the solo baseline). */
EB_NODISCARD enum eb_status eb_slot_rewind(struct eb_slot *s);

/** Fills the slot's part of the result (statistics, detections, memory). */
void eb_slot_summarize(struct eb_slot *s, struct eb_slot_result *r);

/** Frees everything; accepts a partially prepared slot. */
void eb_slot_fini(struct eb_slot *s);

/** Thread entry: runs eb_slot_measure on the struct eb_slot * argument. */
void *eb_slot_thread_main(void *arg);

#endif
