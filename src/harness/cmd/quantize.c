/*
 * `edgebench quantize` (quantize.h): options, the calibration subset, up to three passes of the
 * float model over it with every planned tensor observed, the ranges, the QDQ file and its check.
 */
#include "harness/cmd/quantize.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb/clock.h"
#include "eb/engine.h"
#include "eb/file.h"
#include "eb/number.h"
#include "eval/dataset.h"
#include "harness/cmd/config.h"
#include "harness/cmd/run.h"
#include "harness/pipeline/image_decode.h"
#include "model/calib.h"
#include "model/model.h"
#include "model/qdq.h"
#include "yolo/profile.h"

#define Q_IMAGES_DEFAULT 128
#define Q_META_MAX       (1u << 20)          /* bytes of the image list kept in the metadata */
#define Q_KEEP_BYTES     ((size_t)256 << 20) /* prepared images kept between passes */
/* A channel whose uint8 error is at least half its signal (3 dB) is as good as lost. */
#define Q_MIN_SQNR_DEFAULT 3.0

static const char *const k_methods[] = {"minmax", "percentile", "entropy"}; /* eb_calib_method */

void eb_quantize_print_help(FILE *fp)
{
    fprintf(fp,
            "usage: edgebench quantize --model FLOAT.onnx --calib DIR -o INT8.onnx [options]\n\n"
            "A QDQ int8 model (QuantizeLinear/DequantizeLinear pairs, as ONNX Runtime's\n"
            "quantize_static writes) from a float one, calibrated on images: weights int8\n"
            "symmetric per output channel, biases int32, activations uint8 per tensor at\n"
            "every quantised Conv's input. ONNX Runtime, TensorRT and the native engine load\n"
            "it; the native engine runs its convolutions on integer kernels (--precision\n"
            "int8).\n\n"
            "options:\n"
            "  --model PATH        float ONNX model (required)\n"
            "  --calib DIR         calibration images: a folder of images, or a dataset folder\n"
            "                      that val reads (COCO, YOLO, VOC) (required)\n"
            "  -o, --output PATH   the QDQ model to write (required)\n"
            "  --calib_images N    images drawn from DIR with --seed (default %d; all when\n"
            "                      DIR has fewer)\n"
            "  --seed S            seed of the draw (default 0): the same seed, the same model\n"
            "  --method M          minmax|percentile|entropy (default percentile): the range of\n"
            "                      each tensor is its min..max, or clipped at the --percentile\n"
            "                      of |x|, or where the 128-level histogram keeps the most\n"
            "                      information (KL divergence, as TensorRT)\n"
            "  --percentile P      for --method percentile (default 99.999, as ONNX Runtime)\n"
            "  --per_channel on|off  weight scales per output channel (default on; a bare\n"
            "                      --per_channel means on); per channel raises an older model's\n"
            "                      opset to 13\n"
            "  --conv_outputs on|off  also quantise each Conv's output before its activation,\n"
            "                      as ONNX Runtime's quantize_static does (default off:\n"
            "                      TensorRT's placement, Q/DQ at the Conv inputs only, which\n"
            "                      keeps more accuracy; docs/quantization.md has the figures)\n"
            "  --keep_float LIST   Conv nodes (names, or their output tensors) kept in float,\n"
            "                      comma-separated; 'auto' adds the default set: the last Conv\n"
            "                      of every output branch (the detection head's class and box\n"
            "                      layers) and the DFL's convolution; 'none' = quantise every\n"
            "                      Conv (default auto)\n"
            "  --split NAME        the dataset split when DIR has several\n"
            "  --imgsz N           input size for models with a dynamic input (default 640)\n"
            "  --model_profile FILE, --head NAME   how to prepare the images (as run)\n"
            "  --min_sqnr DB       an activation with a channel whose signal-to-quantisation-\n"
            "                      noise ratio at its uint8 range is below DB on the images\n"
            "                      stays float, and so do the Conv reading it (default 3: a\n"
            "                      channel about lost, as a depthwise Conv after a layer with a\n"
            "                      few large channels sees); off = never\n"
            "  --threads N         CPU threads of the calibration runs (default: all)\n\n"
            "The image list, the seed, the method and the edgebench version are kept in the\n"
            "model's metadata (edgebench.quantize.*; `edgebench model info` prints them).\n"
            "exit codes: 0 written; 1 the model could not be run or written; 2 bad input;\n"
            "130 interrupted (nothing written).\n",
            Q_IMAGES_DEFAULT);
}

