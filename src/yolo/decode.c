/*
 * YOLO output layouts (design.md §4): recognition from the shape, scratch sizing, and the
 * decoders that turn an output tensor into candidate boxes in model-input pixels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/yolo.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Largest dimension accepted from a model output (anything bigger is not a detection head and
 * would overflow the int counts used below). */
#define EB_YOLO_MAX_DIM (1 << 24)

const char *eb_yolo_layout_name(enum eb_yolo_layout l)
{
    switch (l) {
    case EB_YOLO_LAYOUT_CHANNELS: return "v8";
    case EB_YOLO_LAYOUT_ROWS_OBJ: return "v5";
    case EB_YOLO_LAYOUT_END2END: return "end2end";
    case EB_YOLO_LAYOUT_UNKNOWN: break;
    }
    return "unknown";
}

static void format_shape(const int64_t *shape, int rank, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    len += (size_t)snprintf(buf + len, size - len, "[");
    for (int i = 0; i < rank && len < size; i++) {
        if (i > 6) {
            len += (size_t)snprintf(buf + len, size - len, ",...");
            break;
        }
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "", (long long)shape[i]);
    }
    if (len < size)
        (void)snprintf(buf + len, size - len, "]");
}

static enum eb_status not_yolo(const int64_t *shape, int rank, const char *why,
                               struct eb_diag *diag)
{
    char s[96];
    format_shape(shape, rank, s, sizeof s);
    return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                        "model output %s is not a YOLO detection output (expected [1,4+nc,N], "
                        "[1,N,5+nc] or [1,K,6]); %s; export the model with its detection head "
                        "(e.g. Ultralytics export format=onnx)",
                        s, why);
}

enum eb_status eb_yolo_layout_detect(const int64_t *shape, int rank, size_t n_class_names,
                                     struct eb_yolo_layout_info *info_out, struct eb_diag *diag)
{
    if (shape == NULL || info_out == NULL || rank < 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to detect the YOLO layout: no shape given");
    if (rank != 2 && rank != 3)
        return not_yolo(shape, rank, "rank must be 3 (or 2 without the batch)", diag);
    if (rank == 3 && shape[0] != 1)
        return not_yolo(shape, rank, "batch must be 1", diag);
    const int64_t a64 = shape[rank - 2], b64 = shape[rank - 1];
    if (a64 <= 0 || b64 <= 0 || a64 > EB_YOLO_MAX_DIM || b64 > EB_YOLO_MAX_DIM)
        return not_yolo(shape, rank, "dimensions must be between 1 and 16777216", diag);
    const int a = (int)a64, b = (int)b64;
    const int64_t n = n_class_names > (size_t)EB_YOLO_MAX_DIM ? 0 : (int64_t)n_class_names;

    struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_UNKNOWN, 0, 0};
    if (n > 0) {
        int ch = (int64_t)a == 4 + n && b > 1;
        int rows = (int64_t)b == 5 + n && a > 1;
        if (ch && rows) {
            /* [1, 4+nc, 5+nc]: the larger dimension is the box count. */
            ch = b > a;
            rows = !ch;
        }
        if (rows && b == 6) {
            /* nc == 1: [1, K, 6] is also the end-to-end layout; YOLOv5 heads have thousands of
             * anchors, end-to-end heads keep at most a few hundred boxes. */
            if (a > 1000)
                info = (struct eb_yolo_layout_info){EB_YOLO_LAYOUT_ROWS_OBJ, 1, a};
            else
                info = (struct eb_yolo_layout_info){EB_YOLO_LAYOUT_END2END, 1, a};
        } else if (ch) {
            info = (struct eb_yolo_layout_info){EB_YOLO_LAYOUT_CHANNELS, (int)n, b};
        } else if (rows) {
            info = (struct eb_yolo_layout_info){EB_YOLO_LAYOUT_ROWS_OBJ, (int)n, a};
        }
    }
    if (info.layout == EB_YOLO_LAYOUT_UNKNOWN) {
        if (b == 6 && a <= 1000)
            info = (struct eb_yolo_layout_info){EB_YOLO_LAYOUT_END2END, 0, a};
        else if (a >= 5 && a < b)
            info = (struct eb_yolo_layout_info){EB_YOLO_LAYOUT_CHANNELS, a - 4, b};
        else if (b >= 6 && a > b)
            info = (struct eb_yolo_layout_info){EB_YOLO_LAYOUT_ROWS_OBJ, b - 5, a};
        else
            return not_yolo(shape, rank, "no layout fits these dimensions", diag);
    }
    *info_out = info;
    return EB_OK;
}

