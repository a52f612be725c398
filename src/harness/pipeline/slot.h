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
#include "harness/metrics/stats.h"
#include "harness/pipeline/accuracy.h"
#include "harness/pipeline/budget.h"
#include "harness/pipeline/source.h"
#include "harness/results/result.h"
#include "harness/results/validity.h"
#include "model/model.h"
#include "yolo/head.h"
#include "yolo/profile.h"
#include "yolo/yolo.h"

/** --backend, in the order of its choices in cli_opts.def. */
enum eb_backend_choice {
    EB_BACKEND_CHOICE_ORT = 0,
    EB_BACKEND_CHOICE_NATIVE,
    EB_BACKEND_CHOICE_AUTO
};

/** --preprocess: where frames are letterboxed (same order as cli_opts.def's choices). */
enum eb_preprocess { EB_PREPROCESS_AUTO = 0, EB_PREPROCESS_CPU, EB_PREPROCESS_GPU };

/**
 * Resolves --backend `choice` (enum eb_backend_choice) for the model in `ms`: `auto` asks the
 * native backend whether it runs every node of the model (the vtable's `supports`, with `cfg`)
 * and falls back to ort with the reason. `reason` gets why ("--backend ort", "auto: ...").
 * EB_ERR_UNSUPPORTED when the chosen backend is not in this build.
 */
EB_NODISCARD enum eb_status eb_backend_choose(int choice, const struct eb_backend_config *cfg,
                                              const struct eb_model_spec *ms,
                                              const struct eb_backend_ops **ops_out, char *reason,
                                              size_t reason_size, struct eb_diag *diag);

/* How many recent end-to-end times the progress line's median reads. */
#define EB_SLOT_RECENT 31
/* Clamp of a length resolved from a source's count (a pass of any length runs: see below). */
#define EB_SLOT_MAX_RECORDS 4000000
/* Soak runs: the first EB_SLOT_EXACT_RECORDS records of a pass are kept (exact statistics, the
 * reports' raw samples); after them only the last EB_SLOT_TAIL_RECORDS, in a ring (the measured
 * window's cut at the end of the pass reaches back that far), and every record leaving the ring
 * goes into the fixed-size streaming statistics (struct eb_slot_streams; harness/metrics/stats.h
 * says which figures stay exact). A duration run allocates and touches all of it before the pass,
 * so the process's memory does not move while it runs. */
#define EB_SLOT_EXACT_RECORDS EB_STAT_EXACT_MAX
#define EB_SLOT_TAIL_RECORDS  8192

/* The series a slot summarises: the stages (enum eb_stage), then these two. */
enum { EB_SLOT_SERIES_PIPELINE = EB_STAGE_COUNT, EB_SLOT_SERIES_ARRIVAL, EB_SLOT_SERIES_COUNT };

/* What a pass of any length keeps per slot: fixed size (about 1.2 MB), allocated before it. */
struct eb_slot_streams {
    struct eb_stat_stream s[EB_SLOT_SERIES_COUNT];
    uint64_t dets_total;
    uint32_t dets_max;
    uint64_t deadline_misses;
    struct eb_stat_series e2e_series, mem_series; /* over the pass's time (the charts) */
};