static int usage(FILE *err, const char *fmt, const char *a, const char *b)
{
    fprintf(err, "edgebench: error: ");
    fprintf(err, fmt, a, b);
    fprintf(err, " (see edgebench quantize --help)\n");
    return EB_EXIT_USAGE;
}

static int int_opt(const char *name, const char *v, long long lo, long long hi, long long *out,
                   FILE *err)
{
    if (eb_number_parse_int(v, out) != EB_NUMBER_OK || *out < lo || *out > hi)
        return usage(err, "--%s: '%s' is not a whole number in range", name, v);
    return EB_EXIT_OK;
}

static int parse_opts(int argc, char **argv, struct eb_quantize_request *o, int *help, FILE *err)
{
    static const char *const names[] = {
        "model",         "calib",       "output",     "calib_images", "seed",  "method",
        "percentile",    "per_channel", "keep_float", "split",        "imgsz", "threads",
        "model_profile", "head",        "min_sqnr",   "conv_outputs",
    };
    *help = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        size_t k = 0;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = 1;
            return EB_EXIT_OK;
        }
        if (strcmp(arg, "-o") == 0) {
            k = 2;
        } else {
            while (k < EB_ARRAY_LEN(names) && !eb_config_match_option(arg, names[k], &v))
                k++;
            if (k == EB_ARRAY_LEN(names))
                return usage(err, "unknown option '%.200s'%s", arg, "");
        }
        if (v == NULL && (k == 7 || k == 15) &&
            (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0))
            v = "on"; /* a bare --per_channel */
        if (v == NULL && i + 1 < argc)
            v = argv[++i];
        if (v == NULL || v[0] == '\0')
            return usage(err, "--%s needs a value%s", names[k], "");
        int rc = EB_EXIT_OK;
        double p = 0.0;
        switch (k) {
        case 0: o->model = v; break;
        case 1: o->calib = v; break;
        case 2: o->out = v; break;
        case 3: rc = int_opt(names[k], v, 1, EB_QUANTIZE_IMAGES_MAX, &o->images, err); break;
        case 4: rc = int_opt(names[k], v, 0, UINT32_MAX, &o->seed, err); break;
        case 5: {
            size_t m = 0;
            while (m < EB_ARRAY_LEN(k_methods) && strcmp(v, k_methods[m]) != 0)
                m++;
            if (m == EB_ARRAY_LEN(k_methods))
                return usage(err, "--method: '%s' is not one of %s", v,
                             "minmax|percentile|entropy");
            o->method = (enum eb_calib_method)m;
            break;
        }
        case 6:
            if (eb_number_parse_real(v, &p) != EB_NUMBER_OK || !(p > 50.0 && p <= 100.0))
                return usage(err, "--percentile: '%s' is not a number in (50, 100]%s", v, "");
            o->percentile = p;
            break;
        case 7:
        case 15:
            if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
                return usage(err, "--%s: '%s' is not on or off", names[k], v);
            *(k == 7 ? &o->per_channel : &o->conv_outputs) = strcmp(v, "on") == 0;
            break;
        case 8: o->keep_float = v; break;
        case 9: o->split = v; break;
        case 10: rc = int_opt(names[k], v, 32, 4096, &o->imgsz, err); break;
        case 11: rc = int_opt(names[k], v, 1, 1024, &o->threads, err); break;
        case 12: o->profile_file = v; break;
        case 13: o->head = v; break;
        case 14:
            if (strcmp(v, "off") == 0)
                o->min_sqnr = -INFINITY;
            else if (eb_number_parse_real(v, &p) != EB_NUMBER_OK || !(p >= 0.0 && p <= 60.0))
                return usage(err, "--min_sqnr: '%s' is not off or a number of dB in 0..60%s", v,
                             "");
            else
                o->min_sqnr = p;
            break;
        }
        if (rc != EB_EXIT_OK)
            return rc;
    }
    if (o->model == NULL || o->calib == NULL || o->out == NULL)
        return usage(err, "%s is required%s",
                     o->model == NULL   ? "--model"
                     : o->calib == NULL ? "--calib"
                                        : "-o/--output",
                     "");
    return EB_EXIT_OK;
}

