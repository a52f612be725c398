/*
 * eb_model_synth: writes the ONNX graph of Ultralytics YOLOv8 / YOLO11 detectors (scales n..x)
 * as `yolo export format=onnx simplify=True` lays it out (Ultralytics 8.3/8.4, opset 17): BN
 * folded into Conv weight + bias, SiLU as Sigmoid + Mul, C2f/C3k2 with Split + Concat, SPPF with
 * MaxPool, nearest Resize with a scales input, YOLO11's C2PSA attention, and the v8/11 Detect head
 * (per-level box/class branches reshaped to [1,64,-1] / [1,nc,-1] and concatenated over levels,
 * DFL as Reshape/Transpose/Softmax/1x1 Conv, dist2bbox with constant anchors and strides).
 *
 * The head layout follows the real exports in the shared data (Ultralytics 8.4.x): the box and
 * class branches are reshaped separately and concatenated into two tensors, so there is no Split
 * [64, nc] in the graph (older 8.0 exports concatenated per level and split afterwards; the op
 * types and all parameter shapes are the same).
 *
 * Weights are seeded (xorshift64*) and BatchNorm is folded for real: while the graph is emitted,
 * a shadow float32 evaluation (synth_eval.c, same semantics as the nodes) runs it on a
 * deterministic calibration image (eb_synth__calib_size: 128 for n/s, 96 for m/l, 64 for x), and
 * every conv gets w' = w * gamma / std, b' = beta - mean * gamma / std from the per-channel mean
 * and std of its pre-activation (gamma ~ U(0.6, 1.2), beta ~ N(0, 0.1); std floored, see
 * eb_synth__fold_bn in synth_calib.c). Head: the box branch's last conv is normalised with bias
 * 1.0; the class branch's last conv is normalised, times one global gain
 * (eb_synth__pick_class_gain: about 0.3% of the calibration anchors pass 0.25), plus
 * Ultralytics' bias log(5 / nc / (imgsz / stride)^2); DFL unchanged.
 *
 * The architecture is data: one table of layer rows per arch (yolov8_layers, yolo11_layers, as
 * in Ultralytics' yolov8.yaml / yolo11.yaml), interpreted by build_graph. The ONNX protobuf
 * emission is in synth_onnx.c, the calibration arithmetic in synth_calib.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/onnx/onnx_wire.h"
#include "model/model.h"
#include "model/synth_eval.h"
#include "model/synth_internal.h"

#define SILU_M2 0.355 /* E[silu(z)^2] for z ~ N(0, 1) */

/* Head conv kinds for conv_ex (`plain`). */
enum { CONV_MODULE = 0, CONV_BOX = 1, CONV_CLS = 2 };

struct syn {
    const struct eb_synth_options *o;
    struct eb_pb_buf nodes, inits; /* GraphProto fields 1 and 5, in order */
    uint64_t rng;
    float *scratch;
    size_t scratch_cap;
    int oom;
    int v11;
    double depth, width;
    int max_ch;
    int c3k; /* YOLO11 m/l/x: C3k inside every C3k2 */
    /* shadow evaluation */
    float **bufs; /* every evaluated tensor, freed at the end */
    size_t n_bufs, cap_bufs;
    float **stored; /* replay: folded weight and bias of every conv, in emission order */
    size_t n_stored, cap_stored, replay_i;
    int store, replay; /* record the folded weights / evaluate with the recorded ones */
    int no_eval;       /* Detect's first pass: skip the box branch */
    int cls_dry;       /* Detect's first pass: class convs leave the normalised logits */
    double cls_gain;
    struct eb_synth__act head_box[3], head_cls[3]; /* last box / class conv of each level */
    float head_bias[3];                            /* class bias of each level */
    float *out; /* output0 [4+nc][nanch] of the evaluation (replay only) */
    size_t n_out;
};

static uint64_t rng_next(struct syn *s)
{
    return eb_synth__rng_next(&s->rng);
}

/* Uniform in [-1, 1). */
static float rng_uniform(struct syn *s)
{
    return (float)((double)(rng_next(s) >> 40) / 8388608.0 - 1.0);
}

static float *scratch(struct syn *s, size_t n)
{
    if (n > s->scratch_cap) {
        float *p = realloc(s->scratch, n * sizeof(float));
        if (p == NULL) {
            s->oom = 1;
            return NULL;
        }
        s->scratch = p;
        s->scratch_cap = n;
    }
    return s->scratch;
}

/* A tensor of the shadow evaluation, owned by the synthesizer; NULL (and s->oom) on failure. */
static float *talloc(struct syn *s, size_t n)
{
    float *p;
    if (s->oom)
        return NULL;
    if (s->n_bufs == s->cap_bufs) {
        size_t cap = s->cap_bufs ? 2 * s->cap_bufs : 256;
        float **b = realloc(s->bufs, cap * sizeof(*b));
        if (b == NULL) {
            s->oom = 1;
            return NULL;
        }
        s->bufs = b;
        s->cap_bufs = cap;
    }
    p = malloc((n ? n : 1) * sizeof(float));
    if (p == NULL) {
        s->oom = 1;
        return NULL;
    }
    s->bufs[s->n_bufs++] = p;
    return p;
}

static void free_bufs(struct syn *s)
{
    for (size_t i = 0; i < s->n_bufs; i++)
        free(s->bufs[i]);
    s->n_bufs = 0;
}

/* Records a copy of n floats for the replay (every conv stores its weight, then its bias). */
static void store_push(struct syn *s, const float *v, size_t n)
{
    float *p;
    if (s->n_stored == s->cap_stored) {
        size_t cap = s->cap_stored ? 2 * s->cap_stored : 256;
        float **b = realloc(s->stored, cap * sizeof(*b));
        if (b == NULL) {
            s->oom = 1;
            return;
        }
        s->stored = b;
        s->cap_stored = cap;
    }
    p = malloc((n ? n : 1) * sizeof(float));
    if (p == NULL) {
        s->oom = 1;
        return;
    }
    memcpy(p, v, n * sizeof(float));
    s->stored[s->n_stored++] = p;
}

static void store_truncate(struct syn *s, size_t n)
{
    while (s->n_stored > n)
        free(s->stored[--s->n_stored]);
}

/* ---- initializers and nodes (synth_onnx.c writes the protobuf) ---- */

static void init_f32(struct syn *s, const char *name, const int64_t *dims, int rank,
                     const float *data)
{
    if (eb_synth__init_f32(&s->inits, name, dims, rank, data) != 0)
        s->oom = 1;
}

static void init_i64(struct syn *s, const char *name, const int64_t *data, int64_t n)
{
    eb_synth__init_i64(&s->inits, name, data, n);
}

static void node(struct syn *s, const char *op, const char *name, const char *const *ins, int n_in,
                 const char *const *outs, int n_out, const struct eb_pb_buf *attrs)
{
    eb_synth__node(&s->nodes, op, name, ins, n_in, outs, n_out, attrs);
}

/* One-input, one-output node "<scope>/<op><sfx>" with output "<scope>/<op><sfx>_output_0". */
static void node1(struct syn *s, const char *op, const char *scope, const char *sfx,
                  const char *const *ins, int n_in, char *out, const struct eb_pb_buf *attrs)
{
    char name[EB_SYNTH__NAME_MAX], oname[EB_SYNTH__NAME_MAX];
    const char *outs[1] = {oname};
    /* `out` may alias one of `ins`: emit the node before overwriting it. */
    eb_synth__fmt(name, sizeof(name), "%s/%s%s", scope, op, sfx);
    eb_synth__fmt(oname, sizeof(oname), "%s_output_0", name);
    node(s, op, name, ins, n_in, outs, 1, attrs);
    memcpy(out, oname, EB_SYNTH__NAME_MAX);
}

/* "/model.2/cv1/conv" -> "model.2.cv1.conv" */
static void param_prefix(const char *scope, char *out, size_t cap)
{
    size_t j = 0;
    for (size_t i = scope[0] == '/' ? 1 : 0; scope[i] != '\0' && j + 1 < cap; i++)
        out[j++] = scope[i] == '/' ? '.' : scope[i];
    out[j] = '\0';
}

