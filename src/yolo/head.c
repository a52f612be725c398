/*
 * Detection-head adapters (head.h): names, the check of a model's outputs against a head, and
 * the decoders of each family. V8, V5 and END2END are eb_yolo_decode's layouts (decode.c) and
 * go through it unchanged; the grid heads (V5_RAW, YOLOX, NANODET, FASTESTDET, FASTESTV2) and
 * DETR are decoded here. Every threshold is strict (score > conf), as in decode.c.
 *
 * Conventions fixed here (head.h and the family references leave them open):
 *  - Outputs a kind reads: out_index[0] for V8, V5, V5_RAW, YOLOX, FASTESTDET and END2END;
 *    out_index[0..n_levels) for FASTESTV2; out_index[0..2*n_levels) for NANODET (class scores,
 *    then box distributions); out_index[0..2) for DETR (logits, boxes). h->n_outputs is 0 or
 *    that count.
 *  - A shape fits when it equals the expected one, or the expected one without its leading
 *    batch 1 (a batchless export), as eb_yolo_layout_detect accepts for the YOLO layouts.
 *  - h->num_boxes is the scratch capacity: for V8, V5, END2END and DETR exactly the N (K, Q) of
 *    the output; for the grid heads at least the candidates of the grid (cells x anchors).
 *  - Best class: the first maximum (torch argmax). Where this file applies a sigmoid (`sigmoid`
 *    set), the maximum is taken over the logits and the sigmoid applied to it alone (monotonic;
 *    only logits whose sigmoids round to the same float could give another index).
 *  - Candidate order (NMS breaks score ties by it): output order, i.e. per level, then as the
 *    family lays out its rows (V5_RAW: anchor, y, x; FASTESTV2: y, x, anchor).
 *  - DETR keeps one detection per query, its best class (head.h); the top-k over queries x
 *    classes of the Deformable-DETR / RT-DETR post-processors is not reproduced. Its kept
 *    boxes are in descending score order, ties in query order (as eb_yolo_nms orders).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "yolo/head.h"

/* Largest dimension or candidate count accepted (decode.c's limit: int counts stay exact). */
#define HEAD_MAX_DIM (1 << 24)
/* NanoDet bins per side at most reg_max + 1 (upstream uses 7 or 16). */
#define HEAD_MAX_REG 255

static const char *const head_names[EB_HEAD_COUNT] = {
    [EB_HEAD_UNKNOWN] = "unknown",
    [EB_HEAD_V8] = "v8",
    [EB_HEAD_V5] = "v5",
    [EB_HEAD_V5_RAW] = "v5-raw",
    [EB_HEAD_YOLOX] = "yolox",
    [EB_HEAD_NANODET] = "nanodet",
    [EB_HEAD_FASTESTDET] = "fastestdet",
    [EB_HEAD_FASTESTV2] = "fastestv2",
    [EB_HEAD_END2END] = "end2end",
    [EB_HEAD_DETR] = "detr",
};

const char *eb_head_name(enum eb_head_kind k)
{
    if ((int)k <= EB_HEAD_UNKNOWN || (int)k >= EB_HEAD_COUNT)
        return head_names[EB_HEAD_UNKNOWN];
    return head_names[k];
}

enum eb_head_kind eb_head_from_name(const char *name)
{
    if (name == NULL)
        return EB_HEAD_UNKNOWN;
    for (int k = EB_HEAD_UNKNOWN + 1; k < EB_HEAD_COUNT; k++) {
        if (strcmp(name, head_names[k]) == 0)
            return (enum eb_head_kind)k;
    }
    return EB_HEAD_UNKNOWN;
}

int eb_head_is_set_prediction(enum eb_head_kind k)
{
    return k == EB_HEAD_END2END || k == EB_HEAD_DETR;
}

/* The eb_yolo_decode layout of V8, V5 and END2END; UNKNOWN for the kinds decoded here. */
static enum eb_yolo_layout yolo_layout(enum eb_head_kind k)
{
    if (k == EB_HEAD_V8)
        return EB_YOLO_LAYOUT_CHANNELS;
    if (k == EB_HEAD_V5)
        return EB_YOLO_LAYOUT_ROWS_OBJ;
    if (k == EB_HEAD_END2END)
        return EB_YOLO_LAYOUT_END2END;
    return EB_YOLO_LAYOUT_UNKNOWN;
}

