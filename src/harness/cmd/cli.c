/*
 * `edgebench run` option parsing, driven by cli_opts.def: the same rows give parsing, range
 * checks, --help and the config echo in report.json.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eb/backend.h"
#include "eb/engine.h"
#include "eb/number.h"
#include "harness/cmd/config.h"
#include "harness/pipeline/source.h"
#include "harness/results/history.h"
#include "harness/results/validity.h"

/* OPT_GB: a number of GB (10^9 bytes) on the command line, uint64_t bytes in the config.
 * OPT_DBL0: a double that is 0 (off) or within min..max. */
enum opt_type { OPT_STR, OPT_ENUM, OPT_INT, OPT_DBL, OPT_DBL0, OPT_FLAG, OPT_GB };

struct opt_def {
    const char *name;
    enum opt_type type;
    size_t offset;
    const char *def; /* default as text; NULL = none */
    double min, max;
    const char *choices;
    const char *help;
};

static const struct opt_def opts[] = {
#define EB_OPT(name_, type_, field_, def_, min_, max_, choices_, help_)                            \
    {.name = #name_,                                                                               \
     .type = OPT_##type_,                                                                          \
     .offset = offsetof(struct eb_config, field_),                                                 \
     .def = def_,                                                                                  \
     .min = min_,                                                                                  \
     .max = max_,                                                                                  \
     .choices = choices_,                                                                          \
     .help = help_},
#include "harness/cmd/cli_opts.def"
#undef EB_OPT
};

/* Index of `value` in a "|"-separated list, or -1. */
static int choice_index(const char *choices, const char *value)
{
    int idx = 0;
    const char *p = choices;
    size_t vn = strlen(value);
    while (*p) {
        size_t n = strcspn(p, "|");
        if (n == vn && strncmp(p, value, n) == 0)
            return idx;
        p += n;
        if (*p == '|')
            p++;
        idx++;
    }
    return -1;
}

/* The n-th entry of a "|"-separated list into buf. */
static void choice_name(const char *choices, int n, char *buf, size_t size)
{
    const char *p = choices;
    for (int i = 0; i < n && *p; i++) {
        p += strcspn(p, "|");
        if (*p == '|')
            p++;
    }
    size_t len = strcspn(p, "|");
    if (len >= size)
        len = size - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
}

static void range_text(const struct opt_def *o, char *buf, size_t size)
{
    if (o->type == OPT_GB)
        snprintf(buf, size, "%g <= G <= %g; larger values are clamped to %g", o->min, o->max,
                 o->max);
    else if (strcmp(o->name, "imgsz") == 0)
        snprintf(buf, size, "0 or a multiple of 32 in 32..%g", o->max);
    else if (strcmp(o->name, "warmup") == 0)
        snprintf(buf, size, "%.15g..%.15g or auto", o->min, o->max);
    else if (strcmp(o->name, "db") == 0)
        snprintf(buf, size, "a file path, a PostgreSQL connection string or none");
    else if (o->type == OPT_ENUM)
        snprintf(buf, size, "%s", o->choices);
    else if (o->type == OPT_INT || o->type == OPT_DBL)
        snprintf(buf, size, "%.15g..%.15g", o->min, o->max);
    else if (o->type == OPT_DBL0)
        snprintf(buf, size, "0 or %.15g..%.15g", o->min, o->max);
    else
        buf[0] = '\0';
}

/* The value as the user typed it, so that 1.0000001 is not shown as 1. */
static enum eb_status out_of_range(const struct opt_def *o, const char *text, const char *range,
                                   struct eb_diag *diag)
{
    return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "--%s: %s is out of range (accepted: %s)",
                        o->name, text, range);
}

/* A decimal number, the whole of `text` (eb_number_parse_real's grammar: no hex, inf or nan). */
static enum eb_status parse_number(const struct opt_def *o, const char *text, const char *range,
                                   double *v_out, struct eb_diag *diag)
{
    switch (eb_number_parse_real(text, v_out)) {
    case EB_NUMBER_OK: return EB_OK;
    case EB_NUMBER_RANGE: return out_of_range(o, text, range, diag);
    case EB_NUMBER_SYNTAX: break;
    }
    return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "--%s: '%s' is not a number (accepted: %s)",
                        o->name, text, range);
}

