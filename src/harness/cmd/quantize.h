/*
 * `edgebench quantize`: a QDQ int8 ONNX model from a float one, calibrated on images of a
 * dataset. The float model runs on the native engine's CPU device over a reproducible (seeded)
 * subset of the images, prepared by the model's profile as `run` prepares a frame; every tensor
 * that gets a QuantizeLinear/DequantizeLinear pair (model/qdq.h) is observed, its range comes
 * from model/calib.h (minmax, percentile or entropy), and the rewritten model records how it
 * was made in its metadata (edgebench.quantize.*, printed by `model info`).
 *     struct eb_quantize_env env = {.stop = &stop, .version = "1.0", .out = stdout,
 *                                   .err = stderr};
 *     return eb_quantize_main(argc - 2, argv + 2, &env);
 */
#ifndef EB_QUANTIZE_H
#define EB_QUANTIZE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "eb/diag.h"
#include "model/calib.h"

/* The most calibration images (--calib_images of quantize, and of compare --calib). */
#define EB_QUANTIZE_IMAGES_MAX 100000

struct eb_quantize_env {
    atomic_int *stop;    /* non-zero (a signal) stops after the current image; borrowed */
    const char *version; /* borrowed */
    FILE *out;           /* the summary; NULL = none */
    FILE *err;           /* errors and progress; NULL = none (eb_quantize) */
};

/** What to quantise and how: `edgebench quantize`'s options (strings borrowed). */
struct eb_quantize_request {
    const char *model, *calib, *out;                      /* required */
    const char *split, *keep_float, *profile_file, *head; /* NULL = default */
    long long images, seed, imgsz, threads;
    enum eb_calib_method method;
    double percentile;
    double min_sqnr; /* dB; -INFINITY = off */
    int per_channel;
    int conv_outputs;
};

struct eb_quantize_result {
    size_t n_int8, n_float, n_images;
    int write_failed; /* the model was made but its file could not be written */
};

/** The defaults of `edgebench quantize` (128 images, seed 0, percentile 99.999, per channel). */
void eb_quantize_request_default(struct eb_quantize_request *r);

/**
 * Calibrates and writes req->out (checked to load in the native engine first); the summary to
 * env->out. Errors as eb_quantize_main's, in `diag`; nothing is written on error.
 */
EB_NODISCARD enum eb_status eb_quantize(const struct eb_quantize_request *req,
                                        const struct eb_quantize_env *env,
                                        struct eb_quantize_result *res, struct eb_diag *diag);

/**
 * Runs `edgebench quantize` (argv[0] is the first option). Returns 0 when the model was written
 * (and loads in the native engine); 2 for bad input (options, model, calibration folder), with
 * one line on env->err naming the thing and what to do; 1 when the model cannot be run or the
 * result cannot be written; 130 when interrupted (nothing is written).
 */
int eb_quantize_main(int argc, char **argv, const struct eb_quantize_env *env);

void eb_quantize_print_help(FILE *fp);

#endif
