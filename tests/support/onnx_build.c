/* Hand-built ONNX model pieces for tests (onnx_build.h). */
#include "onnx_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eb_test_put_value_info(struct eb_pb_buf *g, uint32_t field, const char *name, int elem_type,
                            int rank, const int64_t *dims)
{
    eb_test_put_value_info_named(g, field, name, elem_type, rank, dims, NULL);
}

void eb_test_put_value_info_named(struct eb_pb_buf *g, uint32_t field, const char *name,
                                  int elem_type, int rank, const int64_t *dims,
                                  const char *const *dim_names)
{
    struct eb_pb_buf vi, tp, tt, sh;
    eb_pb_buf_init(&vi);
    eb_pb_buf_init(&tp);
    eb_pb_buf_init(&tt);
    eb_pb_buf_init(&sh);
    for (int i = 0; i < rank; i++) {
        struct eb_pb_buf dim;
        eb_pb_buf_init(&dim);
        if (dim_names != NULL && dim_names[i] != NULL)
            eb_pb_put_str(&dim, 2, dim_names[i]);
        else
            eb_pb_put_varint(&dim, 1, dims[i]);
        eb_pb_put_msg(&sh, 1, &dim);
        eb_pb_buf_fini(&dim);
    }
    eb_pb_put_varint(&tt, 1, elem_type);
    if (rank >= 0)
        eb_pb_put_msg(&tt, 2, &sh);
    eb_pb_put_msg(&tp, 1, &tt);
    eb_pb_put_str(&vi, 1, name);
    eb_pb_put_msg(&vi, 2, &tp);
    eb_pb_put_msg(g, field, &vi);
    eb_pb_buf_fini(&vi);
    eb_pb_buf_fini(&tp);
    eb_pb_buf_fini(&tt);
    eb_pb_buf_fini(&sh);
}

uint8_t *eb_test_model_finish(struct eb_pb_buf *g, const char *graph_name, int opset,
                              size_t *len_out)
{
    struct eb_pb_buf m, os;
    eb_pb_buf_init(&m);
    eb_pb_buf_init(&os);
    eb_pb_put_str(g, 2, graph_name);
    eb_pb_put_varint(&os, 2, opset);
    eb_pb_put_varint(&m, 1, 8);
    eb_pb_put_msg(&m, 7, g);
    eb_pb_put_msg(&m, 8, &os);
    uint8_t *bytes = eb_pb_buf_error(&m) || eb_pb_buf_error(g) ? NULL : eb_pb_buf_take(&m, len_out);
    eb_pb_buf_fini(&m);
    eb_pb_buf_fini(&os);
    eb_pb_buf_fini(g);
    return bytes;
}

void eb_test_put_attr_int(struct eb_pb_buf *node, const char *name, int64_t v)
{
    struct eb_pb_buf a;
    eb_pb_buf_init(&a);
    eb_pb_put_str(&a, 1, name);
    eb_pb_put_varint(&a, 3, v);
    eb_pb_put_varint(&a, 20, 2); /* INT */
    eb_pb_put_msg(node, 5, &a);
    eb_pb_buf_fini(&a);
}

void eb_test_put_attr_str(struct eb_pb_buf *node, const char *name, const char *v)
{
    struct eb_pb_buf a;
    eb_pb_buf_init(&a);
    eb_pb_put_str(&a, 1, name);
    eb_pb_put_bytes(&a, 4, v, strlen(v));
    eb_pb_put_varint(&a, 20, 3); /* STRING */
    eb_pb_put_msg(node, 5, &a);
    eb_pb_buf_fini(&a);
}

void eb_test_put_attr_ints(struct eb_pb_buf *node, const char *name, const int64_t *v, int n)
{
    struct eb_pb_buf a;
    eb_pb_buf_init(&a);
    eb_pb_put_str(&a, 1, name);
    for (int i = 0; i < n; i++)
        eb_pb_put_varint(&a, 8, v[i]);
    eb_pb_put_varint(&a, 20, 7); /* INTS */
    eb_pb_put_msg(node, 5, &a);
    eb_pb_buf_fini(&a);
}

/* A TensorProto initializer: float32 (`f`) or int64 (`i`) data, `rank` dims. */
static void put_init(struct eb_pb_buf *g, const char *name, int rank, const int64_t *dims,
                     const float *f, const int64_t *i)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    size_t n = 1;
    for (int k = 0; k < rank; k++) {
        eb_pb_put_varint(&t, 1, dims[k]);
        n *= (size_t)dims[k];
    }
    eb_pb_put_varint(&t, 2, f != NULL ? 1 : 7);
    eb_pb_put_str(&t, 8, name);
    if (f != NULL)
        eb_pb_put_bytes(&t, 9, f, n * sizeof(float));
    else
        eb_pb_put_bytes(&t, 9, i, n * sizeof(int64_t));
    eb_pb_put_msg(g, 5, &t);
    eb_pb_buf_fini(&t);
}

