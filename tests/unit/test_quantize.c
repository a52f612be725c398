/*
 * QDQ rewriting (model/qdq.h) on a synthesized yolov8n and on the shared fp32 models: the plan's
 * float set, the written file's form (pairs, per-channel weights, int32 biases, the opset raised
 * with Split/Softmax rewritten), that the native engine runs it on its integer kernels as close
 * to fake quantisation as integer arithmetic allows, and the float twin (dequantize).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb/engine.h"
#include "eb_test.h"
#include "engine/onnx/onnx_model.h"
#include "model/calib.h"
#include "model/model.h"
#include "model/qdq.h"

static uint8_t *synth(int imgsz, size_t *len)
{
    struct eb_synth_options o = {
        .arch = EB_SYNTH_YOLOV8, .scale = 'n', .imgsz = imgsz, .num_classes = 80, .seed = 1};
    uint8_t *bytes = NULL;
    struct eb_diag d = {0};
    if (eb_model_synth(&o, &bytes, len, &d) != EB_OK)
        EB_FAIL("synth: %s", d.msg);
    return bytes;
}

static uint8_t *shared_model(const char *name, size_t *len)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "models-fp32/%s", name);
    return eb_test_shared_file(rel, len);
}

static struct eb_onnx_model *parse(const uint8_t *b, size_t len)
{
    struct eb_onnx_model *m = NULL;
    struct eb_diag d = {0};
    if (eb_onnx_model_parse(b, len, "model", NULL, &m, &d) != EB_OK)
        EB_FAIL("parse: %s", d.msg);
    return m;
}

/* A smooth image-like input in [0, scale): the same for every run. */
static float *test_input(int c, int side, float scale)
{
    const size_t n = (size_t)c * side * side;
    float *x = malloc(n * sizeof(float));
    ASSERT_TRUE(x != NULL);
    for (size_t i = 0; i < n; i++)
        x[i] = scale * (0.5f + 0.45f * sinf((float)i * 0.013f) * cosf((float)(i / side) * 0.07f));
    return x;
}

struct mini_calib {
    struct eb_qdq_plan *plan;
    struct eb_calib_stat *st;
};

static void mini_observe(void *ctx, const char *name, const struct eb_tensor *t)
{
    struct mini_calib *c = ctx;
    const long a = eb_qdq_plan_act(c->plan, name), s = eb_qdq_plan_shape(c->plan, name);
    if (a >= 0) {
        eb_calib_add_minmax(&c->st[a], t->data, (size_t)eb_tensor_numel(t));
        c->plan->acts[a].seen = 1;
    }
    if (s >= 0) {
        c->plan->shapes[s].rank = t->rank;
        memcpy(c->plan->shapes[s].shape, t->shape, sizeof(int64_t) * (size_t)t->rank);
    }
}

/* Min/max calibration on the one test input, as `edgebench quantize --method minmax` does. */
static void calibrate(const uint8_t *b, size_t len, struct eb_qdq_plan *plan, const float *x,
                      int side)
{
    struct mini_calib c = {.plan = plan, .st = calloc(plan->n_acts, sizeof(*c.st))};
    ASSERT_TRUE(c.st != NULL);
    struct eb_engine_options o;
    eb_engine_options_default(&o);
    o.passes = EB_ENGINE_PASS_CONST_FOLD | EB_ENGINE_PASS_DCE;
    o.observe = mini_observe;
    o.observe_ctx = &c;
    o.threads = 2;
    o.imgsz = side;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    if (eb_engine_load(b, len, "float", &o, &e, &d) != EB_OK)
        EB_FAIL("load: %s", d.msg);
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = (void *)x};
    memcpy(in.shape, io.inputs[0].shape, sizeof(in.shape));
    mini_observe(&c, io.inputs[0].name, &in);
    struct eb_tensor out[EB_ENGINE_MAX_IO];
    if (eb_engine_run(e, &in, 1, out, io.n_outputs, &d) != EB_OK)
        EB_FAIL("run: %s", d.msg);
    for (size_t i = 0; i < plan->n_acts; i++) {
        double lo, hi;
        ASSERT_TRUE(plan->acts[i].seen);
        ASSERT_EQ_INT(eb_calib_range(&c.st[i], EB_CALIB_MINMAX, 0, &lo, &hi), 0);
        eb_calib_u8_params(lo, hi, &plan->acts[i].scale, &plan->acts[i].zero_point);
        eb_calib_stat_fini(&c.st[i]);
    }
    free(c.st);
    eb_engine_destroy(e);
}

