/* `edgebench model synth|info ...` (argv starts at the word after "model"). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "eb/file.h"
#include "eb/json.h"
#include "eb/number.h"
#include "eb/path.h"
#include "engine/onnx/onnx_model.h"
#include "model/llm.h"
#include "model/model.h"
#include "model/qdq.h"

static void usage(FILE *fp)
{
    fprintf(fp, "usage: edgebench model synth [--arch yolov8|yolo11] [--scale n|s|m|l|x] "
                "[--imgsz N] [--seed S] -o FILE.onnx\n"
                "       edgebench model synth --arch llama|qwen2 --size tiny|0.5b|1b [--ctx N] "
                "[--dtype fp32|fp16] [--seed S] -o FILE.onnx\n"
                "           (0.5b = Qwen2.5-0.5B, qwen2 only; 1b = Llama-3.2-1B, llama only; "
                "--ctx default 2048;\n"
                "            weights above 1 GiB go to FILE.onnx.data beside the model)\n"
                "       edgebench model info FILE.onnx [--imgsz N] [--ctx N] [--json]\n"
                "       edgebench model dequantize QDQ.onnx -o FLOAT.onnx   (Q/DQ pairs "
                "folded into float weights)\n");
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

/* `model synth --arch llama|qwen2`: the decoder model of model/llm.h. */
static int synth_llm(int arch, const char *size, int ctx, int fp16, uint32_t seed,
                     const char *yolo_opt, const char *path, FILE *out, FILE *err)
{
    struct eb_model_llm_options o = {.fp16 = fp16, .seed = seed};
    struct eb_diag diag = {0};
    int external = 0;
    if (yolo_opt != NULL) {
        fprintf(err, "edgebench model synth: %s applies to detectors; use --size for --arch %s\n",
                yolo_opt, eb_model_llm_arch_name((enum eb_model_llm_arch)arch));
        return 2;
    }
    if (size == NULL) {
        fprintf(err, "edgebench model synth: --arch %s needs --size tiny|%s\n",
                eb_model_llm_arch_name((enum eb_model_llm_arch)arch),
                arch == EB_MODEL_LLM_QWEN2 ? "0.5b" : "1b");
        return 2;
    }
    if (eb_model_llm_config((enum eb_model_llm_arch)arch, size, ctx, &o.cfg, &diag) != EB_OK) {
        fprintf(err, "edgebench model synth: %s\n", diag.msg);
        return 2;
    }
    if (eb_model_llm_synth_file(&o, path, &external, &diag) != EB_OK) {
        fprintf(err, "edgebench model synth: %s\n", diag.msg);
        return 1;
    }
    fprintf(out, "wrote %s%s%s%s (%s %s, %" PRIu64 " parameters, %s, ctx %d, seed %" PRIu32 ")\n",
            path, external ? " and " : "", external ? eb_path_base(path) : "",
            external ? ".data" : "", eb_model_llm_arch_name(o.cfg.arch), o.cfg.size,
            eb_model_llm_params(&o.cfg), fp16 ? "fp16" : "fp32", ctx, seed);
    return 0;
}