enum eb_status eb_yolo_scratch_init(struct eb_yolo_scratch *s,
                                    const struct eb_yolo_layout_info *info, struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_INVALID_ARG;
    if (s == NULL)
        return eb_diag_fail(diag, st, "failed to allocate YOLO scratch: no scratch given");
    memset(s, 0, sizeof *s);
    if (info == NULL || info->num_boxes <= 0 || info->num_boxes > EB_YOLO_MAX_DIM ||
        info->layout == EB_YOLO_LAYOUT_UNKNOWN) {
        return eb_diag_fail(diag, st,
                            "failed to allocate YOLO scratch: layout has no boxes or is unknown");
    }
    const size_t cap = (size_t)info->num_boxes;
    st = EB_ERR_NOMEM;
    s->cand = malloc(cap * sizeof *s->cand);
    s->order = malloc(cap * sizeof *s->order);
    s->suppressed = malloc(cap);
    s->keys = malloc(2 * cap * sizeof *s->keys);
    s->best_score = malloc(cap * sizeof *s->best_score);
    s->area = malloc(cap * sizeof *s->area);
    if (!s->cand || !s->order || !s->suppressed || !s->keys || !s->best_score || !s->area)
        goto fail;
    s->capacity = cap;
    return EB_OK;

fail:
    eb_yolo_scratch_fini(s);
    return eb_diag_fail(diag, st, "failed to allocate YOLO scratch for %zu boxes: out of memory",
                        cap);
}

void eb_yolo_scratch_fini(struct eb_yolo_scratch *s)
{
    if (s == NULL)
        return;
    free(s->cand);
    free(s->order);
    free(s->suppressed);
    free(s->keys);
    free(s->best_score);
    free(s->area);
    memset(s, 0, sizeof *s);
}

static struct eb_detection box_xywh(float cx, float cy, float w, float h, float score, int cls)
{
    struct eb_detection d;
    float hw = w / 2.0f, hh = h / 2.0f;
    d.x1 = cx - hw;
    d.y1 = cy - hh;
    d.x2 = cx + hw;
    d.y2 = cy + hh;
    d.score = score;
    d.cls = cls;
    return d;
}

/*
 * best[a] = max over classes of data[(4 + c) * n + a]. The tensor is channel-major, so the
 * anchors are walked in blocks of 16 (one cache line per class row) with the running maxima
 * kept in registers across all class rows.
 */
static void channels_max(const float *data, int nc, int n, float *best)
{
    const float *cls0 = data + 4 * (size_t)n;
    int a = 0;
#if defined(__SSE2__)
    for (; a + 16 <= n; a += 16) {
        const float *p = cls0 + a;
        __m128 m0 = _mm_loadu_ps(p), m1 = _mm_loadu_ps(p + 4);
        __m128 m2 = _mm_loadu_ps(p + 8), m3 = _mm_loadu_ps(p + 12);
        for (int c = 1; c < nc; c++) {
            p += n;
            /* _mm_max_ps(v, m) = v > m ? v : m, the scalar rule below. */
            m0 = _mm_max_ps(_mm_loadu_ps(p), m0);
            m1 = _mm_max_ps(_mm_loadu_ps(p + 4), m1);
            m2 = _mm_max_ps(_mm_loadu_ps(p + 8), m2);
            m3 = _mm_max_ps(_mm_loadu_ps(p + 12), m3);
        }
        _mm_storeu_ps(best + a, m0);
        _mm_storeu_ps(best + a + 4, m1);
        _mm_storeu_ps(best + a + 8, m2);
        _mm_storeu_ps(best + a + 12, m3);
    }
#endif
    for (; a < n; a++) {
        const float *p = cls0 + a;
        float m = p[0];
        for (int c = 1; c < nc; c++) {
            float v = p[(size_t)c * (size_t)n];
            m = v > m ? v : m;
        }
        best[a] = m;
    }
}

