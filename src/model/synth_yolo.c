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
 * Weights are seeded (xorshift64*). Each conv is scaled the way a folded BatchNorm would leave
 * it: the output of every conv has about unit second moment, given an analytic estimate of the
 * second moment of its input (tracked through SiLU, Add, Concat, MaxPool), so activations stay
 * in range over the ~100 layers. Head biases follow Ultralytics' bias_init: box branch 1.0,
 * class branch log(5 / nc / (imgsz / stride)^2), so few boxes pass a 0.25 confidence.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/onnx/onnx_wire.h"
#include "model/model.h"

#define NAME_MAX_LEN 160
#define SILU_M2 0.355 /* E[silu(z)^2] for z ~ N(0, 1) */

/* An NCHW activation: its name, shape and estimated second moment E[x^2]. */
struct act {
    char name[NAME_MAX_LEN];
    int c, h, w;
    double m2;
};

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
 * Conv2d (+ SiLU when `act`) with folded-BN weights and bias. `scope` is the module
 * ("/model.2/cv1"); the Conv node goes in "<scope>/conv" for Conv modules (act >= 0) or
 * directly in scope for a plain nn.Conv2d (act < 0, then `bias_value` is used as bias).
 */
static struct act conv_ex(struct syn *s, const char *scope, const struct act *x, int c2, int k,
                          int stride, int groups, int act, int plain, float bias_value)
{
    struct act y;
    char cscope[NAME_MAX_LEN], pfx[NAME_MAX_LEN], wname[NAME_MAX_LEN + 8],
        bname[NAME_MAX_LEN + 8];
    int cin_g = x->c / groups;
    int64_t wd[4] = {c2, cin_g, k, k}, bd[1] = {c2};
    size_t nw = (size_t)c2 * (size_t)cin_g * (size_t)k * (size_t)k;
    double fan_in = (double)cin_g * k * k;
    double std = 1.0 / sqrt(fan_in * (x->m2 > 1e-6 ? x->m2 : 1e-6));
    float a = (float)(std * sqrt(3.0));
    float *w;
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
    w = scratch(s, nw + (size_t)c2);
    if (w == NULL)
        return *x;
    for (size_t i = 0; i < nw; i++)
        w[i] = a * rng_uniform(s);
    init_f32(s, wname, wd, 4, w);
    for (int i = 0; i < c2; i++)
        w[i] = plain ? bias_value : 0.1f * rng_uniform(s);
    init_f32(s, bname, bd, 1, w);

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
    y.c = c2;
    y.h = (x->h + 2 * (k / 2) - k) / stride + 1;
    y.w = (x->w + 2 * (k / 2) - k) / stride + 1;
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
    return y;
}

static struct act concat(struct syn *s, const char *scope, const char *sfx, const struct act *xs,
                         int n)
{
    struct act y = xs[0];
    const char *ins[8];
    struct eb_pb_buf at;
    double m2 = 0;
    int c = 0;
    for (int i = 0; i < n; i++) {
        ins[i] = xs[i].name;
        c += xs[i].c;
        m2 += xs[i].m2 * xs[i].c;
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
    for (int i = 0; i < n; i++) {
        outs[i] = *x;
        memcpy(outs[i].name, onames[i], NAME_MAX_LEN);
        outs[i].c = sizes[i];
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
        sfmt(sc, sizeof(sc), "%s/cv2.%d/cv2.%d.0", hs, i, i);
        b = conv(s, sc, &lv[i], c2, 3, 1, 1, 1);
        sfmt(sc, sizeof(sc), "%s/cv2.%d/cv2.%d.1", hs, i, i);
        b = conv(s, sc, &b, c2, 3, 1, 1, 1);
        sfmt(sc, sizeof(sc), "%s/cv2.%d/cv2.%d.2", hs, i, i);
        b = conv_ex(s, sc, &b, 64, 1, 1, 1, 0, 1, 1.0f);
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
            c = conv_ex(s, sc, &c, nc, 1, 1, 1, 0, 1, bias);
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
}

static void build_graph(struct syn *s, int nc)
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

#define SC() scope_of(sc, L)
    SC(); l[L] = conv(s, sc, &x, ch(s, 64), 3, 2, 1, 1); L++;
    SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 128), 3, 2, 1, 1); L++;
    if (!v11) {
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 128), rep(s, 3), 1, 0, 0.5); L++;
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 256), 3, 2, 1, 1); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 256), rep(s, 6), 1, 0, 0.5); L++;       /* 4 */
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 512), 3, 2, 1, 1); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 6), 1, 0, 0.5); L++;       /* 6 */
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 1024), 3, 2, 1, 1); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 1024), rep(s, 3), 1, 0, 0.5); L++;
        SC(); l[L] = sppf(s, sc, &l[L - 1], ch(s, 1024)); L++;                      /* 9 */
        SC(); l[L] = upsample(s, sc, &l[L - 1]); L++;
        SC(); cat[0] = l[L - 1]; cat[1] = l[6]; l[L] = concat(s, sc, "", cat, 2); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 3), 0, 0, 0.5); L++;       /* 12 */
        SC(); l[L] = upsample(s, sc, &l[L - 1]); L++;
        SC(); cat[0] = l[L - 1]; cat[1] = l[4]; l[L] = concat(s, sc, "", cat, 2); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 256), rep(s, 3), 0, 0, 0.5); L++;       /* 15 */
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 256), 3, 2, 1, 1); L++;
        SC(); cat[0] = l[L - 1]; cat[1] = l[12]; l[L] = concat(s, sc, "", cat, 2); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 3), 0, 0, 0.5); L++;       /* 18 */
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 512), 3, 2, 1, 1); L++;
        SC(); cat[0] = l[L - 1]; cat[1] = l[9]; l[L] = concat(s, sc, "", cat, 2); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 1024), rep(s, 3), 0, 0, 0.5); L++;      /* 21 */
        {
            struct act lv[3] = {l[15], l[18], l[21]};
            detect(s, L, lv, nc);
        }
    } else {
        int k2 = s->c3k ? 2 : 1;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 256), rep(s, 2), 1, k2, 0.25); L++;
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 256), 3, 2, 1, 1); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 2), 1, k2, 0.25); L++;      /* 4 */
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 512), 3, 2, 1, 1); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 2), 1, 2, 0.5); L++;       /* 6 */
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 1024), 3, 2, 1, 1); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 1024), rep(s, 2), 1, 2, 0.5); L++;
        SC(); l[L] = sppf(s, sc, &l[L - 1], ch(s, 1024)); L++;
        SC(); l[L] = c2psa(s, sc, &l[L - 1], rep(s, 2)); L++;                       /* 10 */
        SC(); l[L] = upsample(s, sc, &l[L - 1]); L++;
        SC(); cat[0] = l[L - 1]; cat[1] = l[6]; l[L] = concat(s, sc, "", cat, 2); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 2), 1, k2, 0.5); L++;      /* 13 */
        SC(); l[L] = upsample(s, sc, &l[L - 1]); L++;
        SC(); cat[0] = l[L - 1]; cat[1] = l[4]; l[L] = concat(s, sc, "", cat, 2); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 256), rep(s, 2), 1, k2, 0.5); L++;      /* 16 */
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 256), 3, 2, 1, 1); L++;
        SC(); cat[0] = l[L - 1]; cat[1] = l[13]; l[L] = concat(s, sc, "", cat, 2); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 512), rep(s, 2), 1, k2, 0.5); L++;      /* 19 */
        SC(); l[L] = conv(s, sc, &l[L - 1], ch(s, 512), 3, 2, 1, 1); L++;
        SC(); cat[0] = l[L - 1]; cat[1] = l[10]; l[L] = concat(s, sc, "", cat, 2); L++;
        SC(); l[L] = c2f(s, sc, &l[L - 1], ch(s, 1024), rep(s, 2), 1, 2, 0.5); L++;      /* 22 */
        {
            struct act lv[3] = {l[16], l[19], l[22]};
            detect(s, L, lv, nc);
        }
    }