static int synth_main(int argc, char **argv, FILE *out, FILE *err)
{
    struct eb_synth_options o = {
        .arch = EB_SYNTH_YOLOV8, .scale = 'n', .imgsz = 640, .num_classes = 80, .seed = 0};
    const char *path = NULL, *size = NULL, *yolo_opt = NULL;
    int llm = 0, llm_arch = EB_MODEL_LLM_LLAMA, ctx = 2048, fp16 = 0;
    struct eb_diag diag = {0};
    /* Every option takes one value: the loop steps over option and value. */
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(out);
            return 0;
        }
        if (v == NULL) {
            fprintf(err, "edgebench model synth: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--arch")) {
            if (!strcmp(v, "yolov8"))
                o.arch = EB_SYNTH_YOLOV8;
            else if (!strcmp(v, "yolo11"))
                o.arch = EB_SYNTH_YOLO11;
            else if (!strcmp(v, "llama") || !strcmp(v, "qwen2"))
                llm = 1, llm_arch = v[0] == 'q' ? EB_MODEL_LLM_QWEN2 : EB_MODEL_LLM_LLAMA;
            else {
                fprintf(err,
                        "edgebench model synth: --arch must be yolov8, yolo11, llama or qwen2 "
                        "(got '%s')\n",
                        v);
                return 2;
            }
        } else if (!strcmp(a, "--size")) {
            size = v;
        } else if (!strcmp(a, "--ctx")) {
            if (!parse_long(v, EB_MODEL_LLM_CTX_MIN, EB_MODEL_LLM_CTX_MAX, &n)) {
                fprintf(err,
                        "edgebench model synth: --ctx must be an integer in %d..%d (got '%s')\n",
                        EB_MODEL_LLM_CTX_MIN, EB_MODEL_LLM_CTX_MAX, v);
                return 2;
            }
            ctx = (int)n;
        } else if (!strcmp(a, "--dtype")) {
            if (strcmp(v, "fp32") != 0 && strcmp(v, "fp16") != 0) {
                fprintf(err, "edgebench model synth: --dtype must be fp32 or fp16 (got '%s')\n", v);
                return 2;
            }
            fp16 = v[2] == '1';
        } else if (!strcmp(a, "--scale")) {
            if (strlen(v) != 1 || strchr("nsmlx", v[0]) == NULL) {
                fprintf(err,
                        "edgebench model synth: --scale must be one of n, s, m, l, x (got "
                        "'%s')\n",
                        v);
                return 2;
            }
            o.scale = v[0];
            yolo_opt = a;
        } else if (!strcmp(a, "--imgsz")) {
            yolo_opt = a;
            if (!parse_long(v, 32, 4096, &n) || n % 32 != 0) {
                fprintf(err,
                        "edgebench model synth: --imgsz must be a multiple of 32 in 32..4096 "
                        "(got '%s')\n",
                        v);
                return 2;
            }
            o.imgsz = (int)n;
        } else if (!strcmp(a, "--seed")) {
            if (!parse_long(v, 0, 4294967295L, &n)) {
                fprintf(err,
                        "edgebench model synth: --seed must be an integer in 0..4294967295 "
                        "(got '%s')\n",
                        v);
                return 2;
            }
            o.seed = (uint32_t)n;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            path = v;
        } else {
            fprintf(err,
                    "edgebench model synth: unknown option '%s'; allowed: --arch, --scale, "
                    "--imgsz, --size, --ctx, --dtype, --seed, -o\n",
                    a);
            return 2;
        }
    }
    if (path == NULL) {
        fprintf(err, "edgebench model synth: -o FILE.onnx is required\n");
        return 2;
    }
    if (llm)
        return synth_llm(llm_arch, size, ctx, fp16, o.seed, yolo_opt, path, out, err);
    if (size != NULL || fp16) {
        fprintf(err, "edgebench model synth: --size and --dtype apply to --arch llama|qwen2; "
                     "use --scale for a detector\n");
        return 2;
    }
    if (eb_model_synth_file(&o, path, &diag) != EB_OK) {
        fprintf(err, "edgebench model synth: %s\n", diag.msg);
        return 1;
    }
    fprintf(out, "wrote %s (%s%c, imgsz %d, seed %" PRIu32 ")\n", path,
            o.arch == EB_SYNTH_YOLO11 ? "yolo11" : "yolov8", o.scale, o.imgsz, o.seed);
    return 0;
}

static void print_shape(FILE *fp, const struct eb_model_io *io)
{
    if (io->rank < 0) {
        fprintf(fp, "?");
        return;
    }
    fprintf(fp, "[");
    for (int d = 0; d < io->rank; d++) {
        if (io->shape[d] < 0)
            fprintf(fp, "%s?", d ? ", " : "");
        else
            fprintf(fp, "%s%" PRId64, d ? ", " : "", io->shape[d]);
    }
    fprintf(fp, "]");
}

static const char *meta_value(const struct eb_model_summary *s, const char *key)
{
    for (size_t i = 0; i < s->n_meta; i++)
        if (strcmp(s->meta[i].key, key) == 0)
            return s->meta[i].value;
    return NULL;
}