struct eb_slot_setup {
    const char *model_path;     /* NULL = slot skipped (unless model_bytes) */
    const uint8_t *model_bytes; /* embedded default (borrowed) */
    size_t model_len;
    const char *model_label; /* how the model is named in reports */
    const char *source_text; /* SPEC text */
    enum eb_synth_style synth_style;
    int backend_choice;   /* enum eb_backend_choice (--backend) */
    int preprocess;       /* enum eb_preprocess (--preprocess) */
    int decode;           /* enum eb_preprocess (--decode: same choices) */
    int64_t drift_frames; /* --drift_frames */
    int need_int8;        /* --precision int8: a model whose graph is not int8 fails the slot */
    const struct eb_backend_ops *backend; /* resolved by eb_slot_prepare */
    struct eb_backend_config backend_cfg;
    int imgsz;
    float conf, iou;
    /* Run length (harness/pipeline/pipeline.h): --frames and --duration (0 = not given; with both,
       whichever comes last); with neither, at least min_frames and min_duration_s. */
    int64_t frames;
    double duration_s;
    int64_t min_frames;
    double min_duration_s;
    int loop;                /* a finite source starts again at its end (0: --no_loop) */
    double fps;              /* frames arrive at this rate (--fps...); 0 = as fast as it runs */
    int64_t queue;           /* --queue: arrived frames that may wait for a busy slot */
    int64_t warmup;          /* frames, or EB_WARMUP_AUTO (harness/results/validity.h) */
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
    /* How the model is fed and read: a --model_profile file (NULL = none, borrowed) and --head
       (enum eb_head_kind; EB_HEAD_UNKNOWN = recognised from the graph). */
    const char *profile_path;
    int head;
    /* --save_images: the first save_images measured frames with their final detections drawn
       (harness/pipeline/annotate.h) as <save_dir>/<save_prefix>_<NNNNNN>.png (the measured
       frame's number), written after the frame is booked, outside its timed stages; detections
       scoring under save_min_score are not drawn. save_dir is borrowed and read when the frame
       is booked (it may be filled after eb_slot_init); NULL or 0 frames = none. */
    int64_t save_images;
    const char *save_dir;
    const char *save_prefix; /* NULL = the slot's name */
    double save_min_score;
    /* Live sources (harness/pipeline/source.h): the longest wait for data (--source_timeout_s;
       0 = the source's default) and a network stream's reconnection attempts (--reconnect). */
    double source_timeout_s;
    int64_t reconnect;
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
    struct eb_model_precision_info
        model_prec; /* read from the model's graph, if model_prec_known */
    int model_prec_known;
    /* The graph's facts for head recognition (model/head_graph.c), read with the precision
       from the same bytes; resolve_profile fills in the probe's shapes. */
    struct eb_head_graph graph;
    int graph_known;
    char graph_why[EB_DIAG_MSG_MAX]; /* why it was not read */
    struct eb_backend_probe probe;
    struct eb_model_profile profile; /* resolved at prepare (owns a profile file's names) */
    struct eb_head head;             /* == profile.head */
    struct eb_yolo_params params;
    struct eb_yolo_scratch scratch;
    struct eb_letterbox lb;
    int in_w, in_h, in_c;
    int gpu_pre;          /* frames go to the backend's infer_frame (letterbox on its device) */
    uint8_t *frame_buf;   /* with gpu_pre: the backend's frame buffer the source decodes into
                             (eb_backend_frame_buffer; backend-owned), NULL = none yet */
    size_t frame_buf_px;  /* the pixels it holds */
    int frame_buf_off;    /* 1: the backend has none, frames are copied in; or frames_pinned */
    int frames_pinned;    /* the source's ring is page-locked for the backend
                             (eb_backend_pin_frames): frames go up from the ring, no copy */
    char pre_reason[200]; /* why preprocessing runs where it does */
    int gpu_decode;       /* the backend reduces the head on its device (head_rows) */
    char decode_reason[200];
    int drift_measured;         /* --precision fp16: fp16 against fp32 on --drift_frames frames */
    struct eb_yolo_drift drift; /* (measure_drift) */
    char drift_note[200];       /* what was compared, or why not */
    enum eb_dtype in_dtype;
    void *input;                       /* the input tensor data (f32 or f16) */
    float *input_f32;                  /* preprocessing target (== input for f32 models) */
    float *out_f32[EB_BACKEND_MAX_IO]; /* conversion buffers of f16 outputs (NULL for f32) */
    size_t out_f32_cap[EB_BACKEND_MAX_IO];
    struct eb_tensor outs[EB_BACKEND_MAX_IO]; /* outputs of the last inference (backend data) */
    struct eb_detections dets;
    uint64_t *class_counts; /* per class id, num_classes entries */
    int num_classes;