/* ---- layers ---- */

/*
 * Conv2d (+ SiLU when `act`) with folded-BN weights and bias. `scope` is the module
 * ("/model.2/cv1"); the Conv node goes in "<scope>/conv" for Conv modules (plain 0) or directly
 * in scope for the head's last nn.Conv2d (plain CONV_BOX: normalised, bias `bias_value`;
 * CONV_CLS: normalised, times the class gain, bias `bias_value`).
 */
static struct eb_synth__act conv_ex(struct syn *s, const char *scope, const struct eb_synth__act *x,
                                    int c2, int k, int stride, int groups, int act, int plain,
                                    float bias_value)
{
    struct eb_synth__act y;
    char cscope[EB_SYNTH__NAME_MAX], pfx[EB_SYNTH__NAME_MAX], wname[EB_SYNTH__NAME_MAX + 8],
        bname[EB_SYNTH__NAME_MAX + 8];
    int cin_g = x->c / groups;
    int64_t wd[4] = {c2, cin_g, k, k}, bd[1] = {c2};
    size_t per = (size_t)cin_g * (size_t)k * (size_t)k, nw = (size_t)c2 * per;
    double fan_in = (double)cin_g * k * k;
    double std = 1.0 / sqrt(fan_in * (x->m2 > 1e-6 ? x->m2 : 1e-6));
    float a = (float)(std * sqrt(3.0));
    float *w, *bias, *gamma, *beta;
    struct eb_pb_buf at;
    int64_t ks[2] = {k, k}, st[2] = {stride, stride}, dil[2] = {1, 1},
            pads[4] = {k / 2, k / 2, k / 2, k / 2};

    if (plain)
        eb_synth__fmt(cscope, sizeof(cscope), "%s", scope);
    else
        eb_synth__fmt(cscope, sizeof(cscope), "%s/conv", scope);
    param_prefix(cscope, pfx, sizeof(pfx));
    eb_synth__fmt(wname, sizeof(wname), "%s.weight", pfx);
    eb_synth__fmt(bname, sizeof(bname), "%s.bias", pfx);
    y = *x;
    y.d = NULL;
    y.c = c2;
    y.h = (x->h + 2 * (k / 2) - k) / stride + 1;
    y.w = (x->w + 2 * (k / 2) - k) / stride + 1;
    y.eh = (x->eh + 2 * (k / 2) - k) / stride + 1;
    y.ew = (x->ew + 2 * (k / 2) - k) / stride + 1;
    w = scratch(s, nw + 3 * (size_t)c2);
    if (w == NULL)
        return y;
    bias = w + nw;
    gamma = bias + c2;
    beta = gamma + c2;
    if (s->replay && s->replay_i + 2 <= s->n_stored) {
        memcpy(w, s->stored[s->replay_i++], nw * sizeof(float));
        memcpy(bias, s->stored[s->replay_i++], (size_t)c2 * sizeof(float));
    } else {
        for (size_t i = 0; i < nw; i++)
            w[i] = a * rng_uniform(s);
        for (int i = 0; i < c2; i++) {
            gamma[i] = plain ? 1.0f : 0.9f + 0.3f * rng_uniform(s); /* U(0.6, 1.2) */
            bias[i] = plain ? bias_value : 0.0f;
        }
        for (int i = 0; i < c2 && !plain; i++) {
            /* N(0, 0.1) as a sum of three uniforms (Irwin-Hall, unit variance) */
            float z = rng_uniform(s) + rng_uniform(s) + rng_uniform(s);
            beta[i] = 0.1f * z;
            bias[i] = beta[i];
        }
    }
    if (x->d != NULL && !s->no_eval && !s->oom) {
        size_t n = (size_t)y.eh * (size_t)y.ew;
        y.d = talloc(s, (size_t)c2 * n);
        if (y.d != NULL) {
            eb_synth__conv2d(x->d, x->c, x->eh, x->ew, w, s->replay ? bias : NULL, c2, k, stride,
                             groups, y.d);
            if (!s->replay) {
                /* BN fold; the head's last convs: normalised, the box one with bias
                 * `bias_value`, the class one times the class gain plus `bias_value` (both
                 * left out in Detect's first pass). */
                size_t nx = (size_t)x->c * (size_t)x->eh * (size_t)x->ew;
                int dry = plain == CONV_CLS && s->cls_dry;
                double gain = plain == CONV_CLS && !dry ? s->cls_gain : 1.0;
                double shift = dry ? 0.0 : bias_value;
                if (eb_synth__fold_bn(w, per, bias, plain ? NULL : gamma, beta, c2, y.d, n, x->d,
                                      nx, gain, shift) != 0)
                    s->oom = 1;
            }
        }
    }
    if (s->store) {
        store_push(s, w, nw);
        store_push(s, bias, (size_t)c2);
    }
    init_f32(s, wname, wd, 4, w);
    init_f32(s, bname, bd, 1, bias);

    eb_pb_buf_init(&at);
    eb_synth__attr_ints(&at, "dilations", dil, 2);
    eb_synth__attr_int(&at, "group", groups);
    eb_synth__attr_ints(&at, "kernel_shape", ks, 2);
    eb_synth__attr_ints(&at, "pads", pads, 4);
    eb_synth__attr_ints(&at, "strides", st, 2);
    {
        const char *ins[3] = {x->name, wname, bname};
        node1(s, "Conv", cscope, "", ins, 3, y.name, &at);
    }
    if (eb_pb_buf_error(&at))
        s->oom = 1;
    eb_pb_buf_fini(&at);
    y.m2 = 1.0 + (plain ? (double)bias_value * bias_value : 0.0033);
    if (act) {
        char ascope[EB_SYNTH__NAME_MAX], sig[EB_SYNTH__NAME_MAX];
        const char *ins1[1] = {y.name};
        eb_synth__fmt(ascope, sizeof(ascope), "%s/act", scope);
        node1(s, "Sigmoid", ascope, "", ins1, 1, sig, NULL);
        {
            const char *ins2[2] = {y.name, sig};
            node1(s, "Mul", ascope, "", ins2, 2, y.name, NULL);
        }
        y.m2 = SILU_M2;
        if (y.d != NULL)
            eb_synth__silu(y.d, (size_t)c2 * (size_t)y.eh * (size_t)y.ew);
    }
    return y;
}

static struct eb_synth__act conv(struct syn *s, const char *scope, const struct eb_synth__act *x,
                                 int c2, int k, int stride, int groups, int act)
{
    return conv_ex(s, scope, x, c2, k, stride, groups, act, 0, 0.0f);
}

static struct eb_synth__act add(struct syn *s, const char *scope, const char *sfx,
                                const struct eb_synth__act *a, const struct eb_synth__act *b)
{
    struct eb_synth__act y = *a;
    const char *ins[2] = {a->name, b->name};
    node1(s, "Add", scope, sfx, ins, 2, y.name, NULL);
    y.m2 = a->m2 + b->m2;
    y.d = NULL;
    if (a->d != NULL && b->d != NULL) {
        size_t n = (size_t)a->c * (size_t)a->eh * (size_t)a->ew;
        y.d = talloc(s, n);
        for (size_t i = 0; y.d != NULL && i < n; i++)
            y.d[i] = a->d[i] + b->d[i];
    }
    return y;
}