static int kind_known(const struct eb_head *h)
{
    return (int)h->kind > EB_HEAD_UNKNOWN && (int)h->kind < EB_HEAD_COUNT;
}

enum eb_status eb_head_scratch_init(struct eb_yolo_scratch *s, const struct eb_head *h,
                                    struct eb_diag *diag)
{
    if (s != NULL)
        memset(s, 0, sizeof *s);
    if (h == NULL || !kind_known(h))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to allocate head scratch: the head has no known kind");
    if (h->num_boxes == 0 || h->num_boxes > HEAD_MAX_DIM)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to allocate head scratch: head %s has num_boxes %zu (must be "
                            "1 to %d)",
                            eb_head_name(h->kind), h->num_boxes, HEAD_MAX_DIM);
    /* The layout only sizes the scratch (the same arrays for every layout). */
    enum eb_yolo_layout l = yolo_layout(h->kind);
    struct eb_yolo_layout_info info = {l != EB_YOLO_LAYOUT_UNKNOWN ? l : EB_YOLO_LAYOUT_ROWS_OBJ,
                                       h->num_classes, (int)h->num_boxes};
    return eb_yolo_scratch_init(s, &info, diag);
}

/* ---- geometry of a head ------------------------------------------------------------------- */

static int is_grid(enum eb_head_kind k)
{
    return k == EB_HEAD_V5_RAW || k == EB_HEAD_YOLOX || k == EB_HEAD_NANODET ||
           k == EB_HEAD_FASTESTDET || k == EB_HEAD_FASTESTV2;
}

static int has_anchors(enum eb_head_kind k)
{
    return k == EB_HEAD_V5_RAW || k == EB_HEAD_FASTESTV2;
}

/* How many model outputs the kind reads (out_index[0..n)). */
static int outputs_read(const struct eb_head *h)
{
    switch (h->kind) {
    case EB_HEAD_NANODET: return 2 * h->n_levels;
    case EB_HEAD_FASTESTV2: return h->n_levels;
    case EB_HEAD_DETR: return 2;
    case EB_HEAD_UNKNOWN:
    case EB_HEAD_COUNT: return 0;
    case EB_HEAD_V8:
    case EB_HEAD_V5:
    case EB_HEAD_V5_RAW:
    case EB_HEAD_YOLOX:
    case EB_HEAD_FASTESTDET:
    case EB_HEAD_END2END: break;
    }
    return 1;
}

static size_t level_cells(const struct eb_head *h, int l)
{
    return (size_t)h->grid_w[l] * (size_t)h->grid_h[l];
}

/* Cells over all levels (grid heads; the fields already checked). */
static size_t total_cells(const struct eb_head *h)
{
    size_t n = 0;
    for (int l = 0; l < h->n_levels; l++)
        n += level_cells(h, l);
    return n;
}

