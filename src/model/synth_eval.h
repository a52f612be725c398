/*
 * Shadow evaluation for eb_model_synth (internal to src/model). The synthesizer runs the network
 * it emits on a deterministic calibration image, with these float32 scalar reference ops, to fold
 * a BatchNorm into every Conv (per-channel statistics of the real pre-activation) and to choose
 * the class-score gain of the Detect head. Every op follows the ONNX semantics of the node the
 * synthesizer writes for it; tensors are NCHW with batch 1, stored as [c][h][w].
 */
#ifndef EB_MODEL_SYNTH_EVAL_H
#define EB_MODEL_SYNTH_EVAL_H

#include <stddef.h>

#include "eb/diag.h"
#include "model/model.h"

/**
 * Conv (pads k/2 on every side, dilation 1) of x [cin][h][w] with weights [cout][cin/groups][k][k]
 * and bias (NULL = zero); writes y [cout][oh][ow], oh = (h + 2*(k/2) - k) / stride + 1.
 */
void eb_synth__conv2d(const float *x, int cin, int h, int w, const float *wt, const float *bias,
                      int cout, int k, int stride, int groups, float *y);
/** x * sigmoid(x), in place (Sigmoid followed by Mul). */
void eb_synth__silu(float *x, size_t n);
/** MaxPool kernel 5, stride 1, pads 2 (padding never wins) of [c][h][w]. */
void eb_synth__maxpool5(const float *x, int c, int h, int w, float *y);
/** Resize nearest, scales (1,1,2,2), asymmetric, floor: [c][h][w] -> [c][2h][2w]. */
void eb_synth__resize2x(const float *x, int c, int h, int w, float *y);
/**
 * YOLO11 Attention core on the qkv conv output [heads*(2*kd+hd)][n]: Reshape to
 * [heads][2kd+hd][n], Split q/k/v, softmax(q^T k * kd^-1/2) over the last axis, v @ attn^T.
 * Writes `out` [heads*hd][n] (the attention Reshape) and `v_out` [heads*hd][n] (v reshaped,
 * the input of the positional conv). `row` is scratch of n floats.
 */
void eb_synth__attention(const float *qkv, int heads, int kd, int hd, int n, float *out,
                         float *v_out, float *row);
/**
 * Detect tail: box logits [64][nanch] and class logits [nc][nanch] (levels concatenated), the
 * anchor centres ax/ay (grid units) and per-anchor strides -> out [4+nc][nanch]: DFL softmax and
 * arange projection, dist2bbox (cx, cy, w, h) times stride, sigmoid of the classes.
 */
void eb_synth__detect_tail(const float *box, const float *cls, int nc, size_t nanch,
                           const float *ax, const float *ay, const float *stride, float *out);
/**
 * The calibration image [3][size][size], values in [0, 1] like the letterboxed input / 255: a
 * street-like scene (sky and ground gradients, a road with lane marks, rectangles and blobs with
 * sharp edges, mild pixel noise). Drawn in relative coordinates, so every size shows the same
 * scene; deterministic (no seed).
 */
void eb_model__synth_calib_image(int size, float *out);

/**
 * Test hook: synthesizes the model of `opts` exactly as eb_model_synth does (same weights) and
 * evaluates it with the shadow ops on `input` [3][imgsz][imgsz]. `*out_out` (malloc'd, caller
 * frees) receives output0 as [4+nc][nanch], `*n_out` its element count.
 */
EB_NODISCARD enum eb_status eb_model__synth_eval(const struct eb_synth_options *opts,
                                                 const float *input, float **out_out, size_t *n_out,
                                                 struct eb_diag *diag);

#endif