    /* The measured pass (harness/pipeline/pipeline.c). Records grow between frames (outside the timed
       stages) up to EB_SLOT_MAX_RECORDS; only the slot's pipeline thread touches them while a
       pass runs. */
    struct eb_frame_record *records;
    size_t cap_records;
    struct eb_frame_record *tail;    /* EB_SLOT_TAIL_RECORDS after the exact prefix (a ring) */
    struct eb_slot_streams *streams; /* every record of the pass, folded (soak runs) */
    /* --checkpoint_s: the main thread sets ckpt_req; the slot's thread, between two frames,
       summarises the pass so far into ckpt (owned by the slot) and sets ckpt_ready. */
    atomic_int ckpt_req, ckpt_ready;
    struct eb_slot_result ckpt;
    int ckpt_summarizing;   /* summarise through the streams, keep no raw records */
    int64_t frames_goal;    /* resolved length: frames (0 = none) ... */
    double duration_goal_s; /* ... and seconds (0 = none) */
    double fps;             /* frames arrive at this rate; 0 = unpaced */
    int records_capped;     /* the pass stopped at EB_SLOT_MAX_RECORDS */
    _Atomic size_t n_done;  /* frames measured so far (progress display) */
    _Atomic uint64_t recent_e2e_ns[EB_SLOT_RECENT]; /* end-to-end of the last frames, ring */
    _Atomic uint64_t last_mem;                      /* monitored bytes after the last frame */
    uint64_t violations, mem_peak;
    uint64_t warmup_done;
    uint64_t warmup_ns;                    /* wall time of the warm-up */
    int warmup_stable;                     /* --warmup auto: the latency settled before the cap */
    uint64_t phase_start_ns, phase_end_ns; /* the barrier and the end of the last frame */
    uint64_t window_end_ns;  /* the measured window: [phase_start_ns, window_end_ns] */
    size_t n_counted;        /* records inside the window (a prefix of records) */
    size_t n_left_out;       /* records after it */
    double others_cpu_pct;   /* share of all CPUs' time other processes used during the pass
                                (eb_cpu_use_others_pct); NaN when not known */
    uint64_t dropped;        /* paced: frames that arrived while the slot was busy, not kept */
    uint64_t skipped_looped; /* undecodable frames of earlier loops over the source */
    uint64_t loops;          /* times the source started again */
    uint64_t size_mismatch;  /* --data: frames whose size is not the dataset's for the image */
    int loop_delivered;      /* a frame came since the source (re)started */
    int rewindable;
    char backend_reason[256]; /* why this backend runs the slot */
    struct eb_nvtx nvtx;      /* EB_NVTX_DOMAIN_STAGE: "<slot>:read|pre|infer|post" ranges */
};

/** Zeroes and names the slot; copies the setup. */
void eb_slot_init(struct eb_slot *s, int index, const struct eb_slot_setup *setup);

/**
 * Opens the source, creates the backend, loads the model, runs one probe inference to learn the
 * output layout, and allocates every buffer the measured loop needs: eb_slot_load then
 * eb_slot_start. On failure the slot is FAILED with its diag set (and the status returned).
 */
EB_NODISCARD enum eb_status eb_slot_prepare(struct eb_slot *s);
/**
 * The first half of eb_slot_prepare: parses the source and opens it unless it is live (a
 * camera, a network stream), creates the backend and loads the model (s->info is known after
 * it). A caller with two slots loads both before it starts either, so that a live source
 * opens only when no model is still loading.
 */
EB_NODISCARD enum eb_status eb_slot_load(struct eb_slot *s);
/**
 * The second half, after eb_slot_load succeeded: opens a live source, runs the probe inference
 * on its first frame and allocates the measured loop's buffers.
 */
EB_NODISCARD enum eb_status eb_slot_start(struct eb_slot *s);

/**
 * Reads the next frame into `fr` (the NVTX read range around it); at the end of a finite source
 * starts it again when `loop` is set and a frame came since its last start (a source of
 * undecodable frames ends). EB_ERR_END (diag clear) at the end otherwise; EB_ERR_CANCELLED
 * (diag clear, the slot still OK) when the stop flag was set while the source waited; other
 * failures FAIL the slot.
 */
EB_NODISCARD enum eb_status eb_slot_read(struct eb_slot *s, int loop, struct eb_frame *fr);

/**
 * Reads a frame outside the measured pass (warm-up, the probe, the fp16 drift frames), starting
 * a rewindable source again at its end. A source that delivers nothing is EB_ERR_END with one
 * line naming it (diag set; the slot's status is the caller's to set); EB_ERR_CANCELLED (diag
 * set) when the stop flag was set while the source waited, which is no failure of the slot.
 */
EB_NODISCARD enum eb_status eb_slot_read_any(struct eb_slot *s, struct eb_frame *fr);

/**
 * Runs one frame through the slot: preprocess, infer, decode + NMS (NVTX ranges per stage).
 * `*t_pre_end` and `*t_inf_end` receive the end of preprocessing and of inference. On failure
 * the slot is FAILED with its diag set (and the status returned).
 */