/* Output 0 of a run (malloc'd copy), with the engine's count of integer nodes. */
static float *run(const uint8_t *b, size_t len, enum eb_engine_qdq qdq, const float *x, int side,
                  size_t *n_out, size_t *n_int8)
{
    struct eb_engine_options o;
    eb_engine_options_default(&o);
    o.qdq = qdq;
    o.threads = 2;
    o.imgsz = side;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    if (eb_engine_load(b, len, "model", &o, &e, &d) != EB_OK)
        EB_FAIL("load (qdq %d): %s", (int)qdq, d.msg);
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = (void *)x};
    memcpy(in.shape, io.inputs[0].shape, sizeof(in.shape));
    struct eb_tensor out[EB_ENGINE_MAX_IO];
    if (eb_engine_run(e, &in, 1, out, io.n_outputs, &d) != EB_OK)
        EB_FAIL("run: %s", d.msg);
    *n_out = (size_t)eb_tensor_numel(&out[0]);
    float *copy = malloc(*n_out * sizeof(float));
    ASSERT_TRUE(copy != NULL);
    memcpy(copy, out[0].data, *n_out * sizeof(float));
    if (n_int8 != NULL) {
        struct eb_engine_exec_info info;
        eb_engine_exec_info_get(e, &info);
        *n_int8 = info.n_int8;
    }
    eb_engine_destroy(e);
    return copy;
}

/* Max and mean abs difference over n values; prints them. */
static void diff(const float *a, const float *b, size_t n, double *max_out, double *mean_out,
                 const char *what)
{
    double mx = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
        const double dd = fabs((double)a[i] - (double)b[i]);
        ASSERT_TRUE(dd == dd);
        mx = dd > mx ? dd : mx;
        sum += dd;
    }
    *max_out = mx;
    *mean_out = sum / (double)n;
    printf("%s: max abs %.4g, mean abs %.4g over %zu values\n", what, mx, *mean_out, n);
}

static size_t count_op(const struct eb_onnx_model *m, const char *op)
{
    size_t n = 0;
    for (size_t k = 0; k < m->n_nodes; k++)
        n += strcmp(m->nodes[k].op_type, op) == 0;
    return n;
}

static uint8_t *quantize(const uint8_t *b, size_t len, const char *keep, int per_channel,
                         int conv_outputs, const float *x, int side, size_t *qlen,
                         struct eb_qdq_plan *plan, struct eb_onnx_model **m_out)
{
    struct eb_diag d = {0};
    *m_out = parse(b, len);
    if (eb_qdq_plan_build(*m_out, keep, per_channel, conv_outputs, plan, &d) != EB_OK)
        EB_FAIL("plan: %s", d.msg);
    calibrate(b, len, plan, x, side);
    const struct eb_qdq_meta meta[] = {{"edgebench.quantize.method", "minmax"}};
    uint8_t *q = NULL;
    if (eb_qdq_write(b, len, plan, meta, 1, &q, qlen, &d) != EB_OK)
        EB_FAIL("write: %s", d.msg);
    return q;
}

EB_TEST(plan_keeps_the_head_and_dfl_float)
{
    size_t len;
    uint8_t *b = synth(160, &len);
    struct eb_onnx_model *m = parse(b, len);
    struct eb_qdq_plan plan;
    struct eb_diag d = {0};
    ASSERT_OK(eb_qdq_plan_build(m, NULL, 1, 0, &plan, &d));
    /* yolov8n: 64 Conv; the last of each of the 6 head branches and the DFL's stay float */
    ASSERT_EQ_INT(plan.n_int8 + plan.n_float, 64);
    ASSERT_EQ_INT(plan.n_float, 7);
    int dfl = 0;
    for (size_t k = 0; k < m->n_nodes; k++)
        if (plan.node[k] == EB_QDQ_NODE_FLOAT && strstr(m->nodes[k].name, "dfl") != NULL)
            dfl = 1;
    ASSERT_TRUE(dfl);
    eb_qdq_plan_fini(&plan);
    ASSERT_OK(eb_qdq_plan_build(m, "none", 1, 0, &plan, &d));
    ASSERT_EQ_INT(plan.n_float, 0);
    eb_qdq_plan_fini(&plan);
    eb_onnx_model_destroy(m);
    free(b);
}