/* How `edgebench quantize` made the model (its edgebench.quantize.* metadata), if it did. */
static void print_quantize_text(FILE *fp, const struct eb_model_summary *s)
{
    const char *tool = meta_value(s, "edgebench.quantize.tool");
    const char *images = meta_value(s, "edgebench.quantize.calib_images");
    const char *keep = meta_value(s, "edgebench.quantize.float_nodes");
    const char *from = meta_value(s, "edgebench.dequantize");
    if (from != NULL)
        fprintf(fp, "dequantized: %s\n", from);
    if (tool == NULL)
        return;
    const char *method = meta_value(s, "edgebench.quantize.method");
    const char *seed = meta_value(s, "edgebench.quantize.seed");
    const char *w = meta_value(s, "edgebench.quantize.weights");
    const char *a = meta_value(s, "edgebench.quantize.activations");
    fprintf(fp, "quantized:  by %s, calibration %s, seed %s\n", tool, method ? method : "?",
            seed ? seed : "?");
    fprintf(fp, "            weights %s; activations %s\n", w ? w : "?", a ? a : "?");
    if (images != NULL) {
        const size_t n = strlen(images);
        fprintf(fp, "            calibration images %.100s%s\n", images, n > 100 ? "..." : "");
    }
    fprintf(fp, "            Conv kept in float: %s\n", keep && keep[0] ? keep : "none");
}

/* What `model info` says about the native engine's memory plan. */
struct plan_result {
    int ok;
    struct eb_model_plan plan;
    char why[512]; /* when !ok */
};

static void print_plan_text(FILE *fp, const struct plan_result *r)
{
    const struct eb_model_plan *p = &r->plan;
    if (!r->ok) {
        fprintf(fp, "memory plan (native engine): not available: %s\n", r->why);
        return;
    }
    fprintf(fp, "memory plan (native engine, input %dx%d, MiB = 2^20 bytes):\n", p->height,
            p->width);
    fprintf(fp, "  planned peak:   %10.2f MiB  (arena of intermediate tensors; %.1f%% of naive)\n",
            eb_mib(p->arena_bytes),
            p->naive_bytes ? 100.0 * (double)p->arena_bytes / (double)p->naive_bytes : 0.0);
    fprintf(fp, "  scratch:        %10.2f MiB\n", eb_mib(p->scratch_bytes));
    fprintf(fp, "  weights:        %10.2f MiB\n", eb_mib(p->weight_bytes));
    fprintf(fp, "  packed weights: %10.2f MiB\n", eb_mib(p->packed_bytes));
    fprintf(fp, "  total:          %10.2f MiB  (arena + scratch + weights + packed)\n",
            eb_mib(p->total_bytes));
    fprintf(fp, "  naive sum:      %10.2f MiB  (every intermediate tensor, no planning)\n",
            eb_mib(p->naive_bytes));
}

static void print_plan_json(struct eb_json_writer *w, const struct plan_result *r)
{
    const struct eb_model_plan *p = &r->plan;
    eb_json_key(w, "memory_plan");
    eb_json_obj_begin(w);
    eb_json_kbool(w, "available", r->ok);
    if (!r->ok) {
        eb_json_kstr(w, "reason", r->why);
        eb_json_obj_end(w);
        return;
    }
    eb_json_kint(w, "height", p->height);
    eb_json_kint(w, "width", p->width);
    eb_json_key(w, "arena_bytes");
    eb_json_uint(w, p->arena_bytes);
    eb_json_key(w, "scratch_bytes");
    eb_json_uint(w, p->scratch_bytes);
    eb_json_key(w, "weight_bytes");
    eb_json_uint(w, p->weight_bytes);
    eb_json_key(w, "packed_bytes");
    eb_json_uint(w, p->packed_bytes);
    eb_json_key(w, "total_bytes");
    eb_json_uint(w, p->total_bytes);
    eb_json_key(w, "naive_bytes");
    eb_json_uint(w, p->naive_bytes);
    eb_json_obj_end(w);
}

/* Plans the model's memory with `plan`; a failure is recorded in `r`, never fatal. */
static void plan_model(eb_model_plan_fn plan, const char *path, int imgsz, struct plan_result *r)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_diag diag = {0};
    memset(r, 0, sizeof(*r));
    if (plan == NULL) {
        snprintf(r->why, sizeof(r->why), "the native engine is not linked into this program");
        return;
    }
    if (eb_model_read_file(path, &bytes, &len, &diag) == EB_OK &&
        plan(bytes, len, path, imgsz, &r->plan, &diag) == EB_OK)
        r->ok = 1;
    else
        snprintf(r->why, sizeof(r->why), "%s", diag.msg[0] ? diag.msg : "unknown error");
    free(bytes);
}

/* Which head adapter and profile `run` would use, from the graph alone (model/head_graph.c,
 * yolo/profile.h); at input size `imgsz` where the model's is dynamic (0: 640). */
struct head_result {
    int ok;
    struct eb_model_profile p;
    char pre[160];
    char why[EB_DIAG_MSG_MAX];
};

