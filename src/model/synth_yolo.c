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
 * deterministic calibration image (calib_size: 128 for n/s, 96 for m/l, 64 for x), and every
 * conv gets w' = w * gamma / std, b' = beta - mean * gamma / std from the per-channel mean and
 * std of its pre-activation (gamma ~ U(0.6, 1.2), beta ~ N(0, 0.1); std floored, see fold_bn).
 * Head: the box branch's last conv is normalised with bias 1.0; the class branch's last conv is
 * normalised, times one global gain (pick_class_gain: about 0.3% of the calibration anchors pass
 * 0.25), plus Ultralytics' bias log(5 / nc / (imgsz / stride)^2); DFL unchanged.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/onnx/onnx_wire.h"
#include "model/model.h"
#include "model/synth_eval.h"

#define NAME_MAX_LEN 160
#define SILU_M2      0.355 /* E[silu(z)^2] for z ~ N(0, 1) */
#define BN_EPS       1e-5
/* Variance floor of fold_bn, in units of the isotropic projection variance |w_c|^2 E[x^2]. */
#define BN_FLOOR 100.0

/* Class-gain rule (see pick_class_gain): the share of calibration anchors whose best class
 * score passes CLS_CONF. */
#define CLS_PASS_FRACTION 0.003
#define CLS_CONF          0.25

/*
 * An NCHW activation: its name and shape in the graph, its estimated second moment E[x^2] (the
 * scale of the raw seeded weights), and its value in the shadow evaluation: `d`, [c][eh][ew] at
 * the evaluation size (NULL where the evaluation is skipped).
 */
struct act {
    char name[NAME_MAX_LEN];
    int c, h, w;
    double m2;
    float *d;
    int eh, ew;
};

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
    struct act head_box[3], head_cls[3]; /* last box / class conv of each level */
    float head_bias[3];                  /* class bias of each level */
    float *out;                          /* output0 [4+nc][nanch] of the evaluation (replay only) */
    size_t n_out;
};

/* snprintf that truncates silently: names are bounded by NAME_MAX_LEN by construction. */
static void sfmt(char *out, size_t cap, const char *fmt, ...) EB_PRINTF(3, 4);
static void sfmt(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, cap, fmt, ap);
    va_end(ap);
}

static uint64_t rng_next(struct syn *s)
{
    uint64_t x = s->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->rng = x;
    return x * UINT64_C(2685821657736338717);
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

/* ---- initializers and nodes ---- */

static void tensor_header(struct eb_pb_buf *t, const char *name, int dtype, const int64_t *dims,
                          int rank)
{
    for (int i = 0; i < rank; i++)
        eb_pb_put_varint(t, 1, dims[i]);
    eb_pb_put_varint(t, 2, dtype);
    eb_pb_put_str(t, 8, name);
}

static void init_f32(struct syn *s, const char *name, const int64_t *dims, int rank,
                     const float *data)
{
    struct eb_pb_buf t;
    size_t n = 1;
    uint8_t *raw;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    eb_pb_buf_init(&t);
    tensor_header(&t, name, 1, dims, rank);
    raw = malloc(n * 4 + 1);
    if (raw == NULL) {
        s->oom = 1;
        eb_pb_buf_fini(&t);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &data[i], 4);
        raw[4 * i] = (uint8_t)u;
        raw[4 * i + 1] = (uint8_t)(u >> 8);
        raw[4 * i + 2] = (uint8_t)(u >> 16);
        raw[4 * i + 3] = (uint8_t)(u >> 24);
    }
    eb_pb_put_bytes(&t, 9, raw, n * 4);
    free(raw);
    eb_pb_put_msg(&s->inits, 5, &t);
    eb_pb_buf_fini(&t);
}

static void init_i64(struct syn *s, const char *name, const int64_t *data, int64_t n)
{
    struct eb_pb_buf t;
    uint8_t raw[8 * 8];
    eb_pb_buf_init(&t);
    tensor_header(&t, name, 7, &n, 1);
    for (int64_t i = 0; i < n && i < 8; i++)
        for (int k = 0; k < 8; k++)
            raw[8 * i + k] = (uint8_t)((uint64_t)data[i] >> (8 * k));
    eb_pb_put_bytes(&t, 9, raw, (size_t)n * 8);
    eb_pb_put_msg(&s->inits, 5, &t);
    eb_pb_buf_fini(&t);
}

static void attr_int(struct eb_pb_buf *a, const char *name, int64_t v)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    eb_pb_put_str(&t, 1, name);
    eb_pb_put_varint(&t, 3, v);
    eb_pb_put_varint(&t, 20, 2);
    eb_pb_put_msg(a, 5, &t);
    eb_pb_buf_fini(&t);
}

static void attr_float(struct eb_pb_buf *a, const char *name, float v)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    eb_pb_put_str(&t, 1, name);
    eb_pb_put_f32(&t, 2, v);
    eb_pb_put_varint(&t, 20, 1);
    eb_pb_put_msg(a, 5, &t);
    eb_pb_buf_fini(&t);
}

static void attr_str(struct eb_pb_buf *a, const char *name, const char *v)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    eb_pb_put_str(&t, 1, name);
    eb_pb_put_str(&t, 4, v);
    eb_pb_put_varint(&t, 20, 3);
    eb_pb_put_msg(a, 5, &t);
    eb_pb_buf_fini(&t);
}

static void attr_ints(struct eb_pb_buf *a, const char *name, const int64_t *v, int n)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    eb_pb_put_str(&t, 1, name);
    for (int i = 0; i < n; i++)
        eb_pb_put_varint(&t, 8, v[i]);
    eb_pb_put_varint(&t, 20, 7);
    eb_pb_put_msg(a, 5, &t);
    eb_pb_buf_fini(&t);
}