/* The head's own fields, before any output is looked at. */
static enum eb_status check_fields(const struct eb_head *h, struct eb_diag *diag)
{
    const char *name = eb_head_name(h->kind);
    const enum eb_head_kind k = h->kind;
    if (!kind_known(h))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to check the model outputs: the head has no known kind");
    if (h->num_classes < (k == EB_HEAD_END2END ? 0 : 1) || h->num_classes > HEAD_MAX_DIM)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "head %s: %d classes is not a class count",
                            name, h->num_classes);
    if (h->num_boxes == 0 || h->num_boxes > HEAD_MAX_DIM)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "head %s: num_boxes %zu must be 1 to %d",
                            name, h->num_boxes, HEAD_MAX_DIM);
    if ((k == EB_HEAD_FASTESTDET || k == EB_HEAD_DETR) && (h->in_w <= 0 || h->in_h <= 0))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "head %s: input size %dx%d must be positive",
                            name, h->in_w, h->in_h);
    if (k == EB_HEAD_NANODET && (h->reg_max < 0 || h->reg_max > HEAD_MAX_REG))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "head %s: reg_max %d must be 0 to %d", name,
                            h->reg_max, HEAD_MAX_REG);
    if (is_grid(k)) {
        const int max_levels = k == EB_HEAD_FASTESTDET ? 1 : EB_HEAD_MAX_LEVELS;
        if (h->n_levels < 1 || h->n_levels > max_levels)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "head %s: %d levels (must be 1 to %d)",
                                name, h->n_levels, max_levels);
        if (has_anchors(k) && (h->n_anchors < 1 || h->n_anchors > EB_HEAD_MAX_ANCHORS))
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "head %s: %d anchors per cell (must be 1 to %d)", name,
                                h->n_anchors, EB_HEAD_MAX_ANCHORS);
        size_t cells = 0;
        for (int l = 0; l < h->n_levels; l++) {
            if (h->grid_w[l] < 1 || h->grid_h[l] < 1 || h->grid_w[l] > HEAD_MAX_DIM ||
                h->grid_h[l] > HEAD_MAX_DIM || (k != EB_HEAD_FASTESTDET && h->strides[l] < 1))
                return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                    "head %s: level %d has grid %dx%d and stride %d (must be "
                                    "positive)",
                                    name, l, h->grid_w[l], h->grid_h[l], h->strides[l]);
            cells += level_cells(h, l);
        }
        const size_t cand = cells * (size_t)(has_anchors(k) ? h->n_anchors : 1);
        if (cells > HEAD_MAX_DIM || cand > h->num_boxes)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "head %s: its grid gives %zu candidates but num_boxes is %zu", name,
                                cand, h->num_boxes);
    }
    const int n_read = outputs_read(h);
    if (h->n_outputs != 0 && h->n_outputs != n_read)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "head %s: n_outputs is %d but this head reads %d outputs", name,
                            h->n_outputs, n_read);
    for (int i = 0; i < n_read; i++) {
        if (h->out_index[i] < 0)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "head %s: out_index[%d] is %d", name, i,
                                h->out_index[i]);
    }
    return EB_OK;
}

/* What the i-th output a head reads must be: its shape (with batch 1) and what it holds. */
struct head_want {
    int64_t dims[4];
    int rank;
    char what[96];
};

static void want3(struct head_want *w, int64_t a, int64_t b)
{
    w->rank = 3;
    w->dims[0] = 1;
    w->dims[1] = a;
    w->dims[2] = b;
}

static void expected_output(const struct eb_head *h, int i, struct head_want *w)
{
    const int nc = h->num_classes;
    const int64_t n = (int64_t)h->num_boxes;
    const int64_t cells = (int64_t)(is_grid(h->kind) ? total_cells(h) : 0);
    const int nl = h->n_levels;
    char *s = w->what;
    const size_t sz = sizeof w->what;
    switch (h->kind) {
    case EB_HEAD_V8:
        want3(w, 4 + nc, n);
        (void)snprintf(s, sz, "4 box + %d class channels of %lld boxes", nc, (long long)n);
        break;
    case EB_HEAD_V5:
        want3(w, n, 5 + nc);
        (void)snprintf(s, sz, "%lld rows of 4 box + objectness + %d classes", (long long)n, nc);
        break;
    case EB_HEAD_V5_RAW:
        want3(w, cells * h->n_anchors, 5 + nc);
        (void)snprintf(s, sz, "%d anchors x %lld cells over %d levels, 5 + %d classes",
                       h->n_anchors, (long long)cells, nl, nc);
        break;
    case EB_HEAD_YOLOX:
        want3(w, cells, 5 + nc);
        (void)snprintf(s, sz, "%lld cells over %d levels, 5 + %d classes", (long long)cells, nl,
                       nc);
        break;
    case EB_HEAD_NANODET: {
        const int l = i % nl;
        const int box = i >= nl;
        want3(w, (int64_t)level_cells(h, l), box ? 4 * (h->reg_max + 1) : nc);
        (void)snprintf(s, sz, "%s of level %d, stride %d, %dx%d cells",
                       box ? "box distributions" : "class scores", l, h->strides[l], h->grid_w[l],
                       h->grid_h[l]);
        break;
    }
    case EB_HEAD_FASTESTDET:
        w->rank = 4;
        w->dims[0] = 1;
        w->dims[1] = 5 + nc;
        w->dims[2] = h->grid_h[0];
        w->dims[3] = h->grid_w[0];
        (void)snprintf(s, sz, "NCHW, 5 + %d classes on %dx%d cells", nc, h->grid_w[0],
                       h->grid_h[0]);
        break;
    case EB_HEAD_FASTESTV2:
        w->rank = 4;
        w->dims[0] = 1;
        w->dims[1] = h->grid_h[i];
        w->dims[2] = h->grid_w[i];
        w->dims[3] = 5 * h->n_anchors + nc;
        (void)snprintf(s, sz, "NHWC level %d, stride %d: 5 x %d anchors + %d classes", i,
                       h->strides[i], h->n_anchors, nc);
        break;
    case EB_HEAD_END2END:
        want3(w, n, 6);
        (void)snprintf(s, sz, "%lld rows of x1 y1 x2 y2 score class", (long long)n);
        break;
    case EB_HEAD_DETR:
        if (i == 0) {
            const int c = nc + (h->detr_softmax ? 1 : 0);
            want3(w, n, c);
            (void)snprintf(s, sz, "class logits of %lld queries, %d classes%s", (long long)n, nc,
                           h->detr_softmax ? " + no-object" : "");
        } else {
            want3(w, n, 4);
            (void)snprintf(s, sz, "boxes cx cy w h of %lld queries", (long long)n);
        }
        break;
    case EB_HEAD_UNKNOWN:
    case EB_HEAD_COUNT: w->rank = 0; break;
    }
}

