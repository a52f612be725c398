/*
 * `edgebench val`: options, the pass over the dataset through one prepared slot, the class
 * mapping, the metrics table, val.json and detections.json.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/engine.h"
#include "eb/file.h"
#include "eb/json.h"
#include "eb/number.h"
#include "eval/coco_eval.h"
#include "eval/confusion.h"
#include "eval/dataset.h"
#include "harness/cmd/config.h"
#include "harness/cmd/run.h"
#include "harness/cmd/val.h"
#include "harness/pipeline/accuracy.h"
#include "harness/pipeline/advice.h"
#include "harness/pipeline/annotate.h"
#include "harness/pipeline/pipeline.h"
#include "harness/pipeline/slot.h"
#include "harness/pipeline/source.h"
#include "harness/report/report_val.h"
#include "model/model.h"

#define VAL_MAX_IMAGES 10000000
#define VAL_MAX_SAVE   10000
/* --max_det's ceiling: the slot's NMS keeps at most 300 per image (Ultralytics' max_det). */
#define VAL_MAX_DET 300
#define VAL_STR_(x) #x
#define VAL_STR(x)  VAL_STR_(x)

enum val_precision { VAL_FP32 = 0, VAL_FP16, VAL_INT8 };
static const char *const precision_names[] = {"fp32", "fp16", "int8"};

struct val_opts {
    const char *model, *data, *class_map, *out, *split;
    enum eb_dataset_format format;
    int64_t max_images;
    int64_t max_det;     /* detections per image in detections.json and the scoring */
    int64_t save_images; /* annotated images written */
    enum val_precision precision;
    char **run_argv; /* run's options passed through (malloc'd array of borrowed strings) */
    int run_argc;
};

/* Options of `run` that val passes to eb_config_parse (the rest of run's make no sense here). */
static const char *const passed[] = {
    "backend",    "device",    "imgsz",   "conf",    "iou",
    "threads",    "ort_lib",   "kernels", "qdq",     "gpu_mem_limit_gb",
    "preprocess", "decode",    "no_fold", "no_fuse", "no_dce",
    "no_layout",  "no_lanes",  "verbose", "quiet",   "model_profile",
    "head",       "trt_cache",
};

struct val_ctx {
    const struct eb_val_env *env;
    struct val_opts o;
    struct eb_config cfg;
    struct eb_log log;
    struct eb_accuracy *acc; /* the dataset, class map and detections (shared with run --data) */
    const struct eb_dataset *ds; /* acc->ds */
    struct eb_slot slot;
    int slot_ready;
    int interrupted;  /* a signal stopped the pass: the results cover the images scored */
    size_t n_dataset; /* images in the dataset before an interrupted pass cut it */
    size_t undecodable, size_mismatch, done;
    double wall_s;
    char dir[4096];
    char source_text[EB_SOURCE_PATH_MAX + 16];
    struct eb_coco_result res;
    struct eb_confusion cm;
};

static void val_log(void *ctx, enum eb_log_level level, const char *msg)
{
    FILE *fp = ctx;
    fprintf(fp, "edgebench: %s: %s\n",
            level >= EB_LOG_ERROR  ? "error"
            : level >= EB_LOG_WARN ? "warning"
                                   : "info",
            msg);
}

static int usage(FILE *err, const char *msg)
{
    fprintf(err, "edgebench: error: %s\n", msg);
    return EB_EXIT_USAGE;
}