/* A NodeProto `op` (inputs, outputs; "" = an omitted optional input) with `attrs` (NULL none)
 * appended to graph `g`. */
static void put_node(struct eb_pb_buf *g, const char *op, const char *const *in, int n_in,
                     const char *out, const struct eb_pb_buf *attrs)
{
    struct eb_pb_buf n;
    eb_pb_buf_init(&n);
    for (int k = 0; k < n_in; k++)
        eb_pb_put_str(&n, 1, in[k]);
    eb_pb_put_str(&n, 2, out);
    eb_pb_put_str(&n, 3, out);
    eb_pb_put_str(&n, 4, op);
    if (attrs != NULL)
        eb_pb_put_raw(&n, attrs->data, attrs->len);
    eb_pb_put_msg(g, 1, &n);
    eb_pb_buf_fini(&n);
}

static void put_meta(struct eb_pb_buf *model, const char *key, const char *value)
{
    struct eb_pb_buf e;
    eb_pb_buf_init(&e);
    eb_pb_put_str(&e, 1, key);
    eb_pb_put_str(&e, 2, value);
    eb_pb_put_msg(model, 14, &e);
    eb_pb_buf_fini(&e);
}

/* One output's chain from `src` (the image, or the resized image). */
static void put_head_out(struct eb_pb_buf *g, const struct eb_test_head_model *m, int o,
                         const char *src)
{
    const struct eb_test_head_out *h = &m->out[o];
    const int k = m->kernel, C = h->channels;
    const int64_t cells = (int64_t)(m->in_h / k) * (m->in_w / k);
    char w[32], conv[32], shp[32], flat[32], st[32], en[32], ax[32], cut[32], tr[32], sg[32],
        two[32], mul[32], half[32], add[32];
#define NAME(v, what) snprintf(v, sizeof(v), "o%d_%s", o, what)
    NAME(w, "w");
    NAME(conv, "conv");
    NAME(shp, "shape");
    NAME(flat, "flat");
    NAME(st, "starts");
    NAME(en, "ends");
    NAME(ax, "axes");
    NAME(cut, "cut");
    NAME(tr, "rows");
    NAME(sg, "sigmoid");
    NAME(two, "two");
    NAME(mul, "mul");
    NAME(half, "half");
    NAME(add, "add");
#undef NAME
    /* Weights in [-0.5, 0.5] / (3 k k): outputs of the order of the pixels (0..1). */
    const size_t nw = (size_t)C * 3 * (size_t)k * (size_t)k;
    float *wd = malloc(nw * sizeof(float));
    if (wd == NULL)
        return; /* the buffer's error flag is not set: the caller's model misses this output */
    for (size_t i = 0; i < nw; i++)
        wd[i] = (float)((int)((i * 37 + (size_t)o * 11) % 17) - 8) / 16.0f / (float)(3 * k * k);
    const int64_t wdims[4] = {C, 3, k, k}, one = 1, three = 3;
    put_init(g, w, 4, wdims, wd, NULL);
    free(wd);
    struct eb_pb_buf a;
    eb_pb_buf_init(&a);
    const int64_t ks[2] = {k, k};
    eb_test_put_attr_ints(&a, "kernel_shape", ks, 2);
    eb_test_put_attr_ints(&a, "strides", ks, 2);
    put_node(g, "Conv", (const char *const[]){src, w}, 2, conv, &a);
    eb_pb_buf_fini(&a);
    const int64_t sd[3] = {1, C, cells};
    put_init(g, shp, 1, &three, NULL, sd);
    put_node(g, "Reshape", (const char *const[]){conv, shp}, 2, flat, NULL);
    const char *cur = flat;
    if (h->cells < cells) {
        const int64_t zero = 0, end = h->cells, axis = 2;
        put_init(g, st, 1, &one, NULL, &zero);
        put_init(g, en, 1, &one, NULL, &end);
        put_init(g, ax, 1, &one, NULL, &axis);
        put_node(g, "Slice", (const char *const[]){flat, st, en, ax}, 4, cut, NULL);
        cur = cut;
    }
    if (h->rows_first) {
        eb_pb_buf_init(&a);
        const int64_t perm[3] = {0, 2, 1};
        eb_test_put_attr_ints(&a, "perm", perm, 3);
        put_node(g, "Transpose", (const char *const[]){cur}, 1, tr, &a);
        eb_pb_buf_fini(&a);
        cur = tr;
    }
    const char *end = h->end;
    if (end != NULL && (strcmp(end, "decode") == 0 || strcmp(end, "Sigmoid") == 0)) {
        put_node(g, "Sigmoid", (const char *const[]){cur}, 1, sg, NULL);
        cur = sg;
    } else if (end != NULL && strcmp(end, "Softmax") == 0) {
        put_node(g, "Softmax", (const char *const[]){cur}, 1, sg, NULL);
        cur = sg;
    }
    if (end != NULL && (strcmp(end, "decode") == 0 || strcmp(end, "scale") == 0)) {
        const float fv2 = 2.0f, fvh = 0.5f;
        put_init(g, two, 1, &one, &fv2, NULL);
        put_node(g, "Mul", (const char *const[]){cur, two}, 2, mul, NULL);
        cur = mul;
        if (strcmp(end, "decode") == 0) {
            put_init(g, half, 1, &one, &fvh, NULL);
            put_node(g, "Add", (const char *const[]){cur, half}, 2, add, NULL);
            cur = add;
        }
    }
    /* The last node writes the output: rename by an Identity (transparent to recognition). */
    put_node(g, "Identity", (const char *const[]){cur}, 1, h->name, NULL);
    const int64_t od[3] = {1, h->rows_first ? h->cells : C, h->rows_first ? C : h->cells};
    eb_test_put_value_info(g, 12, h->name, 1, 3, od);
}