static struct eb_synth__act concat(struct syn *s, const char *scope, const char *sfx,
                                   const struct eb_synth__act *xs, int n)
{
    struct eb_synth__act y = xs[0];
    const char *ins[8];
    struct eb_pb_buf at;
    double m2 = 0;
    int c = 0, have = 1;
    size_t plane = (size_t)xs[0].eh * (size_t)xs[0].ew, off = 0;
    for (int i = 0; i < n; i++) {
        ins[i] = xs[i].name;
        c += xs[i].c;
        m2 += xs[i].m2 * xs[i].c;
        have &= xs[i].d != NULL;
    }
    y.d = have ? talloc(s, (size_t)c * plane) : NULL;
    for (int i = 0; y.d != NULL && i < n; i++) {
        memcpy(y.d + off, xs[i].d, (size_t)xs[i].c * plane * sizeof(float));
        off += (size_t)xs[i].c * plane;
    }
    eb_pb_buf_init(&at);
    eb_synth__attr_int(&at, "axis", 1);
    node1(s, "Concat", scope, sfx, ins, n, y.name, &at);
    eb_pb_buf_fini(&at);
    y.c = c;
    y.m2 = m2 / c;
    return y;
}

/* Split along channels into n parts of the given sizes ("split" input, opset >= 13). */
static void split(struct syn *s, const char *scope, const struct eb_synth__act *x, const int *sizes,
                  int n, struct eb_synth__act *outs, int axis_rank_dim)
{
    char name[EB_SYNTH__NAME_MAX], cname[EB_SYNTH__NAME_MAX];
    char onames[4][EB_SYNTH__NAME_MAX];
    const char *op[4];
    int64_t sz[4];
    struct eb_pb_buf at;
    eb_synth__fmt(name, sizeof(name), "%s/Split", scope);
    eb_synth__fmt(cname, sizeof(cname), "%s/Split_sizes", scope);
    for (int i = 0; i < n; i++) {
        sz[i] = sizes[i];
        eb_synth__fmt(onames[i], EB_SYNTH__NAME_MAX, "%s_output_%d", name, i);
        op[i] = onames[i];
    }
    init_i64(s, cname, sz, n);
    eb_pb_buf_init(&at);
    eb_synth__attr_int(&at, "axis", axis_rank_dim);
    {
        const char *ins[2] = {x->name, cname};
        node(s, "Split", name, ins, 2, op, n, &at);
    }
    eb_pb_buf_fini(&at);
    for (int i = 0, off = 0; i < n; i++) {
        outs[i] = *x;
        memcpy(outs[i].name, onames[i], EB_SYNTH__NAME_MAX);
        outs[i].c = sizes[i];
        /* channel split of batch 1 NCHW: a contiguous view of the input */
        outs[i].d = x->d != NULL && axis_rank_dim == 1
                        ? x->d + (size_t)off * (size_t)x->eh * (size_t)x->ew
                        : NULL;
        off += sizes[i];
    }
}

static struct eb_synth__act bottleneck(struct syn *s, const char *scope,
                                       const struct eb_synth__act *x, int c2, int shortcut,
                                       double e)
{
    char sc[EB_SYNTH__NAME_MAX];
    int c_ = (int)(c2 * e);
    struct eb_synth__act a, b;
    eb_synth__fmt(sc, sizeof(sc), "%s/cv1", scope);
    a = conv(s, sc, x, c_, 3, 1, 1, 1);
    eb_synth__fmt(sc, sizeof(sc), "%s/cv2", scope);
    b = conv(s, sc, &a, c2, 3, 1, 1, 1);
    if (shortcut && x->c == c2)
        b = add(s, scope, "", x, &b);
    return b;
}

static struct eb_synth__act c3k(struct syn *s, const char *scope, const struct eb_synth__act *x,
                                int c2, int n, int shortcut)
{
    char sc[EB_SYNTH__NAME_MAX];
    int c_ = (int)(c2 * 0.5);
    struct eb_synth__act a, b, cat[2];
    eb_synth__fmt(sc, sizeof(sc), "%s/cv1", scope);
    a = conv(s, sc, x, c_, 1, 1, 1, 1);
    for (int i = 0; i < n; i++) {
        eb_synth__fmt(sc, sizeof(sc), "%s/m/m.%d", scope, i);
        a = bottleneck(s, sc, &a, c_, shortcut, 1.0);
    }
    eb_synth__fmt(sc, sizeof(sc), "%s/cv2", scope);
    b = conv(s, sc, x, c_, 1, 1, 1, 1);
    cat[0] = a;
    cat[1] = b;
    a = concat(s, scope, "", cat, 2);
    eb_synth__fmt(sc, sizeof(sc), "%s/cv3", scope);
    return conv(s, sc, &a, c2, 1, 1, 1, 1);
}

/* C2f (YOLOv8) or C3k2 (YOLO11; `kind` 1 = Bottleneck(e=0.5), 2 = C3k). */
static struct eb_synth__act c2f(struct syn *s, const char *scope, const struct eb_synth__act *x,
                                int c2, int n, int shortcut, int kind, double e)
{
    char sc[EB_SYNTH__NAME_MAX];
    int c = (int)(c2 * e);
    int sizes[2] = {c, c};
    struct eb_synth__act y, parts[8];
    eb_synth__fmt(sc, sizeof(sc), "%s/cv1", scope);
    y = conv(s, sc, x, 2 * c, 1, 1, 1, 1);
    split(s, scope, &y, sizes, 2, parts, 1);
    for (int i = 0; i < n && i < 6; i++) {
        eb_synth__fmt(sc, sizeof(sc), "%s/m.%d", scope, i);
        if (kind == 0)
            parts[2 + i] = bottleneck(s, sc, &parts[1 + i], c, shortcut, 1.0);
        else if (kind == 1)
            parts[2 + i] = bottleneck(s, sc, &parts[1 + i], c, shortcut, 0.5);
        else
            parts[2 + i] = c3k(s, sc, &parts[1 + i], c, 2, shortcut);
    }
    y = concat(s, scope, "", parts, 2 + (n < 6 ? n : 6));
    eb_synth__fmt(sc, sizeof(sc), "%s/cv2", scope);
    return conv(s, sc, &y, c2, 1, 1, 1, 1);
}

static struct eb_synth__act sppf(struct syn *s, const char *scope, const struct eb_synth__act *x,
                                 int c2)
{
    char sc[EB_SYNTH__NAME_MAX];
    struct eb_synth__act parts[4];
    int64_t ks[2] = {5, 5}, st[2] = {1, 1}, dil[2] = {1, 1}, pads[4] = {2, 2, 2, 2};
    struct eb_pb_buf at;
    eb_synth__fmt(sc, sizeof(sc), "%s/cv1", scope);
    parts[0] = conv(s, sc, x, x->c / 2, 1, 1, 1, 1);
    eb_pb_buf_init(&at);
    eb_synth__attr_int(&at, "ceil_mode", 0);
    eb_synth__attr_ints(&at, "dilations", dil, 2);
    eb_synth__attr_ints(&at, "kernel_shape", ks, 2);
    eb_synth__attr_ints(&at, "pads", pads, 4);
    eb_synth__attr_ints(&at, "strides", st, 2);
    for (int i = 1; i < 4; i++) {
        const char *ins[1] = {parts[i - 1].name};
        char mscope[EB_SYNTH__NAME_MAX];
        eb_synth__fmt(mscope, sizeof(mscope), i == 1 ? "%s/m" : "%s/m_%d", scope, i - 1);
        parts[i] = parts[i - 1];
        node1(s, "MaxPool", mscope, "", ins, 1, parts[i].name, &at);
        parts[i].d = NULL;
        if (parts[i - 1].d != NULL) {
            parts[i].d = talloc(s, (size_t)parts[i].c * (size_t)parts[i].eh * (size_t)parts[i].ew);
            if (parts[i].d != NULL)
                eb_synth__maxpool5(parts[i - 1].d, parts[i].c, parts[i].eh, parts[i].ew,
                                   parts[i].d);
        }
        /* The max over a 5x5 window of SiLU outputs has a larger second moment. */
        parts[i].m2 = parts[i - 1].m2 * (i == 1 ? 2.5 : 1.3);
    }
    eb_pb_buf_fini(&at);
    parts[0] = concat(s, scope, "", parts, 4);
    eb_synth__fmt(sc, sizeof(sc), "%s/cv2", scope);
    return conv(s, sc, &parts[0], c2, 1, 1, 1, 1);
}