static void head_model(const char *path, int imgsz, struct head_result *r)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_diag diag = {0};
    struct eb_head_graph g;
    memset(r, 0, sizeof(*r));
    enum eb_status st = eb_model_read_file(path, &bytes, &len, &diag);
    if (st == EB_OK)
        st = eb_model_head_graph(bytes, len, path, &g, &diag);
    free(bytes);
    if (st == EB_OK) {
        const int side = imgsz > 0 ? imgsz : 640;
        if (g.in_w <= 0 || imgsz > 0)
            g.in_w = side;
        if (g.in_h <= 0 || imgsz > 0)
            g.in_h = side;
        st = eb_profile_resolve(&g, NULL, &r->p, &diag);
    }
    if (st == EB_OK) {
        r->ok = 1;
        eb_profile_describe_pre(&r->p, r->pre, sizeof(r->pre));
    } else {
        snprintf(r->why, sizeof(r->why), "%s", diag.msg[0] ? diag.msg : "unknown error");
    }
}

static void print_head_text(FILE *fp, const struct head_result *h)
{
    if (!h->ok) {
        fprintf(fp, "head:       none recognised: %s\n", h->why);
        return;
    }
    fprintf(fp, "head:       %s, profile %s (%s): %s\n", eb_head_name(h->p.head.kind), h->p.family,
            h->p.source, h->p.why);
    fprintf(fp, "input:      %s\n", h->pre);
}

static void print_head_json(struct eb_json_writer *w, const struct head_result *h)
{
    eb_json_key(w, "head");
    eb_json_obj_begin(w);
    if (h->ok) {
        eb_json_kstr(w, "adapter", eb_head_name(h->p.head.kind));
        eb_json_kstr(w, "family", h->p.family);
        eb_json_kstr(w, "why", h->p.why);
        eb_json_kstr(w, "input", h->pre);
        eb_json_kint(w, "num_classes", h->p.head.num_classes);
    } else {
        eb_json_key(w, "adapter");
        eb_json_null(w);
        eb_json_kstr(w, "why", h->why);
    }
    eb_json_obj_end(w);
}

/* The decoder facts (model/llm.h); `f` NULL for another model. */
static void print_llm_text(FILE *fp, const struct eb_model_llm_facts *f)
{
    const struct eb_model_llm_config *c = &f->cfg;
    fprintf(fp,
            "decoder:    %s %s (%s), ctx %d: hidden %d, %d layers, %d heads, %d kv heads, "
            "head_dim %d, intermediate %d, vocab %d%s%s\n",
            eb_model_llm_arch_name(c->arch), c->size, f->elem_bytes == 2 ? "fp16" : "fp32", c->ctx,
            c->hidden, c->layers, c->heads, c->kv_heads, c->head_dim, c->intermediate, c->vocab,
            c->tied ? ", tied lm_head" : "", c->attn_bias ? ", q/k/v bias" : "");
    fprintf(fp, "  parameters:    %" PRIu64 " (%.2f M; %" PRIu64 " in MatMuls)\n", f->params,
            (double)f->params / 1e6, f->matmul_params);
    fprintf(fp, "  weights:       %" PRIu64 " bytes (%.2f MiB)\n", f->weight_bytes,
            eb_mib(f->weight_bytes));
    fprintf(fp, "  KV cache:      %" PRIu64 " bytes per token; %.2f MiB at %" PRId64 " tokens\n",
            f->kv_bytes_per_token, eb_mib(f->kv_bytes_at_n), f->n);
    fprintf(fp, "  prefill:       %.4g GFLOPs for %" PRId64 " tokens (%.4g MFLOPs per token)\n",
            f->prefill_flops / 1e9, f->n, f->prefill_flops_per_token / 1e6);
    fprintf(fp, "  decode:        %.4g MFLOPs per token at KV length %" PRId64 "\n",
            f->decode_flops / 1e6, f->n);
}