#undef SC
}

static const char *const coco_names[80] = {
    "person",        "bicycle",      "car",           "motorcycle",    "airplane",
    "bus",           "train",        "truck",         "boat",          "traffic light",
    "fire hydrant",  "stop sign",    "parking meter", "bench",         "bird",
    "cat",           "dog",          "horse",         "sheep",         "cow",
    "elephant",      "bear",         "zebra",         "giraffe",       "backpack",
    "umbrella",      "handbag",      "tie",           "suitcase",      "frisbee",
    "skis",          "snowboard",    "sports ball",   "kite",          "baseball bat",
    "baseball glove", "skateboard",  "surfboard",     "tennis racket", "bottle",
    "wine glass",    "cup",          "fork",          "knife",         "spoon",
    "bowl",          "banana",       "apple",         "sandwich",      "orange",
    "broccoli",      "carrot",       "hot dog",       "pizza",         "donut",
    "cake",          "chair",        "couch",         "potted plant",  "bed",
    "dining table",  "toilet",       "tv",            "laptop",        "mouse",
    "remote",        "keyboard",     "cell phone",    "microwave",     "oven",
    "toaster",       "sink",         "refrigerator",  "book",          "clock",
    "vase",          "scissors",     "teddy bear",    "hair drier",    "toothbrush",
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

enum eb_status eb_model_synth(const struct eb_synth_options *opts, uint8_t **bytes_out,
                              size_t *len_out, struct eb_diag *diag)
{
    static const double v8[5][3] = {{0.33, 0.25, 1024}, {0.33, 0.50, 1024}, {0.67, 0.75, 768},
                                    {1.00, 1.00, 512},  {1.00, 1.25, 512}};
    static const double y11[5][3] = {{0.50, 0.25, 1024}, {0.50, 0.50, 1024}, {0.50, 1.00, 512},
                                     {1.00, 1.00, 512},  {1.00, 1.50, 512}};
    enum eb_status st;
    struct syn s;
    struct eb_pb_buf graph, model, opset;
    char *names = NULL;
    char desc[128], imgsz[48];
    int si, nc;
    int64_t in_dims[4], out_dims[3];
    uint64_t z;

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

    build_graph(&s, nc);

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
    free(s.scratch);
    eb_pb_buf_fini(&s.nodes);
    eb_pb_buf_fini(&s.inits);
    eb_pb_buf_fini(&graph);
    eb_pb_buf_fini(&model);
    eb_pb_buf_fini(&opset);
    return st;
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
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to write model %s: short write; check disk space",
                          path);
        goto fail;
    }
    if (fclose(fp) != 0) {
        fp = NULL;
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to write model %s: close failed; check disk space",
                          path);
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