static void shape_const(struct syn *s, char *name, const char *scope, const char *sfx,
                        const int64_t *v, int n)
{
    eb_synth__fmt(name, EB_SYNTH__NAME_MAX, "%s/Constant%s_output_0", scope, sfx);
    init_i64(s, name, v, n);
}

static void scalar_const(struct syn *s, char *name, const char *scope, const char *sfx, float v)
{
    eb_synth__fmt(name, EB_SYNTH__NAME_MAX, "%s/Constant%s_output_0", scope, sfx);
    init_f32(s, name, NULL, 0, &v);
}

/* Attention(dim, num_heads, attn_ratio=0.5) of YOLO11's PSABlock. */
static struct eb_synth__act attention(struct syn *s, const char *scope,
                                      const struct eb_synth__act *x, int heads)
{
    char sc[EB_SYNTH__NAME_MAX], c0[EB_SYNTH__NAME_MAX], c1[EB_SYNTH__NAME_MAX],
        c3[EB_SYNTH__NAME_MAX];
    int dim = x->c, head_dim = dim / heads, key_dim = head_dim / 2;
    int h = dim + 2 * key_dim * heads;
    int64_t n = (int64_t)x->h * x->w;
    int64_t shp[4] = {1, heads, 2 * key_dim + head_dim, n};
    int64_t shp2[4] = {1, dim, x->h, x->w};
    int64_t perm[4] = {0, 1, 3, 2};
    int sizes[3] = {key_dim, key_dim, head_dim};
    struct eb_synth__act qkv, r, parts[3], qt, mm, sm, at2, mm2, xo, v4, pe, sum;
    struct eb_pb_buf pa, ax;

    eb_synth__fmt(sc, sizeof(sc), "%s/qkv", scope);
    qkv = conv(s, sc, x, h, 1, 1, 1, 0);
    shape_const(s, c0, scope, "", shp, 4);
    {
        const char *ins[2] = {qkv.name, c0};
        r = qkv;
        node1(s, "Reshape", scope, "", ins, 2, r.name, NULL);
    }
    split(s, scope, &r, sizes, 3, parts, 2);
    eb_pb_buf_init(&pa);
    eb_synth__attr_ints(&pa, "perm", perm, 4);
    {
        const char *ins[1] = {parts[0].name};
        qt = parts[0];
        node1(s, "Transpose", scope, "", ins, 1, qt.name, &pa);
    }
    {
        const char *ins[2] = {qt.name, parts[1].name};
        mm = qt;
        node1(s, "MatMul", scope, "", ins, 2, mm.name, NULL);
    }
    scalar_const(s, c1, scope, "_1", (float)(1.0 / sqrt((double)key_dim)));
    {
        const char *ins[2] = {mm.name, c1};
        sm = mm;
        node1(s, "Mul", scope, "", ins, 2, sm.name, NULL);
    }
    eb_pb_buf_init(&ax);
    eb_synth__attr_int(&ax, "axis", -1);
    {
        const char *ins[1] = {sm.name};
        node1(s, "Softmax", scope, "", ins, 1, sm.name, &ax);
    }
    eb_pb_buf_fini(&ax);
    {
        const char *ins[1] = {sm.name};
        at2 = sm;
        node1(s, "Transpose", scope, "_1", ins, 1, at2.name, &pa);
    }
    eb_pb_buf_fini(&pa);
    {
        const char *ins[2] = {parts[2].name, at2.name};
        mm2 = sm;
        node1(s, "MatMul", scope, "_1", ins, 2, mm2.name, NULL);
    }
    shape_const(s, c3, scope, "_3", shp2, 4);
    {
        const char *ins[2] = {mm2.name, c3};
        xo = *x;
        node1(s, "Reshape", scope, "_1", ins, 2, xo.name, NULL);
        xo.m2 = 0.3; /* attention-weighted average of unit-variance v */
    }
    {
        const char *ins[2] = {parts[2].name, c3};
        v4 = *x;
        node1(s, "Reshape", scope, "_2", ins, 2, v4.name, NULL);
        v4.m2 = 1.0;
    }
    xo.d = v4.d = NULL;
    if (qkv.d != NULL) {
        size_t ne = (size_t)x->eh * (size_t)x->ew;
        xo.d = talloc(s, (size_t)dim * ne);
        v4.d = talloc(s, (size_t)dim * ne);
        {
            float *row = talloc(s, ne);
            if (xo.d != NULL && v4.d != NULL && row != NULL)
                eb_synth__attention(qkv.d, heads, key_dim, head_dim, (int)ne, xo.d, v4.d, row);
        }
    }
    eb_synth__fmt(sc, sizeof(sc), "%s/pe", scope);
    pe = conv(s, sc, &v4, dim, 3, 1, dim, 0);
    sum = add(s, scope, "", &xo, &pe);
    eb_synth__fmt(sc, sizeof(sc), "%s/proj", scope);
    return conv(s, sc, &sum, dim, 1, 1, 1, 0);
}

static struct eb_synth__act c2psa(struct syn *s, const char *scope, const struct eb_synth__act *x,
                                  int n)
{
    char sc[EB_SYNTH__NAME_MAX], bs[EB_SYNTH__NAME_MAX];
    int c = x->c / 2;
    int sizes[2] = {c, c};
    struct eb_synth__act y, parts[2], b;
    eb_synth__fmt(sc, sizeof(sc), "%s/cv1", scope);
    y = conv(s, sc, x, 2 * c, 1, 1, 1, 1);
    split(s, scope, &y, sizes, 2, parts, 1);
    b = parts[1];
    for (int i = 0; i < n; i++) {
        struct eb_synth__act a, f;
        eb_synth__fmt(bs, sizeof(bs), "%s/m/m.%d", scope, i);
        eb_synth__fmt(sc, sizeof(sc), "%s/attn", bs);
        a = attention(s, sc, &b, c / 64 > 0 ? c / 64 : 1);
        b = add(s, bs, "", &b, &a);
        eb_synth__fmt(sc, sizeof(sc), "%s/ffn/ffn.0", bs);
        f = conv(s, sc, &b, 2 * c, 1, 1, 1, 1);
        eb_synth__fmt(sc, sizeof(sc), "%s/ffn/ffn.1", bs);
        f = conv(s, sc, &f, c, 1, 1, 1, 0);
        b = add(s, bs, "_1", &b, &f);
    }
    parts[1] = b;
    y = concat(s, scope, "", parts, 2);
    eb_synth__fmt(sc, sizeof(sc), "%s/cv2", scope);
    return conv(s, sc, &y, x->c, 1, 1, 1, 1);
}

static struct eb_synth__act upsample(struct syn *s, const char *scope,
                                     const struct eb_synth__act *x)
{
    char cname[EB_SYNTH__NAME_MAX];
    float sc[4] = {1.0f, 1.0f, 2.0f, 2.0f};
    int64_t d = 4;
    struct eb_synth__act y = *x;
    struct eb_pb_buf at;
    eb_synth__fmt(cname, sizeof(cname), "%s/Constant_output_0", scope);
    init_f32(s, cname, &d, 1, sc);
    eb_pb_buf_init(&at);
    eb_synth__attr_str(&at, "coordinate_transformation_mode", "asymmetric");
    eb_synth__attr_float(&at, "cubic_coeff_a", -0.75f);
    eb_synth__attr_str(&at, "mode", "nearest");
    eb_synth__attr_str(&at, "nearest_mode", "floor");
    {
        const char *ins[3] = {x->name, "", cname};
        node1(s, "Resize", scope, "", ins, 3, y.name, &at);
    }
    eb_pb_buf_fini(&at);
    y.h *= 2;
    y.w *= 2;
    y.eh *= 2;
    y.ew *= 2;
    y.d = NULL;
    if (x->d != NULL) {
        y.d = talloc(s, (size_t)y.c * (size_t)y.eh * (size_t)y.ew);
        if (y.d != NULL)
            eb_synth__resize2x(x->d, x->c, x->eh, x->ew, y.d);
    }
    return y;
}

/* ---- architecture ---- */