/* ---- the calibration subset ---- */

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The images of DIR (an image folder, else a dataset), `n` of them drawn with `seed` and sorted;
 * the rest freed. */
static enum eb_status draw_images(const struct eb_quantize_request *o, char ***paths_out,
                                  size_t *n_out, size_t *n_all_out, struct eb_diag *diag)
{
    char **paths = NULL;
    size_t n = 0;
    enum eb_status st = eb_dataset_list_images(o->calib, &paths, &n, diag);
    if (st != EB_OK)
        return st;
    if (n == 0) {
        struct eb_dataset *ds = NULL;
        struct eb_dataset_options dopt = {.split = o->split, .option = "--calib"};
        eb_dataset_paths_free(paths, 0);
        if ((st = eb_dataset_load(o->calib, &dopt, &ds, diag)) != EB_OK)
            return st;
        paths = calloc(ds->n_images + 1, sizeof(char *));
        for (size_t i = 0; paths != NULL && i < ds->n_images; i++)
            if ((paths[n] = strdup(ds->images[i].path)) != NULL)
                n++;
        const size_t want = ds->n_images;
        eb_dataset_destroy(ds);
        if (paths == NULL || n != want) {
            eb_dataset_paths_free(paths, n);
            return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to list %s: out of memory", o->calib);
        }
    }
    *n_all_out = n;
    const size_t want = (size_t)o->images < n ? (size_t)o->images : n;
    uint64_t s = (uint64_t)o->seed;
    for (size_t i = 0; i < want; i++) { /* a partial Fisher-Yates shuffle */
        const size_t j = i + (size_t)(eb_splitmix64(&s) % (n - i));
        char *t = paths[i];
        paths[i] = paths[j];
        paths[j] = t;
    }
    for (size_t i = want; i < n; i++)
        free(paths[i]);
    qsort(paths, want, sizeof(*paths), cmp_path);
    *paths_out = paths;
    *n_out = want;
    return EB_OK;
}

/* ---- observing ---- */

struct q_run {
    struct eb_qdq_plan *plan;
    struct eb_calib_stat *stats; /* plan->n_acts */
    int pass;                    /* 1: min/max and shapes, 2: histograms, 3: quantisation error */
    int failed;                  /* out of memory in the observer */
};

static void observe(void *ctx, const char *name, const struct eb_tensor *t)
{
    struct q_run *q = ctx;
    const long a = eb_qdq_plan_act(q->plan, name);
    const size_t n = (size_t)eb_tensor_numel(t);
    if (a >= 0) {
        struct eb_qdq_act *act = &q->plan->acts[a];
        if (q->pass == 1) {
            eb_calib_add_minmax(&q->stats[a], t->data, n);
            act->seen = 1;
        } else if (q->pass == 2) {
            eb_calib_add_hist(&q->stats[a], t->data, n);
        } else {
            const int64_t ch = t->rank == 4 && t->shape[0] == 1 ? t->shape[1] : 1;
            if (eb_calib_add_error(&q->stats[a], t->data, n, act->scale, act->zero_point, ch))
                q->failed = 1;
        }
    }
    const long si = q->pass == 1 ? eb_qdq_plan_shape(q->plan, name) : -1;
    if (si >= 0) {
        q->plan->shapes[si].rank = t->rank;
        for (int d = 0; d < t->rank && d < EB_ONNX_MAX_RANK; d++)
            q->plan->shapes[si].shape[d] = t->shape[d];
    }
}

/*
 * The images prepared by the first pass, kept for the next two so that each is read, decoded
 * and letterboxed once: per image the smaller of its model input (exactly what the engine was
 * fed) or its decoded RGB8 (letterboxed again, which gives the same input), while the kept
 * bytes stay under Q_KEEP_BYTES; the images past that are read and decoded again in each pass.
 */