void eb_val_print_help(FILE *fp)
{
    fprintf(
        fp,
        "usage: edgebench val --model PATH --data DIR [options]\n\n"
        "COCO detection metrics of a model on a dataset, with pycocotools' definitions\n"
        "(mAP50-95, mAP50, mAP75, AP small/medium/large, AR1/10/100, per class). Every image\n"
        "runs through the model as `edgebench run` runs a frame, at a low confidence threshold.\n"
        "Per class as `yolo val`: images, instances, precision and recall at the confidence of\n"
        "the best mean F1, mAP50, mAP50-95. Written: val.json (every metric, the PR curves and\n"
        "the confusion matrix), val.html (the table, PR curves, confusion matrix), val.md and\n"
        "detections.json (COCO results format).\n\n"
        "options:\n"
        "  --model PATH          ONNX model (required)\n"
        "  --data DIR            dataset folder (required): COCO (annotations/*.json), YOLO\n"
        "                        (images/<split>/, labels/<split>/) or Pascal VOC XML\n"
        "                        (annotations_voc/ or Annotations/ + images/ or JPEGImages/)\n"
        "  --format F            auto|coco|yolo|voc (default auto: that order of detection)\n"
        "  --split NAME          the split when there are several (default: val, val2017,\n"
        "                        valid, test, or the only one)\n"
        "  --class_map FILE      `model_class = dataset_class` lines (names or numbers, #\n"
        "                        comments); replaces matching class names (ignoring case)\n"
        "  --backend B           auto|native|ort (default auto, as run)\n"
        "  --device D            cpu|cuda|tensorrt (default cpu)\n"
        "  --precision P         fp32|fp16|int8, as run (fp16: native on cuda; int8: an int8\n"
        "                        model, QDQ ones on native's integer convolutions)\n"
        "  --imgsz N             input size for models with a dynamic input (default: the\n"
        "                        model's, 640 when dynamic)\n"
        "  --conf X              confidence threshold (default " EB_VAL_CONF_DEFAULT
        ", as customary for mAP)\n"
        "  --iou X               NMS IoU threshold (default 0.7)\n"
        "  --max_images N        only the first N images of the dataset (default 0: all)\n"
        "  --max_det N           at most N detections per image, all classes together, the\n"
        "                        best by score, in detections.json and the scoring (default\n"
        "                        100, the COCO rule; 1.." VAL_STR(
            VAL_MAX_DET) ")\n"
                         "  --save_images N       the first N images annotated with their "
                         "detections (class,\n"
                         "                        score; conf >= 0.25) as PNG files next to "
                         "val.json\n"
                         "                        (default 0)\n"
                         "  --out DIR             output folder (default "
                         "runs/<timestamp>.<mmm>-val)\n"
                         "  also: --threads, --ort_lib, --trt_cache, --kernels, --qdq, "
                         "--gpu_mem_limit_gb, --preprocess,\n"
                         "  --decode, --no_fold, --no_fuse, --no_dce, --no_layout, --no_lanes, "
                         "--verbose, --quiet "
                         "(as run)\n\n"
                         "exit codes: 0 metrics written; 1 the model could not be loaded or run; 2 "
                         "bad input\n"
                         "(options, model file, dataset, class map); 6 val.json or detections.json "
                         "could not\n"
                         "be written (the error names it; the other is kept); 130 interrupted (the "
                         "metrics of\n"
                         "the images that ran are written, marked interrupted).\n");
}

static int choice(const char *text, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(text, names[i]) == 0)
            return i;
    return -1;
}

/* Parses val's own options; the passed-through ones go to o->run_argv. */
static int parse_opts(int argc, char **argv, struct val_opts *o, int *help, FILE *err)
{
    static const char *const own[] = {"model",   "data",       "class_map",  "out",
                                      "split",   "format",     "max_images", "precision",
                                      "max_det", "save_images"};
    static const char *const formats[] = {"auto", "coco", "yolo", "voc"};
    char msg[EB_DIAG_MSG_MAX];
    *help = 0;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            *help = 1;
            return EB_EXIT_OK;
        }
    o->run_argv = malloc(((size_t)argc + 3) * sizeof(char *));
    if (o->run_argv == NULL)
        return usage(err, "out of memory");
    /* The low threshold first: a --conf given later overrides it. */
    o->run_argv[o->run_argc++] = "--conf";
    o->run_argv[o->run_argc++] = EB_VAL_CONF_DEFAULT;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(msg, sizeof(msg),
                     "unexpected argument '%.200s'; options start with -- (see edgebench val "
                     "--help)",
                     arg);
            return usage(err, msg);
        }
        size_t k = 0;
        while (k < EB_ARRAY_LEN(own) && !eb_config_match_option(arg, own[k], &value))
            k++;
        if (k < EB_ARRAY_LEN(own)) {
            if (value == NULL && i + 1 < argc)
                value = argv[++i];
            if (value == NULL || value[0] == '\0') {
                snprintf(msg, sizeof(msg), "--%s needs a value (see edgebench val --help)", own[k]);
                return usage(err, msg);
            }
            if (strcmp(own[k], "model") == 0) {
                o->model = value;
            } else if (strcmp(own[k], "data") == 0) {
                o->data = value;
            } else if (strcmp(own[k], "class_map") == 0) {
                o->class_map = value;
            } else if (strcmp(own[k], "out") == 0) {
                o->out = value;
            } else if (strcmp(own[k], "split") == 0) {
                o->split = value;
            } else if (strcmp(own[k], "format") == 0) {
                int f = choice(value, formats, 4);
                if (f < 0) {
                    snprintf(msg, sizeof(msg),
                             "--format: '%.100s' is not accepted (accepted: auto|coco|yolo|voc)",
                             value);
                    return usage(err, msg);
                }
                o->format = (enum eb_dataset_format)f;
            } else if (strcmp(own[k], "precision") == 0) {
                int p = choice(value, precision_names, 3);
                if (p < 0) {
                    snprintf(msg, sizeof(msg),
                             "--precision: '%.100s' is not accepted (accepted: fp32|fp16|int8)",
                             value);
                    return usage(err, msg);
                }
                o->precision = (enum val_precision)p;
            } else if (strcmp(own[k], "max_det") == 0) {
                long long v = 0;
                if (eb_number_parse_int(value, &v) != EB_NUMBER_OK || v < 1 || v > VAL_MAX_DET) {
                    snprintf(msg, sizeof(msg),
                             "--max_det: '%.100s' is not accepted (accepted: 1..%d; COCO: 100)",
                             value, VAL_MAX_DET);
                    return usage(err, msg);
                }
                o->max_det = v;
            } else if (strcmp(own[k], "save_images") == 0) {
                long long v = 0;
                if (eb_number_parse_int(value, &v) != EB_NUMBER_OK || v < 0 || v > VAL_MAX_SAVE) {
                    snprintf(msg, sizeof(msg),
                             "--save_images: '%.100s' is not accepted (accepted: 0..%d)", value,
                             VAL_MAX_SAVE);
                    return usage(err, msg);
                }
                o->save_images = v;
            } else {
                long long v = 0;
                if (eb_number_parse_int(value, &v) != EB_NUMBER_OK || v < 0 || v > VAL_MAX_IMAGES) {
                    snprintf(msg, sizeof(msg),
                             "--max_images: '%.100s' is not accepted (accepted: 0..%d; 0 = all)",
                             value, VAL_MAX_IMAGES);
                    return usage(err, msg);
                }
                o->max_images = v;
            }
            continue;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int pass = 0;
        for (size_t p = 0; p < EB_ARRAY_LEN(passed) && !pass; p++)
            pass = strlen(passed[p]) == len && strncmp(passed[p], name, len) == 0;
        if (!pass) {
            snprintf(msg, sizeof(msg), "unknown option --%.*s; see edgebench val --help",
                     (int)(len < 100 ? len : 100), name);
            return usage(err, msg);
        }
        o->run_argv[o->run_argc++] = argv[i];
        if (eq == NULL && i + 1 < argc && eb_config_option_takes_value(name, len))
            o->run_argv[o->run_argc++] = argv[++i];
    }
    o->run_argv[o->run_argc] = NULL;
    if (o->model == NULL)
        return usage(err, "edgebench val needs --model PATH (an ONNX model); see edgebench val "
                          "--help");
    if (o->data == NULL)
        return usage(err, "edgebench val needs --data DIR (a COCO, YOLO or VOC dataset folder); "
                          "see edgebench val --help");
    return EB_EXIT_OK;
}