/* Sets one option from its text. */
static enum eb_status set_opt(const struct opt_def *o, const char *text, struct eb_config *cfg,
                              const struct eb_log *log, struct eb_diag *diag)
{
    char *base = (char *)cfg + o->offset;
    char range[128];
    range_text(o, range, sizeof(range));
    switch (o->type) {
    case OPT_STR:
        if (text[0] == '\0')
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "--%s: empty value; give a value",
                                o->name);
        memcpy(base, &text, sizeof(text));
        return EB_OK;
    case OPT_FLAG: {
        int v = 1;
        memcpy(base, &v, sizeof(v));
        return EB_OK;
    }
    case OPT_ENUM: {
        int idx = choice_index(o->choices, text);
        if (idx < 0)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--%s: '%s' is not accepted (accepted: %s)", o->name, text,
                                o->choices);
        memcpy(base, &idx, sizeof(idx));
        return EB_OK;
    }
    case OPT_INT: {
        if (strcmp(o->name, "warmup") == 0 && strcmp(text, "auto") == 0) {
            int64_t v64 = EB_WARMUP_AUTO;
            memcpy(base, &v64, sizeof(v64));
            return EB_OK;
        }
        long long v = 0;
        const enum eb_number num = eb_number_parse_int(text, &v);
        if (num == EB_NUMBER_SYNTAX)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--%s: '%s' is not an integer (accepted: %s)", o->name, text,
                                range);
        if (num == EB_NUMBER_RANGE || (double)v < o->min || (double)v > o->max)
            return out_of_range(o, text, range, diag);
        if (strcmp(o->name, "imgsz") == 0 && v != 0 && (v < 32 || v % 32 != 0))
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--imgsz: %lld is not accepted (accepted: %s)", v, range);
        int64_t v64 = v;
        memcpy(base, &v64, sizeof(v64));
        return EB_OK;
    }
    case OPT_DBL:
    case OPT_DBL0: {
        double v = 0;
        enum eb_status st = parse_number(o, text, range, &v, diag);
        if (st != EB_OK)
            return st;
        if ((v < o->min || v > o->max) && !(o->type == OPT_DBL0 && v == 0))
            return out_of_range(o, text, range, diag);
        memcpy(base, &v, sizeof(v));
        return EB_OK;
    }
    case OPT_GB: {
        /* Converted to bytes here, once; everything after this reads bytes. */
        double v = 0;
        enum eb_status st = parse_number(o, text, range, &v, diag);
        if (st != EB_OK)
            return st;
        /* Below min the limit could not be honoured: a slot's engine, buffers and the process
         * itself need more, and the reports print GB to 3 decimals. */
        if (v < o->min)
            return out_of_range(o, text, range, diag);
        if (v > o->max) {
            eb_log_msg(log, EB_LOG_WARN, "--%s %g exceeds the maximum %.1f; clamped to %.1f",
                       o->name, v, o->max, o->max);
            v = o->max;
        }
        const uint64_t bytes = (uint64_t)llround(v * 1e9);
        memcpy(base, &bytes, sizeof(bytes));
        return EB_OK;
    }
    }
    return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "--%s: unknown option type", o->name);
}

void eb_config_defaults(struct eb_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < EB_ARRAY_LEN(opts); i++) {
        if (opts[i].def == NULL)
            continue;
        enum eb_status st = set_opt(&opts[i], opts[i].def, cfg, NULL, NULL);
        EB_ASSERT(st == EB_OK);
    }
    /* FLAG defaults are "0": set_opt would set them to 1, so clear flags explicitly. */
    for (size_t i = 0; i < EB_ARRAY_LEN(opts); i++) {
        if (opts[i].type == OPT_FLAG) {
            int zero = 0;
            memcpy((char *)cfg + opts[i].offset, &zero, sizeof(zero));
        }
    }
}

static const struct opt_def *find_opt(const char *name, size_t len)
{
    for (size_t i = 0; i < EB_ARRAY_LEN(opts); i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return &opts[i];
    return NULL;
}

int eb_config_match_option(const char *arg, const char *name, const char **value_out)
{
    const size_t n = strlen(name);
    if (strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, name, n) != 0)
        return 0;
    if (arg[2 + n] == '\0') {
        *value_out = NULL;
        return 1;
    }
    if (arg[2 + n] == '=') {
        *value_out = arg + 3 + n;
        return 1;
    }
    return 0;
}

int eb_config_option_takes_value(const char *name, size_t len)
{
    const struct opt_def *o = find_opt(name, len);
    return o != NULL && o->type != OPT_FLAG;
}

