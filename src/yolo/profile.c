/*
 * Model profiles: the built-in families (one table), recognition of a graph's head, the
 * key = value profile file, and their resolution into one struct eb_model_profile.
 *
 * Recognition tries the families in the table's order; each says whether the model's outputs
 * fit its head (fit_*: shapes, and in auto mode also what ends the outputs' computation) and,
 * when they do, fills the head's geometry. An output no family fits is refused with the outputs
 * listed: a model is never decoded as a head it is not.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/number.h"
#include "yolo/profile.h"

#define V5_ANCHORS                                                                                 \
    {                                                                                              \
        {{10, 13}, {16, 30}, {33, 23}}, {{30, 61}, {62, 45}, {59, 119}},                           \
        {                                                                                          \
            {116, 90}, {156, 198},                                                                 \
            {                                                                                      \
                373, 326                                                                           \
            }                                                                                      \
        }                                                                                          \
    }

/* A family's built-in settings. */
struct family {
    const char *name;
    enum eb_head_kind kind;
    const char *what; /* for the `why` line */
    int bgr, pad;
    float mean[3], std[3];
    enum eb_resize resize;
    int n_strides;
    int strides[EB_HEAD_MAX_LEVELS];
    int n_anchors;
    float anchors[EB_HEAD_MAX_LEVELS][EB_HEAD_MAX_ANCHORS][2];
    int reg_max;
    int nms_agnostic;
    int area; /* shrink by pixel-area averaging (the family's cv2.INTER_AREA) */
};

/* Ultralytics-style input: RGB, /255, pad 114. */
#define RGB255   .bgr = 0, .pad = 114, .std = {255, 255, 255}
#define STRIDES3 .n_strides = 3, .strides = {8, 16, 32}
/* In recognition order: the most specific signatures first. */
static const struct family families[] = {
    {.name = "end2end",
     .kind = EB_HEAD_END2END,
     RGB255,
     .resize = EB_RESIZE_LETTERBOX,
     .what = "an end-to-end head [1,K,6] (YOLOv10/YOLO26: boxes, score, class)"},
    {.name = "detr",
     .kind = EB_HEAD_DETR,
     .resize = EB_RESIZE_STRETCH,
     .mean = {123.675f, 116.28f, 103.53f},
     .std = {58.395f, 57.12f, 57.375f},
     .what = "a set-prediction head (DETR: class logits [1,Q,C] + boxes [1,Q,4])"},
    {.name = "nanodet",
     .kind = EB_HEAD_NANODET,
     .bgr = 1,
     .pad = 0,
     .area = 1,
     .mean = {103.53f, 116.28f, 123.675f},
     .std = {57.375f, 57.12f, 58.395f},
     .resize = EB_RESIZE_LETTERBOX,
     STRIDES3,
     .reg_max = 7,
     .what = "NanoDet (GFL): per level class scores [1,cells,nc] + box distributions "
             "[1,cells,4*bins]"},
    {.name = "yolo-fastestv2",
     .kind = EB_HEAD_FASTESTV2,
     .bgr = 1,
     .pad = 114,
     .std = {255, 255, 255},
     .resize = EB_RESIZE_STRETCH,
     .n_strides = 2,
     .strides = {16, 32},
     .n_anchors = 3,
     .anchors = {{{12.64f, 19.39f}, {37.88f, 51.48f}, {55.71f, 138.31f}},
                 {{126.91f, 78.23f}, {131.57f, 214.55f}, {279.92f, 258.87f}}},
     .what = "Yolo-FastestV2: two NHWC levels [1,H,W,15+nc] (3 anchors, softmax classes)"},
    {.name = "fastestdet",
     .kind = EB_HEAD_FASTESTDET,
     .bgr = 1,
     .pad = 114,
     .area = 1,
     .std = {255, 255, 255},
     .resize = EB_RESIZE_STRETCH,
     .n_strides = 1,
     .strides = {16},
     .nms_agnostic = 1,
     .what = "FastestDet: one NCHW level [1,5+nc,H,W] (objectness, box, softmax classes)"},
    {.name = "ultralytics",
     .kind = EB_HEAD_V8,
     RGB255,
     .resize = EB_RESIZE_LETTERBOX,
     STRIDES3,
     .what = "an Ultralytics YOLOv8/YOLO11 head [1,4+nc,N] (decoded boxes)"},
    {.name = "yolox",
     .kind = EB_HEAD_YOLOX,
     .bgr = 1,
     .pad = 114,
     .std = {1, 1, 1},
     .resize = EB_RESIZE_LETTERBOX_TOPLEFT,
     STRIDES3,
     .what = "a YOLOX head [1,cells,5+nc] (grid offsets, log sizes)"},
    /* YOLOv5's loader shrinks with cv2.INTER_AREA before its letterbox. */
    {.name = "yolov5",
     .kind = EB_HEAD_V5,
     RGB255,
     .area = 1,
     .resize = EB_RESIZE_LETTERBOX,
     STRIDES3,
     .n_anchors = 3,
     .anchors = V5_ANCHORS,
     .what = "a YOLOv5-style head [1,N,5+nc] decoded in the graph"},
    {.name = "yolov5-raw",
     .kind = EB_HEAD_V5_RAW,
     RGB255,
     .area = 1,
     .resize = EB_RESIZE_LETTERBOX,
     STRIDES3,
     .n_anchors = 3,
     .anchors = V5_ANCHORS,
     .what = "a YOLOv5/YOLOv5-Lite anchor head [1,3*cells,5+nc] not decoded in the graph"},
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

static const struct family *family_of(enum eb_head_kind k)
{
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (families[i].kind == k)
            return &families[i];
    return NULL;
}

const char *eb_profile_head_choices(void)
{
    return "auto|v8|v5|v5-raw|yolox|nanodet|fastestdet|fastestv2|end2end|detr";
}

/* ---- the profile file ---------------------------------------------------------------------- */

/* What a profile file sets (has_* = the key was given). */
struct overrides {
    char name[32];
    enum eb_head_kind head;
    int has_bgr, bgr, has_pad, pad, has_mean, has_std, has_resize, has_sigmoid, sigmoid;
    int has_interp, area, has_scale;
    float mean[3], std[3];
    enum eb_resize resize;
    int n_strides;
    int strides[EB_HEAD_MAX_LEVELS];
    int n_anchor_levels, n_anchors, anchors_line;
    float anchors[EB_HEAD_MAX_LEVELS][EB_HEAD_MAX_ANCHORS][2];
    int has_reg_max, reg_max, has_nms, nms_agnostic, has_detr, detr_softmax;
    char *names_text; /* owned, the `names` value */
};

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Splits `text` at any of `seps` into up to `max` numbers; returns the count, -1 on a bad one. */
static int parse_numbers(char *text, const char *seps, float *out, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(text, seps, &save); t != NULL; t = strtok_r(NULL, seps, &save)) {
        double v;
        t = trim(t);
        if (*t == '\0')
            continue;
        if (n >= max || eb_number_parse_real(t, &v) != EB_NUMBER_OK)
            return -1;
        out[n++] = (float)v;
    }
    return n;
}

