/*
 * The configuration of `edgebench run`, parsed from argv through cli_opts.def.
 */
#ifndef EB_CONFIG_H
#define EB_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "eb/diag.h"
#include "eb/json.h"
#include "eb/log.h"
#include "harness/pipeline/slot.h"

enum eb_mode { EB_MODE_RGB = 0, EB_MODE_THERMAL = 1, EB_MODE_DUAL = 2 };

/** --precision (cli_opts.def order). INT8 is no engine precision: it asks for an int8 model and,
 * on the native engine, the int8 path of a QDQ one (eb_run_model_setup). */
enum eb_config_precision {
    EB_CONFIG_PRECISION_FP32 = 0,
    EB_CONFIG_PRECISION_FP16,
    EB_CONFIG_PRECISION_INT8,
};

/* enum eb_backend_choice and enum eb_preprocess (--backend, --preprocess, --decode) are the
 * slot's: harness/pipeline/slot.h. */

struct eb_config {
    int mode;           /* enum eb_mode (index into the choices) */
    const char *source; /* strings are borrowed from argv (or static defaults) */
    const char *rgb_source;
    const char *thermal_source;
    const char *model0;
    const char *model1;
    const char *data; /* --data DIR (single-slot modes); NULL = no accuracy */
    const char *rgb_data;
    const char *thermal_data;
    const char *class_map;
    const char *rgb_class_map;
    const char *thermal_class_map;
    const char *model_profile;
    const char *rgb_model_profile;
    const char *thermal_model_profile;
    int head; /* enum eb_head_kind (0 = auto): --head's choices are in that order */
    uint64_t gpu_mem_limit_bytes; /* --gpu_mem_limit_gb x 10^9, validated and clamped by cli.c */
    int64_t frames;
    double duration; /* --duration seconds; 0 = not given */
    int no_loop;
    int64_t reconnect;       /* --reconnect: a network stream's attempts after a loss */
    double source_timeout_s; /* --source_timeout_s: a live source's longest wait for data */
    double fps, rgb_fps, thermal_fps; /* 0 = unpaced */
    int64_t queue;
    double max_drop_pct;
    int64_t warmup; /* frames, or EB_WARMUP_AUTO (harness/results/validity.h) for `--warmup auto` */
    double warmup_s;
    int64_t min_frames;
    double min_duration_s;
    double max_drift_pct;
    double max_others_cpu_pct;
    double max_cov_pct;
    int64_t imgsz;
    double conf;
    double iou;
    int backend; /* enum eb_backend_choice */
    int device;  /* enum eb_device */
    int64_t threads;
    int profile;
    int no_fold, no_fuse, no_dce, no_layout, no_lanes;
    int qdq;        /* index in "float|int8|strip|auto" = enum eb_engine_qdq */
    int precision;  /* index in "fp32|fp16|int8" = enum eb_config_precision */
    int preprocess; /* index in "auto|cpu|gpu" = enum eb_preprocess */
    int decode;     /* index in "auto|cpu|gpu" = enum eb_preprocess (same three choices) */
    int64_t drift_frames;
    int64_t save_images; /* --save_images */
    int kernels;         /* index in "auto|ref|avx2|avx512|neon" */
    const char *output;
    const char *db; /* NULL = the default history database; "none" = no history */
    int64_t interval_ms;
    const char *prometheus; /* --prometheus ADDR:PORT; NULL = off */
    double metrics_max_mb;  /* --metrics_max_mb: rotate metrics.jsonl (0 = never) */
    double checkpoint_s;    /* --checkpoint_s: report checkpoints during the pass (0 = off) */
    int solo_baseline;
    const char *ort_lib;
    const char *trt_cache; /* NULL = the default folder; "off" = none (eb_backend_config) */
    int verbose;
    int quiet;
    int conf_given; /* --conf was on the command line (not an option row: set by the parser) */
    int trace;      /* trace.json and the top kernels (not an option row: `profile --trace`) */
};

/** Fills every field with its default from cli_opts.def. */
void eb_config_defaults(struct eb_config *cfg);

/**
 * Parses `run` options (argv[0] is the first option). Unknown options and out-of-range values
 * are EB_ERR_INVALID_ARG with one line naming the option and the accepted range. Warnings
 * (clamping) go to `log`. Checks cross-option rules (mode vs sources and models).
 * `--help` sets *help_out = 1 and returns EB_OK without checking the rest.
 */
EB_NODISCARD enum eb_status eb_config_parse(int argc, char **argv, struct eb_config *cfg,
                                            int *help_out, const struct eb_log *log,
                                            struct eb_diag *diag);

/**
 * 1 when `--<name>` (the `len` bytes at `name`, given without "=value") takes the next argument
 * as its value in eb_config_parse; 0 for flags and unknown names. Lets a command that adds its
 * own options to run's (`edgebench profile`) tell a value from an option.
 */
int eb_config_option_takes_value(const char *name, size_t len);

/**
 * 1 when `arg` is `--<name>` or `--<name>=value` (*value_out then NULL or what follows '='): a
 * command's own options beside run's.
 */
int eb_config_match_option(const char *arg, const char *name, const char **value_out);

/**
 * The dataset folder of slot `slot` (0 rgb, 1 thermal): --rgb_data/--thermal_data, or --data
 * for the slot of a single-slot mode; NULL when the slot has none or the mode does not run it.
 * Borrowed from the configuration.
 */
const char *eb_config_slot_data(const struct eb_config *cfg, int slot);

/** The model profile file of slot `slot`: --rgb_model_profile/--thermal_model_profile, else
 *  --model_profile; NULL when none. */
const char *eb_config_slot_profile(const struct eb_config *cfg, int slot);
/** The class-map file of slot `slot`: --rgb_class_map/--thermal_class_map, else --class_map;
 *  NULL = map by name. Borrowed. */
const char *eb_config_slot_class_map(const struct eb_config *cfg, int slot);

/** The frame rate of slot `slot`: --rgb_fps/--thermal_fps, else --fps; 0 = unpaced. */
double eb_config_slot_fps(const struct eb_config *cfg, int slot);

/** Prints `edgebench run --help` (every option with default and range). */
void eb_config_print_help(FILE *fp);

/** eb_config_write_json for a result's config echo (struct eb_run_result.write_config):
 *  `cfg` is a struct eb_config. */
void eb_config_echo(const void *cfg, struct eb_json_writer *w);

/** Writes the configuration as a JSON object (one member per option). */
void eb_config_write_json(const struct eb_config *cfg, struct eb_json_writer *w);

#endif