static int is_regular_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The progress line while the images run (the pipeline's tick). */
static void val_tick(void *ctx, uint64_t started_ns)
{
    const struct val_ctx *vc = ctx;
    (void)started_ns;
    fprintf(vc->env->err, "\rval: %zu/%zu images",
            atomic_load_explicit(&vc->slot.n_done, memory_order_acquire), vc->ds->n_images);
}

/* Runs every image once through the measurement core (harness/pipeline/pipeline.h), as `run --data
 * --no_loop` does: the dataset's images in its order, no warm-up, each image's detections into
 * the accuracy. EB_ERR_CANCELLED when stopped. */
static enum eb_status run_images(struct val_ctx *vc, struct eb_diag *diag)
{
    const int progress = !vc->cfg.quiet && isatty(fileno(vc->env->err));
    const struct eb_pipeline_hooks hooks = {.tick = val_tick, .ctx = vc};
    struct eb_slot *s = &vc->slot;
    eb_pipeline_run(&s, 1, vc->env->stop, progress ? &hooks : NULL);
    if (progress)
        fprintf(vc->env->err, "\r%40s\r", "");
    vc->done = s->n_counted + s->n_left_out;
    vc->undecodable = (size_t)(eb_source_skipped(s->src) + (int64_t)s->skipped_looped);
    vc->size_mismatch = (size_t)s->size_mismatch;
    vc->wall_s = (double)(s->phase_end_ns - s->phase_start_ns) / 1e9;
    if (atomic_load_explicit(vc->env->stop, memory_order_relaxed))
        return EB_ERR_CANCELLED;
    if (s->status == EB_SLOT_FAILED) {
        eb_advice_append(&s->diag);
        return eb_diag_fail(diag, s->diag.status, "model %s: %s", vc->o.model, s->diag.msg);
    }
    return EB_OK;
}

/* Non-crowd boxes of a category. */
static size_t gt_of(const struct eb_dataset *ds, int64_t cat)
{
    size_t n = 0;
    for (size_t i = 0; i < ds->n_anns; i++)
        n += ds->anns[i].category_id == cat && !ds->anns[i].iscrowd;
    return n;
}

static int evaluated(const struct val_ctx *vc, int64_t cat)
{
    return bsearch(&cat, vc->acc->cats, vc->acc->n_cats, sizeof(*vc->acc->cats), cmp_i64) != NULL;
}

static void fmt_metric(char *buf, size_t size, double v)
{
    if (v < 0)
        snprintf(buf, size, "%8s", "-");
    else
        snprintf(buf, size, "%8.4f", v);
}

static void print_table(const struct val_ctx *vc, const struct eb_val_page *page, FILE *fp)
{
    const struct eb_coco_result *r = &vc->res;
    const struct eb_slot *s = &vc->slot;
    size_t gt = r->n_gt;
    fprintf(fp, "edgebench val: %s on %s\n", vc->o.model, vc->o.data);
    if (vc->interrupted)
        fprintf(fp,
                "  INTERRUPTED: the figures cover the first %zu of the dataset's %zu images, "
                "not the dataset\n",
                vc->ds->n_images, vc->n_dataset);
    fprintf(fp, "  data     %s: %s; %zu images, %zu boxes, %zu crowd regions\n",
            eb_dataset_format_name(vc->ds->format), vc->ds->source, vc->n_dataset, gt, r->n_crowd);
    if (vc->ds->note[0] != '\0')
        fprintf(fp, "  note     %s\n", vc->ds->note);
    fprintf(
        fp, "  model    backend %s (%s), %s model computed in %s, input %dx%d, %d classes, %s\n",
        s->setup.backend ? s->setup.backend->name : "?", s->backend_reason,
        eb_slot_model_precision(s), eb_slot_compute_precision(s), s->in_w, s->in_h, s->num_classes,
        vc->acc->names_assumed ? "no names in the model: the 80 COCO names assumed"
                               : "class names from the model");
    fprintf(fp,
            "  classes  %zu of %zu model classes mapped %s; %llu detections of unmapped "
            "classes dropped\n",
            vc->acc->map.n_mapped, vc->acc->map.n_classes,
            vc->acc->map.from_file ? "by the class map" : "by name",
            (unsigned long long)vc->acc->dropped);
    for (size_t c = 0; c < vc->ds->n_cats; c++) {
        const struct eb_dataset_category *cat = &vc->ds->cats[c];
        size_t n = evaluated(vc, cat->id) ? 0 : gt_of(vc->ds, cat->id);
        if (n > 0)
            fprintf(fp,
                    "  skipped  dataset class %s (%zu boxes): no model class maps to it, "
                    "not evaluated\n",
                    cat->name, n);
    }
    fprintf(fp,
            "  settings conf %g (low, as customary for mAP), NMS IoU %g keeping at most %d per "
            "image; scored and written: the best %lld per image, all classes (COCO: 100)\n",
            vc->cfg.conf, vc->cfg.iou, vc->slot.params.max_det, (long long)vc->o.max_det);
    if (vc->acc->over_max_det > 0)
        fprintf(fp, "  max_det  %llu detections past the best %lld of their image left out\n",
                (unsigned long long)vc->acc->over_max_det, (long long)vc->o.max_det);
    if (vc->undecodable > 0)
        fprintf(fp, "  warning  %zu images could not be decoded; their objects count as missed\n",
                vc->undecodable);
    fprintf(fp, "  time     %zu images in %.1f s (%.1f ms per image, decode to NMS)\n\n", vc->done,
            vc->wall_s, vc->done ? vc->wall_s * 1e3 / (double)vc->done : 0.0);
    /* two columns: the AP figures and the AR figures, row by row */
    char a[16], b[16];
    const struct {
        const char *ap_label, *ar_label;
        double ap, ar;
    } rows[] = {
        {"mAP50-95 ", "AR1      ", r->map, r->ar1},
        {"mAP50    ", "AR10     ", r->map50, r->ar10},
        {"mAP75    ", "AR100    ", r->map75, r->ar100},
        {"AP small ", "AR small ", r->map_small, r->ar_small},
        {"AP medium", "AR medium", r->map_medium, r->ar_medium},
        {"AP large ", "AR large ", r->map_large, r->ar_large},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        fmt_metric(a, sizeof(a), rows[i].ap);
        fmt_metric(b, sizeof(b), rows[i].ar);
        fprintf(fp, "  %s  %s      %s  %s\n", rows[i].ap_label, a, rows[i].ar_label, b);
    }
    fputc('\n', fp);
    fprintf(fp, "  P and R at confidence %.3f (the best mean F1 over the classes, as yolo val)\n",
            r->best_conf);
    eb_report_val_table(fp, page, EB_VAL_TABLE_TEXT);
    if (r->n_classes_with_gt < r->n_classes)
        fprintf(fp,
                "  (%zu mapped classes have no boxes in the dataset: AP -1, left out of the "
                "means)\n",
                r->n_classes - r->n_classes_with_gt);
}

static enum eb_status write_val_json(const struct val_ctx *vc, const char *path,
                                     struct eb_diag *diag)
{
    FILE *fp = fopen(path, "w");
    if (fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s; choose another --out", path,
                            strerror(errno));
    const struct eb_slot *s = &vc->slot;
    struct eb_json_writer w;
    eb_json_writer_init_file(&w, fp, 1);
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "schema", "edgebench.val/1");
    eb_json_kstr(&w, "version", vc->env->version);
    eb_json_kstr(&w, "command_line", vc->env->command_line);
    eb_json_kbool(&w, "interrupted", vc->interrupted);
    eb_json_key(&w, "model");
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "path", vc->o.model);
    eb_json_kstr(&w, "backend", s->setup.backend ? s->setup.backend->name : NULL);
    eb_json_kstr(&w, "backend_reason", s->backend_reason);
    eb_json_kstr(&w, "backend_version", s->probe.version);
    eb_json_kstr(&w, "device", eb_device_name(s->setup.backend_cfg.device));
    eb_json_kstr(&w, "provider", s->info.provider);
    eb_json_kstr(&w, "engine_cache", s->info.engine_cache[0] ? s->info.engine_cache : NULL);
    eb_json_kstr(&w, "precision", precision_names[vc->o.precision]);
    eb_json_kstr(&w, "model_precision", eb_slot_model_precision(s));
    eb_json_kstr(&w, "compute_precision", eb_slot_compute_precision(s));
    eb_json_kstr(&w, "qdq_path", eb_slot_qdq_path(s));
    eb_json_kstr(&w, "int8_nodes", s->info.int8_nodes[0] ? s->info.int8_nodes : NULL);
    eb_json_kint(&w, "input_width", s->in_w);
    eb_json_kint(&w, "input_height", s->in_h);
    eb_json_kstr(&w, "layout", eb_head_name(s->head.kind));
    eb_json_kstr(&w, "model_profile", s->profile.family);
    eb_json_kstr(&w, "model_profile_why", s->profile.why);
    eb_json_kint(&w, "num_classes", s->num_classes);
    eb_json_kbool(&w, "class_names_assumed_coco", vc->acc->names_assumed);
    eb_json_obj_end(&w);
    eb_json_key(&w, "settings");
    eb_json_obj_begin(&w);
    eb_json_knum(&w, "conf", vc->cfg.conf);
    eb_json_knum(&w, "iou", vc->cfg.iou);
    eb_json_kint(&w, "max_det", vc->o.max_det);
    eb_json_kint(&w, "nms_max_det", vc->slot.params.max_det);
    eb_json_kint(&w, "detections_over_max_det", (int64_t)vc->acc->over_max_det);
    eb_json_kint(&w, "imgsz", vc->cfg.imgsz);
    eb_json_kint(&w, "max_images", vc->o.max_images);
    eb_json_kstr(&w, "metric",
                 "pycocotools COCOeval bbox (IoU .50:.05:.95, 101-point "
                 "interpolation, maxDets 1/10/100, COCO area ranges)");
    eb_json_obj_end(&w);
    eb_json_key(&w, "dataset");
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "dir", vc->o.data);
    eb_json_kstr(&w, "format", eb_dataset_format_name(vc->ds->format));
    eb_json_kstr(&w, "source", vc->ds->source);
    eb_json_kstr(&w, "note", vc->ds->note[0] ? vc->ds->note : NULL);
    eb_json_kint(&w, "images", (int64_t)vc->n_dataset);
    eb_json_kint(&w, "images_scored", (int64_t)vc->ds->n_images);
    eb_json_kint(&w, "images_missing", (int64_t)vc->ds->images_missing);
    eb_json_kint(&w, "images_undecodable", (int64_t)vc->undecodable);
    eb_json_kint(&w, "images_size_mismatch", (int64_t)vc->size_mismatch);
    eb_json_kint(&w, "annotations", (int64_t)vc->ds->n_anns);
    eb_json_kint(&w, "categories", (int64_t)vc->ds->n_cats);
    eb_json_obj_end(&w);
    eb_json_key(&w, "class_map");
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "mode", vc->acc->map.from_file ? "file" : "by_name");
    eb_json_kstr(&w, "file", vc->o.class_map);
    eb_json_kint(&w, "model_classes", (int64_t)vc->acc->map.n_classes);
    eb_json_kint(&w, "mapped", (int64_t)vc->acc->map.n_mapped);
    eb_json_kint(&w, "unmapped", (int64_t)(vc->acc->map.n_classes - vc->acc->map.n_mapped));
    eb_json_kint(&w, "detections_dropped", (int64_t)vc->acc->dropped);
    eb_json_key(&w, "pairs");
    eb_json_arr_begin(&w);
    for (size_t c = 0; c < vc->acc->map.n_classes; c++) {
        if (vc->acc->map.category[c] == EB_CLASSMAP_NONE)
            continue;
        const struct eb_dataset_category *cat =
            eb_dataset_category_find(vc->ds, vc->acc->map.category[c]);
        eb_json_obj_begin(&w);
        eb_json_kint(&w, "class", (int64_t)c);
        eb_json_kstr(&w, "name", vc->acc->model_names[c]);
        eb_json_kint(&w, "category_id", vc->acc->map.category[c]);
        eb_json_kstr(&w, "category", cat ? cat->name : NULL);
        eb_json_obj_end(&w);
    }
    eb_json_arr_end(&w);
    eb_json_key(&w, "categories_not_evaluated");
    eb_json_arr_begin(&w);
    for (size_t c = 0; c < vc->ds->n_cats; c++) {
        if (evaluated(vc, vc->ds->cats[c].id))
            continue;
        eb_json_obj_begin(&w);
        eb_json_kint(&w, "category_id", vc->ds->cats[c].id);
        eb_json_kstr(&w, "name", vc->ds->cats[c].name);
        eb_json_kint(&w, "gt", (int64_t)gt_of(vc->ds, vc->ds->cats[c].id));
        eb_json_obj_end(&w);
    }
    eb_json_arr_end(&w);
    eb_json_obj_end(&w);
    eb_json_key(&w, "timing");
    eb_json_obj_begin(&w);
    eb_json_kint(&w, "images", (int64_t)vc->done);
    eb_json_knum(&w, "wall_s", vc->wall_s);
    eb_json_knum(&w, "ms_per_image", vc->done ? vc->wall_s * 1e3 / (double)vc->done : 0.0);
    eb_json_obj_end(&w);
    eb_json_key(&w, "metrics");
    eb_coco_result_write_json(&vc->res, &w);
    eb_json_key(&w, "confusion_matrix");
    eb_confusion_write_json(&vc->cm, vc->ds, &w);
    eb_json_kstr(&w, "detections_file", "detections.json");
    eb_json_kstr(&w, "html_file", "val.html");
    eb_json_obj_end(&w);
    fputc('\n', fp); /* a failed write sets the stream's error flag, which eb_file_close reads */
    return eb_file_close(fp, path, diag);
}

