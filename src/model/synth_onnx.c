/*
 * Protobuf emission for eb_model_synth: ONNX TensorProto initializers, AttributeProto, NodeProto,
 * and the ModelProto around the graph (value infos, opset, Ultralytics metadata). Field numbers
 * follow onnx.proto; everything is written in the order `torch.onnx.export` uses.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/onnx/onnx_wire.h"
#include "model/synth_internal.h"

void eb_synth__fmt(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, cap, fmt, ap);
    va_end(ap);
}

uint64_t eb_synth__rng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(2685821657736338717);
}

static void tensor_header(struct eb_pb_buf *t, const char *name, int dtype, const int64_t *dims,
                          int rank)
{
    for (int i = 0; i < rank; i++)
        eb_pb_put_varint(t, 1, dims[i]);
    eb_pb_put_varint(t, 2, dtype);
    eb_pb_put_str(t, 8, name);
}

int eb_synth__init_f32(struct eb_pb_buf *inits, const char *name, const int64_t *dims, int rank,
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
        eb_pb_buf_fini(&t);
        return -1;
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
    eb_pb_put_msg(inits, 5, &t);
    eb_pb_buf_fini(&t);
    return 0;
}

void eb_synth__init_raw(struct eb_pb_buf *inits, const char *name, int dtype, const int64_t *dims,
                        int rank, const void *raw, size_t nbytes)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    tensor_header(&t, name, dtype, dims, rank);
    eb_pb_put_bytes(&t, 9, raw, nbytes);
    eb_pb_put_msg(inits, 5, &t);
    eb_pb_buf_fini(&t);
}

void eb_synth__init_i64(struct eb_pb_buf *inits, const char *name, const int64_t *data, int64_t n)
{
    struct eb_pb_buf t;
    uint8_t raw[8 * 8];
    eb_pb_buf_init(&t);
    tensor_header(&t, name, 7, &n, 1);
    for (int64_t i = 0; i < n && i < 8; i++)
        for (int k = 0; k < 8; k++)
            raw[8 * i + k] = (uint8_t)((uint64_t)data[i] >> (8 * k));
    eb_pb_put_bytes(&t, 9, raw, (size_t)n * 8);
    eb_pb_put_msg(inits, 5, &t);
    eb_pb_buf_fini(&t);
}

void eb_synth__attr_int(struct eb_pb_buf *a, const char *name, int64_t v)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    eb_pb_put_str(&t, 1, name);
    eb_pb_put_varint(&t, 3, v);
    eb_pb_put_varint(&t, 20, 2);
    eb_pb_put_msg(a, 5, &t);
    eb_pb_buf_fini(&t);
}

void eb_synth__attr_float(struct eb_pb_buf *a, const char *name, float v)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    eb_pb_put_str(&t, 1, name);
    eb_pb_put_f32(&t, 2, v);
    eb_pb_put_varint(&t, 20, 1);
    eb_pb_put_msg(a, 5, &t);
    eb_pb_buf_fini(&t);
}

void eb_synth__attr_str(struct eb_pb_buf *a, const char *name, const char *v)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    eb_pb_put_str(&t, 1, name);
    eb_pb_put_str(&t, 4, v);
    eb_pb_put_varint(&t, 20, 3);
    eb_pb_put_msg(a, 5, &t);
    eb_pb_buf_fini(&t);
}

void eb_synth__attr_ints(struct eb_pb_buf *a, const char *name, const int64_t *v, int n)
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

void eb_synth__node(struct eb_pb_buf *nodes, const char *op, const char *name,
                    const char *const *ins, int n_in, const char *const *outs, int n_out,
                    const struct eb_pb_buf *attrs)
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
    eb_pb_put_msg(nodes, 1, &n);
    eb_pb_buf_fini(&n);
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

const char *const *eb_model_coco_names(size_t *n_out)
{
    *n_out = EB_ARRAY_LEN(coco_names);
    return coco_names;
}

void eb_synth__meta(struct eb_pb_buf *m, const char *key, const char *value)
{
    struct eb_pb_buf e;
    eb_pb_buf_init(&e);
    eb_pb_put_str(&e, 1, key);
    eb_pb_put_str(&e, 2, value);
    eb_pb_put_msg(m, 14, &e);
    eb_pb_buf_fini(&e);
}

void eb_synth__value_info(struct eb_pb_buf *g, uint32_t field, const char *name, int elem_type,
                          const int64_t *dims, const char *const *params, int rank)
{
    struct eb_pb_buf v, tp, tt, sh, d;
    eb_pb_buf_init(&v);
    eb_pb_buf_init(&tp);
    eb_pb_buf_init(&tt);
    eb_pb_buf_init(&sh);
    for (int i = 0; i < rank; i++) {
        eb_pb_buf_init(&d);
        if (params != NULL && params[i] != NULL)
            eb_pb_put_str(&d, 2, params[i]);
        else
            eb_pb_put_varint(&d, 1, dims[i]);
        eb_pb_put_msg(&sh, 1, &d);
        eb_pb_buf_fini(&d);
    }
    eb_pb_put_varint(&tt, 1, elem_type);
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
        int n;
        if (nc == 80)
            n = snprintf(p + len, cap - len, "%s%d: '%s'", i ? ", " : "", i, coco_names[i]);
        else
            n = snprintf(p + len, cap - len, "%s%d: 'class%d'", i ? ", " : "", i, i);
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

int eb_synth__model_proto(struct eb_pb_buf *model, const struct eb_pb_buf *nodes,
                          const struct eb_pb_buf *inits, const struct eb_synth_options *o)
{
    struct eb_pb_buf graph, opset;
    char *names;
    char desc[128], imgsz[48];
    int64_t in_dims[4], out_dims[3];
    int nc = o->num_classes;

    eb_pb_buf_init(&graph);
    eb_pb_buf_init(&opset);
    eb_pb_put_raw(&graph, nodes->data, nodes->len);
    eb_pb_put_str(&graph, 2, "main_graph");
    eb_pb_put_raw(&graph, inits->data, inits->len);
    in_dims[0] = 1;
    in_dims[1] = 3;
    in_dims[2] = in_dims[3] = o->imgsz;
    eb_synth__value_info(&graph, 11, "images", 1, in_dims, NULL, 4);
    out_dims[0] = 1;
    out_dims[1] = 4 + nc;
    out_dims[2] = (int64_t)(o->imgsz / 8) * (o->imgsz / 8) +
                  (int64_t)(o->imgsz / 16) * (o->imgsz / 16) +
                  (int64_t)(o->imgsz / 32) * (o->imgsz / 32);
    eb_synth__value_info(&graph, 12, "output0", 1, out_dims, NULL, 3);
    if (nodes->error || inits->error)
        graph.error = 1;

    names = names_literal(nc);
    if (names == NULL) {
        eb_pb_buf_fini(&graph);
        eb_pb_buf_fini(&opset);
        return -1;
    }
    eb_pb_put_varint(model, 1, 8); /* ir_version 8 goes with opset 17 */
    eb_pb_put_str(model, 2, "edgebench");
    eb_pb_put_str(model, 3, "1.0");
    eb_pb_put_msg(model, 7, &graph);
    eb_pb_put_str(&opset, 1, "");
    eb_pb_put_varint(&opset, 2, 17);
    eb_pb_put_msg(model, 8, &opset);
    snprintf(desc, sizeof(desc), "Ultralytics %s%c model architecture with synthetic weights",
             o->arch == EB_SYNTH_YOLO11 ? "YOLO11" : "YOLOv8", o->scale);
    snprintf(imgsz, sizeof(imgsz), "[%d, %d]", o->imgsz, o->imgsz);
    eb_synth__meta(model, "description", desc);
    eb_synth__meta(model, "author", "edgebench model synth");
    eb_synth__meta(model, "stride", "32");
    eb_synth__meta(model, "task", "detect");
    eb_synth__meta(model, "batch", "1");
    eb_synth__meta(model, "imgsz", imgsz);
    eb_synth__meta(model, "names", names);
    eb_synth__meta(model, "channels", "3");
    eb_synth__meta(model, "edgebench_synthetic", "1");
    free(names);
    eb_pb_buf_fini(&graph);
    eb_pb_buf_fini(&opset);
    return 0;
}