static size_t decode_channels(const struct eb_yolo_layout_info *info, const float *data, float conf,
                              struct eb_yolo_scratch *s)
{
    const int n = info->num_boxes, nc = info->num_classes;
    const size_t un = (size_t)n;
    channels_max(data, nc, n, s->best_score);
    size_t count = 0;
    for (int a = 0; a < n; a++) {
        float m = s->best_score[a];
        if (!(m > conf))
            continue;
        /* First class reaching the maximum (torch max / argmax); rare, so strided is fine. */
        const float *p = data + 4 * un + (size_t)a;
        int cls = 0;
        float best = p[0];
        for (int c = 1; c < nc; c++) {
            float v = p[(size_t)c * un];
            if (v > best) {
                best = v;
                cls = c;
            }
        }
        s->cand[count++] = box_xywh(data[a], data[un + (size_t)a], data[2 * un + (size_t)a],
                                    data[3 * un + (size_t)a], m, cls);
    }
    return count;
}

static size_t decode_rows_obj(const struct eb_yolo_layout_info *info, const float *data, float conf,
                              struct eb_yolo_scratch *s)
{
    const int n = info->num_boxes, nc = info->num_classes;
    const size_t stride = 5 + (size_t)nc;
    size_t count = 0;
    for (int a = 0; a < n; a++) {
        const float *r = data + (size_t)a * stride;
        float obj = r[4];
        /* Class scores are probabilities (<= 1), so obj <= conf cannot exceed conf. */
        if (!(obj > conf))
            continue;
        int cls = 0;
        float best = r[5];
        for (int c = 1; c < nc; c++) {
            if (r[5 + c] > best) {
                best = r[5 + c];
                cls = c;
            }
        }
        float score = obj * best;
        if (!(score > conf))
            continue;
        s->cand[count++] = box_xywh(r[0], r[1], r[2], r[3], score, cls);
    }
    return count;
}

static size_t decode_end2end(const struct eb_yolo_layout_info *info, const float *data, float conf,
                             struct eb_yolo_scratch *s)
{
    size_t count = 0;
    for (int a = 0; a < info->num_boxes; a++) {
        const float *r = data + (size_t)a * 6;
        if (!(r[4] > conf))
            continue;
        struct eb_detection d;
        d.x1 = r[0];
        d.y1 = r[1];
        d.x2 = r[2];
        d.y2 = r[3];
        d.score = r[4];
        /* The class index is stored as a float; anything that is not a sane index is -1. */
        d.cls = r[5] >= 0.0f && r[5] < 1e6f ? (int)(r[5] + 0.5f) : -1;
        s->cand[count++] = d;
    }
    return count;
}

static int by_anchor(const void *a, const void *b)
{
    const int32_t x = ((const struct eb_anchor_row *)a)->anchor;
    const int32_t y = ((const struct eb_anchor_row *)b)->anchor;
    return (x > y) - (x < y);
}

size_t eb_yolo_decode_rows(struct eb_anchor_row *rows, size_t n, struct eb_yolo_scratch *s)
{
    EB_ASSERT(s != NULL && (rows != NULL || n == 0));
    if (n > s->capacity)
        n = s->capacity;
    qsort(rows, n, sizeof(*rows), by_anchor);
    for (size_t i = 0; i < n; i++)
        s->cand[i] =
            box_xywh(rows[i].cx, rows[i].cy, rows[i].w, rows[i].h, rows[i].score, rows[i].cls);
    return n;
}

size_t eb_yolo_decode(const struct eb_yolo_layout_info *info, const float *data,
                      const struct eb_yolo_params *p, struct eb_yolo_scratch *s)
{
    EB_ASSERT(info != NULL && data != NULL && p != NULL && s != NULL);
    EB_ASSERT(info->num_boxes >= 0 && (size_t)info->num_boxes <= s->capacity);
    switch (info->layout) {
    case EB_YOLO_LAYOUT_CHANNELS:
        EB_ASSERT(info->num_classes >= 1);
        return decode_channels(info, data, p->conf, s);
    case EB_YOLO_LAYOUT_ROWS_OBJ:
        EB_ASSERT(info->num_classes >= 1);
        return decode_rows_obj(info, data, p->conf, s);
    case EB_YOLO_LAYOUT_END2END: return decode_end2end(info, data, p->conf, s);
    case EB_YOLO_LAYOUT_UNKNOWN: break;
    }
    return 0;
}