/* What val.html, val.md and the printed table show (harness/report/report_val.h). */
struct val_page {
    struct eb_val_page page;
    struct eb_val_row *rows;
    const char **cm_names;
    const char *facts[12];
    char model_fact[160], data_fact[160], settings_fact[200];
};

static void page_fini(struct val_page *pg)
{
    free(pg->rows);
    free(pg->cm_names);
}

/* The rows (all, then each class with boxes) and the matrix's names; borrows from vc. */
static enum eb_status page_build(const struct val_ctx *vc, struct val_page *pg,
                                 struct eb_diag *diag)
{
    const struct eb_coco_result *r = &vc->res;
    const struct eb_slot *s = &vc->slot;
    pg->rows = calloc(r->n_classes + 1, sizeof(*pg->rows));
    pg->cm_names = calloc(vc->cm.n + 1, sizeof(*pg->cm_names));
    if (pg->rows == NULL || pg->cm_names == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the val pages");
    pg->rows[0] = (struct eb_val_row){.name = "all",
                                      .images = r->n_images,
                                      .instances = r->n_gt,
                                      .p = r->mp,
                                      .r = r->mr,
                                      .map50 = r->map50,
                                      .map = r->map,
                                      .pr50 = r->n_classes_with_gt ? r->pr50 : NULL};
    size_t n = 1;
    for (size_t i = 0; i < r->n_classes; i++) {
        const struct eb_coco_class_result *c = &r->classes[i];
        if (c->ap < 0)
            continue;
        pg->rows[n++] = (struct eb_val_row){.name = c->name,
                                            .images = c->images,
                                            .instances = c->gt,
                                            .p = c->p,
                                            .r = c->r,
                                            .map50 = c->ap50,
                                            .map = c->ap,
                                            .pr50 = c->pr50};
    }
    for (size_t i = 0; i < vc->cm.n; i++) {
        const struct eb_dataset_category *cat = eb_dataset_category_find(vc->ds, vc->cm.cats[i]);
        pg->cm_names[i] = cat ? cat->name : "?";
    }
    snprintf(pg->model_fact, sizeof(pg->model_fact), "%s, %dx%d, backend %s", vc->o.model, s->in_w,
             s->in_h, s->setup.backend ? s->setup.backend->name : "?");
    snprintf(pg->data_fact, sizeof(pg->data_fact), "%s (%s), %zu images, %zu boxes", vc->o.data,
             eb_dataset_format_name(vc->ds->format), vc->ds->n_images, r->n_gt);
    snprintf(pg->settings_fact, sizeof(pg->settings_fact),
             "conf %g, NMS IoU %g, the best %lld detections per image (all classes)", vc->cfg.conf,
             vc->cfg.iou, (long long)vc->o.max_det);
    const char *facts[] = {"model",       pg->model_fact, "dataset",
                           pg->data_fact, "settings",     pg->settings_fact};
    memcpy(pg->facts, facts, sizeof(facts));
    pg->page = (struct eb_val_page){.version = vc->env->version,
                                    .model = vc->o.model,
                                    .data = vc->o.data,
                                    .facts = pg->facts,
                                    .n_facts = EB_ARRAY_LEN(facts) / 2,
                                    .interrupted = vc->interrupted,
                                    .rows = pg->rows,
                                    .n_rows = n,
                                    .best_conf = r->best_conf,
                                    .cm = vc->cm.m,
                                    .cm_names = pg->cm_names,
                                    .n_cm = vc->cm.n,
                                    .cm_conf = vc->cm.conf,
                                    .cm_iou = vc->cm.iou};
    return EB_OK;
}

static void val_fini(struct val_ctx *vc)
{
    if (vc->slot_ready)
        eb_slot_fini(&vc->slot);
    eb_accuracy_destroy(vc->acc);
    eb_coco_result_fini(&vc->res);
    eb_confusion_fini(&vc->cm);
    free(vc->o.run_argv);
}

/* Loads the dataset and the model; EB_EXIT_* on failure (the message printed). */
static int prepare(struct val_ctx *vc)
{
    FILE *err = vc->env->err;
    struct eb_diag diag = {0};
    if (!is_regular_file(vc->o.model)) {
        char msg[EB_DIAG_MSG_MAX];
        snprintf(msg, sizeof(msg), "--model %.300s: no such file; give the path of an ONNX model",
                 vc->o.model);
        return usage(err, msg);
    }
    if (vc->o.class_map != NULL && !is_regular_file(vc->o.class_map)) {
        char msg[EB_DIAG_MSG_MAX];
        snprintf(msg, sizeof(msg),
                 "--class_map %.300s: no such file; give a file of `model_class = "
                 "dataset_class` lines",
                 vc->o.class_map);
        return usage(err, msg);
    }
    size_t n_coco = 0;
    const char *const *coco = eb_model_coco_names(&n_coco);
    struct eb_dataset_options dopt = {.format = vc->o.format,
                                      .split = vc->o.split,
                                      .default_names = coco,
                                      .n_default_names = n_coco};
    struct eb_dataset *ds = NULL;
    if (eb_dataset_load(vc->o.data, &dopt, &ds, &diag) != EB_OK)
        return usage(err, diag.msg);
    if (vc->o.max_images > 0)
        eb_dataset_keep_first(ds, (size_t)vc->o.max_images);
    if (eb_accuracy_create_from(ds, vc->o.data, vc->o.class_map, &vc->acc, &diag) != EB_OK)
        return usage(err, diag.msg);
    vc->ds = vc->acc->ds;
    vc->acc->max_det = (int)vc->o.max_det;

    struct eb_slot_setup su;
    memset(&su, 0, sizeof(su));
    eb_run_model_setup(&vc->cfg, &vc->log, &su);
    /* The dataset's images, in its order, once (the core's --data --no_loop). */
    snprintf(vc->source_text, sizeof(vc->source_text), "image_dir=%s", vc->acc->data_dir);
    su.model_path = vc->o.model;
    su.model_label = vc->o.model;
    su.source_text = vc->source_text;
    su.synth_style = EB_SYNTH_RGB;
    su.files = vc->acc->files;
    su.n_files = vc->ds->n_images;
    su.accuracy = vc->acc;
    su.loop = 0;
    su.warmup = 0;
    su.drift_frames = 0; /* val measures accuracy itself */
    su.log = &vc->log;
    su.stop = vc->env->stop;
    su.save_images = vc->o.save_images;
    su.save_dir = vc->dir; /* made before the pass */
    su.save_prefix = "image";
    su.save_min_score = fmax(vc->cfg.conf, EB_ANNOTATE_MIN_SCORE_LOW_CONF);
    eb_slot_init(&vc->slot, 0, &su);
    vc->slot_ready = 1;
    if (eb_slot_prepare(&vc->slot) != EB_OK) {
        fprintf(err, "edgebench: error: model %s: %s\n", vc->o.model, vc->slot.diag.msg);
        return EB_EXIT_NOTHING_RAN;
    }
    const struct eb_slot *s = &vc->slot;
    if (eb_accuracy_bind(vc->acc, s->info.class_names, s->info.n_class_names, s->num_classes,
                         &diag) != EB_OK)
        return usage(err, diag.msg);
    return EB_EXIT_OK;
}

int eb_val_main(int argc, char **argv, const struct eb_val_env *env)
{
    struct val_page pg;
    memset(&pg, 0, sizeof(pg));
    struct val_ctx *vc = calloc(1, sizeof(*vc));
    if (vc == NULL)
        return usage(env->err, "out of memory");
    vc->env = env;
    vc->o.max_det = EB_COCO_MAX_DETS;
    vc->log = (struct eb_log){.fn = val_log, .ctx = env->err, .level = EB_LOG_WARN};
    int help = 0;
    int code = parse_opts(argc, argv, &vc->o, &help, env->err);
    if (code == EB_EXIT_OK && help) {
        eb_val_print_help(env->out);
        goto done;
    }
    if (code != EB_EXIT_OK)
        goto done;
    struct eb_diag diag = {0};
    int run_help = 0;
    eb_config_defaults(&vc->cfg);
    if (eb_config_parse(vc->o.run_argc, vc->o.run_argv, &vc->cfg, &run_help, &vc->log, &diag) !=
        EB_OK) {
        code = usage(env->err, diag.msg);
        goto done;
    }
    if (vc->cfg.verbose)
        vc->log.level = EB_LOG_DEBUG;
    vc->cfg.precision = (int)vc->o.precision; /* enum eb_config_precision's order */
    if ((code = prepare(vc)) != EB_EXIT_OK)
        goto done;
    /* The output folder before the long pass, so that a bad --out fails at once. */
    enum eb_status st = vc->o.out != NULL ? eb_run_mkdir_p(vc->o.out, "--out", &diag)
                                          : eb_run_make_dir("runs", "val", "--out", vc->dir,
                                                            sizeof(vc->dir), &diag);
    if (st == EB_OK && vc->o.out != NULL)
        snprintf(vc->dir, sizeof(vc->dir), "%s", vc->o.out);
    if (st != EB_OK) {
        code = usage(env->err, diag.msg);
        goto done;
    }
    vc->n_dataset = vc->ds->n_images;
    st = run_images(vc, &diag);
    if (st == EB_ERR_CANCELLED) {
        /* The pass starts at the first image, so the scored images are a prefix: score it. */
        const size_t n = vc->acc->last_scored;
        fprintf(env->err, "\nedgebench: interrupted after %zu of %zu images; %s\n", n,
                vc->n_dataset,
                n > 0 ? "the results cover those" : "nothing was scored, nothing written");
        if (n == 0) {
            if (vc->o.out == NULL)
                rmdir(vc->dir); /* the empty folder made for this run */
            code = EB_EXIT_INTERRUPTED;
            goto done;
        }
        eb_dataset_keep_first(vc->acc->ds, n);
        vc->interrupted = 1;
        st = EB_OK;
    }
    if (st == EB_OK)
        st = eb_coco_evaluate(vc->ds, vc->acc->dets, vc->acc->n_dets, vc->acc->cats,
                              vc->acc->n_cats, &vc->res, &diag);
    if (st == EB_OK)
        st = eb_confusion_compute(vc->ds, vc->acc->dets, vc->acc->n_dets, vc->acc->cats,
                                  vc->acc->n_cats, EB_CONFUSION_CONF, EB_CONFUSION_IOU, &vc->cm,
                                  &diag);
    if (st == EB_OK)
        st = page_build(vc, &pg, &diag);
    if (st != EB_OK) {
        fprintf(env->err, "edgebench: error: %s\n", diag.msg);
        code = EB_EXIT_NOTHING_RAN;
        goto done;
    }
    /* Each file is written whatever happened to the other; a failure is one line and exit 6. */
    char path[4200];
    struct eb_diag dd = {0}, vd = {0};
    snprintf(path, sizeof(path), "%s/detections.json", vc->dir);
    const int dets_ok =
        eb_coco_write_detections(path, vc->ds, vc->acc->dets, vc->acc->n_dets, &dd) == EB_OK;
    snprintf(path, sizeof(path), "%s/val.json", vc->dir);
    const int val_ok = write_val_json(vc, path, &vd) == EB_OK;
    struct eb_diag hd = {0};
    const int html_ok = eb_report_val_write(vc->dir, &pg.page, &hd) == EB_OK;
    if (!dets_ok)
        fprintf(env->err, "edgebench: error: %s\n", dd.msg);
    if (!val_ok)
        fprintf(env->err, "edgebench: error: %s\n", vd.msg);
    if (!html_ok)
        fprintf(env->err, "edgebench: error: %s\n", hd.msg);
    print_table(vc, &pg.page, env->out);
    if (val_ok)
        fprintf(env->out, "\nval: %s/val.json\n", vc->dir);
    if (html_ok)
        fprintf(env->out, "val: %s/val.html\n", vc->dir);
    code = !(dets_ok && val_ok && html_ok) ? EB_EXIT_WRITE_FAILED
           : vc->interrupted               ? EB_EXIT_INTERRUPTED
                                           : EB_EXIT_OK;
done:
    page_fini(&pg);
    val_fini(vc);
    free(vc);
    return code;
}