static int ch(const struct syn *s, int c)
{
    double v = (c < s->max_ch ? c : s->max_ch) * s->width;
    return (int)(ceil(v / 8.0) * 8.0);
}

static int rep(const struct syn *s, int n)
{
    int r = (int)floor(n * s->depth + 0.5);
    return n > 1 ? (r > 1 ? r : 1) : n;
}

static void scope_of(char *out, int layer)
{
    eb_synth__fmt(out, EB_SYNTH__NAME_MAX, "/model.%d", layer);
}

/* The evaluation of output0 (replay): concatenates the levels and runs the DFL/dist2bbox tail. */
static void detect_tail(struct syn *s, int nc, const int *stride)
{
    size_t nanch = 0, k = 0, off = 0;
    float *box, *cls, *ax, *ay, *sd;
    for (int i = 0; i < 3; i++) {
        if (s->head_box[i].d == NULL || s->head_cls[i].d == NULL)
            return;
        nanch += (size_t)s->head_box[i].eh * (size_t)s->head_box[i].ew;
    }
    box = talloc(s, 64 * nanch);
    cls = talloc(s, (size_t)nc * nanch);
    ax = talloc(s, 3 * nanch);
    s->out = malloc((size_t)(4 + nc) * nanch * sizeof(float));
    if (box == NULL || cls == NULL || ax == NULL || s->out == NULL) {
        s->oom = 1;
        return;
    }
    ay = ax + nanch;
    sd = ay + nanch;
    for (int i = 0; i < 3; i++) {
        size_t n = (size_t)s->head_box[i].eh * (size_t)s->head_box[i].ew;
        for (int c = 0; c < 64; c++)
            memcpy(box + (size_t)c * nanch + off, s->head_box[i].d + (size_t)c * n,
                   n * sizeof(float));
        for (int c = 0; c < nc; c++)
            memcpy(cls + (size_t)c * nanch + off, s->head_cls[i].d + (size_t)c * n,
                   n * sizeof(float));
        for (int y = 0; y < s->head_box[i].eh; y++)
            for (int x = 0; x < s->head_box[i].ew; x++) {
                ax[k] = (float)x + 0.5f;
                ay[k] = (float)y + 0.5f;
                sd[k] = (float)stride[i];
                k++;
            }
        off += n;
    }
    eb_synth__detect_tail(box, cls, nc, nanch, ax, ay, sd, s->out);
    s->n_out = (size_t)(4 + nc) * nanch;
}