/* A source spec given on the command line must at least parse. */
static enum eb_status check_source(const char *flag, const char *text, struct eb_diag *diag)
{
    if (text == NULL)
        return EB_OK;
    struct eb_source_spec spec;
    enum eb_status st = eb_source_spec_parse(text, &spec, diag);
    if (st != EB_OK && st != EB_ERR_IO)
        eb_diag_prefix(diag, "--%s: ", flag);
    /* A missing path is not a usage error: the slot fails and the report says why. */
    if (st == EB_ERR_IO) {
        eb_diag_clear(diag);
        return EB_OK;
    }
    return st;
}

const char *eb_config_slot_data(const struct eb_config *cfg, int slot)
{
    const int mine = cfg->mode == EB_MODE_DUAL || (cfg->mode == EB_MODE_RGB) == (slot == 0);
    if (!mine)
        return NULL;
    const char *own = slot == 0 ? cfg->rgb_data : cfg->thermal_data;
    return own != NULL || cfg->mode == EB_MODE_DUAL ? own : cfg->data;
}

double eb_config_slot_fps(const struct eb_config *cfg, int slot)
{
    const double own = slot == 0 ? cfg->rgb_fps : cfg->thermal_fps;
    return own > 0 ? own : cfg->fps;
}

const char *eb_config_slot_profile(const struct eb_config *cfg, int slot)
{
    const char *own = slot == 0 ? cfg->rgb_model_profile : cfg->thermal_model_profile;
    return own != NULL ? own : cfg->model_profile;
}

const char *eb_config_slot_class_map(const struct eb_config *cfg, int slot)
{
    const char *own = slot == 0 ? cfg->rgb_class_map : cfg->thermal_class_map;
    return own != NULL ? own : cfg->class_map;
}

/* --data, --rgb_data, --thermal_data and the class maps. */
static enum eb_status check_data(const struct eb_config *cfg, struct eb_diag *diag)
{
    static const char *const names[] = {"rgb", "thermal"};
    const char *const given[] = {cfg->data, cfg->rgb_data, cfg->thermal_data};
    static const char *const flags[] = {"data", "rgb_data", "thermal_data"};
    int any = 0;
    for (int k = 0; k < 3; k++) {
        if (given[k] != NULL && given[k][0] == '\0')
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--%s needs a dataset folder (COCO, YOLO or VOC)", flags[k]);
        any |= given[k] != NULL;
    }
    if (cfg->mode == EB_MODE_DUAL && cfg->data != NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "--mode dual takes --rgb_data DIR and --thermal_data DIR, not --data");
    if (cfg->mode != EB_MODE_DUAL) {
        const int rgb = cfg->mode == EB_MODE_RGB;
        const char *own = rgb ? cfg->rgb_data : cfg->thermal_data;
        const char *other = rgb ? cfg->thermal_data : cfg->rgb_data;
        if (other != NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--%s is for the other slot; --mode %s takes --data DIR",
                                rgb ? "thermal_data" : "rgb_data", names[rgb ? 0 : 1]);
        if (own != NULL && cfg->data != NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "give --data or --%s_data, not both",
                                names[rgb ? 0 : 1]);
    }
    if (any && cfg->model0 == NULL && cfg->model1 == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "--data scores a model's detections; give --model0 PATH (rgb) or "
                            "--model1 PATH (thermal): the embedded default has random weights");
    for (int i = 0; i < 2; i++) {
        const char *data = eb_config_slot_data(cfg, i);
        const char *src =
            cfg->mode == EB_MODE_DUAL
                ? (i == 0 ? cfg->rgb_source : cfg->thermal_source)
                : (cfg->source ? cfg->source : (i == 0 ? cfg->rgb_source : cfg->thermal_source));
        if (data != NULL && src != NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "slot %s: give a source or a dataset, not both (the dataset's "
                                "images are the source)",
                                names[i]);
        const char *own_map = i == 0 ? cfg->rgb_class_map : cfg->thermal_class_map;
        if (own_map != NULL && data == NULL)
            return eb_diag_fail(
                diag, EB_ERR_INVALID_ARG,
                "--%s_class_map maps onto a dataset's classes; give --%s DIR too", names[i],
                cfg->mode == EB_MODE_DUAL ? (i ? "thermal_data" : "rgb_data") : "data");
    }
    if (cfg->class_map != NULL && !any)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "--class_map maps onto a dataset's classes; give --data DIR too");
    return EB_OK;
}