static int choice(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return -1;
}

#define FILE_FAIL(...)                                                                             \
    eb_diag_fail(diag, EB_ERR_INVALID_ARG, "model profile %s line %d: " __VA_ARGS__)

/* One `key = value` line into `o`. */
static enum eb_status parse_line(char *key, char *val, const char *file, int line,
                                 struct overrides *o, struct eb_diag *diag)
{
    static const char *const colors[] = {"rgb", "bgr"};
    static const char *const resizes[] = {"letterbox", "letterbox_topleft", "stretch"};
    static const char *const sig[] = {"graph", "decoder"};
    static const char *const nms[] = {"class", "agnostic"};
    static const char *const detr[] = {"sigmoid", "softmax"};
    static const char *const interps[] = {"linear", "area"};
    float v[3 * 2 * EB_HEAD_MAX_LEVELS];
    int k;
    if (strcmp(key, "name") == 0) {
        snprintf(o->name, sizeof(o->name), "%s", val);
    } else if (strcmp(key, "head") == 0) {
        o->head = eb_head_from_name(val);
        if (o->head == EB_HEAD_UNKNOWN)
            return FILE_FAIL("head %s is not an adapter; use one of %s", file, line, val,
                             eb_profile_head_choices() + 5);
    } else if (strcmp(key, "color") == 0) {
        if ((k = choice(val, colors, 2)) < 0)
            return FILE_FAIL("color %s: use rgb or bgr", file, line, val);
        o->has_bgr = 1;
        o->bgr = k;
    } else if (strcmp(key, "scale") == 0) {
        double s;
        if (strcmp(val, "1/255") == 0)
            s = 255.0;
        else if (eb_number_parse_real(val, &s) == EB_NUMBER_OK && (s == 1.0 || s == 255.0))
            s = s == 1.0 ? 1.0 : 255.0;
        else
            return FILE_FAIL("scale %s: use 1/255 (pixels to 0..1) or 1 (raw 0..255)", file, line,
                             val);
        /* std for every channel; the mean is 0 unless a `mean` line (before or after) says. */
        o->has_std = 1;
        o->has_scale = 1;
        for (int c = 0; c < 3; c++)
            o->std[c] = (float)s;
    } else if (strcmp(key, "mean") == 0 || strcmp(key, "std") == 0) {
        const int is_std = key[0] == 's';
        if (parse_numbers(val, ", \t", v, 3) != 3)
            return FILE_FAIL("%s needs three numbers (one per model channel, 0-255 scale)", file,
                             line, key);
        for (int c = 0; c < 3; c++) {
            if (is_std && !(v[c] > 0.0f))
                return FILE_FAIL("std must be > 0", file, line);
            (is_std ? o->std : o->mean)[c] = v[c];
        }
        *(is_std ? &o->has_std : &o->has_mean) = 1;
    } else if (strcmp(key, "resize") == 0) {
        if ((k = choice(val, resizes, 3)) < 0)
            return FILE_FAIL("resize %s: use letterbox, letterbox_topleft or stretch", file, line,
                             val);
        o->has_resize = 1;
        o->resize = (enum eb_resize)k;
    } else if (strcmp(key, "interp") == 0) {
        if ((k = choice(val, interps, 2)) < 0)
            return FILE_FAIL("interp %s: linear (OpenCV INTER_LINEAR) or area (INTER_AREA when "
                             "shrinking)",
                             file, line, val);
        o->has_interp = 1;
        o->area = k;
    } else if (strcmp(key, "pad") == 0) {
        double p;
        if (eb_number_parse_real(val, &p) != EB_NUMBER_OK || p < 0 || p > 255 || p != (int)p)
            return FILE_FAIL("pad %s: an integer 0..255", file, line, val);
        o->has_pad = 1;
        o->pad = (int)p;
    } else if (strcmp(key, "strides") == 0) {
        int n = parse_numbers(val, ", \t", v, EB_HEAD_MAX_LEVELS);
        if (n < 1)
            return FILE_FAIL("strides: 1 to %d positive integers", file, line, EB_HEAD_MAX_LEVELS);
        for (int i = 0; i < n; i++) {
            if (v[i] < 1 || v[i] > 1024 || v[i] != (int)v[i])
                return FILE_FAIL("strides: %g is not an integer 1..1024", file, line, v[i]);
            o->strides[i] = (int)v[i];
        }
        o->n_strides = n;
    } else if (strcmp(key, "anchors") == 0) {
        /* levels separated by ';', each w,h pairs */
        char *save = NULL;
        int lv = 0, per = -1;
        for (char *t = strtok_r(val, ";", &save); t != NULL; t = strtok_r(NULL, ";", &save)) {
            if (lv >= EB_HEAD_MAX_LEVELS)
                return FILE_FAIL("anchors: at most %d levels", file, line, EB_HEAD_MAX_LEVELS);
            int n = parse_numbers(t, ", \t", v, 2 * EB_HEAD_MAX_ANCHORS);
            if (n < 2 || n % 2 != 0 || (per >= 0 && n / 2 != per))
                return FILE_FAIL("anchors: each level (separated by ;) needs the same number "
                                 "(1..%d) of w,h pairs",
                                 file, line, EB_HEAD_MAX_ANCHORS);
            per = n / 2;
            for (int a = 0; a < per; a++) {
                if (!(v[2 * a] > 0) || !(v[2 * a + 1] > 0))
                    return FILE_FAIL("anchors must be > 0", file, line);
                o->anchors[lv][a][0] = v[2 * a];
                o->anchors[lv][a][1] = v[2 * a + 1];
            }
            lv++;
        }
        if (lv == 0)
            return FILE_FAIL("anchors: empty", file, line);
        o->n_anchor_levels = lv;
        o->n_anchors = per;
        o->anchors_line = line;
    } else if (strcmp(key, "sigmoid") == 0) {
        if ((k = choice(val, sig, 2)) < 0)
            return FILE_FAIL("sigmoid %s: graph (the model applies it) or decoder", file, line,
                             val);
        o->has_sigmoid = 1;
        o->sigmoid = k;
    } else if (strcmp(key, "reg_max") == 0) {
        double r;
        if (eb_number_parse_real(val, &r) != EB_NUMBER_OK || r < 1 || r > 64 || r != (int)r)
            return FILE_FAIL("reg_max %s: an integer 1..64", file, line, val);
        o->has_reg_max = 1;
        o->reg_max = (int)r;
    } else if (strcmp(key, "nms") == 0) {
        if ((k = choice(val, nms, 2)) < 0)
            return FILE_FAIL("nms %s: class or agnostic", file, line, val);
        o->has_nms = 1;
        o->nms_agnostic = k;
    } else if (strcmp(key, "detr_scores") == 0) {
        if ((k = choice(val, detr, 2)) < 0)
            return FILE_FAIL("detr_scores %s: sigmoid or softmax", file, line, val);
        o->has_detr = 1;
        o->detr_softmax = k;
    } else if (strcmp(key, "names") == 0) {
        free(o->names_text);
        o->names_text = strdup(val);
        if (o->names_text == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    } else {
        return FILE_FAIL("unknown key %s (keys: name, head, color, scale, mean, std, resize, pad, "
                         "interp, strides, anchors, sigmoid, reg_max, nms, detr_scores, names)",
                         file, line, key);
    }
    return EB_OK;
}

static enum eb_status parse_file(const char *text, const char *file, struct overrides *o,
                                 struct eb_diag *diag)
{
    char *copy = strdup(text);
    if (copy == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    enum eb_status st = EB_OK;
    int line = 0;
    char *save = NULL;
    /* strtok_r skips empty lines, so count them by hand. */
    for (char *p = copy; st == EB_OK && p != NULL;) {
        char *nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        line++;
        char *hash = strchr(p, '#');
        if (hash != NULL)
            *hash = '\0';
        char *l = trim(p);
        if (*l != '\0') {
            char *eq = strchr(l, '=');
            if (eq == NULL) {
                st = FILE_FAIL("expected key = value", file, line);
            } else {
                *eq = '\0';
                char *key = trim(l), *val = trim(eq + 1);
                if (*val == '\0')
                    st = FILE_FAIL("%s has no value", file, line, key);
                else
                    st = parse_line(key, val, file, line, o, diag);
            }
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    (void)save;
    free(copy);
    return st;
}

/* ---- recognition ----------------------------------------------------------------------------- */

static int64_t cells_of(const struct eb_head_graph *g, int stride)
{
    return (int64_t)((g->in_h + stride - 1) / stride) * (int64_t)((g->in_w + stride - 1) / stride);
}

static int64_t cells_sum(const struct eb_head_graph *g, const int *strides, int n)
{
    int64_t s = 0;
    for (int i = 0; i < n; i++)
        s += cells_of(g, strides[i]);
    return s;
}

static void set_levels(struct eb_head *h, const struct eb_head_graph *g, const int *strides, int n)
{
    h->n_levels = n;
    for (int i = 0; i < n; i++) {
        h->strides[i] = strides[i];
        h->grid_h[i] = (g->in_h + strides[i] - 1) / strides[i];
        h->grid_w[i] = (g->in_w + strides[i] - 1) / strides[i];
    }
}

/* Output i's shape is [1, a, b] (rank 3, batch 1, positive dims): writes a and b. */
static int rows3(const struct eb_head_graph *g, int i, int64_t *a, int64_t *b)
{
    if (i >= g->n_outputs || g->out[i].rank != 3 || g->out[i].shape[0] != 1 ||
        g->out[i].shape[1] <= 0 || g->out[i].shape[2] <= 0 || g->out[i].shape[1] > (1 << 24) ||
        g->out[i].shape[2] > (1 << 24))
        return 0;
    *a = g->out[i].shape[1];
    *b = g->out[i].shape[2];
    return 1;
}

/* The fitting context: the family's settings with the file's strides/anchors applied. */
struct fitctx {
    const struct eb_head_graph *g;
    int automatic; /* recognition: also require the graph's signature */
    int n_strides;
    const int *strides;
    int n_anchors;
    const float (*anchors)[EB_HEAD_MAX_ANCHORS][2];
    char *why; /* why it fits / why not */
    size_t why_size;
};

#define NOFIT(...) (snprintf(c->why, c->why_size, __VA_ARGS__), 0)

static int fit_end2end(const struct fitctx *c, struct eb_head *h)
{
    int64_t k, six;
    if (c->g->n_outputs != 1 || !rows3(c->g, 0, &k, &six) || six != 6)
        return NOFIT("needs one output [1,K,6]");
    if (c->automatic && k > 1000 && !c->g->ultralytics_e2e)
        return NOFIT("[1,%lld,6] has more rows than an end-to-end head keeps (<= 1000)",
                     (long long)k);
    h->num_classes = (int)c->g->n_class_names;
    h->num_boxes = (size_t)k;
    snprintf(c->why, c->why_size, "one output [1,%lld,6]%s", (long long)k,
             c->g->ultralytics_e2e ? ", metadata end2end True" : "");
    return 1;
}

static int fit_detr(const struct fitctx *c, struct eb_head *h)
{
    int64_t q0, c0, q1, c1;
    if (c->g->n_outputs != 2 || !rows3(c->g, 0, &q0, &c0) || !rows3(c->g, 1, &q1, &c1) ||
        q0 != q1 || (c0 != 4) == (c1 != 4) || q0 > 1000)
        return NOFIT("needs two outputs [1,Q,C] (class logits) and [1,Q,4] (boxes), Q <= 1000");
    const int li = c0 == 4 ? 1 : 0;
    const int64_t nc = li == 0 ? c0 : c1;
    if (nc < 2)
        return NOFIT("class logits [1,Q,%lld] need at least 2 classes", (long long)nc);
    h->out_index[0] = li;
    h->out_index[1] = 1 - li;
    h->n_outputs = 2;
    const size_t names = c->g->n_class_names;
    if (names > 0)
        h->detr_softmax = (size_t)nc == names + 1;
    else
        h->detr_softmax = nc == 81 || nc == 91 || nc == 92;
    h->num_classes = (int)(h->detr_softmax ? nc - 1 : nc);
    h->num_boxes = (size_t)q0;
    snprintf(c->why, c->why_size,
             "outputs %s [1,%lld,%lld] (class %s, %d classes) and %s [1,%lld,4] (boxes)",
             c->g->out[li].name, (long long)q0, (long long)nc,
             h->detr_softmax ? "logits, softmax with no-object last" : "logits, sigmoid",
             h->num_classes, c->g->out[1 - li].name, (long long)q0);
    return 1;
}

static int fit_nanodet(const struct fitctx *c, struct eb_head *h)
{
    const struct eb_head_graph *g = c->g;
    const int L = c->n_strides;
    if (g->n_outputs != 2 * L)
        return NOFIT("needs %d outputs (class scores and box distributions for %d levels)", 2 * L,
                     L);
    int64_t nc = -1, bins = -1;
    for (int l = 0; l < L; l++) {
        const int64_t cells = cells_of(g, c->strides[l]);
        int ci = -1, bi = -1;
        for (int i = 0; i < g->n_outputs; i++) {
            int64_t n, d;
            if (!rows3(g, i, &n, &d) || n != cells)
                continue;
            /* The box distributions: 4 sides x bins, raw (no sigmoid at their end). */
            const int boxlike = d % 4 == 0 && d >= 8 && !(g->out[i].ends & EB_HEAD_END_SIGMOID);
            if (boxlike && bi < 0)
                bi = i;
            else if (ci < 0)
                ci = i;
        }
        if (ci < 0 || bi < 0)
            return NOFIT("no pair of outputs [1,%lld,nc] + [1,%lld,4*bins] for stride %d",
                         (long long)cells, (long long)cells, c->strides[l]);
        const int64_t d_c = g->out[ci].shape[2], d_b = g->out[bi].shape[2];
        if ((nc >= 0 && d_c != nc) || (bins >= 0 && d_b != bins))
            return NOFIT("levels disagree on the class count or the bins");
        if (c->automatic && !(g->out[ci].ends & EB_HEAD_END_SIGMOID))
            return NOFIT("class scores %s do not end in a Sigmoid", g->out[ci].name);
        nc = d_c;
        bins = d_b;
        h->out_index[l] = ci;
        h->out_index[L + l] = bi;
    }
    set_levels(h, g, c->strides, L);
    h->n_outputs = 2 * L;
    h->num_classes = (int)nc;
    h->reg_max = (int)(bins / 4 - 1);
    h->num_boxes = (size_t)cells_sum(g, c->strides, L);
    snprintf(c->why, c->why_size,
             "%d levels (strides %d..%d) of class scores [1,cells,%lld] (sigmoid in the graph) "
             "and box distributions [1,cells,%lld] (4 sides x %lld bins)",
             L, c->strides[0], c->strides[L - 1], (long long)nc, (long long)bins,
             (long long)(bins / 4));
    return 1;
}

/* Output i is rank 4 with batch 1: writes its dims 1..3. */
static int rank4(const struct eb_head_graph *g, int i, int64_t d[3])
{
    if (i >= g->n_outputs || g->out[i].rank != 4 || g->out[i].shape[0] != 1)
        return 0;
    for (int k = 0; k < 3; k++) {
        d[k] = g->out[i].shape[k + 1];
        if (d[k] <= 0 || d[k] > (1 << 24))
            return 0;
    }
    return 1;
}

static int fit_fastestv2(const struct fitctx *c, struct eb_head *h)
{
    const struct eb_head_graph *g = c->g;
    const int L = c->n_strides, A = c->n_anchors;
    if (g->n_outputs != L || A < 1)
        return NOFIT("needs %d NHWC outputs [1,H,W,%d*5+nc] and anchors", L, A);
    int64_t nc = -1;
    for (int l = 0; l < L; l++) {
        int64_t d[3];
        const int gh = (g->in_h + c->strides[l] - 1) / c->strides[l];
        const int gw = (g->in_w + c->strides[l] - 1) / c->strides[l];
        if (!rank4(g, l, d) || d[0] != gh || d[1] != gw || d[2] <= 5 * A)
            return NOFIT("output %d is not [1,%d,%d,%d*5+nc] (stride %d)", l, gh, gw, A,
                         c->strides[l]);
        if (nc >= 0 && d[2] - 5 * A != nc)
            return NOFIT("levels disagree on the class count");
        nc = d[2] - 5 * A;
        if (c->automatic && (g->out[l].ends & (EB_HEAD_END_SOFTMAX | EB_HEAD_END_SIGMOID)) !=
                                (EB_HEAD_END_SOFTMAX | EB_HEAD_END_SIGMOID))
            return NOFIT("output %s does not end in Sigmoid (boxes, objectness) and Softmax "
                         "(classes)",
                         g->out[l].name);
        h->out_index[l] = l;
    }
    set_levels(h, g, c->strides, L);
    h->n_outputs = L;
    h->n_anchors = A;
    h->num_classes = (int)nc;
    h->num_boxes = (size_t)A * (size_t)cells_sum(g, c->strides, L);
    snprintf(c->why, c->why_size,
             "%d NHWC outputs [1,H,W,%lld] (strides %d, %d; %d anchors; sigmoid and softmax in "
             "the graph)",
             L, (long long)(nc + 5 * A), c->strides[0], c->strides[L - 1], A);
    return 1;
}

static int fit_fastestdet(const struct fitctx *c, struct eb_head *h)
{
    const struct eb_head_graph *g = c->g;
    int64_t d[3];
    if (g->n_outputs != 1 || !rank4(g, 0, d) || d[0] < 6)
        return NOFIT("needs one NCHW output [1,5+nc,H,W]");
    if (g->in_h % d[1] != 0 || g->in_w % d[2] != 0 || g->in_h / d[1] != g->in_w / d[2])
        return NOFIT("the input %dx%d is not a whole number of its %lldx%lld cells", g->in_w,
                     g->in_h, (long long)d[2], (long long)d[1]);
    if (c->automatic && !(g->out[0].ends & EB_HEAD_END_SOFTMAX))
        return NOFIT("its classes do not end in a Softmax");
    const int stride = (int)(g->in_h / d[1]);
    set_levels(h, g, &stride, 1);
    h->num_classes = (int)(d[0] - 5);
    h->num_boxes = (size_t)(d[1] * d[2]);
    snprintf(c->why, c->why_size, "one NCHW output [1,%lld,%lld,%lld] (stride %d, softmax classes)",
             (long long)d[0], (long long)d[1], (long long)d[2], stride);
    return 1;
}

static int fit_v8(const struct fitctx *c, struct eb_head *h)
{
    const struct eb_head_graph *g = c->g;
    int64_t a, n;
    /* [1,4+nc,N] with N > 4+nc, or N <= 4+nc (small inputs: 84 anchors at 64x64, 21 at 32x32)
     * when the metadata's class names say nc. */
    if (g->n_outputs < 1 || !rows3(g, 0, &a, &n) || a < 5 ||
        (a >= n && (size_t)a != 4 + g->n_class_names))
        return NOFIT("needs an output [1,4+nc,N] with N > 4+nc (or nc from the class names)");
    static const int p5[] = {8, 16, 32}, p6[] = {8, 16, 32, 64};
    const int cells_ok = n == cells_sum(g, p5, 3) || n == cells_sum(g, p6, 4);
    if (c->automatic && !g->ultralytics && !cells_ok)
        return NOFIT("%lld anchors are not the cells of strides 8,16,32 at %dx%d and the metadata "
                     "is not an Ultralytics export's",
                     (long long)n, g->in_w, g->in_h);
    if (c->automatic && g->graph_read && !g->ultralytics && !(g->out[0].ends & EB_HEAD_END_DECODE))
        return NOFIT("its boxes are not decoded in the graph");
    h->num_classes = (int)(a - 4);
    h->num_boxes = (size_t)n;
    snprintf(c->why, c->why_size, "output %s [1,%lld,%lld]%s", g->out[0].name, (long long)a,
             (long long)n,
             g->ultralytics ? ", Ultralytics metadata"
                            : ", anchors = the cells of strides 8,16,32");
    return 1;
}

/* The rows heads [1,N,5+nc]: YOLOX (one box per cell), YOLOv5 (3 anchors per cell), decoded in
 * the graph or not. */
static int fit_rows(const struct fitctx *c, struct eb_head *h, enum eb_head_kind kind)
{
    const struct eb_head_graph *g = c->g;
    int64_t n, b;
    if (g->n_outputs != 1 || !rows3(g, 0, &n, &b) || b < 6 || n <= b)
        return NOFIT("needs one output [1,N,5+nc]");
    const unsigned ends = g->out[0].ends;
    const int decoded = (ends & EB_HEAD_END_DECODE) != 0;
    const int64_t cells = cells_sum(g, c->strides, c->n_strides);
    h->num_classes = (int)(b - 5);
    h->num_boxes = (size_t)n;
    if (kind == EB_HEAD_V5) {
        if (c->automatic && (!decoded || (n != cells && n != 3 * cells)))
            return NOFIT("its boxes are not decoded in the graph (no arithmetic ends the output)");
        snprintf(c->why, c->why_size, "one output [1,%lld,%lld] decoded in the graph", (long long)n,
                 (long long)b);
        return 1;
    }
    const int per = kind == EB_HEAD_YOLOX ? 1 : c->n_anchors;
    if (per < 1 || n != (int64_t)per * cells)
        return NOFIT("%lld rows are not %d x the %lld cells of strides %d..%d at %dx%d",
                     (long long)n, per, (long long)cells, c->strides[0],
                     c->strides[c->n_strides - 1], g->in_w, g->in_h);
    if (c->automatic && decoded)
        return NOFIT("the graph decodes its boxes already");
    /* YOLOX: boxes raw, scores sigmoid; YOLOv5 raw: everything sigmoid or nothing. */
    if (c->automatic && kind == EB_HEAD_YOLOX && g->graph_read &&
        (ends & (EB_HEAD_END_LAYER | EB_HEAD_END_SIGMOID)) !=
            (EB_HEAD_END_LAYER | EB_HEAD_END_SIGMOID))
        return NOFIT("YOLOX's raw box offsets beside sigmoid scores are not what ends the output");
    if (c->automatic && kind == EB_HEAD_V5_RAW && g->graph_read &&
        (ends & (EB_HEAD_END_LAYER | EB_HEAD_END_SIGMOID)) ==
            (EB_HEAD_END_LAYER | EB_HEAD_END_SIGMOID))
        return NOFIT("part of the output is sigmoid and part raw (not a YOLOv5 head)");
    set_levels(h, g, c->strides, c->n_strides);
    h->n_anchors = kind == EB_HEAD_YOLOX ? 0 : per;
    h->sigmoid = !(ends & EB_HEAD_END_SIGMOID);
    snprintf(c->why, c->why_size,
             "one output [1,%lld,%lld] = %s%lld cells of strides %d..%d, not decoded in the graph, "
             "%s",
             (long long)n, (long long)b, per > 1 ? "3 anchors x " : "", (long long)cells,
             c->strides[0], c->strides[c->n_strides - 1],
             h->sigmoid ? "sigmoid applied by the decoder" : "sigmoid in the graph");
    return 1;
}

static int fit(enum eb_head_kind kind, const struct fitctx *c, struct eb_head *h)
{
    switch (kind) {
    case EB_HEAD_END2END: return fit_end2end(c, h);
    case EB_HEAD_DETR: return fit_detr(c, h);
    case EB_HEAD_NANODET: return fit_nanodet(c, h);
    case EB_HEAD_FASTESTV2: return fit_fastestv2(c, h);
    case EB_HEAD_FASTESTDET: return fit_fastestdet(c, h);
    case EB_HEAD_V8: return fit_v8(c, h);
    case EB_HEAD_YOLOX:
    case EB_HEAD_V5:
    case EB_HEAD_V5_RAW: return fit_rows(c, h, kind);
    case EB_HEAD_UNKNOWN:
    case EB_HEAD_COUNT: break;
    }
    return 0;
}

/* Tries `f` (with the file's strides/anchors) on the graph; on a fit fills p's head. */
static int try_family(const struct family *f, const struct overrides *o,
                      const struct eb_head_graph *g, int automatic, struct eb_model_profile *p,
                      char *why, size_t why_size)
{
    struct fitctx c = {.g = g, .automatic = automatic, .why = why, .why_size = why_size};
    c.n_strides = o->n_strides > 0 ? o->n_strides : f->n_strides;
    c.strides = o->n_strides > 0 ? o->strides : f->strides;
    c.n_anchors = o->n_anchors > 0 ? o->n_anchors : f->n_anchors;
    c.anchors = o->n_anchors > 0 ? (const float(*)[EB_HEAD_MAX_ANCHORS][2])o->anchors
                                 : (const float(*)[EB_HEAD_MAX_ANCHORS][2])f->anchors;
    /* Anchors for another number of levels than the strides are the file's error, reported
     * with its line once the head is known (apply_overrides), not a misfit of every family. */
    struct eb_head h;
    memset(&h, 0, sizeof(h));
    h.kind = f->kind;
    h.in_w = g->in_w;
    h.in_h = g->in_h;
    h.n_outputs = 1;
    h.reg_max = f->reg_max;
    h.nms_agnostic = f->nms_agnostic;
    if (!fit(f->kind, &c, &h))
        return 0;
    if (h.n_anchors > 0)
        memcpy(h.anchors, c.anchors, sizeof(h.anchors));
    if (h.num_classes < 1 && f->kind != EB_HEAD_END2END) {
        snprintf(why, why_size, "no classes");
        return 0;
    }
    p->head = h;
    return 1;
}

/* ---- resolution ---------------------------------------------------------------------------- */

static void list_outputs(const struct eb_head_graph *g, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->n_outputs && n < size; i++) {
        n += (size_t)snprintf(buf + n, size - n, "%s%s [", i ? ", " : "", g->out[i].name);
        for (int k = 0; k < g->out[i].rank && n < size; k++)
            n += (size_t)snprintf(buf + n, size - n, "%s%lld", k ? "," : "",
                                  (long long)g->out[i].shape[k]);
        if (n < size)
            n += (size_t)snprintf(buf + n, size - n, "]");
    }
}

static enum eb_status split_names(struct eb_model_profile *p, char *text, struct eb_diag *diag)
{
    size_t n = 1;
    for (const char *s = text; *s; s++)
        n += *s == ',';
    p->names = calloc(n, sizeof(*p->names));
    if (p->names == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    char *save = NULL;
    for (char *t = strtok_r(text, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        t = trim(t);
        p->names[p->n_names] = strdup(t);
        if (p->names[p->n_names] == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
        p->n_names++;
    }
    return EB_OK;
}

static void apply_family(const struct family *f, struct eb_model_profile *p)
{
    snprintf(p->family, sizeof(p->family), "%s", f->name);
    p->norm.bgr = f->bgr;
    p->norm.pad = f->pad;
    p->norm.area = f->area;
    memcpy(p->norm.mean, f->mean, sizeof(f->mean));
    memcpy(p->norm.std, f->std, sizeof(f->std));
    p->resize = f->resize;
}

static enum eb_status apply_overrides(struct overrides *o, const char *file,
                                      struct eb_model_profile *p, struct eb_diag *diag)
{
    if (o->n_anchors > 0 && p->head.n_anchors > 0 && o->n_anchor_levels != p->head.n_levels)
        return FILE_FAIL("anchors give %d levels, but the %s head reads %d (one per stride); "
                         "give one ;-separated group of w,h pairs per stride",
                         file, o->anchors_line, o->n_anchor_levels, eb_head_name(p->head.kind),
                         p->head.n_levels);
    if (o->name[0])
        snprintf(p->family, sizeof(p->family), "%s", o->name);
    if (o->has_bgr)
        p->norm.bgr = o->bgr;
    if (o->has_pad)
        p->norm.pad = o->pad;
    if (o->has_interp)
        p->norm.area = o->area;
    if (o->has_mean)
        memcpy(p->norm.mean, o->mean, sizeof(o->mean));
    else if (o->has_scale)
        memset(p->norm.mean, 0, sizeof(p->norm.mean));
    if (o->has_std)
        memcpy(p->norm.std, o->std, sizeof(o->std));
    if (o->has_resize)
        p->resize = o->resize;
    if (o->has_sigmoid)
        p->head.sigmoid = o->sigmoid;
    if (o->has_reg_max && p->head.kind == EB_HEAD_NANODET && o->reg_max != p->head.reg_max)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "model profile %s: reg_max %d, but the model's box outputs hold %d "
                            "bins per side",
                            file, o->reg_max, p->head.reg_max + 1);
    if (o->has_nms)
        p->head.nms_agnostic = o->nms_agnostic;
    if (o->has_detr && p->head.kind == EB_HEAD_DETR) {
        p->head.detr_softmax = o->detr_softmax;
        p->head.num_classes = 0; /* recomputed below */
    }
    if (o->names_text != NULL) {
        enum eb_status st = split_names(p, o->names_text, diag);
        if (st != EB_OK)
            return st;
    }
    return EB_OK;
}

enum eb_status eb_profile_resolve(const struct eb_head_graph *g,
                                  const struct eb_profile_request *req,
                                  struct eb_model_profile *out, struct eb_diag *diag)
{
    memset(out, 0, sizeof(*out));
    struct overrides o;
    memset(&o, 0, sizeof(o));
    const char *file = req && req->file_name ? req->file_name : "(profile)";
    enum eb_status st = EB_OK;
    if (req != NULL && req->file_text != NULL) {
        st = parse_file(req->file_text, file, &o, diag);
        if (st != EB_OK) {
            free(o.names_text);
            return st;
        }
    }
    enum eb_head_kind forced = EB_HEAD_UNKNOWN;
    const char *forced_by = NULL;
    if (req != NULL && req->head != NULL && strcmp(req->head, "auto") != 0) {
        forced = eb_head_from_name(req->head);
        forced_by = "--head";
        if (forced == EB_HEAD_UNKNOWN) {
            free(o.names_text);
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "--head %s is not an adapter; use %s",
                                req->head, eb_profile_head_choices());
        }
    } else if (o.head != EB_HEAD_UNKNOWN) {
        forced = o.head;
        forced_by = "the profile's head";
    }
    char why[300] = "";
    char outs[400];
    list_outputs(g, outs, sizeof(outs));
    if (forced != EB_HEAD_UNKNOWN) {
        const struct family *f = family_of(forced);
        if (!try_family(f, &o, g, 0, out, why, sizeof(why))) {
            free(o.names_text);
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "%s %s does not fit the model's outputs (%s): %s", forced_by,
                                eb_head_name(forced), outs, why);
        }
        apply_family(f, out);
        snprintf(out->source, sizeof(out->source), "%s",
                 forced_by[0] == '-' ? "--head" : "profile file");
        snprintf(out->why, sizeof(out->why), "%s %s: %s", forced_by, eb_head_name(forced), why);
    } else {
        const struct family *hit = NULL;
        for (size_t i = 0; i < N_FAMILIES && hit == NULL; i++)
            if (try_family(&families[i], &o, g, 1, out, why, sizeof(why)))
                hit = &families[i];
        if (hit == NULL) {
            free(o.names_text);
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "no head adapter recognises the model's outputs (%s); name one "
                                "with --head %s or describe the model in a --model_profile file "
                                "(docs/model-profiles.md)",
                                outs, eb_profile_head_choices() + 5);
        }
        apply_family(hit, out);
        snprintf(out->source, sizeof(out->source), "built-in");
        snprintf(out->why, sizeof(out->why), "%s: %s", hit->what, why);
    }
    st = apply_overrides(&o, file, out, diag);
    free(o.names_text);
    if (st == EB_OK && req != NULL && req->file_text != NULL) {
        const size_t n = strlen(out->why);
        snprintf(out->why + n, sizeof(out->why) - n, "; settings from %s", file);
    }
    if (st == EB_OK && out->head.kind == EB_HEAD_DETR && out->head.num_classes == 0) {
        /* detr_scores given in the file: the class count follows it. */
        const int64_t c = g->out[out->head.out_index[0]].shape[2];
        out->head.num_classes = (int)(out->head.detr_softmax ? c - 1 : c);
    }
    if (st != EB_OK)
        eb_profile_fini(out);
    return st;
}

void eb_profile_fini(struct eb_model_profile *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n_names; i++)
        free(p->names[i]);
    free(p->names);
    p->names = NULL;
    p->n_names = 0;
}

void eb_profile_describe_pre(const struct eb_model_profile *p, char *buf, size_t size)
{
    static const char *const rs[] = {"letterbox centred", "letterbox top-left", "stretch"};
    const struct eb_pixel_norm *n = &p->norm;
    char scale[96];
    int same = 1;
    for (int c = 1; c < 3; c++)
        same &= n->mean[c] == n->mean[0] && n->std[c] == n->std[0];
    if (same && n->mean[0] == 0 && n->std[0] == 255)
        snprintf(scale, sizeof(scale), "/255");
    else if (same && n->mean[0] == 0 && n->std[0] == 1)
        snprintf(scale, sizeof(scale), "0-255");
    else
        snprintf(scale, sizeof(scale), "mean %g,%g,%g std %g,%g,%g", n->mean[0], n->mean[1],
                 n->mean[2], n->std[0], n->std[1], n->std[2]);
    snprintf(buf, size, "%s %s, %s%s, pad %d", n->bgr ? "BGR" : "RGB", scale, rs[p->resize],
             n->area ? " (area)" : "", n->pad);
}
