/*
 * `edgebench val`: COCO detection metrics of a model on a dataset. Every image of the dataset
 * runs through the model as `run` runs a frame (same backends, letterbox, decode and NMS, at a
 * low confidence threshold), the detections are mapped onto the dataset's categories and
 * scored with pycocotools' definitions (eval/coco_eval.h); the table goes to stdout, val.json
 * (every metric) and detections.json (COCO results format) to the output folder.
 *
 *     struct eb_val_env env = {.stop = &stop, .command_line = line, .version = "1.0",
 *                              .out = stdout, .err = stderr};
 *     return eb_val_main(argc - 2, argv + 2, &env);
 */
#ifndef EB_VAL_H
#define EB_VAL_H

#include <stdatomic.h>
#include <stdio.h>

/* Ultralytics' validation defaults: the confidence threshold and NMS IoU. */
#define EB_VAL_CONF_DEFAULT "0.001"

struct eb_val_env {
    atomic_int *stop;         /* non-zero (a signal) stops after the current image; borrowed */
    const char *command_line; /* borrowed */
    const char *version;      /* borrowed */
    FILE *out;                /* the metrics table and the path of val.json */
    FILE *err;                /* errors, warnings and the progress line */
};

/**
 * Runs `edgebench val` with its arguments (argv[0] is the first option). Returns 0 when the
 * metrics were written; 2 for bad input (an unknown or missing option, a missing model file,
 * a dataset folder that cannot be read or has no images, a malformed annotation or class-map
 * file, a class the map does not know, no class in common) with one line on env->err naming
 * the thing and what to do; 1 when the model cannot be loaded or run; 130 when interrupted.
 */
int eb_val_main(int argc, char **argv, const struct eb_val_env *env);

/** Prints `edgebench val --help`. */
void eb_val_print_help(FILE *fp);

#endif