static void print_llm_json(struct eb_json_writer *w, const struct eb_model_llm_facts *f)
{
    eb_json_key(w, "llm");
    if (f == NULL) {
        eb_json_null(w);
        return;
    }
    const struct eb_model_llm_config *c = &f->cfg;
    eb_json_obj_begin(w);
    eb_json_kstr(w, "arch", eb_model_llm_arch_name(c->arch));
    eb_json_kstr(w, "size", c->size);
    eb_json_kstr(w, "dtype", f->elem_bytes == 2 ? "fp16" : "fp32");
    size_t n_fields;
    const struct eb_model_llm_field *fl = eb_model_llm_fields(&n_fields);
    for (size_t i = 0; i < n_fields; i++)
        eb_json_kint(w, fl[i].name, eb_model_llm_field_get(c, &fl[i]));
    const struct {
        const char *key;
        uint64_t v;
    } counts[] = {{"params", f->params},
                  {"matmul_params", f->matmul_params},
                  {"weight_bytes", f->weight_bytes},
                  {"kv_bytes_per_token", f->kv_bytes_per_token}};
    for (size_t i = 0; i < EB_ARRAY_LEN(counts); i++) {
        eb_json_key(w, counts[i].key);
        eb_json_uint(w, counts[i].v);
    }
    eb_json_kint(w, "context", f->n);
    eb_json_key(w, "kv_bytes_at_context");
    eb_json_uint(w, f->kv_bytes_at_n);
    eb_json_knum(w, "prefill_flops", f->prefill_flops);
    eb_json_knum(w, "prefill_flops_per_token", f->prefill_flops_per_token);
    eb_json_knum(w, "decode_flops_per_token", f->decode_flops);
    eb_json_obj_end(w);
}

static void print_text(FILE *fp, const char *path, const struct eb_model_summary *s,
                       const struct plan_result *plan, const struct head_result *head,
                       const struct eb_model_llm_facts *llm)
{
    fprintf(fp, "model:      %s\n", path);
    fprintf(fp, "ir_version: %" PRId64 "\nopset:      %" PRId64 "\nproducer:   %s\n", s->ir_version,
            s->opset, s->producer[0] ? s->producer : "(none)");
    fprintf(fp, "inputs:\n");
    for (int i = 0; i < s->n_inputs; i++) {
        fprintf(fp, "  %-24s %-8s ", s->inputs[i].name, eb_onnx_dtype_name(s->inputs[i].elem_type));
        print_shape(fp, &s->inputs[i]);
        fprintf(fp, "\n");
    }
    fprintf(fp, "outputs:\n");
    for (int i = 0; i < s->n_outputs; i++) {
        fprintf(fp, "  %-24s %-8s ", s->outputs[i].name,
                eb_onnx_dtype_name(s->outputs[i].elem_type));
        print_shape(fp, &s->outputs[i]);
        fprintf(fp, "\n");
    }
    fprintf(fp, "metadata:\n");
    for (size_t i = 0; i < s->n_meta; i++) {
        const char *v = s->meta[i].value;
        size_t n = strlen(v);
        if (n > 72)
            fprintf(fp, "  %-20s %.60s... (%zu chars)\n", s->meta[i].key, v, n);
        else
            fprintf(fp, "  %-20s %s\n", s->meta[i].key, v);
    }
    print_quantize_text(fp, s);
    fprintf(fp, "nodes:      %zu\nops:\n", s->n_nodes);
    for (size_t i = 0; i < s->n_op_types; i++)
        fprintf(fp, "  %-24s %zu\n", s->ops[i].name, s->ops[i].count);
    fprintf(fp, "parameters: %" PRIu64 " (%.2f M)\n", s->n_params, (double)s->n_params / 1e6);
    if (llm != NULL && s->flops == 0)
        fprintf(fp, "flops:      per token, in the decoder lines (its dims are symbolic)\n");
    else
        fprintf(fp, "flops:      %.0f (%.2f GFLOPs)\n", s->flops, s->flops / 1e9);
    fprintf(fp, "precision:  %s (%s)\n", eb_model_precision_name(s->precision.kind),
            s->precision.detail);
    if (llm != NULL)
        print_llm_text(fp, llm);
    print_head_text(fp, head);
    print_plan_text(fp, plan);
}

static void json_io(struct eb_json_writer *w, const struct eb_model_io *io, int n)
{
    eb_json_arr_begin(w);
    for (int i = 0; i < n; i++) {
        eb_json_obj_begin(w);
        eb_json_kstr(w, "name", io[i].name);
        eb_json_kstr(w, "type", eb_onnx_dtype_name(io[i].elem_type));
        eb_json_key(w, "shape");
        if (io[i].rank < 0) {
            eb_json_null(w);
        } else {
            eb_json_arr_begin(w);
            for (int d = 0; d < io[i].rank; d++) {
                if (io[i].shape[d] < 0)
                    eb_json_null(w);
                else
                    eb_json_int(w, io[i].shape[d]);
            }
            eb_json_arr_end(w);
        }
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);
}