EB_TEST(keep_float_names_are_checked)
{
    size_t len;
    uint8_t *b = synth(160, &len);
    struct eb_onnx_model *m = parse(b, len);
    struct eb_qdq_plan plan;
    struct eb_diag d = {0};
    ASSERT_TRUE(eb_qdq_plan_build(m, "auto,no_such_node", 1, 0, &plan, &d) == EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "no_such_node");
    const char *other = NULL;
    for (size_t k = 0; k < m->n_nodes && other == NULL; k++)
        if (strcmp(m->nodes[k].op_type, "Sigmoid") == 0)
            other = m->nodes[k].name;
    ASSERT_TRUE(other != NULL);
    memset(&d, 0, sizeof(d));
    ASSERT_TRUE(eb_qdq_plan_build(m, other, 1, 0, &plan, &d) == EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "only Conv nodes");
    /* a Conv named by its output tensor */
    const char *conv_out = NULL;
    for (size_t k = 0; k < m->n_nodes && conv_out == NULL; k++)
        if (strcmp(m->nodes[k].op_type, "Conv") == 0)
            conv_out = m->nodes[k].outputs[0];
    ASSERT_OK(eb_qdq_plan_build(m, conv_out, 1, 0, &plan, &d));
    ASSERT_EQ_INT(plan.n_float, 1);
    eb_qdq_plan_fini(&plan);
    eb_onnx_model_destroy(m);
    free(b);
}

EB_TEST(written_model_runs_on_integer_kernels)
{
    const int side = 160;
    size_t len, qlen, n_f, n_q, n_i, n_int8 = 0;
    uint8_t *b = synth(side, &len);
    float *x = test_input(3, side, 1.0f);
    struct eb_qdq_plan plan;
    struct eb_onnx_model *m = NULL;
    uint8_t *q = quantize(b, len, NULL, 1, 0, x, side, &qlen, &plan, &m);
    struct eb_onnx_model *qm = parse(q, qlen);
    /* one pair per activation, one DQ per quantised weight and bias */
    ASSERT_EQ_INT(count_op(qm, "QuantizeLinear"), plan.n_acts);
    ASSERT_EQ_INT(count_op(qm, "DequantizeLinear"), plan.n_acts + 2 * plan.n_int8);
    ASSERT_EQ_INT(qm->opset, 17); /* already >= 13: kept */
    int per_channel = 0, int8_weights = 0;
    for (size_t i = 0; i < qm->n_inits; i++) {
        const struct eb_onnx_tensor *t = &qm->inits[i];
        const size_t ln = strlen(t->name);
        if (ln > 10 && strcmp(t->name + ln - 10, "_quantized") == 0 && t->dtype == EB_ONNX_INT8)
            int8_weights++;
        if (ln > 6 && strcmp(t->name + ln - 6, "_scale") == 0 && t->rank == 1 && t->dims[0] > 1)
            per_channel++;
    }
    ASSERT_EQ_INT(int8_weights, plan.n_int8);
    ASSERT_TRUE(per_channel >= (int)plan.n_int8);
    float *f = run(q, qlen, EB_ENGINE_QDQ_FLOAT, x, side, &n_f, NULL);
    float *i8 = run(q, qlen, EB_ENGINE_QDQ_INT8, x, side, &n_i, &n_int8);
    float *fl = run(b, len, EB_ENGINE_QDQ_FLOAT, x, side, &n_q, NULL);
    ASSERT_EQ_INT(n_f, n_i);
    ASSERT_EQ_INT(n_f, n_q);
    /* every quantised Conv runs on the integer kernels (float output + activation epilogue) */
    ASSERT_EQ_INT(n_int8, plan.n_int8);
    double mx, mean;
    /* integer sums vs float sums of the same quantised values: boxes (pixels) and scores
     * move by rounding at most; observed max 0.03, mean 3e-5 */
    diff(i8, f, n_f, &mx, &mean, "int8 kernels vs fake quantisation");
    ASSERT_TRUE(mx < 0.5 && mean < 1e-3);
    /* against the float model: quantisation noise, bounded (observed mean ~0.02 px/score) */
    diff(f, fl, n_f, &mx, &mean, "quantised vs float model");
    ASSERT_TRUE(mean < 0.5);
    free(f), free(i8), free(fl), free(q), free(b), free(x);
    eb_onnx_model_destroy(qm);
    eb_qdq_plan_fini(&plan);
    eb_onnx_model_destroy(m);
}