EB_NODISCARD enum eb_status eb_slot_process(struct eb_slot *s, const struct eb_frame *fr,
                                            uint64_t *t_pre_end, uint64_t *t_inf_end);

/** Starts a measured pass: no records, no counters (class counts, drops, violations), the
 *  profile and the accuracy reset. */
void eb_slot_begin_pass(struct eb_slot *s);

/**
 * Books a measured frame after its timed stages: its detections per class, its accuracy
 * (--data), the memory sample against the limit, and `rec` (stage times set by the caller)
 * appended to the records (which grow here, outside the timed stages). 0 when the frame was
 * kept; EB_ERR_NOMEM or the accuracy's failure FAIL the slot; at EB_SLOT_MAX_RECORDS the
 * frame is not kept and records_capped is set (EB_ERR_END).
 */
EB_NODISCARD enum eb_status eb_slot_book(struct eb_slot *s, const struct eb_frame *fr,
                                         const struct eb_frame_record *rec);

/** Whether --warmup (frames, auto, --warmup_s) is over after `done` frames in `elapsed_ns`. */
int eb_slot_warmup_over(const struct eb_slot *s, const struct eb_warmup_auto *wa, uint64_t done,
                        uint64_t elapsed_ns);

/**
 * Asks the slot's thread for a checkpoint of the pass so far (eb_slot_checkpoint_ready then says
 * when s->ckpt holds it). Called by the main thread while the pass runs.
 */
void eb_slot_checkpoint_request(struct eb_slot *s);
/** Whether the checkpoint asked for is in s->ckpt (acquire: it may be read then). */
int eb_slot_checkpoint_ready(struct eb_slot *s);

/**
 * Record `i` (0-based) of the pass so far, or NULL when it is not kept any more (past the exact
 * prefix and older than the tail ring; already in the streaming statistics) or not booked yet.
 * Read by the slot's own thread, or after the pass.
 */
const struct eb_frame_record *eb_slot_record(const struct eb_slot *s, size_t i);

/**
 * Writes every record of the last measured pass as CSV to `path`: frame index, start (ms since
 * the pass's barrier), arrival (paced; empty otherwise), each stage's ms, latency from arrival,
 * detections, and whether the frame is counted (inside the measured window).
 */
EB_NODISCARD enum eb_status eb_slot_write_frames_csv(const struct eb_slot *s, const char *path,
                                                     struct eb_diag *diag);

/**
 * Points a prepared slot at a dataset for an accuracy pass through the core (compare --data):
 * its source becomes the dataset's images (acc->files, borrowed) in order, once, no warm-up, no
 * pacing, every frame's detections into `acc` (borrowed) at confidence `conf`. The backend and
 * its buffers stay. On failure the slot is FAILED with its diag set.
 */
EB_NODISCARD enum eb_status eb_slot_use_dataset(struct eb_slot *s, struct eb_accuracy *acc,
                                                const char *data_dir, float conf);

/** Rewinds the source for another pass (the solo baseline). */
EB_NODISCARD enum eb_status eb_slot_rewind(struct eb_slot *s);

/** The model's precision read from its graph ("int8-qdq", ...; model/model.h); "" unknown. */
const char *eb_slot_model_precision(const struct eb_slot *s);
/**
 * The precision the loaded backend computes in ("fp32", "fp16", "int8"): what it says (native),
 * else what the model's graph implies (ort); "" before a load or when unknown.
 */
const char *eb_slot_compute_precision(const struct eb_slot *s);
/** A QDQ model on native: "int8 kernels", "fake-quant float" or "stripped to float"; "" else. */
const char *eb_slot_qdq_path(const struct eb_slot *s);

/** Fills the slot's part of the result (statistics, detections, memory). */
void eb_slot_summarize(struct eb_slot *s, struct eb_slot_result *r);
/**
 * eb_slot_summarize of a solo-baseline pass: everything but the per-operator profile, which
 * belongs to the measured pass after it (ort's profiler can be read only once: reading it here
 * would end it before the measured pass).
 */
void eb_slot_summarize_solo(struct eb_slot *s, struct eb_slot_result *r);

/** Frees everything; accepts a partially prepared slot. */
void eb_slot_fini(struct eb_slot *s);

#endif