static int print_json(FILE *fp, const char *path, const struct eb_model_summary *s,
                      const struct plan_result *plan, const struct head_result *head,
                      const struct eb_model_llm_facts *llm)
{
    struct eb_json_writer w;
    eb_json_writer_init_file(&w, fp, 1);
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "file", path);
    eb_json_kint(&w, "ir_version", s->ir_version);
    eb_json_kint(&w, "opset", s->opset);
    eb_json_kstr(&w, "producer", s->producer);
    eb_json_key(&w, "inputs");
    json_io(&w, s->inputs, s->n_inputs);
    eb_json_key(&w, "outputs");
    json_io(&w, s->outputs, s->n_outputs);
    eb_json_key(&w, "metadata");
    eb_json_obj_begin(&w);
    for (size_t i = 0; i < s->n_meta; i++)
        eb_json_kstr(&w, s->meta[i].key, s->meta[i].value);
    eb_json_obj_end(&w);
    eb_json_key(&w, "nodes");
    eb_json_uint(&w, s->n_nodes);
    eb_json_key(&w, "ops");
    eb_json_obj_begin(&w);
    for (size_t i = 0; i < s->n_op_types; i++) {
        eb_json_key(&w, s->ops[i].name);
        eb_json_uint(&w, s->ops[i].count);
    }
    eb_json_obj_end(&w);
    eb_json_key(&w, "params");
    eb_json_uint(&w, s->n_params);
    /* a decoder's dims are symbolic: its FLOPs are per token, under "llm" */
    eb_json_key(&w, "flops");
    if (llm != NULL && s->flops == 0)
        eb_json_null(&w);
    else
        eb_json_num(&w, s->flops);
    eb_json_knum(&w, "gflops", s->flops / 1e9);
    eb_json_kstr(&w, "precision", eb_model_precision_name(s->precision.kind));
    eb_json_kstr(&w, "precision_detail", s->precision.detail);
    print_llm_json(&w, llm);
    print_head_json(&w, head);
    print_plan_json(&w, plan);
    eb_json_obj_end(&w);
    fputc('\n', fp);
    return eb_json_writer_error(&w) ? 1 : 0;
}

static int info_main(int argc, char **argv, eb_model_plan_fn plan, FILE *out, FILE *err)
{
    const char *path = NULL;
    int json = 0, rc, imgsz = 0, ctx = 0;
    long n;
    struct eb_model_llm_facts llm;
    int is_llm = 0;
    struct eb_diag diag = {0};
    struct eb_model_summary *s;
    struct plan_result *pr;
    struct head_result *hr;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--imgsz")) {
            if (i + 1 >= argc || !parse_long(argv[i + 1], 32, 4096, &n) || n % 32 != 0) {
                fprintf(err,
                        "edgebench model info: --imgsz must be a multiple of 32 in 32..4096 "
                        "(got '%s')\n",
                        i + 1 < argc ? argv[i + 1] : "");
                return 2;
            }
            imgsz = (int)n;
            i++;
        } else if (!strcmp(argv[i], "--ctx")) {
            if (i + 1 >= argc || !parse_long(argv[i + 1], 1, EB_MODEL_LLM_CTX_MAX, &n)) {
                fprintf(err, "edgebench model info: --ctx must be an integer in 1..%d (got '%s')\n",
                        EB_MODEL_LLM_CTX_MAX, i + 1 < argc ? argv[i + 1] : "");
                return 2;
            }
            ctx = (int)n;
            i++;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(out);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(err,
                    "edgebench model info: unknown option '%s'; allowed: --imgsz, --ctx, --json\n",
                    argv[i]);
            return 2;
        } else if (path == NULL) {
            path = argv[i];
        } else {
            fprintf(err, "edgebench model info: one FILE only (got '%s' and '%s')\n", path,
                    argv[i]);
            return 2;
        }
    }
    if (path == NULL) {
        fprintf(err, "edgebench model info: FILE is required\n");
        return 2;
    }
    s = malloc(sizeof(*s));
    pr = malloc(sizeof(*pr));
    hr = malloc(sizeof(*hr));
    rc = 1;
    if (s == NULL || pr == NULL || hr == NULL) {
        fprintf(err, "edgebench model info: out of memory\n");
    } else if (eb_model_summarize_file(path, s, &diag) != EB_OK) {
        fprintf(err, "edgebench model info: %s\n", diag.msg);
    } else if ((is_llm = eb_model_llm_facts(s, ctx, &llm, &diag)) < 0) {
        fprintf(err, "edgebench model info: %s: %s\n", path, diag.msg);
    } else {
        if (is_llm) {
            /* A decoder has no detection head, and its memory depends on the context (the
             * decoder lines give the weights and the KV cache): neither is looked for. */
            memset(pr, 0, sizeof(*pr));
            snprintf(pr->why, sizeof(pr->why),
                     "decoder model: weights and KV cache per token are in the decoder lines");
            memset(hr, 0, sizeof(*hr));
            snprintf(hr->why, sizeof(hr->why), "decoder model");
        } else {
            plan_model(plan, path, imgsz, pr);
            head_model(path, imgsz, hr);
        }
        if (json) {
            rc = print_json(out, path, s, pr, hr, is_llm ? &llm : NULL);
        } else {
            print_text(out, path, s, pr, hr, is_llm ? &llm : NULL);
            rc = 0;
        }
        eb_profile_fini(&hr->p);
    }
    free(s);
    free(pr);
    free(hr);
    return rc;
}