/* Detect head on three levels; writes "output0". */
static void detect(struct syn *s, int layer, const struct eb_synth__act *lv, int nc)
{
    char sc[EB_SYNTH__NAME_MAX], hs[EB_SYNTH__NAME_MAX], cbox[EB_SYNTH__NAME_MAX],
        ccls[EB_SYNTH__NAME_MAX];
    char names_box[3][EB_SYNTH__NAME_MAX], names_cls[3][EB_SYNTH__NAME_MAX];
    int c2 = lv[0].c / 4 > 64 ? lv[0].c / 4 : 64;
    int c3 = lv[0].c > (nc < 100 ? nc : 100) ? lv[0].c : (nc < 100 ? nc : 100);
    int64_t nanch = 0;
    int stride[3];
    struct eb_pb_buf at;

    if (c2 < 16)
        c2 = 16;
    scope_of(hs, layer);
    {
        int64_t v[3] = {1, 64, -1};
        shape_const(s, cbox, hs, "", v, 3);
        v[1] = nc;
        shape_const(s, ccls, hs, "_3", v, 3);
    }
    for (int i = 0; i < 3; i++) {
        struct eb_synth__act b, c;
        char sfx[16];
        stride[i] = s->o->imgsz / lv[i].h;
        nanch += (int64_t)lv[i].h * lv[i].w;
        s->no_eval = s->cls_dry; /* the first pass needs the class branch only */
        eb_synth__fmt(sc, sizeof(sc), "%s/cv2.%d/cv2.%d.0", hs, i, i);
        b = conv(s, sc, &lv[i], c2, 3, 1, 1, 1);
        eb_synth__fmt(sc, sizeof(sc), "%s/cv2.%d/cv2.%d.1", hs, i, i);
        b = conv(s, sc, &b, c2, 3, 1, 1, 1);
        eb_synth__fmt(sc, sizeof(sc), "%s/cv2.%d/cv2.%d.2", hs, i, i);
        b = conv_ex(s, sc, &b, 64, 1, 1, 1, 0, CONV_BOX, 1.0f);
        s->no_eval = 0;
        s->head_box[i] = b;
        if (s->v11) {
            eb_synth__fmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.0/cv3.%d.0.0", hs, i, i, i);
            c = conv(s, sc, &lv[i], lv[i].c, 3, 1, lv[i].c, 1);
            eb_synth__fmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.0/cv3.%d.0.1", hs, i, i, i);
            c = conv(s, sc, &c, c3, 1, 1, 1, 1);
            eb_synth__fmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.1/cv3.%d.1.0", hs, i, i, i);
            c = conv(s, sc, &c, c3, 3, 1, c3, 1);
            eb_synth__fmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.1/cv3.%d.1.1", hs, i, i, i);
            c = conv(s, sc, &c, c3, 1, 1, 1, 1);
        } else {
            eb_synth__fmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.0", hs, i, i);
            c = conv(s, sc, &lv[i], c3, 3, 1, 1, 1);
            eb_synth__fmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.1", hs, i, i);
            c = conv(s, sc, &c, c3, 3, 1, 1, 1);
        }
        {
            double r = (double)s->o->imgsz / stride[i];
            float bias = (float)log(5.0 / nc / (r * r));
            eb_synth__fmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.2", hs, i, i);
            c = conv_ex(s, sc, &c, nc, 1, 1, 1, 0, CONV_CLS, bias);
            s->head_cls[i] = c;
            s->head_bias[i] = bias;
        }
        {
            const char *ins[2] = {b.name, cbox};
            /* The first head's Reshape has no suffix (as in the exported models). */
            sfx[0] = '\0';
            if (i > 0)
                eb_synth__fmt(sfx, sizeof(sfx), "_%d", i);
            node1(s, "Reshape", hs, sfx, ins, 2, names_box[i], NULL);
        }
        {
            const char *ins[2] = {c.name, ccls};
            eb_synth__fmt(sfx, sizeof(sfx), "_%d", i + 3);
            node1(s, "Reshape", hs, sfx, ins, 2, names_cls[i], NULL);
        }
    }
    {
        char box[EB_SYNTH__NAME_MAX], cls[EB_SYNTH__NAME_MAX], dsc[EB_SYNTH__NAME_MAX],
            t[EB_SYNTH__NAME_MAX], dfl[EB_SYNTH__NAME_MAX], cst[EB_SYNTH__NAME_MAX],
            anc[EB_SYNTH__NAME_MAX], anc2[EB_SYNTH__NAME_MAX], two[EB_SYNTH__NAME_MAX],
            strd[EB_SYNTH__NAME_MAX], lt[EB_SYNTH__NAME_MAX], rb[EB_SYNTH__NAME_MAX],
            x1[EB_SYNTH__NAME_MAX], x2[EB_SYNTH__NAME_MAX], sm[EB_SYNTH__NAME_MAX],
            cxy[EB_SYNTH__NAME_MAX], wh[EB_SYNTH__NAME_MAX], cat[EB_SYNTH__NAME_MAX],
            dbox[EB_SYNTH__NAME_MAX], sig[EB_SYNTH__NAME_MAX], s0[EB_SYNTH__NAME_MAX],
            s2[EB_SYNTH__NAME_MAX], s4[EB_SYNTH__NAME_MAX], sax[EB_SYNTH__NAME_MAX];
        int64_t v4[4] = {1, 4, 16, nanch}, v3[3] = {1, 4, nanch}, perm[4] = {0, 2, 1, 3};
        int64_t one = 1, zero = 0, i2 = 2, i4 = 4;
        struct eb_synth__act boxa;
        float *buf;
        size_t k = 0;

        eb_pb_buf_init(&at);
        eb_synth__attr_int(&at, "axis", -1);
        {
            const char *ins[3] = {names_box[0], names_box[1], names_box[2]};
            node1(s, "Concat", hs, "", ins, 3, box, &at);
        }
        {
            const char *ins[3] = {names_cls[0], names_cls[1], names_cls[2]};
            node1(s, "Concat", hs, "_1", ins, 3, cls, &at);
        }
        eb_pb_buf_fini(&at);
        eb_synth__fmt(dsc, sizeof(dsc), "%s/dfl", hs);
        shape_const(s, cst, dsc, "", v4, 4);
        {
            const char *ins[2] = {box, cst};
            node1(s, "Reshape", dsc, "", ins, 2, t, NULL);
        }
        eb_pb_buf_init(&at);
        eb_synth__attr_ints(&at, "perm", perm, 4);
        {
            const char *ins[1] = {t};
            node1(s, "Transpose", dsc, "", ins, 1, t, &at);
        }
        eb_pb_buf_fini(&at);
        eb_pb_buf_init(&at);
        eb_synth__attr_int(&at, "axis", 1);
        {
            const char *ins[1] = {t};
            node1(s, "Softmax", dsc, "", ins, 1, t, &at);
        }
        eb_pb_buf_fini(&at);
        /* DFL projection: Conv2d(16, 1, 1, bias=False) with weights arange(16). */
        {
            char cs[EB_SYNTH__NAME_MAX];
            int64_t wd[4] = {1, 16, 1, 1}, ks[2] = {1, 1}, st1[2] = {1, 1}, dil[2] = {1, 1},
                    pads[4] = {0, 0, 0, 0};
            float w[16];
            for (int i = 0; i < 16; i++)
                w[i] = (float)i;
            eb_synth__fmt(cs, sizeof(cs), "%s/conv", dsc);
            init_f32(s, "model.dfl.conv.weight", wd, 4, w);
            eb_pb_buf_init(&at);
            eb_synth__attr_ints(&at, "dilations", dil, 2);
            eb_synth__attr_int(&at, "group", 1);
            eb_synth__attr_ints(&at, "kernel_shape", ks, 2);
            eb_synth__attr_ints(&at, "pads", pads, 4);
            eb_synth__attr_ints(&at, "strides", st1, 2);
            {
                const char *ins[2] = {t, "model.dfl.conv.weight"};
                node1(s, "Conv", cs, "", ins, 2, t, &at);
            }
            eb_pb_buf_fini(&at);
        }
        shape_const(s, cst, dsc, "_1", v3, 3);
        {
            const char *ins[2] = {t, cst};
            node1(s, "Reshape", dsc, "_1", ins, 2, dfl, NULL);
        }
        /* dist2bbox */
        shape_const(s, s0, hs, "_7", &zero, 1);
        shape_const(s, s2, hs, "_8", &i2, 1);
        shape_const(s, s4, hs, "_9", &i4, 1);
        shape_const(s, sax, hs, "_6", &one, 1);
        {
            const char *ins[4] = {dfl, s0, s2, sax};
            node1(s, "Slice", hs, "", ins, 4, lt, NULL);
        }
        {
            const char *ins[4] = {dfl, s2, s4, sax};
            node1(s, "Slice", hs, "_1", ins, 4, rb, NULL);
        }
        buf = scratch(s, (size_t)nanch * 2);
        if (buf == NULL)
            return;
        for (int i = 0; i < 3; i++)
            for (int y = 0; y < lv[i].h; y++)
                for (int x = 0; x < lv[i].w; x++) {
                    buf[k] = (float)x + 0.5f;
                    buf[(size_t)nanch + k] = (float)y + 0.5f;
                    k++;
                }
        {
            int64_t d[3] = {1, 2, nanch};
            eb_synth__fmt(anc, sizeof(anc), "%s/Constant_12_output_0", hs);
            init_f32(s, anc, d, 3, buf);
            eb_synth__fmt(anc2, sizeof(anc2), "%s/Constant_13_output_0", hs);
            init_f32(s, anc2, d, 3, buf);
        }
        scalar_const(s, two, hs, "_14", 2.0f);
        k = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < lv[i].h * lv[i].w; j++)
                buf[k++] = (float)stride[i];
        {
            int64_t d[2] = {1, nanch};
            eb_synth__fmt(strd, sizeof(strd), "%s/Constant_15_output_0", hs);
            init_f32(s, strd, d, 2, buf);
        }
        {
            const char *ins[2] = {anc, lt};
            node1(s, "Sub", hs, "", ins, 2, x1, NULL);
        }
        {
            const char *ins[2] = {anc2, rb};
            node1(s, "Add", hs, "_1", ins, 2, x2, NULL);
        }
        {
            const char *ins[2] = {x1, x2};
            node1(s, "Add", hs, "_2", ins, 2, sm, NULL);
        }
        {
            const char *ins[2] = {x2, x1};
            node1(s, "Sub", hs, "_1", ins, 2, wh, NULL);
        }
        {
            const char *ins[2] = {sm, two};
            node1(s, "Div", hs, "_1", ins, 2, cxy, NULL);
        }
        eb_pb_buf_init(&at);
        eb_synth__attr_int(&at, "axis", 1);
        {
            const char *ins[2] = {cxy, wh};
            node1(s, "Concat", hs, "_2", ins, 2, cat, &at);
        }
        {
            const char *ins[2] = {cat, strd};
            node1(s, "Mul", hs, "_2", ins, 2, dbox, NULL);
        }
        {
            const char *ins[1] = {cls};
            node1(s, "Sigmoid", hs, "", ins, 1, sig, NULL);
        }
        {
            const char *ins[2] = {dbox, sig};
            const char *outs[1] = {"output0"};
            eb_synth__fmt(boxa.name, sizeof(boxa.name), "%s/Concat_3", hs);
            node(s, "Concat", boxa.name, ins, 2, outs, 1, &at);
        }
        eb_pb_buf_fini(&at);
    }
    if (s->replay)
        detect_tail(s, nc, stride);
}

/*
 * The Detect head, twice when building: a first pass on the calibration tensors yields the
 * normalised class logits for eb_synth__pick_class_gain, then the RNG and the output buffers are rewound
 * and the head is emitted again with the gain (same seeded values otherwise).
 */
static void detect_head(struct syn *s, int layer, const struct eb_synth__act *lv, int nc)
{
    if (!s->replay) {
        uint64_t rng = s->rng;
        size_t nodes_len = s->nodes.len, inits_len = s->inits.len, n_stored = s->n_stored;
        s->cls_dry = 1;
        detect(s, layer, lv, nc);
        s->cls_dry = 0;
        s->cls_gain = eb_synth__pick_class_gain(s->head_cls, s->head_bias, nc, &s->oom);
        s->rng = rng;
        s->nodes.len = nodes_len;
        s->inits.len = inits_len;
        store_truncate(s, n_stored);
    }
    detect(s, layer, lv, nc);
}

/*
 * The architectures as Ultralytics' yolov8.yaml / yolo11.yaml describe them: one row per layer
 * ("model.N" is row N), channel counts and repeats before the width / depth multiples of the
 * scale (ch() and rep() apply them).
 */
enum eb_synth_op {
    EB_SYNTH_OP_CONV,     /* Conv(c2, k, s) + SiLU */
    EB_SYNTH_OP_C2F,      /* YOLOv8 C2f(c2, n, shortcut, e) */
    EB_SYNTH_OP_C3K2,     /* YOLO11 C3k2(c2, n, c3k, e, shortcut); m/l/x force c3k */
    EB_SYNTH_OP_SPPF,     /* SPPF(c2, 5) */
    EB_SYNTH_OP_C2PSA,    /* YOLO11 C2PSA(c2, n) */
    EB_SYNTH_OP_UPSAMPLE, /* nn.Upsample(None, 2, "nearest") */
    EB_SYNTH_OP_CONCAT,   /* Concat(1) of from[0], from[1] */
    EB_SYNTH_OP_DETECT,   /* Detect(nc) on from[0..2]; always the last row */
};