static enum eb_status check_cross(const struct eb_config *cfg, struct eb_diag *diag)
{
    int any_model = cfg->model0 != NULL || cfg->model1 != NULL;
    if (cfg->verbose && cfg->quiet)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "--verbose and --quiet contradict each other; give one of them");
    switch (cfg->mode) {
    case EB_MODE_RGB:
    case EB_MODE_THERMAL: {
        int rgb = cfg->mode == EB_MODE_RGB;
        const char *mine = rgb ? "model0" : "model1";
        const char *other = rgb ? "model1" : "model0";
        if (any_model && (rgb ? cfg->model0 : cfg->model1) == NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--mode %s runs slot %d (%s) and needs --%s PATH; --%s belongs "
                                "to the other slot",
                                rgb ? "rgb" : "thermal", rgb ? 0 : 1, rgb ? "rgb" : "thermal", mine,
                                other);
        const char *slot_src = rgb ? cfg->rgb_source : cfg->thermal_source;
        const char *wrong_src = rgb ? cfg->thermal_source : cfg->rgb_source;
        if (wrong_src != NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--%s is for the other slot; --mode %s takes --source SPEC",
                                rgb ? "thermal_source" : "rgb_source", rgb ? "rgb" : "thermal");
        if (cfg->source != NULL && slot_src != NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "give --source or --%s, not both",
                                rgb ? "rgb_source" : "thermal_source");
        if (any_model && cfg->source == NULL && slot_src == NULL &&
            eb_config_slot_data(cfg, rgb ? 0 : 1) == NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--mode %s needs --source SPEC (image_dir=PATH, video=PATH, "
                                "camera=N or synthetic=WxH[@FPS]) or --data DIR",
                                rgb ? "rgb" : "thermal");
        break;
    }
    case EB_MODE_DUAL:
        if (cfg->source != NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--mode dual takes --rgb_source SPEC and --thermal_source SPEC, "
                                "not --source");
        if (any_model && cfg->rgb_source == NULL && cfg->rgb_data == NULL)
            return eb_diag_fail(
                diag, EB_ERR_INVALID_ARG,
                "--mode dual needs --rgb_source SPEC (or --rgb_data DIR) for slot 0 "
                "(rgb)");
        if (any_model && cfg->thermal_source == NULL && cfg->thermal_data == NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--mode dual needs --thermal_source SPEC (or --thermal_data DIR) "
                                "for slot 1 (thermal); use --mode rgb for one stream");
        break;
    default: break;
    }
    if (cfg->precision == EB_CONFIG_PRECISION_INT8 && cfg->qdq != EB_ENGINE_QDQ_AUTO &&
        cfg->qdq != EB_ENGINE_QDQ_INT8)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "--precision int8 runs a QDQ model on its int8 kernels and --qdq %s "
                            "in float; give one of them",
                            cfg->qdq == EB_ENGINE_QDQ_STRIP ? "strip" : "float");
    if (cfg->solo_baseline && cfg->mode != EB_MODE_DUAL)
        return eb_diag_fail(
            diag, EB_ERR_INVALID_ARG,
            "--solo_baseline compares dual with solo runs; use it with --mode dual");
    return EB_OK;
}

enum eb_status eb_config_parse(int argc, char **argv, struct eb_config *cfg, int *help_out,
                               const struct eb_log *log, struct eb_diag *diag)
{
    enum eb_status st;
    *help_out = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help_out = 1;
            return EB_OK;
        }
    }
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "unexpected argument '%s'; options start with -- (see edgebench "
                                "run --help)",
                                arg);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt_def *o = find_opt(name, len);
        if (o == NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "unknown option --%.*s; see edgebench run --help", (int)len, name);
        const char *value = NULL;
        if (o->type == OPT_FLAG) {
            if (eq != NULL)
                return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "--%s takes no value", o->name);
        } else if (eq != NULL) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            char range[128];
            range_text(o, range, sizeof(range));
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "--%s needs a value%s%s%s", o->name,
                                range[0] ? " (accepted: " : "", range, range[0] ? ")" : "");
        }
        st = set_opt(o, value ? value : "1", cfg, log, diag);
        if (st != EB_OK)
            return st;
        if (strcmp(o->name, "conf") == 0)
            cfg->conf_given = 1;
    }
    if ((st = check_source("source", cfg->source, diag)) != EB_OK ||
        (st = check_source("rgb_source", cfg->rgb_source, diag)) != EB_OK ||
        (st = check_source("thermal_source", cfg->thermal_source, diag)) != EB_OK)
        return st;
    /* The dataset options first: --data changes what check_cross asks for. */
    if ((st = check_data(cfg, diag)) != EB_OK)
        return st;
    return check_cross(cfg, diag);
}