uint8_t *eb_test_head_model_build(const struct eb_test_head_model *m, size_t *len_out)
{
    struct eb_pb_buf g, model, opset;
    eb_pb_buf_init(&g);
    eb_pb_buf_init(&model);
    eb_pb_buf_init(&opset);
    eb_pb_put_str(&g, 2, "heads");
    const int64_t idims[4] = {1, 3, m->in_h, m->in_w};
    eb_test_put_value_info(&g, 11, "images", 1, 4, idims);
    const char *src = "images";
    if (m->resize_cubic) {
        const float scales[4] = {1, 1, 1, 1};
        const int64_t four = 4;
        put_init(&g, "scales", 1, &four, scales, NULL);
        struct eb_pb_buf a;
        eb_pb_buf_init(&a);
        eb_test_put_attr_str(&a, "mode", "cubic");
        put_node(&g, "Resize", (const char *const[]){"images", "", "scales"}, 3, "resized", &a);
        eb_pb_buf_fini(&a);
        src = "resized";
    }
    for (int o = 0; o < m->n_outputs; o++)
        put_head_out(&g, m, o, src);
    eb_pb_put_varint(&model, 1, 8);
    eb_pb_put_str(&model, 2, "edgebench-tests");
    eb_pb_put_msg(&model, 7, &g);
    eb_pb_put_str(&opset, 1, "");
    eb_pb_put_varint(&opset, 2, 13);
    eb_pb_put_msg(&model, 8, &opset);
    if (m->n_names > 0) {
        char names[4096];
        size_t n = 0;
        names[n++] = '{';
        for (int i = 0; i < m->n_names && n + 32 < sizeof(names); i++)
            n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%d: 'c%d'", i ? ", " : "", i, i);
        snprintf(names + n, sizeof(names) - n, "}");
        put_meta(&model, "stride", "32");
        put_meta(&model, "task", "detect");
        put_meta(&model, "names", names);
    }
    uint8_t *bytes =
        eb_pb_buf_error(&model) || eb_pb_buf_error(&g) ? NULL : eb_pb_buf_take(&model, len_out);
    eb_pb_buf_fini(&g);
    eb_pb_buf_fini(&model);
    eb_pb_buf_fini(&opset);
    return bytes;
}

int eb_test_head_model_preset(const char *name, struct eb_test_head_model *m)
{
    static const struct {
        const char *name;
        struct eb_test_head_model m;
    } presets[] = {
        /* DETR: softmax logits over 91 classes + no-object, sigmoid boxes; 100 queries. */
        {"detr",
         {80, 80, 8, 0, 2, {{"logits", 92, 100, 1, NULL}, {"boxes", 4, 100, 1, "Sigmoid"}}, 0}},
        /* RT-DETR style: sigmoid scores per class, 300 queries. */
        {"detr-sigmoid",
         {160, 160, 8, 0, 2, {{"boxes", 4, 300, 1, "Sigmoid"}, {"scores", 80, 300, 1, NULL}}, 0}},
        {"end2end", {160, 160, 8, 0, 1, {{"output0", 6, 300, 1, "scale"}}, 80}},
        /* YOLOv5 at 64x64: 3 anchors x (64 + 16 + 4) cells. */
        {"v5", {64, 64, 4, 0, 1, {{"output0", 85, 252, 1, "decode"}}, 0}},
        {"v5-raw", {64, 64, 4, 0, 1, {{"output0", 85, 252, 1, "Sigmoid"}}, 0}},
        {"unknown", {32, 32, 8, 0, 1, {{"mystery", 7, 3, 0, "Sigmoid"}}, 0}},
        /* A v8 head [1,84,189] (the cells of strides 8,16,32 at 96x96) behind a cubic Resize. */
        {"native-refused", {96, 96, 4, 1, 1, {{"output0", 84, 189, 0, "scale"}}, 0}},
    };
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
        if (strcmp(name, presets[i].name) == 0) {
            *m = presets[i].m;
            return 1;
        }
    return 0;
}