/* Equal to the expected shape, or to it without its leading batch 1. */
static int shape_fits(const struct eb_head_output *o, const struct head_want *w)
{
    if (o->shape == NULL || (o->rank != w->rank && o->rank != w->rank - 1))
        return 0;
    const int skip = w->rank - o->rank;
    for (int d = 0; d < o->rank; d++) {
        if (o->shape[d] != w->dims[d + skip])
            return 0;
    }
    return 1;
}

static void shape_str(const int64_t *dims, int rank, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < rank && d < 8 && len < size; d++)
        len += (size_t)snprintf(buf + len, size - len, d ? ",%lld" : "%lld", (long long)dims[d]);
    if (len < size)
        (void)snprintf(buf + len, size - len, rank > 8 ? ",...]" : "]");
}

enum eb_status eb_head_check_outputs(const struct eb_head *h, const struct eb_head_output *outs,
                                     size_t n_outs, struct eb_diag *diag)
{
    if (h == NULL || (outs == NULL && n_outs > 0))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to check the model outputs: no head or outputs given");
    enum eb_status st = check_fields(h, diag);
    if (st != EB_OK)
        return st;
    const char *name = eb_head_name(h->kind);
    const int n_read = outputs_read(h);
    for (int i = 0; i < n_read; i++) {
        struct head_want w;
        expected_output(h, i, &w);
        char want_s[96], got_s[96];
        shape_str(w.dims, w.rank, want_s, sizeof want_s);
        const size_t idx = (size_t)h->out_index[i];
        if (idx >= n_outs)
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "head %s reads model output %zu as %s (%s), but the model has %zu "
                                "outputs; choose the head that matches the model",
                                name, idx, want_s, w.what, n_outs);
        if (!shape_fits(&outs[idx], &w)) {
            if (outs[idx].shape == NULL || outs[idx].rank < 0)
                (void)snprintf(got_s, sizeof got_s, "of unknown shape");
            else
                shape_str(outs[idx].shape, outs[idx].rank, got_s, sizeof got_s);
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "head %s: model output %zu is %s, expected %s (%s); choose the "
                                "head, classes, strides and anchors that match the model",
                                name, idx, got_s, want_s, w.what);
        }
    }
    return EB_OK;
}

/* ---- decoders ----------------------------------------------------------------------------- */