/* Appends a NodeProto. `attrs` (may be NULL) holds AttributeProto fields (number 5). */
static void node(struct syn *s, const char *op, const char *name, const char *const *ins, int n_in,
                 const char *const *outs, int n_out, const struct eb_pb_buf *attrs)
{
    struct eb_pb_buf n;
    eb_pb_buf_init(&n);
    for (int i = 0; i < n_in; i++)
        eb_pb_put_str(&n, 1, ins[i]);
    for (int i = 0; i < n_out; i++)
        eb_pb_put_str(&n, 2, outs[i]);
    eb_pb_put_str(&n, 3, name);
    eb_pb_put_str(&n, 4, op);
    if (attrs != NULL)
        eb_pb_put_raw(&n, attrs->data, attrs->len);
    eb_pb_put_msg(&s->nodes, 1, &n);
    eb_pb_buf_fini(&n);
}

/* One-input, one-output node "<scope>/<op><sfx>" with output "<scope>/<op><sfx>_output_0". */
static void node1(struct syn *s, const char *op, const char *scope, const char *sfx,
                  const char *const *ins, int n_in, char *out, const struct eb_pb_buf *attrs)
{
    char name[NAME_MAX_LEN], oname[NAME_MAX_LEN];
    const char *outs[1] = {oname};
    /* `out` may alias one of `ins`: emit the node before overwriting it. */
    sfmt(name, sizeof(name), "%s/%s%s", scope, op, sfx);
    sfmt(oname, sizeof(oname), "%s_output_0", name);
    node(s, op, name, ins, n_in, outs, 1, attrs);
    memcpy(out, oname, NAME_MAX_LEN);
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
 * Folds a BatchNorm into the conv of output y [c2][n] (raw weights w [c2][per], zero bias): the
 * per-channel mean and std of y over the calibration tensor normalise it, then gamma / beta (or
 * the head's rule, see conv_ex) give its new scale and shift. Updates w, writes the bias and
 * applies the same affine map to y, so the evaluation goes on with what the graph computes.
 */
static void fold_bn(struct syn *s, float *w, size_t per, float *bias, const float *gamma,
                    const float *beta, int c2, float *y, size_t n, int plain, float bias_value,
                    double xm2)
{
    double *mv = (double *)calloc((size_t)c2 * 2, sizeof(double));
    if (mv == NULL) {
        s->oom = 1;
        return;
    }
    for (int c = 0; c < c2; c++) {
        const float *yc = y + (size_t)c * n;
        double m = 0.0, v = 0.0;
        for (size_t i = 0; i < n; i++)
            m += yc[i];
        m /= (double)n;
        for (size_t i = 0; i < n; i++)
            v += ((double)yc[i] - m) * ((double)yc[i] - m);
        mv[2 * c] = m;
        mv[2 * c + 1] = v / (double)n;
    }
    for (int c = 0; c < c2; c++) {
        /*
         * The variance is floored at BN_FLOOR times |w_c|^2 E[x^2] (what the channel would show
         * on an isotropic input of the calibration tensor's scale). One calibration image gives
         * few positions in the deep layers, and a frozen-BN random network normalised by those
         * variances alone is chaotic: measured with ONNX Runtime, any other input (another
         * size, gray, noise) then saturates every class score. Floors below ~50 still did so
         * on noise; 100 keeps all three inputs bounded.
         */
        double wn = 0.0, sd, sc, sh;
        float *yc = y + (size_t)c * n;
        for (size_t i = 0; i < per; i++)
            wn += (double)w[(size_t)c * per + i] * (double)w[(size_t)c * per + i];
        sd = sqrt(mv[2 * c + 1] + BN_FLOOR * wn * xm2 + BN_EPS);
        if (plain == CONV_BOX) {
            sc = 1.0 / sd;
            sh = bias_value - mv[2 * c] * sc;
        } else if (plain == CONV_CLS) {
            double g = s->cls_dry ? 1.0 : s->cls_gain;
            sc = g / sd;
            sh = (s->cls_dry ? 0.0 : bias_value) - mv[2 * c] * sc;
        } else {
            sc = gamma[c] / sd;
            sh = beta[c] - mv[2 * c] * sc;
        }
        for (size_t i = 0; i < per; i++)
            w[(size_t)c * per + i] = (float)(w[(size_t)c * per + i] * sc);
        bias[c] = (float)sh;
        for (size_t i = 0; i < n; i++)
            yc[i] = (float)(yc[i] * sc + sh);
    }
    free(mv);
}

/*
 * Conv2d (+ SiLU when `act`) with folded-BN weights and bias. `scope` is the module
 * ("/model.2/cv1"); the Conv node goes in "<scope>/conv" for Conv modules (plain 0) or directly
 * in scope for the head's last nn.Conv2d (plain CONV_BOX: normalised, bias `bias_value`;
 * CONV_CLS: normalised, times the class gain, bias `bias_value`).
 */
static struct act conv_ex(struct syn *s, const char *scope, const struct act *x, int c2, int k,
                          int stride, int groups, int act, int plain, float bias_value)
{
    struct act y;
    char cscope[NAME_MAX_LEN], pfx[NAME_MAX_LEN], wname[NAME_MAX_LEN + 8], bname[NAME_MAX_LEN + 8];
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
        sfmt(cscope, sizeof(cscope), "%s", scope);
    else
        sfmt(cscope, sizeof(cscope), "%s/conv", scope);
    param_prefix(cscope, pfx, sizeof(pfx));
    sfmt(wname, sizeof(wname), "%s.weight", pfx);
    sfmt(bname, sizeof(bname), "%s.bias", pfx);
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
                size_t nx = (size_t)x->c * (size_t)x->eh * (size_t)x->ew;
                double xm2 = 0.0;
                for (size_t i = 0; i < nx; i++)
                    xm2 += (double)x->d[i] * (double)x->d[i];
                fold_bn(s, w, per, bias, gamma, beta, c2, y.d, n, plain, bias_value,
                        xm2 / (double)nx);
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
    attr_ints(&at, "dilations", dil, 2);
    attr_int(&at, "group", groups);
    attr_ints(&at, "kernel_shape", ks, 2);
    attr_ints(&at, "pads", pads, 4);
    attr_ints(&at, "strides", st, 2);
    {
        const char *ins[3] = {x->name, wname, bname};
        node1(s, "Conv", cscope, "", ins, 3, y.name, &at);
    }
    if (eb_pb_buf_error(&at))
        s->oom = 1;
    eb_pb_buf_fini(&at);
    y.m2 = 1.0 + (plain ? (double)bias_value * bias_value : 0.0033);
    if (act) {
        char ascope[NAME_MAX_LEN], sig[NAME_MAX_LEN];
        const char *ins1[1] = {y.name};
        sfmt(ascope, sizeof(ascope), "%s/act", scope);
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

static struct act conv(struct syn *s, const char *scope, const struct act *x, int c2, int k,
                       int stride, int groups, int act)
{
    return conv_ex(s, scope, x, c2, k, stride, groups, act, 0, 0.0f);
}

static struct act add(struct syn *s, const char *scope, const char *sfx, const struct act *a,
                      const struct act *b)
{
    struct act y = *a;
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

static struct act concat(struct syn *s, const char *scope, const char *sfx, const struct act *xs,
                         int n)
{
    struct act y = xs[0];
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
    attr_int(&at, "axis", 1);
    node1(s, "Concat", scope, sfx, ins, n, y.name, &at);
    eb_pb_buf_fini(&at);
    y.c = c;
    y.m2 = m2 / c;
    return y;
}

/* Split along channels into n parts of the given sizes ("split" input, opset >= 13). */
static void split(struct syn *s, const char *scope, const struct act *x, const int *sizes, int n,
                  struct act *outs, int axis_rank_dim)
{
    char name[NAME_MAX_LEN], cname[NAME_MAX_LEN];
    char onames[4][NAME_MAX_LEN];
    const char *op[4];
    int64_t sz[4];
    struct eb_pb_buf at;
    sfmt(name, sizeof(name), "%s/Split", scope);
    sfmt(cname, sizeof(cname), "%s/Split_sizes", scope);
    for (int i = 0; i < n; i++) {
        sz[i] = sizes[i];
        sfmt(onames[i], NAME_MAX_LEN, "%s_output_%d", name, i);
        op[i] = onames[i];
    }
    init_i64(s, cname, sz, n);
    eb_pb_buf_init(&at);
    attr_int(&at, "axis", axis_rank_dim);
    {
        const char *ins[2] = {x->name, cname};
        node(s, "Split", name, ins, 2, op, n, &at);
    }
    eb_pb_buf_fini(&at);
    for (int i = 0, off = 0; i < n; i++) {
        outs[i] = *x;
        memcpy(outs[i].name, onames[i], NAME_MAX_LEN);
        outs[i].c = sizes[i];
        /* channel split of batch 1 NCHW: a contiguous view of the input */
        outs[i].d = x->d != NULL && axis_rank_dim == 1
                        ? x->d + (size_t)off * (size_t)x->eh * (size_t)x->ew
                        : NULL;
        off += sizes[i];
    }
}

static struct act bottleneck(struct syn *s, const char *scope, const struct act *x, int c2,
                             int shortcut, double e)
{
    char sc[NAME_MAX_LEN];
    int c_ = (int)(c2 * e);
    struct act a, b;
    sfmt(sc, sizeof(sc), "%s/cv1", scope);
    a = conv(s, sc, x, c_, 3, 1, 1, 1);
    sfmt(sc, sizeof(sc), "%s/cv2", scope);
    b = conv(s, sc, &a, c2, 3, 1, 1, 1);
    if (shortcut && x->c == c2)
        b = add(s, scope, "", x, &b);
    return b;
}

static struct act c3k(struct syn *s, const char *scope, const struct act *x, int c2, int n,
                      int shortcut)
{
    char sc[NAME_MAX_LEN];
    int c_ = (int)(c2 * 0.5);
    struct act a, b, cat[2];
    sfmt(sc, sizeof(sc), "%s/cv1", scope);
    a = conv(s, sc, x, c_, 1, 1, 1, 1);
    for (int i = 0; i < n; i++) {
        sfmt(sc, sizeof(sc), "%s/m/m.%d", scope, i);
        a = bottleneck(s, sc, &a, c_, shortcut, 1.0);
    }
    sfmt(sc, sizeof(sc), "%s/cv2", scope);
    b = conv(s, sc, x, c_, 1, 1, 1, 1);
    cat[0] = a;
    cat[1] = b;
    a = concat(s, scope, "", cat, 2);
    sfmt(sc, sizeof(sc), "%s/cv3", scope);
    return conv(s, sc, &a, c2, 1, 1, 1, 1);
}

/* C2f (YOLOv8) or C3k2 (YOLO11; `kind` 1 = Bottleneck(e=0.5), 2 = C3k). */
static struct act c2f(struct syn *s, const char *scope, const struct act *x, int c2, int n,
                      int shortcut, int kind, double e)
{
    char sc[NAME_MAX_LEN];
    int c = (int)(c2 * e);
    int sizes[2] = {c, c};
    struct act y, parts[8];
    sfmt(sc, sizeof(sc), "%s/cv1", scope);
    y = conv(s, sc, x, 2 * c, 1, 1, 1, 1);
    split(s, scope, &y, sizes, 2, parts, 1);
    for (int i = 0; i < n && i < 6; i++) {
        sfmt(sc, sizeof(sc), "%s/m.%d", scope, i);
        if (kind == 0)
            parts[2 + i] = bottleneck(s, sc, &parts[1 + i], c, shortcut, 1.0);
        else if (kind == 1)
            parts[2 + i] = bottleneck(s, sc, &parts[1 + i], c, shortcut, 0.5);
        else
            parts[2 + i] = c3k(s, sc, &parts[1 + i], c, 2, shortcut);
    }
    y = concat(s, scope, "", parts, 2 + (n < 6 ? n : 6));
    sfmt(sc, sizeof(sc), "%s/cv2", scope);
    return conv(s, sc, &y, c2, 1, 1, 1, 1);
}

static struct act sppf(struct syn *s, const char *scope, const struct act *x, int c2)
{
    char sc[NAME_MAX_LEN];
    struct act parts[4];
    int64_t ks[2] = {5, 5}, st[2] = {1, 1}, dil[2] = {1, 1}, pads[4] = {2, 2, 2, 2};
    struct eb_pb_buf at;
    sfmt(sc, sizeof(sc), "%s/cv1", scope);
    parts[0] = conv(s, sc, x, x->c / 2, 1, 1, 1, 1);
    eb_pb_buf_init(&at);
    attr_int(&at, "ceil_mode", 0);
    attr_ints(&at, "dilations", dil, 2);
    attr_ints(&at, "kernel_shape", ks, 2);
    attr_ints(&at, "pads", pads, 4);
    attr_ints(&at, "strides", st, 2);
    for (int i = 1; i < 4; i++) {
        const char *ins[1] = {parts[i - 1].name};
        char mscope[NAME_MAX_LEN];
        sfmt(mscope, sizeof(mscope), i == 1 ? "%s/m" : "%s/m_%d", scope, i - 1);
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
    sfmt(sc, sizeof(sc), "%s/cv2", scope);
    return conv(s, sc, &parts[0], c2, 1, 1, 1, 1);
}

static void shape_const(struct syn *s, char *name, const char *scope, const char *sfx,
                        const int64_t *v, int n)
{
    sfmt(name, NAME_MAX_LEN, "%s/Constant%s_output_0", scope, sfx);
    init_i64(s, name, v, n);
}

static void scalar_const(struct syn *s, char *name, const char *scope, const char *sfx, float v)
{
    sfmt(name, NAME_MAX_LEN, "%s/Constant%s_output_0", scope, sfx);
    init_f32(s, name, NULL, 0, &v);
}

/* Attention(dim, num_heads, attn_ratio=0.5) of YOLO11's PSABlock. */
static struct act attention(struct syn *s, const char *scope, const struct act *x, int heads)
{
    char sc[NAME_MAX_LEN], c0[NAME_MAX_LEN], c1[NAME_MAX_LEN], c3[NAME_MAX_LEN];
    int dim = x->c, head_dim = dim / heads, key_dim = head_dim / 2;
    int h = dim + 2 * key_dim * heads;
    int64_t n = (int64_t)x->h * x->w;
    int64_t shp[4] = {1, heads, 2 * key_dim + head_dim, n};
    int64_t shp2[4] = {1, dim, x->h, x->w};
    int64_t perm[4] = {0, 1, 3, 2};
    int sizes[3] = {key_dim, key_dim, head_dim};
    struct act qkv, r, parts[3], qt, mm, sm, at2, mm2, xo, v4, pe, sum;
    struct eb_pb_buf pa, ax;

    sfmt(sc, sizeof(sc), "%s/qkv", scope);
    qkv = conv(s, sc, x, h, 1, 1, 1, 0);
    shape_const(s, c0, scope, "", shp, 4);
    {
        const char *ins[2] = {qkv.name, c0};
        r = qkv;
        node1(s, "Reshape", scope, "", ins, 2, r.name, NULL);
    }
    split(s, scope, &r, sizes, 3, parts, 2);
    eb_pb_buf_init(&pa);
    attr_ints(&pa, "perm", perm, 4);
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
    attr_int(&ax, "axis", -1);
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
    sfmt(sc, sizeof(sc), "%s/pe", scope);
    pe = conv(s, sc, &v4, dim, 3, 1, dim, 0);
    sum = add(s, scope, "", &xo, &pe);
    sfmt(sc, sizeof(sc), "%s/proj", scope);
    return conv(s, sc, &sum, dim, 1, 1, 1, 0);
}

static struct act c2psa(struct syn *s, const char *scope, const struct act *x, int n)
{
    char sc[NAME_MAX_LEN], bs[NAME_MAX_LEN];
    int c = x->c / 2;
    int sizes[2] = {c, c};
    struct act y, parts[2], b;
    sfmt(sc, sizeof(sc), "%s/cv1", scope);
    y = conv(s, sc, x, 2 * c, 1, 1, 1, 1);
    split(s, scope, &y, sizes, 2, parts, 1);
    b = parts[1];
    for (int i = 0; i < n; i++) {
        struct act a, f;
        sfmt(bs, sizeof(bs), "%s/m/m.%d", scope, i);
        sfmt(sc, sizeof(sc), "%s/attn", bs);
        a = attention(s, sc, &b, c / 64 > 0 ? c / 64 : 1);
        b = add(s, bs, "", &b, &a);
        sfmt(sc, sizeof(sc), "%s/ffn/ffn.0", bs);
        f = conv(s, sc, &b, 2 * c, 1, 1, 1, 1);
        sfmt(sc, sizeof(sc), "%s/ffn/ffn.1", bs);
        f = conv(s, sc, &f, c, 1, 1, 1, 0);
        b = add(s, bs, "_1", &b, &f);
    }
    parts[1] = b;
    y = concat(s, scope, "", parts, 2);
    sfmt(sc, sizeof(sc), "%s/cv2", scope);
    return conv(s, sc, &y, x->c, 1, 1, 1, 1);
}

static struct act upsample(struct syn *s, const char *scope, const struct act *x)
{
    char cname[NAME_MAX_LEN];
    float sc[4] = {1.0f, 1.0f, 2.0f, 2.0f};
    int64_t d = 4;
    struct act y = *x;
    struct eb_pb_buf at;
    sfmt(cname, sizeof(cname), "%s/Constant_output_0", scope);
    init_f32(s, cname, &d, 1, sc);
    eb_pb_buf_init(&at);
    attr_str(&at, "coordinate_transformation_mode", "asymmetric");
    attr_float(&at, "cubic_coeff_a", -0.75f);
    attr_str(&at, "mode", "nearest");
    attr_str(&at, "nearest_mode", "floor");
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
    sfmt(out, NAME_MAX_LEN, "/model.%d", layer);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
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
static void detect(struct syn *s, int layer, const struct act *lv, int nc)
{
    char sc[NAME_MAX_LEN], hs[NAME_MAX_LEN], cbox[NAME_MAX_LEN], ccls[NAME_MAX_LEN];
    char names_box[3][NAME_MAX_LEN], names_cls[3][NAME_MAX_LEN];
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
        struct act b, c;
        char sfx[16];
        stride[i] = s->o->imgsz / lv[i].h;
        nanch += (int64_t)lv[i].h * lv[i].w;
        s->no_eval = s->cls_dry; /* the first pass needs the class branch only */
        sfmt(sc, sizeof(sc), "%s/cv2.%d/cv2.%d.0", hs, i, i);
        b = conv(s, sc, &lv[i], c2, 3, 1, 1, 1);
        sfmt(sc, sizeof(sc), "%s/cv2.%d/cv2.%d.1", hs, i, i);
        b = conv(s, sc, &b, c2, 3, 1, 1, 1);
        sfmt(sc, sizeof(sc), "%s/cv2.%d/cv2.%d.2", hs, i, i);
        b = conv_ex(s, sc, &b, 64, 1, 1, 1, 0, CONV_BOX, 1.0f);
        s->no_eval = 0;
        s->head_box[i] = b;
        if (s->v11) {
            sfmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.0/cv3.%d.0.0", hs, i, i, i);
            c = conv(s, sc, &lv[i], lv[i].c, 3, 1, lv[i].c, 1);
            sfmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.0/cv3.%d.0.1", hs, i, i, i);
            c = conv(s, sc, &c, c3, 1, 1, 1, 1);
            sfmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.1/cv3.%d.1.0", hs, i, i, i);
            c = conv(s, sc, &c, c3, 3, 1, c3, 1);
            sfmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.1/cv3.%d.1.1", hs, i, i, i);
            c = conv(s, sc, &c, c3, 1, 1, 1, 1);
        } else {
            sfmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.0", hs, i, i);
            c = conv(s, sc, &lv[i], c3, 3, 1, 1, 1);
            sfmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.1", hs, i, i);
            c = conv(s, sc, &c, c3, 3, 1, 1, 1);
        }
        {
            double r = (double)s->o->imgsz / stride[i];
            float bias = (float)log(5.0 / nc / (r * r));
            sfmt(sc, sizeof(sc), "%s/cv3.%d/cv3.%d.2", hs, i, i);
            c = conv_ex(s, sc, &c, nc, 1, 1, 1, 0, CONV_CLS, bias);
            s->head_cls[i] = c;
            s->head_bias[i] = bias;
        }
        {
            const char *ins[2] = {b.name, cbox};
            sfmt(sfx, sizeof(sfx), i ? "_%d" : "", i);
            node1(s, "Reshape", hs, sfx, ins, 2, names_box[i], NULL);
        }
        {
            const char *ins[2] = {c.name, ccls};
            sfmt(sfx, sizeof(sfx), "_%d", i + 3);
            node1(s, "Reshape", hs, sfx, ins, 2, names_cls[i], NULL);
        }
    }
    {
        char box[NAME_MAX_LEN], cls[NAME_MAX_LEN], dsc[NAME_MAX_LEN], t[NAME_MAX_LEN],
            dfl[NAME_MAX_LEN], cst[NAME_MAX_LEN], anc[NAME_MAX_LEN], anc2[NAME_MAX_LEN],
            two[NAME_MAX_LEN], strd[NAME_MAX_LEN], lt[NAME_MAX_LEN], rb[NAME_MAX_LEN],
            x1[NAME_MAX_LEN], x2[NAME_MAX_LEN], sm[NAME_MAX_LEN], cxy[NAME_MAX_LEN],
            wh[NAME_MAX_LEN], cat[NAME_MAX_LEN], dbox[NAME_MAX_LEN], sig[NAME_MAX_LEN],
            s0[NAME_MAX_LEN], s2[NAME_MAX_LEN], s4[NAME_MAX_LEN], sax[NAME_MAX_LEN];
        int64_t v4[4] = {1, 4, 16, nanch}, v3[3] = {1, 4, nanch}, perm[4] = {0, 2, 1, 3};
        int64_t one = 1, zero = 0, i2 = 2, i4 = 4;
        struct act boxa;
        float *buf;
        size_t k = 0;

        eb_pb_buf_init(&at);
        attr_int(&at, "axis", -1);
        {
            const char *ins[3] = {names_box[0], names_box[1], names_box[2]};
            node1(s, "Concat", hs, "", ins, 3, box, &at);
        }
        {
            const char *ins[3] = {names_cls[0], names_cls[1], names_cls[2]};
            node1(s, "Concat", hs, "_1", ins, 3, cls, &at);
        }
        eb_pb_buf_fini(&at);
        sfmt(dsc, sizeof(dsc), "%s/dfl", hs);
        shape_const(s, cst, dsc, "", v4, 4);
        {
            const char *ins[2] = {box, cst};
            node1(s, "Reshape", dsc, "", ins, 2, t, NULL);
        }
        eb_pb_buf_init(&at);
        attr_ints(&at, "perm", perm, 4);
        {
            const char *ins[1] = {t};
            node1(s, "Transpose", dsc, "", ins, 1, t, &at);
        }
        eb_pb_buf_fini(&at);
        eb_pb_buf_init(&at);
        attr_int(&at, "axis", 1);
        {
            const char *ins[1] = {t};
            node1(s, "Softmax", dsc, "", ins, 1, t, &at);
        }
        eb_pb_buf_fini(&at);
        /* DFL projection: Conv2d(16, 1, 1, bias=False) with weights arange(16). */
        {
            char cs[NAME_MAX_LEN];
            int64_t wd[4] = {1, 16, 1, 1}, ks[2] = {1, 1}, st1[2] = {1, 1}, dil[2] = {1, 1},
                    pads[4] = {0, 0, 0, 0};
            float w[16];
            for (int i = 0; i < 16; i++)
                w[i] = (float)i;
            sfmt(cs, sizeof(cs), "%s/conv", dsc);
            init_f32(s, "model.dfl.conv.weight", wd, 4, w);
            eb_pb_buf_init(&at);
            attr_ints(&at, "dilations", dil, 2);
            attr_int(&at, "group", 1);
            attr_ints(&at, "kernel_shape", ks, 2);
            attr_ints(&at, "pads", pads, 4);
            attr_ints(&at, "strides", st1, 2);
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
            sfmt(anc, sizeof(anc), "%s/Constant_12_output_0", hs);
            init_f32(s, anc, d, 3, buf);
            sfmt(anc2, sizeof(anc2), "%s/Constant_13_output_0", hs);
            init_f32(s, anc2, d, 3, buf);
        }
        scalar_const(s, two, hs, "_14", 2.0f);
        k = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < lv[i].h * lv[i].w; j++)
                buf[k++] = (float)stride[i];
        {
            int64_t d[2] = {1, nanch};
            sfmt(strd, sizeof(strd), "%s/Constant_15_output_0", hs);
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
        attr_int(&at, "axis", 1);
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
            sfmt(boxa.name, sizeof(boxa.name), "%s/Concat_3", hs);
            node(s, "Concat", boxa.name, ins, 2, outs, 1, &at);
        }
        eb_pb_buf_fini(&at);
    }
    if (s->replay)
        detect_tail(s, nc, stride);
}

/*
 * The class gain g of the head (the class conv's output is g * its normalised pre-activation
 * plus the level bias b_l). On the calibration image, anchor a with best normalised class
 * logit M(a) passes conf CLS_CONF when g * M(a) > logit(CLS_CONF) - b_l; g is chosen so that
 * K = max(1, round(CLS_PASS_FRACTION * anchors)) anchors pass: the geometric mean of the K-th
 * and (K+1)-th smallest gains at which anchors start to pass, clamped to [0.05, 64].
 */
static double pick_class_gain(struct syn *s, int nc)
{
    size_t total = 0, k = 0, kk;
    double *r, g, lo, hi;
    for (int i = 0; i < 3; i++) {
        if (s->head_cls[i].d == NULL)
            return 1.0;
        total += (size_t)s->head_cls[i].eh * (size_t)s->head_cls[i].ew;
    }
    r = malloc(total * sizeof(double));
    if (r == NULL) {
        s->oom = 1;
        return 1.0;
    }
    for (int i = 0; i < 3; i++) {
        size_t n = (size_t)s->head_cls[i].eh * (size_t)s->head_cls[i].ew;
        double t = log(CLS_CONF / (1.0 - CLS_CONF)) - s->head_bias[i];
        for (size_t j = 0; j < n; j++) {
            double m = -HUGE_VAL;
            for (int c = 0; c < nc; c++)
                m = fmax(m, (double)s->head_cls[i].d[(size_t)c * n + j]);
            r[k++] = t <= 0.0 ? 0.0 : (m > 0.0 ? t / m : HUGE_VAL);
        }
    }
    qsort(r, total, sizeof(double), cmp_double);
    kk = (size_t)floor(CLS_PASS_FRACTION * (double)total + 0.5);
    kk = kk < 1 ? 1 : (kk > total ? total : kk);
    lo = r[kk - 1];
    hi = kk < total ? r[kk] : HUGE_VAL;
    if (!isfinite(lo))
        g = 64.0;
    else if (lo <= 0.0)
        g = isfinite(hi) && hi > 0.0 ? 0.5 * hi : 1.0;
    else if (isfinite(hi))
        g = sqrt(lo * hi);
    else
        g = 1.25 * lo;
    free(r);
    return g < 0.05 ? 0.05 : (g > 64.0 ? 64.0 : g);
}

/*
 * The Detect head, twice when building: a first pass on the calibration tensors yields the
 * normalised class logits for pick_class_gain, then the RNG and the output buffers are rewound
 * and the head is emitted again with the gain (same seeded values otherwise).
 */
static void detect_head(struct syn *s, int layer, const struct act *lv, int nc)
{
    if (!s->replay) {
        uint64_t rng = s->rng;
        size_t nodes_len = s->nodes.len, inits_len = s->inits.len, n_stored = s->n_stored;
        s->cls_dry = 1;
        detect(s, layer, lv, nc);
        s->cls_dry = 0;
        s->cls_gain = pick_class_gain(s, nc);
        s->rng = rng;
        s->nodes.len = nodes_len;
        s->inits.len = inits_len;
        store_truncate(s, n_stored);
    }
    detect(s, layer, lv, nc);
}

static void build_graph(struct syn *s, int nc, float *input, int esize)
{
    char sc[NAME_MAX_LEN];
    struct act x, l[24], cat[2];
    int L = 0;
    const int v11 = s->v11;

    memset(&x, 0, sizeof(x));
    sfmt(x.name, sizeof(x.name), "images");
    x.c = 3;
    x.h = x.w = s->o->imgsz;
    x.m2 = 0.25; /* letterboxed RGB / 255 */
    x.d = input;
    x.eh = x.ew = esize;

#define SC() scope_of(sc, L)
    SC();
    l[L] = conv(s, sc, &x, ch(s, 64), 3, 2, 1, 1);
    L++;
    SC();
    l[L] = conv(s, sc, &l[L - 1], ch(s, 128), 3, 2, 1, 1);
    L++;
    if (!v11) {
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 128), rep(s, 3), 1, 0, 0.5);
        L++;
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 256), 3, 2, 1, 1);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 256), rep(s, 6), 1, 0, 0.5);
        L++; /* 4 */
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 512), 3, 2, 1, 1);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 6), 1, 0, 0.5);
        L++; /* 6 */
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 1024), 3, 2, 1, 1);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 1024), rep(s, 3), 1, 0, 0.5);
        L++;
        SC();
        l[L] = sppf(s, sc, &l[L - 1], ch(s, 1024));
        L++; /* 9 */
        SC();
        l[L] = upsample(s, sc, &l[L - 1]);
        L++;
        SC();
        cat[0] = l[L - 1];
        cat[1] = l[6];
        l[L] = concat(s, sc, "", cat, 2);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 3), 0, 0, 0.5);
        L++; /* 12 */
        SC();
        l[L] = upsample(s, sc, &l[L - 1]);
        L++;
        SC();
        cat[0] = l[L - 1];
        cat[1] = l[4];
        l[L] = concat(s, sc, "", cat, 2);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 256), rep(s, 3), 0, 0, 0.5);
        L++; /* 15 */
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 256), 3, 2, 1, 1);
        L++;
        SC();
        cat[0] = l[L - 1];
        cat[1] = l[12];
        l[L] = concat(s, sc, "", cat, 2);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 3), 0, 0, 0.5);
        L++; /* 18 */
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 512), 3, 2, 1, 1);
        L++;
        SC();
        cat[0] = l[L - 1];
        cat[1] = l[9];
        l[L] = concat(s, sc, "", cat, 2);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 1024), rep(s, 3), 0, 0, 0.5);
        L++; /* 21 */
        {
            struct act lv[3] = {l[15], l[18], l[21]};
            detect_head(s, L, lv, nc);
        }
    } else {
        int k2 = s->c3k ? 2 : 1;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 256), rep(s, 2), 1, k2, 0.25);
        L++;
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 256), 3, 2, 1, 1);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 2), 1, k2, 0.25);
        L++; /* 4 */
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 512), 3, 2, 1, 1);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 2), 1, 2, 0.5);
        L++; /* 6 */
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 1024), 3, 2, 1, 1);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 1024), rep(s, 2), 1, 2, 0.5);
        L++;
        SC();
        l[L] = sppf(s, sc, &l[L - 1], ch(s, 1024));
        L++;
        SC();
        l[L] = c2psa(s, sc, &l[L - 1], rep(s, 2));
        L++; /* 10 */
        SC();
        l[L] = upsample(s, sc, &l[L - 1]);
        L++;
        SC();
        cat[0] = l[L - 1];
        cat[1] = l[6];
        l[L] = concat(s, sc, "", cat, 2);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 2), 1, k2, 0.5);
        L++; /* 13 */
        SC();
        l[L] = upsample(s, sc, &l[L - 1]);
        L++;
        SC();
        cat[0] = l[L - 1];
        cat[1] = l[4];
        l[L] = concat(s, sc, "", cat, 2);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 256), rep(s, 2), 1, k2, 0.5);
        L++; /* 16 */
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 256), 3, 2, 1, 1);
        L++;
        SC();
        cat[0] = l[L - 1];
        cat[1] = l[13];
        l[L] = concat(s, sc, "", cat, 2);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 2), 1, k2, 0.5);
        L++; /* 19 */
        SC();
        l[L] = conv(s, sc, &l[L - 1], ch(s, 512), 3, 2, 1, 1);
        L++;
        SC();
        cat[0] = l[L - 1];
        cat[1] = l[10];
        l[L] = concat(s, sc, "", cat, 2);
        L++;
        SC();
        l[L] = c2f(s, sc, &l[L - 1], ch(s, 1024), rep(s, 2), 1, 2, 0.5);
        L++; /* 22 */
        {
            struct act lv[3] = {l[16], l[19], l[22]};
            detect_head(s, L, lv, nc);
        }
    }