/* `model dequantize IN -o OUT`: the float twin of a QDQ model (model/qdq.h). */
static int dequantize_main(int argc, char **argv, FILE *out, FILE *err)
{
    const char *in = NULL, *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) {
                fprintf(err, "edgebench model dequantize: %s needs a file name\n", argv[i]);
                return 2;
            }
            path = argv[++i];
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(out);
            return 0;
        } else if (argv[i][0] == '-' || in != NULL) {
            fprintf(err,
                    "edgebench model dequantize: unexpected '%s'; usage: edgebench model "
                    "dequantize IN.onnx -o OUT.onnx\n",
                    argv[i]);
            return 2;
        } else {
            in = argv[i];
        }
    }
    if (in == NULL || path == NULL) {
        fprintf(err, "edgebench model dequantize: IN.onnx and -o OUT.onnx are required\n");
        return 2;
    }
    uint8_t *bytes = NULL, *fbytes = NULL;
    size_t len = 0, flen = 0, n_folded = 0;
    struct eb_diag diag = {0};
    char what[600];
    snprintf(what, sizeof(what), "from %s by edgebench model dequantize", eb_path_base(in));
    const struct eb_qdq_meta meta[] = {{"edgebench.dequantize", what}};
    enum eb_status st = eb_model_read_file(in, &bytes, &len, &diag);
    int rc = 2;
    if (st == EB_OK) {
        st = eb_qdq_dequantize(bytes, len, in, meta, 1, &fbytes, &flen, &n_folded, &diag);
        rc = st == EB_ERR_NOMEM ? 1 : 2;
    }
    if (st == EB_OK) {
        FILE *fp = fopen(path, "wb");
        rc = 1;
        if (fp == NULL)
            st = eb_diag_fail(&diag, EB_ERR_IO, "failed to write %s: %s; check the folder", path,
                              strerror(errno));
        else if (fwrite(fbytes, 1, flen, fp) != flen)
            st = eb_file_close_after(fp, errno, path, &diag);
        else
            st = eb_file_close(fp, path, &diag);
    }
    free(bytes);
    free(fbytes);
    if (st != EB_OK) {
        fprintf(err, "edgebench model dequantize: %s\n", diag.msg);
        return rc;
    }
    fprintf(out, "wrote %s (%.2f MiB): %zu QuantizeLinear/DequantizeLinear nodes folded\n", path,
            (double)flen / 1048576.0, n_folded);
    return 0;
}

int eb_model_main(int argc, char **argv, eb_model_plan_fn plan, FILE *out, FILE *err)
{
    if (argc < 1 || argv[0] == NULL) {
        usage(err);
        return 2;
    }
    if (!strcmp(argv[0], "synth"))
        return synth_main(argc, argv, out, err);
    if (!strcmp(argv[0], "info"))
        return info_main(argc, argv, plan, out, err);
    if (!strcmp(argv[0], "dequantize"))
        return dequantize_main(argc, argv, out, err);
    if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
        usage(out);
        return 0;
    }
    fprintf(err, "edgebench model: unknown command '%s'; allowed: synth, info, dequantize\n",
            argv[0]);
    return 2;
}