struct q_kept {
    float *input; /* the model input, or NULL */
    uint8_t *rgb; /* the decoded image (width * 3 bytes a row), or NULL */
    int width, height;
};

struct q_pass_io {
    const struct eb_engine_io *io;
    const struct eb_model_profile *prof;
    char **paths;
    size_t n;
    float *input;        /* room for one model input */
    struct q_kept *kept; /* n entries */
    size_t kept_bytes;
};

/* Letterboxes packed RGB8 `rgb` into `dst` as the model's profile prepares a frame. */
static void prepare(const struct q_pass_io *p, const uint8_t *rgb, int width, int height,
                    float *dst)
{
    const struct eb_engine_io *io = p->io;
    struct eb_letterbox lb;
    eb_letterbox_compute_mode(width, height, (int)io->inputs[0].shape[3],
                              (int)io->inputs[0].shape[2], p->prof->resize, &lb);
    eb_letterbox_to_nchw_f32_norm(rgb, width, height, (size_t)width * 3, &lb,
                                  (int)io->inputs[0].shape[1], &p->prof->norm, dst);
}

/* Reads, decodes and prepares image i into p->input, or into a kept copy (*data_out: where
 * the input is). */
static enum eb_status load_image(struct q_pass_io *p, struct eb_image_decoder *dec, size_t i,
                                 float **data_out, struct eb_diag *diag)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_image img;
    char why[EB_IMAGE_WHY_MAX];
    enum eb_status st = eb_model_read_file(p->paths[i], &bytes, &len, diag);
    if (st != EB_OK)
        return st;
    st = eb_image_decode(dec, eb_image_format_of(bytes, len), bytes, len, &img, why, diag);
    free(bytes);
    if (st == EB_ERR_FORMAT)
        return eb_diag_fail(diag, st, "failed to read calibration image %s: %s; remove it from %s",
                            p->paths[i], why, "the folder");
    if (st != EB_OK)
        return st;
    const size_t in_bytes = (size_t)(p->io->inputs[0].shape[1] * p->io->inputs[0].shape[2] *
                                     p->io->inputs[0].shape[3]) *
                            sizeof(float);
    const size_t rgb_bytes = (size_t)img.width * (size_t)img.height * 3;
    const size_t keep = rgb_bytes < in_bytes ? rgb_bytes : in_bytes;
    struct q_kept *k = &p->kept[i];
    *data_out = p->input;
    if (p->kept_bytes + keep <= Q_KEEP_BYTES) { /* out of memory here only means not kept */
        if (rgb_bytes < in_bytes && (k->rgb = malloc(rgb_bytes)) != NULL) {
            memcpy(k->rgb, img.rgb, rgb_bytes);
            k->width = img.width;
            k->height = img.height;
            p->kept_bytes += keep;
        } else if (rgb_bytes >= in_bytes && (k->input = malloc(in_bytes)) != NULL) {
            *data_out = k->input;
            p->kept_bytes += keep;
        }
    }
    prepare(p, img.rgb, img.width, img.height, *data_out);
    return EB_OK;
}

/* One pass of the model over the images. */
static enum eb_status calib_pass(struct eb_engine *e, struct q_pass_io *p, struct q_run *run,
                                 const struct eb_quantize_env *env, struct eb_diag *diag)
{
    struct eb_image_decoder dec = {0};
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = p->io->inputs[0].rank};
    struct eb_tensor out[EB_ENGINE_MAX_IO];
    enum eb_status st = EB_OK;
    memcpy(in.shape, p->io->inputs[0].shape, sizeof(in.shape));
    for (size_t i = 0; i < p->n && st == EB_OK; i++) {
        if (env->stop != NULL && atomic_load(env->stop)) {
            st = eb_diag_fail(diag, EB_ERR_CANCELLED, "quantize: interrupted; nothing written");
            break;
        }
        const struct q_kept *k = &p->kept[i];
        float *data = p->input;
        if (k->input != NULL)
            data = k->input;
        else if (k->rgb != NULL)
            prepare(p, k->rgb, k->width, k->height, p->input);
        else
            st = load_image(p, &dec, i, &data, diag);
        if (st == EB_OK) {
            in.data = data;
            observe(run, p->io->inputs[0].name, &in); /* the engine observes node outputs */
            st = eb_engine_run(e, &in, 1, out, p->io->n_outputs, diag);
        }
    }
    eb_image_decoder_fini(&dec);
    return st;
}