#undef SC
}

static const char *const coco_names[80] = {
    "person",        "bicycle",      "car",
    "motorcycle",    "airplane",     "bus",
    "train",         "truck",        "boat",
    "traffic light", "fire hydrant", "stop sign",
    "parking meter", "bench",        "bird",
    "cat",           "dog",          "horse",
    "sheep",         "cow",          "elephant",
    "bear",          "zebra",        "giraffe",
    "backpack",      "umbrella",     "handbag",
    "tie",           "suitcase",     "frisbee",
    "skis",          "snowboard",    "sports ball",
    "kite",          "baseball bat", "baseball glove",
    "skateboard",    "surfboard",    "tennis racket",
    "bottle",        "wine glass",   "cup",
    "fork",          "knife",        "spoon",
    "bowl",          "banana",       "apple",
    "sandwich",      "orange",       "broccoli",
    "carrot",        "hot dog",      "pizza",
    "donut",         "cake",         "chair",
    "couch",         "potted plant", "bed",
    "dining table",  "toilet",       "tv",
    "laptop",        "mouse",        "remote",
    "keyboard",      "cell phone",   "microwave",
    "oven",          "toaster",      "sink",
    "refrigerator",  "book",         "clock",
    "vase",          "scissors",     "teddy bear",
    "hair drier",    "toothbrush",
};