struct eb_synth_layer {
    int from[3]; /* source layers: -1 the previous one, >= 0 an absolute index */
    enum eb_synth_op op;
    int c2, n, k, s; /* output channels, repeats, kernel, stride (before the scale multiples) */
    int shortcut;    /* C2f / C3k2: residual bottlenecks */
    int c3k;         /* C3k2: C3k blocks instead of Bottlenecks at every scale */
    double e;        /* C2f / C3k2 hidden-channel ratio */
};

static const struct eb_synth_layer yolov8_layers[] = {
    /* backbone */
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 64, .k = 3, .s = 2},  /* 0-P1/2 */
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 128, .k = 3, .s = 2}, /* 1-P2/4 */
    {.from = {-1}, .op = EB_SYNTH_OP_C2F, .c2 = 128, .n = 3, .shortcut = 1, .e = 0.5},
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 256, .k = 3, .s = 2}, /* 3-P3/8 */
    {.from = {-1}, .op = EB_SYNTH_OP_C2F, .c2 = 256, .n = 6, .shortcut = 1, .e = 0.5},
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 512, .k = 3, .s = 2}, /* 5-P4/16 */
    {.from = {-1}, .op = EB_SYNTH_OP_C2F, .c2 = 512, .n = 6, .shortcut = 1, .e = 0.5},
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 1024, .k = 3, .s = 2}, /* 7-P5/32 */
    {.from = {-1}, .op = EB_SYNTH_OP_C2F, .c2 = 1024, .n = 3, .shortcut = 1, .e = 0.5},
    {.from = {-1}, .op = EB_SYNTH_OP_SPPF, .c2 = 1024}, /* 9 */
    /* head */
    {.from = {-1}, .op = EB_SYNTH_OP_UPSAMPLE},
    {.from = {-1, 6}, .op = EB_SYNTH_OP_CONCAT},                        /* cat backbone P4 */
    {.from = {-1}, .op = EB_SYNTH_OP_C2F, .c2 = 512, .n = 3, .e = 0.5}, /* 12 */
    {.from = {-1}, .op = EB_SYNTH_OP_UPSAMPLE},
    {.from = {-1, 4}, .op = EB_SYNTH_OP_CONCAT},                        /* cat backbone P3 */
    {.from = {-1}, .op = EB_SYNTH_OP_C2F, .c2 = 256, .n = 3, .e = 0.5}, /* 15 (P3/8-small) */
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 256, .k = 3, .s = 2},
    {.from = {-1, 12}, .op = EB_SYNTH_OP_CONCAT},                       /* cat head P4 */
    {.from = {-1}, .op = EB_SYNTH_OP_C2F, .c2 = 512, .n = 3, .e = 0.5}, /* 18 (P4/16-medium) */
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 512, .k = 3, .s = 2},
    {.from = {-1, 9}, .op = EB_SYNTH_OP_CONCAT},                         /* cat head P5 */
    {.from = {-1}, .op = EB_SYNTH_OP_C2F, .c2 = 1024, .n = 3, .e = 0.5}, /* 21 (P5/32-large) */
    {.from = {15, 18, 21}, .op = EB_SYNTH_OP_DETECT},                    /* 22 */
};

static const struct eb_synth_layer yolo11_layers[] = {
    /* backbone */
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 64, .k = 3, .s = 2},  /* 0-P1/2 */
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 128, .k = 3, .s = 2}, /* 1-P2/4 */
    {.from = {-1}, .op = EB_SYNTH_OP_C3K2, .c2 = 256, .n = 2, .shortcut = 1, .e = 0.25},
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 256, .k = 3, .s = 2}, /* 3-P3/8 */
    {.from = {-1}, .op = EB_SYNTH_OP_C3K2, .c2 = 512, .n = 2, .shortcut = 1, .e = 0.25},
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 512, .k = 3, .s = 2}, /* 5-P4/16 */
    {.from = {-1}, .op = EB_SYNTH_OP_C3K2, .c2 = 512, .n = 2, .shortcut = 1, .c3k = 1, .e = 0.5},
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 1024, .k = 3, .s = 2}, /* 7-P5/32 */
    {.from = {-1}, .op = EB_SYNTH_OP_C3K2, .c2 = 1024, .n = 2, .shortcut = 1, .c3k = 1, .e = 0.5},
    {.from = {-1}, .op = EB_SYNTH_OP_SPPF, .c2 = 1024},          /* 9 */
    {.from = {-1}, .op = EB_SYNTH_OP_C2PSA, .c2 = 1024, .n = 2}, /* 10 */
    /* head */
    {.from = {-1}, .op = EB_SYNTH_OP_UPSAMPLE},
    {.from = {-1, 6}, .op = EB_SYNTH_OP_CONCAT}, /* cat backbone P4 */
    {.from = {-1}, .op = EB_SYNTH_OP_C3K2, .c2 = 512, .n = 2, .shortcut = 1, .e = 0.5}, /* 13 */
    {.from = {-1}, .op = EB_SYNTH_OP_UPSAMPLE},
    {.from = {-1, 4}, .op = EB_SYNTH_OP_CONCAT}, /* cat backbone P3 */
    {.from = {-1}, .op = EB_SYNTH_OP_C3K2, .c2 = 256, .n = 2, .shortcut = 1, .e = 0.5}, /* 16 */
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 256, .k = 3, .s = 2},
    {.from = {-1, 13}, .op = EB_SYNTH_OP_CONCAT}, /* cat head P4 */
    {.from = {-1}, .op = EB_SYNTH_OP_C3K2, .c2 = 512, .n = 2, .shortcut = 1, .e = 0.5}, /* 19 */
    {.from = {-1}, .op = EB_SYNTH_OP_CONV, .c2 = 512, .k = 3, .s = 2},
    {.from = {-1, 10}, .op = EB_SYNTH_OP_CONCAT}, /* cat head P5 */
    {.from = {-1}, .op = EB_SYNTH_OP_C3K2, .c2 = 1024, .n = 2, .shortcut = 1, .c3k = 1, .e = 0.5},
    {.from = {16, 19, 22}, .op = EB_SYNTH_OP_DETECT}, /* 23 */
};

#define EB_SYNTH_MAX_LAYERS 24
_Static_assert(sizeof(yolov8_layers) / sizeof(yolov8_layers[0]) <= EB_SYNTH_MAX_LAYERS,
               "yolov8_layers exceeds EB_SYNTH_MAX_LAYERS");
_Static_assert(sizeof(yolo11_layers) / sizeof(yolo11_layers[0]) <= EB_SYNTH_MAX_LAYERS,
               "yolo11_layers exceeds EB_SYNTH_MAX_LAYERS");

/*
 * Interprets the arch's layer table: layer N is emitted in scope "/model.N" from its source
 * layers (the image for layer 0's -1). The Detect row ends the table.
 */