/* ---- the whole command ---- */

struct q_state {
    uint8_t *bytes;
    size_t len;
    struct eb_onnx_model *m;
    struct eb_qdq_plan plan;
    struct eb_calib_stat *stats;
    struct eb_engine *e;
    struct eb_model_profile prof;
    int have_prof;
    char **paths;
    size_t n_paths;
    float *input;
    struct q_kept *kept; /* n_paths */
    char *profile_text;
    char *meta_images, *meta_float;
    uint8_t *qbytes;
    size_t qlen;
};

static void q_fini(struct q_state *s)
{
    for (size_t i = 0; s->stats != NULL && i < s->plan.n_acts; i++)
        eb_calib_stat_fini(&s->stats[i]);
    free(s->stats);
    eb_qdq_plan_fini(&s->plan);
    eb_onnx_model_destroy(s->m);
    eb_engine_destroy(s->e);
    if (s->have_prof)
        eb_profile_fini(&s->prof);
    for (size_t i = 0; s->kept != NULL && i < s->n_paths; i++) {
        free(s->kept[i].input);
        free(s->kept[i].rgb);
    }
    free(s->kept);
    eb_dataset_paths_free(s->paths, s->n_paths);
    free(s->input);
    free(s->profile_text);
    free(s->meta_images);
    free(s->meta_float);
    free(s->qbytes);
    free(s->bytes);
}

static enum eb_status resolve_profile(const struct eb_quantize_request *o, struct q_state *s,
                                      const struct eb_engine_io *io, struct eb_diag *diag)
{
    struct eb_head_graph g;
    enum eb_status st = eb_model_head_graph(s->bytes, s->len, o->model, &g, diag);
    if (st != EB_OK)
        return st;
    g.in_w = (int)io->inputs[0].shape[3];
    g.in_h = (int)io->inputs[0].shape[2];
    for (size_t i = 0; i < io->n_outputs && (int)i < g.n_outputs; i++) {
        g.out[i].rank = io->outputs[i].rank;
        for (int d = 0; d < io->outputs[i].rank && d < 6; d++)
            g.out[i].shape[d] = io->outputs[i].shape[d];
    }
    if (o->profile_file != NULL &&
        (st = eb_file_read_text(o->profile_file, 1u << 20, &s->profile_text, diag)) != EB_OK)
        return st;
    struct eb_profile_request req = {
        .file_text = s->profile_text, .file_name = o->profile_file, .head = o->head};
    if ((st = eb_profile_resolve(&g, &req, &s->prof, diag)) == EB_OK)
        s->have_prof = 1;
    return st;
}

/* A node's name, or its first output's when it has none (what --keep_float accepts). */
static const char *node_label(const struct eb_onnx_node *n)
{
    return n->name[0] != '\0' || n->n_outputs == 0 ? n->name : n->outputs[0];
}

