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
#include <stdio.h>

struct eb_quantize_env {
    atomic_int *stop;    /* non-zero (a signal) stops after the current image; borrowed */
    const char *version; /* borrowed */
    FILE *out;           /* the summary */
    FILE *err;           /* errors and progress */
};

/**
 * Runs `edgebench quantize` (argv[0] is the first option). Returns 0 when the model was written
 * (and loads in the native engine); 2 for bad input (options, model, calibration folder), with
 * one line on env->err naming the thing and what to do; 1 when the model cannot be run or the
 * result cannot be written; 130 when interrupted (nothing is written).
 */
int eb_quantize_main(int argc, char **argv, const struct eb_quantize_env *env);

void eb_quantize_print_help(FILE *fp);

#endif
