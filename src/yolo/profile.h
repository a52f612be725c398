/*
 * Model profiles: how to feed a detector (colour order, scale, mean/std, resize, padding) and
 * how to read it (the head adapter with its strides and anchors, class names). A built-in
 * profile per family is chosen when the graph matches the family's signature (output count and
 * shapes, in-graph sigmoid/softmax, decode ops before the outputs, metadata); a key = value
 * profile file (--model_profile) and --head override it or describe a model nobody built in.
 *
 *     struct eb_head_graph g = ...;          (eb_model_head_graph + the probe's output shapes)
 *     struct eb_model_profile p;
 *     eb_profile_resolve(&g, &request, &p, diag);   recognition + overrides
 *     printf("%s: %s\n", p.family, p.why);
 */
#ifndef EB_YOLO_PROFILE_H
#define EB_YOLO_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "yolo/head.h"
#include "yolo/yolo.h"

/* What ends the computation of a model output, walking back from it through ops that only move
 * data (Reshape, Transpose, Concat, Slice, Split, Gather, Squeeze, Unsqueeze, Flatten, Identity,
 * Cast): one bit per kind of op found at the end of some path. */
enum {
    EB_HEAD_END_SIGMOID = 1u << 0, /* Sigmoid (or HardSigmoid) */
    EB_HEAD_END_SOFTMAX = 1u << 1, /* Softmax / LogSoftmax */
    EB_HEAD_END_DECODE = 1u << 2,  /* arithmetic: Mul, Add, Sub, Div, Pow, Exp */
    EB_HEAD_END_LAYER = 1u << 3,   /* a layer: Conv, ConvInteger, MatMul, Gemm, ... */
    EB_HEAD_END_OTHER = 1u << 4,   /* anything else (an initializer, an input, other ops) */
};

#define EB_HEAD_GRAPH_MAX_OUT 10

/** The facts about a model's graph that recognition reads (plain data). */
struct eb_head_graph {
    int in_w, in_h; /* model input size */
    int n_outputs;
    struct {
        char name[64];
        int rank;
        int64_t shape[6]; /* resolved (the probe inference's shapes when known) */
        unsigned ends;    /* EB_HEAD_END_* bits; 0 when the graph was not read */
    } out[EB_HEAD_GRAPH_MAX_OUT];
    size_t n_class_names; /* metadata "names" entries (0 = none) */
    int ultralytics;      /* metadata of an Ultralytics export (stride/task/imgsz keys) */
    int ultralytics_e2e;  /* its "end2end" key says True */
    int graph_read;       /* the ONNX graph was read (else shapes only) */
};

/** A family's built-in profile or a profile file's settings. */
struct eb_model_profile {
    char family[32]; /* "ultralytics", "yolox", "nanodet", ... or the file's `name` */
    char source[32]; /* "built-in", "profile file" (its `head` key chose), "--head" */
    char why[400];   /* how it was chosen, for model info, the log and the report */
    struct eb_pixel_norm norm;
    enum eb_resize resize;
    struct eb_head head;
    /* Class names given by a profile file (owned; NULL = the model's metadata names). */
    char **names;
    size_t n_names;
};

/** What the user asked for: a profile file's text (NULL none), --head (NULL / "auto" none). */
struct eb_profile_request {
    const char *file_text; /* borrowed */
    const char *file_name; /* for messages */
    const char *head;      /* --head NAME */
};

/**
 * Resolves the profile of the model described by `g` (borrowed) with the user's `req`:
 * recognition when neither --head nor the file's `head` key names the adapter, then the
 * family's built-in settings, then the file's keys. EB_ERR_UNSUPPORTED when no adapter fits,
 * with a message listing every output's name and shape and the --head / --model_profile
 * choices; EB_ERR_INVALID_ARG for a bad profile file (the message names the file, the line and
 * the key). `out` is caller memory (initialised here; release with eb_profile_fini).
 */
EB_NODISCARD enum eb_status eb_profile_resolve(const struct eb_head_graph *g,
                                               const struct eb_profile_request *req,
                                               struct eb_model_profile *out, struct eb_diag *diag);

void eb_profile_fini(struct eb_model_profile *p);

/** One line describing the profile's preprocessing, e.g. "BGR 0-255, letterbox top-left,
 *  pad 114". */
void eb_profile_describe_pre(const struct eb_model_profile *p, char *buf, size_t size);

/** The --head choices, "|"-separated ("auto|v8|v5|..."). */
const char *eb_profile_head_choices(void);

#endif