static void meta(struct eb_pb_buf *m, const char *key, const char *value)
{
    struct eb_pb_buf e;
    eb_pb_buf_init(&e);
    eb_pb_put_str(&e, 1, key);
    eb_pb_put_str(&e, 2, value);
    eb_pb_put_msg(m, 14, &e);
    eb_pb_buf_fini(&e);
}

/* ValueInfoProto of a float tensor with a static shape. */
static void value_info(struct eb_pb_buf *g, uint32_t field, const char *name, const int64_t *dims,
                       int rank)
{
    struct eb_pb_buf v, tp, tt, sh, d;
    eb_pb_buf_init(&v);
    eb_pb_buf_init(&tp);
    eb_pb_buf_init(&tt);
    eb_pb_buf_init(&sh);
    for (int i = 0; i < rank; i++) {
        eb_pb_buf_init(&d);
        eb_pb_put_varint(&d, 1, dims[i]);
        eb_pb_put_msg(&sh, 1, &d);
        eb_pb_buf_fini(&d);
    }
    eb_pb_put_varint(&tt, 1, 1);
    eb_pb_put_msg(&tt, 2, &sh);
    eb_pb_put_msg(&tp, 1, &tt);
    eb_pb_put_str(&v, 1, name);
    eb_pb_put_msg(&v, 2, &tp);
    eb_pb_put_msg(g, field, &v);
    eb_pb_buf_fini(&v);
    eb_pb_buf_fini(&tp);
    eb_pb_buf_fini(&tt);
    eb_pb_buf_fini(&sh);
}