static void build_graph(struct syn *s, int nc, float *input, int esize)
{
    const struct eb_synth_layer *rows = s->v11 ? yolo11_layers : yolov8_layers;
    const int n_rows = s->v11 ? (int)(sizeof(yolo11_layers) / sizeof(yolo11_layers[0]))
                              : (int)(sizeof(yolov8_layers) / sizeof(yolov8_layers[0]));
    char sc[EB_SYNTH__NAME_MAX];
    struct eb_synth__act x, l[EB_SYNTH_MAX_LAYERS];

    memset(&x, 0, sizeof(x));
    eb_synth__fmt(x.name, sizeof(x.name), "images");
    x.c = 3;
    x.h = x.w = s->o->imgsz;
    x.m2 = 0.25; /* letterboxed RGB / 255 */
    x.d = input;
    x.eh = x.ew = esize;

    for (int i = 0; i < n_rows && i < EB_SYNTH_MAX_LAYERS; i++) {
        const struct eb_synth_layer *r = &rows[i];
        int n_src = r->op == EB_SYNTH_OP_DETECT ? 3 : (r->op == EB_SYNTH_OP_CONCAT ? 2 : 1);
        struct eb_synth__act src[3];
        for (int j = 0; j < n_src; j++) {
            int f = r->from[j] < 0 ? i + r->from[j] : r->from[j];
            src[j] = f < 0 ? x : l[f];
        }
        scope_of(sc, i);
        switch (r->op) {
        case EB_SYNTH_OP_CONV: l[i] = conv(s, sc, &src[0], ch(s, r->c2), r->k, r->s, 1, 1); break;
        case EB_SYNTH_OP_C2F:
            l[i] = c2f(s, sc, &src[0], ch(s, r->c2), rep(s, r->n), r->shortcut, 0, r->e);
            break;
        case EB_SYNTH_OP_C3K2:
            l[i] = c2f(s, sc, &src[0], ch(s, r->c2), rep(s, r->n), r->shortcut,
                       r->c3k || s->c3k ? 2 : 1, r->e);
            break;
        case EB_SYNTH_OP_SPPF: l[i] = sppf(s, sc, &src[0], ch(s, r->c2)); break;
        case EB_SYNTH_OP_C2PSA: l[i] = c2psa(s, sc, &src[0], rep(s, r->n)); break;
        case EB_SYNTH_OP_UPSAMPLE: l[i] = upsample(s, sc, &src[0]); break;
        case EB_SYNTH_OP_CONCAT: l[i] = concat(s, sc, "", src, 2); break;
        case EB_SYNTH_OP_DETECT: detect_head(s, i, src, nc); return;
        }
    }
}

static enum eb_status check_options(const struct eb_synth_options *o, struct eb_diag *diag)
{
    if (o == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to synthesize model: no options; pass struct eb_synth_options");
    if (o->arch != EB_SYNTH_YOLOV8 && o->arch != EB_SYNTH_YOLO11)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to synthesize model: unknown arch %d; use yolov8 or yolo11",
                            (int)o->arch);
    if (o->scale == '\0' || strchr("nsmlx", o->scale) == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to synthesize model: unknown scale '%c'; use n, s, m, l or x",
                            o->scale ? o->scale : '?');
    if (o->imgsz < 32 || o->imgsz > 4096 || o->imgsz % 32 != 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to synthesize model: imgsz %d is invalid; use a multiple of 32 "
                            "in 32..4096",
                            o->imgsz);
    if (o->num_classes < 1 || o->num_classes > 1000)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to synthesize model: num_classes %d is invalid; use 1..1000",
                            o->num_classes);
    return EB_OK;
}

/*
 * Builds the model; with `eval_input` ([3][imgsz][imgsz]) it then evaluates that input with the
 * recorded weights into *eval_out (malloc'd) instead of returning bytes.
 */
static enum eb_status synth_run(const struct eb_synth_options *opts, const float *eval_input,
                                uint8_t **bytes_out, size_t *len_out, float **eval_out,
                                size_t *n_eval, struct eb_diag *diag)
{
    static const double v8[5][3] = {{0.33, 0.25, 1024},
                                    {0.33, 0.50, 1024},
                                    {0.67, 0.75, 768},
                                    {1.00, 1.00, 512},
                                    {1.00, 1.25, 512}};
    static const double y11[5][3] = {{0.50, 0.25, 1024},
                                     {0.50, 0.50, 1024},
                                     {0.50, 1.00, 512},
                                     {1.00, 1.00, 512},
                                     {1.00, 1.50, 512}};
    enum eb_status st;
    struct syn s;
    struct eb_pb_buf model;
    int si, nc, csize = 0;
    uint64_t z;
    float *calib = NULL;

    memset(&s, 0, sizeof(s));
    eb_pb_buf_init(&s.nodes);
    eb_pb_buf_init(&s.inits);
    eb_pb_buf_init(&model);
    st = check_options(opts, diag);
    if (st != EB_OK)
        goto fail;
    s.o = opts;
    nc = opts->num_classes;
    si = (int)(strchr("nsmlx", opts->scale) - "nsmlx");
    s.v11 = opts->arch == EB_SYNTH_YOLO11;
    s.depth = s.v11 ? y11[si][0] : v8[si][0];
    s.width = s.v11 ? y11[si][1] : v8[si][1];
    s.max_ch = (int)(s.v11 ? y11[si][2] : v8[si][2]);
    s.c3k = s.v11 && si >= 2;
    /* splitmix64 of the seed: never zero, well mixed for xorshift. */
    z = (uint64_t)opts->seed + UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    s.rng = (z ^ (z >> 31)) | 1u;

    csize = eb_synth__calib_size(opts);
    calib = malloc((size_t)3 * (size_t)csize * (size_t)csize * sizeof(float));
    if (calib == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM,
                          "failed to synthesize model: out of memory; free memory and retry");
        goto fail;
    }
    eb_model__synth_calib_image(csize, calib);
    s.store = eval_input != NULL;
    build_graph(&s, nc, calib, csize);
    if (eval_input != NULL && !s.oom) {
        /* replay: the same graph with the folded weights on the caller's input */
        free_bufs(&s);
        s.store = 0;
        s.replay = 1;
        s.nodes.len = s.inits.len = 0;
        build_graph(&s, nc, (float *)(uintptr_t)eval_input, opts->imgsz);
        if (s.out == NULL || s.oom) {
            st = eb_diag_fail(diag, EB_ERR_NOMEM,
                              "failed to evaluate synthesized model: out of memory; free memory "
                              "or use a smaller imgsz");
            goto fail;
        }
        *eval_out = s.out;
        *n_eval = s.n_out;
        s.out = NULL;
        st = EB_OK;
        goto fail;
    }

    if (eb_synth__model_proto(&model, &s.nodes, &s.inits, opts) != 0) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM,
                          "failed to synthesize model: out of memory; free memory and retry");
        goto fail;
    }
    if (s.oom || eb_pb_buf_error(&model)) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM,
                          "failed to synthesize model: out of memory; free memory or use a "
                          "smaller scale");
        goto fail;
    }
    *bytes_out = eb_pb_buf_take(&model, len_out);
    if (*bytes_out == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM,
                          "failed to synthesize model: out of memory; free memory and retry");
        goto fail;
    }
    st = EB_OK;
fail:
    free(calib);
    free(s.out);
    free_bufs(&s);
    free(s.bufs);
    store_truncate(&s, 0);
    free(s.stored);
    free(s.scratch);
    eb_pb_buf_fini(&s.nodes);
    eb_pb_buf_fini(&s.inits);
    eb_pb_buf_fini(&model);
    return st;
}

enum eb_status eb_model_synth(const struct eb_synth_options *opts, uint8_t **bytes_out,
                              size_t *len_out, struct eb_diag *diag)
{
    return synth_run(opts, NULL, bytes_out, len_out, NULL, NULL, diag);
}

enum eb_status eb_model__synth_eval(const struct eb_synth_options *opts, const float *input,
                                    float **out_out, size_t *n_out, struct eb_diag *diag)
{
    if (input == NULL || out_out == NULL || n_out == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to evaluate synthesized model: no input or output; pass both");
    return synth_run(opts, input, NULL, NULL, out_out, n_out, diag);
}

enum eb_status eb_model_synth_file(const struct eb_synth_options *opts, const char *path,
                                   struct eb_diag *diag)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    FILE *fp = NULL;
    enum eb_status st = eb_model_synth(opts, &bytes, &len, diag);
    if (st != EB_OK)
        return st;
    fp = fopen(path, "wb");
    if (fp == NULL) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to write model %s: cannot open; check the path",
                          path);
        goto fail;
    }
    if (fwrite(bytes, 1, len, fp) != len) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "failed to write model %s: short write; check disk space", path);
        goto fail;
    }
    if (fclose(fp) != 0) {
        fp = NULL;
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "failed to write model %s: close failed; check disk space", path);
        goto fail;
    }
    fp = NULL;
    st = EB_OK;
fail:
    if (fp != NULL)
        fclose(fp);
    free(bytes);
    return st;
}