/* "N: a.jpg,b.jpg,..." (base names) and the float nodes' names, for the metadata. */
static enum eb_status build_meta_lists(struct q_state *s, struct eb_diag *diag)
{
    size_t cap = 32, n = 0;
    for (size_t i = 0; i < s->n_paths; i++)
        cap += strlen(s->paths[i]) + 1;
    s->meta_images = malloc(cap);
    size_t fcap = 1;
    for (size_t k = 0; k < s->m->n_nodes; k++)
        if (s->plan.node[k] == EB_QDQ_NODE_FLOAT)
            fcap += strlen(node_label(&s->m->nodes[k])) + 1;
    s->meta_float = malloc(fcap);
    if (s->meta_images == NULL || s->meta_float == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "quantize: out of memory");
    n = (size_t)snprintf(s->meta_images, cap, "%zu:", s->n_paths);
    for (size_t i = 0; i < s->n_paths; i++) {
        const char *slash = strrchr(s->paths[i], '/');
        const char *base = slash != NULL ? slash + 1 : s->paths[i];
        if (n + strlen(base) + 8 > Q_META_MAX) { /* a metadata value stays under 1 MiB */
            snprintf(s->meta_images + n, cap - n, ",...");
            break;
        }
        n += (size_t)snprintf(s->meta_images + n, cap - n, "%s%s", i ? "," : " ", base);
    }
    size_t f = 0;
    s->meta_float[0] = '\0';
    for (size_t k = 0; k < s->m->n_nodes; k++)
        if (s->plan.node[k] == EB_QDQ_NODE_FLOAT)
            f += (size_t)snprintf(s->meta_float + f, fcap - f, "%s%s", f ? "," : "",
                                  node_label(&s->m->nodes[k]));
    return EB_OK;
}

/* The written model loads in the native engine with its integer convolutions. */
static enum eb_status check_written(const struct q_state *s, const struct eb_quantize_request *o,
                                    size_t *n_int8, struct eb_diag *diag)
{
    struct eb_engine_options eo;
    struct eb_engine *e = NULL;
    struct eb_engine_exec_info info;
    eb_engine_options_default(&eo);
    eo.qdq = EB_ENGINE_QDQ_INT8;
    eo.imgsz = (int)o->imgsz;
    eo.threads = 1;
    enum eb_status st = eb_engine_load(s->qbytes, s->qlen, o->out, &eo, &e, diag);
    if (st == EB_OK) {
        eb_engine_exec_info_get(e, &info);
        *n_int8 = info.n_int8;
    }
    eb_engine_destroy(e);
    return st;
}

static int fail_code(enum eb_status st)
{
    return st == EB_ERR_CANCELLED ? EB_EXIT_INTERRUPTED
           : st == EB_ERR_IO || st == EB_ERR_FORMAT || st == EB_ERR_INVALID_ARG ||
                   st == EB_ERR_UNSUPPORTED
               ? EB_EXIT_USAGE
               : EB_EXIT_NOTHING_RAN;
}

void eb_quantize_request_default(struct eb_quantize_request *r)
{
    memset(r, 0, sizeof(*r));
    r->images = Q_IMAGES_DEFAULT;
    r->method = EB_CALIB_PERCENTILE;
    r->percentile = 99.999;
    r->min_sqnr = Q_MIN_SQNR_DEFAULT;
    r->per_channel = 1;
}