/* Python dict literal of the class names, as Ultralytics writes it. */
static char *names_literal(int nc)
{
    size_t cap = 64 + (size_t)nc * 40, len = 0;
    char *p = malloc(cap);
    if (p == NULL)
        return NULL;
    p[len++] = '{';
    for (int i = 0; i < nc; i++) {
        char cls[32];
        int n;
        if (nc == 80)
            sfmt(cls, sizeof(cls), "%s", coco_names[i]);
        else
            sfmt(cls, sizeof(cls), "class%d", i);
        n = snprintf(p + len, cap - len, "%s%d: '%s'", i ? ", " : "", i, cls);
        if (n < 0 || (size_t)n >= cap - len) {
            free(p);
            return NULL;
        }
        len += (size_t)n;
    }
    if (len + 2 > cap) {
        free(p);
        return NULL;
    }
    p[len++] = '}';
    p[len] = '\0';
    return p;
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
 * The calibration size: the evaluation that folds the BatchNorms runs at this square size (the
 * graph's imgsz when smaller), 128 for n/s, less for the larger scales so that yolov8x stays
 * within a few seconds.
 */
static int calib_size(const struct eb_synth_options *o)
{
    static const int sizes[5] = {128, 128, 96, 96, 64};
    int c = sizes[strchr("nsmlx", o->scale) - "nsmlx"];
    return c < o->imgsz ? c : o->imgsz;
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
    struct eb_pb_buf graph, model, opset;
    char *names = NULL;
    char desc[128], imgsz[48];
    int si, nc, csize = 0;
    int64_t in_dims[4], out_dims[3];
    uint64_t z;
    float *calib = NULL;

    memset(&s, 0, sizeof(s));
    eb_pb_buf_init(&s.nodes);
    eb_pb_buf_init(&s.inits);
    eb_pb_buf_init(&graph);
    eb_pb_buf_init(&model);
    eb_pb_buf_init(&opset);
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

    csize = calib_size(opts);
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

    eb_pb_put_raw(&graph, s.nodes.data, s.nodes.len);
    eb_pb_put_str(&graph, 2, "main_graph");
    eb_pb_put_raw(&graph, s.inits.data, s.inits.len);
    in_dims[0] = 1;
    in_dims[1] = 3;
    in_dims[2] = in_dims[3] = opts->imgsz;
    value_info(&graph, 11, "images", in_dims, 4);
    out_dims[0] = 1;
    out_dims[1] = 4 + nc;
    out_dims[2] = (int64_t)(opts->imgsz / 8) * (opts->imgsz / 8) +
                  (int64_t)(opts->imgsz / 16) * (opts->imgsz / 16) +
                  (int64_t)(opts->imgsz / 32) * (opts->imgsz / 32);
    value_info(&graph, 12, "output0", out_dims, 3);
    if (s.nodes.error || s.inits.error)
        graph.error = 1;

    names = names_literal(nc);
    if (names == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM,
                          "failed to synthesize model: out of memory; free memory and retry");
        goto fail;
    }
    eb_pb_put_varint(&model, 1, 8); /* ir_version 8 goes with opset 17 */
    eb_pb_put_str(&model, 2, "edgebench");
    eb_pb_put_str(&model, 3, "1.0");
    eb_pb_put_msg(&model, 7, &graph);
    eb_pb_put_str(&opset, 1, "");
    eb_pb_put_varint(&opset, 2, 17);
    eb_pb_put_msg(&model, 8, &opset);
    sfmt(desc, sizeof(desc), "Ultralytics %s%c model architecture with synthetic weights",
         s.v11 ? "YOLO11" : "YOLOv8", opts->scale);
    sfmt(imgsz, sizeof(imgsz), "[%d, %d]", opts->imgsz, opts->imgsz);
    meta(&model, "description", desc);
    meta(&model, "author", "edgebench model synth");
    meta(&model, "stride", "32");
    meta(&model, "task", "detect");
    meta(&model, "batch", "1");
    meta(&model, "imgsz", imgsz);
    meta(&model, "names", names);
    meta(&model, "channels", "3");
    meta(&model, "edgebench_synthetic", "1");

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
    free(names);
    free(calib);
    free(s.out);
    free_bufs(&s);
    free(s.bufs);
    store_truncate(&s, 0);
    free(s.stored);
    free(s.scratch);
    eb_pb_buf_fini(&s.nodes);
    eb_pb_buf_fini(&s.inits);
    eb_pb_buf_fini(&graph);
    eb_pb_buf_fini(&model);
    eb_pb_buf_fini(&opset);
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