static float sigmoidf(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* Index of the first maximum of r[0..n) (torch argmax), its value in *best_out. */
static int argmax(const float *r, int n, float *best_out)
{
    int cls = 0;
    float best = r[0];
    for (int c = 1; c < n; c++) {
        if (r[c] > best) {
            best = r[c];
            cls = c;
        }
    }
    *best_out = best;
    return cls;
}

/* Appends a corner box to s->cand; 0 once the scratch is full (the caller stops). */
static int push(struct eb_yolo_scratch *s, size_t *count, float x1, float y1, float x2, float y2,
                float score, int cls)
{
    if (*count >= s->capacity)
        return 0;
    struct eb_detection *d = &s->cand[(*count)++];
    d->x1 = x1;
    d->y1 = y1;
    d->x2 = x2;
    d->y2 = y2;
    d->score = score;
    d->cls = cls;
    return *count < s->capacity;
}

static int push_centre(struct eb_yolo_scratch *s, size_t *count, float cx, float cy, float w,
                       float h, float score, int cls)
{
    const float hw = w / 2.0f, hh = h / 2.0f;
    return push(s, count, cx - hw, cy - hh, cx + hw, cy + hh, score, cls);
}

/* YOLOv5 anchor decode of t = (tx, ty, tw, th) (already sigmoid) at cell (gx, gy). */
static int push_v5(struct eb_yolo_scratch *s, size_t *count, const float t[4], int gx, int gy,
                   float stride, const float anchor[2], float score, int cls)
{
    const float tw = 2.0f * t[2], th = 2.0f * t[3];
    return push_centre(s, count, (2.0f * t[0] - 0.5f + (float)gx) * stride,
                       (2.0f * t[1] - 0.5f + (float)gy) * stride, tw * tw * anchor[0],
                       th * th * anchor[1], score, cls);
}

/* V5_RAW and YOLOX: rows of [box4, obj, nc classes], per level (per anchor for V5_RAW) per cell
 * row-major. Class scores are probabilities (<= 1), so a row whose objectness alone fails conf
 * is skipped before its classes are read. */
static size_t decode_grid_rows(const struct eb_head *h, const float *data, float conf,
                               struct eb_yolo_scratch *s)
{
    const int nc = h->num_classes, sig = h->sigmoid != 0;
    const int yolox = h->kind == EB_HEAD_YOLOX;
    const int na = yolox ? 1 : h->n_anchors;
    const size_t row = 5 + (size_t)nc;
    const float *r = data;
    size_t count = 0;
    for (int l = 0; l < h->n_levels; l++) {
        const float st = (float)h->strides[l];
        for (int a = 0; a < na; a++) {
            for (int gy = 0; gy < h->grid_h[l]; gy++) {
                for (int gx = 0; gx < h->grid_w[l]; gx++, r += row) {
                    const float obj = sig ? sigmoidf(r[4]) : r[4];
                    if (!(obj > conf))
                        continue;
                    float best;
                    const int cls = argmax(r + 5, nc, &best);
                    const float score = obj * (sig ? sigmoidf(best) : best);
                    if (!(score > conf))
                        continue;
                    int more;
                    if (yolox) {
                        more =
                            push_centre(s, &count, (r[0] + (float)gx) * st, (r[1] + (float)gy) * st,
                                        expf(r[2]) * st, expf(r[3]) * st, score, cls);
                    } else {
                        float t[4] = {r[0], r[1], r[2], r[3]};
                        for (int k = 0; sig && k < 4; k++)
                            t[k] = sigmoidf(t[k]);
                        more = push_v5(s, &count, t, gx, gy, st, h->anchors[l][a], score, cls);
                    }
                    if (!more)
                        return count;
                }
            }
        }
    }
    return count;
}

/* Expectation of the softmax over bins[0..n): sum(p_i * i). */
static float softmax_expectation(const float *bins, int n)
{
    float m = bins[0];
    for (int i = 1; i < n; i++)
        m = bins[i] > m ? bins[i] : m;
    float sum = 0.0f, acc = 0.0f;
    for (int i = 0; i < n; i++) {
        const float e = expf(bins[i] - m);
        sum += e;
        acc += e * (float)i;
    }
    return acc / sum;
}

/* NanoDet (GFL): the class maximum is tested before any box bin is read. */
static size_t decode_nanodet(const struct eb_head *h, const struct eb_head_output *outs, float conf,
                             struct eb_yolo_scratch *s)
{
    const int nc = h->num_classes, bins = h->reg_max + 1, nl = h->n_levels;
    size_t count = 0;
    for (int l = 0; l < nl; l++) {
        const float *cls_data = outs[h->out_index[l]].data;
        const float *box_data = outs[h->out_index[nl + l]].data;
        const float st = (float)h->strides[l];
        const int gw = h->grid_w[l];
        const size_t cells = level_cells(h, l);
        for (size_t i = 0; i < cells; i++) {
            float best;
            const int cls = argmax(cls_data + i * (size_t)nc, nc, &best);
            if (!(best > conf))
                continue;
            const float *b = box_data + i * 4 * (size_t)bins;
            const float px = ((float)(i % (size_t)gw) + 0.5f) * st;
            const float py = ((float)(i / (size_t)gw) + 0.5f) * st;
            const float dl = softmax_expectation(b, bins) * st;
            const float dt = softmax_expectation(b + bins, bins) * st;
            const float dr = softmax_expectation(b + 2 * bins, bins) * st;
            const float db = softmax_expectation(b + 3 * bins, bins) * st;
            if (!push(s, &count, px - dl, py - dt, px + dr, py + db, best, cls))
                return count;
        }
    }
    return count;
}

/* FastestDet: NCHW planes; score = obj^0.6 * cls^0.4, so obj^0.6 <= conf rejects a cell. */
static size_t decode_fastestdet(const struct eb_head *h, const float *data, float conf,
                                struct eb_yolo_scratch *s)
{
    const int gw = h->grid_w[0], gh = h->grid_h[0], nc = h->num_classes;
    const size_t plane = (size_t)gw * (size_t)gh;
    const float in_w = (float)h->in_w, in_h = (float)h->in_h;
    size_t count = 0;
    for (int gy = 0; gy < gh; gy++) {
        for (int gx = 0; gx < gw; gx++) {
            const size_t i = (size_t)gy * (size_t)gw + (size_t)gx;
            const float objp = powf(data[i], 0.6f);
            if (!(objp > conf))
                continue;
            const float *c = data + 5 * plane + i;
            int cls = 0;
            float best = c[0];
            for (int k = 1; k < nc; k++) {
                const float v = c[(size_t)k * plane];
                if (v > best) {
                    best = v;
                    cls = k;
                }
            }
            const float score = objp * powf(best, 0.4f);
            if (!(score > conf))
                continue;
            const float cx = ((float)gx + tanhf(data[plane + i])) / (float)gw * in_w;
            const float cy = ((float)gy + tanhf(data[2 * plane + i])) / (float)gh * in_h;
            const float w = sigmoidf(data[3 * plane + i]) * in_w;
            const float bh = sigmoidf(data[4 * plane + i]) * in_h;
            if (!push_centre(s, &count, cx, cy, w, bh, score, cls))
                return count;
        }
    }
    return count;
}

/* Yolo-FastestV2: NHWC cells of [A x box4, A x obj, nc classes]; the shared class maximum is
 * found once per cell, only when one of its anchors' objectness passes conf. */
static size_t decode_fastestv2(const struct eb_head *h, const struct eb_head_output *outs,
                               float conf, struct eb_yolo_scratch *s)
{
    const int na = h->n_anchors, nc = h->num_classes;
    const size_t ch = 5 * (size_t)na + (size_t)nc;
    size_t count = 0;
    for (int l = 0; l < h->n_levels; l++) {
        const float *r = outs[h->out_index[l]].data;
        const float st = (float)h->strides[l];
        for (int gy = 0; gy < h->grid_h[l]; gy++) {
            for (int gx = 0; gx < h->grid_w[l]; gx++, r += ch) {
                int cls = -1;
                float best = 0.0f;
                for (int a = 0; a < na; a++) {
                    const float obj = r[4 * na + a];
                    if (!(obj > conf))
                        continue;
                    if (cls < 0)
                        cls = argmax(r + 5 * na, nc, &best);
                    const float score = obj * best;
                    if (!(score > conf))
                        continue;
                    if (!push_v5(s, &count, r + 4 * a, gx, gy, st, h->anchors[l][a], score, cls))
                        return count;
                }
            }
        }
    }
    return count;
}

/* DETR: one candidate per query, its best real class (the no-object class never). */
static size_t decode_detr(const struct eb_head *h, const struct eb_head_output *outs, float conf,
                          struct eb_yolo_scratch *s)
{
    const float *logits = outs[h->out_index[0]].data;
    const float *boxes = outs[h->out_index[1]].data;
    const int nc = h->num_classes, soft = h->detr_softmax != 0;
    const size_t c = (size_t)nc + (soft ? 1 : 0);
    const float in_w = (float)h->in_w, in_h = (float)h->in_h;
    size_t count = 0;
    for (size_t q = 0; q < h->num_boxes; q++) {
        const float *lg = logits + q * c;
        float best;
        const int cls = argmax(lg, nc, &best);
        float score;
        if (soft) {
            const float m = lg[nc] > best ? lg[nc] : best;
            float sum = 0.0f;
            for (size_t k = 0; k < c; k++)
                sum += expf(lg[k] - m);
            score = expf(best - m) / sum;
        } else {
            score = sigmoidf(best);
        }
        if (!(score > conf))
            continue;
        const float *b = boxes + 4 * q;
        if (!push_centre(s, &count, b[0] * in_w, b[1] * in_h, b[2] * in_w, b[3] * in_h, score, cls))
            return count;
    }
    return count;
}

static struct eb_yolo_layout_info layout_info(const struct eb_head *h)
{
    struct eb_yolo_layout_info info = {yolo_layout(h->kind), h->num_classes, (int)h->num_boxes};
    return info;
}

size_t eb_head_decode(const struct eb_head *h, const struct eb_head_output *outs, size_t n_outs,
                      const struct eb_yolo_params *p, struct eb_yolo_scratch *s)
{
    EB_ASSERT(h != NULL && outs != NULL && p != NULL && s != NULL);
    EB_ASSERT(h->num_boxes <= s->capacity);
    const int n_read = outputs_read(h);
    for (int i = 0; i < n_read; i++) {
        EB_ASSERT(h->out_index[i] >= 0 && (size_t)h->out_index[i] < n_outs);
        EB_ASSERT(outs[h->out_index[i]].data != NULL);
    }
    const float *data0 = n_read > 0 ? outs[h->out_index[0]].data : NULL;
    switch (h->kind) {
    case EB_HEAD_V8:
    case EB_HEAD_V5:
    case EB_HEAD_END2END: {
        const struct eb_yolo_layout_info info = layout_info(h);
        return eb_yolo_decode(&info, data0, p, s);
    }
    case EB_HEAD_V5_RAW:
    case EB_HEAD_YOLOX: return decode_grid_rows(h, data0, p->conf, s);
    case EB_HEAD_NANODET: return decode_nanodet(h, outs, p->conf, s);
    case EB_HEAD_FASTESTDET: return decode_fastestdet(h, data0, p->conf, s);
    case EB_HEAD_FASTESTV2: return decode_fastestv2(h, outs, p->conf, s);
    case EB_HEAD_DETR: return decode_detr(h, outs, p->conf, s);
    case EB_HEAD_UNKNOWN:
    case EB_HEAD_COUNT: break;
    }
    return 0;
}

/* Set prediction: the best min(max_det, capacity) of s->cand[0..n) by score, descending, ties
 * in candidate order (insertion into the sorted output; a few hundred queries). */
static void keep_best(const struct eb_yolo_scratch *s, size_t n, const struct eb_yolo_params *p,
                      struct eb_detections *out)
{
    size_t limit = p->max_det > 0 ? (size_t)p->max_det : 0;
    if (limit > out->capacity)
        limit = out->capacity;
    size_t kept = 0;
    for (size_t i = 0; i < n && limit > 0; i++) {
        const struct eb_detection *d = &s->cand[i];
        if (kept == limit && !(d->score > out->items[limit - 1].score))
            continue;
        size_t j = kept < limit ? kept++ : limit - 1;
        while (j > 0 && d->score > out->items[j - 1].score) {
            out->items[j] = out->items[j - 1];
            j--;
        }
        out->items[j] = *d;
    }
    out->count = kept;
}

void eb_head_postprocess(const struct eb_head *h, const struct eb_head_output *outs, size_t n_outs,
                         const struct eb_letterbox *lb, const struct eb_yolo_params *p,
                         struct eb_yolo_scratch *s, struct eb_detections *out)
{
    EB_ASSERT(h != NULL && lb != NULL && p != NULL && s != NULL && out != NULL);
    struct eb_yolo_params q = *p;
    q.class_agnostic = h->nms_agnostic || p->class_agnostic;
    if (yolo_layout(h->kind) != EB_YOLO_LAYOUT_UNKNOWN) {
        /* V8, V5, END2END: exactly eb_yolo_postprocess (END2END keeps output order). */
        EB_ASSERT(h->out_index[0] >= 0 && (size_t)h->out_index[0] < n_outs);
        const struct eb_yolo_layout_info info = layout_info(h);
        eb_yolo_postprocess(&info, outs[h->out_index[0]].data, lb, &q, s, out);
        return;
    }
    const size_t n = eb_head_decode(h, outs, n_outs, p, s);
    if (h->kind == EB_HEAD_DETR)
        keep_best(s, n, p, out);
    else
        eb_yolo_nms(s, n, &q, out);
    for (size_t i = 0; i < out->count; i++)
        eb_letterbox_unmap(lb, &out->items[i]);
}