EB_TEST(conv_outputs_make_integer_chains)
{
    const int side = 160;
    size_t len, qlen, n, n_int8 = 0;
    uint8_t *b = synth(side, &len);
    float *x = test_input(3, side, 1.0f);
    struct eb_qdq_plan plan;
    struct eb_onnx_model *m = NULL;
    uint8_t *q = quantize(b, len, NULL, 0, 1, x, side, &qlen, &plan, &m);
    struct eb_onnx_model *qm = parse(q, qlen);
    /* per tensor: every weight scale is a scalar */
    for (size_t i = 0; i < qm->n_inits; i++) {
        const size_t ln = strlen(qm->inits[i].name);
        if (ln > 13 && strcmp(qm->inits[i].name + ln - 13, "weight_scale") == 0)
            ASSERT_EQ_INT(qm->inits[i].rank, 0);
    }
    ASSERT_TRUE(plan.n_acts > plan.n_int8); /* inputs and outputs */
    float *i8 = run(q, qlen, EB_ENGINE_QDQ_INT8, x, side, &n, &n_int8);
    ASSERT_EQ_INT(n_int8, plan.n_int8);
    free(i8), free(q), free(b), free(x);
    eb_onnx_model_destroy(qm);
    eb_qdq_plan_fini(&plan);
    eb_onnx_model_destroy(m);
}

EB_TEST(dequantize_round_trip)
{
    const int side = 160;
    size_t len, qlen, flen, n_folded = 0, n_a, n_b;
    uint8_t *b = synth(side, &len);
    float *x = test_input(3, side, 1.0f);
    struct eb_qdq_plan plan;
    struct eb_onnx_model *m = NULL;
    uint8_t *q = quantize(b, len, NULL, 1, 0, x, side, &qlen, &plan, &m);
    uint8_t *f = NULL;
    struct eb_diag d = {0};
    const struct eb_qdq_meta meta[] = {{"edgebench.dequantize", "test"}};
    ASSERT_OK(eb_qdq_dequantize(q, qlen, "q", meta, 1, &f, &flen, &n_folded, &d));
    struct eb_onnx_model *fm = parse(f, flen);
    ASSERT_EQ_INT(count_op(fm, "QuantizeLinear"), 0);
    ASSERT_EQ_INT(count_op(fm, "DequantizeLinear"), 0);
    ASSERT_EQ_INT(count_op(fm, "Conv"), 64);
    ASSERT_EQ_INT(n_folded, 2 * plan.n_acts + 2 * plan.n_int8);
    int meta_ok = 0;
    for (size_t i = 0; i < fm->n_meta; i++)
        meta_ok |= strcmp(fm->meta[i].key, "edgebench.dequantize") == 0 &&
                   strcmp(fm->meta[i].value, "test") == 0;
    ASSERT_TRUE(meta_ok);
    /* the float twin computes what the QDQ model computes without its activation pairs */
    float *ya = run(f, flen, EB_ENGINE_QDQ_FLOAT, x, side, &n_a, NULL);
    float *yb = run(q, qlen, EB_ENGINE_QDQ_STRIP, x, side, &n_b, NULL);
    ASSERT_EQ_INT(n_a, n_b);
    double mx, mean;
    diff(ya, yb, n_a, &mx, &mean, "dequantized vs --qdq strip");
    ASSERT_TRUE(mx < 1e-3);
    /* a float model has nothing to fold */
    memset(&d, 0, sizeof(d));
    uint8_t *none = NULL;
    ASSERT_TRUE(eb_qdq_dequantize(b, len, "float", meta, 1, &none, &flen, &n_folded, &d) ==
                EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "no QuantizeLinear/DequantizeLinear");
    free(ya), free(yb), free(f), free(q), free(b), free(x);
    eb_onnx_model_destroy(fm);
    eb_qdq_plan_fini(&plan);
    eb_onnx_model_destroy(m);
}