enum eb_status eb_quantize(const struct eb_quantize_request *req, const struct eb_quantize_env *env,
                           struct eb_quantize_result *res, struct eb_diag *diag)
{
    const struct eb_quantize_request o = *req;
    struct q_state s;
    memset(&s, 0, sizeof(s));
    memset(res, 0, sizeof(*res));
    const uint64_t t0 = eb_clock_ns();
    size_t n_all = 0;
    enum eb_status st = eb_model_read_file(o.model, &s.bytes, &s.len, diag);
    if (st == EB_OK)
        st = eb_onnx_model_parse(s.bytes, s.len, o.model, NULL, &s.m, diag);
    if (st == EB_OK)
        st = eb_qdq_plan_build(s.m, o.keep_float, o.per_channel, o.conv_outputs, &s.plan, diag);
    if (st == EB_OK)
        st = draw_images(&o, &s.paths, &s.n_paths, &n_all, diag);
    struct q_run run = {.plan = &s.plan};
    struct eb_engine_io io = {0};
    struct q_pass_io pio = {.io = &io, .prof = &s.prof};
    if (st == EB_OK) {
        struct eb_engine_options eo;
        eb_engine_options_default(&eo);
        eo.passes = EB_ENGINE_PASS_CONST_FOLD | EB_ENGINE_PASS_DCE;
        eo.observe = observe;
        eo.observe_ctx = &run;
        eo.imgsz = (int)o.imgsz;
        eo.threads = (int)o.threads;
        st = eb_engine_load(s.bytes, s.len, o.model, &eo, &s.e, diag);
    }
    if (st == EB_OK) {
        eb_engine_io_info(s.e, &io);
        if (io.n_inputs != 1 || io.inputs[0].rank != 4 || io.inputs[0].dtype != EB_DTYPE_F32 ||
            (io.inputs[0].shape[1] != 3 && io.inputs[0].shape[1] != 1))
            st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                              "failed to quantise %s: calibration feeds one float image input "
                              "[1,3|1,H,W]; the model's first input is %s",
                              o.model, io.inputs[0].name);
    }
    if (st == EB_OK)
        st = resolve_profile(&o, &s, &io, diag);
    if (st == EB_OK) {
        s.stats = calloc(s.plan.n_acts + 1, sizeof(*s.stats));
        s.input =
            malloc((size_t)(io.inputs[0].shape[1] * io.inputs[0].shape[2] * io.inputs[0].shape[3]) *
                   sizeof(float));
        s.kept = calloc(s.n_paths + 1, sizeof(*s.kept));
        if (s.stats == NULL || s.input == NULL || s.kept == NULL)
            st = eb_diag_fail(diag, EB_ERR_NOMEM, "quantize: out of memory");
        for (size_t i = 0; s.stats != NULL && i < s.plan.n_acts; i++)
            eb_calib_stat_init(&s.stats[i]);
        run.stats = s.stats;
        pio.paths = s.paths;
        pio.n = s.n_paths;
        pio.input = s.input;
        pio.kept = s.kept;
    }
    if (st == EB_OK) {
        if (env->err != NULL)
            fprintf(env->err,
                    "quantize: calibrating %s on %zu of %zu images of %s (seed %lld), %s\n",
                    o.model, s.n_paths, n_all, o.calib, o.seed, k_methods[o.method]);
        run.pass = 1;
        st = calib_pass(s.e, &pio, &run, env, diag);
    }
    for (size_t i = 0; st == EB_OK && i < s.plan.n_acts; i++)
        if (!s.plan.acts[i].seen)
            st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                              "failed to quantise %s: tensor '%s' (read by a Conv) was not "
                              "computed in float during calibration",
                              o.model, s.plan.acts[i].name);
    if (st == EB_OK && o.method != EB_CALIB_MINMAX) {
        for (size_t i = 0; st == EB_OK && i < s.plan.n_acts; i++)
            if (eb_calib_hist_begin(&s.stats[i]) != 0)
                st = eb_diag_fail(diag, EB_ERR_NOMEM, "quantize: out of memory");
        run.pass = 2;
        if (st == EB_OK)
            st = calib_pass(s.e, &pio, &run, env, diag);
    }
    for (size_t i = 0; st == EB_OK && i < s.plan.n_acts; i++) {
        double lo = 0.0, hi = 0.0;
        eb_calib_range(&s.stats[i], o.method, o.percentile, &lo, &hi);
        eb_calib_u8_params(lo, hi, &s.plan.acts[i].scale, &s.plan.acts[i].zero_point);
    }
    if (st == EB_OK) {
        run.pass = 3;
        st = calib_pass(s.e, &pio, &run, env, diag);
    }
    if (st == EB_OK && run.failed)
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "quantize: out of memory");
    for (size_t i = 0; st == EB_OK && i < s.plan.n_acts; i++) {
        struct eb_qdq_act *a = &s.plan.acts[i];
        a->sqnr_db = eb_calib_sqnr_db(&s.stats[i]);
        a->min_channel_sqnr_db = eb_calib_min_channel_sqnr_db(&s.stats[i]);
        if (a->min_channel_sqnr_db < o.min_sqnr)
            eb_qdq_plan_drop(&s.plan, i);
    }
    char method[48], seed[24], weights[64], act[64];
    if (st == EB_OK)
        st = build_meta_lists(&s, diag);
    if (st == EB_OK) {
        if (o.method == EB_CALIB_PERCENTILE)
            snprintf(method, sizeof(method), "percentile %g", o.percentile);
        else
            snprintf(method, sizeof(method), "%s", k_methods[o.method]);
        snprintf(seed, sizeof(seed), "%lld", o.seed);
        snprintf(weights, sizeof(weights), "int8 symmetric per %s",
                 o.per_channel ? "output channel" : "tensor");
        snprintf(act, sizeof(act), "uint8 asymmetric per tensor, at Conv inputs%s",
                 o.conv_outputs ? " and outputs" : "");
        char tool[64];
        snprintf(tool, sizeof(tool), "edgebench %s", env->version);
        const struct eb_qdq_meta meta[] = {
            {"edgebench.quantize.tool", tool},
            {"edgebench.quantize.method", method},
            {"edgebench.quantize.weights", weights},
            {"edgebench.quantize.activations", act},
            {"edgebench.quantize.seed", seed},
            {"edgebench.quantize.calib_images", s.meta_images},
            {"edgebench.quantize.float_nodes", s.meta_float},
        };
        st = eb_qdq_write(s.bytes, s.len, &s.plan, meta, EB_ARRAY_LEN(meta), &s.qbytes, &s.qlen,
                          diag);
    }
    size_t n_int8 = 0;
    if (st == EB_OK && (st = check_written(&s, &o, &n_int8, diag)) != EB_OK)
        st = eb_diag_fail(diag, EB_ERR_BACKEND,
                          "quantize: the written model does not load in the native engine (%s); "
                          "nothing written, please report it",
                          diag->msg);
    if (st == EB_OK) {
        FILE *fp = fopen(o.out, "wb");
        if (fp == NULL)
            st = eb_diag_fail(diag, EB_ERR_IO,
                              "failed to write %s: cannot create it; check the "
                              "folder",
                              o.out);
        else if (fwrite(s.qbytes, 1, s.qlen, fp) != s.qlen)
            st = eb_file_close_after(fp, 1, o.out, diag);
        else
            st = eb_file_close(fp, o.out, diag);
    }
    res->n_int8 = s.plan.n_int8;
    res->n_float = s.plan.n_float;
    res->n_images = s.n_paths;
    res->write_failed = st == EB_ERR_IO && s.qbytes != NULL;
    if (st == EB_OK && env->out != NULL) {
        fprintf(env->out, "wrote %s (%.2f MiB) in %.1f s\n", o.out, (double)s.qlen / 1048576.0,
                (double)(eb_clock_ns() - t0) / 1e9);
        fprintf(env->out, "  calibration: %zu images of %s (seed %s), %s\n", s.n_paths, o.calib,
                seed, method);
        fprintf(env->out, "  weights: %s; activations: %s; opset %lld%s\n", weights, act,
                (long long)s.plan.opset_out, s.plan.opset_out != s.m->opset ? " (raised)" : "");
        fprintf(env->out,
                "  Conv: %zu int8 (%zu run on the native engine's integer kernels), %zu "
                "kept in float%s%s\n",
                s.plan.n_int8, n_int8, s.plan.n_float, s.plan.n_float ? ": " : "", s.meta_float);
        for (size_t i = 0; i < s.plan.n_acts; i++)
            if (s.plan.acts[i].dropped)
                fprintf(env->out,
                        "  left in float: %s (a channel at %.1f dB SQNR in uint8, below %g dB)\n",
                        s.plan.acts[i].name, s.plan.acts[i].min_channel_sqnr_db, o.min_sqnr);
    }
    q_fini(&s);
    return st;
}

int eb_quantize_main(int argc, char **argv, const struct eb_quantize_env *env)
{
    struct eb_quantize_request o;
    struct eb_quantize_result res;
    struct eb_diag diag = {0};
    int help = 0;
    eb_quantize_request_default(&o);
    int rc = parse_opts(argc, argv, &o, &help, env->err);
    if (rc != EB_EXIT_OK || help) {
        if (help)
            eb_quantize_print_help(env->out);
        return rc;
    }
    enum eb_status st = eb_quantize(&o, env, &res, &diag);
    if (st == EB_OK)
        return EB_EXIT_OK;
    fprintf(env->err, "edgebench: error: %s\n", diag.msg);
    /* a model that could not be written is not the user's input */
    return res.write_failed ? EB_EXIT_NOTHING_RAN : fail_code(st);
}