void eb_config_print_help(FILE *fp)
{
    fprintf(fp, "usage: edgebench run [options]\n\n"
                "Benchmarks YOLO detectors on one stream (--mode rgb|thermal) or two at once\n"
                "(--mode dual). With no model given, the embedded default runs: synthesized\n"
                "yolov8n (rgb) and yolo11n (thermal) on synthetic camera streams.\n\n"
                "options:\n");
    for (size_t i = 0; i < EB_ARRAY_LEN(opts); i++) {
        const struct opt_def *o = &opts[i];
        char head[64];
        const char *meta = o->type == OPT_FLAG   ? ""
                           : o->type == OPT_STR  ? " VALUE"
                           : o->type == OPT_ENUM ? " CHOICE"
                           : o->type == OPT_INT  ? " N"
                           : o->type == OPT_GB   ? " G"
                                                 : " X";
        snprintf(head, sizeof(head), "--%s%s", o->name, meta);
        fprintf(fp, "  %-26s %s\n", head, o->help);
        char range[128];
        range_text(o, range, sizeof(range));
        if (o->type != OPT_FLAG) {
            /* --db has no fixed default: it is resolved from the environment at run time. */
            const char *def = strcmp(o->name, "db") == 0 ? EB_HISTORY_DEFAULT_TEXT
                              : o->def                   ? o->def
                                                         : "none";
            fprintf(fp, "  %-26s default: %s", "", def);
            if (range[0])
                fprintf(fp, "; accepted: %s", range);
            fprintf(fp, "\n");
        }
    }
    fprintf(fp,
            "\nverdict: report.json and report.md say VALID or INVALID with the reasons: fewer\n"
            "frames than --min_frames, shorter than --min_duration_s, not a steady state (a\n"
            "fifth of the frames' median end-to-end time more than --max_drift_pct from the\n"
            "whole's), end-to-end CoV above --max_cov_pct (when set), a paced slot dropping\n"
            "more than --max_drop_pct, other processes using more than --max_others_cpu_pct of\n"
            "the CPUs (not a quiet machine), --warmup auto not settled, GPU throttling, a failed\n"
            "slot or an interruption. 95%% CIs on p50 and p99: order-statistic binomial (exact "
            "ranks).\n"
            "The run is appended to the history database (--db; edgebench history, edgebench\n"
            "diff).\n"
            "\nexit codes: 0 every slot that was asked for ran within the memory limit;\n"
            "1 nothing could run; 2 usage error; 3 one slot failed while the other ran;\n"
            "5 the slots ran but the monitored memory exceeded the limit; 6 a file of the\n"
            "run folder could not be written, or the folder made (the error names it; what\n"
            "could be written is kept); 130 interrupted.\n"
            "Where several apply, the first of 6, 130, 1, 3, 5 wins. The verdict does not\n"
            "change the exit code.\n");
}

void eb_config_write_json(const struct eb_config *cfg, struct eb_json_writer *w)
{
    eb_json_obj_begin(w);
    for (size_t i = 0; i < EB_ARRAY_LEN(opts); i++) {
        const struct opt_def *o = &opts[i];
        const char *base = (const char *)cfg + o->offset;
        eb_json_key(w, o->name);
        switch (o->type) {
        case OPT_STR: {
            const char *s;
            memcpy(&s, base, sizeof(s));
            eb_json_str(w, s);
            break;
        }
        case OPT_ENUM: {
            int idx;
            memcpy(&idx, base, sizeof(idx));
            char name[32];
            choice_name(o->choices, idx, name, sizeof(name));
            eb_json_str(w, name);
            break;
        }
        case OPT_INT: {
            int64_t v;
            memcpy(&v, base, sizeof(v));
            if (strcmp(o->name, "warmup") == 0 && v == EB_WARMUP_AUTO)
                eb_json_str(w, "auto");
            else
                eb_json_int(w, v);
            break;
        }
        case OPT_DBL:
        case OPT_DBL0: {
            double v;
            memcpy(&v, base, sizeof(v));
            eb_json_num(w, v);
            break;
        }
        case OPT_FLAG: {
            int v;
            memcpy(&v, base, sizeof(v));
            eb_json_bool(w, v);
            break;
        }
        case OPT_GB: { /* echoed as given: GB */
            uint64_t v;
            memcpy(&v, base, sizeof(v));
            eb_json_num(w, (double)v / 1e9);
            break;
        }
        }
    }
    eb_json_obj_end(w);
}

void eb_config_echo(const void *cfg, struct eb_json_writer *w)
{
    eb_config_write_json(cfg, w);
}