/* An opset-11 model quantised per channel: raised to 13, Split/Softmax rewritten; its float
 * twin (weights rounded, pairs removed) stays close to the float model. */
static float *opset_raise(const char *file, int side, float scale, const char *op, double rel_tol,
                          size_t *n_out)
{
    size_t len, qlen, flen, n_folded, n_a, n_b;
    uint8_t *b = shared_model(file, &len);
    float *x = test_input(3, side, scale);
    struct eb_qdq_plan plan;
    struct eb_onnx_model *m = NULL;
    uint8_t *q = quantize(b, len, NULL, 1, 0, x, side, &qlen, &plan, &m);
    ASSERT_TRUE(m->opset < 13);
    struct eb_onnx_model *qm = parse(q, qlen);
    ASSERT_EQ_INT(qm->opset, 13);
    ASSERT_TRUE(qm->ir_version >= 7);
    size_t seen = 0;
    for (size_t k = 0; k < qm->n_nodes; k++) {
        const struct eb_onnx_node *n = &qm->nodes[k];
        if (strcmp(n->op_type, op) != 0)
            continue;
        seen++;
        if (strcmp(op, "Split") == 0) {
            ASSERT_TRUE(eb_onnx_node_attr(n, "split") == NULL);
            ASSERT_EQ_INT(n->n_inputs, 2);
        } else {
            ASSERT_TRUE(eb_onnx_node_attr(n, "axis") != NULL);
        }
    }
    ASSERT_TRUE(seen > 0);
    uint8_t *f = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_qdq_dequantize(q, qlen, "q", NULL, 0, &f, &flen, &n_folded, &d));
    float *ya = run(f, flen, EB_ENGINE_QDQ_FLOAT, x, side, &n_a, NULL);
    float *yb = run(b, len, EB_ENGINE_QDQ_FLOAT, x, side, &n_b, NULL);
    ASSERT_EQ_INT(n_a, n_b);
    double mx, mean, amp = 0;
    for (size_t i = 0; i < n_b; i++)
        amp += fabs((double)yb[i]) / (double)n_b;
    diff(ya, yb, n_a, &mx, &mean, file);
    printf("mean |float output| %.4g\n", amp);
    ASSERT_TRUE(mean < rel_tol * amp); /* int8 weights only */
    *n_out = n_a;
    free(yb), free(f), free(q), free(b), free(x);
    eb_onnx_model_destroy(qm);
    eb_qdq_plan_fini(&plan);
    eb_onnx_model_destroy(m);
    return ya;
}

EB_TEST(opset_raise_rewrites_split)
{
    size_t n;
    /* a Split of the wrong sizes would change the outputs wholesale; observed 2.1% */
    free(opset_raise("nanodet_m_416_fp32.onnx", 416, 1.0f, "Split", 0.05, &n));
}

EB_TEST(opset_raise_rewrites_softmax)
{
    size_t n;
    /* observed 9% of the mean |output| (a 0.24 M-parameter model's raw box channels) */
    float *y = opset_raise("fastestdet_352_fp32.onnx", 352, 1.0f, "Softmax", 0.15, &n);
    /* [1,85,22,22]: channels 5..84 are the class softmax of each cell, over the classes alone
     * (opset 11's coerced-2D softmax read at opset 13 would spread it over the cells too) */
    ASSERT_EQ_INT(n, 85 * 22 * 22);
    for (int cell = 0; cell < 22 * 22; cell++) {
        double sum = 0;
        for (int c = 5; c < 85; c++)
            sum += y[c * 22 * 22 + cell];
        ASSERT_NEAR(sum, 1.0, 1e-4);
    }
    free(y);
}

EB_TEST(per_tensor_keeps_an_old_opset)
{
    size_t len;
    uint8_t *b = shared_model("yolov5lite_e_320_fp32.onnx", &len);
    struct eb_onnx_model *m = parse(b, len);
    struct eb_qdq_plan plan;
    struct eb_diag d = {0};
    ASSERT_OK(eb_qdq_plan_build(m, NULL, 0, 0, &plan, &d));
    ASSERT_EQ_INT(plan.opset_out, m->opset); /* 12: per-tensor Q/DQ exist since 10 */
    eb_qdq_plan_fini(&plan);
    eb_onnx_model_destroy(m);
    free(b);
}
